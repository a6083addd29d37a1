//===- NaiveSteps.h - whole-tensor steps of the naive lowering -*- C++ -*-===//
//
// The naive lowering materialises every intermediate as a full tensor.
// The steps the forward and backward ops both need are declared here.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTONAIVE_NAIVESTEPS_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTONAIVE_NAIVESTEPS_H

#include "flashfuse/Conversion/Common/ScorePipeline.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::flash {
struct VarlenIndices;
} // namespace mlir::flash

namespace mlir::flash::naive {

/// Sizes, maps and helpers common to one op's lowering.
struct NaiveContext {
  OpBuilder &b;
  Location loc;
  AttentionVariantInterface op;
  AttentionSizes sz;
  AttentionBand band;
  int64_t groupSize; // G = Hq / Hkv
  /// Where a packed op's dropout draws (DecomposeVarlen.h); null: at the
  /// op's own (b, h, i, j).
  const VarlenIndices *dropoutAt = nullptr;
  MLIRContext *ctx() { return b.getContext(); }
  AffineExpr dim(unsigned d) { return getAffineDimExpr(d, ctx()); }
  AffineMap map(unsigned numDims, ArrayRef<AffineExpr> exprs) {
    return AffineMap::get(numDims, 0, exprs, ctx());
  }
  /// Static sizes as OpFoldResults.
  SmallVector<OpFoldResult> sizes(ArrayRef<int64_t> s) {
    SmallVector<OpFoldResult> r;
    for (int64_t v : s)
      r.push_back(b.getIndexAttr(v));
    return r;
  }
};

NaiveContext makeContext(OpBuilder &b, AttentionVariantInterface op,
                         const VarlenIndices *dropoutAt = nullptr);

/// X[b, h, i, j] = sum_d Q[b,h,i,d] K[b,h/G,j,d] in f32 (unscaled).
Value buildRawDots(NaiveContext &c);

/// S[b, h, i, j]: the score pipeline applied to X (scale, softcap, bias,
/// score_mod, masks), -inf where masked.
Value buildScores(NaiveContext &c, Value rawDots);

/// Inside a generic body over (b, h, i, j, ...): the dropout factor
/// keep / (1 - p) at the loop position, or null without dropout.
Value buildDropoutFactorHere(NaiveContext &c, OpBuilder &b, Location loc);

/// Applies `fn` elementwise over 4-D [B, Hq, Sq, Sk] f32 tensors `inputs`
/// (identity maps), optionally reading the loop indices.
Value buildScoreElementwise(
    NaiveContext &c, ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn);

/// Converts an f32 tensor to element type `elt` elementwise (same shape),
/// multiplying by `factor` first when it is not 1.
Value buildCastTensor(NaiveContext &c, Value f32Tensor, Type elt,
                      float factor = 1.0f);

LogicalResult lowerAttention(AttentionOp op,
                             const VarlenIndices *dropoutAt = nullptr);
LogicalResult lowerAttentionGrad(AttentionGradOp op,
                                 const VarlenIndices *dropoutAt = nullptr);

} // namespace mlir::flash::naive

#endif // FLASHFUSE_LIB_CONVERSION_FLASHTONAIVE_NAIVESTEPS_H
