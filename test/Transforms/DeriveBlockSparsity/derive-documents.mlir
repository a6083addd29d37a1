// flash-derive-block-sparsity on a document mask whose ids are a constant
// table, in 16 x 16 blocks of a 64-token sequence (QB = KB = 4); the lists
// as a brute-force evaluation of the mask gives them.
// RUN: flashfuse-opt %s --flash-derive-block-sparsity="block-q=16 block-k=16" | FileCheck %s

// Ids 0 for [0, 13), 1 for [13, 32), 2 for [32, 64), read by
// tensor.extract: blocks within one document on both sides are full,
// blocks of disjoint id ranges skipped, the block holding a document
// boundary partial.
// CHECK-LABEL: func.func @document_table
// CHECK-DAG: %[[N:.*]] = arith.constant dense<[{{\[\[}}2, 1, 0, 0]]]> : tensor<1x1x4xi32>
// CHECK-DAG: %[[I:.*]] = arith.constant dense<{{\[\[\[\[}}0, 1], [0, 0], [0, 0], [0, 0]]]]> : tensor<1x1x4x2xi32>
// CHECK-DAG: %[[FN:.*]] = arith.constant dense<[{{\[\[}}0, 1, 2, 2]]]> : tensor<1x1x4xi32>
// CHECK-DAG: %[[FI:.*]] = arith.constant dense<{{\[\[\[\[}}0, 0], [1, 0], [2, 3], [2, 3]]]]> : tensor<1x1x4x2xi32>
// CHECK: block_sparse(%[[N]], %[[I]] : {{.*}}) full_blocks(%[[FN]], %[[FI]] : {{.*}}) {sparse_block_size = array<i64: 16, 16>}
func.func @document_table(%q: tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32> {
  %ids = arith.constant dense<[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]> : tensor<64xi32>
  %o = flash.attention %q, %q, %q : tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x2x64x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%i] : tensor<64xi32>
    %dj = tensor.extract %ids[%j] : tensor<64xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x64x32xf32>
}
