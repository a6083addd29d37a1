//===- BackwardLoops.cpp - flash.attention_grad as FA2 backward loops -----===//
//
//   D = rowsum(dO ∘ O)                                       (preprocess)
//   for b, kv head hk, key block (block-n keys):
//     dK_blk = 0, dV_blk = 0                                 [f32]
//     for g in group, query block in band(key block), h = hk G + g:
//       S = score pipeline(Q_blk K_blkᵀ); P = exp(S - LSE) (0 if LSE = +inf)
//       dV_blk += (P∘Z)ᵀ dO_blk;  dP = (dO_blk V_blkᵀ)∘Z;  dS = P∘(dP - D)
//       dX = dS ∘ softcap'; dK_blk += dXᵀ Q_blk; dQ[h, blk] += dX K_blk
//       dBias[blk] += dS summed over the bias' broadcast dims
//     dK[hk, blk] = scale dK_blk;  dV[hk, blk] = dV_blk
//   dQ = scale dQ
// dQ is accumulated across key blocks in an f32 tensor carried by the loops
// (the CPU analogue of FA2's atomic adds); the GQA sum of dK / dV over the
// query heads of a group is the g loop, so K and V are never copied.
//
//===----------------------------------------------------------------------===//
#include "LoopsLowering.h"
#include "Tiles.h"

#include "flashfuse/Conversion/Common/BackwardPreprocess.h"
#include "flashfuse/Conversion/Common/Layout.h"
#include "flashfuse/Conversion/Common/LinalgBuilders.h"
#include "flashfuse/Conversion/Common/SoftmaxMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::loops;

namespace {
/// What the loops over one key block carry.
struct KeyBlockState {
  Value gradKey, gradValue; // [n, D], [n, Dv] f32
  Value gradQuery;          // [B, Hq, Sq, D] f32, logical order
  Value gradBias;           // the bias shape, f32; null when not requested
  SmallVector<Value> asList() const {
    SmallVector<Value> l = {gradKey, gradValue, gradQuery};
    if (gradBias)
      l.push_back(gradBias);
    return l;
  }
  static KeyBlockState fromList(ValueRange l) {
    return {l[0], l[1], l[2], l.size() > 3 ? l[3] : Value()};
  }
};

/// Static pieces of one op's backward lowering.
struct BackwardContext {
  LoopContext &c;
  AttentionGradOp op;
  Value delta; // D = rowsum(dO ∘ O), [B, Hq, Sq]
  Value kTile, vTile, k0, n;
};
} // namespace

/// dQ is accumulated in logical [B, Hq, Sq, D] order.
static constexpr int64_t kIdentityPerm[4] = {0, 1, 2, 3};

/// The [m] slice of a [B, Hq, Sq] row statistic.
static Value extractRowStat(LoopContext &c, Value stat, Value batch, Value head,
                            Value q0, Value m) {
  OpFoldResult one = c.b.getIndexAttr(1);
  SmallVector<OpFoldResult> offsets = {batch, head, q0}, sizes = {one, one, m},
                            strides = {one, one, one};
  auto type = tensor::ExtractSliceOp::inferCanonicalRankReducedResultType(1, cast<RankedTensorType>(stat.getType()), sizes);
  return tensor::ExtractSliceOp::create(c.b, c.loc, type, stat, offsets, sizes,
                                        strides);
}

