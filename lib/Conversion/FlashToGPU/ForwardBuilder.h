//===- ForwardBuilder.h - the forward schedule, shared by recipes -*- C++ -*-===//
//
// FlashAttention's forward, once: the walk over the key blocks of the
// causal/window band, the K/V pipeline through shared memory, the score
// pipeline and masks on the fragments, the online softmax (exp2, running max
// and sum), P re-packed in registers, and the O/LSE epilogue. Every warp owns
// 16 * mt consecutive query rows and holds its scores and output in the
// accumulator layout of mma.sync m16n8 (Fragments.h), which is also the
// layout of a warp's slice of a wgmma m64nN accumulator.
//
// What differs between recipes is the matrix engine and the shared-memory
// layout it reads: the hooks below. The sm80 recipe (Sm80Forward.cpp) uses
// ldmatrix + mma.sync on padded tiles; the sm90 recipe (Sm90Forward.cpp)
// uses wgmma on 128-byte-swizzled tiles.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_FORWARDBUILDER_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_FORWARDBUILDER_H

#include "KernelBuilderBase.h"

#include <array>

namespace mlir::flash {

class ForwardBuilder : protected KernelBuilderBase {
public:
  ForwardBuilder(gpu::GPUFuncOp func, const KernelSpec &spec)
      : KernelBuilderBase(func, spec) {}
  virtual ~ForwardBuilder() = default;

  void build();

protected:
  using Frags = SmallVector<Value>;
  /// P of one key block, packed to 16 bits: [m][n][i] holds columns
  /// 8n + 2t, 8n + 2t + 1 of fragment row (m, i).
  using PackedP = SmallVector<SmallVector<std::array<Value, 2>>>;

  // Block-invariant values.
  Value qBase, kBase, vBase, qStrideS, kStrideS, vStrideS;
  Value mStart; // first query row of this block
  int64_t mt = 0, nTilesN = 0, nTilesD = 0, nTilesDv = 0;
  /// First key of this warp within each key block: set where warps split
  /// the keys (KernelSpec::keyWarps; null, i.e. 0, where they split rows).
  Value warpKeyOffset;
  /// First row of this warp's m-tiles within the block.
  virtual Value warpFirstRow();

  /// The swizzled layout (Swizzle.h) both engines use: Q, then `stages` K
  /// tiles, then `stages` V tiles in swizzledTiles; element counts of one
  /// tile and the element offsets of a stage's K and V tiles.
  virtual void carveSwizzledQKV();
  int64_t qElems = 0, kElems = 0, vElems = 0;
  Value kOffset(Value stage);
  Value vOffset(Value stage);

  //===--- The recipe's hooks --------------------------------------------===//
  /// Lays out the Q tile and the `stages` K/V buffers in shared memory.
  virtual void carveSharedMemory() = 0;
  /// Starts the copy of the block's Q tile; its commit-group token.
  virtual Value loadQTile() = 0;
  /// Starts the copies of key block `block` into buffer `stage`, as one
  /// commit group; its token.
  virtual Value loadKVBlock(Value block, Value stage) = 0;
  /// Called by every thread after its copies have landed, before the
  /// barrier that publishes them to the block.
  virtual void publishTiles() {}
  /// Whether Q's A operands are read into registers once, before the loop.
  virtual bool keepsQInRegisters() { return false; }
  /// The A operand of Q for m-tile m and k-step kk (keepsQInRegisters()).
  virtual Frags loadQOperand(int64_t m, int64_t kk) { return {}; }
  /// S = Q Kᵀ for one key block: [mt][nTilesN] accumulators. `qRegs` holds
  /// the A operands of Q, [m * D/16 + kk], when keepsQInRegisters().
  virtual SmallVector<Frags> computeScores(ArrayRef<Frags> qRegs,
                                          Value stage) = 0;
  /// acc[m * nTilesDv + n] += P · V for one key block in buffer `stage`.
  virtual void accumulateOutput(SmallVector<Value> &acc, const PackedP &p,
                                Value stage) = 0;

  /// The copies of one key block's K and V tiles, as one commit group: the
  /// waits count one group per block, so a separate K group would make the
  /// wait for a block also wait for the next block's K, serialising the
  /// prefetch. `copyKV(check, tokens)` issues them. Swizzled tiles take one
  /// branch on whether the block overhangs Sk (KernelBuilderBase::RowCheck)
  /// except in dropout kernels and, on the sm80 recipe, the per-element
  /// variants (bias, score_mod, mask operands); those and the padded tiles
  /// (D = 32, in 128 registers) keep per-chunk checks, with which ptxas fits
  /// them without spills (compile-ptxas*.mlir). Rows from `rowLimit` (Sk
  /// unless given) are not read.
  Value commitKVCopies(
      Value rowStart,
      function_ref<void(RowCheck, SmallVectorImpl<Value> &)> copyKV,
      Value rowLimit = Value());

  /// How many key blocks the prologue starts before the loop (the loop
  /// keeps that many in flight).
  virtual int64_t prefetchDistance() { return s.stages - 1; }

