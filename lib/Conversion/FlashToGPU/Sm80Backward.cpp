//===- Sm80Backward.cpp - the FlashAttention-2 backward kernel ------------===//
//
// One thread block owns block_n keys of one (batch, query head): K_j and V_j
// stay in shared memory while the block walks the query blocks the
// causal/window band lets see them, Q_i and dO_i streamed through a
// `stages`-deep cp.async ring. Each warp owns 16 * keyTilesPerWarp keys and
// computes the transposed products, so that every intermediate is already
// the A operand of the next matmul:
//   Sᵀ  = K_j Q_iᵀ              (mma, B = Q via ldmatrix)
//   Pᵀ  = exp2(Sᵀ scale log2e − LSE log2e)   (saved LSE; +inf ⇒ P = 0)
//   dV += (Pᵀ ∘ Z) dO_i         (A = Pᵀ from registers, B = dO via ldmatrix.trans)
//   dPᵀ = V_j dO_iᵀ
//   dSᵀ = Pᵀ ∘ (dPᵀ ∘ Z − Dsum)  [∘ (1 − tanh²) with softcap]
//   dK += dSᵀ Q_i               (A = dSᵀ from registers)
//   dQ_i += dS K_j              (dSᵀ through shared memory, ldmatrix.trans;
//                                f32 atomics into dq_accum)
// Z is the dropout factor (1/(1-p) or 0, Philox keep test), Dsum = rowsum(dO ∘ O)
// from the preprocess kernel. scale is applied to dK and dQ once, at the
// end. dK and dV of the block's query head are written in the epilogue, one
// slice per query head; the postprocess kernel sums GQA groups. In
// deterministic mode the dQ product is left to the BackwardDQ kernel, so
// this kernel issues no float atomics.
//
//===----------------------------------------------------------------------===//
#include "Fragments.h"
#include "KernelBuilderBase.h"
#include "Recipes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

class Sm80BackwardBuilder : KernelBuilderBase {
public:
  Sm80BackwardBuilder(gpu::GPUFuncOp func, const KernelSpec &spec)
      : KernelBuilderBase(func, spec) {}

  void build();

private:
  using Frags = SmallVector<Value>;
  Value kStart;                 // first key of the block
  Value warpKey0;               // first key row of this warp in the tile
  Value qBase, doBase, kBase, vBase;
  Value sK, sV, sQ, sdO, sdS;
  Value rowBaseLse;             // (batch * Hq + head) * Sq
  int64_t mk = 0, nTilesM = 0, nTilesD = 0, nTilesDv = 0;

  void setUp();
  Value loadQdOBlock(Value block, Value stage);
  /// [mk][block_m / 8] accumulators of A[warp's keys] · B[block_m rows]ᵀ
  /// over `depth` columns, A read from `aTile`, B from `bTile[stage]`.
  SmallVector<Frags> productNT(Value aTile, Value bTile, Value stage,
                               int64_t depth);
  /// acc[mk][n] += Xᵀ-fragments (as A) · `bTile[stage]` (read transposed).
  void accumulateTN(SmallVector<Frags> &acc, ArrayRef<Frags> x, Value bTile,
                    Value stage, int64_t nTiles);
  Value keyOf(int64_t m, int64_t i);               // i32
  Value queryOf(Value qStart32, int64_t n, int64_t j); // i32
  void computeDQ(Value qStart);
  void storeRows(Value acc, StringRef name, int64_t m, int64_t n, Value factor,
                 int64_t width);
};

