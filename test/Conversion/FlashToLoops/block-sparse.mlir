// flash-lower-to-loops on a block-sparse flash.attention
// (DecomposeBlockSparse.cpp): the block classes are built from the lists
// (partial = 1, then full = 2, each walk over a row's clamped count with
// out-of-range indices rewriting nothing), and the forward's query tile is
// one sparse query block (16 rows here, not the pass's block-m = 8) whose
// key loop runs over the listed blocks only: for each slot of the partial
// row, then of the full row, the block's keys [kb * 16, min(kb * 16 + 16,
// Sk)) in block-n = 8 tiles, an index outside [0, KB) starting at Sk
// (nothing). The lists broadcast the batch and heads (partial) or only the
// batch (full), so their first indices are 0 there. Dynamic shapes are
// refused with the operand named.
// RUN: flashfuse-opt %s --split-input-file --flash-lower-to-loops="block-m=8 block-n=8" -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @lists
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x40x16xf32>, %[[N:.*]]: tensor<1x1x3xi32>, %[[I:.*]]: tensor<1x1x3x3xi32>, %[[FN:.*]]: tensor<1x2x3xi32>, %[[FI:.*]]: tensor<1x2x3x3xi32>)
// Step 1: classes [1, 2, QB = 3, KB = 3].
// CHECK: linalg.fill ins(%c0_i8 : i8) outs(%{{.*}} : tensor<1x2x3x3xi8>)
// CHECK: tensor.extract %[[N]]
// CHECK: arith.maxsi
// CHECK: arith.minsi %{{.*}}, %c3{{.*}} : index
// CHECK: scf.for
// CHECK: tensor.extract %[[I]]
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi slt, %{{.*}}, %c3{{.*}} : index
// CHECK: arith.select %{{.*}}, %c1_i8
// CHECK: tensor.insert
// CHECK: tensor.extract %[[FN]]
// CHECK: tensor.extract %[[FI]]
// CHECK: arith.select %{{.*}}, %c2_i8
// One query tile per sparse query block: (B, Hq, QB) = (1, 2, 3).
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %[[QB:.*]]) in (1, 2, 3)
// CHECK: arith.muli %[[QB]], %c16
// The partial row's count (broadcast: indices 0, 0), its slots, each
// listed block's keys in 8-key tiles.
// CHECK: tensor.extract %[[N]][%{{.*}}, %{{.*}}, %[[QB]]] : tensor<1x1x3xi32>
// CHECK: %[[COUNT:.*]] = arith.minsi %{{.*}}, %c3{{.*}} : index
// CHECK: %[[PART:.*]]:3 = scf.for %[[SLOT:.*]] = %{{.*}} to %[[COUNT]]
// CHECK: tensor.extract %[[I]][%{{.*}}, %{{.*}}, %[[QB]], %[[SLOT]]] : tensor<1x1x3x3xi32>
// CHECK: %[[START:.*]] = arith.select %{{.*}}, %{{.*}}, %c40{{.*}} : index
// CHECK: %[[END:.*]] = arith.minsi %{{.*}}, %c40{{.*}} : index
// CHECK: scf.for %{{.*}} = %[[START]] to %[[END]] step %c8
// The full row's (per head), continuing from the partial walk's state.
// CHECK: tensor.extract %[[FN]][%{{.*}}, %[[H]], %[[QB]]] : tensor<1x2x3xi32>
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %[[PART]]#0, %{{.*}} = %[[PART]]#1, %{{.*}} = %[[PART]]#2)
// CHECK: tensor.extract %[[FI]][%{{.*}}, %[[H]], %[[QB]], %{{.*}}] : tensor<1x2x3x3xi32>
// CHECK: scf.for %{{.*}} step %c8
// CHECK-NOT: flash.
func.func @lists(%q: tensor<1x2x40x16xf32>, %n: tensor<1x1x3xi32>, %i: tensor<1x1x3x3xi32>, %fn: tensor<1x2x3xi32>, %fi: tensor<1x2x3x3xi32>) -> tensor<1x2x40x16xf32> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x1x3xi32>, tensor<1x1x3x3xi32>) full_blocks(%fn, %fi : tensor<1x2x3xi32>, tensor<1x2x3x3xi32>) {causal = #flash.causal<top_left>, sparse_block_size = array<i64: 16, 16>} : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %o : tensor<1x2x40x16xf32>
}

// -----

func.func @dynamic_lists(%q: tensor<1x2x40x16xf32>, %n: tensor<1x1x?xi32>, %i: tensor<1x1x?x3xi32>) -> tensor<1x2x40x16xf32> {
  // expected-error @+1 {{flash-lower-to-loops needs static shapes: operand #3 has type 'tensor<1x1x?xi32>'}}
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x1x?xi32>, tensor<1x1x?x3xi32>) : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %o : tensor<1x2x40x16xf32>
}
