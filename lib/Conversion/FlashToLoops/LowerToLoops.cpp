//===- LowerToLoops.cpp ------------------------------------------------------===//
#include "flashfuse/Conversion/Passes.h"

namespace mlir::flash {
#define GEN_PASS_DEF_FLASHLOWERTOLOOPS
#include "flashfuse/Conversion/Passes.h.inc"
} // namespace mlir::flash

using namespace mlir;

namespace {
struct FlashLowerToLoops : flash::impl::FlashLowerToLoopsBase<FlashLowerToLoops> {
  using FlashLowerToLoopsBase::FlashLowerToLoopsBase;
  void runOnOperation() override {
    getOperation()->emitError("FlashLowerToLoops: not implemented yet");
    signalPassFailure();
  }
};
} // namespace
