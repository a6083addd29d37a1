//===- Passes.h - flash dialect transformations -----------------*- C++ -*-===//
#ifndef FLASHFUSE_DIALECT_FLASH_TRANSFORMS_PASSES_H
#define FLASHFUSE_DIALECT_FLASH_TRANSFORMS_PASSES_H

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Pass/Pass.h"

namespace mlir::flash {
#define GEN_PASS_DECL
#include "flashfuse/Dialect/Flash/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "flashfuse/Dialect/Flash/Transforms/Passes.h.inc"
} // namespace mlir::flash

#endif // FLASHFUSE_DIALECT_FLASH_TRANSFORMS_PASSES_H
