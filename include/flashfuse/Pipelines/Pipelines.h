//===- Pipelines.h - the named flashfuse pipelines --------------*- C++ -*-===//
#ifndef FLASHFUSE_PIPELINES_PIPELINES_H
#define FLASHFUSE_PIPELINES_PIPELINES_H

namespace mlir::flash {
/// Registers every flashfuse pass and the named pipelines
/// (flash-cpu-pipeline, flash-gpu-pipeline).
void registerFlashPassesAndPipelines();
} // namespace mlir::flash

#endif
