//===- Tiles.cpp - tiles, band bounds and score tiles ----------------------===//
#include "Tiles.h"

#include "flashfuse/Conversion/Common/DecomposeVarlen.h"
#include "flashfuse/Conversion/Common/Layout.h"
#include "flashfuse/Conversion/Common/LinalgBuilders.h"
#include "flashfuse/Conversion/Common/SoftmaxMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::loops;

Value LoopContext::index(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}
Value LoopContext::min(Value a, Value c) {
  return arith::MinSIOp::create(b, loc, a, c);
}
Value LoopContext::max(Value a, Value c) {
  return arith::MaxSIOp::create(b, loc, a, c);
}
Value LoopContext::add(Value a, int64_t c) {
  return c == 0 ? a : add(a, index(c));
}
Value LoopContext::add(Value a, Value c) {
  return arith::AddIOp::create(b, loc, a, c);
}
Value LoopContext::tileExtent(int64_t block, Value start, Value end) {
  Value rest = arith::SubIOp::create(b, loc, end, start);
  return min(index(block), rest);
}

void mlir::flash::loops::rowSliceGeometry(LoopContext &c, const RowSlice &rows,
                                          int64_t featureSize,
                                          SmallVector<OpFoldResult> &offsets,
                                          SmallVector<OpFoldResult> &sizes,
                                          SmallVector<OpFoldResult> &strides) {
  OpFoldResult zero = c.b.getIndexAttr(0), one = c.b.getIndexAttr(1);
  offsets = toOperandOrder<OpFoldResult>(
      {rows.batch, rows.head, rows.start, zero}, rows.perm);
  sizes = toOperandOrder<OpFoldResult>(
      {one, one, rows.size, c.b.getIndexAttr(featureSize)}, rows.perm);
  strides.assign(4, one);
}

Value mlir::flash::loops::extractRows(LoopContext &c, Value operand,
                                      const RowSlice &rows) {
  auto type = cast<RankedTensorType>(operand.getType());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  rowSliceGeometry(c, rows, type.getDimSize(rows.perm[3]), offsets, sizes,
                   strides);
  auto tileType = tensor::ExtractSliceOp::inferCanonicalRankReducedResultType(2, type, sizes);
  return tensor::ExtractSliceOp::create(c.b, c.loc, tileType, operand, offsets,
                                        sizes, strides);
}

Value mlir::flash::loops::insertRows(LoopContext &c, Value tile, Value dest,
                                     const RowSlice &rows) {
  auto type = cast<RankedTensorType>(dest.getType());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  rowSliceGeometry(c, rows, type.getDimSize(rows.perm[3]), offsets, sizes,
                   strides);
  return tensor::InsertSliceOp::create(c.b, c.loc, tile, dest, offsets, sizes,
                                       strides);
}

void mlir::flash::loops::parallelInsertRows(LoopContext &c, Value tile,
                                            Value dest, const RowSlice &rows) {
  auto type = cast<RankedTensorType>(dest.getType());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  rowSliceGeometry(c, rows, type.getDimSize(rows.perm[3]), offsets, sizes,
                   strides);
  tensor::ParallelInsertSliceOp::create(c.b, c.loc, tile, dest, offsets, sizes,
                                        strides);
}

AffineMap mlir::flash::loops::rowsMap(LoopContext &c, ArrayRef<int64_t> perm,
                                      AffineExpr row, AffineExpr feature,
                                      unsigned numDims) {
  if (seqBeforeHeadDim(perm))
    return c.map(numDims, {row, feature});
  return c.map(numDims, {feature, row});
}

std::pair<Value, Value>
mlir::flash::loops::keyRangeForQueries(LoopContext &c, Value q0, Value m) {
  // Query i sees keys i + off - left <= j <= i + off + right.
  Value start = c.index(0), end = c.index(c.sz.seqK);
  const AttentionBand &band = c.band;
  if (band.left)
    start = c.max(start, c.add(q0, band.offset - *band.left));
  if (band.right)
    end = c.min(end, c.add(c.add(q0, m), band.offset + *band.right));
  return {start, end};
}

std::pair<Value, Value>
mlir::flash::loops::queryRangeForKeys(LoopContext &c, Value k0, Value n) {
  // Key j is seen by queries j - off - right <= i <= j - off + left.
  Value start = c.index(0), end = c.index(c.sz.seqQ);
  const AttentionBand &band = c.band;
  if (band.right)
    start = c.max(start, c.add(k0, -band.offset - *band.right));
  if (band.left)
    end = c.min(end, c.add(c.add(k0, n), -band.offset + *band.left));
  return {start, end};
}

SmallVector<OpFoldResult> mlir::flash::loops::tileSizes(OpFoldResult rows,
                                                        OpFoldResult cols) {
  return {rows, cols};
}

Value mlir::flash::loops::filledTile(LoopContext &c,
                                     ArrayRef<OpFoldResult> sizes,
                                     float value) {
  return buildFilledF32(c.b, c.loc, sizes, value);
}

