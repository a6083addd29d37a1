// A prefix-LM mask from arange, masked_fill(~((j < 5) | (j <= i)), -inf):
// no band (the prefix columns break it), so the whole keep condition
// becomes the mask_mod, not a dense mask operand; flash-derive-block-sparsity
// then decides its blocks of 8 at compile time.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_prefix_lm.linalg.mlir \
// RUN:   | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp --implicit-check-not=linalg.generic
// RUN: flashfuse-opt --flash-raise-attention --flash-derive-block-sparsity="block-q=8 block-k=8" \
// RUN:   %flashfuse_src_root/test/models/cases/eager_prefix_lm.linalg.mlir | FileCheck %s --check-prefix=LISTS

// CHECK-NOT: flash.attention
// CHECK: flash.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f32} : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32> -> tensor<2x4x16x16xf32> mask_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT: %[[J1:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK-NEXT: %[[P:.*]] = arith.constant 5 : i64
// CHECK-NEXT: %[[PREFIX:.*]] = arith.cmpi slt, %[[J1]], %[[P]] : i64
// CHECK-NEXT: %[[J2:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK-NEXT: %[[I2:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT: %[[CAUSAL:.*]] = arith.cmpi sle, %[[J2]], %[[I2]] : i64
// CHECK-NEXT: %[[KEEP:.*]] = arith.ori %[[PREFIX]], %[[CAUSAL]] : i1
// CHECK-NEXT: flash.yield %[[KEEP]] : i1
// CHECK-NOT: flash.attention

// Query block 0 (rows 0-7): key block 0 partial, key block 1 skipped;
// query block 1: key block 0 full (below the diagonal), 1 partial.
// LISTS-DAG: %[[N:.*]] = arith.constant dense<1> : tensor<1x1x2xi32>
// LISTS-DAG: %[[I:.*]] = arith.constant dense<{{\[\[\[\[}}0], [1]]]]> : tensor<1x1x2x1xi32>
// LISTS-DAG: %[[FN:.*]] = arith.constant dense<[{{\[\[}}0, 1]]]> : tensor<1x1x2xi32>
// LISTS-DAG: %[[FI:.*]] = arith.constant dense<0> : tensor<1x1x2x1xi32>
// LISTS: flash.attention %arg0, %arg1, %arg2 block_sparse(%[[N]], %[[I]] : tensor<1x1x2xi32>, tensor<1x1x2x1xi32>) full_blocks(%[[FN]], %[[FI]] : tensor<1x1x2xi32>, tensor<1x1x2x1xi32>)
