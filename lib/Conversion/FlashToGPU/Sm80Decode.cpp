//===- Sm80Decode.cpp - split-KV attention over a KV cache ----------------===//
//
// Flash-Decoding (docs/KVCACHE.md, docs/KERNEL_ABI.md "Decode"): the
// forward's mma.sync engine (Sm80Forward.h) and its online softmax, under
// three parts of its own:
//   - tile scheduler: one block per (m-block, split) x kv head x batch. The
//     G = Hq / Hkv query heads of the kv head and the Sq query positions are
//     packed into the block's rows (packed row r = head hkv·G + r % G,
//     position r / G), so a decode step's handful of query rows fill an
//     m16 tile and each K/V tile is read once for the whole group. The
//     sequence's key blocks (its own length, from cache_seqlens) are
//     shared out evenly between the splits.
//   - operand producer: Q rows gathered by (head, position); K/V rows of a
//     contiguous cache stream like the forward's, those of a paged cache go
//     through the page table chunk by chunk.
//   - epilogue: with one split, O and LSE as the forward writes them; with
//     several, each split's O normalised by its own row sum, in f32, and its
//     LSE. Launched with merge_splits, the block that finishes a row
//     group's last split then merges the group's rows (SplitMerge.h),
//     counted in through split_arrivals; without, decode_combine
//     (DecodeCombine.cpp) merges them in a second launch. On sm_90 a launch
//     in clusters of num_splits blocks (merge_splits = 2) keeps each split's
//     rows in its own shared memory and the cluster's blocks merge them
//     over distributed shared memory (mergeInCluster).
// The band (causal / window) is the op's: bottom-right by each sequence's
// own length, so diagOffset = L_b - Sq, ALiBi's offset too (seqK = L_b;
// KernelSpec::alibi: a slope per packed row, read before the key loop).
//
// An FP8 (e4m3) cache (KernelSpec::fp8Cache, docs/KVCACHE.md "FP8 cache"):
// the copies read the cache as a 16-bit view, two codes a unit, so the K/V
// tiles hold D / 2 units a row in the same swizzled layout and a block
// reads half the bytes; the codes become the MMA's 16-bit type in
// registers (cvt.rn.f16x2.e4m3x2, exact; for bf16 Q the f16 pair is
// widened to f32 and narrowed to bf16, exact too: e4m3's 3-bit mantissa
// and its exponents 2^-9 .. 2^8 fit bf16. Computing a bf16 Q's products in
// f16 instead is not exact: f16 holds neither its range nor, for values
// under 2^-14, its precision). The engine's ldmatrix still reads 16-bit
// units, which pairs codes differently from the m16n8k16 fragments:
//   - K (B operand of S = Q Kᵀ, stored [key][D]): ldmatrix.x4 gives thread
//     (g, t) codes 4t..4t+3 of key g in one register. The contraction over
//     D does not care which k position holds which column as long as Q
//     agrees, so fragment positions (2t, 2t+1 | 2t+8, 2t+9) take columns
//     (4t, 4t+1 | 4t+2, 4t+3): Q's A operand is read from its tile in that
//     order (one 8-byte load of 4 columns per row), and one ldmatrix.x4
//     serves two k16 steps.
//   - V (B operand of O = P V, stored [key][Dv]): ldmatrix.trans gives
//     thread (g, t) the unit (2 codes: columns 2u, 2u + 1) of keys 2t and
//     2t + 1; a byte shuffle makes the even column's pair and the odd
//     column's pair, each a B fragment of keys (2t, 2t+1) as P's A operand
//     has them. So each 16-column ldmatrix half feeds two n8 tiles, one of
//     the even columns and one of the odd ones: O's columns are permuted in
//     the accumulators (fp8OutputColumn) and put back in the epilogue,
//     where thread t's pairs are 4 consecutive columns.
// k_descale folds into the score scale (scaleOverride, one f32 rounding of
// scale * dk), v_descale into the epilogue's 1 / l, both per (b, kv head);
// the split partials are scaled alike, so the merge is unchanged.
//
//===----------------------------------------------------------------------===//
#include "Recipes.h"
#include "Sm80Decode.h"
#include "SplitMerge.h"
#include "Swizzle.h"
#include "flashfuse/decode_splits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

/// Splits a thread of the counters' merge reads at once (mergeSplitQuad):
/// 16 LSEs and 16 x 16 bytes of O in flight, 80 registers, where the
/// mainloop's are dead; 64 splits are 4 L2 round trips. Except where the
/// kernel sits at the 255-register cap already: D > 128 with ALiBi (two
/// stages of 64 x 32, sm_90a) spilled 4 bytes at 4 splits or more.
static int64_t mergeUnroll(const KernelSpec &s) {
  return s.alibi && s.headDimV > 128 ? 1 : 16;
}

/// Whether the counters' merge takes two levels past 2 * chunk splits
/// (decode_splits.h): not at the 255-register cap either, where the
/// second level spilled 4 bytes (D = 256 with ALiBi, sm_90a). Such a
/// kernel counts every split in on split_arrivals[group] at any split
/// count, as KERNEL_ABI.md "Decode" allows.
static bool mergesInChunks(const KernelSpec &s) { return mergeUnroll(s) > 1; }

