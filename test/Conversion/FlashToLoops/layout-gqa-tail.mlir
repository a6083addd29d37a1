// RUN: flashfuse-opt %s --flash-lower-to-loops="block-m=16 block-n=16" | FileCheck %s

// BSHD operands are sliced in place ([b, s, h, d] offsets, rank-reduced to
// [rows, D]); the kv head is h / G; Sq = 37 is not a multiple of 16, so
// there are ceil(37 / 16) = 3 query blocks and the last has 5 rows.

// The [D, rows] tile of @head_dim_first is read through this map.
// CHECK-DAG: #[[QT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-LABEL: func.func @bshd_gqa
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %[[QB:.*]]) in (2, 6, 3)
// CHECK: %[[Q0:.*]] = arith.muli %[[QB]], %{{.*}} : index
// CHECK: %[[C37:.*]] = arith.constant 37 : index
// CHECK: %[[REST:.*]] = arith.subi %[[C37]], %[[Q0]] : index
// CHECK: %[[M:.*]] = arith.minsi %{{.*}}, %[[REST]] : index
// CHECK: tensor.extract_slice %arg0[%[[B]], %[[Q0]], %[[H]], 0] [1, %[[M]], 1, 32] [1, 1, 1, 1] : tensor<2x37x6x32xf16> to tensor<?x32xf16>
// CHECK: scf.for %[[K0:[a-z0-9]+]] =
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[HKV:.*]] = arith.divui %[[H]], %[[C3]] : index
// CHECK: tensor.extract_slice %arg1[%[[B]], %[[K0]], %[[HKV]], 0] [1, %{{.*}}, 1, 32] {{.*}} : tensor<2x29x2x32xf16> to tensor<?x32xf16>
// CHECK: tensor.extract_slice %arg2[%[[B]], %[[K0]], %[[HKV]], 0] [1, %{{.*}}, 1, 24] {{.*}} : tensor<2x29x2x24xf16> to tensor<?x24xf16>
// f16 products are widened; statistics stay f32.
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: scf.yield {{.*}} : tensor<?xf32>, tensor<?xf32>, tensor<?x24xf32>
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[B]], %[[Q0]], %[[H]], 0] [1, %[[M]], 1, 24] [1, 1, 1, 1] : tensor<?x24xf16> into tensor<2x37x6x24xf16>
func.func @bshd_gqa(%q: tensor<2x37x6x32xf16>, %k: tensor<2x29x2x32xf16>, %v: tensor<2x29x2x24xf16>) -> tensor<2x37x6x24xf16> {
  %o = flash.attention %q, %k, %v
      {q_perm = array<i64: 0, 2, 1, 3>, k_perm = array<i64: 0, 2, 1, 3>, v_perm = array<i64: 0, 2, 1, 3>}
      : tensor<2x37x6x32xf16>, tensor<2x29x2x32xf16>, tensor<2x29x2x24xf16> -> tensor<2x37x6x24xf16>
  return %o : tensor<2x37x6x24xf16>
}

// A layout whose head dim precedes the sequence (logical [B, H, S, D]
// stored as [B, H, D, S]) is sliced to [D, rows] and read transposed by
// the map, not copied.
// CHECK-LABEL: func.func @head_dim_first
// CHECK: tensor.extract_slice %arg0[%{{.*}}, %{{.*}}, 0, %{{.*}}] [1, 1, 16, %{{.*}}] [1, 1, 1, 1] : tensor<1x1x16x20xf32> to tensor<16x?xf32>
// CHECK: linalg.generic {indexing_maps = [#[[QT]],
func.func @head_dim_first(%q: tensor<1x1x16x20xf32>, %k: tensor<1x1x20x16xf32>, %v: tensor<1x1x20x16xf32>) -> tensor<1x1x16x20xf32> {
  %o = flash.attention %q, %k, %v {q_perm = array<i64: 0, 1, 3, 2>}
      : tensor<1x1x16x20xf32>, tensor<1x1x20x16xf32>, tensor<1x1x20x16xf32> -> tensor<1x1x16x20xf32>
  return %o : tensor<1x1x16x20xf32>
}
