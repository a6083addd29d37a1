// flash-derive-block-sparsity on masks whose blocks it can decide: the
// exact lists for S = 512 in 128 x 128 blocks (QB = KB = 4), as a
// brute-force evaluation of each mask over every (i, j) gives them. Lists
// are broadcast over batch and heads ([1, 1, QB] and [1, 1, QB, N], N the
// longest row, unused slots 0); full_blocks only where some block is full.
// RUN: flashfuse-opt %s --split-input-file --flash-derive-block-sparsity | FileCheck %s
// Other block sizes: 256 x 128 (QB = 2).
// RUN: flashfuse-opt %s --split-input-file --flash-derive-block-sparsity="block-q=256 block-k=128" | FileCheck %s --check-prefix=B256

// Causal as a mask_mod (kv_idx <= q_idx): the diagonal partial, below it
// full, above it skipped.
// CHECK-LABEL: func.func @causal
// CHECK-DAG: %[[N:.*]] = arith.constant dense<1> : tensor<1x1x4xi32>
// CHECK-DAG: %[[I:.*]] = arith.constant dense<{{\[\[\[\[}}0], [1], [2], [3]]]]> : tensor<1x1x4x1xi32>
// CHECK-DAG: %[[FN:.*]] = arith.constant dense<[{{\[\[}}0, 1, 2, 3]]]> : tensor<1x1x4xi32>
// CHECK-DAG: %[[FI:.*]] = arith.constant dense<{{\[\[\[\[}}0, 0, 0], [0, 0, 0], [0, 1, 0], [0, 1, 2]]]]> : tensor<1x1x4x3xi32>
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} block_sparse(%[[N]], %[[I]] : tensor<1x1x4xi32>, tensor<1x1x4x1xi32>) full_blocks(%[[FN]], %[[FI]] : tensor<1x1x4xi32>, tensor<1x1x4x3xi32>) {sparse_block_size = array<i64: 128, 128>}
// CHECK: mask_mod
// B256-LABEL: func.func @causal
// B256-DAG: arith.constant dense<2> : tensor<1x1x2xi32>
// B256-DAG: arith.constant dense<{{\[\[\[\[}}0, 1], [2, 3]]]]> : tensor<1x1x2x2xi32>
// B256-DAG: arith.constant dense<[{{\[\[}}0, 2]]]> : tensor<1x1x2xi32>
// B256-DAG: arith.constant dense<{{\[\[\[\[}}0, 0], [0, 1]]]]> : tensor<1x1x2x2xi32>
// B256: sparse_block_size = array<i64: 256, 128>
func.func @causal(%q: tensor<1x2x512x32xf32>) -> tensor<1x2x512x32xf32> {
  %o = flash.attention %q, %q, %q : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sle, %j, %i : index
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x512x32xf32>
}

// -----

// The gradient of the same causal mask_mod gets the same lists (its
// kernels walk their transposition, key block by key block).
// CHECK-LABEL: func.func @causal_grad
// CHECK-DAG: %[[N:.*]] = arith.constant dense<1> : tensor<1x1x4xi32>
// CHECK-DAG: %[[I:.*]] = arith.constant dense<{{\[\[\[\[}}0], [1], [2], [3]]]]> : tensor<1x1x4x1xi32>
// CHECK-DAG: %[[FN:.*]] = arith.constant dense<[{{\[\[}}0, 1, 2, 3]]]> : tensor<1x1x4xi32>
// CHECK-DAG: %[[FI:.*]] = arith.constant dense<{{\[\[\[\[}}0, 0, 0], [0, 0, 0], [0, 1, 0], [0, 1, 2]]]]> : tensor<1x1x4x3xi32>
// CHECK: flash.attention_grad {{.*}} block_sparse(%[[N]], %[[I]] : tensor<1x1x4xi32>, tensor<1x1x4x1xi32>) full_blocks(%[[FN]], %[[FI]] : tensor<1x1x4xi32>, tensor<1x1x4x3xi32>) {sparse_block_size = array<i64: 128, 128>}
// CHECK: mask_mod
// B256-LABEL: func.func @causal_grad
// B256: sparse_block_size = array<i64: 256, 128>
func.func @causal_grad(%q: tensor<1x2x512x32xf32>, %lse: tensor<1x2x512xf32>) -> tensor<1x2x512x32xf32> {
  %dq, %dk, %dv = flash.attention_grad %q, %q, %q, %q, %q, %lse : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512xf32> -> tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sle, %j, %i : index
    flash.yield %keep : i1
  }
  return %dq : tensor<1x2x512x32xf32>
}

// -----