void Sm80DecodeBuilder::readForwardArguments() {
  readArguments();
  // readArguments placed the block as the forward's grid does; the decode
  // grid is (m-block x split, kv head, batch).
  group = arith::DivUIOp::create(b, headsQ, idx("heads_kv"));
  headKV = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  head = arith::MulIOp::create(b, headKV, group);
  numSplits = idx("num_splits");
  Value x = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  split = arith::RemUIOp::create(b, x, numSplits);
  packedStart = arith::MulIOp::create(
      b, arith::DivUIOp::create(b, x, numSplits), cIdx(b, s.blockM));
  packedRows = arith::MulIOp::create(b, group, seqQ);
  mStart = arith::DivUIOp::create(b, packedStart, group);

  // L_b = cache_seqlens[b] + seq_new, clamped into [0, capacity]: lengths
  // outside the contract give a wrong answer, never a read outside the
  // cache (docs/KVCACHE.md).
  Value cached = memref::LoadOp::create(b, arg.lookup("cache_seqlens"),
                                        ValueRange{batchIdx});
  Value len = asIndex(arith::AddIOp::create(b, cached, arg.lookup("seq_new")));
  len = arith::MaxSIOp::create(b, len, cIdx(b, 0));
  seqK = arith::MinSIOp::create(b, len, idx("seq_k"));
  diagOffset = arith::SubIOp::create(b, seqK, seqQ);
  // The first row a left-padded sequence sees; a negative one hides
  // nothing, one past L_b every key (keyBlockRange then gives no block).
  if (s.leftPad)
    keyStart = arith::MaxSIOp::create(
        b,
        asIndex(memref::LoadOp::create(b, arg.lookup("cache_leftpad"),
                                       ValueRange{batchIdx})),
        cIdx(b, 0));

  // Warps that share rows take consecutive slices of every key block.
  int64_t keyWarps = s.keyWarps();
  keyWarp = arith::RemUIOp::create(b, warp, cIdx(b, keyWarps));
  if (keyWarps > 1)
    warpKeyOffset =
        arith::MulIOp::create(b, keyWarp, cIdx(b, s.blockN / keyWarps));

  qBase = operandBase("q", head);
  qStrideS = idx("q_stride_s");
  qStrideH = idx("q_stride_h");
  kStrideS = cacheIdx("k_stride_s");
  vStrideS = cacheIdx("v_stride_s");
  // Element 0 of kv head headKV of sequence `seq` in cache `t`.
  auto sequenceBase = [&](StringRef t, Value seq) -> Value {
    return arith::AddIOp::create(
        b, arith::MulIOp::create(b, seq, cacheIdx((t + "_stride_b").str())),
        arith::MulIOp::create(b, headKV, cacheIdx((t + "_stride_h").str())));
  };
  if (s.pageSize) { // rows located through the page table
    kBase = arith::MulIOp::create(b, headKV, cacheIdx("k_stride_h"));
    vBase = arith::MulIOp::create(b, headKV, cacheIdx("v_stride_h"));
  } else if (s.cacheBatchIdx) {
    // Sequence b's rows are row cache_batch_idx[b] of the pool, clamped
    // into [0, cache_batch): an index outside the contract reads another
    // sequence's rows, never outside the cache.
    Value row = asIndex(memref::LoadOp::create(
        b, arg.lookup("cache_batch_idx"), ValueRange{batchIdx}));
    row = arith::MaxSIOp::create(b, row, cIdx(b, 0));
    row = arith::MinSIOp::create(
        b, row, arith::SubIOp::create(b, idx("cache_batch"), cIdx(b, 1)));
    kBase = sequenceBase("k", row);
    vBase = sequenceBase("v", row);
  } else if (s.fp8Cache) {
    kBase = sequenceBase("k", batchIdx);
    vBase = sequenceBase("v", batchIdx);
  } else {
    kBase = operandBase("k", headKV);
    vBase = operandBase("v", headKV);
  }
  if (s.fp8Cache) {
    scaleOverride = arith::MulFOp::create(b, arg.lookup("scale"),
                                          loadDescale("k", headKV));
    vDescale = loadDescale("v", headKV);
  }
  if (s.alibi)
    readAlibiSlopes();
}

void Sm80DecodeBuilder::readAlibiSlopes() {
  // Read here, outside the key loop, so that each row's slope is a load a
  // kernel rather than one a key block. Rows past G * Sq (the tile's
  // padding) still name a head of the group, so every load is in bounds.
  auto slopeOfPacked = [&](Value packed) {
    return alibiSlopeOf(
        arith::AddIOp::create(b, head, arith::RemUIOp::create(b, packed, group)));
  };
  if (s.swapsDecodeOperands()) {
    for (int64_t j = 0; j < 2; ++j)
      alibiRowSlopes.push_back(slopeOfPacked(swappedPackedRowOf(j)));
    return;
  }
  for (int64_t m = 0; m < mt; ++m)
    for (int64_t i = 0; i < 2; ++i)
      alibiRowSlopes.push_back(slopeOfPacked(packedRowOf(m, i)));
}

void Sm80DecodeBuilder::decideClusterMerge() {
  // Decided after the key loop, from the params: a flag kept across the
  // loop spilled 4 bytes in the D = 32 kernels (168 registers at 3 blocks
  // an SM).
  if (s.clusterMergeSplits() > 0)
    inCluster = arith::AndIOp::create(
        b,
        arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, numSplits,
                              cIdx(b, 1)),
        arith::CmpIOp::create(
            b, arith::CmpIPredicate::eq, arg.lookup("merge_splits"),
            arith::ConstantIntOp::create(b, b.getI32Type(), 2)));
}

Value Sm80DecodeBuilder::exchangeO() {
  return sharedTile(sharedMemoryBytes(), {s.blockM, s.headDimV},
                    s.clusterExchangeOffset(), b.getF32Type());
}

Value Sm80DecodeBuilder::exchangeLse() {
  return sharedTile(sharedMemoryBytes(), {s.blockM},
                    s.clusterExchangeOffset() + s.blockM * s.headDimV * 4,
                    b.getF32Type());
}

Value Sm80DecodeBuilder::cacheIdx(StringRef name) {
  // The runtime checks that an FP8 cache's strides are multiples of 16
  // codes (16-byte copies), so halving them is exact.
  Value v = idx(name);
  return s.fp8Cache ? Value(arith::DivUIOp::create(b, v, cIdx(b, 2))) : v;
}

Value Sm80DecodeBuilder::codesOf(Value reg) {
  Value v = vector::FromElementsOp::create(
      b, VectorType::get({1}, b.getI32Type()), ValueRange{reg});
  return vector::BitCastOp::create(b, VectorType::get({4}, b.getI8Type()), v);
}

Value Sm80DecodeBuilder::convertCodes(Value codes, int64_t lo, int64_t hi,
                                      Type type) {
  Value pair = vector::ShuffleOp::create(b, codes, codes,
                                         ArrayRef<int64_t>{lo, hi});
  auto f16x2 = VectorType::get({2}, b.getF16Type());
  Value h = NVVM::ConvertF8x2ToF16x2Op::create(
      b, f16x2, pair, /*relu=*/false, Float8E4M3FNType::get(b.getContext()));
  if (type.isBF16()) // exact: every e4m3 value is a bf16 value
    h = arith::TruncFOp::create(
        b, VectorType::get({2}, type),
        arith::ExtFOp::create(b, VectorType::get({2}, b.getF32Type()), h));
  Value i = vector::BitCastOp::create(b, VectorType::get({1}, b.getI32Type()), h);
  return vector::ExtractOp::create(b, i, ArrayRef<int64_t>{0});
}

ForwardBuilder::Frags Sm80DecodeBuilder::loadQOperand(int64_t m, int64_t kk) {
  if (!s.fp8Cache)
    return Sm80ForwardBuilder::loadQOperand(m, kk);
  // Fragment positions (2t, 2t+1 | 2t+8, 2t+9) of k-step kk hold Q's
  // columns 16kk + (4t, 4t+1 | 4t+2, 4t+3), the order in which the K
  // fragments carry the codes: 4 consecutive columns of rows g and g + 8,
  // within one 16-byte chunk of the swizzled Q tile.
  Value col8 = arith::AddIOp::create(
      b, cIdx(b, 16 * kk),
      arith::MulIOp::create(b, arith::DivUIOp::create(b, t, cIdx(b, 2)),
                            cIdx(b, 8)));
  Value inChunk = arith::MulIOp::create(
      b, arith::RemUIOp::create(b, t, cIdx(b, 2)), cIdx(b, 4));
  auto quad = VectorType::get({4}, s.elementType);
  auto i32x2 = VectorType::get({2}, b.getI32Type());
  Value regs[2][2];
  for (int64_t i = 0; i < 2; ++i) {
    Value row = arith::AddIOp::create(
        b, warpFirstRow(), arith::AddIOp::create(b, g, cIdx(b, 16 * m + 8 * i)));
    Value at = arith::AddIOp::create(
        b, swizzle::offset(b, row, col8, s.blockM), inChunk);
    Value v = vector::LoadOp::create(b, quad, swizzledTiles, ValueRange{at});
    Value w = vector::BitCastOp::create(b, i32x2, v);
    for (int64_t h = 0; h < 2; ++h)
      regs[i][h] = vector::ExtractOp::create(b, w, ArrayRef<int64_t>{h});
  }
  return {regs[0][0], regs[1][0], regs[0][1], regs[1][1]};
}

