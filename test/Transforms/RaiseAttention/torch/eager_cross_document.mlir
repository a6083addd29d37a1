// Negative: a mask that looks like a document mask but keeps the keys of
// the other documents (ids[q] != ids[k]) and-ed with causal. Raised like
// the document mask (causal attribute, the compare in mask_mod), but it is
// no document compare: flash-derive-block-sparsity does not compute lists
// from the ids. Its compare of two runtime reads decides no block, and the
// causal band alone gains nothing over the kernels' own band skipping, so
// the op stays dense.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_cross_document.linalg.mlir \
// RUN:   | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp
// RUN: flashfuse-opt --flash-raise-attention --flash-derive-block-sparsity="block-q=8 block-k=8 explain=true" \
// RUN:   %flashfuse_src_root/test/models/cases/eager_cross_document.linalg.mlir 2>&1 | FileCheck %s --check-prefix=DERIVE

// CHECK: flash.attention %arg0, %arg1, %arg2 {causal = #flash.causal<top_left>, scale = 2.500000e-01 : f32}
// CHECK: arith.cmpi ne
// CHECK-NEXT: flash.yield
// DERIVE: remark: flash-derive-block-sparsity: left dense: no block is provably all kept or all masked by the mask_mod, every one would be partial (the evaluator does not model 'tensor.extract')
// DERIVE-NOT: block_sparse(
// DERIVE-NOT: scf.for
