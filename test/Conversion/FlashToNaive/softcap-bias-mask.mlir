// RUN: flashfuse-opt %s --flash-lower-naive | FileCheck %s

// Order of the score pipeline: scale, softcap, bias, then the masks. A
// size-1 bias or mask dimension is read at index 0 through its map.

// CHECK-DAG: #[[BIAS:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, d3)>
// CHECK-DAG: #[[MASK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
// CHECK-LABEL: func.func @softcap_bias_mask
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[BIAS]], #[[MASK]], #{{.*}}]
// CHECK-SAME: ins(%{{.*}}, %arg3, %arg4 : tensor<2x2x8x8xf32>, tensor<1x2x1x8xbf16>, tensor<2x1x8x8xi1>)
// CHECK: ^bb0(%[[S:.*]]: f32, %[[B:.*]]: bf16, %[[M:.*]]: i1, %{{.*}}: f32):
// CHECK: %[[SCALED:.*]] = arith.mulf %[[S]], %{{.*}} : f32
// CHECK: %[[CAP:.*]] = arith.constant 5.000000e+01 : f32
// CHECK: %[[DIV:.*]] = arith.divf %[[SCALED]], %[[CAP]] : f32
// CHECK: %[[T:.*]] = math.tanh %[[DIV]] : f32
// CHECK: %[[CAPPED:.*]] = arith.mulf %[[CAP]], %[[T]] : f32
// CHECK: %[[BF:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK: %[[BIASED:.*]] = arith.addf %[[CAPPED]], %[[BF]] : f32
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: arith.select %[[M]], %[[BIASED]], %[[NEGINF]] : f32
func.func @softcap_bias_mask(%q: tensor<2x2x8x16xbf16>, %k: tensor<2x2x8x16xbf16>, %v: tensor<2x2x8x16xbf16>,
                             %bias: tensor<1x2x1x8xbf16>, %mask: tensor<2x1x8x8xi1>) -> tensor<2x2x8x16xbf16> {
  %o = flash.attention %q, %k, %v bias(%bias : tensor<1x2x1x8xbf16>) mask(%mask : tensor<2x1x8x8xi1>)
      {softcap = 50.0 : f32}
      : tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16> -> tensor<2x2x8x16xbf16>
  return %o : tensor<2x2x8x16xbf16>
}

// An explicit scale replaces 1/sqrt(D).
// CHECK-LABEL: func.func @explicit_scale
// CHECK: arith.constant 3.000000e+00 : f32
// CHECK-NOT: arith.constant 2.500000e-01 : f32
func.func @explicit_scale(%q: tensor<1x1x4x16xf32>, %k: tensor<1x1x4x16xf32>, %v: tensor<1x1x4x16xf32>) -> tensor<1x1x4x16xf32> {
  %o = flash.attention %q, %k, %v {scale = 3.0 : f32}
      : tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32> -> tensor<1x1x4x16xf32>
  return %o : tensor<1x1x4x16xf32>
}