SmallVector<ForwardBuilder::Frags>
Sm80DecodeBuilder::computeScores(ArrayRef<Frags> qRegs, Value stage) {
  if (!s.fp8Cache)
    return Sm80ForwardBuilder::computeScores(qRegs, stage);
  SmallVector<Frags> sc(mt, Frags(nTilesN, accZero(b)));
  // One ldmatrix.x4 of 16 units (32 codes) of 16 keys: register
  // (half, h) holds n-tile 2p + half's codes of k-step 2j + h.
  for (int64_t j = 0; j < nTilesD / 2; ++j) {
    SmallVector<Frags> qa[2];
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t m = 0; m < mt; ++m)
        qa[h].push_back(qRegs.empty() ? loadQOperand(m, 2 * j + h)
                                      : qRegs[m * nTilesD + 2 * j + h]);
    for (int64_t p = 0; p < nTilesN / 2; ++p) {
      Regs kf = loadBlock(Operand::K, stage, X4::BPair, keyRow(16 * p),
                          16 * j);
      for (int64_t half = 0; half < 2; ++half)
        for (int64_t h = 0; h < 2; ++h) {
          Value codes = codesOf(kf[2 * half + h]);
          Value kb[2] = {convertCodes(codes, 0, 1, s.elementType),
                         convertCodes(codes, 2, 3, s.elementType)};
          for (int64_t m = 0; m < mt; ++m) {
            Value &a = sc[m][2 * p + half];
            a = mma(b, qa[h][m], {kb[0], kb[1]}, a, s.elementType);
          }
        }
    }
  }
  return sc;
}

void Sm80DecodeBuilder::accumulateOutput(SmallVector<Value> &acc,
                                         const PackedP &packedP, Value stage) {
  if (!s.fp8Cache)
    return Sm80ForwardBuilder::accumulateOutput(acc, packedP, stage);
  for (int64_t kk = 0; kk < nTilesN / 2; ++kk) {
    SmallVector<Regs> pA(mt);
    for (int64_t m = 0; m < mt; ++m)
      pA[m] = {packedP[m][2 * kk][0], packedP[m][2 * kk][1],
               packedP[m][2 * kk + 1][0], packedP[m][2 * kk + 1][1]};
    // One ldmatrix.x4.trans of 16 keys x 16 units (32 columns): registers
    // 2h, 2h + 1 hold keys 0-7, 8-15 of units 8h + g, whose even and odd
    // columns are accumulator tiles 4q + 2h and 4q + 2h + 1.
    for (int64_t q = 0; q < nTilesDv / 4; ++q) {
      Regs vf = loadBlock(Operand::V, stage, X4::BPairTransposed,
                          keyRow(16 * kk), 16 * q);
      for (int64_t h = 0; h < 2; ++h) {
        Value lo = codesOf(vf[2 * h]), hi = codesOf(vf[2 * h + 1]);
        for (int64_t odd = 0; odd < 2; ++odd) {
          Type pv = probabilityType();
          Value vb[2] = {convertCodes(lo, odd, 2 + odd, pv),
                         convertCodes(hi, odd, 2 + odd, pv)};
          for (int64_t m = 0; m < mt; ++m) {
            Value &a = acc[m * nTilesDv + 4 * q + 2 * h + odd];
            a = mma(b, pA[m], {vb[0], vb[1]}, a, pv);
          }
        }
      }
    }
  }
}

std::pair<Value, Value> Sm80DecodeBuilder::blockKeyRange() {
  // The band of the block's positions [mStart, mStart + block_m) (a
  // superset of its packed rows' positions; the masks are exact), then
  // this split's share: ceil(blocks / splits) consecutive blocks.
  auto [first, end] = keyBlockRange(mStart, s.blockM, s.blockN);
  Value perSplit = arith::CeilDivUIOp::create(
      b, arith::SubIOp::create(b, end, first), numSplits);
  Value start = arith::AddIOp::create(
      b, first, arith::MulIOp::create(b, split, perSplit));
  Value stop = arith::MinUIOp::create(
      b, end, arith::AddIOp::create(b, start, perSplit));
  copyLimit = arith::MinSIOp::create(
      b, seqK, arith::MulIOp::create(b, stop, cIdx(b, s.blockN)));
  return {arith::MinUIOp::create(b, start, stop), stop};
}

Value Sm80DecodeBuilder::warpFirstRow() {
  Value rowWarp = arith::DivUIOp::create(b, warp, cIdx(b, s.keyWarps()));
  return arith::MulIOp::create(b, rowWarp, cIdx(b, 16 * mt));
}

Value Sm80DecodeBuilder::packedRowOf(int64_t m, int64_t i) {
  return arith::AddIOp::create(
      b, arith::AddIOp::create(b, packedStart, warpFirstRow()),
      arith::AddIOp::create(b, g, cIdx(b, 16 * m + 8 * i)));
}