void Sm80BackwardBuilder::setUp() {
  readArguments();
  mk = s.keyTilesPerWarp();
  nTilesM = s.blockM / 8;
  nTilesD = s.headDim / 8;
  nTilesDv = s.headDimV / 8;
  kStart = arith::MulIOp::create(
      b, gpu::BlockIdOp::create(b, gpu::Dimension::x), cIdx(b, s.blockN));
  warpKey0 = arith::MulIOp::create(b, warp, cIdx(b, 16 * mk));
  qBase = operandBase("q", head);
  doBase = operandBase("do", head);
  kBase = operandBase("k", headKV);
  vBase = operandBase("v", headKV);
  rowBaseLse = arith::MulIOp::create(
      b, arith::AddIOp::create(b, arith::MulIOp::create(b, batchIdx, headsQ), head),
      seqQ);

  Value raw = sharedMemoryBytes();
  int64_t pad = KernelSpec::kRowPad, qRows = s.blockM * (s.headDim + pad) * 2;
  int64_t off = 0;
  sK = sharedTile(raw, {s.blockN, s.headDim + pad}, off, s.elementType);
  off += s.kStageBytes();
  sV = sharedTile(raw, {s.blockN, s.headDimV + pad}, off, s.elementType);
  off += s.vStageBytes();
  sQ = sharedTile(raw, {s.stages, s.blockM, s.headDim + pad}, off, s.elementType);
  off += s.stages * qRows;
  sdO = sharedTile(raw, {s.stages, s.blockM, s.headDimV + pad}, off, s.elementType);
  off += s.stages * qRows;
  if (!s.deterministic)
    sdS = sharedTile(raw, {s.blockN, s.blockM + pad}, off, s.elementType);
}

Value Sm80BackwardBuilder::loadQdOBlock(Value block, Value stage) {
  Value rowStart = arith::MulIOp::create(b, block, cIdx(b, s.blockM));
  copyTileAsync(arg.lookup("q"), qBase, idx("q_stride_s"), rowStart, seqQ, sQ,
                stage, s.blockM, s.headDim);
  return copyTileAsync(arg.lookup("do"), doBase, idx("do_stride_s"), rowStart,
                       seqQ, sdO, stage, s.blockM, s.headDimV);
}

SmallVector<Sm80BackwardBuilder::Frags>
Sm80BackwardBuilder::productNT(Value aTile, Value bTile, Value stage,
                               int64_t depth) {
  return warpProductNT(b, lane, aTile, warpKey0, bTile, stage, mk, nTilesM,
                       depth, s.elementType);
}

void Sm80BackwardBuilder::accumulateTN(SmallVector<Frags> &acc,
                                       ArrayRef<Frags> x, Value bTile,
                                       Value stage, int64_t nTiles) {
  for (int64_t kk = 0; kk < nTilesM / 2; ++kk) {
    SmallVector<Regs> a(mk);
    for (int64_t m = 0; m < mk; ++m)
      a[m] = accPairToA(b, x[m][2 * kk], x[m][2 * kk + 1], s.elementType);
    for (int64_t p = 0; p < nTiles / 2; ++p) {
      Regs bf = loadBPairTransposed(b, bTile, stage, lane, cIdx(b, 16 * p),
                                    cIdx(b, 16 * kk), s.elementType);
      for (int64_t m = 0; m < mk; ++m) {
        acc[m][2 * p] = mma(b, a[m], {bf[0], bf[1]}, acc[m][2 * p], s.elementType);
        acc[m][2 * p + 1] =
            mma(b, a[m], {bf[2], bf[3]}, acc[m][2 * p + 1], s.elementType);
      }
    }
  }
}

Value Sm80BackwardBuilder::keyOf(int64_t m, int64_t i) {
  // kStart + warp * 16 mk + 16 m + g + 8 i
  return i32(arith::AddIOp::create(
      b, arith::AddIOp::create(b, kStart, warpKey0),
      arith::AddIOp::create(b, g, cIdx(b, 16 * m + 8 * i))));
}

Value Sm80BackwardBuilder::queryOf(Value qStart32, int64_t n, int64_t j) {
  // qStart + 8 n + 2 t + j
  return arith::AddIOp::create(
      b, qStart32,
      i32(arith::AddIOp::create(b, arith::MulIOp::create(b, t, cIdx(b, 2)),
                                cIdx(b, 8 * n + j))));
}

