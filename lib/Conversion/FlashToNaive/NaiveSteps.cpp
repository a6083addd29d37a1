//===- NaiveSteps.cpp - whole-tensor steps shared by forward and backward -===//
#include "NaiveSteps.h"

#include "flashfuse/Conversion/Common/DecomposeVarlen.h"
#include "flashfuse/Conversion/Common/Layout.h"
#include "flashfuse/Conversion/Common/LinalgBuilders.h"
#include "flashfuse/Conversion/Common/SoftmaxMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::naive;

NaiveContext mlir::flash::naive::makeContext(OpBuilder &b,
                                             AttentionVariantInterface op,
                                             const VarlenIndices *dropoutAt) {
  AttentionSizes sz = op.getSizes();
  return NaiveContext{b,  op->getLoc(), op, sz, getAttentionBand(op),
                      sz.headsQ / sz.headsKV, dropoutAt};
}

Value mlir::flash::naive::buildRawDots(NaiveContext &c) {
  // Loops (b, h, i, j, d), d reduced.
  auto d = [&](unsigned n) { return c.dim(n); };
  auto qkv = c.op.getQKV();
  AffineMap qMap = c.map(5, toOperandOrder<AffineExpr>(
                                {d(0), d(1), d(2), d(4)}, c.op.getQueryPerm()));
  AffineMap kMap = c.map(
      5, toOperandOrder<AffineExpr>({d(0), d(1).floorDiv(c.groupSize), d(3), d(4)},
                                    c.op.getKeyPerm()));
  AffineMap outMap = c.map(5, {d(0), d(1), d(2), d(3)});
  Value init = buildFilledF32(
      c.b, c.loc, c.sizes({c.sz.batch, c.sz.headsQ, c.sz.seqQ, c.sz.seqK}), 0.0f);
  return buildGeneric(c.b, c.loc, {qkv[0], qkv[1]}, init, {qMap, kMap, outMap},
                      parallelThenReduction(4, 1),
                      multiplyAccumulateF32);
}

Value mlir::flash::naive::buildScores(NaiveContext &c, Value rawDots) {
  SmallVector<AffineExpr> logical = {c.dim(0), c.dim(1), c.dim(2), c.dim(3)};
  AffineMap id = c.map(4, logical);
  SmallVector<Value> inputs = {rawDots};
  SmallVector<AffineMap> maps = {id};
  Value bias = c.op.getBiasOperand(), mask = c.op.getMaskOperand();
  for (Value operand : {bias, mask}) {
    if (!operand)
      continue;
    inputs.push_back(operand);
    maps.push_back(broadcastMap(cast<ShapedType>(operand.getType()), logical, 4));
  }
  maps.push_back(id);
  Value init = buildEmpty(c.b, c.loc,
                          c.sizes({c.sz.batch, c.sz.headsQ, c.sz.seqQ, c.sz.seqK}),
                          c.b.getF32Type());
  return buildGeneric(
      c.b, c.loc, inputs, init, maps, parallelThenReduction(4, 0),
      [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        auto idx = loopIndices(b, loc, 4);
        unsigned next = 1;
        Value biasElt = bias ? a[next++] : Value();
        Value maskElt = mask ? a[next++] : Value();
        return buildMaskedScore(b, loc, c.op, c.band, a[0], biasElt, maskElt,
                                {idx[0], idx[1], idx[2], idx[3]});
      });
}

Value mlir::flash::naive::buildDropoutFactorHere(NaiveContext &c, OpBuilder &b,
                                                 Location loc) {
  if (!c.op.hasDropout())
    return Value();
  auto idx = loopIndices(b, loc, 4);
  return buildDropoutFactorAt(b, loc, c.op, c.dropoutAt, idx[0], idx[1],
                              idx[2], idx[3]);
}

Value mlir::flash::naive::buildScoreElementwise(
    NaiveContext &c, ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  AffineMap id = c.map(4, {c.dim(0), c.dim(1), c.dim(2), c.dim(3)});
  SmallVector<AffineMap> maps(inputs.size() + 1, id);
  Value init = buildEmpty(c.b, c.loc,
                          c.sizes({c.sz.batch, c.sz.headsQ, c.sz.seqQ, c.sz.seqK}),
                          c.b.getF32Type());
  return buildGeneric(c.b, c.loc, inputs, init, maps, parallelThenReduction(4, 0),
                      fn);
}

Value mlir::flash::naive::buildCastTensor(NaiveContext &c, Value f32Tensor,
                                          Type elt, float factor) {
  auto type = cast<RankedTensorType>(f32Tensor.getType());
  if (elt.isF32() && factor == 1.0f)
    return f32Tensor;
  unsigned rank = type.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, c.ctx());
  SmallVector<OpFoldResult> sizes = c.sizes(type.getShape());
  Value init = buildEmpty(c.b, c.loc, sizes, elt);
  return buildGeneric(c.b, c.loc, f32Tensor, init, {id, id},
                      parallelThenReduction(rank, 0),
                      [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
                        Value v = a[0];
                        if (factor != 1.0f)
                          v = arith::MulFOp::create(b, loc, v,
                                                    constF32(b, loc, factor));
                        return castFromF32(b, loc, v, elt);
                      });
}