void Sm80DecodeBuilder::mergeKeyWarps(SmallVector<Value> &acc,
                                      SmallVector<Value> &rowL,
                                      SmallVector<Value> &rowM) {
  // The K/V ring becomes the exchange buffer: every copy must have landed
  // (the pipeline prefetches past the last block) and every warp be done
  // reading it.
  NVVM::CpAsyncWaitGroupOp::create(b, b.getI32IntegerAttr(0));
  gpu::BarrierOp::create(b);
  int64_t keyWarps = s.keyWarps(), dv = s.headDimV;
  Type f32 = b.getF32Type();
  Value raw = sharedMemoryBytes();
  // [key slice][block row][Dv] partial O, then [key slice][block row] of
  // (max, sum).
  Value partialO = sharedTile(raw, {keyWarps, s.blockM, dv}, 0, f32);
  Value stats = sharedTile(raw, {keyWarps, s.blockM, 2},
                           keyWarps * s.blockM * dv * 4, f32);
  auto f32x2 = VectorType::get({2}, f32);
  Value twoT = arith::MulIOp::create(b, t, cIdx(b, 2));
  Value isLeader =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, t, cIdx(b, 0));
  auto rowIn = [&](int64_t m, int64_t i) {
    return arith::AddIOp::create(
        b, warpFirstRow(), arith::AddIOp::create(b, g, cIdx(b, 16 * m + 8 * i)));
  };
  if (s.swapsDecodeOperands())
    storeSwappedPartials(partialO, stats, acc, rowL, rowM);
  for (int64_t m = 0; m < (s.swapsDecodeOperands() ? 0 : mt); ++m)
    for (int64_t i = 0; i < 2; ++i) {
      Value row = rowIn(m, i);
      for (int64_t n = 0; n < nTilesDv; ++n) {
        Value a = acc[m * nTilesDv + n];
        Value pair = vector::FromElementsOp::create(
            b, f32x2, ValueRange{accGet(b, a, i, 0), accGet(b, a, i, 1)});
        vector::StoreOp::create(
            b, pair, partialO,
            ValueRange{keyWarp, row,
                       arith::AddIOp::create(b, twoT, cIdx(b, 8 * n))});
      }
      auto ifLead = scf::IfOp::create(b, TypeRange{}, isLeader, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifLead.getThenRegion().front());
      Value ml = vector::FromElementsOp::create(
          b, f32x2, ValueRange{rowM[2 * m + i], rowL[2 * m + i]});
      vector::StoreOp::create(b, ml, stats, ValueRange{keyWarp, row, cIdx(b, 0)});
    }
  gpu::BarrierOp::create(b);
  // Every warp merges its own rows (those of slice 0 are the ones stored),
  // into the m16 engine's fragments whichever engine stored them.
  Value negInf = cF32(b, -INFINITY);
  if (s.swapsDecodeOperands()) {
    acc.assign(mt * nTilesDv, accZero(b));
    rowM.assign(2 * mt, negInf);
    rowL.assign(2 * mt, cF32(b, 0.0f));
  }
  for (int64_t m = 0; m < mt; ++m)
    for (int64_t i = 0; i < rowHalves(); ++i) {
      Value row = rowIn(m, i);
      SmallVector<Value> ms, ls;
      Value maxAll = negInf;
      for (int64_t w = 0; w < keyWarps; ++w) {
        Value ml = vector::LoadOp::create(b, f32x2, stats,
                                          ValueRange{cIdx(b, w), row, cIdx(b, 0)});
        ms.push_back(vector::ExtractOp::create(b, ml, ArrayRef<int64_t>{0}));
        ls.push_back(vector::ExtractOp::create(b, ml, ArrayRef<int64_t>{1}));
        maxAll = arith::MaximumFOp::create(b, maxAll, ms.back());
      }
      // A row no slice saw keeps -inf; exp2 then sees -inf - 0.
      Value shift = arith::SelectOp::create(
          b, arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, maxAll, negInf),
          cF32(b, 0.0f), maxAll);
      SmallVector<Value> scales;
      Value sum = cF32(b, 0.0f);
      for (int64_t w = 0; w < keyWarps; ++w) {
        scales.push_back(exp2Approx(b, arith::SubFOp::create(b, ms[w], shift)));
        sum = arith::AddFOp::create(b, sum,
                                    arith::MulFOp::create(b, ls[w], scales[w]));
      }
      rowM[2 * m + i] = maxAll;
      rowL[2 * m + i] = sum;
      for (int64_t n = 0; n < nTilesDv; ++n) {
        Value col = arith::AddIOp::create(b, twoT, cIdx(b, 8 * n));
        Value merged[2] = {cF32(b, 0.0f), cF32(b, 0.0f)};
        for (int64_t w = 0; w < keyWarps; ++w) {
          Value pair = vector::LoadOp::create(b, f32x2, partialO,
                                              ValueRange{cIdx(b, w), row, col});
          for (int64_t j = 0; j < 2; ++j)
            merged[j] = arith::AddFOp::create(
                b, merged[j],
                arith::MulFOp::create(
                    b, vector::ExtractOp::create(b, pair, ArrayRef<int64_t>{j}),
                    scales[w]));
        }
        Value &a = acc[m * nTilesDv + n];
        a = accSet(b, accSet(b, a, merged[0], i, 0), merged[1], i, 1);
      }
    }
}

Value Sm80DecodeBuilder::rowOf(int64_t m, int64_t i) {
  return i32(arith::DivUIOp::create(b, packedRowOf(m, i), group));
}

Value Sm80DecodeBuilder::loadQTile() {
  // Packed row r is Q[b, head + r % G, r / G]: no single row stride.
  SmallVector<Value> tokens;
  copyOperand(
      Operand::Q, Value(), packedStart, tokens, RowCheck::PerChunk,
      [&](Value r) {
        Value inGroup = arith::RemUIOp::create(b, r, group);
        Value position = arith::DivUIOp::create(b, r, group);
        return arith::AddIOp::create(
            b, qBase,
            arith::AddIOp::create(
                b, arith::MulIOp::create(b, inGroup, qStrideH),
                arith::MulIOp::create(b, position, qStrideS)));
      },
      packedRows);
  return commitGroup(tokens);
}

Value Sm80DecodeBuilder::pageEntry(Value page) {
  // In 32 bits, as the ABI has pages, entries and num_pages: on index
  // (64-bit) each clamp was two compares and two selects, and the page
  // arithmetic made the page-16 decode's key loop 75% longer than the
  // contiguous one's (docs/PERF.md run 259).
  Value lastCachePage = arith::DivUIOp::create(
      b, arith::SubIOp::create(b, arg.lookup("seq_k"), cI32(1)),
      cI32(s.pageSize));
  page = arith::MinUIOp::create(b, i32(page), lastCachePage);
  Value entry = arith::AddIOp::create(
      b, arith::MulIOp::create(b, batchIdx, idx("block_table_stride")),
      asUnsignedIndex(page));
  Value stored = memref::LoadOp::create(b, arg.lookup("block_table"),
                                        ValueRange{entry});
  Value lastPage = arith::SubIOp::create(b, arg.lookup("num_pages"), cI32(1));
  stored = arith::MaxSIOp::create(
      b, arith::MinSIOp::create(b, stored, lastPage), cI32(0));
  return asUnsignedIndex(stored);
}

Value Sm80DecodeBuilder::pageStart(StringRef operand, Value entry) {
  bool isKey = operand == "k";
  return arith::AddIOp::create(
      b, isKey ? kBase : vBase,
      arith::MulIOp::create(b, entry, cacheIdx(operand.str() + "_stride_b")));
}

