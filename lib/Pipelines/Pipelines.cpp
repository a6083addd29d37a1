//===- Pipelines.cpp - the named flashfuse pipelines ----------------------===//
//
// Each pipeline is defined once, here, and reached from every tool.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Pipelines/Pipelines.h"

#include "flashfuse/Conversion/Passes.h"
#include "flashfuse/Dialect/Flash/Transforms/Passes.h"

void mlir::flash::registerFlashPassesAndPipelines() {
  registerFlashTransformsPasses();
  registerFlashConversionPasses();
}
