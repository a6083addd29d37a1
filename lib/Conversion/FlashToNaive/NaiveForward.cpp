//===- NaiveForward.cpp - flash.attention as whole-tensor linalg ----------===//
//
//   X = Q Kᵀ, S = score pipeline(X), M = rowmax S, E = exp(S - safe(M)),
//   L = rowsum E, P = E / L (0 for an empty row) · dropout factor,
//   O = P V, LSE = safe(M) + log L (+inf for an empty row).
//
//===----------------------------------------------------------------------===//
#include "NaiveSteps.h"

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

LogicalResult mlir::flash::naive::lowerAttention(AttentionOp op) {
  OpBuilder b(op);
  NaiveContext c = makeContext(b, cast<AttentionVariantInterface>(*op));
  Value scores = buildScores(c, buildRawDots(c));

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
  Value probs = withRowStat(
      c, exps, rowSum, [&](OpBuilder &b, Location loc, Value e, Value l) -> Value {
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
  Value out = buildCastTensor(c, oAcc, op.getOutput().getType().getElementType());

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
