//===- Sm90Backward.h - the sm90 recipe's backward engine -----*- C++ -*-===//
//
// The backward schedule of BackwardBuilder on Hopper's warpgroup MMA
// (Sm90Backward.cpp says how); the sm90ws backward (Sm90WsBackward.cpp)
// feeds the same engine from a TMA producer warpgroup.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_SM90BACKWARD_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_SM90BACKWARD_H

#include "BackwardBuilder.h"
#include "Fragments.h"
#include "Wgmma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::flash {

class Sm90BackwardBuilder : public BackwardBuilder {
public:
  using BackwardBuilder::BackwardBuilder;

protected:
  int64_t kElems = 0, vElems = 0, qElems = 0, doElems = 0; // one tile
  Value wgIdx;        // this thread's warpgroup
  Value kDesc, vDesc; // the warpgroup's 64 keys of K and V, k-step 0
  /// dPᵀ's accumulators, issued with Sᵀ and collected by computeDPT().
  SmallVector<Value> pendingDPT;
  void carveSharedMemory() override;
  void loadKeyValueTiles() override;
  Value loadQdOBlock(Value block, Value stage) override;
  void publishTiles() override { fenceGenericToAsyncProxy(); }
  SmallVector<Value> zeroGradient(int64_t tiles) override {
    return SmallVector<Value>(4 * tiles, frag::cF32(b, 0.0f));
  }
  Value gradientTile(ArrayRef<Value> acc, int64_t m, int64_t n,
                     int64_t tiles) override {
    return wgmma::toFragments(b, acc.slice(4 * n, 4))[0];
  }
  SmallVector<Frags> computeScoresT(Value stage) override;
  void accumulateDV(SmallVector<Value> &dV, ArrayRef<Frags> pdT,
                    Value stage) override;
  SmallVector<Frags> computeDPT(Value stage) override;
  void accumulateDK(SmallVector<Value> &dK, ArrayRef<Frags> dsT,
                    Value stage) override;
  void accumulateDQ(ArrayRef<Frags> dsT, Value qStart, Value stage) override;
  void finishQueryBlock(SmallVector<Value> &dK,
                        SmallVector<Value> &dV) override;
  /// Everything derived from the thread coordinates alone (descriptors and
  /// their per-k-step advances, tile offsets, copy addresses) is
  /// loop-invariant; hoisted out of the query loop it holds registers (a
  /// 64-bit pair per k-step descriptor). Loop-local opaque copies of the
  /// coordinates keep that arithmetic (a few integer ops per use) inside.
  void enterQueryLoop() override;
  /// Whether enterQueryLoop's copies of the (non-negative) coordinates are
  /// zero-extended, their high words known zero, rather than
  /// sign-extended. It takes the sm90ws backward's D = 128 kernels to 0
  /// spill bytes, and on this recipe the bottom-right D = 128 kernel from
  /// 12 to 4 (0 with enterEpilogue's re-derivation; varlen: 20 to 0) and
  /// the D = 64 dropout one from 60 to 44; its block-sparse kernels keep
  /// sign extension, with which they spill nothing (zero-extended, one
  /// spilled 4 bytes).
  virtual bool zeroExtendsLoopCoordinates() const { return !s.blockSparse; }
  /// The block's kv head and the dense sequence lengths, derived again in
  /// 32 bits and zero-extended (all are non-negative): the entry's
  /// sign-extended, 64-bit-divided copies were live from the prologue to
  /// the epilogue and spilled.
  void rederiveNonNegatives();
  /// The block's kv head, head / (heads_q / heads_kv), divided in 32 bits
  /// (the heads are i32 parameters) and zero-extended, where the index
  /// division takes a 64-bit path (a call where the operands' high words
  /// are not known zero).
  Value kvHeadIn32Bits();
  /// Whether the epilogue reads the block's head and batch afresh
  /// (opaquely) and derives the kv head and dense lengths from them again:
  /// the gradient slices' row offsets then start there, instead of being
  /// computed with the LSE rows in the prologue and living, spilled,
  /// through the loop. Where the kernels are short of registers: D = 128,
  /// dense walks.
  virtual bool rederivesInEpilogue() const {
    return s.headDim > 64 && !s.blockSparse && !s.varlen;
  }
  void enterEpilogue() override {
    if (!rederivesInEpilogue())
      return;
    if (s.takesTileOrder()) {
      // The block's tile is its order's entry, read again.
      GridTile tile = rereadOrderedTile();
      head = tile.head;
      batchIdx = tile.batch;
    } else {
      head = readSpecialRegisterOpaquely("ctaid.y");
      batchIdx = readSpecialRegisterOpaquely("ctaid.z");
    }
    rederiveNonNegatives();
  }
  /// A chain of K-major products over `depth` columns: this warpgroup's
  /// keys of `aDesc` times the block_m rows of the tile at `bOffset`.
  SmallVector<Value> issueProductNT(Value aDesc, Value bOffset, int64_t depth);
  /// The warp's rows of Xᵀ (16 keys x block_m queries, `x`) packed to
  /// 16 bits as wgmma A operands, 4 registers per k-step.
  SmallVector<Value> packKeyQueryA(ArrayRef<Frags> x);
  /// Stores the warp's rows of Xᵀ (16 keys x block_m queries, `x`) to the
  /// [block_n][block_m] tile at element `offset`, as 16-bit values; or
  /// the same rows already `packed` by packKeyQueryA.
  void storeKeyQueryTile(ArrayRef<Frags> x, int64_t offset);
  void storeKeyQueryTile(ArrayRef<Value> packed, int64_t offset);
  /// The warp's rows of m16n8 accumulator `tiles` (8 columns each, times
  /// `factor` where given) into the swizzled tile at element `offset`, as
  /// 16-bit pairs: Xᵀ for the products, dK and dV for the staged epilogue.
  /// Tile n's columns are the warp's queries 8n on (`queryColumns`: the
  /// block's scoreColumn(8n)), else 8n.
  void storeKeyRowPairs(ArrayRef<Value> tiles, int64_t offset, Value factor,
                        bool queryColumns = false);
  /// In a swizzled tile of block_n key rows at element `offset` ([key][query]
  /// or [key][d]): the element of columns col + 2t, col + 2t + 1 (`twoT` =
  /// 2t; `col` an 8-column fragment's first) of the warp's key row g + 8ii,
  /// where its accumulator pair lives.
  Value keyRowPairIndex(Value twoT, Value col, int64_t ii, int64_t offset);
  /// A product's B columns: the tile element `offset` they start at, and
  /// how many (n).
  struct ColumnPiece {
    Value offset;
    int64_t n;
  };
  /// acc += (this warpgroup's 64 rows of the [key][query] tile at
  /// `aOffset`) · (each piece's block_m x n N-major columns, its
  /// accumulators after the previous piece's in `acc`), issued as one
  /// group.
  void issueKeyQueryProduct(SmallVector<Value> &acc, int64_t aOffset,
                            ArrayRef<ColumnPiece> pieces);
  /// Which 64 of the block's keys this warpgroup's products take (their
  /// rows of K, V, Pᵀ and dSᵀ): its own, or with column groups those it
  /// shares.
  Value keyGroup();
  /// Whether a column group's half of `width` columns (D or Dv) is not
  /// whole 64-column blocks (D = 192: 96), so that each group takes 32
  /// columns of every block instead (groupColumnPieces).
  bool interleavesGroupColumns(int64_t width) const;
  /// The columns of `width` this warp's column group keeps, of the tile at
  /// element `offset` whose 64-column blocks hold `rows` rows: the whole
  /// tile without column groups; else its half, whole blocks where they
  /// divide it, 32 columns of each block where not.
  SmallVector<ColumnPiece> groupColumnPieces(Value offset, int64_t width,
                                             int64_t rows);
  Value groupTile(Value tile0, int64_t n, int64_t tiles,
                  int64_t width) override;
  /// bar.sync of this warpgroup's 128 threads (named barrier 1 + w).
  void warpgroupBarrier();

