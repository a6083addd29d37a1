//===- BackwardPreprocess.h - D = rowsum(dO ∘ O) ---------------*- C++ -*-===//
//
// The backward pass needs, per query row, D = sum_e dO[e] O[e] (which
// equals sum_j P_j dP_j, the softmax Jacobian's correction term). Every
// lowering computes it once, before visiting any key, as FlashAttention-2's
// preprocessing kernel does.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_CONVERSION_COMMON_BACKWARDPREPROCESS_H
#define FLASHFUSE_CONVERSION_COMMON_BACKWARDPREPROCESS_H

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"

#include "mlir/IR/Builders.h"

namespace mlir::flash {

/// D[b, h, i] = sum_e dO[b,h,i,e] O[b,h,i,e] in f32, [B, Hq, Sq] (static
/// shapes), for dO and O in the layout of Q.
Value buildGradOutputDotOutput(OpBuilder &b, Location loc, AttentionGradOp op);

} // namespace mlir::flash

#endif
