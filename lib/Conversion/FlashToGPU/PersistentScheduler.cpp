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

namespace {
// The walk computes in 32 bits: index is 64-bit on NVPTX, and a 64-bit
// division by a runtime value is a long sequence that the producer
// warpgroup, at few registers, cannot hold.
Value c32(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantOp::create(b, b.getI32IntegerAttr(v));
}
Value to32(ImplicitLocOpBuilder &b, Value v) {
  return arith::IndexCastUIOp::create(b, b.getI32Type(), v);
}
Value toIndex(ImplicitLocOpBuilder &b, Value v) {
  return arith::IndexCastUIOp::create(b, b.getIndexType(), v);
}
} // namespace

SmallVector<Value> PersistentTileScheduler::forEachTile(ValueRange init,
                                                        Body body) {
  if (packedBlocksOf)
    return forEachPackedTile(init, body);
  Type i32 = b.getI32Type();
  auto c32 = [&](int64_t v) { return ::c32(b, v); };
  auto to32 = [&](Value v) { return ::to32(b, v); };
  auto toIndex = [&](Value v) { return ::toIndex(b, v); };
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
  auto place = [&](Tile &tile, Value headBatch) {
    tile.head = toIndex(arith::RemUIOp::create(b, headBatch, heads32));
    tile.batch = toIndex(arith::DivUIOp::create(b, headBatch, heads32));
  };
  if (!pairMirrors) {
    Value units = arith::MulIOp::create(
        b, arith::MulIOp::create(b, unitsPerHead, heads32), to32(batch));
    auto outer = scf::ForOp::create(
        b, to32(gpu::BlockIdOp::create(b, gpu::Dimension::x)), units, grid,
        init);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(outer.getBody());
    Value unit = outer.getInductionVar();
    Value inHead = arith::RemUIOp::create(b, unit, unitsPerHead);
    Tile tile;
    place(tile, arith::DivUIOp::create(b, unit, unitsPerHead));
    tile.queryBlock = toIndex(inHead);
    scf::YieldOp::create(b, body(tile, outer.getRegionIterArgs()));
    return outer.getResults();
  }
  // The pairs' last round (units mod grid of them) would leave the other
  // CTAs idle. So the last `tailHeads` (head, batch) pairs, enough for
  // that remainder and one whole round more, are walked as single blocks:
  // the pairs before them are whole rounds' worth save for the CTAs that
  // get one more, and the single blocks go out longest first, the CTAs
  // taking them in turn starting after the last pair's and reversing the
  // order every round, so the CTAs with the most work take the shortest.
  // Units stay numbered query-block-fastest: the pairs' CTAs still read
  // the K/V of a few heads at a time, and the tail's heads are few.
  Value headBatches = arith::MulIOp::create(b, heads32, to32(batch));
  struct Walk {
    Value pairsHere, turn, reversed, tailHeads, firstTailHead, items;
  };
  auto turnOfRound = [&](const Walk &w, Value round) {
    Value odd = arith::TruncIOp::create(b, b.getI1Type(), round);
    return arith::SelectOp::create(b, odd, w.reversed, w.turn);
  };
  // The walk of CTA `cta` of `grid`, from the pairs' units.
  auto walkOf = [&](Value cta, Value grid, Value pair, Value unitsPerHead) {
    Walk w;
    Value units = arith::MulIOp::create(b, unitsPerHead, headBatches);
    Value remainder = arith::RemUIOp::create(b, units, grid);
    Value tailed = arith::AndIOp::create(
        b, pair,
        arith::CmpIOp::create(b, arith::CmpIPredicate::ne, remainder,
                              c32(0)));
    w.tailHeads = arith::SelectOp::create(
        b, tailed,
        arith::MinUIOp::create(
            b, headBatches,
            arith::CeilDivUIOp::create(
                b, arith::AddIOp::create(b, remainder, grid), unitsPerHead)),
        c32(0));
    w.firstTailHead = arith::SubIOp::create(b, headBatches, w.tailHeads);
    Value pairUnits = arith::MulIOp::create(b, w.firstTailHead, unitsPerHead);
    // This CTA's pairs: units cta, cta + grid, ... below pairUnits.
    w.pairsHere = arith::SelectOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, cta, pairUnits),
        arith::CeilDivUIOp::create(b, arith::SubIOp::create(b, pairUnits, cta),
                                   grid),
        c32(0));
    // Its single blocks: the one at offset `turn` of even rounds, counted
    // from the CTA after the last pair's, and at grid - 1 - turn of odd
    // ones.
    w.turn = arith::RemUIOp::create(
        b,
        arith::SubIOp::create(b, arith::AddIOp::create(b, cta, grid),
                              arith::RemUIOp::create(b, pairUnits, grid)),
        grid);
    w.reversed =
        arith::SubIOp::create(b, arith::SubIOp::create(b, grid, one), w.turn);
    Value singles = arith::MulIOp::create(b, w.tailHeads, queryBlocks);
    Value fullRounds = arith::DivUIOp::create(b, singles, grid);
    Value lastRoundTakes = arith::CmpIOp::create(
        b, arith::CmpIPredicate::ult, turnOfRound(w, fullRounds),
        arith::RemUIOp::create(b, singles, grid));
    w.items = arith::AddIOp::create(
        b, w.pairsHere,
        arith::AddIOp::create(
            b, fullRounds, arith::ExtUIOp::create(b, i32, lastRoundTakes)));
    return w;
  };
  Value items =
      walkOf(to32(gpu::BlockIdOp::create(b, gpu::Dimension::x)), grid, pair,
             unitsPerHead)
          .items;
  auto outer = scf::ForOp::create(b, c32(0), items, one, init);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(outer.getBody());
  Value item = outer.getInductionVar();
  // The walk again from the CTA's coordinates read afresh: its values,
  // held across the tile's body, spilled (8-24 bytes in the 192-row D = 64
  // and some FP8 kernels); recomputed, they cost a few integer
  // instructions a tile.
  Value cta = to32(readRegister("ctaid.x"));
  Value freshGrid = to32(readRegister("nctaid.x"));
  Value tiles = arith::MulIOp::create(b, queryBlocks, headBatches);
  Value freshPair =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, freshGrid, tiles);
  Value freshUnitsPerHead = arith::SelectOp::create(
      b, freshPair, arith::CeilDivUIOp::create(b, queryBlocks, c32(2)),
      queryBlocks);
  Walk w = walkOf(cta, freshGrid, freshPair, freshUnitsPerHead);
  Value isPair =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, item, w.pairsHere);
  // A pair: blocks M-1-i, then i unless it is the same block.
  Value unit = arith::AddIOp::create(
      b, cta, arith::MulIOp::create(b, item, freshGrid));
  Value inHead = arith::RemUIOp::create(b, unit, freshUnitsPerHead);
  Value mirror = arith::SubIOp::create(
      b, arith::SubIOp::create(b, queryBlocks, one), inHead);
  // A single block: the k-th longest of the tail, k = round * grid + turn.
  Value round = arith::SubIOp::create(b, item, w.pairsHere);
  Value k = arith::AddIOp::create(
      b, arith::MulIOp::create(b, round, freshGrid), turnOfRound(w, round));
  Value perLength = arith::MaxUIOp::create(b, w.tailHeads, one);
  Value single = arith::SubIOp::create(
      b, arith::SubIOp::create(b, queryBlocks, one),
      arith::DivUIOp::create(b, k, perLength));
  Tile tile;
  place(tile, arith::SelectOp::create(
                  b, isPair, arith::DivUIOp::create(b, unit, freshUnitsPerHead),
                  arith::AddIOp::create(
                      b, w.firstTailHead,
                      arith::RemUIOp::create(b, k, perLength))));
  Value two = arith::AndIOp::create(
      b, arith::AndIOp::create(b, freshPair, isPair),
      arith::CmpIOp::create(b, arith::CmpIPredicate::ne, mirror, inHead));
  Value count = arith::SelectOp::create(b, two, c32(2), one);
  auto inner =
      scf::ForOp::create(b, c32(0), count, one, outer.getRegionIterArgs());
  {
    OpBuilder::InsertionGuard gi(b);
    b.setInsertionPointToStart(inner.getBody());
    Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                        inner.getInductionVar(), c32(0));
    Value pairBlock = arith::SelectOp::create(b, first, mirror, inHead);
    tile.queryBlock =
        toIndex(arith::SelectOp::create(b, isPair, pairBlock, single));
    scf::YieldOp::create(b, body(tile, inner.getRegionIterArgs()));
  }
  scf::YieldOp::create(b, inner.getResults());
  return outer.getResults();
}

