//===- BackwardBuilder.h - the backward schedule, shared by recipes -*- C++ -*-===//
//
// FlashAttention-2's backward main kernel, once. One thread block owns
// block_n keys of one (batch, query head): K_j and V_j stay in shared
// memory while the block walks the query blocks the causal/window band lets
// see them, Q_i and dO_i streamed through a `stages`-deep ring. Each warp
// owns 16 * keyTilesPerWarp keys and computes the transposed products, so
// that every intermediate is already the A operand of the next matmul
// (where dK and dV are too wide for one warp's registers, two warps own
// the same keys and each keeps a column group of them,
// KernelSpec::kvColumnGroups):
//   Sᵀ  = K_j Q_iᵀ
//   Pᵀ  = exp2(Sᵀ scale log2e − LSE log2e)   (saved LSE; +inf ⇒ P = 0)
//   dV += (Pᵀ ∘ Z) dO_i         (A = Pᵀ from registers)
//   dPᵀ = V_j dO_iᵀ
//   dSᵀ = Pᵀ ∘ (dPᵀ ∘ Z − Dsum)  [∘ (1 − tanh²) with softcap]
//   dK += dSᵀ Q_i               (A = dSᵀ from registers)
//   dQ_i += dS K_j              (dSᵀ through shared memory; f32 reductions
//                                into dq_accum)
// Z is the dropout factor (1/(1-p) or 0, Philox keep test), Dsum = rowsum(dO ∘ O)
// from the preprocess kernel. scale is applied to dK and dQ once, at the
// end. dK and dV of the block's query head are written in the epilogue:
// into grad_k / grad_v where Hq = Hkv, else one slice per query head, which
// the postprocess kernel sums over each GQA group. In
// deterministic mode the dQ product is left to the BackwardDQ kernel, so
// the main kernel issues no float atomics.
//
// Every warp's slice of Sᵀ, dPᵀ, dK and dV is in the accumulator layout of
// mma.sync m16n8 (Fragments.h), which is also a warp's slice of a wgmma
// m64nN accumulator; the recipes differ in the matrix engine and the
// shared-memory layout it reads: the hooks below. The sm80 recipe
// (Sm80Backward.cpp) uses ldmatrix + mma.sync on padded tiles, the sm90
// recipe (Sm90Backward.cpp) wgmma on 128-byte-swizzled tiles. A packed
// (varlen) batch's kernel is either under VarlenBackwardScheduler
// (VarlenScheduler.h), which places the block in its sequence through the
// hooks of KernelBuilderBase (readBlockArguments, exitPastEnd,
// enterEpilogue, operandBase, sliceRowStart).
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_BACKWARDBUILDER_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_BACKWARDBUILDER_H

#include "KernelBuilderBase.h"

namespace mlir::flash {

class BackwardBuilder : protected KernelBuilderBase {
public:
  BackwardBuilder(gpu::GPUFuncOp func, const KernelSpec &spec)
      : KernelBuilderBase(func, spec) {}
  virtual ~BackwardBuilder() = default;

  /// The kernel: the prologue's copies, walkQueryBlocks, writeGradients.
  void build();

protected:
  using Frags = SmallVector<Value>;

  // Block-invariant values.
  Value kStart;   // first key of the block
  Value warpKey0; // first key row of this warp in the block
  /// The warp's column group of dK and dV (KernelSpec::kvColumnGroups),
  /// null where there is one.
  Value columnGroup;
  Value qBase, doBase, kBase, vBase;
  /// The first query of the block whose scores (Sᵀ, dPᵀ, P, dS) this
  /// warp computes: null (0) where every warp computes every query's,
  /// columnGroup * block_m / 2 where the column groups split them
  /// (KernelSpec::scoresByQueryHalves). nTilesM counts the warp's.
  Value scoreQuery0;
  /// warpKey0, columnGroup and scoreQuery0 of the current `warp`.
  void placeWarp();
  Value rowBaseLse; // (batch * Hq + head) * Sq
  /// The warp's 16-key tiles, its 8-query tiles of the scores, its 8-column
  /// tiles of dK and dV.
  int64_t mk = 0, nTilesM = 0, nTilesD = 0, nTilesDv = 0;