void Sm80BackwardBuilder::computeDQ(Value qStart) {
  // dQ_i[q][d] = sum_k dS[q][k] K[k][d]: warps split the block's 16-row
  // query slabs and, with more warps than slabs (block_n wider than
  // block_m), the columns too; A = dS read transposed from dSᵀ, B = K read
  // transposed.
  int64_t groups = s.dqColumnGroups();
  int64_t slabWarps = s.warps / groups;
  int64_t mq = s.blockM / (16 * slabWarps);
  int64_t groupTiles = s.dqGroupColumns() / 8;
  Value warpRow0 = arith::MulIOp::create(
      b, arith::RemUIOp::create(b, warp, cIdx(b, slabWarps)), cIdx(b, 16 * mq));
  Value groupTile0 = arith::MulIOp::create(
      b, arith::DivUIOp::create(b, warp, cIdx(b, slabWarps)), cIdx(b, groupTiles));
  Value scale = arg.lookup("scale");
  Value dq = arg.lookup("dq_accum");
  // Column chunks of kDQChunk tiles: the dQ accumulators live next to the
  // whole dK and dV, so only a chunk of them is held at a time (re-reading
  // dS's A operands per chunk is cheaper than spilling; D = 128 spilled).
  constexpr int64_t kDQChunk = 4;
  for (int64_t m = 0; m < mq; ++m) {
    Value row0 = arith::AddIOp::create(b, warpRow0, cIdx(b, 16 * m));
    for (int64_t c0 = 0; c0 < groupTiles; c0 += kDQChunk) {
      int64_t chunk = std::min(kDQChunk, groupTiles - c0);
      // First 8-column tile of the chunk in the block's dQ.
      Value tile0 = arith::AddIOp::create(b, groupTile0, cIdx(b, c0));
      Frags acc(chunk, accZero(b));
      for (int64_t kk = 0; kk < s.blockN / 16; ++kk) {
        Regs a = loadATransposed(b, sdS, ValueRange{}, lane, row0,
                                 cIdx(b, 16 * kk), s.elementType);
        for (int64_t p = 0; p < chunk / 2; ++p) {
          Regs bf = loadBPairTransposed(
              b, sK, ValueRange{}, lane,
              arith::AddIOp::create(
                  b, arith::MulIOp::create(b, tile0, cIdx(b, 8)),
                  cIdx(b, 16 * p)),
              cIdx(b, 16 * kk), s.elementType);
          acc[2 * p] = mma(b, a, {bf[0], bf[1]}, acc[2 * p], s.elementType);
          acc[2 * p + 1] =
              mma(b, a, {bf[2], bf[3]}, acc[2 * p + 1], s.elementType);
        }
      }
      for (int64_t i = 0; i < 2; ++i) {
        Value q = arith::AddIOp::create(
            b, arith::AddIOp::create(b, qStart, row0),
            arith::AddIOp::create(b, g, cIdx(b, 8 * i)));
        Value inRange =
            arith::CmpIOp::create(b, arith::CmpIPredicate::slt, q, seqQ);
        auto ifRow = scf::IfOp::create(b, TypeRange{}, inRange, false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&ifRow.getThenRegion().front());
        Value rowOff = arith::MulIOp::create(
            b, arith::AddIOp::create(b, rowBaseLse, q), cIdx(b, s.headDim));
        for (int64_t n = 0; n < chunk; ++n) {
          // Columns 8 (tile0 + n) + 2t and the next: an even, 8-byte aligned
          // pair (dq_accum rows have D, a multiple of 8, elements).
          Value col = arith::AddIOp::create(
              b,
              arith::MulIOp::create(
                  b, arith::AddIOp::create(b, tile0, cIdx(b, n)), cIdx(b, 8)),
              arith::MulIOp::create(b, t, cIdx(b, 2)));
          atomicAddPair(b, dq, arith::AddIOp::create(b, rowOff, col),
                        arith::MulFOp::create(b, accGet(b, acc[n], i, 0), scale),
                        arith::MulFOp::create(b, accGet(b, acc[n], i, 1), scale),
                        /*vectorRed=*/s.arch >= 90);
        }
      }
    }
  }
}

