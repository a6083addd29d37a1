// Round-trip of flash.attention_kvcache over an FP8 (f8E4M3FN) cache with
// its descales: the custom form printed and parsed again, and the generic
// form parsed back into the custom one (docs/KVCACHE.md "FP8 cache").
// RUN: flashfuse-opt %s | flashfuse-opt | FileCheck %s
// RUN: flashfuse-opt %s --mlir-print-op-generic | flashfuse-opt | FileCheck %s
// The generic form itself, to pin the operand segments of the descales.
// RUN: flashfuse-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Contiguous, per-tensor descales.
// CHECK-LABEL: func.func @contiguous_per_tensor
// CHECK: flash.attention_kvcache %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} descale(%{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>) {causal = #flash.causal<bottom_right>} : tensor<4x32x1x128xbf16>, tensor<4x8x4096x128xf8E4M3FN>, tensor<4x8x4096x128xf8E4M3FN>, tensor<4xi32> -> tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>
// GENERIC-LABEL: sym_name = "contiguous_per_tensor"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 0, 0>
func.func @contiguous_per_tensor(%q: tensor<4x32x1x128xbf16>,
                                 %k: tensor<4x8x4096x128xf8E4M3FN>,
                                 %v: tensor<4x8x4096x128xf8E4M3FN>,
                                 %lens: tensor<4xi32>, %kd: tensor<f32>,
                                 %vd: tensor<f32>)
    -> (tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>) {
  %o, %lse = flash.attention_kvcache %q, %k, %v, %lens
      descale(%kd, %vd : tensor<f32>, tensor<f32>)
      {causal = #flash.causal<bottom_right>}
      : tensor<4x32x1x128xbf16>, tensor<4x8x4096x128xf8E4M3FN>,
        tensor<4x8x4096x128xf8E4M3FN>, tensor<4xi32>
      -> tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>
  return %o, %lse : tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>
}

// Paged, per-head descales, f16 new rows quantised on append; the updated
// caches are FP8 like the caches.
// CHECK-LABEL: func.func @paged_append_per_head
// CHECK: flash.attention_kvcache %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} block_table(%{{.*}} : tensor<4x64xi32>) new_kv(%{{.*}}, %{{.*}} : tensor<4x8x1x128xf16>, tensor<4x8x1x128xf16>) descale(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>) : tensor<4x32x1x128xf16>, tensor<1024x16x8x128xf8E4M3FN>, tensor<1024x16x8x128xf8E4M3FN>, tensor<4xi32> -> tensor<4x32x1x128xf16>, tensor<1024x16x8x128xf8E4M3FN>, tensor<1024x16x8x128xf8E4M3FN>
// GENERIC-LABEL: sym_name = "paged_append_per_head"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 1, 1>
func.func @paged_append_per_head(%q: tensor<4x32x1x128xf16>,
                                 %kp: tensor<1024x16x8x128xf8E4M3FN>,
                                 %vp: tensor<1024x16x8x128xf8E4M3FN>,
                                 %lens: tensor<4xi32>, %bt: tensor<4x64xi32>,
                                 %kn: tensor<4x8x1x128xf16>,
                                 %vn: tensor<4x8x1x128xf16>,
                                 %kd: tensor<4x8xf32>, %vd: tensor<4x8xf32>) {
  %o, %kc, %vc = flash.attention_kvcache %q, %kp, %vp, %lens
      block_table(%bt : tensor<4x64xi32>)
      new_kv(%kn, %vn : tensor<4x8x1x128xf16>, tensor<4x8x1x128xf16>)
      descale(%kd, %vd : tensor<4x8xf32>, tensor<4x8xf32>)
      : tensor<4x32x1x128xf16>, tensor<1024x16x8x128xf8E4M3FN>,
        tensor<1024x16x8x128xf8E4M3FN>, tensor<4xi32>
      -> tensor<4x32x1x128xf16>, tensor<1024x16x8x128xf8E4M3FN>,
         tensor<1024x16x8x128xf8E4M3FN>
  return
}

// Mixed descale forms (K per head, V per tensor) and dynamic sizes: the
// per-head shape is checked against what is static.
// CHECK-LABEL: func.func @mixed_dynamic
// CHECK: descale(%{{.*}}, %{{.*}} : tensor<?x2xf32>, tensor<f32>)
func.func @mixed_dynamic(%q: tensor<?x4x1x64xbf16>,
                         %k: tensor<?x2x256x64xf8E4M3FN>,
                         %v: tensor<?x2x256x64xf8E4M3FN>,
                         %lens: tensor<?xi32>, %kd: tensor<?x2xf32>,
                         %vd: tensor<f32>) {
  %o = flash.attention_kvcache %q, %k, %v, %lens
      descale(%kd, %vd : tensor<?x2xf32>, tensor<f32>)
      : tensor<?x4x1x64xbf16>, tensor<?x2x256x64xf8E4M3FN>,
        tensor<?x2x256x64xf8E4M3FN>, tensor<?xi32> -> tensor<?x4x1x64xbf16>
  return
}

// ALiBi over an FP8 cache: the slopes after the descales.
// CHECK-LABEL: func.func @alibi_fp8_cache
// CHECK: descale(%{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>) alibi(%{{.*}} : tensor<8xf32>)
func.func @alibi_fp8_cache(%q: tensor<2x8x1x64xbf16>, %k: tensor<2x2x128x64xf8E4M3FN>, %v: tensor<2x2x128x64xf8E4M3FN>, %lens: tensor<2xi32>, %d: tensor<f32>, %s: tensor<8xf32>) -> tensor<2x8x1x64xbf16> {
  %o = flash.attention_kvcache %q, %k, %v, %lens descale(%d, %d : tensor<f32>, tensor<f32>) alibi(%s : tensor<8xf32>)
      : tensor<2x8x1x64xbf16>, tensor<2x2x128x64xf8E4M3FN>, tensor<2x2x128x64xf8E4M3FN>, tensor<2xi32>
      -> tensor<2x8x1x64xbf16>
  return %o : tensor<2x8x1x64xbf16>
}
