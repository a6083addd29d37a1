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
#include "Sm90Forward.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::flash {

class Sm90WsForwardBuilder : public Sm90ForwardBuilder {
public:
  using Sm90ForwardBuilder::Sm90ForwardBuilder;
  void buildWarpSpecialized();

protected:
  int64_t producerThreads() const { return s.producerWarps() * 32; }
  int64_t consumerThreads() const { return s.warps * 32; }

  // The mbarriers: [0] Q landed; [1, 1 + stages) K/V buffer full;
  // [1 + stages, 1 + 2 stages) K/V buffer empty.
  Value barriers;
  Value fullBarrier(Value stage) {
    return arith::AddIOp::create(b, stage, frag::cIdx(b, 1));
  }
  Value emptyBarrier(Value stage) {
    return arith::AddIOp::create(b, stage, frag::cIdx(b, 1 + s.stages));
  }
  void createBarriers();
  /// Waits until barrier `id` has completed the phase of parity `round`
  /// (0, 1, 0, ...: the round-th completion).
  void waitBarrier(Value id, Value round);

  /// The producer thread's copies: Q, then each key block of [nStart, nEnd).
  void produce(Value nStart, Value nEnd);
  /// One TMA copy per 128-byte swizzle row of a `rows` x `cols` tile
  /// (elements) through tensor map `<op>_map` ([B][H][rows][cols] of the
  /// operand), from row `row` and column `col0` (null: 0) of (head `h`,
  /// batch), into the swizzled tiles at `offset` (16-bit units, as
  /// swizzledAddress counts), completing on barrier `bar`.
  void copyTile(StringRef op, Value col0, Value row, Value h, Value offset,
                int64_t rows, int64_t cols, Value bar);
  /// The copies of key block `j` into buffer `stage`, completing on `full`:
  /// its K and V tiles.
  virtual void copyKeyBlock(Value j, Value stage, Value full);
  /// Called first in the consumers' branch, before their key loop.
  virtual void prepareConsumers() {}

  // The consumers' key loop waits for "full" and releases with "empty".
  bool overlapped() const override { return true; }
  void acquireFirstBlock(Value nStart) override;
  void acquireBlock(Value j, Value nStart, Value anyGroup) override;
  void releaseBlock(Value block, Value nStart) override;
  /// The round (how many times the ring has wrapped) of key block `block`.
  Value roundOf(Value block, Value nStart) {
    return arith::DivUIOp::create(b, arith::SubIOp::create(b, block, nStart),
                                  frag::cIdx(b, s.stages));
  }

  /// The consumers number their warps from 0 (the shared schedule's row
  /// layout), after the producer warpgroup.
  void shiftToConsumers() {
    setThreadCoordinates(
        arith::SubIOp::create(b, tid, frag::cIdx(b, producerThreads())));
  }
  void rereadCoordinates() override {
    Sm90ForwardBuilder::rereadCoordinates();
    shiftToConsumers();
  }
  void syncComputeWarps() override;
  Value cI32(int64_t v) {
    return arith::ConstantOp::create(b, b.getI32IntegerAttr(v));
  }
};

} // namespace mlir::flash

#endif
