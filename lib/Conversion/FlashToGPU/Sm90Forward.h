//===- Sm90Forward.h - the sm90 recipe's forward matrix engine -*- C++ -*-===//
//
// The wgmma engine of the forward schedule (ForwardBuilder): Q, K and V in
// 128-byte-swizzled tiles filled by cp.async, S = Q·Kᵀ and O += P·V as
// warpgroup MMAs (Sm90Forward.cpp). The dense forward kernel is this class
// as it is; the packed-batch forward is it under the varlen tile scheduler
// (VarlenScheduler.h).
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_SM90FORWARD_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_SM90FORWARD_H

#include "ForwardBuilder.h"

namespace mlir::flash {

class Sm90ForwardBuilder : public ForwardBuilder {
public:
  using ForwardBuilder::ForwardBuilder;

protected:
  Value qDesc;    // this warpgroup's 64 rows of Q, k-step 0
  /// qDesc of the warpgroup of `warp`.
  Value warpgroupQDescriptor();

  void carveSharedMemory() override;
  Value loadQTile() override;
  Value loadKVBlock(Value block, Value stage) override;
  void publishTiles() override { fenceGenericToAsyncProxy(); }
  SmallVector<Frags> computeScores(ArrayRef<Frags> qRegs, Value stage) override;
  void accumulateOutput(SmallVector<Value> &acc, const PackedP &packedP,
                        Value stage) override;
  int64_t prefetchDistance() override {
    return overlapped() ? s.stages - 2 : s.stages - 1;
  }
  SoftmaxState buildKeyLoop(ArrayRef<Frags> qOps, Value nStart, Value nEnd,
                            const SoftmaxState &init, Value anyGroup) override;

  /// The overlapped loop keeps V_{j-1} while K_j is read and K/V_{j+1} is
  /// copied: three stages at least.
  virtual bool overlapped() const { return s.stages >= 3; }

  //===--- The operand producer's side of the overlapped key loop --------===//
  /// Makes the first block's tiles readable before its S (the prologue
  /// published them; cp.async starts the next prefetch).
  virtual void acquireFirstBlock(Value nStart);
  /// Makes block j's tiles readable at the top of iteration j (cp.async:
  /// wait for its group, publish, barrier, prefetch ahead; `anyGroup` is a
  /// commit-group token).
  virtual void acquireBlock(Value j, Value nStart, Value anyGroup);
  /// Called once every product reading block `block`'s stage has completed
  /// (the stage may be refilled); nothing for cp.async, whose barrier at
  /// the next iteration's top orders the refill.
  virtual void releaseBlock(Value block, Value nStart) {}
  /// Makes block `block`'s V tile readable before its P·V product is
  /// issued, where K and V land apart (the sm90ws ring); acquireBlock
  /// covered both for cp.async.
  virtual void acquireValues(Value block, Value nStart) {}
  /// Called once the last block's V tile is readable, before its P·V (the
  /// only block that may hold rows past the keys): where those rows are
  /// not zeros (the sm90ws forward of a packed batch reads the next
  /// sequence's), the recipe zeroes them, since P = 0 there does not
  /// cancel a NaN or Inf.
  virtual void clearValuesPastKeys(Value lastBlock, Value nStart) {}
  /// Called once S of block `block` has completed: its K tile may be
  /// refilled while its V tile still serves the P·V product.
  virtual void releaseKeys(Value block, Value nStart) {}
  /// Around each issue of the block's products: a recipe whose warpgroups
  /// take turns at the tensor cores waits for its turn and hands it on.
  virtual void awaitIssueTurn() {}
  virtual void passIssueTurn() {}
  /// Starts the cp.async copies of block + prefetchDistance().
  void prefetchAhead(Value block, Value nStart);
  /// Issues S = Q Kᵀ of the block in `stage` and commits it as one group;
  /// the block_n / 2 accumulators are valid after its wait.
  virtual SmallVector<Value> issueScores(Value stage);
  /// Issues O += P V of the block in `stage` (o: Dv / 2 accumulators, p:
  /// block_n / 4 packed registers) and commits it as one group.
  virtual SmallVector<Value> issueOutput(ArrayRef<Value> o, ArrayRef<Value> p,
                                         Value stage);
  /// Between the warp-slice accumulators (nTilesN or nTilesDv m16n8
  /// fragments) and the wgmma register list, and P to its register list.
  SmallVector<Frags> toFragments(ArrayRef<Value> regs);
  SmallVector<Value> fromFragments(ArrayRef<Value> frags);
  virtual SmallVector<Value> packedRegisters(const PackedP &p);
  /// O += P V of the block in `stage`, issued and waited for (acc: the
  /// nTilesDv fragments, pRegs: P's register list); `issued` runs between
  /// the issue and the wait.
  void outputAndWait(SmallVector<Value> &acc, ArrayRef<Value> pRegs,
                     Value stage, function_ref<void()> issued = {});
  /// The ring buffer of key block `block`.
  Value stageOf(Value block, Value nStart);
  /// How many key blocks went through the ring before block `block`:
  /// block - nStart, plus ringBase where a persistent scheduler's earlier
  /// tiles used it.
  Value ringPosition(Value block, Value nStart);
  Value ringBase;

  /// Element offsets of the K and V tiles of `stage`.
  /// Copies `rows` x `cols` of operand `name` from row `rowStart` into the
  /// swizzled tile at element `offset`.
  void copyOperand(StringRef name, Value base, Value rowStride, Value rowStart,
                   Value offset, int64_t rows, int64_t cols,
                   SmallVectorImpl<Value> &tokens,
                   RowCheck check = RowCheck::PerChunk);
};

} // namespace mlir::flash

#endif
