//===- SelectConfig.cpp ------------------------------------------------------===//
#include "flashfuse/Dialect/Flash/Transforms/Passes.h"

namespace mlir::flash {
#define GEN_PASS_DEF_FLASHSELECTCONFIG
#include "flashfuse/Dialect/Flash/Transforms/Passes.h.inc"
} // namespace mlir::flash

using namespace mlir;

namespace {
struct FlashSelectConfig : flash::impl::FlashSelectConfigBase<FlashSelectConfig> {
  using FlashSelectConfigBase::FlashSelectConfigBase;
  void runOnOperation() override {
    getOperation()->emitError("FlashSelectConfig: not implemented yet");
    signalPassFailure();
  }
};
} // namespace
