//===- NaiveForward.cpp - flash.attention as whole-tensor linalg ----------===//
//
//   X = Q Kᵀ, S = score pipeline(X), M = rowmax S, E = exp(S - safe(M)),
//   L = rowsum E, P = E / L (0 for an empty row) · dropout factor,
//   O = P V, LSE = safe(M) + log L (+inf for an empty row).
// FP8 (FlashOps.td): X is descaled by q_descale · k_descale, P8 =
// e4m3(256 E) replaces P in the product, O = (P8 V) / L · v_descale / 256;
// a per-block v_descale weights P8 by its key's block instead.
//
//===----------------------------------------------------------------------===//
#include "NaiveSteps.h"

#include "flashfuse/Conversion/Common/Fp8Math.h"
#include "flashfuse/Conversion/Common/Layout.h"
#include "flashfuse/Conversion/Common/LinalgBuilders.h"
#include "flashfuse/Conversion/Common/SoftmaxMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::naive;

/// Reduces the last dimension of the 4-D score tensor `t` into a
/// [B, Hq, Sq] f32 tensor initialised with `init`, combining with `combine`.
static Value reduceRows(NaiveContext &c, Value t, float init,
                        function_ref<Value(OpBuilder &, Location, Value, Value)>
                            combine) {
  AffineMap in = c.map(4, {c.dim(0), c.dim(1), c.dim(2), c.dim(3)});
  AffineMap out = c.map(4, {c.dim(0), c.dim(1), c.dim(2)});
  Value acc = buildFilledF32(c.b, c.loc,
                             c.sizes({c.sz.batch, c.sz.headsQ, c.sz.seqQ}), init);
  return buildGeneric(c.b, c.loc, t, acc, {in, out}, parallelThenReduction(3, 1),
                      [&](OpBuilder &b, Location loc, ValueRange a) {
                        return combine(b, loc, a[0], a[1]);
                      });
}

/// Elementwise over 4-D scores with one [B, Hq, Sq] row statistic.
static Value withRowStat(NaiveContext &c, Value scores, Value rowStat,
                         function_ref<Value(OpBuilder &, Location, Value, Value)>
                             fn) {
  AffineMap id = c.map(4, {c.dim(0), c.dim(1), c.dim(2), c.dim(3)});
  AffineMap row = c.map(4, {c.dim(0), c.dim(1), c.dim(2)});
  Value init = buildEmpty(c.b, c.loc,
                          c.sizes({c.sz.batch, c.sz.headsQ, c.sz.seqQ, c.sz.seqK}),
                          c.b.getF32Type());
  return buildGeneric(c.b, c.loc, {scores, rowStat}, init, {id, row, id},
                      parallelThenReduction(4, 0),
                      [&](OpBuilder &b, Location loc, ValueRange a) {
                        return fn(b, loc, a[0], a[1]);
                      });
}

/// FP8: X[b, h, i, j] · q_descale[b, h(, i / BQ)] · k_descale[b, h/G(,
/// j / BK)], the raw dots of the dequantised Q and K (the e4m3 products
/// themselves are exact).
static Value descaleDots(NaiveContext &c, AttentionOp op, Value dots) {
  auto [bq, bk] = op.getDescaleBlocks();
  return buildScoreElementwise(
      c, dots, [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        auto idx = loopIndices(b, loc, 4);
        Value group = arith::ConstantIndexOp::create(b, loc, c.groupSize);
        Value kvHead = arith::DivUIOp::create(b, loc, idx[1], group);
        Value qd = readDescale(b, loc, op.getQDescale(), idx[0], idx[1],
                               idx[2], bq);
        Value kd = readDescale(b, loc, op.getKDescale(), idx[0], kvHead,
                               idx[3], bk);
        Value qkd = arith::MulFOp::create(b, loc, qd, kd);
        return arith::MulFOp::create(b, loc, a[0], qkd);
      });
}

/// FP8: P8 = e4m3(256 E) at (b, h, i, j), times v_descale[b, h/G, j / BK]
/// when V's descale is per block (its key's own factor).
static Value quantizeProbabilities(NaiveContext &c, AttentionOp op,
                                   Value exps) {
  Value vd = op.getVDescale();
  int64_t bk = op.getDescaleBlocks()[1];
  return buildScoreElementwise(
      c, exps, [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        Value p8 = quantizeProbability(b, loc, a[0]);
        if (!isBlockDescale(vd))
          return p8;
        auto idx = loopIndices(b, loc, 4);
        Value group = arith::ConstantIndexOp::create(b, loc, c.groupSize);
        Value kvHead = arith::DivUIOp::create(b, loc, idx[1], group);
        Value factor = readDescale(b, loc, vd, idx[0], kvHead, idx[3], bk);
        return arith::MulFOp::create(b, loc, p8, factor);
      });
}

