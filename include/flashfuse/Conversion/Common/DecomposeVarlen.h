//===- DecomposeVarlen.h - packed flash.attention as a masked one -*- C++ -*-===//
//
// The CPU lowerings serve the varlen form of flash.attention and its
// gradient (cu_seqlens_q /
// cu_seqlens_k over a packed batch) by rewriting it into the dense op over
// the packed tensors whose mask_mod region keeps, for query row i, only the
// keys of i's own sequence, with the causal and window rules applied to the
// indices local to that sequence. The GPU lowering refuses varlen and does
// not use this.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_CONVERSION_COMMON_DECOMPOSEVARLEN_H
#define FLASHFUSE_CONVERSION_COMMON_DECOMPOSEVARLEN_H

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::flash {

/// Replaces the varlen `op` (static shapes only) with the segment id of
/// every packed query row and a dense flash.attention whose mask_mod keeps
/// what FlashOps.td's varlen semantics make visible.
void decomposeVarlenAttention(RewriterBase &rewriter, AttentionOp op);

/// The same for the gradient: a dense flash.attention_grad with the same
/// mask_mod, whose dQ, dK, dV are the packed gradients.
void decomposeVarlenAttentionGrad(RewriterBase &rewriter, AttentionGradOp op);

/// Decomposes every varlen flash.attention and flash.attention_grad under
/// `root`. An op with a
/// dynamic shape is reported ("<lowering> needs static shapes: ...") and
/// left in place; fails when any op was.
LogicalResult decomposeVarlenOps(Operation *root, StringRef lowering);

} // namespace mlir::flash

#endif // FLASHFUSE_CONVERSION_COMMON_DECOMPOSEVARLEN_H
