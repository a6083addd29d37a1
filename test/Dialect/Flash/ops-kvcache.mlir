// Round-trip of flash.attention_kvcache: the custom form printed and parsed
// again, and the generic form parsed back into the custom one. The result
// list is read knowing whether new_kv is given (O [, LSE] [, caches]).
// RUN: flashfuse-opt %s | flashfuse-opt | FileCheck %s
// RUN: flashfuse-opt %s --mlir-print-op-generic | flashfuse-opt | FileCheck %s
// The generic form itself, to pin the operand and result segments.
// RUN: flashfuse-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @decode
// CHECK-SAME: (%[[Q:.*]]: tensor<4x32x1x128xbf16>, %[[K:.*]]: tensor<4x8x4096x128xbf16>, %[[V:.*]]: tensor<4x8x4096x128xbf16>, %[[L:.*]]: tensor<4xi32>)
// CHECK: %[[O:.*]], %[[LSE:.*]] = flash.attention_kvcache %[[Q]], %[[K]], %[[V]], %[[L]] {causal = #flash.causal<bottom_right>} : tensor<4x32x1x128xbf16>, tensor<4x8x4096x128xbf16>, tensor<4x8x4096x128xbf16>, tensor<4xi32> -> tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>
// CHECK: return %[[O]], %[[LSE]]
// GENERIC-LABEL: sym_name = "decode"
// GENERIC: "flash.attention_kvcache"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{causal = #flash.causal<bottom_right>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 0, 0>}>
func.func @decode(%q: tensor<4x32x1x128xbf16>, %k: tensor<4x8x4096x128xbf16>,
                  %v: tensor<4x8x4096x128xbf16>, %lens: tensor<4xi32>)
    -> (tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>) {
  %o, %lse = flash.attention_kvcache %q, %k, %v, %lens
      {causal = #flash.causal<bottom_right>}
      : tensor<4x32x1x128xbf16>, tensor<4x8x4096x128xbf16>,
        tensor<4x8x4096x128xbf16>, tensor<4xi32>
      -> tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>
  return %o, %lse : tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>
}

// CHECK-LABEL: func.func @paged_append
// CHECK: %{{.*}}, %{{.*}}, %{{.*}} = flash.attention_kvcache %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} block_table(%{{.*}} : tensor<4x64xi32>) new_kv(%{{.*}}, %{{.*}} : tensor<4x8x1x128xbf16>, tensor<4x8x1x128xbf16>) {causal = #flash.causal<bottom_right>} : tensor<4x32x1x128xbf16>, tensor<1024x16x8x128xbf16>, tensor<1024x16x8x128xbf16>, tensor<4xi32> -> tensor<4x32x1x128xbf16>, tensor<1024x16x8x128xbf16>, tensor<1024x16x8x128xbf16>
// GENERIC-LABEL: sym_name = "paged_append"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 1, 1>
func.func @paged_append(%q: tensor<4x32x1x128xbf16>,
                        %kp: tensor<1024x16x8x128xbf16>,
                        %vp: tensor<1024x16x8x128xbf16>, %lens: tensor<4xi32>,
                        %bt: tensor<4x64xi32>, %kn: tensor<4x8x1x128xbf16>,
                        %vn: tensor<4x8x1x128xbf16>) {
  %o, %kc, %vc = flash.attention_kvcache %q, %kp, %vp, %lens
      block_table(%bt : tensor<4x64xi32>)
      new_kv(%kn, %vn : tensor<4x8x1x128xbf16>, tensor<4x8x1x128xbf16>)
      {causal = #flash.causal<bottom_right>}
      : tensor<4x32x1x128xbf16>, tensor<1024x16x8x128xbf16>,
        tensor<1024x16x8x128xbf16>, tensor<4xi32>
      -> tensor<4x32x1x128xbf16>, tensor<1024x16x8x128xbf16>,
         tensor<1024x16x8x128xbf16>
  return
}

// Every result: O, LSE and both updated caches; BSHD layout for Q, new_kv
// and O, BHDS for the contiguous cache; Dv != D; every variant attribute.
// CHECK-LABEL: func.func @all_results_layouts
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = flash.attention_kvcache %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} new_kv(%{{.*}}, %{{.*}} : tensor<2x3x2x64xf16>, tensor<2x3x2x32xf16>) {causal = #flash.causal<bottom_right>, k_perm = array<i64: 0, 1, 3, 2>, mytool.origin = "decoder", q_perm = array<i64: 0, 2, 1, 3>, scale = 1.250000e-01 : f32, softcap = 3.000000e+01 : f32, v_perm = array<i64: 0, 1, 3, 2>, window_left = 128 : i64, window_right = 0 : i64} : tensor<2x3x6x64xf16>, tensor<2x2x64x256xf16>, tensor<2x2x32x256xf16>, tensor<2xi32> -> tensor<2x3x6x32xf16>, tensor<2x6x3xf32>, tensor<2x2x64x256xf16>, tensor<2x2x32x256xf16>
// GENERIC-LABEL: sym_name = "all_results_layouts"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0>, q_perm = array<i64: 0, 2, 1, 3>, resultSegmentSizes = array<i32: 1, 1, 1, 1>
func.func @all_results_layouts(%q: tensor<2x3x6x64xf16>,
                               %k: tensor<2x2x64x256xf16>,
                               %v: tensor<2x2x32x256xf16>, %lens: tensor<2xi32>,
                               %kn: tensor<2x3x2x64xf16>,
                               %vn: tensor<2x3x2x32xf16>) {
  %o, %lse, %kc, %vc = flash.attention_kvcache %q, %k, %v, %lens
      new_kv(%kn, %vn : tensor<2x3x2x64xf16>, tensor<2x3x2x32xf16>)
      {causal = #flash.causal<bottom_right>, scale = 0.125 : f32,
       softcap = 30.0 : f32, window_left = 128 : i64, window_right = 0 : i64,
       q_perm = array<i64: 0, 2, 1, 3>, k_perm = array<i64: 0, 1, 3, 2>,
       v_perm = array<i64: 0, 1, 3, 2>, mytool.origin = "decoder"}
      : tensor<2x3x6x64xf16>, tensor<2x2x64x256xf16>, tensor<2x2x32x256xf16>,
        tensor<2xi32>
      -> tensor<2x3x6x32xf16>, tensor<2x6x3xf32>, tensor<2x2x64x256xf16>,
         tensor<2x2x32x256xf16>
  return
}

// Paged with an LSE and a kernel config; dynamic batch and pool sizes.
// CHECK-LABEL: func.func @paged_lse_dynamic
// CHECK: flash.attention_kvcache %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} block_table(%{{.*}} : tensor<?x8xi32>) {config = #flash.config<decode, block_m = 16, block_n = 64, warps = 4, stages = 2>, scale = 1.250000e-01 : f32} : tensor<?x4x3x64xf32>, tensor<?x64x2x64xf32>, tensor<?x64x2x64xf32>, tensor<?xi32> -> tensor<?x4x3x64xf32>, tensor<?x4x3xf32>
func.func @paged_lse_dynamic(%q: tensor<?x4x3x64xf32>, %kp: tensor<?x64x2x64xf32>,
                             %vp: tensor<?x64x2x64xf32>, %lens: tensor<?xi32>,
                             %bt: tensor<?x8xi32>) {
  %o, %lse = flash.attention_kvcache %q, %kp, %vp, %lens
      block_table(%bt : tensor<?x8xi32>)
      {scale = 0.125 : f32,
       config = #flash.config<decode, block_m = 16, block_n = 64, warps = 4, stages = 2>}
      : tensor<?x4x3x64xf32>, tensor<?x64x2x64xf32>, tensor<?x64x2x64xf32>,
        tensor<?xi32>
      -> tensor<?x4x3x64xf32>, tensor<?x4x3xf32>
  return
}

// A left-padded batch's step: cache_leftpad after block_table, before new_kv.
// CHECK-LABEL: func.func @leftpad_paged_append
// CHECK: flash.attention_kvcache %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} block_table(%{{.*}} : tensor<4x64xi32>) cache_leftpad(%{{.*}} : tensor<4xi32>) new_kv(%{{.*}}, %{{.*}} : tensor<4x8x1x128xbf16>, tensor<4x8x1x128xbf16>) {causal = #flash.causal<bottom_right>}
// GENERIC-LABEL: sym_name = "leftpad_paged_append"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 1, 1>
func.func @leftpad_paged_append(%q: tensor<4x32x1x128xbf16>,
    %k: tensor<1024x16x8x128xbf16>, %v: tensor<1024x16x8x128xbf16>,
    %lens: tensor<4xi32>, %bt: tensor<4x64xi32>, %pad: tensor<4xi32>,
    %kn: tensor<4x8x1x128xbf16>, %vn: tensor<4x8x1x128xbf16>)
    -> tensor<4x32x1x128xbf16> {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %v, %lens
      block_table(%bt : tensor<4x64xi32>) cache_leftpad(%pad : tensor<4xi32>)
      new_kv(%kn, %vn : tensor<4x8x1x128xbf16>, tensor<4x8x1x128xbf16>)
      {causal = #flash.causal<bottom_right>}
      : tensor<4x32x1x128xbf16>, tensor<1024x16x8x128xbf16>,
        tensor<1024x16x8x128xbf16>, tensor<4xi32>
      -> tensor<4x32x1x128xbf16>, tensor<1024x16x8x128xbf16>,
         tensor<1024x16x8x128xbf16>
  return %o : tensor<4x32x1x128xbf16>
}

// CHECK-LABEL: func.func @leftpad
// CHECK: flash.attention_kvcache %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} cache_leftpad(%{{.*}} : tensor<4xi32>) {causal = #flash.causal<bottom_right>}
func.func @leftpad(%q: tensor<4x32x1x128xbf16>, %k: tensor<4x8x4096x128xbf16>,
                   %v: tensor<4x8x4096x128xbf16>, %lens: tensor<4xi32>,
                   %pad: tensor<4xi32>) -> tensor<4x32x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %v, %lens
      cache_leftpad(%pad : tensor<4xi32>) {causal = #flash.causal<bottom_right>}
      : tensor<4x32x1x128xbf16>, tensor<4x8x4096x128xbf16>,
        tensor<4x8x4096x128xbf16>, tensor<4xi32> -> tensor<4x32x1x128xbf16>
  return %o : tensor<4x32x1x128xbf16>
}

// ALiBi's slopes, [Hq] or [B, Hq]: alibi(...) after the other operands.
// CHECK-LABEL: func.func @alibi_leftpad_paged_append
// CHECK: flash.attention_kvcache %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} block_table(%{{.*}} : tensor<4x64xi32>) cache_leftpad(%{{.*}} : tensor<4xi32>) new_kv(%{{.*}}, %{{.*}} : tensor<4x8x1x128xbf16>, tensor<4x8x1x128xbf16>) alibi(%{{.*}} : tensor<4x32xf32>) {causal = #flash.causal<bottom_right>}
func.func @alibi_leftpad_paged_append(%q: tensor<4x32x1x128xbf16>,
    %k: tensor<1024x16x8x128xbf16>, %v: tensor<1024x16x8x128xbf16>,
    %lens: tensor<4xi32>, %bt: tensor<4x64xi32>, %pad: tensor<4xi32>,
    %kn: tensor<4x8x1x128xbf16>, %vn: tensor<4x8x1x128xbf16>,
    %s: tensor<4x32xf32>) -> tensor<4x32x1x128xbf16> {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %v, %lens
      block_table(%bt : tensor<4x64xi32>) cache_leftpad(%pad : tensor<4xi32>)
      new_kv(%kn, %vn : tensor<4x8x1x128xbf16>, tensor<4x8x1x128xbf16>)
      alibi(%s : tensor<4x32xf32>) {causal = #flash.causal<bottom_right>}
      : tensor<4x32x1x128xbf16>, tensor<1024x16x8x128xbf16>,
        tensor<1024x16x8x128xbf16>, tensor<4xi32>
      -> tensor<4x32x1x128xbf16>, tensor<1024x16x8x128xbf16>,
         tensor<1024x16x8x128xbf16>
  return %o : tensor<4x32x1x128xbf16>
}

// CHECK-LABEL: func.func @alibi_heads
// CHECK: flash.attention_kvcache %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} alibi(%{{.*}} : tensor<32xf32>) : tensor<4x32x1x128xbf16>
func.func @alibi_heads(%q: tensor<4x32x1x128xbf16>, %k: tensor<4x8x4096x128xbf16>,
                       %v: tensor<4x8x4096x128xbf16>, %lens: tensor<4xi32>,
                       %s: tensor<32xf32>) -> tensor<4x32x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %v, %lens alibi(%s : tensor<32xf32>)
      : tensor<4x32x1x128xbf16>, tensor<4x8x4096x128xbf16>,
        tensor<4x8x4096x128xbf16>, tensor<4xi32> -> tensor<4x32x1x128xbf16>
  return %o : tensor<4x32x1x128xbf16>
}

// Rotary embedding: rotary(cos, sin) after the other operands, the pairs'
// choice as a unit attribute; a table with more rows than the cache holds.
// CHECK-LABEL: func.func @rotary_append
// CHECK: flash.attention_kvcache %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} new_kv(%{{.*}}, %{{.*}} : tensor<4x8x1x128xbf16>, tensor<4x8x1x128xbf16>) rotary(%{{.*}}, %{{.*}} : tensor<8192x32xbf16>, tensor<8192x32xbf16>) {causal = #flash.causal<bottom_right>, rotary_interleaved}
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0>
func.func @rotary_append(%q: tensor<4x32x1x128xbf16>, %k: tensor<4x8x4096x128xbf16>,
                         %v: tensor<4x8x4096x128xbf16>, %lens: tensor<4xi32>,
                         %kn: tensor<4x8x1x128xbf16>, %vn: tensor<4x8x1x128xbf16>,
                         %cos: tensor<8192x32xbf16>, %sin: tensor<8192x32xbf16>)
    -> tensor<4x32x1x128xbf16> {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %v, %lens
      new_kv(%kn, %vn : tensor<4x8x1x128xbf16>, tensor<4x8x1x128xbf16>)
      rotary(%cos, %sin : tensor<8192x32xbf16>, tensor<8192x32xbf16>)
      {causal = #flash.causal<bottom_right>, rotary_interleaved}
      : tensor<4x32x1x128xbf16>, tensor<4x8x4096x128xbf16>,
        tensor<4x8x4096x128xbf16>, tensor<4xi32>
      -> tensor<4x32x1x128xbf16>, tensor<4x8x4096x128xbf16>,
         tensor<4x8x4096x128xbf16>
  return %o : tensor<4x32x1x128xbf16>
}

// Paged, with an FP8 cache (the rotated row is quantised) and every other
// operand; rotary_dim = D.
// CHECK-LABEL: func.func @rotary_paged_fp8
// CHECK: descale(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>) rotary(%{{.*}}, %{{.*}} : tensor<1024x64xf16>, tensor<1024x64xf16>) :
func.func @rotary_paged_fp8(%q: tensor<4x32x2x128xf16>,
    %k: tensor<256x16x8x128xf8E4M3FN>, %v: tensor<256x16x8x128xf8E4M3FN>,
    %lens: tensor<4xi32>, %bt: tensor<4x64xi32>, %pad: tensor<4xi32>,
    %kn: tensor<4x8x2x128xf16>, %vn: tensor<4x8x2x128xf16>,
    %kd: tensor<4x8xf32>, %vd: tensor<4x8xf32>,
    %cos: tensor<1024x64xf16>, %sin: tensor<1024x64xf16>)
    -> tensor<4x32x2x128xf16> {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %v, %lens
      block_table(%bt : tensor<4x64xi32>) cache_leftpad(%pad : tensor<4xi32>)
      new_kv(%kn, %vn : tensor<4x8x2x128xf16>, tensor<4x8x2x128xf16>)
      descale(%kd, %vd : tensor<4x8xf32>, tensor<4x8xf32>)
      rotary(%cos, %sin : tensor<1024x64xf16>, tensor<1024x64xf16>)
      : tensor<4x32x2x128xf16>, tensor<256x16x8x128xf8E4M3FN>,
        tensor<256x16x8x128xf8E4M3FN>, tensor<4xi32>
      -> tensor<4x32x2x128xf16>, tensor<256x16x8x128xf8E4M3FN>,
         tensor<256x16x8x128xf8E4M3FN>
  return %o : tensor<4x32x2x128xf16>
}

// cache_batch_idx: a pool of 8 sequences' rows for a batch of 4; printed
// after cache_leftpad, whatever its place among the operands.
// CHECK-LABEL: func.func @pool
// CHECK: flash.attention_kvcache %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} cache_leftpad(%{{.*}} : tensor<4xi32>) cache_batch_idx(%{{.*}} : tensor<4xi32>) new_kv(
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1>
func.func @pool(%q: tensor<4x32x1x128xbf16>, %k: tensor<8x8x4096x128xbf16>,
                %v: tensor<8x8x4096x128xbf16>, %lens: tensor<4xi32>,
                %pad: tensor<4xi32>, %idx: tensor<4xi32>,
                %kn: tensor<4x8x1x128xbf16>, %vn: tensor<4x8x1x128xbf16>)
    -> tensor<4x32x1x128xbf16> {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %v, %lens
      cache_leftpad(%pad : tensor<4xi32>) cache_batch_idx(%idx : tensor<4xi32>)
      new_kv(%kn, %vn : tensor<4x8x1x128xbf16>, tensor<4x8x1x128xbf16>)
      {causal = #flash.causal<bottom_right>}
      : tensor<4x32x1x128xbf16>, tensor<8x8x4096x128xbf16>,
        tensor<8x8x4096x128xbf16>, tensor<4xi32>
      -> tensor<4x32x1x128xbf16>, tensor<8x8x4096x128xbf16>,
         tensor<8x8x4096x128xbf16>
  return %o : tensor<4x32x1x128xbf16>
}