Value Sm80DecodeBuilder::loadKVBlock(Value block, Value stage) {
  Value rowStart = arith::MulIOp::create(b, block, cIdx(b, s.blockN));
  // A left-padded sequence's rows below keyStart are never read: its first
  // block gets zeros there (docs/KVCACHE.md "What a step reads").
  RowFloorScope floor(*this, keyStart);
  if (!s.pageSize)
    return commitKVCopies(
        rowStart,
        [&](RowCheck check, SmallVectorImpl<Value> &tokens) {
          copyOperand(Operand::K, stage, rowStart, tokens, check, nullptr,
                      copyLimit);
          copyOperand(Operand::V, stage, rowStart, tokens, check, nullptr,
                      copyLimit);
        },
        copyLimit);
  // Rows of one block may lie on several pages: the copies look up each
  // page they reach (once per pass where pages hold whole passes, and then
  // once for K and V: the j-th page under the block's rows, looked up by
  // the K copies, is the V copies' too).
  auto kPageStart = [&](Value page) {
    return pageStart("k", pageEntry(page));
  };
  auto vPageStart = [&](Value page) {
    return pageStart("v", pageEntry(page));
  };
  auto copyKV = [&](RowCheck check, SmallVectorImpl<Value> &tokens) {
    // Made where first asked for, inside this branch of the copies.
    SmallVector<Value> entries(std::max<int64_t>(1, s.blockN / s.pageSize));
    auto tileEntry = [&](int64_t j) {
      if (!entries[j])
        entries[j] = pageEntry(arith::DivUIOp::create(
            b, arith::AddIOp::create(b, rowStart, cIdx(b, j * s.pageSize)),
            cIdx(b, s.pageSize)));
      return entries[j];
    };
    auto kTilePage = [&](int64_t j) { return pageStart("k", tileEntry(j)); };
    auto vTilePage = [&](int64_t j) { return pageStart("v", tileEntry(j)); };
    PagedRows kPages{s.pageSize, kPageStart, kTilePage},
        vPages{s.pageSize, vPageStart, vTilePage};
    copyOperand(Operand::K, stage, rowStart, tokens, check, nullptr,
                copyLimit, &kPages);
    copyOperand(Operand::V, stage, rowStart, tokens, check, nullptr,
                copyLimit, &vPages);
  };
  // Page by page at D <= 64 and D = 128 (run 89). The per-pass page
  // addresses spilled 4-20 bytes in the causal variants past D = 128 (64
  // rows of O next to 32-key blocks) and 4 bytes at D = 96 (sm_90a); chunk
  // by chunk those fit.
  if (s.headDim > 64 && s.headDim != 128) {
    SmallVector<Value> tokens;
    copyKV(RowCheck::PerChunk, tokens);
    return commitGroup(tokens);
  }
  return commitKVCopies(rowStart, copyKV, copyLimit);
}

void Sm80DecodeBuilder::writeEpilogue(const SoftmaxState &final) {
  Value single = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, numSplits,
                                       cIdx(b, 1));
  Value isLeader =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, t, cIdx(b, 0));
  Value out = arg.lookup("o"), lse = arg.lookup("lse");
  Value outPartial = arg.lookup("o_partial");
  Value lsePartial = arg.lookup("lse_partial");
  Value batch = idx("batch");
  Value twoT = arith::MulIOp::create(b, t, cIdx(b, 2));
  Value negInf = cF32(b, -INFINITY);
  auto f32x2 = VectorType::get({2}, b.getF32Type());
  SmallVector<Value> acc(final.acc), rowL, rowM;
  if (s.swapsDecodeOperands()) {
    // Rows 2t, 2t + 1: each sum over the 8 lanes that share t.
    for (int64_t j = 0; j < 2; ++j) {
      rowL.push_back(columnReduceSum(b, final.rowSum[j]));
      rowM.push_back(final.rowMax[j]);
    }
  } else {
    for (int64_t m = 0; m < mt; ++m)
      for (int64_t i = 0; i < 2; ++i) {
        rowL.push_back(quadReduceSum(b, final.rowSum[2 * m + i]));
        rowM.push_back(final.rowMax[2 * m + i]);
      }
  }
  decideClusterMerge();
  if (s.keyWarps() > 1) {
    mergeKeyWarps(acc, rowL, rowM);
  } else if (inCluster) {
    // The partial rows go where the ring was: its last prefetches must
    // have landed and every warp be done reading it.
    auto ifCluster = scf::IfOp::create(b, TypeRange{}, inCluster, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifCluster.getThenRegion().front());
    NVVM::CpAsyncWaitGroupOp::create(b, b.getI32IntegerAttr(0));
    gpu::BarrierOp::create(b);
  }
  // The warps of key slice 0 write the rows.
  Value owner = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, keyWarp,
                                      cIdx(b, 0));
  // Thread t's pair k of a row: columns 8k + 2t, +1 of the accumulators'
  // own layout; for an FP8 cache (tiles of even and odd columns, see the
  // file comment), accumulator tiles 4q + 2h, 4q + 2h + 1's elements j are
  // columns 32q + 16h + 4t + 2j, +1.
  Value fourT = s.fp8Cache ? arith::MulIOp::create(b, t, cIdx(b, 4)) : Value();
  auto pairColumn = [&](int64_t k) -> Value {
    if (!s.fp8Cache)
      return arith::AddIOp::create(b, twoT, cIdx(b, 8 * k));
    return arith::AddIOp::create(b, fourT,
                                 cIdx(b, 32 * (k / 4) + 16 * (k % 4 / 2) +
                                             2 * (k % 2)));
  };
  auto pairValues = [&](ArrayRef<Value> values, int64_t k)
      -> std::pair<Value, Value> {
    if (!s.fp8Cache)
      return {values[2 * k], values[2 * k + 1]};
    int64_t even = k / 2 * 2, j = k % 2; // tiles even, even + 1
    return {values[2 * even + j], values[2 * (even + 1) + j]};
  };
  for (int64_t m = 0; m < mt; ++m)
    for (int64_t i = 0; i < rowHalves(); ++i) {
      // A split that saw no key has LSE -inf (weight 0 in the combine).
      auto [inv, rowLse] =
          rowStatistics(rowL[2 * m + i], rowM[2 * m + i], -INFINITY);
      if (vDescale) // O = dv * (P V8) / l; LSE is the scores'
        inv = arith::MulFOp::create(b, inv, vDescale);
      SmallVector<Value> values;
      for (int64_t n = 0; n < nTilesDv; ++n)
        for (int64_t j = 0; j < 2; ++j)
          values.push_back(arith::MulFOp::create(
              b, accGet(b, acc[m * nTilesDv + n], i, j), inv));
      Value r = packedRowOf(m, i);
      Value valid = arith::AndIOp::create(
          b, owner,
          arith::CmpIOp::create(b, arith::CmpIPredicate::ult, r, packedRows));
      auto ifValid = scf::IfOp::create(b, TypeRange{}, valid, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifValid.getThenRegion().front());
      auto [h, position, statRow] = placeOfPackedRow(r);
      auto ifSingle = scf::IfOp::create(b, TypeRange{}, single, true);
      {
        // One split: O in the dtype and layout of Q, LSE +inf for a row
        // with no key (the op's contract).
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(&ifSingle.getThenRegion().front());
        Value oRow = outputRow(h, position);
        for (int64_t n = 0; n < nTilesDv; ++n) {
          auto [lo, hi] = pairValues(values, n);
          storePair(b, lo, hi, s.elementType, out,
                    ValueRange{arith::AddIOp::create(b, oRow, pairColumn(n))});
        }
        auto ifLead = scf::IfOp::create(b, TypeRange{}, isLeader, false);
        b.setInsertionPointToStart(&ifLead.getThenRegion().front());
        Value empty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ,
                                            rowLse, negInf);
        memref::StoreOp::create(
            b, arith::SelectOp::create(b, empty, cF32(b, INFINITY), rowLse),
            lse, ValueRange{statRow});
      }
      {
        // Several: split-major [splits][B * Hq * Sq] rows of Dv f32, or in
        // a cluster launch the block's own rows in shared memory.
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(&ifSingle.getElseRegion().front());
        if (inCluster) {
          auto ifCluster = scf::IfOp::create(b, TypeRange{}, inCluster, true);
          b.setInsertionPointToStart(&ifCluster.getThenRegion().front());
          Value local = arith::SubIOp::create(b, r, packedStart);
          Value xO = exchangeO();
          for (int64_t n = 0; n < nTilesDv; ++n) {
            auto [lo, hi] = pairValues(values, n);
            vector::StoreOp::create(
                b, vector::FromElementsOp::create(b, f32x2, ValueRange{lo, hi}),
                xO, ValueRange{local, pairColumn(n)});
          }
          auto ifLead = scf::IfOp::create(b, TypeRange{}, isLeader, false);
          {
            OpBuilder::InsertionGuard g3(b);
            b.setInsertionPointToStart(&ifLead.getThenRegion().front());
            memref::StoreOp::create(b, rowLse, exchangeLse(),
                                    ValueRange{local});
          }
          b.setInsertionPointToStart(&ifCluster.getElseRegion().front());
        }
        Value partialRow = arith::AddIOp::create(
            b,
            arith::MulIOp::create(
                b, split,
                arith::MulIOp::create(
                    b, arith::MulIOp::create(b, batch, headsQ), seqQ)),
            statRow);
        Value oRow =
            arith::MulIOp::create(b, partialRow, cIdx(b, s.headDimV));
        for (int64_t n = 0; n < nTilesDv; ++n) {
          auto [lo, hi] = pairValues(values, n);
          Value pair = vector::FromElementsOp::create(b, f32x2,
                                                      ValueRange{lo, hi});
          vector::StoreOp::create(
              b, pair, outPartial,
              ValueRange{arith::AddIOp::create(b, oRow, pairColumn(n))},
              /*nontemporal=*/false, llvm::MaybeAlign(8));
        }
        auto ifLead = scf::IfOp::create(b, TypeRange{}, isLeader, false);
        b.setInsertionPointToStart(&ifLead.getThenRegion().front());
        memref::StoreOp::create(b, rowLse, lsePartial, ValueRange{partialRow});
      }
    }
  mergeIfLastSplit();
  if (inCluster)
    mergeInCluster();
}