/// dBias[tile] += dS, summed over the bias' broadcast dimensions.
static Value accumulateBiasGrad(LoopContext &c, Value gradBias, Value dS,
                                const TileOrigin &at, Value m, Value n) {
  auto type = cast<RankedTensorType>(gradBias.getType());
  OpFoldResult zero = c.b.getIndexAttr(0), one = c.b.getIndexAttr(1);
  bool bcast[4];
  for (unsigned d = 0; d < 4; ++d)
    bcast[d] = isBroadcastDim(type, d);
  SmallVector<OpFoldResult> offsets = {
      bcast[0] ? zero : OpFoldResult(at.batch), bcast[1] ? zero : OpFoldResult(at.head),
      bcast[2] ? zero : OpFoldResult(at.q0), bcast[3] ? zero : OpFoldResult(at.k0)};
  SmallVector<OpFoldResult> sizes = {one, one, bcast[2] ? one : OpFoldResult(m),
                                     bcast[3] ? one : OpFoldResult(n)};
  SmallVector<OpFoldResult> strides(4, one);
  SmallVector<AffineExpr> kept;
  SmallVector<utils::IteratorType> its;
  for (unsigned d = 2; d < 4; ++d) {
    its.push_back(bcast[d] ? utils::IteratorType::reduction
                           : utils::IteratorType::parallel);
    if (!bcast[d])
      kept.push_back(c.dim(d - 2));
  }
  auto sliceType = tensor::ExtractSliceOp::inferCanonicalRankReducedResultType(kept.size(), type, sizes);
  Value slice = tensor::ExtractSliceOp::create(c.b, c.loc, sliceType, gradBias,
                                               offsets, sizes, strides);
  Value sum = buildGeneric(c.b, c.loc, dS, slice,
                           {c.map(2, {c.dim(0), c.dim(1)}), c.map(2, kept)}, its,
                           [](OpBuilder &b, Location loc, ValueRange a) -> Value {
                             return arith::AddFOp::create(b, loc, a[0], a[1]);
                           });
  return tensor::InsertSliceOp::create(c.b, c.loc, sum, gradBias, offsets, sizes,
                                       strides);
}

/// One query block's contribution to the key block's gradients.
static KeyBlockState visitQueryBlock(BackwardContext &bc, KeyBlockState s,
                                     Value batch, Value head, Value q0,
                                     Value qEnd) {
  LoopContext &c = bc.c;
  auto qPerm = c.op.getQueryPerm();
  Value m = c.tileExtent(c.blockM, q0, qEnd);
  Value qTile = extractRows(c, bc.op.getQuery(), {qPerm, batch, head, q0, m});
  Value doTile = extractRows(c, bc.op.getGradOutput(), {qPerm, batch, head, q0, m});
  Value lse = extractRowStat(c, bc.op.getLse(), batch, head, q0, m);
  Value delta = extractRowStat(c, bc.delta, batch, head, q0, m);
  TileOrigin at{batch, head, q0, bc.k0};

  Value rawDots = buildRawDotTile(c, qTile, bc.kTile, m, bc.n);
  Value scores = buildScoreTile(c, rawDots, at);
  AffineExpr d0 = c.dim(0), d1 = c.dim(1), d2 = c.dim(2);
  AffineMap tile = c.map(2, {d0, d1}), row = c.map(2, {d0});
  Value probs = buildGeneric(
      c.b, c.loc, {scores, lse},
      tensor::EmptyOp::create(c.b, c.loc, tileSizes(m, bc.n), c.b.getF32Type()),
      {tile, row, tile}, parallelThenReduction(2, 0),
      [](OpBuilder &b, Location loc, ValueRange a) -> Value {
        return buildProbabilityFromLse(b, loc, a[0], a[1]);
      });
  Value dropout = buildDropoutTile(c, probs, at);
  Value dropped = probs;
  if (dropout)
    dropped = mapTiles(c, {probs, dropout},
                       [](OpBuilder &b, Location loc, ValueRange a) -> Value {
                         return arith::MulFOp::create(b, loc, a[0], a[1]);
                       });

  // dV_blk += (P∘Z)ᵀ dO_blk; loops (j, e, i).
  s.gradValue = buildGeneric(
      c.b, c.loc, {dropped, doTile}, s.gradValue,
      {c.map(3, {d2, d0}), rowsMap(c, qPerm, d2, d1, 3), c.map(3, {d0, d1})},
      parallelThenReduction(2, 1), multiplyAccumulateF32);
  // dP = dO_blk V_blkᵀ; loops (i, j, e).
  Value dP = buildGeneric(
      c.b, c.loc, {doTile, bc.vTile}, filledTile(c, tileSizes(m, bc.n), 0.0f),
      {rowsMap(c, qPerm, d0, d2, 3), rowsMap(c, c.op.getValuePerm(), d1, d2, 3),
       c.map(3, {d0, d1})},
      parallelThenReduction(2, 1), multiplyAccumulateF32);
  // dS = P∘(dP∘Z - D).
  SmallVector<Value> dsInputs = {probs, dP, delta};
  SmallVector<AffineMap> dsMaps = {tile, tile, row};
  if (dropout) {
    dsInputs.push_back(dropout);
    dsMaps.push_back(tile);
  }
  dsMaps.push_back(tile);
  Value dS = buildGeneric(
      c.b, c.loc, dsInputs,
      tensor::EmptyOp::create(c.b, c.loc, tileSizes(m, bc.n), c.b.getF32Type()),
      dsMaps, parallelThenReduction(2, 0),
      [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        Value dp = dropout ? arith::MulFOp::create(b, loc, a[1], a[3]).getResult() : a[1];
        return arith::MulFOp::create(b, loc, a[0],
                                     arith::SubFOp::create(b, loc, dp, a[2]));
      });
  if (s.gradBias)
    s.gradBias = accumulateBiasGrad(c, s.gradBias, dS, at, m, bc.n);
  Value dX = dS;
  if (c.op.getSoftcapValue())
    dX = mapTiles(c, {dS, rawDots}, [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
      return arith::MulFOp::create(b, loc, a[0],
                                   buildSoftcapDerivative(b, loc, c.op, a[1]));
    });

  // dK_blk += dXᵀ Q_blk; loops (j, d, i). The scale is applied once, at the
  // end.
  s.gradKey = buildGeneric(
      c.b, c.loc, {dX, qTile}, s.gradKey,
      {c.map(3, {d2, d0}), rowsMap(c, qPerm, d2, d1, 3), c.map(3, {d0, d1})},
      parallelThenReduction(2, 1), multiplyAccumulateF32);
  // dQ[b, h, blk] += dX K_blk; loops (i, d, j).
  RowSlice dqRows{ArrayRef<int64_t>(kIdentityPerm), batch, head, q0, m};
  Value dqTile = extractRows(c, s.gradQuery, dqRows);
  dqTile = buildGeneric(
      c.b, c.loc, {dX, bc.kTile}, dqTile,
      {c.map(3, {d0, d2}), rowsMap(c, c.op.getKeyPerm(), d2, d1, 3), c.map(3, {d0, d1})},
      parallelThenReduction(2, 1), multiplyAccumulateF32);
  s.gradQuery = insertRows(c, dqTile, s.gradQuery, dqRows);
  return s;
}

