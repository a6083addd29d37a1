//===- ScorePipeline.h - one attention score, as the contract says -*- C++ -*-===//
//
// The per-element part of flash.attention's semantics (FlashOps.td), built
// from arith/math ops at whatever insertion point the caller is at (the body
// of a linalg.generic in both CPU lowerings, a register fragment in a GPU
// kernel):
//
//   s = scale * dot                   (dot is the raw f32 Q.K product)
//   s = softcap * tanh(s / softcap)   if softcap
//   s = s + bias                      if bias
//   s = score_mod(s, b, h, i, j)      if the score_mod region is present
//   keep = mask && mask_mod(b,h,i,j) && causal / window band
//   s = keep ? s : -inf
//
// Indices are logical index values (b, h = query head, i in [0, Sq),
// j in [0, Sk)).
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_CONVERSION_COMMON_SCOREPIPELINE_H
#define FLASHFUSE_CONVERSION_COMMON_SCOREPIPELINE_H

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"

#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::flash {

/// The causal / sliding-window band: key j is visible from query i iff
/// i + offset - left <= j <= i + offset + right (a missing side is
/// unbounded). `right` is the tighter of causal (0) and window_right.
struct AttentionBand {
  int64_t offset = 0;
  std::optional<int64_t> left, right;
  bool empty() const { return !left && !right; }
};

/// The band of `op`; needs static Sq and Sk when bottom-right aligned.
AttentionBand getAttentionBand(AttentionVariantInterface op);

/// Logical (b, h, i, j) position of one score.
struct ScoreIndex {
  Value batch, head, query, key;
  SmallVector<Value, 4> asArray() const { return {batch, head, query, key}; }
};

/// Clones the single block of a score_mod / mask_mod region at the insertion
/// point with its arguments replaced by `args`; returns the yielded value.
Value inlineModRegion(OpBuilder &b, Region &region, ValueRange args);

/// s = scale * dot, softcap, + bias (element of any float type, or null),
/// score_mod: the score before masking, in f32.
Value buildUnmaskedScore(OpBuilder &b, Location loc,
                         AttentionVariantInterface op, Value dot,
                         Value biasElement, const ScoreIndex &idx);

/// The i1 "keep" predicate of the mask operand element (or null), mask_mod
/// and the band; null when nothing masks.
Value buildKeepPredicate(OpBuilder &b, Location loc,
                         AttentionVariantInterface op,
                         const AttentionBand &band, Value maskElement,
                         const ScoreIndex &idx);

/// The full pipeline: the unmasked score, then -inf where not kept.
Value buildMaskedScore(OpBuilder &b, Location loc, AttentionVariantInterface op,
                       const AttentionBand &band, Value dot, Value biasElement,
                       Value maskElement, const ScoreIndex &idx);

/// d(softcapped score)/d(scaled score) = 1 - tanh^2(scale * dot / softcap);
/// the caller multiplies dS by it (only meaningful when softcap is set).
Value buildSoftcapDerivative(OpBuilder &b, Location loc,
                             AttentionVariantInterface op, Value dot);

/// Succeeds when the score_mod region (if any) provably has derivative 1
/// with respect to the score: it yields the score itself, or score + f or
/// f + score or score - f where f does not depend on the score. Otherwise
/// emits "score_mod of this form has no gradient lowering" on `op`.
LogicalResult checkScoreModHasUnitDerivative(AttentionVariantInterface op);

} // namespace mlir::flash

#endif // FLASHFUSE_CONVERSION_COMMON_SCOREPIPELINE_H
