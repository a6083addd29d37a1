// Round-trip of the block-sparse form of flash.attention and its gradient:
// the custom form printed and parsed again, the generic form parsed back,
// and the operand segments of the generic form.
// RUN: flashfuse-opt %s | flashfuse-opt | FileCheck %s
// RUN: flashfuse-opt %s --mlir-print-op-generic | flashfuse-opt | FileCheck %s
// RUN: flashfuse-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// FlexAttention's BlockMask as it comes: per (batch, head) lists, partial
// and full, default 128 x 128 blocks, Sq and Sk not multiples of 128.
// CHECK-LABEL: func.func @partial_and_full
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x1000x128xbf16>, %[[N:.*]]: tensor<2x8x8xi32>, %[[I:.*]]: tensor<2x8x8x8xi32>, %[[FN:.*]]: tensor<2x8x8xi32>, %[[FI:.*]]: tensor<2x8x8x8xi32>)
// CHECK: flash.attention %[[Q]], %[[Q]], %[[Q]] block_sparse(%[[N]], %[[I]] : tensor<2x8x8xi32>, tensor<2x8x8x8xi32>) full_blocks(%[[FN]], %[[FI]] : tensor<2x8x8xi32>, tensor<2x8x8x8xi32>) : tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16> -> tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>
// GENERIC-LABEL: sym_name = "partial_and_full"
// GENERIC: "flash.attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0>}>
func.func @partial_and_full(%q: tensor<2x8x1000x128xbf16>,
                            %n: tensor<2x8x8xi32>, %i: tensor<2x8x8x8xi32>,
                            %fn: tensor<2x8x8xi32>, %fi: tensor<2x8x8x8xi32>)
    -> (tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>) {
  %o, %lse = flash.attention %q, %q, %q
      block_sparse(%n, %i : tensor<2x8x8xi32>, tensor<2x8x8x8xi32>)
      full_blocks(%fn, %fi : tensor<2x8x8xi32>, tensor<2x8x8x8xi32>)
      : tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>
      -> tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>
  return %o, %lse : tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>
}

// Partial lists only, broadcast over batch and heads, 64 x 32 blocks, GQA,
// causal and a mask_mod for the partial blocks, a score_mod for all.
// CHECK-LABEL: func.func @broadcast_blocks_mods
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} block_sparse(%{{.*}}, %{{.*}} : tensor<1x1x3xi32>, tensor<1x1x3x5xi32>) {causal = #flash.causal<top_left>, sparse_block_size = array<i64: 64, 32>} : tensor<2x8x130x64xf16>, tensor<2x2x130x64xf16>, tensor<2x2x130x64xf16> -> tensor<2x8x130x64xf16> score_mod {
// CHECK: mask_mod {
// GENERIC-LABEL: sym_name = "broadcast_blocks_mods"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0>, sparse_block_size = array<i64: 64, 32>
func.func @broadcast_blocks_mods(%q: tensor<2x8x130x64xf16>, %kv: tensor<2x2x130x64xf16>,
                                 %n: tensor<1x1x3xi32>, %i: tensor<1x1x3x5xi32>)
    -> tensor<2x8x130x64xf16> {
  %o = flash.attention %q, %kv, %kv
      block_sparse(%n, %i : tensor<1x1x3xi32>, tensor<1x1x3x5xi32>)
      {causal = #flash.causal<top_left>, sparse_block_size = array<i64: 64, 32>}
      : tensor<2x8x130x64xf16>, tensor<2x2x130x64xf16>, tensor<2x2x130x64xf16>
      -> tensor<2x8x130x64xf16>
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kj: index):
    flash.yield %s : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %qi: index, %kj: index):
    %c = arith.constant 16 : index
    %lo = arith.subi %qi, %c : index
    %keep = arith.cmpi sge, %kj, %lo : index
    flash.yield %keep : i1
  }
  return %o : tensor<2x8x130x64xf16>
}

// The gradient takes the forward's lists; dynamic sizes verify against
// what is static.
// CHECK-LABEL: func.func @grad_dynamic
// CHECK: flash.attention_grad %{{.*}} block_sparse(%{{.*}}, %{{.*}} : tensor<?x4x?xi32>, tensor<?x4x?x?xi32>) full_blocks(%{{.*}}, %{{.*}} : tensor<1x1x?xi32>, tensor<1x1x?x7xi32>) {scale = 1.250000e-01 : f32, sparse_block_size = array<i64: 128, 64>}
// GENERIC-LABEL: sym_name = "grad_dynamic"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0>
func.func @grad_dynamic(%t: tensor<?x4x?x64xf16>, %lse: tensor<?x4x?xf32>,
                        %n: tensor<?x4x?xi32>, %i: tensor<?x4x?x?xi32>,
                        %fn: tensor<1x1x?xi32>, %fi: tensor<1x1x?x7xi32>)
    -> tensor<?x4x?x64xf16> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<?x4x?xi32>, tensor<?x4x?x?xi32>)
      full_blocks(%fn, %fi : tensor<1x1x?xi32>, tensor<1x1x?x7xi32>)
      {scale = 0.125 : f32, sparse_block_size = array<i64: 128, 64>}
      : tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>,
        tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?xf32>
      -> tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>
  return %dq : tensor<?x4x?x64xf16>
}
