// RUN: flashfuse-opt %s --flash-lower-naive | FileCheck %s

// The reference materialises S = Q Kᵀ, takes an f32 softmax with a safe
// row max, and writes O and LSE; fully masked rows give O = 0, LSE = +inf.

// CHECK-DAG: #[[QMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[KMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @basic
// CHECK-NOT: flash.attention
// CHECK: linalg.generic {indexing_maps = [#[[QMAP]], #[[KMAP]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins({{.*}} : tensor<2x4x17x64xf16>, tensor<2x4x23x64xf16>) outs({{.*}} : tensor<2x4x17x23xf32>)
// CHECK: arith.extf
// CHECK: arith.extf
// The default scale is 1/sqrt(64).
// CHECK: arith.constant 1.250000e-01 : f32
// Row max starts at -inf.
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEGINF]] : f32)
// CHECK: arith.maximumf
// Safe max: -inf is replaced by 0 before exp(s - m).
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: math.exp
// P = E / L, 0 when L = 0.
// CHECK: arith.divf
// CHECK: arith.select
// O accumulates in f32 and is truncated at the end.
// CHECK: linalg.generic {{.*}} outs({{.*}} : tensor<2x4x17x64xf32>)
// CHECK: arith.truncf {{.*}} : f32 to f16
// LSE = m + log(l), +inf for an empty row.
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK: math.log
// CHECK: arith.constant 0x7F800000 : f32
// CHECK: return {{.*}} : tensor<2x4x17x64xf16>, tensor<2x4x17xf32>
func.func @basic(%q: tensor<2x4x17x64xf16>, %k: tensor<2x4x23x64xf16>, %v: tensor<2x4x23x64xf16>)
    -> (tensor<2x4x17x64xf16>, tensor<2x4x17xf32>) {
  %o, %lse = flash.attention %q, %k, %v
      : tensor<2x4x17x64xf16>, tensor<2x4x23x64xf16>, tensor<2x4x23x64xf16>
      -> tensor<2x4x17x64xf16>, tensor<2x4x17xf32>
  return %o, %lse : tensor<2x4x17x64xf16>, tensor<2x4x17xf32>
}
