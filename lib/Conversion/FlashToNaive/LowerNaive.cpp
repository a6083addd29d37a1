//===- LowerNaive.cpp - the flash-lower-naive pass -------------------------===//
//
// Replaces every flash.attention and flash.attention_grad with the
// whole-tensor linalg reference built in NaiveForward.cpp and
// NaiveBackward.cpp.
//
//===----------------------------------------------------------------------===//
#include "NaiveSteps.h"

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
    if (failed(lowerEachFlashOp(getOperation(), "flash-lower-naive",
                                naive::lowerAttention,
                                naive::lowerAttentionGrad)))
      signalPassFailure();
  }
};
} // namespace
