// flash-derive-block-sparsity on a document mask whose ids are known only at
// run time (ids[q_idx] == ids[kv_idx], and-ed with causal): IR before the
// op computes each block's id range, then the lists; the index-only part
// (causal) is decided at compile time into a class table (0 skipped, 1
// partial, 2 full) that the list loop reads.
// RUN: flashfuse-opt %s --split-input-file --flash-derive-block-sparsity | FileCheck %s

// CHECK-LABEL: func.func @documents_causal
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x512x32xf32>, %[[IDS:.*]]: tensor<512xi64>)
// Query blocks' id ranges: a loop over the ids' rows (one here), over 4
// blocks, a scan of each block's rows with min and max.
// CHECK: %[[QR:.*]]:2 = scf.for %{{.*}} = %c0{{.*}} to %c1{{.*}} step
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c4{{.*}} step
// CHECK: tensor.extract %[[IDS]]
// CHECK: scf.for
// CHECK: tensor.extract %[[IDS]]
// CHECK: arith.minsi %{{.*}} : i64
// CHECK: arith.maxsi %{{.*}} : i64
// Key blocks' id ranges.
// CHECK: %[[KR:.*]]:2 = scf.for
// The causal part, per block.
// CHECK: %[[CLS:.*]] = arith.constant dense<{{\[\[}}1, 0, 0, 0], [2, 1, 0, 0], [2, 2, 1, 0], [2, 2, 2, 1]]> : tensor<4x4xi8>
// CHECK: %[[L:.*]]:4 = scf.for
// CHECK: tensor.extract %[[QR]]#0
// CHECK: tensor.extract %[[QR]]#1
// CHECK: scf.for
// CHECK: tensor.extract %[[KR]]#0
// CHECK: tensor.extract %[[KR]]#1
// CHECK: tensor.extract %[[CLS]]
// Disjoint ranges skip; one id on both sides and a class-2 block is full.
// CHECK: arith.cmpi slt
// CHECK: arith.cmpi slt
// CHECK: arith.ori
// CHECK: tensor.insert %{{.*}} into %{{.*}} : tensor<1x1x4x4xi32>
// CHECK: tensor.insert %{{.*}} into %{{.*}} : tensor<1x1x4x4xi32>
// CHECK: tensor.insert %{{.*}} into %{{.*}} : tensor<1x1x4xi32>
// CHECK: flash.attention %[[Q]], %[[Q]], %[[Q]] block_sparse(%[[L]]#0, %[[L]]#1 : tensor<1x1x4xi32>, tensor<1x1x4x4xi32>) full_blocks(%[[L]]#2, %[[L]]#3 : tensor<1x1x4xi32>, tensor<1x1x4x4xi32>) {sparse_block_size = array<i64: 128, 128>}
// CHECK: mask_mod
func.func @documents_causal(%q: tensor<1x2x512x32xf32>, %ids: tensor<512xi64>) -> tensor<1x2x512x32xf32> {
  %o = flash.attention %q, %q, %q : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %causal = arith.cmpi sle, %j, %i : index
    %dj = tensor.extract %ids[%j] : tensor<512xi64>
    %di = tensor.extract %ids[%i] : tensor<512xi64>
    %same = arith.cmpi eq, %dj, %di : i64
    %keep = arith.andi %causal, %same : i1
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x512x32xf32>
}

// -----

// Separate query and key id tensors (Sq = 200 queries, the last of Sk = 300
// keys' documents), the document term alone: every block's class is 2.
// CHECK-LABEL: func.func @query_and_key_ids
// CHECK-SAME: %[[QIDS:[^:]*]]: tensor<200xi32>, %[[KIDS:[^:]*]]: tensor<300xi32>
// CHECK: scf.for
// CHECK: tensor.extract %[[QIDS]]
// CHECK: scf.for
// CHECK: tensor.extract %[[KIDS]]
// CHECK: arith.constant dense<2> : tensor<2x3xi8>
// CHECK: block_sparse(%{{.*}}#0, %{{.*}}#1 : tensor<1x1x2xi32>, tensor<1x1x2x3xi32>) full_blocks(%{{.*}}#2, %{{.*}}#3 : tensor<1x1x2xi32>, tensor<1x1x2x3xi32>)
func.func @query_and_key_ids(%q: tensor<1x2x200x32xf32>, %k: tensor<1x2x300x32xf32>, %qids: tensor<200xi32>, %kids: tensor<300xi32>) -> tensor<1x2x200x32xf32> {
  %o = flash.attention %q, %k, %k : tensor<1x2x200x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32> -> tensor<1x2x200x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %qids[%i] : tensor<200xi32>
    %dj = tensor.extract %kids[%j] : tensor<300xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x200x32xf32>
}

// -----

// Per-batch ids ([B, S], read at [b, q_idx] and [b, kv_idx], as raising a
// torch document mask gives): one row of lists per batch (B' = 2), the
// range loops over the batch rows too.
// CHECK-LABEL: func.func @per_batch_ids
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<2x256xi32>
// CHECK: scf.for %[[ROW:.*]] = %c0{{.*}} to %c2{{.*}}
// CHECK: tensor.extract %[[IDS]][%[[ROW]], %{{.*}}] : tensor<2x256xi32>
// CHECK: %[[L:.*]]:4 = scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}}
// CHECK: block_sparse(%[[L]]#0, %[[L]]#1 : tensor<2x1x2xi32>, tensor<2x1x2x2xi32>) full_blocks(%[[L]]#2, %[[L]]#3 : tensor<2x1x2xi32>, tensor<2x1x2x2xi32>)
func.func @per_batch_ids(%q: tensor<2x2x256x32xf32>, %ids: tensor<2x256xi32>) -> tensor<2x2x256x32xf32> {
  %o = flash.attention %q, %q, %q : tensor<2x2x256x32xf32>, tensor<2x2x256x32xf32>, tensor<2x2x256x32xf32> -> tensor<2x2x256x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%b, %i] : tensor<2x256xi32>
    %dj = tensor.extract %ids[%b, %j] : tensor<2x256xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    flash.yield %keep : i1
  }
  return %o : tensor<2x2x256x32xf32>
}

// -----

// Per-batch ids read at another batch's row (ids[0, q] == ids[b, kv]) are
// not the form: the op is left dense (lists from the ids' ranges would
// mix rows).
// CHECK-LABEL: func.func @mixed_rows
// CHECK-NOT: block_sparse(
func.func @mixed_rows(%q: tensor<2x2x256x32xf32>, %ids: tensor<2x256xi32>) -> tensor<2x2x256x32xf32> {
  %o = flash.attention %q, %q, %q : tensor<2x2x256x32xf32>, tensor<2x2x256x32xf32>, tensor<2x2x256x32xf32> -> tensor<2x2x256x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c0 = arith.constant 0 : index
    %di = tensor.extract %ids[%c0, %i] : tensor<2x256xi32>
    %dj = tensor.extract %ids[%b, %j] : tensor<2x256xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    flash.yield %keep : i1
  }
  return %o : tensor<2x2x256x32xf32>
}
