//===- Sm80BackwardDQ.cpp - dQ without atomics (deterministic backward) ---===//
//
// One thread block owns block_m query rows of one (batch, query head) and
// walks the key blocks the band allows, like the forward: Q_i and dO_i stay
// in shared memory, K_j and V_j stream through the cp.async ring. Per key
// block it recomputes S = Q Kᵀ and dP = dO Vᵀ, forms dS exactly as the main
// backward kernel does, and accumulates dQ += dS K in registers (dS's
// accumulators are the A operand, K is read with ldmatrix.trans). Every dQ
// element is summed by one thread in a fixed order, so the result is the
// same bit for bit on every run; grad_q is written in the dtype. A packed
// batch's dQ kernel is this one under the varlen tile scheduler
// (VarlenScheduler.h): its block is a query block of one sequence. A
// block-sparse one is this one under the forward's key-block iterator
// (BlockSparseIterator.h): it walks the blocks the forward's lists name
// for its query block, as the forward did.
//
//===----------------------------------------------------------------------===//
#include "BlockSparseIterator.h"
#include "Fragments.h"
#include "KernelBuilderBase.h"
#include "Recipes.h"
#include "VarlenScheduler.h"

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

class Sm80BackwardDQBuilder : public KernelBuilderBase {
public:
  Sm80BackwardDQBuilder(gpu::GPUFuncOp func, const KernelSpec &spec)
      : KernelBuilderBase(func, spec) {}

  void build();

protected:
  //===--- The key-block iterator's hooks (ForwardBuilder's) -------------===//
  /// The walk's positions, [first, end): the band's key blocks in a dense
  /// walk; BlockSparseIterator<Sm80BackwardDQBuilder> walks the forward's
  /// lists, as the forward does.
  virtual std::pair<Value, Value> blockKeyRange() {
    return keyBlockRange(mStart, s.blockM, s.blockN);
  }
  /// The key block of step `position` (dense: the position itself, which
  /// creates nothing).
  virtual Value keyBlockAt(Value position) { return position; }
  /// i1, whether mask_mod applies at step `position`; null: always.
  virtual Value appliesMaskMod(Value position) { return Value(); }
  /// The block's first query row from its blockIdx.x (the iterator reads
  /// it again opaquely inside the loop).
  Value firstRowOfBlock(Value blockX, Value gridX) {
    return arith::MulIOp::create(b, blockX, cIdx(b, s.blockM));
  }
  Value mStart;

private:
  using Frags = SmallVector<Value>;
  Value warpRow0, kBase, vBase, sQ, sdO, sK, sV;
  int64_t mt = 0, nTilesN = 0;

  Value rowOf(int64_t m, int64_t i) { // query row of fragment row (m, i), index
    return arith::AddIOp::create(
        b, arith::AddIOp::create(b, mStart, warpRow0),
        arith::AddIOp::create(b, g, cIdx(b, 16 * m + 8 * i)));
  }
  Value colOf(Value kvStart, int64_t n, int64_t j) { // key, i32
    return i32(arith::AddIOp::create(
        b, kvStart,
        arith::AddIOp::create(b, arith::MulIOp::create(b, t, cIdx(b, 2)),
                              cIdx(b, 8 * n + j))));
  }
  /// [mt][block_n / 8] accumulators of A[warp's rows] · B[stage]ᵀ.
  SmallVector<Frags> productNT(Value aTile, Value bTile, Value stage,
                               int64_t depth) {
    return warpProductNT(b, lane, aTile, warpRow0, bTile, stage, mt, nTilesN,
                         depth, s.elementType);
  }
  Value loadKV(Value block, Value stage) {
    Value rowStart = arith::MulIOp::create(b, block, cIdx(b, s.blockN));
    copyTileAsync(arg.lookup("k"), kBase, idx("k_stride_s"), rowStart, seqK, sK,
                  stage, s.blockN, s.headDim);
    return copyTileAsync(arg.lookup("v"), vBase, idx("v_stride_s"), rowStart,
                         seqK, sV, stage, s.blockN, s.headDimV);
  }
};

