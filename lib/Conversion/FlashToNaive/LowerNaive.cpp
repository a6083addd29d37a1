//===- LowerNaive.cpp - the flash-lower-naive pass -------------------------===//
//
// Replaces every flash.attention and flash.attention_grad with the
// whole-tensor linalg reference built in NaiveForward.cpp and
// NaiveBackward.cpp.
//
//===----------------------------------------------------------------------===//
#include "NaiveSteps.h"
#include "flashfuse/Conversion/Common/DecomposeBlockSparse.h"

#include "flashfuse/Conversion/Common/LowerEachOp.h"
#include "flashfuse/Conversion/Passes.h"

namespace mlir::flash {
#define GEN_PASS_DEF_FLASHLOWERNAIVE
#include "flashfuse/Conversion/Passes.h.inc"
} // namespace mlir::flash

using namespace mlir;
using namespace mlir::flash;

namespace {
struct FlashLowerNaive : flash::impl::FlashLowerNaiveBase<FlashLowerNaive> {
  using FlashLowerNaiveBase::FlashLowerNaiveBase;
  void runOnOperation() override {
    // A block-sparse op is the dense op with its lists as a mask_mod
    // (DecomposeBlockSparse.h): the reference materialises every score.
    if (failed(lowerEachFlashOp(
            getOperation(), "flash-lower-naive",
            [](AttentionOp op, const VarlenIndices *dropoutAt) {
              if (cast<AttentionVariantInterface>(op.getOperation())
                      .getBlockSparse()) {
                IRRewriter rewriter(op);
                op = decomposeBlockSparseAttention(rewriter, op);
              }
              return naive::lowerAttention(op, dropoutAt);
            },
            [](AttentionGradOp op, const VarlenIndices *dropoutAt) {
              if (cast<AttentionVariantInterface>(op.getOperation())
                      .getBlockSparse()) {
                IRRewriter rewriter(op);
                op = decomposeBlockSparseAttentionGrad(rewriter, op);
              }
              return naive::lowerAttentionGrad(op, dropoutAt);
            })))
      signalPassFailure();
  }
};
} // namespace
