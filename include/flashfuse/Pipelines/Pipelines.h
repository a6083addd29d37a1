//===- Pipelines.h - the named flashfuse pipelines --------------*- C++ -*-===//
#ifndef FLASHFUSE_PIPELINES_PIPELINES_H
#define FLASHFUSE_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace mlir::flash {
/// Registers every flashfuse pass and the named pipelines.
void registerFlashPassesAndPipelines();

/// Adds to `pm` (on a builtin.module) the lowering of the gpu.modules that
/// flash-lower-to-gpu built down to PTX, held in gpu.binary ops. Registered
/// as `flash-kernels-to-ptx`.
LogicalResult buildKernelsToPtxPipeline(OpPassManager &pm);
} // namespace mlir::flash

#endif