  /// What the key loop carries: O accumulators [mt * nTilesDv], the running
  /// row max m and partial row sum l of rows g and g+8 of each m-tile
  /// ([2 * mt], log2 domain).
  struct SoftmaxState {
    SmallVector<Value> acc, rowMax, rowSum;
    SmallVector<Value> flat() const;
  };
  SoftmaxState unflatten(ValueRange values) const;
  /// One key block's softmax update: the new m and l, the factor alpha
  /// ([mt][2]) that rescales O, and P packed for the second matmul.
  struct SoftmaxStep {
    SmallVector<Value> rowMax, rowSum;
    SmallVector<SmallVector<Value>> alpha;
    PackedP p;
  };
  /// The walk over key blocks [nStart, nEnd); returns the final state.
  /// FlashAttention-2's order: per block, wait for its K/V, S = Q Kᵀ,
  /// softmax, O = alpha O + P V. `anyGroup` is a commit-group token.
  virtual SoftmaxState buildKeyLoop(ArrayRef<Frags> qOps, Value nStart,
                                    Value nEnd, const SoftmaxState &init,
                                    Value anyGroup);
  /// The head of step `position` of that walk (from `nStart`): starts the
  /// copies of the block `stages` - 1 ahead, waits for this step's and
  /// publishes them; returns the ring stage this step reads.
  Value acquireKeyBlock(Value position, Value nStart);

  //===--- The tile scheduler's hooks ------------------------------------===//
  /// Reads the arguments and places the block: its batch, heads, first
  /// query row (mStart) and the operands' bases. The grid forward: one
  /// block per (query block, query head, batch).
  virtual void readForwardArguments();
  /// The key blocks this block walks, [first, end): the causal/window
  /// band of its rows (split-KV decode takes its split's share of it).
  /// With a key-block iterator, the positions of its walk.
  virtual std::pair<Value, Value> blockKeyRange();
  /// A persistent walk's hooks (Sm90WsForward.cpp): where a tile's batch
  /// is a sequence of its own (a packed batch), the count of query blocks
  /// of sequence `batch` (i32; null: every batch has the walk's count),
  /// and the tile's sequence placed once batchIdx, head and mStart are the
  /// tile's.
  virtual Value queryBlocksOfBatch(Value batch) { return Value(); }
  virtual void placeTileSequence() {}

  //===--- The key-block iterator's hooks --------------------------------===//
  /// The key block (of block_n keys) that step `position` of the key loop
  /// fetches and scores: the position itself in a dense walk; the
  /// block-sparse iterator (BlockSparseIterator.h) maps positions to the
  /// blocks its lists name. Must create nothing in a dense walk, whose IR
  /// stays that of the walk over positions.
  virtual Value keyBlockAt(Value position) { return position; }
  /// i1, whether the element masks (mask_mod) apply at step `position`;
  /// null where they always do (a dense walk). The block-sparse iterator
  /// answers false for full blocks, which then skip mask_mod and, inside
  /// the band and below Sk, all mask work.
  virtual Value appliesMaskMod(Value position) { return Value(); }
  /// keyBlockAt(position) * block_n: the first key of step `position`.
  Value keyStartAt(Value position);
  /// The same two answers where the key loop uses them (the masks and the
  /// score pipeline of step `position`, after the step's block was
  /// acquired): keyStartAt and appliesMaskMod, unless a recipe's producer
  /// handed them over with the block (the sm90ws forward's key table).
  virtual Value scoredKeyStart(Value position) { return keyStartAt(position); }
  virtual Value scoredMaskModApplies(Value position) {
    return appliesMaskMod(position);
  }
  /// The query position (i32) of fragment row (m, i), which the masks and
  /// the score pipeline see.
  virtual Value rowOf(int64_t m, int64_t i);
  /// ALiBi's slope of fragment row (m, i) (KernelSpec::alibi): the tile's
  /// (readTileAlibiSlope, before the key loop); the decode, whose rows are
  /// several heads', answers with the slopes it read before the key loop.
  virtual Value rowAlibiSlope(int64_t m, int64_t i) {
    return alibiSlope ? alibiSlope : alibiSlopeOf(head);
  }
  /// log2 of the factor P is scaled by before the P·V product (0: none):
  /// the FP8 forward's 8, so that P ≤ 256 uses e4m3's normal range.
  virtual float probabilityLog2Scale() const { return 0; }
  /// The 16-bit type P is rounded to for the P·V product: the element type,
  /// unless a recipe reads V in another (Sm80Decode.cpp, FP8 caches).
  virtual Type probabilityType() const { return s.elementType; }
  /// A per-block factor of O (null: none): the FP8 forward's v_descale.
  virtual Value outputFactor() { return Value(); }
  /// Called in the overlapped loop's step for key block `position`
  /// (`first`: the walk's first block, which has no P·V before it) once its
  /// products are issued, before they are waited for: the FP8 forward
  /// issues its per-block descale loads here, so that their latency hides
  /// behind the products. (Not before the products: wgmma's fence waits for
  /// every register write in flight, a load's included.) The FA2 loop
  /// calls it after S (with `first` false: it rescales O at every block).
  /// Creates nothing elsewhere.
  virtual void beginKeyBlock(Value position, bool first) {}
  /// Called before the scores of key block `position` are masked and enter
  /// the softmax: the FP8 forward with per-block descales sets that block's
  /// score factor (scoreFactor, scaleOverride) here. Creates nothing
  /// elsewhere. Both key loops restore the two after the walk.
  virtual void enterKeyBlock(Value position) {}
  /// The factors O is rescaled by once block `position`'s softmax is known,
  /// before its P·V is added: alpha itself, or the FP8 forward's alpha ·
  /// dv(position - 1) / dv(position) with per-block v_descales (O is kept
  /// in units of the current block's factor; outputFactor() applies the
  /// last one).
  virtual SmallVector<SmallVector<Value>>
  outputRescale(ArrayRef<SmallVector<Value>> alpha, Value position) {
    return SmallVector<SmallVector<Value>>(alpha.begin(), alpha.end());
  }
  /// O = acc / l and LSE from the key loop's final state (the caller ends
  /// the kernel, or a persistent scheduler's tile, after it).
  virtual void writeEpilogue(const SoftmaxState &final);
  /// The block's first query row again for the staged epilogue, from
  /// coordinates read afresh (rereadCoordinates); a persistent scheduler
  /// gives its tile's instead.
  virtual Value rereadFirstRow();
  /// Element offset in swizzledTiles of the tile O is staged in (null: 0,
  /// the Q tile); the persistent sm90ws forward stages O in the last key
  /// block's V buffer, so that the next tile's Q can land meanwhile.
  Value outputStagingOffset;
  Value stagingOffset(Value at);
  /// Element offset in `lse` of the block's row 0 (its batch and head):
  /// (b * Hq + h) * Sq for [B, Hq, Sq]; a packed batch's scheduler
  /// offsets it by its sequence's first row.
  virtual Value lseRowStart();
  /// Fragment row (m, i)'s final statistics: 1 / l (0 for a row that saw
  /// no key) and its LSE (natural log; `emptyLse` for such a row).
  std::pair<Value, Value> finalRowStatistics(const SoftmaxState &final,
                                             int64_t m, int64_t i,
                                             float emptyLse);
  /// The same from a row's whole sum `l` and max `mx` (log2 domain).
  std::pair<Value, Value> rowStatistics(Value l, Value mx, float emptyLse);