void Sm80BackwardDQBuilder::build() {
  readBlockArguments();
  mt = s.mTilesPerWarp();
  nTilesN = s.blockN / 8;
  int64_t nTilesD = s.mmaDim() / 8; // whole mma steps, stored up to D
  mStart = arith::MulIOp::create(
      b, gpu::BlockIdOp::create(b, gpu::Dimension::x), cIdx(b, s.blockM));
  exitPastEnd(mStart, /*keys=*/false);
  warpRow0 = arith::MulIOp::create(b, warp, cIdx(b, 16 * mt));
  kBase = operandBase("k", headKV);
  vBase = operandBase("v", headKV);
  Value raw = sharedMemoryBytes();
  int64_t pad = KernelSpec::kRowPad;
  int64_t qdoBytes = s.qTileBytes() + s.doTileBytes();
  sQ = sharedTile(raw, {s.blockM, s.mmaDim() + pad}, 0, s.elementType);
  sdO = sharedTile(raw, {s.blockM, s.mmaDimV() + pad}, s.qTileBytes(),
                   s.elementType);
  sK = sharedTile(raw, {s.stages, s.blockN, s.mmaDim() + pad}, qdoBytes,
                  s.elementType);
  sV = sharedTile(raw, {s.stages, s.blockN, s.mmaDimV() + pad},
                  qdoBytes + s.stages * s.kStageBytes(), s.elementType);
  auto [nStart, nEnd] = blockKeyRange();
  const float log2e = float(M_LOG2E);
  Value scoreFactor = arith::MulFOp::create(b, arg.lookup("scale"), cF32(b, log2e));
  readTileAlibiSlope();

  copyTileAsync(arg.lookup("q"), operandBase("q", head), idx("q_stride_s"),
                mStart, seqQ, sQ, ValueRange{}, s.blockM, s.headDim);
  copyTileAsync(arg.lookup("do"), operandBase("do", head), idx("do_stride_s"),
                mStart, seqQ, sdO, ValueRange{}, s.blockM, s.headDimV);
  for (int64_t st = 0; st + 1 < s.stages; ++st) {
    Value position = arith::AddIOp::create(b, nStart, cIdx(b, st));
    loadKV(keyBlockAt(position), cIdx(b, st));
  }

  // The rows' saved statistics (rows past Sq read the last row; they are
  // never written).
  Value rowBase = sliceRowStart(/*keys=*/false);
  Value lastRow = arith::SubIOp::create(b, seqQ, cIdx(b, 1));
  SmallVector<Value> negLse(2 * mt), dsum(2 * mt);
  for (int64_t m = 0; m < mt; ++m)
    for (int64_t i = 0; i < 2; ++i) {
      Value at = arith::AddIOp::create(
          b, rowBase, arith::MinSIOp::create(b, rowOf(m, i), lastRow));
      negLse[2 * m + i] = arith::MulFOp::create(
          b, memref::LoadOp::create(b, arg.lookup("lse"), ValueRange{at}),
          cF32(b, -log2e));
      dsum[2 * m + i] = memref::LoadOp::create(b, arg.lookup("delta"), ValueRange{at});
    }

  SmallVector<Value> init(mt * nTilesD, accZero(b));
  auto loop = scf::ForOp::create(b, nStart, nEnd, cIdx(b, 1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    SmallVector<Value> acc(loop.getRegionIterArgs());
    Value rel = arith::SubIOp::create(b, j, nStart);
    Value stage = arith::RemUIOp::create(b, rel, cIdx(b, s.stages));
    Value pfStage = arith::RemUIOp::create(
        b, arith::AddIOp::create(b, rel, cIdx(b, s.stages - 1)), cIdx(b, s.stages));
    Value pfPosition = arith::AddIOp::create(b, j, cIdx(b, s.stages - 1));
    Value group = loadKV(keyBlockAt(pfPosition), pfStage);
    // Two groups (K, V) per block: all but the stages - 1 blocks
    // prefetched since have landed (Q and dO with the first).
    nvgpu::DeviceAsyncWaitOp::create(b, group,
                                     b.getI32IntegerAttr(2 * (s.stages - 1)));
    gpu::BarrierOp::create(b);

    SmallVector<Frags> sc = productNT(sQ, sK, stage, s.mmaDim());
    SmallVector<Frags> dp = productNT(sdO, sV, stage, s.mmaDimV());
    Value kvStart = arith::MulIOp::create(b, keyBlockAt(j), cIdx(b, s.blockN));
    Value needMask = tileNeedsMask(mStart, s.blockM, kvStart, s.blockN,
                                   /*rowTail=*/false);
    // A step that skips mask_mod (a full block of a block-sparse walk)
    // needs masks only where the band or the key tail reach into it.
    Value maskModApplies = s.maskMod ? appliesMaskMod(j) : Value();
    if (maskModApplies)
      needMask = arith::SelectOp::create(
          b, maskModApplies, needMask,
          tileNeedsMask(mStart, s.blockM, kvStart, s.blockN,
                        /*rowTail=*/false, /*elementMasks=*/false));
    SmallVector<Type> types(mt * nTilesN, accZero(b).getType());
    auto ifOp = scf::IfOp::create(b, types, needMask, /*withElse=*/true);
    for (bool masked : {true, false}) {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(masked ? &ifOp.getThenRegion().front()
                                        : &ifOp.getElseRegion().front());
      SmallVector<Value> flat;
      std::array<Value, 8> dropout;
      for (int64_t m = 0; m < mt; ++m)
        for (int64_t n = 0; n < nTilesN; ++n) {
          Value ds = accZero(b);
          // Tiles n and n + 1 (n even), rows g and g + 8: one Philox draw.
          if (s.dropout && n % 2 == 0)
            dropout = dropoutOctetFactors(i32(rowOf(m, 0)), colOf(kvStart, n, 0));
          for (int64_t i = 0; i < 2; ++i)
            for (int64_t jj = 0; jj < 2; ++jj) {
              Value query = i32(rowOf(m, i)), key = colOf(kvStart, n, jj);
              Value tanhV;
              Value p = recomputeProbability(accGet(b, sc[m][n], i, jj), query,
                                             key, negLse[2 * m + i], scoreFactor,
                                             masked, &tanhV, maskModApplies);
              Value z = s.dropout ? dropout[4 * (n % 2) + 2 * i + jj] : Value();
              Value d = scoreGradient(p, accGet(b, dp[m][n], i, jj),
                                      dsum[2 * m + i], z);
              ds = accSet(b, ds, rawScoreGradient(d, softcapSlope(tanhV)), i,
                          jj);
            }
          flat.push_back(ds);
        }
      scf::YieldOp::create(b, flat);
    }
    // dQ += dS K.
    for (int64_t kk = 0; kk < s.blockN / 16; ++kk) {
      SmallVector<Regs> a(mt);
      for (int64_t m = 0; m < mt; ++m)
        a[m] = accPairToA(b, ifOp.getResult(m * nTilesN + 2 * kk),
                          ifOp.getResult(m * nTilesN + 2 * kk + 1), s.elementType);
      for (int64_t p = 0; p < nTilesD / 2; ++p) {
        Regs bf = loadBPairTransposed(b, sK, stage, lane, cIdx(b, 16 * p),
                                      cIdx(b, 16 * kk), s.elementType);
        for (int64_t m = 0; m < mt; ++m) {
          Value &a0 = acc[m * nTilesD + 2 * p], &a1 = acc[m * nTilesD + 2 * p + 1];
          a0 = mma(b, a[m], {bf[0], bf[1]}, a0, s.elementType);
          a1 = mma(b, a[m], {bf[2], bf[3]}, a1, s.elementType);
        }
      }
    }
    // The next iteration's prefetch overwrites the stage read here.
    gpu::BarrierOp::create(b);
    scf::YieldOp::create(b, acc);
  }

  // Epilogue: grad_q = dQ · scale in the layout of Q.
  enterEpilogue();
  Value scale = arg.lookup("scale");
  Value gBase = operandBase("grad_q", head);
  Value gStride = idx("grad_q_stride_s");
  for (int64_t m = 0; m < mt; ++m)
    for (int64_t i = 0; i < 2; ++i) {
      Value row = rowOf(m, i);
      auto ifRow = scf::IfOp::create(
          b, TypeRange{},
          arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, seqQ), false);
      OpBuilder::InsertionGuard g3(b);
      b.setInsertionPointToStart(&ifRow.getThenRegion().front());
      Value rowOff = arith::AddIOp::create(b, gBase, arith::MulIOp::create(b, row, gStride));
      for (int64_t n = 0; n < s.headDim / 8; ++n) {
        Value a = loop.getResult(m * nTilesD + n);
        Value col = arith::AddIOp::create(b, arith::MulIOp::create(b, t, cIdx(b, 2)),
                                          cIdx(b, 8 * n));
        storePair(b, arith::MulFOp::create(b, accGet(b, a, i, 0), scale),
                  arith::MulFOp::create(b, accGet(b, a, i, 1), scale),
                  s.elementType, arg.lookup("grad_q"),
                  ValueRange{arith::AddIOp::create(b, rowOff, col)});
      }
    }
  gpu::ReturnOp::create(b);
}

} // namespace

void mlir::flash::buildSm80BackwardDQKernel(gpu::GPUFuncOp func,
                                            const KernelSpec &spec) {
  if (spec.varlen)
    VarlenBackwardScheduler<Sm80BackwardDQBuilder>(func, spec,
                                                   UnownedRows::Queries)
        .build();
  else if (spec.blockSparse)
    BlockSparseIterator<Sm80BackwardDQBuilder>(func, spec).build();
  else
    Sm80BackwardDQBuilder(func, spec).build();
}