Value mlir::flash::loops::buildRawDotTile(LoopContext &c, Value qTile,
                                          Value kTile, Value m, Value n) {
  // Loops (i, j, d), d reduced.
  AffineExpr i = c.dim(0), j = c.dim(1), d = c.dim(2);
  AffineMap qMap = rowsMap(c, c.op.getQueryPerm(), i, d, 3);
  AffineMap kMap = rowsMap(c, c.op.getKeyPerm(), j, d, 3);
  return buildGeneric(c.b, c.loc, {qTile, kTile},
                      filledTile(c, tileSizes(m, n), 0.0f),
                      {qMap, kMap, c.map(3, {i, j})},
                      parallelThenReduction(2, 1),
                      multiplyAccumulateF32);
}

ScoreIndex mlir::flash::loops::tileScoreIndex(LoopContext &c, OpBuilder &b,
                                              Location loc,
                                              const TileOrigin &at,
                                              unsigned rowLoop,
                                              unsigned keyLoop) {
  Value i = linalg::IndexOp::create(b, loc, rowLoop);
  Value j = linalg::IndexOp::create(b, loc, keyLoop);
  return {at.batch, at.head, arith::AddIOp::create(b, loc, at.q0, i),
          arith::AddIOp::create(b, loc, at.k0, j)};
}

/// The element of a [B, Hq, Sq, Sk]-broadcastable operand at `idx`.
static Value readBroadcast(OpBuilder &b, Location loc, Value operand,
                           const ScoreIndex &idx) {
  if (!operand)
    return Value();
  return tensor::ExtractOp::create(
      b, loc, operand,
      broadcastIndices(b, loc, cast<ShapedType>(operand.getType()),
                       idx.asArray()));
}

Value mlir::flash::loops::buildScoreTile(LoopContext &c, Value rawDots,
                                         const TileOrigin &at) {
  AffineMap id = c.map(2, {c.dim(0), c.dim(1)});
  auto type = cast<RankedTensorType>(rawDots.getType());
  Value init = tensor::EmptyOp::create(
      c.b, c.loc, tensor::getMixedSizes(c.b, c.loc, rawDots), type.getElementType());
  return buildGeneric(
      c.b, c.loc, rawDots, init, {id, id}, parallelThenReduction(2, 0),
      [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        ScoreIndex idx = tileScoreIndex(c, b, loc, at, 0, 1);
        Value bias = readBroadcast(b, loc, c.op.getBiasOperand(), idx);
        Value mask = readBroadcast(b, loc, c.op.getMaskOperand(), idx);
        return buildMaskedScore(b, loc, c.op, c.band, a[0], bias, mask, idx);
      });
}

Value mlir::flash::loops::mapTiles(
    LoopContext &c, ValueRange tiles,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  AffineMap id = c.map(2, {c.dim(0), c.dim(1)});
  SmallVector<AffineMap> maps(tiles.size() + 1, id);
  Value init = tensor::EmptyOp::create(
      c.b, c.loc, tensor::getMixedSizes(c.b, c.loc, tiles[0]), c.b.getF32Type());
  return buildGeneric(c.b, c.loc, tiles, init, maps, parallelThenReduction(2, 0),
                      fn);
}

Value mlir::flash::loops::buildDropoutTile(LoopContext &c, Value like,
                                           const TileOrigin &at) {
  if (!c.op.hasDropout())
    return Value();
  return mapTiles(c, like, [&](OpBuilder &b, Location loc, ValueRange) -> Value {
    ScoreIndex idx = tileScoreIndex(c, b, loc, at, 0, 1);
    return buildDropoutFactorAt(b, loc, c.op, c.dropoutAt, idx.batch,
                                idx.head, idx.query, idx.key);
  });
}

SmallVector<Value> mlir::flash::loops::buildForLoop(
    LoopContext &c, Value lb, Value ub, Value step, ValueRange inits,
    function_ref<SmallVector<Value>(Value iv, ValueRange args)> body) {
  auto loop = scf::ForOp::create(c.b, c.loc, lb, ub, step, inits);
  OpBuilder::InsertionGuard guard(c.b);
  c.b.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> next = body(loop.getInductionVar(), loop.getRegionIterArgs());
  scf::YieldOp::create(c.b, c.loc, next);
  return SmallVector<Value>(loop.getResults());
}

Value mlir::flash::loops::castRowsTile(LoopContext &c, Value tile,
                                       ArrayRef<int64_t> perm, Type elt,
                                       float factor) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(c.b, c.loc, tile);
  if (!seqBeforeHeadDim(perm))
    std::swap(sizes[0], sizes[1]);
  AffineExpr row = c.dim(0), feature = c.dim(1);
  return buildGeneric(c.b, c.loc, tile, tensor::EmptyOp::create(c.b, c.loc, sizes, elt),
                      {c.map(2, {row, feature}), rowsMap(c, perm, row, feature, 2)},
                      parallelThenReduction(2, 0),
                      [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
                        Value v = a[0];
                        if (factor != 1.0f)
                          v = arith::MulFOp::create(b, loc, v, constF32(b, loc, factor));
                        return castFromF32(b, loc, v, elt);
                      });
}
