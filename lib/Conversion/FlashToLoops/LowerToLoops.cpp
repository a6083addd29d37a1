//===- LowerToLoops.cpp - the flash-lower-to-loops pass --------------------===//
//
// Replaces every flash.attention with the tiled online-softmax loop nest of
// ForwardLoops.cpp and every flash.attention_grad with the FA2 backward
// loop nest of BackwardLoops.cpp.
//
//===----------------------------------------------------------------------===//
#include "LoopsLowering.h"

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
                                          int64_t blockM, int64_t blockN) {
  AttentionSizes sz = op.getSizes();
  return {b,  op->getLoc(),          op,     sz, getAttentionBand(op),
          sz.headsQ / sz.headsKV, blockM, blockN};
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
            [&](AttentionOp op) {
              return loops::lowerAttention(op, blockM, blockN);
            },
            [&](AttentionGradOp op) {
              return loops::lowerAttentionGrad(op, blockM, blockN);
            })))
      signalPassFailure();
  }
};
} // namespace
