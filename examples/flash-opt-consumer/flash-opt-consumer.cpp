//===- flash-opt-consumer.cpp - an opt tool built on installed FlashFuse --===//
//
// Only the dialects its inputs are written in: each pass loads the dialects
// it produces (dependentDialects), so a lowering's output prints without
// registering everything, and this file compiles in seconds.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"
#include "flashfuse/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  // Every flash pass, plus flash-cpu-pipeline and flash-kernels-to-ptx.
  mlir::flash::registerFlashPassesAndPipelines();
  mlir::DialectRegistry registry;
  registry.insert<mlir::flash::FlashDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "flash-opt-consumer: FlashFuse from an installed package\n",
      registry));
}