/// FP8: O = acc / l · v_descale[b, h/G] / 256 in the output type, where acc
/// (in Q's layout) accumulated P8 · V (a per-block v_descale is already
/// in acc).
static Value finishFp8Output(NaiveContext &c, AttentionOp op, Value acc,
                             Value rowSum) {
  auto qPerm = c.op.getQueryPerm();
  auto accType = cast<RankedTensorType>(acc.getType());
  // Loops in the operand order of O; the logical (b, h, i) read the sum.
  AffineMap id = AffineMap::getMultiDimIdentityMap(4, c.ctx());
  AffineMap row = c.map(4, {c.dim(qPerm[0]), c.dim(qPerm[1]), c.dim(qPerm[2])});
  Type outElt = op.getOutput().getType().getElementType();
  Value init = buildEmpty(c.b, c.loc, c.sizes(accType.getShape()), outElt);
  return buildGeneric(
      c.b, c.loc, {acc, rowSum}, init, {id, row, id}, parallelThenReduction(4, 0),
      [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        auto idx = loopIndices(b, loc, 4);
        Value group = arith::ConstantIndexOp::create(b, loc, c.groupSize);
        Value kvHead = arith::DivUIOp::create(b, loc, idx[qPerm[1]], group);
        Value vd = isBlockDescale(op.getVDescale())
                       ? Value()
                       : readDescale(b, loc, op.getVDescale(), idx[qPerm[0]],
                                     kvHead);
        Value o = buildNormalizedOutput(b, loc, a[0], a[1]);
        Value factor = constF32(b, loc, 1.0f / kFp8ProbScale);
        if (vd)
          factor = arith::MulFOp::create(b, loc, vd, factor);
        Value scaled = arith::MulFOp::create(b, loc, o, factor);
        return castFromF32(b, loc, scaled, outElt);
      });
}

LogicalResult
mlir::flash::naive::lowerAttention(AttentionOp op,
                                   const VarlenIndices *dropoutAt) {
  OpBuilder b(op);
  NaiveContext c =
      makeContext(b, cast<AttentionVariantInterface>(*op), dropoutAt);
  bool fp8 = op.isFp8();
  Value dots = buildRawDots(c);
  if (fp8)
    dots = descaleDots(c, op, dots);
  Value scores = buildScores(c, dots);

  Value rowMax = reduceRows(c, scores, -INFINITY,
                            [](OpBuilder &b, Location loc, Value s, Value m) -> Value {
                              return arith::MaximumFOp::create(b, loc, s, m);
                            });
  Value exps = withRowStat(c, scores, rowMax,
                           [](OpBuilder &b, Location loc, Value s, Value m) -> Value {
                             Value safe = buildSafeRowMax(b, loc, m);
                             return math::ExpOp::create(
                                 b, loc, arith::SubFOp::create(b, loc, s, safe));
                           });
  Value rowSum = reduceRows(c, exps, 0.0f,
                            [](OpBuilder &b, Location loc, Value e, Value l) -> Value {
                              return arith::AddFOp::create(b, loc, e, l);
                            });
  // FP8 weights V by P8 = e4m3(256 exp(s - m)), unnormalised; the division
  // by 256 l comes after the product (finishFp8Output). FP8 has no dropout.
  Value probs =
      fp8 ? quantizeProbabilities(c, op, exps)
          : withRowStat(c, exps, rowSum,
                        [&](OpBuilder &b, Location loc, Value e,
                            Value l) -> Value {
                          Value p = buildNormalizedOutput(b, loc, e, l);
                          if (Value factor = buildDropoutFactorHere(c, b, loc))
                            p = arith::MulFOp::create(b, loc, p, factor);
                          return p;
                        });

  // O[b, h, i, e] = sum_j P[b,h,i,j] V[b,h/G,j,e], written in Q's layout.
  auto d = [&](unsigned n) { return c.dim(n); };
  auto qPerm = c.op.getQueryPerm();
  AffineMap pMap = c.map(5, {d(0), d(1), d(2), d(4)});
  AffineMap vMap = c.map(5, toOperandOrder<AffineExpr>(
                                {d(0), d(1).floorDiv(c.groupSize), d(4), d(3)},
                                c.op.getValuePerm()));
  AffineMap oMap =
      c.map(5, toOperandOrder<AffineExpr>({d(0), d(1), d(2), d(3)}, qPerm));
  Value oInit = buildFilledF32(
      b, c.loc,
      c.sizes(applyPerm({c.sz.batch, c.sz.headsQ, c.sz.seqQ, c.sz.dv}, qPerm)),
      0.0f);
  Value oAcc = buildGeneric(
      b, c.loc, {probs, op.getValue()}, oInit, {pMap, vMap, oMap},
      parallelThenReduction(4, 1),
      multiplyAccumulateF32);
  Value out =
      fp8 ? finishFp8Output(c, op, oAcc, rowSum)
          : buildCastTensor(c, oAcc, op.getOutput().getType().getElementType());

  SmallVector<Value> results = {out};
  if (op.getLse()) {
    AffineMap id3 = AffineMap::getMultiDimIdentityMap(3, c.ctx());
    Value init = buildEmpty(b, c.loc, c.sizes({c.sz.batch, c.sz.headsQ, c.sz.seqQ}),
                            b.getF32Type());
    results.push_back(buildGeneric(
        b, c.loc, {rowMax, rowSum}, init, {id3, id3, id3},
        parallelThenReduction(3, 0),
        [](OpBuilder &b, Location loc, ValueRange a) -> Value {
          return buildLogSumExp(b, loc, buildSafeRowMax(b, loc, a[0]), a[1]);
        }));
  }
  op->replaceAllUsesWith(results);
  op->erase();
  return success();
}
