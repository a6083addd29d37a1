//===- Sm90WsForward.h - the warp-specialised Hopper forward -*- C++ -*-===//
//
// The sm90ws recipe's builder (Sm90WsForward.cpp): a TMA producer
// warpgroup and two wgmma consumer warpgroups over the sm90 forward's
// mainloop. The FP8 forward (Sm90Fp8Forward.cpp) is this schedule with
// e4m3 tiles, the e4m3 wgmma and its P layout.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_SM90WSFORWARD_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_SM90WSFORWARD_H

#include "Fragments.h"
#include "PersistentScheduler.h"
#include "Sm90Forward.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <memory>

namespace mlir::flash {

class Sm90WsForwardBuilder : public Sm90ForwardBuilder {
public:
  using Sm90ForwardBuilder::Sm90ForwardBuilder;
  void buildWarpSpecialized();

protected:
  int64_t producerThreads() const { return s.producerWarps() * 32; }
  int64_t consumerThreads() const { return s.warps * 32; }

  // The mbarriers (KernelBuilderBase::barriers): [0] Q landed; [1, 1 +
  // stages) K/V buffer full; [1 + stages, 1 + 2 stages) K/V buffer empty;
  // [1 + 2 stages] Q read (every consumer is done with the tile's Q: the
  // next one may land). With keysApart(), those two ranges are the K
  // tiles', and [2 + 2 stages, 2 + 3 stages) V tile full, [2 + 3 stages,
  // 2 + 4 stages) V tile empty.
  Value qEmptyBarrier() { return frag::cIdx(b, 1 + 2 * s.stages); }
  Value keysFullBarrier(Value stage) { return barrierOf(stage, 1); }
  Value keysEmptyBarrier(Value stage) {
    return barrierOf(stage, 1 + s.stages);
  }
  Value valuesFullBarrier(Value stage) {
    return keysApart() ? barrierOf(stage, 2 + 2 * s.stages)
                       : keysFullBarrier(stage);
  }
  Value valuesEmptyBarrier(Value stage) {
    return keysApart() ? barrierOf(stage, 2 + 3 * s.stages)
                       : keysEmptyBarrier(stage);
  }
  /// Whether a block's K and V tiles land and are given back apart: K once
  /// S has read it, V once P·V has, an iteration later. Iteration j reads
  /// K_j and V_{j-1}, so a ring of two whole blocks has none free to copy
  /// into before iteration j ends and the next S waits for the copy; apart,
  /// K_{j+1} copies while P·V_{j-1} still runs (FlashAttention-3's two
  /// pipelines). From three stages the ring runs ahead anyway, and the
  /// extra arrive and wait per block cost 1-2% (H100, run 162).
  bool keysApart() const { return s.stages == 2; }
  Value barrierOf(Value stage, int64_t first) {
    return arith::AddIOp::create(b, stage, frag::cIdx(b, first));
  }
  void createBarriers();

  /// Ping-pong (KernelSpec::issuesInTurns): consumer warpgroup w waits at
  /// named barrier 2 + w before issuing a block's products and arrives at
  /// the next one's after (the other of two; of three, in a ring);
  /// warpgroup 0 starts with its own turn.
  void awaitIssueTurn() override;
  void passIssueTurn() override;
  Value consumerWarpgroup();