void Sm80BackwardBuilder::storeRows(Value acc, StringRef name, int64_t m,
                                    int64_t n, Value factor, int64_t width) {
  // Rows i = 0, 1 of accumulator tile (m, n) into the contiguous
  // [B, Hq, Sk, width] slice `name`, as pairs of halves.
  auto pairTy = VectorType::get({2}, s.elementType);
  auto f32x2 = VectorType::get({2}, b.getF32Type());
  for (int64_t i = 0; i < 2; ++i) {
    Value key = asIndex(keyOf(m, i));
    Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, key, seqK);
    auto ifRow = scf::IfOp::create(b, TypeRange{}, inRange, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifRow.getThenRegion().front());
    Value slice = arith::AddIOp::create(
        b, arith::MulIOp::create(b, batchIdx, headsQ), head);
    Value rowOff = arith::MulIOp::create(
        b, arith::AddIOp::create(b, arith::MulIOp::create(b, slice, seqK), key),
        cIdx(b, width));
    Value col = arith::AddIOp::create(b, arith::MulIOp::create(b, t, cIdx(b, 2)),
                                      cIdx(b, 8 * n));
    Value x0 = accGet(b, acc, i, 0), x1 = accGet(b, acc, i, 1);
    if (factor) {
      x0 = arith::MulFOp::create(b, x0, factor);
      x1 = arith::MulFOp::create(b, x1, factor);
    }
    Value h = arith::TruncFOp::create(
        b, pairTy, vector::FromElementsOp::create(b, f32x2, ValueRange{x0, x1}));
    vector::StoreOp::create(b, h, arg.lookup(name),
                            ValueRange{arith::AddIOp::create(b, rowOff, col)});
  }
}

