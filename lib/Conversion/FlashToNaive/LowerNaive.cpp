//===- LowerNaive.cpp ------------------------------------------------------===//
#include "flashfuse/Conversion/Passes.h"

namespace mlir::flash {
#define GEN_PASS_DEF_FLASHLOWERNAIVE
#include "flashfuse/Conversion/Passes.h.inc"
} // namespace mlir::flash

using namespace mlir;

namespace {
struct FlashLowerNaive : flash::impl::FlashLowerNaiveBase<FlashLowerNaive> {
  using FlashLowerNaiveBase::FlashLowerNaiveBase;
  void runOnOperation() override {
    getOperation()->emitError("FlashLowerNaive: not implemented yet");
    signalPassFailure();
  }
};
} // namespace
