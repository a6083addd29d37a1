//===- Layout.h - logical [B, H, S, D] indexing of flash operands -*- C++ -*-===//
//
// flash ops see Q, K, V (and O, dQ, dK, dV) as logical [B, H, S, D] tensors
// whose dimensions sit in the operand in the order given by q_perm / k_perm
// / v_perm, and bias / mask as [B, Hq, Sq, Sk] tensors whose size-1
// dimensions broadcast. Both lowerings index operands through these helpers
// so that layouts and broadcasting are handled in one place.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_CONVERSION_COMMON_LAYOUT_H
#define FLASHFUSE_CONVERSION_COMMON_LAYOUT_H

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::flash {

/// Reorders per-logical-dimension items ([B, H, S, D] order) into the
/// operand's dimension order: result[perm[l]] = logical[l].
template <typename T>
llvm::SmallVector<T, 4> toOperandOrder(llvm::ArrayRef<T> logical,
                                       llvm::ArrayRef<int64_t> perm) {
  llvm::SmallVector<T, 4> result(logical.begin(), logical.end());
  for (auto [l, operandDim] : llvm::enumerate(perm))
    result[operandDim] = logical[l];
  return result;
}

/// True when, in the operand, the sequence dimension comes before the head
/// dimension, i.e. a rank-reduced [S, D] slice is [S, D] and not [D, S].
inline bool seqBeforeHeadDim(llvm::ArrayRef<int64_t> perm) {
  return perm[2] < perm[3];
}

/// The affine map reading a [B, Hq, Sq, Sk]-broadcastable operand of type
/// `type` at logical position `logical` (four exprs): size-1 dimensions read
/// index 0.
AffineMap broadcastMap(ShapedType type, llvm::ArrayRef<AffineExpr> logical,
                       unsigned numDims);

/// The indices reading a broadcastable operand of type `type` at logical
/// position (b, h, i, j): size-1 dimensions read index 0.
llvm::SmallVector<Value, 4> broadcastIndices(OpBuilder &b, Location loc,
                                             ShapedType type,
                                             llvm::ArrayRef<Value> logical);

/// Whether dimension `dim` of a broadcastable operand is broadcast (size 1)
/// while the logical size is not.
inline bool isBroadcastDim(ShapedType type, unsigned dim) {
  return type.getDimSize(dim) == 1;
}

/// Both CPU lowerings index with compile-time sizes (the GQA group in affine
/// maps, the tail tiles, the band bounds): emits "<lowering> needs static
/// shapes: ..." naming the first dynamic operand or result, and fails.
LogicalResult requireStaticShapes(Operation *op, StringRef lowering);

} // namespace mlir::flash

#endif // FLASHFUSE_CONVERSION_COMMON_LAYOUT_H
