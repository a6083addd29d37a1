//===- NaiveBackward.cpp - flash.attention_grad as whole-tensor linalg ----===//
//
//   X = Q Kᵀ, S = score pipeline(X), P = exp(S - LSE) (0 for an empty row),
//   Z = dropout factor, dV = (P∘Z)ᵀ dO, dP = (dO Vᵀ)∘Z, D = rowsum(dO∘O),
//   dS = P∘(dP - D), dBias = dS summed over the bias' broadcast dims,
//   dX = dS∘softcap'(X), dQ = scale · dX K, dK = scale · dXᵀ Q.
// The GQA sums of dK and dV run over the G query heads of a kv head as
// reduction loops, without copying K or V.
//
//===----------------------------------------------------------------------===//
#include "NaiveSteps.h"

#include "flashfuse/Conversion/Common/BackwardPreprocess.h"
#include "flashfuse/Conversion/Common/Layout.h"
#include "flashfuse/Conversion/Common/LinalgBuilders.h"
#include "flashfuse/Conversion/Common/SoftmaxMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::naive;

/// `t` with its head dimension `headDim` (of size Hq) split into
/// [Hkv, G]: query head h = hk * G + g. A reshape, not a copy, so the GQA
/// sums below are plain reduction loops with invertible maps.
static Value splitHeads(NaiveContext &c, Value t, unsigned headDim) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> groups;
  for (unsigned d = 0; d < type.getRank(); ++d) {
    ReassociationIndices group = {int64_t(shape.size())};
    if (d == headDim) {
      shape.append({c.sz.headsKV, c.groupSize});
      group.push_back(int64_t(shape.size()) - 1);
    } else {
      shape.push_back(type.getDimSize(d));
    }
    groups.push_back(group);
  }
  return tensor::ExpandShapeOp::create(
      c.b, c.loc, RankedTensorType::get(shape, type.getElementType()), t, groups);
}

/// The operand-order exprs of a head-split operand of layout `perm` at
/// logical (b, [hk, g], s, e).
static SmallVector<AffineExpr> splitHeadExprs(ArrayRef<int64_t> perm, AffineExpr b,
                                              AffineExpr hk, AffineExpr g,
                                              AffineExpr s, AffineExpr e) {
  SmallVector<AffineExpr> logical = {b, hk, s, e}, exprs;
  for (unsigned operandDim = 0; operandDim < 4; ++operandDim) {
    unsigned l = llvm::find(perm, int64_t(operandDim)) - perm.begin();
    exprs.push_back(logical[l]);
    if (l == 1)
      exprs.push_back(g);
  }
  return exprs;
}

/// result[b, hk, j, e] = sum_{g, i} A[b, hk*G+g, i, j] * Y[b, hk*G+g, i, e]
/// for A a 4-D score tensor and Y an operand of Q's layout; the result is
/// f32 in the layout `outPerm` with logical shape [B, Hkv, Sk, E].
static Value reduceOverQueries(NaiveContext &c, Value scoresLike, Value y,
                               int64_t e, ArrayRef<int64_t> outPerm) {
  // Loops (b, hk, j, e, g, i); g and i are reductions.
  auto d = [&](unsigned n) { return c.dim(n); };
  auto qPerm = c.op.getQueryPerm();
  Value a = splitHeads(c, scoresLike, 1);
  Value ySplit = splitHeads(c, y, qPerm[1]);
  AffineMap aMap = c.map(6, {d(0), d(1), d(4), d(5), d(2)});
  AffineMap yMap = c.map(6, splitHeadExprs(qPerm, d(0), d(1), d(4), d(5), d(3)));
  AffineMap outMap =
      c.map(6, toOperandOrder<AffineExpr>({d(0), d(1), d(2), d(3)}, outPerm));
  Value init = buildFilledF32(
      c.b, c.loc,
      c.sizes(applyPerm({c.sz.batch, c.sz.headsKV, c.sz.seqK, e}, outPerm)), 0.0f);
  return buildGeneric(c.b, c.loc, {a, ySplit}, init, {aMap, yMap, outMap},
                      parallelThenReduction(4, 2), multiplyAccumulateF32);
}

/// dBias: dS summed over the dimensions the bias broadcasts, then cast to
/// the bias element type and shaped like the bias.
static Value reduceBiasGrad(NaiveContext &c, Value dS, Value bias) {
  auto biasType = cast<RankedTensorType>(bias.getType());
  SmallVector<AffineExpr> kept;
  SmallVector<int64_t> keptSizes;
  SmallVector<utils::IteratorType> its;
  for (unsigned d = 0; d < 4; ++d) {
    bool broadcast = isBroadcastDim(biasType, d);
    its.push_back(broadcast ? utils::IteratorType::reduction
                            : utils::IteratorType::parallel);
    if (!broadcast) {
      kept.push_back(c.dim(d));
      keptSizes.push_back(biasType.getDimSize(d));
    }
  }
  AffineMap in = c.map(4, {c.dim(0), c.dim(1), c.dim(2), c.dim(3)});
  Value init = buildFilledF32(c.b, c.loc, c.sizes(keptSizes), 0.0f);
  Value sum = buildGeneric(c.b, c.loc, dS, init, {in, c.map(4, kept)}, its,
                           [](OpBuilder &b, Location loc, ValueRange a) -> Value {
                             return arith::AddFOp::create(b, loc, a[0], a[1]);
                           });
  Value cast = buildCastTensor(c, sum, biasType.getElementType());
  // Put the size-1 dimensions back with a rank-expanding insert_slice.
  Value dest = buildEmpty(c.b, c.loc, c.sizes(biasType.getShape()),
                          biasType.getElementType());
  SmallVector<OpFoldResult> zeros(4, c.b.getIndexAttr(0)),
      ones(4, c.b.getIndexAttr(1));
  return tensor::InsertSliceOp::create(c.b, c.loc, cast, dest, zeros,
                                       c.sizes(biasType.getShape()), ones);
}

