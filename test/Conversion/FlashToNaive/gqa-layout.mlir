// RUN: flashfuse-opt %s --flash-lower-naive | FileCheck %s

// GQA reads kv head h floordiv G through the indexing map (no copy of K or
// V), and BSHD operands are read through permuted maps (no transpose).

// Q is [B, S, H, D]: logical (b, h, i, d) sits at (b, i, h, d).
// CHECK-DAG: #[[Q:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>
// K is [B, S, Hkv, D] with G = 8 / 2 = 4.
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1 floordiv 4, d4)>
// V: (b, h, i, e) reduced over j at (b, j, h floordiv 4, e).
// CHECK-DAG: #[[V:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d1 floordiv 4, d3)>
// O in the layout of Q.
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d3)>
// CHECK-LABEL: func.func @gqa_bshd
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[Q]], #[[K]], #{{.*}}]
// CHECK-SAME: ins(%arg0, %arg1 : tensor<1x16x8x32xf32>, tensor<1x24x2x32xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[V]], #[[O]]]
// CHECK-SAME: outs({{.*}} : tensor<1x16x8x48xf32>)
func.func @gqa_bshd(%q: tensor<1x16x8x32xf32>, %k: tensor<1x24x2x32xf32>, %v: tensor<1x24x2x48xf32>)
    -> tensor<1x16x8x48xf32> {
  %o = flash.attention %q, %k, %v
      {q_perm = array<i64: 0, 2, 1, 3>, k_perm = array<i64: 0, 2, 1, 3>, v_perm = array<i64: 0, 2, 1, 3>}
      : tensor<1x16x8x32xf32>, tensor<1x24x2x32xf32>, tensor<1x24x2x48xf32> -> tensor<1x16x8x48xf32>
  return %o : tensor<1x16x8x48xf32>
}