  //===--- The recipe's hooks --------------------------------------------===//
  /// Lays out K, V, the Q/dO ring and the dS tile in shared memory.
  virtual void carveSharedMemory() = 0;
  /// Starts the copies of the block's K and V tiles (prologue).
  virtual void loadKeyValueTiles() = 0;
  /// Starts the copies of query block `block` (Q, then dO: two commit
  /// groups) into ring buffer `stage`; the last group's token.
  virtual Value loadQdOBlock(Value block, Value stage) = 0;
  /// Called by every thread after its copies have landed, before the
  /// barrier that publishes them to the block.
  virtual void publishTiles() {}
  /// The loop-carried dK (dV) accumulators of the warp: `tiles` m16n8
  /// fragments per m-tile, in the recipe's register form, zeroed.
  virtual SmallVector<Value> zeroGradient(int64_t tiles) = 0;
  /// Fragment (m, n) of such an accumulator list.
  virtual Value gradientTile(ArrayRef<Value> acc, int64_t m, int64_t n,
                             int64_t tiles) = 0;
  /// Sᵀ = K Q_iᵀ of the query block in `stage`: [mk][nTilesM] fragments.
  virtual SmallVector<Frags> computeScoresT(Value stage) = 0;
  /// dV += pdT dO_i (pdT = Pᵀ ∘ Z).
  virtual void accumulateDV(SmallVector<Value> &dV, ArrayRef<Frags> pdT,
                            Value stage) = 0;
  /// dPᵀ = V dO_iᵀ: [mk][nTilesM] fragments.
  virtual SmallVector<Frags> computeDPT(Value stage) = 0;
  /// dK += dSᵀ Q_i.
  virtual void accumulateDK(SmallVector<Value> &dK, ArrayRef<Frags> dsT,
                            Value stage) = 0;
  /// dq_accum[query block at qStart, its tiles in `stage`] += scale · dS K
  /// (not in deterministic mode).
  virtual void accumulateDQ(ArrayRef<Frags> dsT, Value qStart,
                            Value stage) = 0;
  /// Called at the top of the query loop's body; the thread coordinates
  /// (tid, lane, warp, g, t, kStart, warpKey0, columnGroup, scoreQuery0)
  /// are restored after the loop.
  /// An engine may replace them by loop-local copies here.
  virtual void enterQueryLoop() {}
  /// Whether the query loop counts in 32 bits (its blocks zero-extended
  /// where used) rather than in index width.
  virtual bool countsQueryBlocksIn32Bits() const { return false; }
  /// Called at the end of the query loop's body, after the coordinates
  /// are restored: an engine or scheduler that replaced other values in
  /// enterQueryLoop puts the loop's outer ones back here.
  virtual void leaveQueryLoop() {}
  /// The end of one query block's products: asynchronous engines wait for
  /// dK and dV here.
  virtual void finishQueryBlock(SmallVector<Value> &dK,
                                SmallVector<Value> &dV) {}
  /// With dQ staged (KernelSpec::stagesDQ), after the barrier that ends the
  /// step of the query block at `qStart` (every thread's shared-memory
  /// writes of the step are visible): the engine, which staged dQ in
  /// shared memory, adds it to dq_accum here.
  virtual void publishDQ(Value qStart) {}
  /// With dQ staged, before the epilogue: waits for what publishDQ started.
  virtual void drainDQ() {}

  //===--- The pipeline's hooks ------------------------------------------===//
  /// At the top of step `i` (the rel-th of the walk, its tiles in ring
  /// buffer `stage`): makes them visible to every computing thread. By
  /// default the step prefetches the block stages - 1 ahead with cp.async,
  /// waits for its own and synchronises the block; a producer warpgroup's
  /// consumers wait for the buffer's "full" barrier instead.
  virtual void awaitQueryBlock(Value i, Value rel, Value stage);
  /// At the end of a step whose dK and dV products are done: the closing
  /// barrier, then (stagesDQ) publishDQ(dqStart); a producer's consumers
  /// also hand `stage` back.
  virtual void releaseQueryBlock(Value stage, Value dqStart);

