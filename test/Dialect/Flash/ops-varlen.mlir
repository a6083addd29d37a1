// Round-trip of the varlen (packed batch) form of flash.attention: the
// custom form printed and parsed again, the generic form parsed back, and
// the operand segments of the generic form.
// RUN: flashfuse-opt %s | flashfuse-opt | FileCheck %s
// RUN: flashfuse-opt %s --mlir-print-op-generic | flashfuse-opt | FileCheck %s
// RUN: flashfuse-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @packed_gqa_lse
// CHECK-SAME: (%[[Q:.*]]: tensor<1x8x300x64xf16>, %[[K:.*]]: tensor<1x2x500x64xf16>, %[[V:.*]]: tensor<1x2x500x64xf16>, %[[CUQ:.*]]: tensor<4xi32>, %[[CUK:.*]]: tensor<4xi32>)
// CHECK: flash.attention %[[Q]], %[[K]], %[[V]] varlen(%[[CUQ]], %[[CUK]] : tensor<4xi32>, tensor<4xi32>) {causal = #flash.causal<bottom_right>} : tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16> -> tensor<1x8x300x64xf16>, tensor<1x8x300xf32>
// GENERIC-LABEL: sym_name = "packed_gqa_lse"
// GENERIC: "flash.attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{causal = #flash.causal<bottom_right>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0>}>
func.func @packed_gqa_lse(%q: tensor<1x8x300x64xf16>, %k: tensor<1x2x500x64xf16>,
                          %v: tensor<1x2x500x64xf16>, %cu_q: tensor<4xi32>,
                          %cu_k: tensor<4xi32>)
    -> (tensor<1x8x300x64xf16>, tensor<1x8x300xf32>) {
  %o, %lse = flash.attention %q, %k, %v
      varlen(%cu_q, %cu_k : tensor<4xi32>, tensor<4xi32>)
      {causal = #flash.causal<bottom_right>}
      : tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16>
      -> tensor<1x8x300x64xf16>, tensor<1x8x300xf32>
  return %o, %lse : tensor<1x8x300x64xf16>, tensor<1x8x300xf32>
}

// flash-attn's [total, H, D] layout as [1, total, H, D] with BSHD perms,
// dynamic totals and batch, a window and a softcap.
// CHECK-LABEL: func.func @bshd_dynamic_window
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} varlen(%{{.*}}, %{{.*}} : tensor<?xi32>, tensor<?xi32>) {k_perm = array<i64: 0, 2, 1, 3>, q_perm = array<i64: 0, 2, 1, 3>, scale = 1.250000e-01 : f32, softcap = 3.000000e+01 : f32, v_perm = array<i64: 0, 2, 1, 3>, window_left = 128 : i64, window_right = 0 : i64} : tensor<1x?x4x64xbf16>, tensor<1x?x4x64xbf16>, tensor<1x?x4x64xbf16> -> tensor<1x?x4x64xbf16>
// GENERIC-LABEL: sym_name = "bshd_dynamic_window"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0>
func.func @bshd_dynamic_window(%q: tensor<1x?x4x64xbf16>, %k: tensor<1x?x4x64xbf16>,
                               %v: tensor<1x?x4x64xbf16>, %cu_q: tensor<?xi32>,
                               %cu_k: tensor<?xi32>) -> tensor<1x?x4x64xbf16> {
  %o = flash.attention %q, %k, %v
      varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>)
      {q_perm = array<i64: 0, 2, 1, 3>, k_perm = array<i64: 0, 2, 1, 3>,
       v_perm = array<i64: 0, 2, 1, 3>, scale = 0.125 : f32, softcap = 30.0 : f32,
       window_left = 128 : i64, window_right = 0 : i64}
      : tensor<1x?x4x64xbf16>, tensor<1x?x4x64xbf16>, tensor<1x?x4x64xbf16>
      -> tensor<1x?x4x64xbf16>
  return %o : tensor<1x?x4x64xbf16>
}

