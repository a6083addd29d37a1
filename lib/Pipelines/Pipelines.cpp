//===- Pipelines.cpp - the named flashfuse pipelines ----------------------===//
//
// Each pipeline is defined once, here, and reached from every tool.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Pipelines/Pipelines.h"

#include "flashfuse/Conversion/Passes.h"
#include "flashfuse/Dialect/Flash/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

#include <string>

using namespace mlir;

/// Inlined regions' exact math ops as LLVM intrinsics first (no libdevice
/// needed for them), nvgpu → nvvm (ldmatrix, cp.async), then the
/// structured ops, then gpu → nvvm, which maps the workgroup address
/// space, and only then the
/// remaining vector ops (vector → llvm alone cannot type shared-memory
/// memrefs and reports it); TMA kernels' tensor maps become by-value
/// parameters, and the dynamic shared memory PTX's extern array, aligned
/// for swizzled tiles; the NVPTX backend serialises to PTX ("isa").
static constexpr llvm::StringLiteral kKernelsToPtx =
    "gpu.module(flash-exact-math-to-llvm,convert-nvgpu-to-nvvm,"
    "convert-scf-to-cf,convert-nvvm-to-llvm,expand-strided-metadata,"
    "lower-affine,convert-gpu-to-nvvm,convert-vector-to-llvm,canonicalize,"
    "cse,flash-grid-constant-params,"
    "flash-align-dynamic-shared-memory),"
    "reconcile-unrealized-casts,gpu-module-to-binary{format=isa}";

LogicalResult mlir::flash::buildKernelsToPtxPipeline(OpPassManager &pm) {
  return parsePassPipeline(kKernelsToPtx, pm);
}

std::string mlir::flash::cpuPipelineText(StringRef lowering, int64_t blockM,
                                         int64_t blockN) {
  std::string flash =
      lowering == "loops"
          ? "flash-lower-to-loops{block-m=" + std::to_string(blockM) +
                " block-n=" + std::to_string(blockN) + "}"
          : "flash-lower-naive";
  // LLVM has no FP8 type: FP8 attention's e4m3 conversions become integer
  // arithmetic before bufferization (a no-op without FP8).
  return "func.func(" + flash +
         ", flash-expand-fp8-casts), canonicalize, cse, "
         // The loops lowering yields freshly computed tiles (the rescaled
         // accumulator, the new row max) from its key loop.
         "one-shot-bufferize{bufferize-function-boundaries "
         "allow-return-allocs-from-loops}, "
         "buffer-deallocation-pipeline, func.func(convert-linalg-to-loops), "
         "scf-forall-to-for, convert-scf-to-cf, expand-strided-metadata, "
         "lower-affine, convert-math-to-llvm, convert-math-to-libm, "
         "finalize-memref-to-llvm, convert-arith-to-llvm, "
         "convert-index-to-llvm, convert-func-to-llvm, convert-cf-to-llvm, "
         "reconcile-unrealized-casts";
}

namespace {
struct CpuPipelineOptions : PassPipelineOptions<CpuPipelineOptions> {
  Option<std::string> lowering{*this, "lowering",
                               llvm::cl::desc("naive or loops"),
                               llvm::cl::init("loops")};
  Option<int64_t> blockM{*this, "block-m", llvm::cl::desc("Query rows per tile"),
                         llvm::cl::init(64)};
  Option<int64_t> blockN{*this, "block-n", llvm::cl::desc("Keys per tile"),
                         llvm::cl::init(64)};
};
} // namespace

void mlir::flash::registerFlashPassesAndPipelines() {
  registerFlashTransformsPasses();
  registerFlashConversionPasses();
  PassPipelineRegistration<CpuPipelineOptions>(
      "flash-cpu-pipeline",
      "Lower flash ops (naive or tiled loops), bufferize and lower to the LLVM "
      "dialect, ready for mlir-runner or the ExecutionEngine",
      [](OpPassManager &pm, const CpuPipelineOptions &o) {
        (void)parsePassPipeline(cpuPipelineText(o.lowering, o.blockM, o.blockN),
                                pm);
      });
  PassPipelineRegistration<>(
      "flash-kernels-to-ptx",
      "Lower the gpu.modules built by flash-lower-to-gpu to PTX (gpu.binary)",
      [](OpPassManager &pm) { (void)buildKernelsToPtxPipeline(pm); });
}