void Sm80BackwardBuilder::build() {
  setUp();
  auto [mFirst, mEnd] = queryBlockRange(kStart, s.blockN, s.blockM);
  const float log2e = float(M_LOG2E);
  Value scoreFactor = arith::MulFOp::create(b, arg.lookup("scale"), cF32(b, log2e));

  // Prologue: K_j and V_j, then the first stages - 1 query blocks. Blocks
  // past Sq are fetched as zeros (src-size 0) so that every iteration
  // commits the same number of groups and the waits need no branches.
  copyTileAsync(arg.lookup("k"), kBase, idx("k_stride_s"), kStart, seqK, sK,
                ValueRange{}, s.blockN, s.headDim);
  copyTileAsync(arg.lookup("v"), vBase, idx("v_stride_s"), kStart, seqK, sV,
                ValueRange{}, s.blockN, s.headDimV);
  for (int64_t st = 0; st + 1 < s.stages; ++st)
    loadQdOBlock(arith::AddIOp::create(b, mFirst, cIdx(b, st)), cIdx(b, st));

  SmallVector<Value> init(mk * (nTilesD + nTilesDv), accZero(b));
  auto loop = scf::ForOp::create(b, mFirst, mEnd, cIdx(b, 1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    auto iter = loop.getRegionIterArgs();
    SmallVector<Frags> dK(mk), dV(mk);
    for (int64_t m = 0; m < mk; ++m) {
      dK[m].assign(iter.begin() + m * nTilesD, iter.begin() + (m + 1) * nTilesD);
      dV[m].assign(iter.begin() + mk * nTilesD + m * nTilesDv,
                   iter.begin() + mk * nTilesD + (m + 1) * nTilesDv);
    }
    Value rel = arith::SubIOp::create(b, i, mFirst);
    Value stage = arith::RemUIOp::create(b, rel, cIdx(b, s.stages));
    Value pfStage = arith::RemUIOp::create(
        b, arith::AddIOp::create(b, rel, cIdx(b, s.stages - 1)), cIdx(b, s.stages));
    Value group = loadQdOBlock(arith::AddIOp::create(b, i, cIdx(b, s.stages - 1)),
                               pfStage);
    // Two groups (Q, dO) per block: everything older than the stages - 1
    // blocks prefetched since, this block included, has landed.
    nvgpu::DeviceAsyncWaitOp::create(b, group,
                                     b.getI32IntegerAttr(2 * (s.stages - 1)));
    gpu::BarrierOp::create(b);

    Value qStart = arith::MulIOp::create(b, i, cIdx(b, s.blockM));
    Value qStart32 = i32(qStart);
    SmallVector<Frags> sT = productNT(sK, sQ, stage, s.headDim);

    // The saved statistics of query column (n, j), loaded where used
    // rather than held across the tile: 2 * block_m / 8 live registers each
    // made D = 128 spill. Rows past Sq read the last row; they are masked.
    Value lastRow = arith::SubIOp::create(b, seqQ, cIdx(b, 1));
    auto statAt = [&](StringRef name, int64_t n, int64_t j) {
      Value q = arith::MinSIOp::create(b, asIndex(queryOf(qStart32, n, j)), lastRow);
      Value at = arith::AddIOp::create(b, rowBaseLse, q);
      return Value(memref::LoadOp::create(b, arg.lookup(name), ValueRange{at}));
    };

    // P (and tanh for softcap) with or without masking, like the forward:
    // only tiles at the Sq/Sk tails, across the diagonal or under an
    // element mask pay for the predicate.
    Value needMask = tileNeedsMask(qStart, s.blockM, kStart, s.blockN,
                                   /*rowTail=*/true);
    int64_t perSet = mk * nTilesM;
    int64_t sets = s.softcap ? 2 : 1;
    SmallVector<Type> types(perSet * sets, accZero(b).getType());
    auto ifOp = scf::IfOp::create(b, types, needMask, /*withElse=*/true);
    for (bool masked : {true, false}) {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(masked ? &ifOp.getThenRegion().front()
                                        : &ifOp.getElseRegion().front());
      SmallVector<Frags> p = sT, th = sT;
      for (int64_t n = 0; n < nTilesM; ++n)
        for (int64_t j = 0; j < 2; ++j) {
          Value negLse = arith::MulFOp::create(b, statAt("lse", n, j),
                                               cF32(b, -log2e));
          for (int64_t m = 0; m < mk; ++m)
            for (int64_t ii = 0; ii < 2; ++ii) {
              Value raw = accGet(b, sT[m][n], ii, j);
              Value key, query;
              if (masked || !isPlainScore()) {
                key = keyOf(m, ii);
                query = queryOf(qStart32, n, j);
              }
              Value tanhV;
              Value pv = recomputeProbability(raw, query, key, negLse,
                                              scoreFactor, masked, &tanhV);
              if (s.softcap)
                th[m][n] = accSet(b, th[m][n], tanhV, ii, j);
              p[m][n] = accSet(b, p[m][n], pv, ii, j);
            }
        }
      SmallVector<Value> flat;
      for (auto &row : p)
        flat.append(row.begin(), row.end());
      if (s.softcap)
        for (auto &row : th)
          flat.append(row.begin(), row.end());
      scf::YieldOp::create(b, flat);
    }
    SmallVector<Frags> pT(mk, Frags(nTilesM)), tanhT(mk, Frags(nTilesM));
    for (int64_t m = 0; m < mk; ++m)
      for (int64_t n = 0; n < nTilesM; ++n) {
        pT[m][n] = ifOp.getResult(m * nTilesM + n);
        if (s.softcap)
          tanhT[m][n] = ifOp.getResult(perSet + m * nTilesM + n);
      }

    // dV += (Pᵀ ∘ Z) dO: Pᵀ ∘ Z is what O used. dPᵀ is computed only after
    // this, so that Sᵀ's and dPᵀ's fragments are never live together (with
    // both, D = 128 spilled).
    SmallVector<Frags> pdT = pT;
    if (s.dropout)
      for (int64_t m = 0; m < mk; ++m)
        for (int64_t n = 0; n < nTilesM; ++n)
          for (int64_t ii = 0; ii < 2; ++ii)
            for (int64_t j = 0; j < 2; ++j)
              pdT[m][n] = accSet(
                  b, pdT[m][n],
                  arith::MulFOp::create(
                      b, accGet(b, pT[m][n], ii, j),
                      dropoutFactor(queryOf(qStart32, n, j), keyOf(m, ii))),
                  ii, j);
    accumulateTN(dV, pdT, sdO, stage, nTilesDv);
    SmallVector<Frags> dpT = productNT(sV, sdO, stage, s.headDimV);

    // dSᵀ = Pᵀ ∘ (dPᵀ ∘ Z − Dsum).
    SmallVector<Frags> dsT = pT;
    for (int64_t n = 0; n < nTilesM; ++n)
      for (int64_t j = 0; j < 2; ++j) {
        Value dsum = statAt("delta", n, j);
        for (int64_t m = 0; m < mk; ++m)
          for (int64_t ii = 0; ii < 2; ++ii) {
            Value pv = accGet(b, pT[m][n], ii, j);
            Value z = s.dropout ? dropoutFactor(queryOf(qStart32, n, j), keyOf(m, ii))
                                : Value();
            Value ds = scoreGradient(pv, accGet(b, dpT[m][n], ii, j),
                                     dsum, z);
            if (s.gradBias) {
              // dBias = dS: each (query, key) belongs to one block pair, so
              // a plain store suffices.
              Value q = queryOf(qStart32, n, j), k = keyOf(m, ii);
              Value ok = arith::AndIOp::create(
                  b, arith::CmpIOp::create(b, arith::CmpIPredicate::slt, q, i32(seqQ)),
                  arith::CmpIOp::create(b, arith::CmpIPredicate::slt, k, i32(seqK)));
              auto ifIn = scf::IfOp::create(b, TypeRange{}, ok, false);
              OpBuilder::InsertionGuard g3(b);
              b.setInsertionPointToStart(&ifIn.getThenRegion().front());
              Value at = arith::AddIOp::create(
                  b,
                  arith::MulIOp::create(b, arith::AddIOp::create(b, rowBaseLse, asIndex(q)),
                                        seqK),
                  asIndex(k));
              memref::StoreOp::create(b, ds, arg.lookup("dbias"), ValueRange{at});
            }
            if (s.softcap)
              ds = rawScoreGradient(ds, accGet(b, tanhT[m][n], ii, j));
            dsT[m][n] = accSet(b, dsT[m][n], ds, ii, j);
          }
      }

    accumulateTN(dK, dsT, sQ, stage, nTilesD);

    if (!s.deterministic) {
      // dSᵀ to shared memory as the A operand of dQ (read transposed).
      auto pairTy = VectorType::get({2}, s.elementType);
      auto f32x2 = VectorType::get({2}, b.getF32Type());
      for (int64_t m = 0; m < mk; ++m)
        for (int64_t n = 0; n < nTilesM; ++n)
          for (int64_t ii = 0; ii < 2; ++ii) {
            Value row = arith::AddIOp::create(
                b, warpKey0, arith::AddIOp::create(b, g, cIdx(b, 16 * m + 8 * ii)));
            Value col = arith::AddIOp::create(
                b, arith::MulIOp::create(b, t, cIdx(b, 2)), cIdx(b, 8 * n));
            Value h = arith::TruncFOp::create(
                b, pairTy,
                vector::FromElementsOp::create(
                    b, f32x2,
                    ValueRange{accGet(b, dsT[m][n], ii, 0), accGet(b, dsT[m][n], ii, 1)}));
            vector::StoreOp::create(b, h, sdS, ValueRange{row, col});
          }
      gpu::BarrierOp::create(b);
      computeDQ(qStart);
    }
    // The next iteration's prefetch overwrites the stage read here (and
    // the dS tile).
    gpu::BarrierOp::create(b);
    SmallVector<Value> yields;
    for (auto &f : dK)
      yields.append(f.begin(), f.end());
    for (auto &f : dV)
      yields.append(f.begin(), f.end());
    scf::YieldOp::create(b, yields);
  }

  // Epilogue: dK · scale and dV, per query head. A block no query sees
  // writes zeros.
  auto results = loop.getResults();
  Value scale = arg.lookup("scale");
  for (int64_t m = 0; m < mk; ++m) {
    for (int64_t n = 0; n < nTilesD; ++n)
      storeRows(results[m * nTilesD + n], "dk", m, n, scale, s.headDim);
    for (int64_t n = 0; n < nTilesDv; ++n)
      storeRows(results[mk * nTilesD + m * nTilesDv + n], "dv", m, n, Value(),
                s.headDimV);
  }
  gpu::ReturnOp::create(b);
}

} // namespace

void mlir::flash::buildSm80BackwardKernel(gpu::GPUFuncOp func,
                                          const KernelSpec &spec) {
  Sm80BackwardBuilder(func, spec).build();
}