// Sliding window (|q - k| < 128, through math.absi on i64) with 128
// global tokens (kv_idx < 128 or q_idx < 128): the first key block and the
// first query block are full, the window's inner diagonals full, its edges
// partial, blocks out of the window skipped.
// CHECK-LABEL: func.func @window_global
// CHECK-DAG: %[[N:.*]] = arith.constant dense<[{{\[\[}}0, 1, 2, 1]]]> : tensor<1x1x4xi32>
// CHECK-DAG: %[[I:.*]] = arith.constant dense<{{\[\[\[\[}}0, 0], [2, 0], [1, 3], [2, 0]]]]> : tensor<1x1x4x2xi32>
// CHECK-DAG: %[[FN:.*]] = arith.constant dense<[{{\[\[}}4, 2, 2, 2]]]> : tensor<1x1x4xi32>
// CHECK-DAG: %[[FI:.*]] = arith.constant dense<{{\[\[\[\[}}0, 1, 2, 3], [0, 1, 0, 0], [0, 2, 0, 0], [0, 3, 0, 0]]]]> : tensor<1x1x4x4xi32>
// CHECK: block_sparse(%[[N]], %[[I]] : {{.*}}) full_blocks(%[[FN]], %[[FI]] : {{.*}})
func.func @window_global(%q: tensor<1x2x512x32xf32>) -> tensor<1x2x512x32xf32> {
  %w = arith.constant 128 : i64
  %o = flash.attention %q, %q, %q : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %g = arith.constant 128 : index
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %d = arith.subi %ii, %jj : i64
    %a = math.absi %d : i64
    %near = arith.cmpi slt, %a, %w : i64
    %gk = arith.cmpi ult, %j, %g : index
    %gq = arith.cmpi ult, %i, %g : index
    %g2 = arith.ori %gk, %gq : i1
    %keep = arith.ori %near, %g2 : i1
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x512x32xf32>
}

// -----

// Prefix-LM: the first 200 keys are seen by every query, the rest
// causally. Key block 1 straddles the prefix: partial for query blocks 0
// and 1, full below.
// CHECK-LABEL: func.func @prefix_lm
// CHECK-DAG: %[[N:.*]] = arith.constant dense<1> : tensor<1x1x4xi32>
// CHECK-DAG: %[[I:.*]] = arith.constant dense<{{\[\[\[\[}}1], [1], [2], [3]]]]> : tensor<1x1x4x1xi32>
// CHECK-DAG: %[[FN:.*]] = arith.constant dense<[{{\[\[}}1, 1, 2, 3]]]> : tensor<1x1x4xi32>
// CHECK-DAG: %[[FI:.*]] = arith.constant dense<{{\[\[\[\[}}0, 0, 0], [0, 0, 0], [0, 1, 0], [0, 1, 2]]]]> : tensor<1x1x4x3xi32>
// CHECK: block_sparse(%[[N]], %[[I]] : {{.*}}) full_blocks(%[[FN]], %[[FI]] : {{.*}})
func.func @prefix_lm(%q: tensor<1x2x512x32xf32>) -> tensor<1x2x512x32xf32> {
  %o = flash.attention %q, %q, %q : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %p = arith.constant 200 : index
    %inprefix = arith.cmpi slt, %j, %p : index
    %causal = arith.cmpi sle, %j, %i : index
    %keep = arith.ori %inprefix, %causal : i1
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x512x32xf32>
}

// -----

// Dilated and causal (even distances only, below the diagonal): the
// remainder is unknown on every block, so no block is full, but the blocks
// above the diagonal are skipped (the `and` with a false side).
// CHECK-LABEL: func.func @dilated_causal
// CHECK-DAG: %[[N:.*]] = arith.constant dense<[{{\[\[}}1, 2, 3, 4]]]> : tensor<1x1x4xi32>
// CHECK-DAG: %[[I:.*]] = arith.constant dense<{{\[\[\[\[}}0, 0, 0, 0], [0, 1, 0, 0], [0, 1, 2, 0], [0, 1, 2, 3]]]]> : tensor<1x1x4x4xi32>
// CHECK: block_sparse(%[[N]], %[[I]] : {{.*}}) {sparse_block_size
// CHECK-NOT: full_blocks
func.func @dilated_causal(%q: tensor<1x2x512x32xf32>) -> tensor<1x2x512x32xf32> {
  %o = flash.attention %q, %q, %q : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %d = arith.subi %i, %j : index
    %r = arith.remsi %d, %c2 : index
    %even = arith.cmpi eq, %r, %c0 : index
    %causal = arith.cmpi sle, %j, %i : index
    %keep = arith.andi %even, %causal : i1
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x512x32xf32>
}

// -----

// Documents of 100 tokens from the indices (q_idx / 100 == kv_idx / 100):
// blocks that see two documents' ranges apart are skipped, none is inside
// one document on both sides, so none is full.
// CHECK-LABEL: func.func @fixed_documents
// CHECK-DAG: %[[N:.*]] = arith.constant dense<[{{\[\[}}2, 3, 3, 2]]]> : tensor<1x1x4xi32>
// CHECK-DAG: %[[I:.*]] = arith.constant dense<{{\[\[\[\[}}0, 1, 0], [0, 1, 2], [1, 2, 3], [2, 3, 0]]]]> : tensor<1x1x4x3xi32>
// CHECK: block_sparse(%[[N]], %[[I]] : {{.*}}) {sparse_block_size
func.func @fixed_documents(%q: tensor<1x2x512x32xf32>) -> tensor<1x2x512x32xf32> {
  %o = flash.attention %q, %q, %q : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c100 = arith.constant 100 : index
    %di = arith.divui %i, %c100 : index
    %dj = arith.divui %j, %c100 : index
    %keep = arith.cmpi eq, %di, %dj : index
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x512x32xf32>
}


