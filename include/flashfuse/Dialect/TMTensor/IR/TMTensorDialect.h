//===- TMTensorDialect.h - torch-mlir's tm_tensor ops, read only -*- C++ -*-===//
//
// FlashFuse's definitions of the ops torch-mlir's linalg-on-tensors output
// may contain (TMTensorOps.td says why they exist).
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_DIALECT_TMTENSOR_IR_TMTENSORDIALECT_H
#define FLASHFUSE_DIALECT_TMTENSOR_IR_TMTENSORDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "flashfuse/Dialect/TMTensor/IR/TMTensorDialect.h.inc"

#define GET_OP_CLASSES
#include "flashfuse/Dialect/TMTensor/IR/TMTensorOps.h.inc"

#endif
