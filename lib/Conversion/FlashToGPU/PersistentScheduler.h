//===- PersistentScheduler.h - a persistent grid's tile walk -*- C++ -*-===//
//
// The tile scheduler of a persistent forward: a grid of about one CTA per
// SM (the runtime launches min(SMs, tiles), manifest key `grid
// persistent`), each CTA walking work units blockIdx.x, blockIdx.x +
// gridDim.x, ... until none is left. A CTA then pays its prologue (barrier
// set-up, register reallocation) once, and the next tile's loads overlap
// this tile's epilogue where the recipe lets them (Sm90WsForward.cpp).
//
// A unit is one query block of one (query head, batch), or, under a causal
// mask, the pair of query blocks M-1-i and i (the longer first): the key
// bands of such a pair add up to about M blocks for every i, so a static
// round-robin over units gives every CTA the same work where a round-robin
// over single blocks would not (with 132 CTAs and M = 16 blocks, CTA c
// would always get blocks c, c+4, c+8, c+12 mod 16: a fixed share of long
// or of short ones). Equal units still leave the last round to units mod
// gridDim.x CTAs (2048 pairs on 132 CTAs: 15.5 rounds, 3% of the CTAs'
// time idle), so the (head, batch) pairs of that round and one more are
// walked as single blocks, longest first, the CTAs taking them in turn
// and in reverse turn every other round; the CTAs with one pair more take
// the shortest (docs/PERF.md runs 400-403: 1-3% at 1k-4k keys). With a
// block per tile (gridDim.x >= tiles: the
// runtime's grid for long sequences) a unit is one query block under a
// causal mask too, the longest first, as the one-block-per-tile grid had
// them. Units are numbered query-block-fastest, as blockIdx.x
// of the one-block-per-tile grid, so the CTAs that run at one time read
// the K/V of a few heads, which stay in L2.
//
// A packed batch's walk (withPackedBlocks; VarlenScheduler.h) has the
// units of a batch of the longest sequence's blocks, each unit's sequence
// counting its own: a unit past them is skipped, and a causal pair is the
// sequence's own blocks n-1-i and i (n its count), so that a pair is still
// about n blocks of keys. No tail of single blocks: the rounds' work
// differs by sequence anyway.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_PERSISTENTSCHEDULER_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_PERSISTENTSCHEDULER_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <functional>

namespace mlir::flash {

class PersistentTileScheduler {
public:
  /// One tile: its query block (index of block_m rows), query head, batch.
  struct Tile {
    Value queryBlock, head, batch;
  };
  using Body =
      function_ref<SmallVector<Value>(const Tile &tile, ValueRange carried)>;

  /// Tiles of `blockM` rows over `seqQ` query rows, `heads` query heads
  /// and `batch` sequences; `pairMirrors` under a causal mask.
  /// `readRegister(name)`: a special register (ctaid.x, nctaid.x) as an
  /// index, read where LLVM cannot reuse an earlier read, for the causal
  /// walk to recompute its plan in each tile instead of holding it.
  PersistentTileScheduler(ImplicitLocOpBuilder &b, int64_t blockM, bool pairMirrors,
                          Value seqQ, Value heads, Value batch,
                          std::function<Value(StringRef)> readRegister)
      : b(b), blockM(blockM), pairMirrors(pairMirrors), seqQ(seqQ),
        heads(heads), batch(batch), readRegister(std::move(readRegister)) {}

  /// Makes the walk a packed batch's: `seqQ` is the longest sequence's
  /// length, `batch` the count of sequences, and `queryBlocksOf(batch)`
  /// (an i32 from an index) the given sequence's own count of query blocks.
  void withPackedBlocks(std::function<Value(Value)> queryBlocksOf) {
    packedBlocksOf = std::move(queryBlocksOf);
  }

  /// Builds this CTA's walk: `body` runs once per tile, in the order every
  /// role of the CTA sees (producer and consumers must agree), with the
  /// values it returned for the previous tile (`init` for the first);
  /// returns those of the last.
  SmallVector<Value> forEachTile(ValueRange init, Body body);

private:
  SmallVector<Value> forEachPackedTile(ValueRange init, Body body);

  ImplicitLocOpBuilder &b;
  int64_t blockM;
  bool pairMirrors;
  Value seqQ, heads, batch;
  std::function<Value(StringRef)> readRegister;
  std::function<Value(Value)> packedBlocksOf;
};

} // namespace mlir::flash

#endif