// An empty batch (cu = [0]) is still a batch.
// CHECK-LABEL: func.func @empty_batch
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} varlen(%{{.*}}, %{{.*}} : tensor<1xi32>, tensor<1xi32>) : tensor<1x2x0x32xf32>
func.func @empty_batch(%q: tensor<1x2x0x32xf32>, %k: tensor<1x2x0x32xf32>,
                       %cu: tensor<1xi32>) -> tensor<1x2x0x32xf32> {
  %o = flash.attention %q, %k, %k varlen(%cu, %cu : tensor<1xi32>, tensor<1xi32>)
      : tensor<1x2x0x32xf32>, tensor<1x2x0x32xf32>, tensor<1x2x0x32xf32>
      -> tensor<1x2x0x32xf32>
  return %o : tensor<1x2x0x32xf32>
}

// The gradient takes the same operands, after the optional ones it shares.
// CHECK-LABEL: func.func @grad_packed
// CHECK: flash.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} varlen(%{{.*}}, %{{.*}} : tensor<3xi32>, tensor<3xi32>) {causal = #flash.causal<top_left>} : tensor<1x4x40x32xf32>, tensor<1x4x40x32xf32>, tensor<1x2x50x32xf32>, tensor<1x2x50x32xf32>, tensor<1x4x40x32xf32>, tensor<1x4x40xf32> -> tensor<1x4x40x32xf32>, tensor<1x2x50x32xf32>, tensor<1x2x50x32xf32>
// GENERIC-LABEL: sym_name = "grad_packed"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0>
func.func @grad_packed(%do: tensor<1x4x40x32xf32>, %q: tensor<1x4x40x32xf32>,
                       %k: tensor<1x2x50x32xf32>, %o: tensor<1x4x40x32xf32>,
                       %lse: tensor<1x4x40xf32>, %cu_q: tensor<3xi32>, %cu_k: tensor<3xi32>)
    -> (tensor<1x4x40x32xf32>, tensor<1x2x50x32xf32>, tensor<1x2x50x32xf32>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %k, %o, %lse
      varlen(%cu_q, %cu_k : tensor<3xi32>, tensor<3xi32>) {causal = #flash.causal<top_left>}
      : tensor<1x4x40x32xf32>, tensor<1x4x40x32xf32>, tensor<1x2x50x32xf32>,
        tensor<1x2x50x32xf32>, tensor<1x4x40x32xf32>, tensor<1x4x40xf32>
      -> tensor<1x4x40x32xf32>, tensor<1x2x50x32xf32>, tensor<1x2x50x32xf32>
  return %dq, %dk, %dv : tensor<1x4x40x32xf32>, tensor<1x2x50x32xf32>, tensor<1x2x50x32xf32>
}

// The regions over a packed batch: b is the sequence, q_idx / kv_idx are
// local to it (FlashOps.td); a per-sequence ALiBi offset read from above.
// CHECK-LABEL: func.func @packed_regions
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} varlen(%{{.*}}, %{{.*}} : tensor<3xi32>, tensor<3xi32>) : tensor<1x2x40x32xf16>, tensor<1x2x40x32xf16>, tensor<1x2x40x32xf16> -> tensor<1x2x40x32xf16> score_mod {
// CHECK: tensor.extract %{{.*}}[%{{.*}}] : tensor<2xf32>
// CHECK: } mask_mod {
// GENERIC-LABEL: sym_name = "packed_regions"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0>
func.func @packed_regions(%q: tensor<1x2x40x32xf16>, %cu: tensor<3xi32>,
                          %offsets: tensor<2xf32>) -> tensor<1x2x40x32xf16> {
  %o = flash.attention %q, %q, %q varlen(%cu, %cu : tensor<3xi32>, tensor<3xi32>)
      : tensor<1x2x40x32xf16>, tensor<1x2x40x32xf16>, tensor<1x2x40x32xf16>
      -> tensor<1x2x40x32xf16>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %off = tensor.extract %offsets[%b] : tensor<2xf32>
        %r = arith.addf %s, %off : f32
        flash.yield %r : f32
      } mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c3 = arith.constant 3 : index
        %keep = arith.cmpi ne, %i, %c3 : index
        flash.yield %keep : i1
      }
  return %o : tensor<1x2x40x32xf16>
}
