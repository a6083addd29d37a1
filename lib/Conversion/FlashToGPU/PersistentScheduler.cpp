//===- PersistentScheduler.cpp - a persistent grid's tile walk ------------===//
//
// See PersistentScheduler.h for the order and why.
//
//===----------------------------------------------------------------------===//
#include "PersistentScheduler.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::flash;

SmallVector<Value> PersistentTileScheduler::forEachTile(ValueRange init,
                                                        Body body) {
  // In 32 bits: index is 64-bit on NVPTX, and a 64-bit division by a
  // runtime value is a long sequence that the producer warpgroup, at few
  // registers, cannot hold.
  Type i32 = b.getI32Type();
  auto c32 = [&](int64_t v) {
    return arith::ConstantOp::create(b, b.getI32IntegerAttr(v));
  };
  auto to32 = [&](Value v) { return arith::IndexCastUIOp::create(b, i32, v); };
  auto toIndex = [&](Value v) {
    return arith::IndexCastUIOp::create(b, b.getIndexType(), v);
  };
  Value one = c32(1);
  Value heads32 = to32(heads);
  Value queryBlocks = arith::CeilDivUIOp::create(b, to32(seqQ), c32(blockM));
  Value grid = to32(gpu::GridDimOp::create(b, gpu::Dimension::x));
  // Units per (head, batch): the mirrored pairs (the middle block of an odd
  // count alone), or the blocks. A grid of a block per tile (the runtime's
  // from 8192 keys on) takes single blocks, longest first, which the
  // hardware balances better than equal pairs.
  Value unitsPerHead = queryBlocks;
  Value pair;
  if (pairMirrors) {
    Value tiles = arith::MulIOp::create(
        b, arith::MulIOp::create(b, queryBlocks, heads32), to32(batch));
    pair = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, grid, tiles);
    unitsPerHead = arith::SelectOp::create(
        b, pair, arith::CeilDivUIOp::create(b, queryBlocks, c32(2)),
        queryBlocks);
  }
  Value units = arith::MulIOp::create(
      b, arith::MulIOp::create(b, unitsPerHead, heads32), to32(batch));
  auto outer = scf::ForOp::create(
      b, to32(gpu::BlockIdOp::create(b, gpu::Dimension::x)), units, grid,
      init);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(outer.getBody());
  Value unit = outer.getInductionVar();
  Value inHead = arith::RemUIOp::create(b, unit, unitsPerHead);
  Value headBatch = arith::DivUIOp::create(b, unit, unitsPerHead);
  Tile tile;
  tile.head = toIndex(arith::RemUIOp::create(b, headBatch, heads32));
  tile.batch = toIndex(arith::DivUIOp::create(b, headBatch, heads32));
  if (!pairMirrors) {
    tile.queryBlock = toIndex(inHead);
    scf::YieldOp::create(b, body(tile, outer.getRegionIterArgs()));
    return outer.getResults();
  }
  // Blocks M-1-i, then (paired) i unless it is the same block.
  Value mirror = arith::SubIOp::create(
      b, arith::SubIOp::create(b, queryBlocks, one), inHead);
  Value two = arith::AndIOp::create(
      b, pair,
      arith::CmpIOp::create(b, arith::CmpIPredicate::ne, mirror, inHead));
  Value count = arith::SelectOp::create(b, two, c32(2), one);
  auto inner =
      scf::ForOp::create(b, c32(0), count, one, outer.getRegionIterArgs());
  {
    OpBuilder::InsertionGuard gi(b);
    b.setInsertionPointToStart(inner.getBody());
    Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                        inner.getInductionVar(), c32(0));
    tile.queryBlock =
        toIndex(arith::SelectOp::create(b, first, mirror, inHead));
    scf::YieldOp::create(b, body(tile, inner.getRegionIterArgs()));
  }
  scf::YieldOp::create(b, inner.getResults());
  return outer.getResults();
}
