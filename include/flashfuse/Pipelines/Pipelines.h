//===- Pipelines.h - the named flashfuse pipelines --------------*- C++ -*-===//
#ifndef FLASHFUSE_PIPELINES_PIPELINES_H
#define FLASHFUSE_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir::flash {
/// Registers every flashfuse pass and the named pipelines.
void registerFlashPassesAndPipelines();

/// Adds to `pm` (on a builtin.module) the lowering of the gpu.modules that
/// flash-lower-to-gpu built down to PTX, held in gpu.binary ops. Registered
/// as `flash-kernels-to-ptx`.
LogicalResult buildKernelsToPtxPipeline(OpPassManager &pm);

/// The CPU flow as pipeline text (anchored on builtin.module): the naive or
/// the tiled-loops lowering, bufferization, and everything down to the LLVM
/// dialect. Registered as `flash-cpu-pipeline{lowering=... block-m=...
/// block-n=...}`; the numerics harness JITs what it produces.
std::string cpuPipelineText(llvm::StringRef lowering, int64_t blockM,
                            int64_t blockN);
} // namespace mlir::flash

#endif
