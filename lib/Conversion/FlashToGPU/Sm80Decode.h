//===- Sm80Decode.h - the split-KV decode kernel's builder ------*- C++ -*-===//
//
// The decode builder (Sm80Decode.cpp) on the sm80 forward's engine, and
// the parts that recipe-specific files add to it: the swapped-operand
// mainloop of block_m = 8 (Sm80DecodeSwapped.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_SM80DECODE_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_SM80DECODE_H

#include "Sm80Forward.h"

#include <tuple>

namespace mlir::flash {

class Sm80DecodeBuilder : public Sm80ForwardBuilder {
public:
  using Sm80ForwardBuilder::Sm80ForwardBuilder;

private:
  Value group;       // G = Hq / Hkv
  Value numSplits;   // splits of the key sequence (grid.x / m-blocks)
  Value split;       // this block's split
  Value packedStart; // first packed row of the block
  Value packedRows;  // G * Sq
  Value qStrideH;
  /// Rows the K/V copies may read: up to the end of this split's keys, so
  /// that the pipeline's prefetch past its last block (the next split's
  /// keys) reads nothing.
  Value copyLimit;

  void readForwardArguments() override;
  std::pair<Value, Value> blockKeyRange() override;
  Value rowOf(int64_t m, int64_t i) override;
  /// No slope a tile: the packed rows are several heads' (alibiRowSlopes).
  void readTileAlibiSlope() override {}
  Value rowAlibiSlope(int64_t m, int64_t i) override {
    return alibiRowSlopes[m * 2 + i];
  }
  /// With KernelSpec::alibi, the slopes of this thread's rows, read once
  /// before the key loop: [m * 2 + i] for fragment row (m, i), or [j] for
  /// the swapped loop's row 2t + j. Packed row r is query head
  /// head + r % G (readAlibiSlopes).
  SmallVector<Value> alibiRowSlopes;
  void readAlibiSlopes();
  Value loadQTile() override;
  Value loadKVBlock(Value block, Value stage) override;
  void writeEpilogue(const SoftmaxState &final) override;

  /// Packed row of fragment row (m, i), index.
  Value packedRowOf(int64_t m, int64_t i);
  /// Packed row r -> its query head, its position and its row
  /// (b, h, position) of [B, Hq, Sq] (LSE's index, and the partial
  /// buffers' within a split).
  std::tuple<Value, Value, Value> placeOfPackedRow(Value r);
  /// Element offset of O's row (b, h, position), in Q's layout.
  Value outputRow(Value h, Value position);
  /// With merge_splits and several splits: counts this block's split in
  /// and, in the block that completes its row group, merges its rows.
  void mergeIfLastSplit();
  /// Counts the block in on split_arrivals[counterIdx], of `arrivals`
  /// blocks (index values), through the i32 `flag` in shared memory: true
  /// (i1, the same in every thread) in the block that completes the count,
  /// which puts the counter back to 0.
  Value countIn(Value flag, Value counterIdx, Value arrivals);
  /// Merges the block's rows over `count` splits first, first + stride,
  /// ... (index values): into O and LSE, or, where `intoSplit` is given,
  /// into that split's partial rows.
  void mergeSplitRowsOfGroup(Value first, Value stride, Value count,
                             Value intoSplit);
  /// Stores merged columns [col, col + 4) of the block's row `local` (a
  /// vector<4xf32>) to O, and with col = 0 the row's LSE.
  void storeMergedQuad(Value local, Value col, Value columns, Value lse);
  /// With merge_splits = 2 (a cluster launch) and several splits: the
  /// cluster's blocks merge the rows each left in its shared memory
  /// (KernelSpec::clusterMergeSplits), each block a share of the columns.
  void mergeInCluster();
  /// True (i1) where this launch merges in its cluster; null where the
  /// kernel cannot (sm_80, sm_89). Set by decideClusterMerge.
  Value inCluster;
  void decideClusterMerge();
  /// The block's partial rows for mergeInCluster: [block_m][Dv] O and
  /// [block_m] LSE, f32, in shared memory.
  Value exchangeO();
  Value exchangeLse();
  /// Where warps split the keys: their rows are the same.
  Value warpFirstRow() override;
  /// Where warps split the keys, merges their softmax states of the same
  /// rows through shared memory: afterwards the warps of key slice 0 hold
  /// each row's whole sum `rowL`, max `rowM` (log2) and unnormalised O.
  void mergeKeyWarps(SmallVector<Value> &acc, SmallVector<Value> &rowL,
                     SmallVector<Value> &rowM);
  /// 8-row halves of the fragments' m16 tiles that hold the block's rows:
  /// 2, or 1 where block_m = 8.
  int64_t rowHalves() const { return s.blockM < 16 ? 1 : 2; }

