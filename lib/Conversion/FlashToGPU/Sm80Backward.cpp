//===- Sm80Backward.cpp - the sm80 recipe's backward matrix engine --------===//
//
// The backward schedule of BackwardBuilder.cpp on mma.sync m16n8k16: K, V
// and the Q/dO ring in padded shared-memory tiles read with ldmatrix (Q and
// dO transposed where they are the B operand of dK and dV); dSᵀ goes through
// a padded tile read back transposed as the A operand of dQ, whose f32
// partial products are reduced into dq_accum with atomics.
//
//===----------------------------------------------------------------------===//
#include "BackwardBuilder.h"
#include "BlockSparseQueryIterator.h"
#include "Fragments.h"
#include "Recipes.h"
#include "VarlenScheduler.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

class Sm80BackwardBuilder : public BackwardBuilder {
public:
  using BackwardBuilder::BackwardBuilder;

private:
  Value sK, sV, sQ, sdO, sdS;

  void carveSharedMemory() override;
  void loadKeyValueTiles() override;
  Value loadQdOBlock(Value block, Value stage) override;
  SmallVector<Value> zeroGradient(int64_t tiles) override {
    return SmallVector<Value>(mk * tiles, accZero(b));
  }
  Value gradientTile(ArrayRef<Value> acc, int64_t m, int64_t n,
                     int64_t tiles) override {
    return acc[m * tiles + n];
  }
  SmallVector<Frags> computeScoresT(Value stage) override {
    return productNT(sK, sQ, stage, s.mmaDim());
  }
  void accumulateDV(SmallVector<Value> &dV, ArrayRef<Frags> pdT,
                    Value stage) override {
    accumulateTN(dV, pdT, sdO, stage, nTilesDv, s.mmaDimV());
  }
  SmallVector<Frags> computeDPT(Value stage) override {
    return productNT(sV, sdO, stage, s.mmaDimV());
  }
  void accumulateDK(SmallVector<Value> &dK, ArrayRef<Frags> dsT,
                    Value stage) override {
    accumulateTN(dK, dsT, sQ, stage, nTilesD, s.mmaDim());
  }
  void accumulateDQ(ArrayRef<Frags> dsT, Value qStart, Value) override;

  /// [mk][block_m / 8] accumulators of A[warp's keys] · B[block_m rows]ᵀ
  /// over `depth` columns, A read from `aTile`, B from `bTile[stage]`.
  SmallVector<Frags> productNT(Value aTile, Value bTile, Value stage,
                               int64_t depth);
  /// acc[m * nTiles + n] += Xᵀ-fragments (as A) · `bTile[stage]` (read
  /// transposed), over the warp's column group of the tile's `width`
  /// columns.
  void accumulateTN(SmallVector<Value> &acc, ArrayRef<Frags> x, Value bTile,
                    Value stage, int64_t nTiles, int64_t width);
};

void Sm80BackwardBuilder::carveSharedMemory() {
  Value raw = sharedMemoryBytes();
  int64_t pad = KernelSpec::kRowPad;
  int64_t off = 0;
  sK = sharedTile(raw, {s.blockN, s.mmaDim() + pad}, off, s.elementType);
  off += s.kStageBytes();
  sV = sharedTile(raw, {s.blockN, s.mmaDimV() + pad}, off, s.elementType);
  off += s.vStageBytes();
  sQ = sharedTile(raw, {s.stages, s.blockM, s.mmaDim() + pad}, off, s.elementType);
  off += s.stages * s.qTileBytes();
  sdO = sharedTile(raw, {s.stages, s.blockM, s.mmaDimV() + pad}, off, s.elementType);
  off += s.stages * s.doTileBytes();
  if (!s.deterministic) {
    sdS = sharedTile(raw, {s.blockN, s.blockM + pad}, off, s.elementType);
    off += s.dsTileBytes();
  }
  carveStatisticTile(cIdx(b, off));
}

void Sm80BackwardBuilder::loadKeyValueTiles() {
  copyTileAsync(arg.lookup("k"), kBase, idx("k_stride_s"), kStart, seqK, sK,
                ValueRange{}, s.blockN, s.headDim);
  copyTileAsync(arg.lookup("v"), vBase, idx("v_stride_s"), kStart, seqK, sV,
                ValueRange{}, s.blockN, s.headDimV);
}

Value Sm80BackwardBuilder::loadQdOBlock(Value block, Value stage) {
  Value rowStart = arith::MulIOp::create(b, block, cIdx(b, s.blockM));
  SmallVector<Value> qTokens;
  issueTileCopies(arg.lookup("q"), qBase, idx("q_stride_s"), rowStart, seqQ,
                  sQ, stage, s.blockM, s.headDim, qTokens);
  // LSE and Dsum join Q's group.
  copyRowStatistics(rowStart, stage);
  commitGroup(qTokens);
  return copyTileAsync(arg.lookup("do"), doBase, idx("do_stride_s"), rowStart,
                       seqQ, sdO, stage, s.blockM, s.headDimV);
}

