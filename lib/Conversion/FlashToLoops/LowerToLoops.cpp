//===- LowerToLoops.cpp - the flash-lower-to-loops pass --------------------===//
//
// Replaces every flash.attention with the tiled online-softmax loop nest of
// ForwardLoops.cpp and every flash.attention_grad with the FA2 backward
// loop nest of BackwardLoops.cpp. A block-sparse op is first rewritten into
// the dense op with its lists as a mask_mod (DecomposeBlockSparse.h); the
// forward then walks only the listed key blocks, one query tile per sparse
// query block, while the backward walks every block under that mask.
//
//===----------------------------------------------------------------------===//
#include "LoopsLowering.h"
#include "flashfuse/Conversion/Common/DecomposeBlockSparse.h"

#include "flashfuse/Conversion/Common/LowerEachOp.h"
#include "flashfuse/Conversion/Passes.h"

namespace mlir::flash {
#define GEN_PASS_DEF_FLASHLOWERTOLOOPS
#include "flashfuse/Conversion/Passes.h.inc"
} // namespace mlir::flash

using namespace mlir;
using namespace mlir::flash;

loops::LoopContext loops::makeLoopContext(OpBuilder &b,
                                          AttentionVariantInterface op,
                                          int64_t blockM, int64_t blockN,
                                          const VarlenIndices *dropoutAt) {
  AttentionSizes sz = op.getSizes();
  return {b,      op->getLoc(), op,       sz, getAttentionBand(op),
          sz.headsQ / sz.headsKV, blockM, blockN, dropoutAt};
}

namespace {
struct FlashLowerToLoops
    : flash::impl::FlashLowerToLoopsBase<FlashLowerToLoops> {
  using FlashLowerToLoopsBase::FlashLowerToLoopsBase;
  void runOnOperation() override {
    if (blockM <= 0 || blockN <= 0) {
      getOperation()->emitError()
          << "flash-lower-to-loops: block-m and block-n must be positive, got "
          << int64_t(blockM) << " and " << int64_t(blockN);
      return signalPassFailure();
    }
    if (failed(lowerEachFlashOp(
            getOperation(), "flash-lower-to-loops",
            [&](AttentionOp op, const VarlenIndices *dropoutAt) {
              auto iface = cast<AttentionVariantInterface>(op.getOperation());
              BlockSparseOperands lists = iface.getBlockSparse();
              if (!lists)
                return loops::lowerAttention(op, blockM, blockN, {},
                                             dropoutAt);
              IRRewriter rewriter(op);
              AttentionOp dense = decomposeBlockSparseAttention(rewriter, op);
              // One query tile per sparse query block, so that a tile's
              // key blocks are one row of the lists.
              return loops::lowerAttention(dense, lists.blockQ, blockN, lists);
            },
            [&](AttentionGradOp op, const VarlenIndices *dropoutAt) {
              if (cast<AttentionVariantInterface>(op.getOperation())
                      .getBlockSparse()) {
                IRRewriter rewriter(op);
                op = decomposeBlockSparseAttentionGrad(rewriter, op);
              }
              return loops::lowerAttentionGrad(op, blockM, blockN,
                                               dropoutAt);
            })))
      signalPassFailure();
  }
};
} // namespace
