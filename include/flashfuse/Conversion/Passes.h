//===- Passes.h - lowerings of the flash dialect ----------------*- C++ -*-===//
#ifndef FLASHFUSE_CONVERSION_PASSES_H
#define FLASHFUSE_CONVERSION_PASSES_H

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::flash {
#define GEN_PASS_DECL
#include "flashfuse/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "flashfuse/Conversion/Passes.h.inc"
} // namespace mlir::flash

#endif // FLASHFUSE_CONVERSION_PASSES_H
