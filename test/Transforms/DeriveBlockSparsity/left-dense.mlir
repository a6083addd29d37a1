// flash-derive-block-sparsity leaves an op dense where lists cannot be
// derived or would gain nothing; with explain=true a remark names why.
// Without explain, the same ops are left alone silently.
// RUN: flashfuse-opt %s --split-input-file --flash-derive-block-sparsity="explain=true" --verify-diagnostics | FileCheck %s
// RUN: flashfuse-opt %s --split-input-file --flash-derive-block-sparsity 2>&1 | FileCheck %s --check-prefix=QUIET
// QUIET-NOT: remark:

// A region with an op the evaluator does not model (a float compare on
// the converted indices): every block is partial.
// CHECK-LABEL: func.func @unmodelled
// CHECK-NOT: block_sparse(
func.func @unmodelled(%q: tensor<1x2x512x32xf32>) -> tensor<1x2x512x32xf32> {
  // expected-remark @below {{flash-derive-block-sparsity: left dense: no block is provably all kept or all masked by the mask_mod, every one would be partial (the evaluator does not model 'arith.uitofp')}}
  %o = flash.attention %q, %q, %q : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %fi = arith.uitofp %ii : i32 to f32
    %fj = arith.uitofp %jj : i32 to f32
    %keep = arith.cmpf ole, %fj, %fi : f32
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x512x32xf32>
}

// -----

// Dilated alone (even distances): the remainder is unknown on every
// block, and nothing else decides one.
// CHECK-LABEL: func.func @dilated
// CHECK-NOT: block_sparse(
func.func @dilated(%q: tensor<1x2x512x32xf32>) -> tensor<1x2x512x32xf32> {
  // expected-remark @below {{flash-derive-block-sparsity: left dense: no block is provably all kept or all masked by the mask_mod, every one would be partial}}
  %o = flash.attention %q, %q, %q : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %d = arith.subi %i, %j : index
    %r = arith.remsi %d, %c2 : index
    %keep = arith.cmpi eq, %r, %c0 : index
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x512x32xf32>
}

// -----

// Ids read from a runtime tensor but not compared for equality (ids[q]
// <= ids[kv] is no document mask): nothing to decide at compile time.
// CHECK-LABEL: func.func @runtime_ids_not_documents
// CHECK-NOT: block_sparse(
func.func @runtime_ids_not_documents(%q: tensor<1x2x512x32xf32>, %ids: tensor<512xi32>) -> tensor<1x2x512x32xf32> {
  // expected-remark @below {{(the evaluator does not model 'tensor.extract')}}
  %o = flash.attention %q, %q, %q : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%i] : tensor<512xi32>
    %dj = tensor.extract %ids[%j] : tensor<512xi32>
    %keep = arith.cmpi sle, %di, %dj : i32
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x512x32xf32>
}

// -----

// A document compare of the wrong indices (ids[q] == ids[q], always
// true, but interval evaluation forgets that both reads are one): not the
// document form, and nothing else decides a block.
// CHECK-LABEL: func.func @not_document_form
// CHECK-NOT: block_sparse(
func.func @not_document_form(%q: tensor<1x2x512x32xf32>, %ids: tensor<512xi32>) -> tensor<1x2x512x32xf32> {
  // expected-remark @below {{every one would be partial}}
  %o = flash.attention %q, %q, %q : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%i] : tensor<512xi32>
    %dj = tensor.extract %ids[%i] : tensor<512xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x512x32xf32>
}

// -----

// An i8 index computation that could wrap (q_idx up to 511 in i8): not
// bounded, so not decided, although as written without the cast it would
// be causal.
// CHECK-LABEL: func.func @may_wrap
// CHECK-NOT: block_sparse(
func.func @may_wrap(%q: tensor<1x2x512x32xf32>) -> tensor<1x2x512x32xf32> {
  // expected-remark @below {{every one would be partial}}
  %o = flash.attention %q, %q, %q : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %ii = arith.index_cast %i : index to i8
    %jj = arith.index_cast %j : index to i8
    %keep = arith.cmpi sle, %jj, %ii : i8
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x512x32xf32>
}

// -----

// Dynamic Sq: the blocks are not known at compile time.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: block_sparse(
func.func @dynamic(%q: tensor<1x2x?x32xf32>) -> tensor<1x2x?x32xf32> {
  // expected-remark @below {{flash-derive-block-sparsity: left dense: Sq and Sk must be static}}
  %o = flash.attention %q, %q, %q : tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32> -> tensor<1x2x?x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sle, %j, %i : index
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x?x32xf32>
}

// -----

// Lists already given (the user's BlockMask): kept as they are.
// CHECK-LABEL: func.func @has_lists
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} block_sparse(%arg1, %arg2 : tensor<1x1x4xi32>, tensor<1x1x4x4xi32>) :
func.func @has_lists(%q: tensor<1x2x512x32xf32>, %n: tensor<1x1x4xi32>, %idx: tensor<1x1x4x4xi32>) -> tensor<1x2x512x32xf32> {
  // expected-remark @below {{flash-derive-block-sparsity: left dense: it already has block_sparse lists}}
  %o = flash.attention %q, %q, %q block_sparse(%n, %idx : tensor<1x1x4xi32>, tensor<1x1x4x4xi32>) : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sle, %j, %i : index
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x512x32xf32>
}

// -----

// A boolean mask operand, which the verifier refuses with lists.
// CHECK-LABEL: func.func @mask_operand
// CHECK-NOT: block_sparse(
func.func @mask_operand(%q: tensor<1x2x512x32xf32>, %m: tensor<1x1x512x512xi1>) -> tensor<1x2x512x32xf32> {
  // expected-remark @below {{flash-derive-block-sparsity: left dense: it has a 'mask' operand, which block_sparse does not take}}
  %o = flash.attention %q, %q, %q mask(%m : tensor<1x1x512x512xi1>) : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sle, %j, %i : index
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x512x32xf32>
}

// -----

// No mask_mod: nothing to derive, and no remark (most ops are like this).
// The gradient's mask_mod gets its lists (derive.mlir has their values).
// CHECK-LABEL: func.func @no_mask_mod_and_grad
// CHECK: flash.attention %{{[a-z0-9]+}}, %{{[a-z0-9]+}}, %{{[a-z0-9]+}} {causal = #flash.causal<top_left>}
// CHECK: flash.attention_grad {{.*}} block_sparse(
func.func @no_mask_mod_and_grad(%q: tensor<1x2x512x32xf32>, %lse: tensor<1x2x512xf32>) -> (tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>) {
  %o = flash.attention %q, %q, %q {causal = #flash.causal<top_left>} : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x512x32xf32>
  %dq, %dk, %dv = flash.attention_grad %q, %q, %q, %q, %q, %lse : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512xf32> -> tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sle, %j, %i : index
    flash.yield %keep : i1
  }
  return %o, %dq : tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>
}
