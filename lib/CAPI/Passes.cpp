//===- Passes.cpp - C API for the FlashFuse passes ------------------------===//
#include "flashfuse-c/Passes.h"

#include "flashfuse/Conversion/Passes.h"
#include "flashfuse/Dialect/Flash/Transforms/Passes.h"
#include "flashfuse/Pipelines/Pipelines.h"

#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::flash;

void flashfuseRegisterPasses(void) {
  // The registry refuses a second registration of a pipeline name, so a
  // host that calls this from several places registers once.
  static bool registered = [] {
    registerFlashPassesAndPipelines();
    return true;
  }();
  (void)registered;
}

MlirLogicalResult flashfuseAddKernelsToPtxPipeline(MlirOpPassManager pm) {
  if (!pm.ptr)
    return mlirLogicalResultFailure();
  return ::wrap(buildKernelsToPtxPipeline(*unwrap(pm)));
}

// The generated constructors name create<Pass>() and register<Pass>()
// unqualified: they live in mlir::flash, brought in above. Their C linkage
// comes from the declarations in flashfuse-c/Passes.h.
#include "flashfuse/Conversion/Passes.capi.cpp.inc"
#include "flashfuse/Dialect/Flash/Transforms/Passes.capi.cpp.inc"