SmallVector<BackwardBuilder::Frags>
Sm80BackwardBuilder::productNT(Value aTile, Value bTile, Value stage,
                               int64_t depth) {
  return warpProductNT(b, lane, aTile, warpKey0, bTile, stage, mk, nTilesM,
                       depth, s.elementType);
}

void Sm80BackwardBuilder::accumulateTN(SmallVector<Value> &acc,
                                       ArrayRef<Frags> x, Value bTile,
                                       Value stage, int64_t nTiles,
                                       int64_t width) {
  // 16-column pairs of a column group past the tile's width (the last
  // group of an uneven split) are skipped: a warp-uniform branch.
  int64_t groupCols = 8 * nTiles;
  int64_t lastGroup0 = (s.kvColumnGroups() - 1) * groupCols;
  for (int64_t kk = 0; kk < nTilesM / 2; ++kk) {
    SmallVector<Regs> a(mk);
    for (int64_t m = 0; m < mk; ++m)
      a[m] = accPairToA(b, x[m][2 * kk], x[m][2 * kk + 1], s.elementType);
    for (int64_t p = 0; p < nTiles / 2; ++p) {
      auto pairProducts = [&](ArrayRef<Value> in) {
        Regs bf = loadBPairTransposed(b, bTile, stage, lane,
                                      groupColumn(groupCols, 16 * p),
                                      cIdx(b, 16 * kk), s.elementType);
        SmallVector<Value> out;
        for (int64_t m = 0; m < mk; ++m) {
          out.push_back(mma(b, a[m], {bf[0], bf[1]}, in[2 * m], s.elementType));
          out.push_back(
              mma(b, a[m], {bf[2], bf[3]}, in[2 * m + 1], s.elementType));
        }
        return out;
      };
      SmallVector<Value> in;
      for (int64_t m = 0; m < mk; ++m)
        in.append({acc[m * nTiles + 2 * p], acc[m * nTiles + 2 * p + 1]});
      SmallVector<Value> out;
      if (lastGroup0 + 16 * (p + 1) <= width) {
        out = pairProducts(in);
      } else {
        Value inside = arith::CmpIOp::create(
            b, arith::CmpIPredicate::ult, groupColumn(groupCols, 16 * p),
            cIdx(b, width));
        auto ifIn = scf::IfOp::create(b, ValueRange(in).getTypes(), inside,
                                      /*withElse=*/true);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&ifIn.getThenRegion().front());
        scf::YieldOp::create(b, pairProducts(in));
        b.setInsertionPointToStart(&ifIn.getElseRegion().front());
        scf::YieldOp::create(b, in);
        out = llvm::to_vector_of<Value>(ifIn.getResults());
      }
      for (int64_t m = 0; m < mk; ++m) {
        acc[m * nTiles + 2 * p] = out[2 * m];
        acc[m * nTiles + 2 * p + 1] = out[2 * m + 1];
      }
    }
  }
}

void Sm80BackwardBuilder::accumulateDQ(ArrayRef<Frags> dsT, Value qStart,
                                       Value) {
  // dSᵀ to shared memory as the A operand of dQ (read transposed), by the
  // first column group (the others hold the same values).
  std::optional<OpBuilder::InsertionGuard> groupGuard;
  if (columnGroup) {
    auto ifFirst = scf::IfOp::create(b, TypeRange{}, inFirstColumnGroup(),
                                     /*withElse=*/false);
    groupGuard.emplace(b);
    b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
  }
  for (int64_t m = 0; m < mk; ++m)
    for (int64_t n = 0; n < nTilesM; ++n)
      for (int64_t ii = 0; ii < 2; ++ii) {
        Value row = arith::AddIOp::create(
            b, warpKey0, arith::AddIOp::create(b, g, cIdx(b, 16 * m + 8 * ii)));
        Value col = arith::AddIOp::create(
            b, arith::MulIOp::create(b, t, cIdx(b, 2)), cIdx(b, 8 * n));
        storePair(b, accGet(b, dsT[m][n], ii, 0), accGet(b, dsT[m][n], ii, 1),
                  s.elementType, sdS, ValueRange{row, col});
      }
  groupGuard.reset();
  gpu::BarrierOp::create(b);

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
      addToDQAccum(acc, arith::AddIOp::create(b, qStart, row0), tile0);
    }
  }
}

} // namespace

void mlir::flash::buildSm80BackwardKernel(gpu::GPUFuncOp func,
                                          const KernelSpec &spec) {
  if (spec.varlen)
    VarlenBackwardScheduler<Sm80BackwardBuilder>(func, spec, UnownedRows::Keys)
        .build();
  else if (spec.blockSparse)
    BlockSparseQueryIterator<Sm80BackwardBuilder>(func, spec).build();
  else
    Sm80BackwardBuilder(func, spec).build();
}