LogicalResult mlir::flash::loops::lowerAttentionGrad(
    AttentionGradOp op, int64_t blockM, int64_t blockN,
    const VarlenIndices *dropoutAt) {
  auto iface = cast<AttentionVariantInterface>(*op);
  if (failed(checkScoreModHasUnitDerivative(iface)))
    return failure();
  OpBuilder b(op);
  LoopContext c = makeLoopContext(b, iface, blockM, blockN, dropoutAt);
  Location loc = c.loc;
  AttentionSizes sz = c.sz;
  float scale = float(iface.getEffectiveScale());
  auto kPerm = iface.getKeyPerm(), vPerm = iface.getValuePerm(),
       qPerm = iface.getQueryPerm();
  BackwardContext bc{c, op, buildGradOutputDotOutput(b, loc, op), {}, {}, {}, {}};

  auto staticSizes = [&](ArrayRef<int64_t> shape) {
    SmallVector<OpFoldResult> r;
    for (int64_t v : shape)
      r.push_back(b.getIndexAttr(v));
    return r;
  };
  auto emptyLike = [&](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return tensor::EmptyOp::create(b, loc, t.getShape(), t.getElementType()).getResult();
  };
  Value gradQuery = filledTile(c, staticSizes({sz.batch, sz.headsQ, sz.seqQ, sz.d}), 0.0f);
  Value gradBias;
  if (op.getGradBias())
    gradBias = filledTile(c, staticSizes(op.getBias().getType().getShape()), 0.0f);
  SmallVector<Value> outerInit = {gradQuery, emptyLike(op.getGradKey()),
                                  emptyLike(op.getGradValue())};
  if (gradBias)
    outerInit.push_back(gradBias);

  // Loops over (b, hk, key block) carry (dQ, dK, dV[, dBias]).
  auto results = buildForLoop(c, c.index(0), c.index(sz.batch), c.index(1), outerInit,
    [&](Value batch, ValueRange a0) {
      return buildForLoop(c, c.index(0), c.index(sz.headsKV), c.index(1), a0,
        [&](Value kvHead, ValueRange a1) {
          return buildForLoop(c, c.index(0), c.index(sz.seqK), c.index(blockN), a1,
            [&](Value k0, ValueRange a2) -> SmallVector<Value> {
              Value n = c.tileExtent(blockN, k0, c.index(sz.seqK));
              bc.k0 = k0;
              bc.n = n;
              bc.kTile = extractRows(c, op.getKey(), {kPerm, batch, kvHead, k0, n});
              bc.vTile = extractRows(c, op.getValue(), {vPerm, batch, kvHead, k0, n});
              KeyBlockState init{filledTile(c, tileSizes(n, c.b.getIndexAttr(sz.d)), 0.0f),
                                 filledTile(c, tileSizes(n, c.b.getIndexAttr(sz.dv)), 0.0f),
                                 a2[0], a2.size() > 3 ? a2[3] : Value()};
              // Only the query blocks that see this key block are visited.
              auto [qStart, qEnd] = queryRangeForKeys(c, k0, n);
              auto perGroup = buildForLoop(c, c.index(0), c.index(c.group), c.index(1),
                init.asList(), [&](Value g, ValueRange a3) {
                  Value head = c.add(arith::MulIOp::create(b, loc, kvHead, c.index(c.group)), g);
                  return buildForLoop(c, qStart, qEnd, c.index(blockM), a3,
                    [&](Value q0, ValueRange a4) {
                      return visitQueryBlock(bc, KeyBlockState::fromList(a4), batch,
                                             head, q0, qEnd).asList();
                    });
                });
              KeyBlockState done = KeyBlockState::fromList(perGroup);
              Value dK = insertRows(
                  c, castRowsTile(c, done.gradKey, kPerm,
                                  op.getGradKey().getType().getElementType(), scale),
                  a2[1], {kPerm, batch, kvHead, k0, n});
              Value dV = insertRows(
                  c, castRowsTile(c, done.gradValue, vPerm,
                                  op.getGradValue().getType().getElementType(), 1.0f),
                  a2[2], {vPerm, batch, kvHead, k0, n});
              SmallVector<Value> next = {done.gradQuery, dK, dV};
              if (done.gradBias)
                next.push_back(done.gradBias);
              return next;
            });
        });
    });

  // dQ = scale · the accumulated sum, in Q's layout and element type.
  auto d = [&](unsigned i) { return c.dim(i); };
  Type qElt = op.getGradQuery().getType().getElementType();
  Value dQ = buildGeneric(
      b, loc, results[0], emptyLike(op.getGradQuery()),
      {c.map(4, {d(0), d(1), d(2), d(3)}),
       c.map(4, toOperandOrder<AffineExpr>({d(0), d(1), d(2), d(3)}, qPerm))},
      parallelThenReduction(4, 0),
      [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        return castFromF32(b, loc, arith::MulFOp::create(b, loc, a[0], constF32(b, loc, scale)),
                           qElt);
      });
  SmallVector<Value> replacements = {dQ, results[1], results[2]};
  if (gradBias) {
    Type biasElt = op.getBias().getType().getElementType();
    AffineMap id = c.map(4, {d(0), d(1), d(2), d(3)});
    replacements.push_back(buildGeneric(
        b, loc, results[3], emptyLike(op.getBias()), {id, id},
        parallelThenReduction(4, 0),
        [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
          return castFromF32(b, loc, a[0], biasElt);
        }));
  }
  op->replaceAllUsesWith(replacements);
  op->erase();
  return success();
}
