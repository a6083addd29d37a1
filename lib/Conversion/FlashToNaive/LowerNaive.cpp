//===- LowerNaive.cpp - the flash-lower-naive pass -------------------------===//
//
// Replaces every flash.attention and flash.attention_grad with the
// whole-tensor linalg reference built in NaiveForward.cpp and
// NaiveBackward.cpp.
//
//===----------------------------------------------------------------------===//
#include "NaiveSteps.h"

#include "flashfuse/Conversion/Common/Layout.h"
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
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionGradOp>(op))
        ops.push_back(op);
    });
    bool failedAny = false;
    for (Operation *op : ops) {
      if (failed(requireStaticShapes(op, "flash-lower-naive"))) {
        failedAny = true;
        continue;
      }
      LogicalResult result =
          isa<AttentionOp>(op) ? naive::lowerAttention(cast<AttentionOp>(op))
                               : naive::lowerAttentionGrad(cast<AttentionGradOp>(op));
      failedAny |= failed(result);
    }
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
