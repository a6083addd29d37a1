//===- DecomposeVarlen.h - packed flash.attention as a masked one -*- C++ -*-===//
//
// The CPU lowerings serve the varlen form of flash.attention and its
// gradient (cu_seqlens_q /
// cu_seqlens_k over a packed batch) by rewriting it into the dense op over
// the packed tensors whose mask_mod region keeps, for query row i, only the
// keys of i's own sequence, with the causal and window rules applied to the
// indices local to that sequence. The GPU lowering builds varlen kernels
// of its own and does not use this.
//
// Dropout is the one part of the contract the dense op cannot state: its
// keep test draws at (sequence, h, i', j'), the dense op's at (0, h, i, j).
// The decomposition therefore gives the dense op the packed op's dropout
// and returns, beside it, the VarlenIndices that the lowering maps its
// keep tests' indices through.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_CONVERSION_COMMON_DECOMPOSEVARLEN_H
#define FLASHFUSE_CONVERSION_COMMON_DECOMPOSEVARLEN_H

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"

#include <array>

namespace mlir::flash {

/// Where the rows and keys of a packed batch lie: `seg` [total_q] of index
/// (the sequence owning each query row, B for rows no sequence owns) and
/// the offsets, which every read clamps into [0, total].
struct VarlenIndices {
  Value seg, cuQ, cuK;
  int64_t totalQ, totalK, batch;

  /// Query row i's sequence (`index`, 0 where `owned` is false) and its
  /// offsets.
  struct Sequence {
    Value owned, index, qLo, qHi, kLo, kHi;
  };
  Sequence locate(OpBuilder &b, Location loc, Value i) const;

  /// The contract's (b, h, i', j') of the dense op's packed (h, i, j):
  /// i's sequence and the indices local to it. Exact for every pair the
  /// mask keeps; j' is meaningless (but defined) across sequences.
  std::array<Value, 4> local(OpBuilder &b, Location loc, Value h, Value i,
                             Value j) const;

  /// cu[at] as an index clamped into [0, limit].
  static Value offset(OpBuilder &b, Location loc, Value cu, Value at,
                      int64_t limit);
};

/// The dropout factor (Philox.h's buildDropoutFactor) of `op`'s score at
/// (batch, h, i, j): drawn there, or, where `packed` is given (the dense op
/// a packed one became), at the sequence's indices (VarlenIndices::local).
Value buildDropoutFactorAt(OpBuilder &b, Location loc,
                           AttentionVariantInterface op,
                           const VarlenIndices *packed, Value batch, Value h,
                           Value i, Value j);

/// The dense ops that decomposed packed ops with dropout became, and the
/// indices their keep tests draw at.
using VarlenDropoutIndices = llvm::DenseMap<Operation *, VarlenIndices>;

/// Replaces the varlen `op` (static shapes only) with the segment id of
/// every packed query row and a dense flash.attention whose mask_mod keeps
/// what FlashOps.td's varlen semantics make visible. Returns the dense op
/// and the indices its dropout (if any) draws at.
std::pair<AttentionOp, VarlenIndices>
decomposeVarlenAttention(RewriterBase &rewriter, AttentionOp op);

/// The same for the gradient: a dense flash.attention_grad with the same
/// mask_mod, whose dQ, dK, dV are the packed gradients.
std::pair<AttentionGradOp, VarlenIndices>
decomposeVarlenAttentionGrad(RewriterBase &rewriter, AttentionGradOp op);

/// Decomposes every varlen flash.attention and flash.attention_grad under
/// `root`. An op with a dynamic shape is reported ("<lowering> needs static
/// shapes: ...") and left in place; fails when any op was. The dense ops
/// with dropout are added to `dropoutIndices`.
LogicalResult decomposeVarlenOps(Operation *root, StringRef lowering,
                                 VarlenDropoutIndices &dropoutIndices);

} // namespace mlir::flash

#endif // FLASHFUSE_CONVERSION_COMMON_DECOMPOSEVARLEN_H