SmallVector<Value> PersistentTileScheduler::forEachPackedTile(ValueRange init,
                                                              Body body) {
  auto c32 = [&](int64_t v) { return ::c32(b, v); };
  Value one = c32(1);
  Value heads32 = to32(b, heads);
  Value mostBlocks =
      arith::CeilDivUIOp::create(b, to32(b, seqQ), c32(blockM));
  Value grid = to32(b, gpu::GridDimOp::create(b, gpu::Dimension::x));
  // Pairs where the grid is smaller than the tiles, as the dense walk's;
  // with a block a tile, causal blocks go longest first.
  Value pair;
  Value unitsPerHead = mostBlocks;
  if (pairMirrors) {
    Value tiles = arith::MulIOp::create(
        b, arith::MulIOp::create(b, mostBlocks, heads32), to32(b, batch));
    pair = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, grid, tiles);
    unitsPerHead = arith::SelectOp::create(
        b, pair, arith::CeilDivUIOp::create(b, mostBlocks, c32(2)),
        mostBlocks);
  }
  Value units = arith::MulIOp::create(
      b, arith::MulIOp::create(b, unitsPerHead, heads32), to32(b, batch));
  // The CTA's units cta, cta + grid, ... counted from 0, the unit
  // recomputed in each from the CTA's coordinates read afresh: the
  // producer, at 40 registers, spilled the grid size held as the step.
  Value cta = to32(b, gpu::BlockIdOp::create(b, gpu::Dimension::x));
  Value items = arith::SelectOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, cta, units),
      arith::CeilDivUIOp::create(b, arith::SubIOp::create(b, units, cta),
                                 grid),
      c32(0));
  auto outer = scf::ForOp::create(b, c32(0), items, one, init);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(outer.getBody());
  Value unit = arith::AddIOp::create(
      b, to32(b, readRegister("ctaid.x")),
      arith::MulIOp::create(b, outer.getInductionVar(),
                            to32(b, readRegister("nctaid.x"))));
  Value inHead = arith::RemUIOp::create(b, unit, unitsPerHead);
  Value headBatch = arith::DivUIOp::create(b, unit, unitsPerHead);
  Tile tile;
  tile.head = toIndex(b, arith::RemUIOp::create(b, headBatch, heads32));
  tile.batch = toIndex(b, arith::DivUIOp::create(b, headBatch, heads32));
  // The sequence's own blocks: n - 1 - i first (the longer under a causal
  // mask), then i unless it is the same block; a unit at or past them has
  // none.
  Value blocks = packedBlocksOf(tile.batch);
  Value mirror =
      arith::SubIOp::create(b, arith::SubIOp::create(b, blocks, one), inHead);
  Value count;
  if (pairMirrors) {
    // Signed: n - 2i is negative for the units past a short sequence.
    Value left = arith::SubIOp::create(
        b, blocks, arith::MulIOp::create(b, inHead, c32(2)));
    Value pairCount = arith::MinSIOp::create(
        b, arith::MaxSIOp::create(b, left, c32(0)), c32(2));
    Value single = arith::ExtUIOp::create(
        b, b.getI32Type(),
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, inHead, blocks));
    count = arith::SelectOp::create(b, pair, pairCount, single);
  } else {
    count = arith::ExtUIOp::create(
        b, b.getI32Type(),
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, inHead, blocks));
  }
  auto inner =
      scf::ForOp::create(b, c32(0), count, one, outer.getRegionIterArgs());
  {
    OpBuilder::InsertionGuard gi(b);
    b.setInsertionPointToStart(inner.getBody());
    Value block = inHead;
    if (pairMirrors) {
      Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                          inner.getInductionVar(), c32(0));
      block = arith::SelectOp::create(b, first, mirror, inHead);
    }
    tile.queryBlock = toIndex(b, block);
    scf::YieldOp::create(b, body(tile, inner.getRegionIterArgs()));
  }
  scf::YieldOp::create(b, inner.getResults());
  return outer.getResults();
}