// -----

// The op's causal band holds in every block: blocks the mask_mod keeps
// whole (keys from 256 on) but that lie above the diagonal are skipped,
// not listed as full. No block is partial (every row lists none).
// CHECK-LABEL: func.func @band_skips
// CHECK-DAG: %[[N:.*]] = arith.constant dense<0> : tensor<1x1x4xi32>
// CHECK-DAG: %[[I:.*]] = arith.constant dense<0> : tensor<1x1x4x1xi32>
// CHECK-DAG: %[[FN:.*]] = arith.constant dense<[{{\[\[}}0, 0, 1, 2]]]> : tensor<1x1x4xi32>
// CHECK-DAG: %[[FI:.*]] = arith.constant dense<{{\[\[\[\[}}0, 0], [0, 0], [2, 0], [2, 3]]]]> : tensor<1x1x4x2xi32>
// CHECK: block_sparse(%[[N]], %[[I]] : {{.*}}) full_blocks(%[[FN]], %[[FI]] : {{.*}}) {causal = #flash.causal<top_left>, sparse_block_size = array<i64: 128, 128>}
func.func @band_skips(%q: tensor<1x2x512x32xf32>) -> tensor<1x2x512x32xf32> {
  %o = flash.attention %q, %q, %q {causal = #flash.causal<top_left>} : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c256 = arith.constant 256 : index
    %keep = arith.cmpi sge, %j, %c256 : index
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x512x32xf32>
}

// -----

// An op that already has its config: the 128 x 128 blocks rounded up to
// its tiles' multiples (block_n = 96: 192-key blocks, KB = 3, the last one
// 128 keys), as flash-lower-to-gpu's key-block iterator needs.
// CHECK-LABEL: func.func @config_tiles
// CHECK-DAG: %[[N:.*]] = arith.constant dense<[{{\[\[}}1, 2, 1, 1]]]> : tensor<1x1x4xi32>
// CHECK-DAG: %[[I:.*]] = arith.constant dense<{{\[\[\[\[}}0, 0], [0, 1], [1, 0], [2, 0]]]]> : tensor<1x1x4x2xi32>
// CHECK-DAG: %[[FN:.*]] = arith.constant dense<[{{\[\[}}0, 0, 1, 2]]]> : tensor<1x1x4xi32>
// CHECK-DAG: %[[FI:.*]] = arith.constant dense<{{\[\[\[\[}}0, 0], [0, 0], [0, 0], [0, 1]]]]> : tensor<1x1x4x2xi32>
// CHECK: block_sparse(%[[N]], %[[I]] : {{.*}}) full_blocks(%[[FN]], %[[FI]] : {{.*}}) {config = #flash.config<sm80, block_m = 128, block_n = 96, warps = 4, stages = 2>, sparse_block_size = array<i64: 128, 192>}
func.func @config_tiles(%q: tensor<1x2x512x32xf16>) -> tensor<1x2x512x32xf16> {
  %o = flash.attention %q, %q, %q {config = #flash.config<sm80, block_m = 128, block_n = 96, warps = 4, stages = 2>} : tensor<1x2x512x32xf16>, tensor<1x2x512x32xf16>, tensor<1x2x512x32xf16> -> tensor<1x2x512x32xf16>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sle, %j, %i : index
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x512x32xf16>
}

// -----

// Terms that each decide only part of a block (kv_idx < 64 or kv_idx >= 64
// over a block of 128 keys: each term undecided, their `or` always true):
// the block is bisected and every part decided, so every block is full.
// CHECK-LABEL: func.func @split_terms
// CHECK-DAG: %[[N:.*]] = arith.constant dense<0> : tensor<1x1x4xi32>
// CHECK-DAG: %[[FN:.*]] = arith.constant dense<4> : tensor<1x1x4xi32>
// CHECK-DAG: %[[FI:.*]] = arith.constant dense<{{\[\[\[\[}}0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 2, 3]]]]> : tensor<1x1x4x4xi32>
// CHECK: block_sparse(%[[N]], %{{.*}} : {{.*}}) full_blocks(%[[FN]], %[[FI]] : {{.*}})
func.func @split_terms(%q: tensor<1x2x512x32xf32>) -> tensor<1x2x512x32xf32> {
  %o = flash.attention %q, %q, %q : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c64 = arith.constant 64 : index
    %lo = arith.cmpi slt, %j, %c64 : index
    %hi = arith.cmpi sge, %j, %c64 : index
    %keep = arith.ori %lo, %hi : i1
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x512x32xf32>
}