  //===--- The schedule's parts, for recipes that arrange them -----------===//
  /// scale · log2(e), the exponent's factor.
  Value scoreFactorLog2();
  /// The loop over query blocks [mFirst, mEnd): its results are the dK
  /// accumulators (dkCount of them), then dV's.
  SmallVector<Value> walkQueryBlocks(Value mFirst, Value mEnd,
                                     Value scoreFactor);
  int64_t dkCount = 0;
  /// The epilogue: dQ's last reduction drained, dK · scale and dV stored.
  void writeGradients(ValueRange results);

  //===--- The query-block iterator's hooks ------------------------------===//
  /// The walk's positions, [first, end): the query blocks the causal/window
  /// band lets see the block's keys in a dense walk; a query-block iterator
  /// (BlockSparseQueryIterator.h) walks positions of its own.
  /// A packed batch's walk on the wgmma engines has its bounds in 32 bits,
  /// zero-extended (narrowBlockIndex): their known-zero high words keep the
  /// loop's 64-bit bound out of a register (ptxas spilled it at D = 64).
  virtual std::pair<Value, Value> blockQueryRange() {
    auto [first, end] = queryBlockRange(kStart, s.blockN, s.blockM);
    if (!s.varlen || !s.usesWgmma())
      return {first, end};
    return {narrowBlockIndex(first), narrowBlockIndex(end)};
  }
  /// The query block (of block_m rows) that step `position` fetches into
  /// ring buffer `stage` (prologue and prefetch): the position itself in a
  /// dense walk, which must create nothing, so that its IR stays that of
  /// the walk over positions. An iterator may record what the step needs
  /// later next to the stage's tiles (see stepQueryBlock).
  virtual Value fetchQueryBlock(Value position, Value stage) {
    return position;
  }
  /// The query block that step `position`, whose tiles are in ring buffer
  /// `stage`, computes; read at its top and again where the masks and the
  /// dQ product need its first row (`again`), rather than held across the
  /// step. A dense walk's is the position.
  virtual Value stepQueryBlock(Value position, Value stage, bool again) {
    return position;
  }
  /// The sequence's query count where a step needs it apart from its
  /// masks (a packed tail's zeroing): read again where the placement is
  /// kept in shared memory, rather than held from the step's top.
  virtual Value queryLengthAgain() { return seqQ; }
  /// i1, whether the element masks (mask_mod) apply at step `position` (in
  /// `stage`); null where they always do (a dense walk). The block-sparse
  /// iterator answers false for full blocks.
  virtual Value appliesMaskMod(Value position, Value stage) { return Value(); }