std::tuple<Value, Value, Value> Sm80DecodeBuilder::placeOfPackedRow(Value r) {
  Value h = arith::AddIOp::create(b, head, arith::RemUIOp::create(b, r, group));
  Value position = arith::DivUIOp::create(b, r, group);
  Value row = arith::AddIOp::create(
      b,
      arith::MulIOp::create(
          b,
          arith::AddIOp::create(b, arith::MulIOp::create(b, batchIdx, headsQ),
                                h),
          seqQ),
      position);
  return {h, position, row};
}

Value Sm80DecodeBuilder::outputRow(Value h, Value position) {
  return arith::AddIOp::create(
      b, operandBase("o", h),
      arith::MulIOp::create(b, position, idx("o_stride_s")));
}

void Sm80DecodeBuilder::mergeIfLastSplit() {
  // Why here and not in decode_combine: a second launch costs its launch
  // gap, the drain of this grid and a grid of its own (10-12 us against a
  // 180 us step on an H100, run 112), where the block that completes a
  // group merges its few rows while other blocks still stream.
  //
  // A counter of split_arrivals counts the blocks done of a row group (or
  // in two levels, of a chunk of its splits, then the chunks). It is 0 at
  // launch, and the last block's count puts it back to 0 (atom.inc wraps
  // at the count - 1), so the runtime keeps the counters from launch to
  // launch instead of clearing them before each: the clear was a memset
  // node and its dependency gap, 2.3-2.8 us of a split step (run 240). One
  // atomic, no retries: a compare-and-swap loop that tagged the word
  // against a fresh workspace's garbage cost 10-25 us at 16 splits, the
  // splits of a group retrying one after the other (run 112).
  Type i32 = b.getI32Type();
  // merge_splits 1; where the kernel can merge in a cluster, 2 is that
  // merge (mergeInCluster), whose launch binds no counters.
  bool clusterToo = s.clusterMergeSplits() > 0;
  Value fused = arith::AndIOp::create(
      b,
      arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, numSplits,
                            cIdx(b, 1)),
      arith::CmpIOp::create(
          b, clusterToo ? arith::CmpIPredicate::eq : arith::CmpIPredicate::ne,
          arg.lookup("merge_splits"),
          arith::ConstantIntOp::create(b, i32, clusterToo ? 1 : 0)));
  auto ifFused = scf::IfOp::create(b, TypeRange{}, fused, false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifFused.getThenRegion().front());
  // Release: every thread's partial rows are performed at GPU scope before
  // the block counts itself in. The ring is the flag's shared word, so its
  // last prefetches must have landed.
  NVVM::MembarOp::create(b, NVVM::MemScopeKind::GPU);
  NVVM::CpAsyncWaitGroupOp::create(b, b.getI32IntegerAttr(0));
  gpu::BarrierOp::create(b);
  Value flag = sharedTile(sharedMemoryBytes(), {1}, 0, i32);
  Value mBlocks = arith::DivUIOp::create(
      b, gpu::GridDimOp::create(b, gpu::Dimension::x), numSplits);
  Value rowGroup = arith::AddIOp::create(
      b,
      arith::MulIOp::create(
          b,
          arith::AddIOp::create(
              b, arith::MulIOp::create(b, batchIdx, idx("heads_kv")), headKV),
          mBlocks),
      arith::DivUIOp::create(b, packedStart, cIdx(b, s.blockM)));
  // Past 2 * chunk splits, in two levels (decode_splits.h,
  // flashfuse_decode_merge_chunks): the block that completes a chunk of
  // consecutive splits merges them into the chunk's first split's partial
  // rows, and the block that completes the last chunk merges the chunks.
  // One block reading every split's rows took about 0.1 us a split.
  if (!mergesInChunks(s)) {
    Value last = countIn(flag, rowGroup, numSplits);
    auto ifLast = scf::IfOp::create(b, TypeRange{}, last, false);
    b.setInsertionPointToStart(&ifLast.getThenRegion().front());
    // Acquire: the other splits' rows are read after their counts.
    NVVM::MembarOp::create(b, NVVM::MemScopeKind::GPU);
    mergeSplitRowsOfGroup(cIdx(b, 0), cIdx(b, 1), numSplits, Value());
    return;
  }
  const int64_t chunk = FLASHFUSE_DECODE_MERGE_CHUNK;
  Value twoLevels = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                          numSplits, cIdx(b, 2 * chunk));
  Value chunks = arith::SelectOp::create(
      b, twoLevels, arith::CeilDivUIOp::create(b, numSplits, cIdx(b, chunk)),
      cIdx(b, 0));
  // The counters of flashfuse_decode_split_counters: the group's, then its
  // chunks'.
  Value groupCounter = arith::MulIOp::create(
      b, rowGroup, arith::AddIOp::create(b, chunks, cIdx(b, 1)));
  Value chunkOf = arith::DivUIOp::create(b, split, cIdx(b, chunk));
  Value chunkFirst = arith::MulIOp::create(b, chunkOf, cIdx(b, chunk));
  Value chunkSplits = arith::MinUIOp::create(
      b, cIdx(b, chunk), arith::SubIOp::create(b, numSplits, chunkFirst));
  Value last = countIn(
      flag,
      arith::SelectOp::create(
          b, twoLevels,
          arith::AddIOp::create(
              b, groupCounter, arith::AddIOp::create(b, chunkOf, cIdx(b, 1))),
          groupCounter),
      arith::SelectOp::create(b, twoLevels, chunkSplits, numSplits));
  auto ifChunks = scf::IfOp::create(b, b.getI1Type(), twoLevels, true);
  {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(&ifChunks.getThenRegion().front());
    auto ifLastOfChunk = scf::IfOp::create(b, b.getI1Type(), last, true);
    scf::YieldOp::create(b, ifLastOfChunk.getResult(0));
    b.setInsertionPointToStart(&ifLastOfChunk.getThenRegion().front());
    // Acquire the chunk's rows; release the merged ones before the count.
    NVVM::MembarOp::create(b, NVVM::MemScopeKind::GPU);
    mergeSplitRowsOfGroup(chunkFirst, cIdx(b, 1), chunkSplits, chunkFirst);
    NVVM::MembarOp::create(b, NVVM::MemScopeKind::GPU);
    gpu::BarrierOp::create(b);
    scf::YieldOp::create(b, countIn(flag, groupCounter, chunks));
    b.setInsertionPointToStart(&ifLastOfChunk.getElseRegion().front());
    scf::YieldOp::create(b, last);
    b.setInsertionPointToStart(&ifChunks.getElseRegion().front());
    scf::YieldOp::create(b, last);
  }
  auto ifLast = scf::IfOp::create(b, TypeRange{}, ifChunks.getResult(0), false);
  b.setInsertionPointToStart(&ifLast.getThenRegion().front());
  // Acquire: the other splits' (or chunks') rows are read after their
  // counts.
  NVVM::MembarOp::create(b, NVVM::MemScopeKind::GPU);
  mergeSplitRowsOfGroup(
      cIdx(b, 0),
      arith::SelectOp::create(b, twoLevels, cIdx(b, chunk), cIdx(b, 1)),
      arith::SelectOp::create(b, twoLevels, chunks, numSplits), Value());
}

