//===- ScorePipeline.cpp - scale, softcap, bias, score_mod, masks ---------===//
#include "flashfuse/Conversion/Common/ScorePipeline.h"

#include "flashfuse/Conversion/Common/SoftmaxMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::flash;

AttentionBand mlir::flash::getAttentionBand(AttentionVariantInterface op) {
  AttentionBand band;
  if (op.isBottomRightAligned()) {
    AttentionSizes sz = op.getSizes();
    band.offset = sz.seqK - sz.seqQ;
  }
  if (op.isCausal())
    band.right = 0;
  if (auto wr = op.getWindowRightSize())
    band.right = band.right ? std::min(*band.right, *wr) : *wr;
  band.left = op.getWindowLeftSize();
  return band;
}

Value mlir::flash::inlineModRegion(OpBuilder &b, Region &region,
                                   ValueRange args) {
  Block &block = region.front();
  IRMapping mapping;
  mapping.map(block.getArguments(), args);
  for (Operation &op : block.without_terminator())
    b.clone(op, mapping);
  return mapping.lookupOrDefault(block.getTerminator()->getOperand(0));
}

Value mlir::flash::buildUnmaskedScore(OpBuilder &b, Location loc,
                                      AttentionVariantInterface op, Value dot,
                                      Value biasElement,
                                      const ScoreIndex &idx) {
  Value s = arith::MulFOp::create(
      b, loc, dot, constF32(b, loc, float(op.getEffectiveScale())));
  if (auto cap = op.getSoftcapValue()) {
    Value c = constF32(b, loc, float(*cap));
    Value t = math::TanhOp::create(b, loc, arith::DivFOp::create(b, loc, s, c));
    s = arith::MulFOp::create(b, loc, c, t);
  }
  if (biasElement)
    s = arith::AddFOp::create(b, loc, s, castToF32(b, loc, biasElement));
  Region &scoreMod = op.getScoreModRegion();
  if (!scoreMod.empty())
    s = inlineModRegion(b, scoreMod, {s, idx.batch, idx.head, idx.query, idx.key});
  return s;
}

Value mlir::flash::buildKeepPredicate(OpBuilder &b, Location loc,
                                      AttentionVariantInterface op,
                                      const AttentionBand &band,
                                      Value maskElement, const ScoreIndex &idx) {
  Value keep = maskElement;
  auto conj = [&](Value c) {
    keep = keep ? arith::AndIOp::create(b, loc, keep, c).getResult() : c;
  };
  Region &maskMod = op.getMaskModRegion();
  if (!maskMod.empty())
    conj(inlineModRegion(b, maskMod, {idx.batch, idx.head, idx.query, idx.key}));
  // The band in index arithmetic: i + offset may be negative (bottom-right
  // alignment with Sq > Sk), so comparisons are signed.
  auto shiftedQuery = [&](int64_t delta) -> Value {
    if (delta == 0)
      return idx.query;
    return arith::AddIOp::create(b, loc, idx.query,
                                 arith::ConstantIndexOp::create(b, loc, delta));
  };
  if (band.right)
    conj(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, idx.key,
                               shiftedQuery(band.offset + *band.right)));
  if (band.left)
    conj(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, idx.key,
                               shiftedQuery(band.offset - *band.left)));
  return keep;
}

Value mlir::flash::buildMaskedScore(OpBuilder &b, Location loc,
                                    AttentionVariantInterface op,
                                    const AttentionBand &band, Value dot,
                                    Value biasElement, Value maskElement,
                                    const ScoreIndex &idx) {
  Value s = buildUnmaskedScore(b, loc, op, dot, biasElement, idx);
  Value keep = buildKeepPredicate(b, loc, op, band, maskElement, idx);
  if (!keep)
    return s;
  return arith::SelectOp::create(b, loc, keep, s, negInfF32(b, loc));
}

Value mlir::flash::buildSoftcapDerivative(OpBuilder &b, Location loc,
                                          AttentionVariantInterface op,
                                          Value dot) {
  Value c = constF32(b, loc, float(*op.getSoftcapValue()));
  Value scaled = arith::MulFOp::create(
      b, loc, dot, constF32(b, loc, float(op.getEffectiveScale())));
  Value t = math::TanhOp::create(b, loc, arith::DivFOp::create(b, loc, scaled, c));
  Value t2 = arith::MulFOp::create(b, loc, t, t);
  return arith::SubFOp::create(b, loc, constF32(b, loc, 1.0f), t2);
}

/// Whether `v` (inside `region`) is computed from the region's first block
/// argument, the score.
static bool dependsOnScore(Value v, Region &region) {
  Value score = region.front().getArgument(0);
  if (v == score)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || !region.isAncestor(def->getParentRegion()))
    return false; // another block argument or a value from above the op
  // An op with regions may read the score inside them without an operand.
  if (def->getNumRegions() != 0 &&
      llvm::any_of(score.getUsers(),
                   [&](Operation *user) { return def->isAncestor(user); }))
    return true;
  return llvm::any_of(def->getOperands(),
                      [&](Value operand) { return dependsOnScore(operand, region); });
}

/// Whether d v / d score = 1 inside `region`: v is the score, or score +
/// f, f + score, score - f or fma(f, g, score) with f, g independent of the
/// score, where "score" may itself be such a value (a user's score_mod
/// followed by ALiBi's bias, AlibiScoreMod.h).
static bool hasUnitDerivative(Value v, Region &region) {
  if (v == region.front().getArgument(0))
    return true;
  Operation *def = v.getDefiningOp();
  auto independent = [&](Value x) { return !dependsOnScore(x, region); };
  auto unit = [&](Value x) { return hasUnitDerivative(x, region); };
  if (auto add = dyn_cast_or_null<arith::AddFOp>(def))
    return (unit(add.getLhs()) && independent(add.getRhs())) ||
           (unit(add.getRhs()) && independent(add.getLhs()));
  if (auto sub = dyn_cast_or_null<arith::SubFOp>(def))
    return unit(sub.getLhs()) && independent(sub.getRhs());
  // fma(f, g, score): the additive form in one instruction (-slope *
  // |distance| + score).
  if (auto fma = dyn_cast_or_null<math::FmaOp>(def))
    return unit(fma.getC()) && independent(fma.getA()) &&
           independent(fma.getB());
  return false;
}

LogicalResult
mlir::flash::checkScoreModHasUnitDerivative(AttentionVariantInterface op) {
  Region &region = op.getScoreModRegion();
  if (region.empty() ||
      hasUnitDerivative(region.front().getTerminator()->getOperand(0), region))
    return success();
  return op->emitOpError()
         << "score_mod of this form has no gradient lowering: only a "
            "score_mod yielding score, score + f(b, h, q_idx, kv_idx), "
            "score - f(b, h, q_idx, kv_idx), fma(f, g, score) or a chain of "
            "these is differentiated (derivative 1)";
}