LogicalResult
mlir::flash::naive::lowerAttentionGrad(AttentionGradOp op,
                                       const VarlenIndices *dropoutAt) {
  auto iface = cast<AttentionVariantInterface>(*op);
  if (failed(checkScoreModHasUnitDerivative(iface)))
    return failure();
  OpBuilder b(op);
  NaiveContext c = makeContext(b, iface, dropoutAt);
  auto d = [&](unsigned n) { return c.dim(n); };
  auto qPerm = iface.getQueryPerm(), kPerm = iface.getKeyPerm(),
       vPerm = iface.getValuePerm();
  AffineMap id4 = c.map(4, {d(0), d(1), d(2), d(3)});
  AffineMap row = c.map(4, {d(0), d(1), d(2)});

  Value rawDots = buildRawDots(c);
  Value scores = buildScores(c, rawDots);
  Value probs = buildGeneric(
      b, c.loc, {scores, op.getLse()},
      buildEmpty(b, c.loc, c.sizes({c.sz.batch, c.sz.headsQ, c.sz.seqQ, c.sz.seqK}),
                 b.getF32Type()),
      {id4, row, id4}, parallelThenReduction(4, 0),
      [](OpBuilder &b, Location loc, ValueRange a) -> Value {
        return buildProbabilityFromLse(b, loc, a[0], a[1]);
      });
  Value droppedProbs = probs;
  if (iface.hasDropout())
    droppedProbs = buildScoreElementwise(
        c, probs, [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
          return arith::MulFOp::create(b, loc, a[0],
                                       buildDropoutFactorHere(c, b, loc));
        });

  // dV = (P∘Z)ᵀ dO, summed over the query heads of each kv head.
  Value dV = reduceOverQueries(c, droppedProbs, op.getGradOutput(), c.sz.dv, vPerm);

  // dP[b,h,i,j] = sum_e dO[b,h,i,e] V[b,h/G,j,e]; loops (b, h, i, j, e).
  AffineMap doMap =
      c.map(5, toOperandOrder<AffineExpr>({d(0), d(1), d(2), d(4)}, qPerm));
  AffineMap vMap = c.map(
      5, toOperandOrder<AffineExpr>({d(0), d(1).floorDiv(c.groupSize), d(3), d(4)},
                                    vPerm));
  Value dP = buildGeneric(
      b, c.loc, {op.getGradOutput(), op.getValue()},
      buildFilledF32(b, c.loc,
                     c.sizes({c.sz.batch, c.sz.headsQ, c.sz.seqQ, c.sz.seqK}), 0.0f),
      {doMap, vMap, c.map(5, {d(0), d(1), d(2), d(3)})},
      parallelThenReduction(4, 1), multiplyAccumulateF32);

  Value delta = buildGradOutputDotOutput(b, c.loc, op);

  // dS = P∘(dP∘Z - D): the gradient with respect to the final score.
  Value dS = buildGeneric(
      b, c.loc, {probs, dP, delta},
      buildEmpty(b, c.loc, c.sizes({c.sz.batch, c.sz.headsQ, c.sz.seqQ, c.sz.seqK}),
                 b.getF32Type()),
      {id4, id4, row, id4}, parallelThenReduction(4, 0),
      [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        Value dp = a[1];
        if (Value factor = buildDropoutFactorHere(c, b, loc))
          dp = arith::MulFOp::create(b, loc, dp, factor);
        return arith::MulFOp::create(b, loc, a[0],
                                     arith::SubFOp::create(b, loc, dp, a[2]));
      });

  // Through softcap: the gradient with respect to the scaled dot product.
  Value dX = dS;
  if (iface.getSoftcapValue())
    dX = buildScoreElementwise(
        c, {dS, rawDots}, [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
          return arith::MulFOp::create(
              b, loc, a[0], buildSoftcapDerivative(b, loc, iface, a[1]));
        });

  float scale = float(iface.getEffectiveScale());
  // dQ[b,h,i,k] = scale · sum_j dX[b,h,i,j] K[b,h/G,j,k]; loops (b,h,i,k,j).
  AffineMap dxMap = c.map(5, {d(0), d(1), d(2), d(4)});
  AffineMap kMap = c.map(
      5, toOperandOrder<AffineExpr>({d(0), d(1).floorDiv(c.groupSize), d(4), d(3)},
                                    kPerm));
  AffineMap dqMap =
      c.map(5, toOperandOrder<AffineExpr>({d(0), d(1), d(2), d(3)}, qPerm));
  Value dQ = buildGeneric(
      b, c.loc, {dX, op.getKey()},
      buildFilledF32(b, c.loc,
                     c.sizes(applyPerm({c.sz.batch, c.sz.headsQ, c.sz.seqQ, c.sz.d},
                                       qPerm)),
                     0.0f),
      {dxMap, kMap, dqMap}, parallelThenReduction(4, 1), multiplyAccumulateF32);

  // dK = scale · dXᵀ Q, summed over the query heads of each kv head.
  Value dK = reduceOverQueries(c, dX, op.getQuery(), c.sz.d, kPerm);

  SmallVector<Value> results = {
      buildCastTensor(c, dQ, op.getGradQuery().getType().getElementType(), scale),
      buildCastTensor(c, dK, op.getGradKey().getType().getElementType(), scale),
      buildCastTensor(c, dV, op.getGradValue().getType().getElementType())};
  if (op.getGradBias())
    results.push_back(reduceBiasGrad(c, dS, op.getBias()));
  op->replaceAllUsesWith(results);
  op->erase();
  return success();
}