  //===--- Shared pieces -------------------------------------------------===//
  /// LSE and Dsum of the query blocks in the Q/dO ring, [stages][2][block_m]
  /// f32 in shared memory: staged with Q rather than loaded from global
  /// memory where used (those loads stalled on L2 latency inside the loop,
  /// and ptxas hoisted them to its top, holding block_m / 4 registers).
  Value statTile;
  /// Block-sparse: [stages + 1][4] i32 after statTile, where a query-block
  /// iterator records each stage's step and its row of the lists
  /// (KernelSpec::statTileBytes).
  Value stepSlots;
  /// A packed batch's block placement where the spec keeps it in shared
  /// memory (KernelSpec::keepsPlacementShared): [8] i32 after statTile.
  Value placementSlot;
  /// Views statTile (and stepSlots, placementSlot) at byte `offset` of the
  /// dynamic shared memory.
  void carveStatisticTile(Value offset);
  /// Starts the copies of query block `rowStart`'s LSE and Dsum into ring
  /// buffer `stage` (4-byte cp.async, rows past Sq zero-filled); nothing
  /// is committed: they join the group committed next.
  void copyRowStatistics(Value rowStart, Value stage);
  /// The statistic `name` ("lse" or "delta") of query column (n, j) of the
  /// block in ring buffer `stage`.
  Value loadRowStatistic(StringRef name, Value stage, int64_t n, int64_t j);
  /// Column `col` of the warp's scores as a column of the block's queries
  /// (col + scoreQuery0).
  Value scoreColumn(int64_t col);
  /// Whether the warp is in the first column group (i1; columnGroup set).
  Value inFirstColumnGroup();
  /// The 8-column tile of D (Dv, `width` columns) that tile n of a column
  /// group's `tiles` accumulator tiles holds, `tile0` = columnGroup * tiles
  /// being the group's first: tile0 + n where groups hold contiguous
  /// columns (every recipe but the wgmma one of D = 192).
  virtual Value groupTile(Value tile0, int64_t n, int64_t tiles,
                          int64_t width);
  /// Column `col` of the warp's column group of `groupCols` columns
  /// (index), or `col` where there is one group.
  Value groupColumn(int64_t groupCols, int64_t col);
  Value keyOf(int64_t m, int64_t i);                   // i32
  Value queryOf(Value qStart32, int64_t n, int64_t j); // i32
  /// Whether a step evaluates mask_mod into keep bits (maskModKeepWords)
  /// before it issues Sᵀ and dPᵀ, rather than beside P's recomputation.
  bool evaluatesMaskModFirst() const;
  /// mask_mod's keep bit of each Sᵀ element of the step at `position`
  /// (query rows from `qStart32`), all ones where mask_mod does not apply
  /// (a full block): element ((m nTilesM + n) 2 + j) 2 + ii is bit e % 32
  /// of word e / 32 (i32). Evaluated before the products because the
  /// reads of captured tensors then take registers that Sᵀ's and dPᵀ's
  /// accumulators hold later: beside them the D = 128 kernels spilled.
  SmallVector<Value> maskModKeepWords(Value position, Value stage,
                                      Value qStart32);
  /// i1: bit `e` of `words` (maskModKeepWords' layout).
  Value keepBit(ArrayRef<Value> words, int64_t e);
  /// dq_accum[row][col..col+1] += scale · acc, for the rows g and g + 8 of
  /// query `firstRow` (absolute, index) and the 8-column tiles from
  /// `firstTile` (index) of `acc`'s fragments; rows past Sq are skipped.
  void addToDQAccum(ArrayRef<Value> acc, Value firstRow, Value firstTile);

  /// Reads the arguments, places the block (kStart, its heads) and carves
  /// the shared memory.
  void setUp();

  /// Where a gradient's rows go: `memref`, the offset of the block's row 0
  /// and the distance between rows (elements); without `base`, the query
  /// head's contiguous slice of rows `width` wide.
  struct GradientRows {
    Value memref, base, rowStride;
    int64_t width;
  };
  /// dK (`name` "dk") or dV ("dv") of the block: the contiguous
  /// [B, Hq, Sk, width] slice of its query head, or where `direct` (i1),
  /// grad_k / grad_v of its kv head in their own strides.
  GradientRows gradientRows(StringRef name, Value direct, int64_t width);
  /// The element offset in `dst.memref` of the row of key `key` (absolute,
  /// index).
  Value gradientRowStart(const GradientRows &dst, Value key);
  /// The epilogue's stores of dK · scale and dV (see gradientRows), from
  /// the accumulators row pair by row pair; `direct` as gradientRows'.
  virtual void storeGradients(ArrayRef<Value> dK, ArrayRef<Value> dV,
                              Value direct);

private:
  /// Rows i = 0, 1 of fragment `acc` (m-tile m, 8-column tile n, or
  /// `tile` of the row where given) into `dst`, times `factor`.
  void storeRows(Value acc, const GradientRows &dst, int64_t m, int64_t n,
                 Value factor, Value tile = Value());
};

} // namespace mlir::flash

#endif