  //===--- The swapped-operand mainloop (Sm80DecodeSwapped.cpp) ----------===//
  /// Where block_m = 8 (KernelSpec::swapsDecodeOperands): the walk with
  /// the packed rows as the n of the products, S^T = K Q^T and
  /// O^T = V^T P^T. Its state is the transposed one: acc[d] holds
  /// O^T[16d + g + 8i][2t + j] at [i][j], rowMax / rowSum rows 2t and
  /// 2t + 1 (the max whole, the sum this thread's share).
  SoftmaxState buildKeyLoop(ArrayRef<Frags> qOps, Value nStart, Value nEnd,
                            const SoftmaxState &init,
                            Value anyGroup) override;
  bool keepsQInRegisters() override {
    return !s.swapsDecodeOperands() && Sm80ForwardBuilder::keepsQInRegisters();
  }
  SoftmaxState buildSwappedKeyLoop(Value nStart, Value nEnd);
  /// Packed row 2t + j of the block (index), and its position (i32).
  Value swappedPackedRowOf(int64_t j);
  Value swappedRowOf(int64_t j);
  /// Score pipeline and masks on S^T fragments [16-key tile], inside a
  /// branch taken by blocks that can hold masked elements.
  void maskSwappedScores(SmallVector<Value> &sc, Value kvStart);
  void applySwappedScorePipeline(SmallVector<Value> &sc, Value kvStart,
                                 bool masked);
  /// mergeKeyWarps' stores of this warp's transposed partial rows: O^T's
  /// columns as O's rows of partialO [key slice][row][Dv], and each row's
  /// (max, sum) in stats [key slice][row][2].
  void storeSwappedPartials(Value partialO, Value stats,
                            ArrayRef<Value> acc, ArrayRef<Value> rowL,
                            ArrayRef<Value> rowM);
  Value keyWarp; // this warp's slice of the keys (0 where warps split rows)
  /// The page table's entry for the sequence's page `page` (index) of a
  /// paged cache, the page clamped into [0, max_pages) and the entry into
  /// [0, num_pages) (rows past the sequence's length are not read, but
  /// their pages are looked up); an index.
  Value pageEntry(Value page);
  /// Element offset of the first row of page `entry` (pageEntry's) of this
  /// kv head's keys ("k") or values ("v").
  Value pageStart(StringRef operand, Value entry);

  //===--- FP8 cache (see the file comment) ------------------------------===//
  Value vDescale; // v_descale of this (b, kv head); null for 16-bit caches
  /// idx(name) for a stride or offset of the K/V cache, in the copies'
  /// 16-bit units (half the codes of an FP8 cache).
  Value cacheIdx(StringRef name);
  /// The 16-bit pair of type `type` (f16, or bf16: Q's for K) converted
  /// from codes `lo` (low half) and `hi` of `codes`, a vector<4xi8>: one
  /// MMA register (i32).
  Value convertCodes(Value codes, int64_t lo, int64_t hi, Type type);
  /// P·V over an FP8 cache runs in f16 whatever Q's type: each pair of V
  /// codes is then one cvt.rn.f16x2.e4m3x2, where bf16 needs that, two
  /// f16 -> f32 and an f32x2 -> bf16x2 besides (the H200 decode was bound
  /// by those conversions, docs/PERF.md run 137). Exact for V; and f16
  /// holds P (in [0, 1]) at least as finely as bf16: 11 significant bits
  /// from 2^-14 up, where bf16 has 8, and steps of 2^-24 below.
  Type probabilityType() const override {
    return s.fp8Cache ? Type(Float16Type::get(s.elementType.getContext()))
                      : s.elementType;
  }
  /// The four e4m3 codes of an ldmatrix register.
  Value codesOf(Value reg);
  Frags loadQOperand(int64_t m, int64_t kk) override;
  SmallVector<Frags> computeScores(ArrayRef<Frags> qRegs, Value stage) override;
  void accumulateOutput(SmallVector<Value> &acc, const PackedP &packedP,
                        Value stage) override;
};

} // namespace mlir::flash

#endif