Value Sm80DecodeBuilder::countIn(Value flag, Value counterIdx,
                                 Value arrivals) {
  Type i32 = b.getI32Type();
  Value isFirst =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, cIdx(b, 0));
  {
    auto ifFirst = scf::IfOp::create(b, TypeRange{}, isFirst, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
    auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
    Value counter = LLVM::IntToPtrOp::create(
        b, globalPtr,
        byteAddress(arg.lookup("split_arrivals"), ValueRange{counterIdx}));
    Value bound = arith::SubIOp::create(b, arrivals, cIdx(b, 1));
    Value before = LLVM::AtomicRMWOp::create(
        b, LLVM::AtomicBinOp::uinc_wrap, counter,
        arith::IndexCastOp::create(b, i32, bound),
        LLVM::AtomicOrdering::monotonic);
    Value isLast = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                         asIndex(before), bound);
    memref::StoreOp::create(b, arith::ExtUIOp::create(b, i32, isLast), flag,
                            ValueRange{cIdx(b, 0)});
  }
  gpu::BarrierOp::create(b);
  return arith::CmpIOp::create(
      b, arith::CmpIPredicate::ne,
      memref::LoadOp::create(b, flag, ValueRange{cIdx(b, 0)}),
      arith::ConstantIntOp::create(b, i32, 0));
}

void Sm80DecodeBuilder::mergeSplitRowsOfGroup(Value first, Value stride,
                                              Value count, Value intoSplit) {
  // Every thread of the block merges (row, 4 columns) items, whatever the
  // row count: the merge is a chain of L2 round trips that the whole grid
  // waits for (the last group's), so its length is the loads in flight.
  // A warp a row and four splits at a time took 18 round trips for 64
  // splits, with half the warps idle at G = 2 (docs/PERF.md run 565).
  Value rows = arith::MulIOp::create(
      b, arith::MulIOp::create(b, idx("batch"), headsQ), seqQ);
  int64_t quads = s.headDimV / 4;
  Value rowsHere = arith::MinUIOp::create(
      b, cIdx(b, s.blockM), arith::SubIOp::create(b, packedRows, packedStart));
  Value threads = cIdx(b, s.threads());
  // Thread t takes items t, t + threads, ...: counted from 0, since a loop
  // from t (a dynamic lower bound) raised every decode kernel's registers
  // by 2-11 on sm_80 and spilled its ALiBi kernels at the 255 cap.
  Value itemCount = arith::MulIOp::create(b, rowsHere, cIdx(b, quads));
  Value own = arith::SelectOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tid, itemCount),
      arith::CeilDivUIOp::create(b, arith::SubIOp::create(b, itemCount, tid),
                                 threads),
      cIdx(b, 0));
  auto items = scf::ForOp::create(b, cIdx(b, 0), own, cIdx(b, 1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(items.getBody());
  Value item = arith::AddIOp::create(
      b, tid, arith::MulIOp::create(b, items.getInductionVar(), threads));
  Value local = arith::DivUIOp::create(b, item, cIdx(b, quads));
  Value col = arith::MulIOp::create(
      b, arith::RemUIOp::create(b, item, cIdx(b, quads)), cIdx(b, 4));
  Value statRow = std::get<2>(
      placeOfPackedRow(arith::AddIOp::create(b, packedStart, local)));
  Value lsePartial = arg.lookup("lse_partial"),
        oPartial = arg.lookup("o_partial");
  MergedQuad merged =
      mergeSplitQuad(b, statRow, col, rows, first, stride, count, lsePartial,
                     oPartial, s.headDimV, mergeUnroll(s));
  if (!intoSplit) {
    storeMergedQuad(local, col, merged.columns, merged.lse);
    return;
  }
  // A chunk's rows as one split's: O normalised, f32, and LSE -inf where no
  // split of the chunk saw the row (the merge's +inf means that).
  Value partialRow = arith::AddIOp::create(
      b, arith::MulIOp::create(b, intoSplit, rows), statRow);
  vector::StoreOp::create(
      b, merged.columns, oPartial,
      ValueRange{arith::AddIOp::create(
          b, arith::MulIOp::create(b, partialRow, cIdx(b, s.headDimV)), col)},
      /*nontemporal=*/false, llvm::MaybeAlign(16));
  auto ifFirst = scf::IfOp::create(
      b, TypeRange{},
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, col, cIdx(b, 0)),
      false);
  b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
  Value empty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, merged.lse,
                                      cF32(b, INFINITY));
  memref::StoreOp::create(
      b, arith::SelectOp::create(b, empty, cF32(b, -INFINITY), merged.lse),
      lsePartial, ValueRange{partialRow});
}

