// A document mask from a [B, S] sequence-id tensor (packed documents),
// and-ed with causal, as masked_fill(~(same_doc & causal), -inf): the
// causal part becomes the attribute, the id compare the mask_mod (read at
// [b, q_idx] and [b, kv_idx], no [B, S, S] mask materialised).
// flash-derive-block-sparsity then computes per-batch block lists from
// the ids at run time.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_document_causal.linalg.mlir \
// RUN:   | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp --implicit-check-not=linalg.generic
// RUN: flashfuse-opt --flash-raise-attention --flash-derive-block-sparsity="block-q=8 block-k=8" \
// RUN:   %flashfuse_src_root/test/models/cases/eager_document_causal.linalg.mlir | FileCheck %s --check-prefix=LISTS

// CHECK-NOT: flash.attention
// CHECK-LABEL: func.func @eager_document_causal
// CHECK-SAME: %[[IDS:arg3]]: tensor<2x16xi64>
// CHECK: flash.attention %arg0, %arg1, %arg2 {causal = #flash.causal<top_left>, scale = 2.500000e-01 : f32} : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32> -> tensor<2x4x16x16xf32> mask_mod {
// CHECK-NEXT: ^bb0(%[[B:.*]]: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT: %[[DI:.*]] = tensor.extract %[[IDS]][%[[B]], %[[I]]] : tensor<2x16xi64>
// CHECK-NEXT: %[[DJ:.*]] = tensor.extract %[[IDS]][%[[B]], %[[J]]] : tensor<2x16xi64>
// CHECK-NEXT: %[[SAME:.*]] = arith.cmpi eq, %[[DI]], %[[DJ]] : i64
// CHECK-NEXT: flash.yield %[[SAME]] : i1
// CHECK-NOT: flash.attention

// The lists: the id ranges over the 2 batch rows, then per batch the
// lists of 2 x 2 blocks of 8. Nothing else is in the mask_mod, so at
// compile time a block is full (class 2) unless the causal band masks it
// all (class 0, above the diagonal; the band still holds inside the full
// diagonal blocks); at run time the ids make each class-2 block full,
// partial or skipped.
// LISTS: arith.constant dense<{{\[\[}}2, 0], [2, 2]]> : tensor<2x2xi8>
// LISTS: flash.attention %arg0, %arg1, %arg2 block_sparse(%{{.*}}#0, %{{.*}}#1 : tensor<2x1x2xi32>, tensor<2x1x2x2xi32>) full_blocks(%{{.*}}#2, %{{.*}}#3 : tensor<2x1x2xi32>, tensor<2x1x2x2xi32>) {causal = #flash.causal<top_left>, scale = 2.500000e-01 : f32, sparse_block_size = array<i64: 8, 8>}