  //===--- Shared pieces -------------------------------------------------===//
  /// The score pipeline and masks, inside a branch taken only by blocks
  /// that can hold masked elements; `position`, where given, is the key
  /// loop's step (appliesMaskMod).
  void maskScores(SmallVector<Frags> &sc, Value kvStart,
                  Value position = Value());
  /// The online-softmax update of state `st` by the scores of one block.
  SoftmaxStep onlineSoftmax(ArrayRef<Frags> sc, const SoftmaxState &st,
                            Value kvStart);
  /// acc[m][n] *= alpha[m][row of the element].
  void rescale(SmallVector<Value> &acc, ArrayRef<SmallVector<Value>> alpha);
  /// rescale, skipped when alpha is 1 for every row of the warp.
  void rescaleUnlessUnit(SmallVector<Value> &acc,
                         ArrayRef<SmallVector<Value>> alpha);
  /// The block's first query row, from its blockIdx.x and gridDim.x.
  Value firstRowOfBlock(Value blockIdX, Value gridDimX);
  /// Its query block (firstRowOfBlock's, in block_m rows).
  Value queryBlockOfBlock(Value blockIdX, Value gridDimX);
  /// The tile order's grid-own tile (KernelBuilderBase::orderedTile): the
  /// causal walk's reversed query blocks.
  Value gridTileBlock(Value blockIdX, Value gridDimX) override {
    return queryBlockOfBlock(blockIdX, gridDimX);
  }
  /// Scale, softcap, bias, score_mod and masks, into the log2 domain;
  /// `maskModApplies` (i1, null: true) gates the element masks.
  void applyScorePipeline(SmallVector<Frags> &sc, Value kvStart, bool masked,
                          Value maskModApplies = Value());
  Value scoreFactor; // scale * log2(e), for plain scores
  Value colOf(Value kvStart32, int64_t n, int64_t j); // key of column (n, j), i32
  /// Whether O goes out through the (swizzled) Q tile in 16-byte stores
  /// rather than straight from the fragments.
  bool stagesOutput() const;
  Value oBase, oStrideS; // set by writeEpilogue
  /// Element offset of query row `row` (index) in O.
  Value outputRowStart(Value row);
  /// Fragment row `row`'s O columns ([2n], [2n + 1] = columns 8n + 2t, +1)
  /// stored to global memory directly.
  void storeOutputRow(Value row, ArrayRef<Value> pairs);
  /// The same into this warp's rows of the Q tile, and those rows copied
  /// out once all of the warp's are there.
  void stageOutputRow(int64_t m, int64_t i, ArrayRef<Value> pairs);
  void copyOutStagedRows();
};

} // namespace mlir::flash

#endif
