//===- DecomposeKVCachePass.cpp - the flash-decompose-kvcache pass --------===//
//
// The rewrite itself lives in lib/Conversion/Common/DecomposeKVCache.cpp,
// where both CPU lowerings call it; this pass runs it alone so that its
// output can be inspected and tested.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Conversion/Common/DecomposeKVCache.h"
#include "flashfuse/Conversion/Passes.h"

namespace mlir::flash {
#define GEN_PASS_DEF_FLASHDECOMPOSEKVCACHE
#include "flashfuse/Conversion/Passes.h.inc"
} // namespace mlir::flash

using namespace mlir;
using namespace mlir::flash;

namespace {
struct FlashDecomposeKVCache
    : flash::impl::FlashDecomposeKVCacheBase<FlashDecomposeKVCache> {
  using FlashDecomposeKVCacheBase::FlashDecomposeKVCacheBase;
  void runOnOperation() override {
    if (failed(decomposeKVCacheOps(getOperation(), getArgument())))
      signalPassFailure();
  }
};
} // namespace
