//===- Pipelines.cpp - the named flashfuse pipelines ----------------------===//
//
// Each pipeline is defined once, here, and reached from every tool.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Pipelines/Pipelines.h"

#include "flashfuse/Conversion/Passes.h"
#include "flashfuse/Dialect/Flash/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

/// nvgpu → nvvm first (ldmatrix, cp.async), then the structured ops, then
/// gpu → nvvm, which maps the workgroup address space, and only then the
/// remaining vector ops (vector → llvm alone cannot type shared-memory
/// memrefs and reports it); the NVPTX backend serialises to PTX ("isa").
static constexpr llvm::StringLiteral kKernelsToPtx =
    "gpu.module(convert-nvgpu-to-nvvm,convert-scf-to-cf,convert-nvvm-to-llvm,"
    "expand-strided-metadata,lower-affine,convert-gpu-to-nvvm,"
    "convert-vector-to-llvm,canonicalize,cse),"
    "reconcile-unrealized-casts,gpu-module-to-binary{format=isa}";

LogicalResult mlir::flash::buildKernelsToPtxPipeline(OpPassManager &pm) {
  return parsePassPipeline(kKernelsToPtx, pm);
}

void mlir::flash::registerFlashPassesAndPipelines() {
  registerFlashTransformsPasses();
  registerFlashConversionPasses();
  PassPipelineRegistration<>(
      "flash-kernels-to-ptx",
      "Lower the gpu.modules built by flash-lower-to-gpu to PTX (gpu.binary)",
      [](OpPassManager &pm) { (void)buildKernelsToPtxPipeline(pm); });
}
