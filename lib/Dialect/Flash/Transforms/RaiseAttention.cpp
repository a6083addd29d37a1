//===- RaiseAttention.cpp ------------------------------------------------------===//
#include "flashfuse/Dialect/Flash/Transforms/Passes.h"

namespace mlir::flash {
#define GEN_PASS_DEF_FLASHRAISEATTENTION
#include "flashfuse/Dialect/Flash/Transforms/Passes.h.inc"
} // namespace mlir::flash

using namespace mlir;

namespace {
struct FlashRaiseAttention : flash::impl::FlashRaiseAttentionBase<FlashRaiseAttention> {
  using FlashRaiseAttentionBase::FlashRaiseAttentionBase;
  void runOnOperation() override {
    getOperation()->emitError("FlashRaiseAttention: not implemented yet");
    signalPassFailure();
  }
};
} // namespace