  /// The persistent walk over the tiles (PersistentScheduler.h) and the
  /// tile it places: mStart, head, headKV and batchIdx.
  std::unique_ptr<PersistentTileScheduler> scheduler;
  void placeTile(const PersistentTileScheduler::Tile &tile);
  /// The CTA's tiles in the scheduler's order, each placed, with ringBase
  /// and the tile's count (i32 0, 1, ...: the Q barriers' phase) carried;
  /// `tileBody(count)` builds one tile's work and returns how many key
  /// blocks went through the ring (i32).
  void walkTiles(function_ref<Value(Value)> tileBody);
  /// ringBase in 32 bits, for the producer.
  Value ring32;
  Value to32(Value v);
  /// The producer thread's copies for every tile of the CTA.
  void produce();
  /// Those of one tile, the `count`-th of the CTA: its first key blocks,
  /// its Q once the previous tile's is read, then the rest of its key
  /// blocks.
  Value produceTile(Value count);
  /// The copies of key blocks [from, to) (i32, as nStart) into the ring,
  /// each once its buffer is free.
  void produceKeyBlocks(Value from, Value to, Value nStart);
  /// The consumers' share of one tile, the `count`-th of the CTA: wait for
  /// Q, the key loop, the epilogue, and the buffers given back.
  Value consumeTile(Value count);
  /// Whether O is staged in the last key block's V buffer (held until the
  /// epilogue has copied it out) rather than in the Q tile: the V buffer
  /// holds block_n >= block_m rows of Dv.
  bool stagesOutputInV() const {
    return stagesOutput() && s.blockN >= s.blockM;
  }
  /// The copies of key block `j`'s K tile and V tile into buffer `stage`,
  /// each completing on its own barrier.
  virtual void copyKeys(Value j, Value stage, Value full);
  virtual void copyValues(Value j, Value stage, Value full);
  /// The first key of the block the producer copies into `stage` as step
  /// `j`: keyStartAt(j), or the key table's entry it published.
  Value producedKeyStart(Value j, Value stage);

  /// The key table (KernelSpec::publishesKeyBlocks; null elsewhere): one
  /// i32 a ring stage after the tiles, the key block the stage holds, bit
  /// 31 set where mask_mod applies (a partial block). A block-sparse walk's
  /// block then comes from the lists once, in the producer, instead of
  /// from a chain of dependent global loads in every consumer thread's
  /// key loop, between S and the softmax (2-4% of a block-sparse
  /// forward, docs/PERF.md run 209). The producer writes a stage's entry
  /// before it arms the stage's "full" barrier, whose arrive releases the
  /// store; the consumers read it as soon as that barrier completes,
  /// before they give the stage's K back (after which the producer may
  /// rewrite it).
  Value keyTable;
  /// The entry of the block the consumers acquired last (acquireBlock):
  /// what the masks of that step read.
  Value acquiredEntry;
  void publishKeyBlock(Value j, Value stage);
  /// The key block of a table entry (index).
  Value entryBlock(Value entry);
  Value scoredKeyStart(Value position) override;
  Value scoredMaskModApplies(Value position) override;
  /// Called in the consumers' branch once a tile is placed, before its key
  /// loop over blocks [nStart, nEnd) (the FP8 forward reads the tile's
  /// descales).
  virtual void prepareTile(Value nStart, Value nEnd) {}

  // The consumers' key loop waits for "full" and releases with "empty".
  bool overlapped() const override { return true; }
  void acquireFirstBlock(Value nStart) override;
  void acquireBlock(Value j, Value nStart, Value anyGroup) override;
  void acquireValues(Value block, Value nStart) override;
  void releaseKeys(Value block, Value nStart) override;
  void releaseBlock(Value block, Value nStart) override;
  /// A packed batch's (s.varlen): its tensor maps span every sequence's
  /// rows, so the last block's V rows past the sequence's keys are the next
  /// sequence's (or unowned rows, or a cache's unwritten ones), not the
  /// zeros a dense map gives past its end. Each consumer warpgroup zeroes
  /// them all itself (both write the same zeros, so neither waits for the
  /// other) and passes its own named barrier.
  void clearValuesPastKeys(Value lastBlock, Value nStart) override;
  /// The round (how many times the ring has wrapped) of key block `block`.
  Value roundOf(Value block, Value nStart) {
    return arith::DivUIOp::create(b, ringPosition(block, nStart),
                                  frag::cIdx(b, s.stages));
  }

  /// The consumers number their warps from 0 (the shared schedule's row
  /// layout), after the producer warpgroup.
  void shiftToConsumers() {
    setThreadCoordinates(
        arith::SubIOp::create(b, tid, frag::cIdx(b, producerThreads())));
  }
  /// The thread's coordinates afresh; the tile's stay those placeTile set
  /// (a persistent CTA's block index is not its tile).
  void rereadCoordinates() override {
    Value h = head, batch = batchIdx;
    Sm90ForwardBuilder::rereadCoordinates();
    shiftToConsumers();
    head = h;
    batchIdx = batch;
  }
  Value rereadFirstRow() override { return mStart; }
  void syncComputeWarps() override;
};

} // namespace mlir::flash

#endif
