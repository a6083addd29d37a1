//===- DecomposeBlockSparse.h - block-sparse flash.attention on the CPU -*- C++ -*-===//
//
// The CPU lowerings serve the block-sparse form of flash.attention and its
// gradient (block_sparse(...) / full_blocks(...) lists, FlashOps.td) by
// rewriting it into the dense op whose mask_mod keeps what the lists and
// the op's own masks keep; flash-lower-to-loops then walks only the listed
// key blocks of each query block (forEachListedKeyBlock), so unlisted
// blocks cost nothing there.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_CONVERSION_COMMON_DECOMPOSEBLOCKSPARSE_H
#define FLASHFUSE_CONVERSION_COMMON_DECOMPOSEBLOCKSPARSE_H

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::flash {

/// Replaces the block-sparse `op` (static shapes only) with the class of
/// every (b, h, query block, key block) (0 unlisted, 1 partial, 2 full)
/// and a dense flash.attention without the lists whose mask_mod keeps key
/// j of query i iff its block is full, or partial and the original
/// mask_mod keeps it; the band attributes stay. Returns the dense op.
AttentionOp decomposeBlockSparseAttention(RewriterBase &rewriter,
                                          AttentionOp op);

/// The same for the gradient: the dense flash.attention_grad with the same
/// mask_mod.
AttentionGradOp decomposeBlockSparseAttentionGrad(RewriterBase &rewriter,
                                                  AttentionGradOp op);

/// Runs `body(kStart, kEnd, iterArgs)` for each key block that `lists`
/// lists for (batch, head, qBlock), the partial ones and then the full
/// ones, in list order, threading `init` through; keys [kStart, kEnd) are
/// the block's clamped to Sk = `seqK`. Counts are clamped into [0, N] and
/// an index outside [0, KB) runs `body` over an empty range, so that
/// nothing is read out of bounds (FlashOps.td's contract). Returns the
/// final values.
SmallVector<Value> forEachListedKeyBlock(
    OpBuilder &b, Location loc, const BlockSparseOperands &lists,
    int64_t seqK, Value batch, Value head, Value qBlock, ValueRange init,
    function_ref<SmallVector<Value>(Value kStart, Value kEnd, ValueRange)>
        body);

} // namespace mlir::flash

#endif // FLASHFUSE_CONVERSION_COMMON_DECOMPOSEBLOCKSPARSE_H
