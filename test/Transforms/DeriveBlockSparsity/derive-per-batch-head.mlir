// flash-derive-block-sparsity on masks that read the batch or head index:
// the lists get one row per batch (head) that the mask_mod reads, instead
// of the whole range leaving the blocks that differ between them partial,
// and come out shared again ([.., 1, ..]) where every batch (head) got the
// same blocks. Exact lists for S = 512 in 128 x 128 blocks, as a
// brute-force evaluation of each mask over every (b, h, i, j) gives them.
// RUN: flashfuse-opt %s --split-input-file --flash-derive-block-sparsity | FileCheck %s

// A causal window of 128 * (h + 1) keys: head 0 has only partial blocks
// (the diagonal and the window's edge), head 1's window covers a whole
// block below the diagonal.
// CHECK-LABEL: func.func @window_per_head
// CHECK-DAG: %[[N:.*]] = arith.constant dense<{{\[\[\[}}1, 2, 2, 2], [1, 1, 2, 2]]]> : tensor<1x2x4xi32>
// CHECK-DAG: %[[I:.*]] = arith.constant dense<{{\[\[\[\[}}0, 0], [0, 1], [1, 2], [2, 3]], {{\[\[}}0, 0], [1, 0], [0, 2], [1, 3]]]]> : tensor<1x2x4x2xi32>
// CHECK-DAG: %[[FN:.*]] = arith.constant dense<{{\[\[\[}}0, 0, 0, 0], [0, 1, 1, 1]]]> : tensor<1x2x4xi32>
// CHECK-DAG: %[[FI:.*]] = arith.constant dense<{{\[\[\[\[}}0], [0], [0], [0]], {{\[\[}}0], [0], [1], [2]]]]> : tensor<1x2x4x1xi32>
// CHECK: block_sparse(%[[N]], %[[I]] : tensor<1x2x4xi32>, tensor<1x2x4x2xi32>) full_blocks(%[[FN]], %[[FI]] : tensor<1x2x4xi32>, tensor<1x2x4x1xi32>)
func.func @window_per_head(%q: tensor<1x2x512x32xf32>) -> tensor<1x2x512x32xf32> {
  %o = flash.attention %q, %q, %q : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %h1 = arith.addi %h, %c1 : index
    %w = arith.muli %h1, %c128 : index
    %d = arith.subi %i, %j : index
    %causal = arith.cmpi sle, %j, %i : index
    %near = arith.cmpi slt, %d, %w : index
    %keep = arith.andi %causal, %near : i1
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x512x32xf32>
}

// -----

// A prefix-LM whose prefix is 128 * (b + 1) keys: per-batch lists
// [2, 1, QB], heads shared.
// CHECK-LABEL: func.func @prefix_per_batch
// CHECK-DAG: %[[N:.*]] = arith.constant dense<{{\[\[\[}}0, 1, 1, 1]], {{\[\[}}0, 0, 1, 1]]]> : tensor<2x1x4xi32>
// CHECK-DAG: %[[I:.*]] = arith.constant dense<{{\[\[\[\[}}0], [1], [2], [3]]], {{\[\[\[}}0], [0], [2], [3]]]]> : tensor<2x1x4x1xi32>
// CHECK-DAG: %[[FN:.*]] = arith.constant dense<{{\[\[\[}}1, 1, 2, 3]], {{\[\[}}2, 2, 2, 3]]]> : tensor<2x1x4xi32>
// CHECK-DAG: %[[FI:.*]] = arith.constant dense<{{\[\[\[\[}}0, 0, 0], [0, 0, 0], [0, 1, 0], [0, 1, 2]]], {{\[\[\[}}0, 1, 0], [0, 1, 0], [0, 1, 0], [0, 1, 2]]]]> : tensor<2x1x4x3xi32>
// CHECK: block_sparse(%[[N]], %[[I]] : tensor<2x1x4xi32>, tensor<2x1x4x1xi32>) full_blocks(%[[FN]], %[[FI]] : tensor<2x1x4xi32>, tensor<2x1x4x3xi32>)
func.func @prefix_per_batch(%q: tensor<2x1x512x32xf32>) -> tensor<2x1x512x32xf32> {
  %o = flash.attention %q, %q, %q : tensor<2x1x512x32xf32>, tensor<2x1x512x32xf32>, tensor<2x1x512x32xf32> -> tensor<2x1x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %b1 = arith.addi %b, %c1 : index
    %prefix = arith.muli %b1, %c128 : index
    %causal = arith.cmpi sle, %j, %i : index
    %inprefix = arith.cmpi slt, %j, %prefix : index
    %keep = arith.ori %causal, %inprefix : i1
    flash.yield %keep : i1
  }
  return %o : tensor<2x1x512x32xf32>
}

// -----

// The head is read, but every head gets the same blocks (h >= 0 always
// holds): the lists are shared over the heads, as for causal alone.
// CHECK-LABEL: func.func @head_read_where_it_cannot_matter
// CHECK: block_sparse({{.*}} : tensor<1x1x4xi32>, tensor<1x1x4x1xi32>) full_blocks({{.*}} : tensor<1x1x4xi32>, tensor<1x1x4x3xi32>)
func.func @head_read_where_it_cannot_matter(%q: tensor<1x4x512x32xf32>) -> tensor<1x4x512x32xf32> {
  %o = flash.attention %q, %q, %q : tensor<1x4x512x32xf32>, tensor<1x4x512x32xf32>, tensor<1x4x512x32xf32> -> tensor<1x4x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c0 = arith.constant 0 : index
    %causal = arith.cmpi sle, %j, %i : index
    %any = arith.cmpi sge, %h, %c0 : index
    %keep = arith.andi %causal, %any : i1
    flash.yield %keep : i1
  }
  return %o : tensor<1x4x512x32xf32>
}
