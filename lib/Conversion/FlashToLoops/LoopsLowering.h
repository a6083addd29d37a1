//===- LoopsLowering.h - entry points of the loops lowering ----*- C++ -*-===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOLOOPS_LOOPSLOWERING_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOLOOPS_LOOPSLOWERING_H

#include "Tiles.h"

namespace mlir::flash::loops {

/// The context of one op, with the builder positioned at the op.
LoopContext makeLoopContext(OpBuilder &b, AttentionVariantInterface op,
                            int64_t blockM, int64_t blockN,
                            const VarlenIndices *dropoutAt = nullptr);

/// Replaces `op` by the tiled forward loop nest (ForwardLoops.cpp). With
/// `lists` (the block-sparse lists of the op `op` was decomposed from, with
/// blockM their BQ), the key loop of query tile qb walks only the key
/// blocks they list for it; `op`'s mask_mod then holds the lists' masks.
/// `dropoutAt`: where its dropout draws, if `op` was a packed op's.
LogicalResult lowerAttention(AttentionOp op, int64_t blockM, int64_t blockN,
                             const BlockSparseOperands &lists = {},
                             const VarlenIndices *dropoutAt = nullptr);
/// Replaces `op` by the FA2 backward loop nest (BackwardLoops.cpp).
LogicalResult lowerAttentionGrad(AttentionGradOp op, int64_t blockM,
                                 int64_t blockN,
                                 const VarlenIndices *dropoutAt = nullptr);

} // namespace mlir::flash::loops

#endif
