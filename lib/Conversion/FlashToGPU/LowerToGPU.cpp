//===- LowerToGPU.cpp ------------------------------------------------------===//
#include "flashfuse/Conversion/Passes.h"

namespace mlir::flash {
#define GEN_PASS_DEF_FLASHLOWERTOGPU
#include "flashfuse/Conversion/Passes.h.inc"
} // namespace mlir::flash

using namespace mlir;

namespace {
struct FlashLowerToGPU : flash::impl::FlashLowerToGPUBase<FlashLowerToGPU> {
  using FlashLowerToGPUBase::FlashLowerToGPUBase;
  void runOnOperation() override {
    getOperation()->emitError("FlashLowerToGPU: not implemented yet");
    signalPassFailure();
  }
};
} // namespace