  /// Whether dV and dK read Pᵀ and dSᵀ as register A operands (packed from
  /// their accumulators, FlashAttention-3's "RS" products) rather than
  /// from tiles the warpgroup stores first: the sm90ws backward, whose
  /// consumers have the registers (KernelSpec::gradientsFromRegisters). dQ
  /// reads dSᵀ from shared memory either way. The sm90 recipe's two
  /// warpgroups spilled with it at every head dim.
  bool gradientsFromRegisters() const { return s.gradientsFromRegisters(); }
  /// The packed 16-bit registers of register-A products in flight; an
  /// asynchronous mma reads them after issue, so they are kept alive
  /// (pinned) up to the wait that retires their group.
  SmallVector<Value> registerOperandsInFlight;
  /// After a wait for every group: the in-flight register operands pinned
  /// there, and forgotten.
  void retireRegisterOperands();
  /// acc += (this warpgroup's 64 keys of Xᵀ, `packed` by packKeyQueryA) ·
  /// (each piece's block_m x n N-major columns, its accumulators after the
  /// previous piece's in `acc`), issued as one group; the pinned operands
  /// join registerOperandsInFlight.
  void issueKeyQueryProductFromRegisters(SmallVector<Value> &acc,
                                         ArrayRef<Value> packed,
                                         ArrayRef<ColumnPiece> pieces);
  /// With gradientsFromRegisters: dK · scale and dV staged in the K and V
  /// tiles (free once the walk ends), each warpgroup's rows then copied out
  /// in 16-byte chunks, whole rows per group of lanes, instead of 4-byte
  /// pairs of scattered rows from the accumulators.
  void storeGradients(ArrayRef<Value> dK, ArrayRef<Value> dV,
                      Value direct) override;
  /// This warpgroup's rows of the staged tile at element `offset`, `width`
  /// columns, to `dst`: rows past Sk skipped.
  void copyStagedGradient(const GradientRows &dst, int64_t offset,
                          int64_t width);
  void publishDQ(Value qStart) override;
  /// Element of dq_accum where the tile of the query block at `qStart`
  /// starts (KernelSpec::dqTiles): ceil(Sq / block_m) tiles of block_m x D
  /// per (batch, head) slice.
  Value dqAccumTile(Value qStart);
  /// With KernelSpec::stagesDQInQueryTiles: piece `piece` (64 columns) of
  /// the warpgroup's dQ `frags`, times the scale, in the tile's fragment
  /// order into its Q column blocks of `stage` (piece 0) or its dO ones.
  void stageDQInQueryTiles(ArrayRef<Value> frags, int64_t piece, Value stage);
  /// The float of dqTile where the warpgroup's staged dQ piece `piece` of
  /// `stage` starts (stageDQInQueryTiles' and reduceDQFromQueryTiles').
  Value stagedDQPiece(int64_t piece, Value stage);
  /// Then, once every piece is staged: one thread of the warpgroup adds
  /// them to its slice of the query block's dq_accum tile, a bulk reduction
  /// a piece, as one bulk group (handStagedDQBack hands their buffer on).
  void reduceDQFromQueryTiles(Value qStart, Value stage, int64_t pieces);
  /// Whether this thread issues its warpgroup's reductions of dQ staged in
  /// the query tiles (its first).
  Value reducesStagedDQ();
  /// With KernelSpec::stagesDQInQueryTiles, after the step's first
  /// products are issued: the previous step's Q/dO buffer, whose staged dQ
  /// the reduction threads still had to see read, goes back to the
  /// producer (the sm90ws backward; see its releaseQueryBlock).
  virtual void handStagedDQBack() {}
  /// Stores a warp's dQ `frags` (16 rows from `warpRow` of the block, from
  /// column `col` on), times the scale, into the staged rows
  /// (KernelSpec::stagesDQRows).
  void storeDQRows(ArrayRef<Value> frags, Value warpRow, Value col);
  /// publishDQ of a packed batch's staged rows (KernelSpec::stagesDQRows).
  void publishDQRows(Value qStart);
  void drainDQ() override;
  /// The block's dQ in shared memory (KernelSpec::stagesDQ): with dqTiles
  /// [block_m x D] f32 in fragment order, as the tile of dq_accum it is
  /// added to; else block_m rows of D + kDqRowPad floats.
  Value dqTile;

  // Element offsets of the tiles in swizzledTiles.
  int64_t vOffset() const { return kElems; }
  Value qOffset(Value stage) {
    return arith::AddIOp::create(b, frag::cIdx(b, kElems + vElems),
                                 arith::MulIOp::create(b, stage, frag::cIdx(b, qElems)));
  }
  Value doOffset(Value stage) {
    return arith::AddIOp::create(
        b, frag::cIdx(b, kElems + vElems + s.stages * qElems),
        arith::MulIOp::create(b, stage, frag::cIdx(b, doElems)));
  }
  int64_t pOffset() const {
    return kElems + vElems + s.stages * (qElems + doElems);
  }
  /// dSᵀ's tile, after Pᵀ's where Pᵀ has one.
  int64_t dsOffset() const {
    return pOffset() + (gradientsFromRegisters() ? 0 : s.blockN * s.blockM);
  }
};

} // namespace mlir::flash

#endif
