//===- flashfuse-opt.cpp - mlir-opt with the flash dialect and passes -----===//
#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"
#include "flashfuse/Dialect/TMTensor/IR/TMTensorDialect.h"
#include "flashfuse/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::flash::registerFlashPassesAndPipelines();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // Translations to LLVM IR, so that gpu-module-to-binary can serialise
  // gpu.modules to PTX.
  mlir::registerAllToLLVMIRTranslations(registry);
  // torch-mlir's tm_tensor ops (FlashFuse's definitions), so that whole
  // linalg-on-tensors exports parse.
  registry.insert<mlir::flash::FlashDialect,
                  mlir::flash::tm_tensor::TMTensorDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "FlashFuse optimizer driver\n", registry));
}