void Sm80DecodeBuilder::storeMergedQuad(Value local, Value col, Value columns,
                                        Value lse) {
  auto [h, position, statRow] =
      placeOfPackedRow(arith::AddIOp::create(b, packedStart, local));
  Value oAt = arith::AddIOp::create(b, outputRow(h, position), col);
  for (int64_t j = 0; j < 2; ++j)
    storePair(b,
              vector::ExtractOp::create(b, columns, ArrayRef<int64_t>{2 * j}),
              vector::ExtractOp::create(b, columns,
                                        ArrayRef<int64_t>{2 * j + 1}),
              s.elementType, arg.lookup("o"),
              ValueRange{arith::AddIOp::create(b, oAt, cIdx(b, 2 * j))});
  auto ifFirst = scf::IfOp::create(
      b, TypeRange{},
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, col, cIdx(b, 0)),
      false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
  memref::StoreOp::create(b, lse, arg.lookup("lse"), ValueRange{statRow});
}

void Sm80DecodeBuilder::mergeInCluster() {
  // Why: the counters' merge (mergeIfLastSplit) pays global stores of the
  // partial rows, a fence, an atomic and the last block's L2 reads after
  // it, about 2 us of a step at B = 1 (docs/PERF.md run 240). Within a
  // cluster the rows stay in shared memory: one barrier to publish them,
  // the merge over distributed shared memory, one barrier before any block
  // exits (its rows must outlive the others' reads).
  auto ifCluster = scf::IfOp::create(b, TypeRange{}, inCluster, false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifCluster.getThenRegion().front());
  // barrier.cluster.arrive releases, .wait acquires: every block's rows
  // are visible to every other's after it.
  NVVM::ClusterArriveOp::create(b, b.getUnitAttr());
  NVVM::ClusterWaitOp::create(b, b.getUnitAttr());

  // Each thread merges 4 columns of a row at a time; the cluster's blocks
  // (rank = split: clusters of num_splits blocks along x) deal the row
  // group's (row, 4 columns) items out among all their threads.
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  auto f32x4 = VectorType::get({4}, f32);
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  auto clusterPtr = LLVM::LLVMPointerType::get(b.getContext(), 7);
  int64_t quads = s.headDimV / 4, maxSplits = s.clusterMergeSplits();
  Value rowsHere = arith::MinUIOp::create(
      b, cIdx(b, s.blockM), arith::SubIOp::create(b, packedRows, packedStart));
  Value threads = cIdx(b, s.threads());
  Value items = arith::MulIOp::create(b, rowsHere, cIdx(b, quads));
  auto loop = scf::ForOp::create(
      b, arith::AddIOp::create(b, arith::MulIOp::create(b, split, threads), tid),
      items, arith::MulIOp::create(b, numSplits, threads));
  b.setInsertionPointToStart(loop.getBody());
  Value item = loop.getInductionVar();
  Value local = arith::DivUIOp::create(b, item, cIdx(b, quads));
  Value col = arith::MulIOp::create(
      b, arith::RemUIOp::create(b, item, cIdx(b, quads)), cIdx(b, 4));
  // Split k's copy of `address` (in this block's shared memory). Splits
  // past num_splits read block 0's (always there) and weigh 0, so that
  // every split's loads are independent and in flight together.
  SmallVector<Value> inRange, rank;
  for (int64_t k = 0; k < maxSplits; ++k) {
    inRange.push_back(arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                            cIdx(b, k), numSplits));
    rank.push_back(arith::SelectOp::create(
        b, inRange.back(), arith::ConstantIntOp::create(b, i32, k),
        arith::ConstantIntOp::create(b, i32, 0)));
  }
  auto remote = [&](Value address, int64_t k) {
    return NVVM::MapaOp::create(
        b, clusterPtr, LLVM::IntToPtrOp::create(b, sharedPtr, address),
        rank[k]);
  };
  Value lseAddress = byteAddress(exchangeLse(), ValueRange{local});
  Value oAddress = byteAddress(exchangeO(), ValueRange{local, col});
  Value negInf = cF32(b, -INFINITY);
  // Half the splits at a time, the second half only where there is one
  // (all at once, the D = 32 kernels, 168 registers at 3 blocks an SM,
  // spilled 4 bytes).
  int64_t half = maxSplits / 2;
  Value more = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, numSplits,
                                     cIdx(b, half));
  auto loadLses = [&](int64_t from) {
    SmallVector<Value> out;
    for (int64_t k = from; k < from + half; ++k)
      out.push_back(arith::SelectOp::create(
          b, inRange[k],
          LLVM::LoadOp::create(b, f32, remote(lseAddress, k), 4), negInf));
    return out;
  };
  SmallVector<Value> lses = loadLses(0);
  {
    auto ifMore = scf::IfOp::create(b, SmallVector<Type>(half, f32), more,
                                    true);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(&ifMore.getThenRegion().front());
    scf::YieldOp::create(b, loadLses(half));
    b.setInsertionPointToStart(&ifMore.getElseRegion().front());
    scf::YieldOp::create(b, SmallVector<Value>(half, negInf));
    llvm::append_range(lses, ifMore.getResults());
  }
  // lse = log Σ exp(lse_k), O = Σ exp(lse_k - lse) O_k (SplitMerge.h);
  // a row no split saw (every lse_k -inf) gets O = 0 and LSE +inf.
  Value maxLse = negInf;
  for (Value l : lses)
    maxLse = arith::MaximumFOp::create(b, maxLse, l);
  LseMerge rowMerge(b, maxLse);
  SmallVector<Value> weights;
  Value sum = cF32(b, 0.0f);
  for (Value l : lses) {
    weights.push_back(rowMerge.weight(b, l));
    sum = arith::AddFOp::create(b, sum, weights.back());
  }
  Value invSum = rowMerge.inverseSum(b, sum);
  // The O columns likewise half the splits at a time.
  auto accumulate = [&](Value merged, int64_t from) {
    SmallVector<Value> parts;
    for (int64_t k = from; k < from + half; ++k)
      parts.push_back(LLVM::LoadOp::create(b, f32x4, remote(oAddress, k), 16));
    for (int64_t k = from; k < from + half; ++k)
      merged = arith::AddFOp::create(
          b, merged,
          arith::MulFOp::create(
              b,
              vector::BroadcastOp::create(
                  b, f32x4, arith::MulFOp::create(b, weights[k], invSum)),
              parts[k - from]));
    return merged;
  };
  Value merged = accumulate(
      arith::ConstantOp::create(b, f32x4, DenseElementsAttr::get(f32x4, 0.0f)),
      0);
  auto ifMore = scf::IfOp::create(b, TypeRange{f32x4}, more, true);
  {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(&ifMore.getThenRegion().front());
    scf::YieldOp::create(b, accumulate(merged, half));
    b.setInsertionPointToStart(&ifMore.getElseRegion().front());
    scf::YieldOp::create(b, merged);
  }
  storeMergedQuad(local, col, ifMore.getResult(0),
                  rowMerge.lse(b, maxLse, sum));
  b.setInsertionPointAfter(loop);
  NVVM::ClusterArriveOp::create(b, b.getUnitAttr());
  NVVM::ClusterWaitOp::create(b, b.getUnitAttr());
}

void mlir::flash::buildSm80DecodeKernel(gpu::GPUFuncOp func,
                                        const KernelSpec &spec) {
  Sm80DecodeBuilder(func, spec).build();
}
