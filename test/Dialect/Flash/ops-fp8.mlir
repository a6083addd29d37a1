// Round-trip of FP8 flash.attention: f8E4M3FN Q, K, V with descale
// operands, per tensor ([]), per head ([B, Hq] / [B, Hkv]) and per block
// ([B, H, N] with descale_block_size), printed and
// parsed again, the generic form parsed back, and its operand segments.
// RUN: flashfuse-opt %s | flashfuse-opt | FileCheck %s
// RUN: flashfuse-opt %s --mlir-print-op-generic | flashfuse-opt | FileCheck %s
// RUN: flashfuse-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @per_tensor
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x128x64xf8E4M3FN>, %[[K:.*]]: tensor<2x2x128x64xf8E4M3FN>, %[[V:.*]]: tensor<2x2x128x64xf8E4M3FN>, %[[QD:.*]]: tensor<f32>, %[[KD:.*]]: tensor<f32>, %[[VD:.*]]: tensor<f32>)
// CHECK: flash.attention %[[Q]], %[[K]], %[[V]] descale(%[[QD]], %[[KD]], %[[VD]] : tensor<f32>, tensor<f32>, tensor<f32>) {causal = #flash.causal<top_left>} : tensor<2x8x128x64xf8E4M3FN>, tensor<2x2x128x64xf8E4M3FN>, tensor<2x2x128x64xf8E4M3FN> -> tensor<2x8x128x64xbf16>, tensor<2x8x128xf32>
// GENERIC-LABEL: sym_name = "per_tensor"
// GENERIC: "flash.attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{causal = #flash.causal<top_left>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0>}>
func.func @per_tensor(%q: tensor<2x8x128x64xf8E4M3FN>, %k: tensor<2x2x128x64xf8E4M3FN>,
                      %v: tensor<2x2x128x64xf8E4M3FN>, %qd: tensor<f32>,
                      %kd: tensor<f32>, %vd: tensor<f32>)
    -> (tensor<2x8x128x64xbf16>, tensor<2x8x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v
      descale(%qd, %kd, %vd : tensor<f32>, tensor<f32>, tensor<f32>)
      {causal = #flash.causal<top_left>}
      : tensor<2x8x128x64xf8E4M3FN>, tensor<2x2x128x64xf8E4M3FN>,
        tensor<2x2x128x64xf8E4M3FN>
      -> tensor<2x8x128x64xbf16>, tensor<2x8x128xf32>
  return %o, %lse : tensor<2x8x128x64xbf16>, tensor<2x8x128xf32>
}

// Per head, BSHD layout, an f16 O, a bias and a mask next to the descales
// (the score pipeline runs in f32 after dequantisation), and a dynamic
// batch that the per-head descales match.
// CHECK-LABEL: func.func @per_head_bshd
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} bias(%{{.*}} : tensor<1x1x1x77xf32>) mask(%{{.*}} : tensor<?x1x33x77xi1>) descale(%{{.*}}, %{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x2xf32>) {k_perm = array<i64: 0, 2, 1, 3>, q_perm = array<i64: 0, 2, 1, 3>, scale = 1.250000e-01 : f32, v_perm = array<i64: 0, 2, 1, 3>} : tensor<?x33x4x64xf8E4M3FN>, tensor<?x77x2x64xf8E4M3FN>, tensor<?x77x2x64xf8E4M3FN> -> tensor<?x33x4x64xf16>
// GENERIC-LABEL: sym_name = "per_head_bshd"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0>
func.func @per_head_bshd(%q: tensor<?x33x4x64xf8E4M3FN>, %k: tensor<?x77x2x64xf8E4M3FN>,
                         %v: tensor<?x77x2x64xf8E4M3FN>, %bias: tensor<1x1x1x77xf32>,
                         %mask: tensor<?x1x33x77xi1>, %qd: tensor<?x4xf32>,
                         %kd: tensor<?x2xf32>, %vd: tensor<?x2xf32>)
    -> tensor<?x33x4x64xf16> {
  %o = flash.attention %q, %k, %v bias(%bias : tensor<1x1x1x77xf32>)
      mask(%mask : tensor<?x1x33x77xi1>)
      descale(%qd, %kd, %vd : tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x2xf32>)
      {q_perm = array<i64: 0, 2, 1, 3>, k_perm = array<i64: 0, 2, 1, 3>,
       v_perm = array<i64: 0, 2, 1, 3>, scale = 0.125 : f32}
      : tensor<?x33x4x64xf8E4M3FN>, tensor<?x77x2x64xf8E4M3FN>,
        tensor<?x77x2x64xf8E4M3FN> -> tensor<?x33x4x64xf16>
  return %o : tensor<?x33x4x64xf16>
}

// Positive constant descales pass the verifier's value check.
// CHECK-LABEL: func.func @constant_descales
// CHECK: descale(%{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<1x2xf32>, tensor<f32>)
func.func @constant_descales(%q: tensor<1x2x16x32xf8E4M3FN>, %k: tensor<1x2x16x32xf8E4M3FN>,
                             %v: tensor<1x2x16x32xf8E4M3FN>) -> tensor<1x2x16x32xbf16> {
  %qd = arith.constant dense<0.5> : tensor<f32>
  %kd = arith.constant dense<[[0.25, 4.0]]> : tensor<1x2xf32>
  %vd = arith.constant dense<1.0e-3> : tensor<f32>
  %o = flash.attention %q, %k, %v
      descale(%qd, %kd, %vd : tensor<f32>, tensor<1x2xf32>, tensor<f32>)
      : tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>,
        tensor<1x2x16x32xf8E4M3FN> -> tensor<1x2x16x32xbf16>
  return %o : tensor<1x2x16x32xbf16>
}

// Per-block descales (FlashAttention-3's block quantisation): [B, H,
// ceil(S / BQ)] for Q, [B, Hkv, ceil(S / BK)] for K and V, mixed freely
// with per-tensor and per-head ones; descale_block_size defaults to
// [128, 128].
// CHECK-LABEL: func.func @per_block
// CHECK: descale(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x4xf32>, tensor<2x2x3xf32>, tensor<f32>)
// CHECK-SAME: descale_block_size = array<i64: 64, 128>
func.func @per_block(%q: tensor<2x8x200x64xf8E4M3FN>, %k: tensor<2x2x300x64xf8E4M3FN>,
                     %v: tensor<2x2x300x64xf8E4M3FN>, %qd: tensor<2x8x4xf32>,
                     %kd: tensor<2x2x3xf32>, %vd: tensor<f32>) -> tensor<2x8x200x64xbf16> {
  %o = flash.attention %q, %k, %v
      descale(%qd, %kd, %vd : tensor<2x8x4xf32>, tensor<2x2x3xf32>, tensor<f32>)
      {descale_block_size = array<i64: 64, 128>}
      : tensor<2x8x200x64xf8E4M3FN>, tensor<2x2x300x64xf8E4M3FN>,
        tensor<2x2x300x64xf8E4M3FN> -> tensor<2x8x200x64xbf16>
  return %o : tensor<2x8x200x64xbf16>
}

// CHECK-LABEL: func.func @per_block_default
// CHECK: descale(%{{.*}}, %{{.*}}, %{{.*}} : tensor<1x2xf32>, tensor<1x1x3xf32>, tensor<1x1x3xf32>)
// CHECK-NOT: descale_block_size
func.func @per_block_default(%q: tensor<1x2x33x128xf8E4M3FN>, %k: tensor<1x1x257x128xf8E4M3FN>,
                             %v: tensor<1x1x257x128xf8E4M3FN>, %qd: tensor<1x2xf32>,
                             %kd: tensor<1x1x3xf32>) -> tensor<1x2x33x128xf16> {
  %o = flash.attention %q, %k, %v
      descale(%qd, %kd, %kd : tensor<1x2xf32>, tensor<1x1x3xf32>, tensor<1x1x3xf32>)
      : tensor<1x2x33x128xf8E4M3FN>, tensor<1x1x257x128xf8E4M3FN>,
        tensor<1x1x257x128xf8E4M3FN> -> tensor<1x2x33x128xf16>
  return %o : tensor<1x2x33x128xf16>
}
