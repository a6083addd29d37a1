//===- Registration.h - what flashfuse-compile registers --------*- C++ -*-===//
#ifndef FLASHFUSE_TOOLS_FLASHFUSE_COMPILE_REGISTRATION_H
#define FLASHFUSE_TOOLS_FLASHFUSE_COMPILE_REGISTRATION_H

#include "mlir/IR/DialectRegistry.h"

namespace flashfuse {

/// The dialects an input model and the kernel pipeline use, with the
/// interfaces the NVVM lowering and serialisation look up on them.
void registerCompilerDialects(mlir::DialectRegistry &registry);

/// The upstream passes of flash-kernels-to-ptx (a textual pipeline) and the
/// flash passes.
void registerCompilerPasses();

} // namespace flashfuse

#endif // FLASHFUSE_TOOLS_FLASHFUSE_COMPILE_REGISTRATION_H
