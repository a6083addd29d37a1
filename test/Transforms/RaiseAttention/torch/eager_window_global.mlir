// Sliding window with global tokens from arange,
// masked_fill(~(((i - j).abs() < 3) | (j < 2) | (i < 2)), -inf): no band
// (the global rows and columns break it), so the keep condition becomes the
// mask_mod, with |i - j| as math.absi, not a dense mask operand.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_window_global.linalg.mlir \
// RUN:   | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp --implicit-check-not=linalg.generic
// RUN: flashfuse-opt --flash-raise-attention --flash-derive-block-sparsity="block-q=4 block-k=4" \
// RUN:   %flashfuse_src_root/test/models/cases/eager_window_global.linalg.mlir | FileCheck %s --check-prefix=LISTS

// CHECK-NOT: flash.attention
// CHECK: flash.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f32} : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32> -> tensor<2x4x16x16xf32> mask_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK: %[[D:.*]] = arith.subi
// CHECK-NEXT: %[[A:.*]] = math.absi %[[D]] : i64
// CHECK: %[[NEAR:.*]] = arith.cmpi slt, %[[A]], %{{.*}} : i64
// CHECK: %[[GK:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : i64
// CHECK-NEXT: %[[O1:.*]] = arith.ori %[[NEAR]], %[[GK]] : i1
// CHECK: %[[GQ:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : i64
// CHECK-NEXT: %[[KEEP:.*]] = arith.ori %[[O1]], %[[GQ]] : i1
// CHECK-NEXT: flash.yield %[[KEEP]] : i1
// CHECK-NOT: flash.attention

// Blocks of 4 (the lists a brute-force evaluation gives): block (0, 0)
// is kept whole, by one term or another in each part (interval evaluation
// of the whole block cannot see it, its bisection into parts does); the
// first key block and query block hold the global tokens (partial: 2 of
// 4), the window covers the diagonal and its neighbours (partial), the two
// blocks beyond it are skipped.
// LISTS-DAG: %[[N:.*]] = arith.constant dense<[{{\[\[}}3, 3, 4, 3]]]> : tensor<1x1x4xi32>
// LISTS-DAG: %[[I:.*]] = arith.constant dense<{{\[\[\[\[}}1, 2, 3, 0], [0, 1, 2, 0], [0, 1, 2, 3], [0, 2, 3, 0]]]]> : tensor<1x1x4x4xi32>
// LISTS-DAG: %[[FN:.*]] = arith.constant dense<[{{\[\[}}1, 0, 0, 0]]]> : tensor<1x1x4xi32>
// LISTS-DAG: %[[FI:.*]] = arith.constant dense<0> : tensor<1x1x4x1xi32>
// LISTS: flash.attention %arg0, %arg1, %arg2 block_sparse(%[[N]], %[[I]] : tensor<1x1x4xi32>, tensor<1x1x4x4xi32>) full_blocks(%[[FN]], %[[FI]] : tensor<1x1x4xi32>, tensor<1x1x4x1xi32>) {scale
