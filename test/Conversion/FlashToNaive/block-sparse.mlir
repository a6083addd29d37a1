// The CPU lowerings rewrite a block-sparse flash.attention (and its
// gradient) into the block classes of the lists and the dense op whose
// mask_mod keeps key j of query i iff cls[b, h, i / BQ, j / BK] is 2 (full:
// the original mask_mod is not evaluated) or is 1 and the original
// mask_mod keeps it; the causal band stays an attribute of the dense op,
// so it holds in every block. The mask_mod is checked where the naive
// lowering inlines it into the score's linalg.generic.
// RUN: flashfuse-opt %s --split-input-file --flash-lower-naive | FileCheck %s

// CHECK-LABEL: func.func @fwd
// CHECK: linalg.fill ins(%c0_i8 : i8) outs(%{{.*}} : tensor<1x1x2x4xi8>)
// The mask: the class at (b and h broadcast: 0, 0, i / 64, j / 32).
// CHECK: linalg.generic
// CHECK: arith.divui %{{.*}}, %c64
// CHECK: arith.divui %{{.*}}, %c32
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<1x1x2x4xi8>
// CHECK: arith.cmpi eq, %{{.*}}, %c2_i8
// CHECK: arith.cmpi eq, %{{.*}}, %c1_i8
// The original mask_mod (keys j >= i - 16), for partial blocks only.
// CHECK: arith.cmpi sge
// CHECK: arith.andi
// CHECK: arith.ori
// CHECK-NOT: flash.
func.func @fwd(%q: tensor<2x4x100x16xf32>, %n: tensor<1x1x2xi32>, %i: tensor<1x1x2x4xi32>, %fn: tensor<1x1x2xi32>, %fi: tensor<1x1x2x4xi32>) -> tensor<2x4x100x16xf32> {
  %o = flash.attention %q, %q, %q
      block_sparse(%n, %i : tensor<1x1x2xi32>, tensor<1x1x2x4xi32>)
      full_blocks(%fn, %fi : tensor<1x1x2xi32>, tensor<1x1x2x4xi32>)
      {causal = #flash.causal<top_left>, sparse_block_size = array<i64: 64, 32>}
      : tensor<2x4x100x16xf32>, tensor<2x4x100x16xf32>, tensor<2x4x100x16xf32>
      -> tensor<2x4x100x16xf32>
      mask_mod {
  ^bb0(%b: index, %h: index, %qi: index, %kj: index):
    %c = arith.constant 16 : index
    %lo = arith.subi %qi, %c : index
    %keep = arith.cmpi sge, %kj, %lo : index
    flash.yield %keep : i1
  }
  return %o : tensor<2x4x100x16xf32>
}

// -----

// The gradient: the same classes (per batch and head here) and mask.
// CHECK-LABEL: func.func @grad
// CHECK: linalg.fill ins(%c0_i8 : i8) outs(%{{.*}} : tensor<2x4x2x4xi8>)
// CHECK: arith.cmpi eq, %{{.*}}, %c2_i8
// CHECK-NOT: flash.
func.func @grad(%t: tensor<2x4x100x16xf32>, %lse: tensor<2x4x100xf32>, %n: tensor<2x4x2xi32>, %i: tensor<2x4x2x4xi32>) -> tensor<2x4x100x16xf32> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<2x4x2xi32>, tensor<2x4x2x4xi32>)
      {sparse_block_size = array<i64: 64, 32>}
      : tensor<2x4x100x16xf32>, tensor<2x4x100x16xf32>, tensor<2x4x100x16xf32>,
        tensor<2x4x100x16xf32>, tensor<2x4x100x16xf32>, tensor<2x4x100xf32>
      -> tensor<2x4x100x16xf32>, tensor<2x4x100x16xf32>, tensor<2x4x100x16xf32>
  return %dq : tensor<2x4x100x16xf32>
}
