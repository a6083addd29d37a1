//===- BackwardBuilder.cpp - the backward schedule, shared by recipes -----===//
#include "BackwardBuilder.h"
#include "Fragments.h"
#include "flashfuse/Conversion/Common/Philox.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

void BackwardBuilder::setUp() {
  readBlockArguments();
  mk = s.keyTilesPerWarp();
  nTilesM = s.blockM / 8 / (s.scoresByQueryHalves() ? 2 : 1);
  // Whole mma steps (HeadDims.h's mmaWidth); the n8 tiles past D (Dv) of an
  // odd multiple of 8 are computed from zero-filled columns, never stored.
  // With column groups, a warp's dK (dV) tiles are its group's columns.
  nTilesD = s.dkGroupColumns() / 8;
  nTilesDv = s.dvGroupColumns() / 8;
  Value keyBlock;
  if (s.takesTileOrder()) {
    GridTile tile = orderedTileOfBlock();
    keyBlock = tile.block;
    head = tile.head;
    batchIdx = tile.batch;
    headKV = kvHeadOf(head);
  } else {
    keyBlock = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  }
  kStart = arith::MulIOp::create(b, keyBlock, cIdx(b, s.blockN));
  exitPastEnd(kStart, /*keys=*/true);
  placeWarp();
  qBase = operandBase("q", head);
  doBase = operandBase("do", head);
  kBase = operandBase("k", headKV);
  vBase = operandBase("v", headKV);
  rowBaseLse = sliceRowStart(/*keys=*/false);
  carveSharedMemory();
}

void BackwardBuilder::placeWarp() {
  Value keyWarp = warp;
  columnGroup = scoreQuery0 = Value();
  if (int64_t groups = s.kvColumnGroups(); groups > 1) {
    // Warps w and w + warps / groups own the same keys.
    Value keyWarps = cIdx(b, s.warps / groups);
    keyWarp = arith::RemUIOp::create(b, warp, keyWarps);
    columnGroup = arith::DivUIOp::create(b, warp, keyWarps);
    if (s.scoresByQueryHalves())
      scoreQuery0 = arith::MulIOp::create(b, columnGroup, cIdx(b, 8 * nTilesM));
  }
  warpKey0 = arith::MulIOp::create(b, keyWarp, cIdx(b, 16 * mk));
}

Value BackwardBuilder::scoreColumn(int64_t col) {
  return scoreQuery0 ? arith::AddIOp::create(b, scoreQuery0, cIdx(b, col))
                     : cIdx(b, col);
}

Value BackwardBuilder::inFirstColumnGroup() {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, columnGroup,
                               cIdx(b, 0));
}

Value BackwardBuilder::groupTile(Value tile0, int64_t n, int64_t, int64_t) {
  return arith::AddIOp::create(b, tile0, cIdx(b, n));
}

Value BackwardBuilder::groupColumn(int64_t groupCols, int64_t col) {
  if (!columnGroup)
    return cIdx(b, col);
  return arith::AddIOp::create(
      b, arith::MulIOp::create(b, columnGroup, cIdx(b, groupCols)),
      cIdx(b, col));
}

Value BackwardBuilder::keyOf(int64_t m, int64_t i) {
  // kStart + warp * 16 mk + 16 m + g + 8 i
  return i32(arith::AddIOp::create(
      b, arith::AddIOp::create(b, kStart, warpKey0),
      arith::AddIOp::create(b, g, cIdx(b, 16 * m + 8 * i))));
}

Value BackwardBuilder::queryOf(Value qStart32, int64_t n, int64_t j) {
  // qStart + scoreQuery0 + 8 n + 2 t + j
  return arith::AddIOp::create(
      b, qStart32,
      i32(arith::AddIOp::create(b, arith::MulIOp::create(b, t, cIdx(b, 2)),
                                scoreColumn(8 * n + j))));
}

bool BackwardBuilder::evaluatesMaskModFirst() const {
  return s.maskMod && !s.mask;
}

SmallVector<Value> BackwardBuilder::maskModKeepWords(Value position,
                                                     Value stage,
                                                     Value qStart32) {
  Type i32Ty = b.getI32Type();
  SmallVector<Type> types((mk * nTilesM * 4 + 31) / 32, i32Ty);
  // All ones where mask_mod does not apply, else its bits.
  auto words = [&](bool evaluate) {
    SmallVector<Value> w(types.size(), arith::ConstantIntOp::create(
                                           b, i32Ty, evaluate ? 0 : -1));
    if (!evaluate)
      return w;
    for (int64_t m = 0; m < mk; ++m)
      for (int64_t n = 0; n < nTilesM; ++n)
        for (int64_t j = 0; j < 2; ++j)
          for (int64_t ii = 0; ii < 2; ++ii) {
            int64_t e = ((m * nTilesM + n) * 2 + j) * 2 + ii;
            Value keep =
                operandMaskPredicate(queryOf(qStart32, n, j), keyOf(m, ii));
            Value bit = arith::ShLIOp::create(
                b, arith::ExtUIOp::create(b, i32Ty, keep),
                arith::ConstantIntOp::create(b, i32Ty, e % 32));
            w[e / 32] = arith::OrIOp::create(b, w[e / 32], bit);
          }
    return w;
  };
  Value applies = appliesMaskMod(position, stage);
  if (!applies)
    return words(/*evaluate=*/true);
  auto ifOp = scf::IfOp::create(b, types, applies, /*withElse=*/true);
  for (bool evaluate : {true, false}) {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(evaluate ? &ifOp.getThenRegion().front()
                                        : &ifOp.getElseRegion().front());
    scf::YieldOp::create(b, words(evaluate));
  }
  return SmallVector<Value>(ifOp.getResults());
}

Value BackwardBuilder::keepBit(ArrayRef<Value> words, int64_t e) {
  Type i32Ty = b.getI32Type();
  Value bit = arith::AndIOp::create(
      b, words[e / 32],
      arith::ConstantIntOp::create(b, i32Ty, int64_t(uint32_t(1) << (e % 32))));
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ne, bit,
                               arith::ConstantIntOp::create(b, i32Ty, 0));
}

void BackwardBuilder::carveStatisticTile(Value offset) {
  statTile = sharedTile(sharedMemoryBytes(), {s.stages * 2 * s.blockM}, offset,
                        b.getF32Type());
  if (s.blockSparse)
    stepSlots = sharedTile(
        sharedMemoryBytes(), {(s.stages + 1) * 4},
        arith::AddIOp::create(b, offset, cIdx(b, 4 * s.stages * 2 * s.blockM)),
        b.getI32Type());
  if (s.keepsPlacementShared()) // block-sparse packed batches are refused
    placementSlot = sharedTile(
        sharedMemoryBytes(), {KernelSpec::kPlacementSlotBytes / 4},
        arith::AddIOp::create(b, offset, cIdx(b, 4 * s.stages * 2 * s.blockM)),
        b.getI32Type());
}

void BackwardBuilder::copyRowStatistics(Value rowStart, Value stage) {
  // One 4-byte cp.async per value (the rows of LSE and Dsum need not be
  // 16-byte aligned): thread i copies value i of [lse | delta].
  auto tokTy = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  const StringRef stats[] = {"lse", "delta"};
  for (int64_t first = 0; first < 2 * s.blockM; first += s.threads()) {
    Value i = arith::AddIOp::create(b, tid, cIdx(b, first));
    Value which = arith::DivUIOp::create(b, i, cIdx(b, s.blockM));
    Value q = arith::AddIOp::create(
        b, rowStart, arith::RemUIOp::create(b, i, cIdx(b, s.blockM)));
    Value valid = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, q, seqQ);
    Value src = arith::AddIOp::create(
        b, rowBaseLse, arith::SelectOp::create(b, valid, q, cIdx(b, 0)));
    Value dst = arith::AddIOp::create(
        b, arith::MulIOp::create(b, stage, cIdx(b, 2 * s.blockM)), i);
    Value srcElems = arith::SelectOp::create(b, valid, cIdx(b, 1), cIdx(b, 0));
    for (int64_t k = 0; k < 2; ++k) {
      Value mine = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, which,
                                         cIdx(b, k));
      auto ifMine = scf::IfOp::create(b, TypeRange{}, mine, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifMine.getThenRegion().front());
      // Committed with the next group (commit_group covers every earlier
      // copy of the thread; the token stays in this region).
      nvgpu::DeviceAsyncCopyOp::create(b, tokTy, statTile, ValueRange{dst},
                                       arg.lookup(stats[k]), ValueRange{src},
                                       b.getIndexAttr(1), srcElems,
                                       /*bypassL1=*/UnitAttr());
    }
  }
}

Value BackwardBuilder::loadRowStatistic(StringRef name, Value stage, int64_t n,
                                        int64_t j) {
  // Query column (n, j) is row scoreQuery0 + 8n + 2t + j of the block.
  Value col = arith::AddIOp::create(
      b, arith::MulIOp::create(b, t, cIdx(b, 2)),
      scoreColumn(8 * n + j + (name == "delta" ? s.blockM : 0)));
  Value at = arith::AddIOp::create(
      b, arith::MulIOp::create(b, stage, cIdx(b, 2 * s.blockM)), col);
  return memref::LoadOp::create(b, statTile, ValueRange{at});
}

void BackwardBuilder::addToDQAccum(ArrayRef<Value> acc, Value firstRow,
                                   Value firstTile) {
  Value scale = arg.lookup("scale");
  Value dq = arg.lookup("dq_accum");
  for (int64_t i = 0; i < 2; ++i) {
    Value q = arith::AddIOp::create(b, firstRow,
                                    arith::AddIOp::create(b, g, cIdx(b, 8 * i)));
    Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, q, seqQ);
    auto ifRow = scf::IfOp::create(b, TypeRange{}, inRange, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifRow.getThenRegion().front());
    Value rowOff = arith::MulIOp::create(
        b, arith::AddIOp::create(b, rowBaseLse, q), cIdx(b, s.headDim));
    for (int64_t n = 0; n < int64_t(acc.size()); ++n) {
      // Columns 8 (firstTile + n) + 2t and the next: an even, 8-byte aligned
      // pair (dq_accum rows have D, a multiple of 8, elements).
      Value col = arith::AddIOp::create(
          b,
          arith::MulIOp::create(
              b, arith::AddIOp::create(b, firstTile, cIdx(b, n)), cIdx(b, 8)),
          arith::MulIOp::create(b, t, cIdx(b, 2)));
      // The n8 tile past D of an odd multiple of 8 (its column group is a
      // run-time value) adds nothing.
      OpBuilder::InsertionGuard colGuard(b);
      if (s.mmaDim() != s.headDim) {
        auto ifCol = scf::IfOp::create(
            b, TypeRange{},
            arith::CmpIOp::create(b, arith::CmpIPredicate::ult, col,
                                  cIdx(b, s.headDim)),
            false);
        b.setInsertionPointToStart(&ifCol.getThenRegion().front());
      }
      atomicAddPair(b, dq, arith::AddIOp::create(b, rowOff, col),
                    arith::MulFOp::create(b, accGet(b, acc[n], i, 0), scale),
                    arith::MulFOp::create(b, accGet(b, acc[n], i, 1), scale),
                    /*vectorRed=*/s.arch >= 90);
    }
  }
}

BackwardBuilder::GradientRows
BackwardBuilder::gradientRows(StringRef name, Value direct, int64_t width) {
  // Without GQA grad_k / grad_v of the block's kv head (= its query head)
  // in the operand's own layout, else the contiguous [B, Hq, Sk, width]
  // slice of its query head: selected, not branched, so that the epilogue
  // exists once (two copies raised the spills of tight kernels).
  if (!direct) // the slice; storeRows addresses it row by row
    return {arg.lookup(name), Value(), Value(), width};
  Value slice = arith::MulIOp::create(b, sliceRowStart(/*keys=*/true),
                                      cIdx(b, width));
  std::string grad = name == "dk" ? "grad_k" : "grad_v";
  auto pick = [&](Value x, Value y) {
    return Value(arith::SelectOp::create(b, direct, x, y));
  };
  return {pick(arg.lookup(grad), arg.lookup(name)),
          pick(operandBase(grad, headKV), slice),
          pick(idx(grad + "_stride_s"), cIdx(b, width)), width};
}

Value BackwardBuilder::gradientRowStart(const GradientRows &dst, Value key) {
  if (dst.base)
    return arith::AddIOp::create(b, dst.base,
                                 arith::MulIOp::create(b, key, dst.rowStride));
  return arith::MulIOp::create(
      b, arith::AddIOp::create(b, sliceRowStart(/*keys=*/true), key),
      cIdx(b, dst.width));
}

void BackwardBuilder::storeRows(Value acc, const GradientRows &dst, int64_t m,
                                int64_t n, Value factor, Value tile) {
  // Rows i = 0, 1 of accumulator tile (m, n), as pairs of halves.
  for (int64_t i = 0; i < 2; ++i) {
    Value key = asIndex(keyOf(m, i));
    Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, key, seqK);
    auto ifRow = scf::IfOp::create(b, TypeRange{}, inRange, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifRow.getThenRegion().front());
    Value rowOff = gradientRowStart(dst, key);
    Value col = arith::AddIOp::create(
        b, arith::MulIOp::create(b, t, cIdx(b, 2)),
        tile ? arith::MulIOp::create(b, tile, cIdx(b, 8)).getResult()
             : cIdx(b, 8 * n));
    Value x0 = accGet(b, acc, i, 0), x1 = accGet(b, acc, i, 1);
    if (factor) {
      x0 = arith::MulFOp::create(b, x0, factor);
      x1 = arith::MulFOp::create(b, x1, factor);
    }
    storePair(b, x0, x1, s.elementType, dst.memref,
              ValueRange{arith::AddIOp::create(b, rowOff, col)});
  }
}

void BackwardBuilder::storeGradients(ArrayRef<Value> dK, ArrayRef<Value> dV,
                                     Value direct) {
  Value scale = arg.lookup("scale");
  GradientRows dkRows = gradientRows("dk", direct, s.headDim);
  GradientRows dvRows = gradientRows("dv", direct, s.headDimV);
  if (!columnGroup) {
    for (int64_t m = 0; m < mk; ++m) {
      for (int64_t n = 0; n < s.headDim / 8; ++n)
        storeRows(gradientTile(dK, m, n, nTilesD), dkRows, m, n, scale);
      for (int64_t n = 0; n < s.headDimV / 8; ++n)
        storeRows(gradientTile(dV, m, n, nTilesDv), dvRows, m, n, Value());
    }
    return;
  }
  // The group's 8-column tiles that fall inside D (Dv).
  auto storeGroup = [&](ArrayRef<Value> acc, const GradientRows &dst,
                        int64_t tiles, Value factor, int64_t width) {
    Value tile0 = arith::MulIOp::create(b, columnGroup, cIdx(b, tiles));
    for (int64_t m = 0; m < mk; ++m)
      for (int64_t n = 0; n < tiles; ++n) {
        Value tile = groupTile(tile0, n, tiles, width);
        auto ifIn = scf::IfOp::create(
            b, TypeRange{},
            arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tile,
                                  cIdx(b, width / 8)),
            false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&ifIn.getThenRegion().front());
        storeRows(gradientTile(acc, m, n, tiles), dst, m, n, factor, tile);
      }
  };
  storeGroup(dK, dkRows, nTilesD, scale, s.headDim);
  storeGroup(dV, dvRows, nTilesDv, Value(), s.headDimV);
}

void BackwardBuilder::build() {
  setUp();
  auto [mFirst, mEnd] = blockQueryRange();
  Value scoreFactor = scoreFactorLog2();

  // Prologue: K_j and V_j, then the first stages - 1 query blocks. Blocks
  // past Sq are fetched as zeros (src-size 0) so that every iteration
  // commits the same number of groups and the waits need no branches.
  loadKeyValueTiles();
  for (int64_t st = 0; st + 1 < s.stages; ++st) {
    Value position = arith::AddIOp::create(b, mFirst, cIdx(b, st));
    Value stage = cIdx(b, st);
    loadQdOBlock(fetchQueryBlock(position, stage), stage);
  }
  writeGradients(walkQueryBlocks(mFirst, mEnd, scoreFactor));
  gpu::ReturnOp::create(b);
}

Value BackwardBuilder::scoreFactorLog2() {
  return arith::MulFOp::create(b, arg.lookup("scale"), cF32(b, float(M_LOG2E)));
}

void BackwardBuilder::awaitQueryBlock(Value i, Value rel, Value stage) {
  // Prefetch the block stages - 1 ahead into the buffer the previous step
  // read, then wait for this one's copies.
  Value pfStage = arith::RemUIOp::create(
      b, arith::AddIOp::create(b, rel, cIdx(b, s.stages - 1)), cIdx(b, s.stages));
  Value pfPosition = arith::AddIOp::create(b, i, cIdx(b, s.stages - 1));
  Value group = loadQdOBlock(fetchQueryBlock(pfPosition, pfStage), pfStage);
  // Two groups (Q, dO) per block: everything older than the stages - 1
  // blocks prefetched since, this block included, has landed.
  nvgpu::DeviceAsyncWaitOp::create(b, group,
                                   b.getI32IntegerAttr(2 * (s.stages - 1)));
  publishTiles();
  gpu::BarrierOp::create(b);
}

void BackwardBuilder::releaseQueryBlock(Value stage, Value dqStart) {
  gpu::BarrierOp::create(b);
  if (s.stagesDQ())
    publishDQ(dqStart);
}

SmallVector<Value> BackwardBuilder::walkQueryBlocks(Value mFirst, Value mEnd,
                                                    Value scoreFactor) {
  const float log2e = float(M_LOG2E);
  readTileAlibiSlope();
  SmallVector<Value> init = zeroGradient(nTilesD);
  int64_t nDK = dkCount = init.size();
  SmallVector<Value> zeroV = zeroGradient(nTilesDv);
  init.append(zeroV.begin(), zeroV.end());
  bool narrow = countsQueryBlocksIn32Bits();
  auto loop =
      narrow ? scf::ForOp::create(b, i32(mFirst), i32(mEnd), cI32(1), init)
             : scf::ForOp::create(b, mFirst, mEnd, cIdx(b, 1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = narrow ? asUnsignedIndex(loop.getInductionVar())
                     : loop.getInductionVar();
    auto iter = loop.getRegionIterArgs();
    SmallVector<Value> dK(iter.take_front(nDK)), dV(iter.drop_front(nDK));
    auto coords = std::make_tuple(tid, lane, warp, g, t, kStart, warpKey0,
                                  columnGroup, scoreQuery0);
    enterQueryLoop();
    Value rel = arith::SubIOp::create(b, i, mFirst);
    Value stage = arith::RemUIOp::create(b, rel, cIdx(b, s.stages));
    awaitQueryBlock(i, rel, stage);

    // The first query row of the step, and again where used far from here
    // (an iterator's block is read again rather than held in a register).
    Value block = stepQueryBlock(i, stage, /*again=*/false);
    Value qStart = arith::MulIOp::create(b, block, cIdx(b, s.blockM));
    auto stepStart = [&](bool again) -> Value {
      Value blockAgain = stepQueryBlock(i, stage, again);
      return blockAgain == block ? qStart
                                 : arith::MulIOp::create(b, blockAgain,
                                                         cIdx(b, s.blockM));
    };
    Value qStart32 = i32(qStart);
    SmallVector<Value> keepWords;
    if (evaluatesMaskModFirst())
      keepWords = maskModKeepWords(i, stage, qStart32);
    SmallVector<Frags> sT = computeScoresT(stage);

    auto statAt = [&](StringRef name, int64_t n, int64_t j) {
      return loadRowStatistic(name, stage, n, j);
    };

    // P (and softcap's slope) with or without masking, like the forward:
    // only tiles at the Sq/Sk tails, across the diagonal or under an
    // element mask pay for the predicate.
    Value needMask = tileNeedsMask(qStart, s.blockM, kStart, s.blockN,
                                   /*rowTail=*/true);
    // A step that skips mask_mod (a full block of a block-sparse walk)
    // needs masks only where the band or the tails reach into it.
    Value maskModApplies = s.maskMod ? appliesMaskMod(i, stage) : Value();
    if (maskModApplies)
      needMask = arith::SelectOp::create(
          b, maskModApplies, needMask,
          tileNeedsMask(qStart, s.blockM, kStart, s.blockN, /*rowTail=*/true,
                        /*elementMasks=*/false));
    int64_t perSet = mk * nTilesM;
    // Softcap's slope 1 − tanh² lives from here across the dV product (to
    // dS with a dBias; below), in f16: half the registers of f32 (the sm90
    // D = 128 kernels sit at the 255-register cap), and its rounding (2^-12
    // relative, the slope being in [0, 1]) is below that of dS itself,
    // which the dK and dQ products take in the inputs' 16-bit type.
    auto slopeTy = VectorType::get({2, 2}, b.getF16Type());
    Value slopeZero =
        s.softcap ? arith::ConstantOp::create(
                        b, slopeTy,
                        DenseElementsAttr::get(
                            slopeTy, APFloat::getZero(APFloat::IEEEhalf())))
                  : Value();
    SmallVector<Type> types(perSet, accZero(b).getType());
    if (s.softcap)
      types.append(perSet, slopeTy);
    auto ifOp = scf::IfOp::create(b, types, needMask, /*withElse=*/true);
    for (bool masked : {true, false}) {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(masked ? &ifOp.getThenRegion().front()
                                        : &ifOp.getElseRegion().front());
      // Where every tile is masked (mask_mod), or band-masked tiles are
      // common (causal, window) in a walk of full and partial entries, the
      // masks read the block and whether mask_mod applies again here
      // rather than hold them across the step (an iterator's loaded block;
      // a dense walk's is i itself). Measured, not derived: ptxas 13 at
      // the 255-register cap spilled 8-20 bytes in the sm80 D = 128
      // kernels on sm_90a without it there, and 12 with it in the causal
      // walk of partial entries only.
      Value rowStart32 = qStart32, maskModHere = maskModApplies;
      bool bandMasked = s.causal != KernelSpec::Causal::None || s.window;
      if (masked && ((bandMasked && s.fullBlocks) || maskModApplies)) {
        if (Value again = stepStart(/*again=*/true); again != qStart)
          rowStart32 = i32(again);
        if (maskModApplies && keepWords.empty())
          maskModHere = appliesMaskMod(i, stage);
      }
      SmallVector<Frags> p = sT,
                         slope(mk, Frags(nTilesM, slopeZero));
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
                query = queryOf(rowStart32, n, j);
              }
              Value tanhV;
              Value keep =
                  masked && !keepWords.empty()
                      ? keepBit(keepWords, ((m * nTilesM + n) * 2 + j) * 2 + ii)
                      : Value();
              Value pv = recomputeProbability(raw, query, key, negLse,
                                              scoreFactor, masked, &tanhV,
                                              maskModHere, keep);
              if (s.softcap)
                slope[m][n] = accSet(
                    b, slope[m][n],
                    arith::TruncFOp::create(b, b.getF16Type(),
                                            softcapSlope(tanhV)),
                    ii, j);
              p[m][n] = accSet(b, p[m][n], pv, ii, j);
            }
        }
      SmallVector<Value> flat;
      for (auto &row : p)
        flat.append(row.begin(), row.end());
      if (s.softcap)
        for (auto &row : slope)
          flat.append(row.begin(), row.end());
      scf::YieldOp::create(b, flat);
    }
    SmallVector<Frags> pT(mk, Frags(nTilesM)), slopeT(mk, Frags(nTilesM));
    for (int64_t m = 0; m < mk; ++m)
      for (int64_t n = 0; n < nTilesM; ++n) {
        pT[m][n] = ifOp.getResult(m * nTilesM + n);
        if (s.softcap)
          slopeT[m][n] = ifOp.getResult(perSet + m * nTilesM + n);
      }

    // `frags` with element (m, n, ii, j) times factor(m, n, ii, j).
    auto timesElementwise = [&](SmallVector<Frags> frags, auto factor) {
      for (int64_t m = 0; m < mk; ++m)
        for (int64_t n = 0; n < nTilesM; ++n)
          for (int64_t ii = 0; ii < 2; ++ii)
            for (int64_t j = 0; j < 2; ++j) {
              Value x = accGet(b, frags[m][n], ii, j);
              Value f = factor(m, n, ii, j);
              frags[m][n] =
                  accSet(b, frags[m][n], arith::MulFOp::create(b, x, f), ii, j);
            }
      return frags;
    };
    // Dropout's factors Z (Philox.h: one draw per octet {query, query + 8}
    // x {key, key + 1, key + 8, key + 9}). Sᵀ has keys as rows: this lane
    // holds queries (n, j) and (n + 1, j), n even, of keys (m, 0) and
    // (m, 1), the octet's even or odd keys by g's parity π; lane g ^ 1
    // (lane ^ 4, the same queries) holds the others. So the pair draws two
    // octets, one each: this lane the octet of query column j = π, whose
    // words of parity 1 - π it sends its partner, receiving those of parity
    // π of the octet j = 1 - π (two shfl.bfly a pair of octets; drawn apart,
    // each lane drew both, 6-10% slower steps, run 374). Drawn where dV
    // first needs them, reused by dS.
    DenseMap<int64_t, std::array<Value, 4>> dropoutWords;
    DenseMap<int64_t, Value> dropoutFactors;
    Value oddKey, keyParity32, thresholdHigh, kept;
    auto dropoutAt = [&](int64_t m, int64_t n, int64_t ii, int64_t j) {
      if (!oddKey) {
        Value parity = arith::AndIOp::create(b, g, cIdx(b, 1));
        oddKey = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, parity,
                                       cIdx(b, 0));
        keyParity32 = i32(parity);
        thresholdHigh =
            dropoutThresholdHigh(b, b.getLoc(), dropoutThreshold);
        kept = dropoutKeptFactor();
      }
      // [2 j + i]: the word of query column j, row half i (queries q and
      // q + 8), this lane's key parity; its halves are keys (m, 0), (m, 1).
      int64_t pair = m * nTilesM + n - n % 2;
      auto words = dropoutWords.find(pair);
      if (words == dropoutWords.end()) {
        Value q = arith::AddIOp::create(b, queryOf(qStart32, n - n % 2, 0),
                                        keyParity32);
        std::array<Value, 4> drawn = dropoutOctetWords(q, keyOf(m, 0));
        std::array<Value, 4> byColumn;
        for (int64_t i = 0; i < 2; ++i) {
          Value own = arith::SelectOp::create(b, oddKey, drawn[2 * i + 1],
                                              drawn[2 * i]);
          Value sent = arith::SelectOp::create(b, oddKey, drawn[2 * i],
                                               drawn[2 * i + 1]);
          Value received =
              gpu::ShuffleOp::create(b, sent, /*offset=*/4, /*width=*/32,
                                     gpu::ShuffleMode::XOR)
                  .getShuffleResult();
          byColumn[i] = arith::SelectOp::create(b, oddKey, received, own);
          byColumn[2 + i] = arith::SelectOp::create(b, oddKey, own, received);
        }
        words = dropoutWords.try_emplace(pair, byColumn).first;
      }
      int64_t id = ((pair * 2 + j) * 2 + n % 2) * 2 + ii;
      auto factor = dropoutFactors.find(id);
      if (factor == dropoutFactors.end())
        factor = dropoutFactors
                     .try_emplace(id, dropoutHalfFactor(
                                          words->second[2 * j + n % 2],
                                          /*high=*/ii == 1, thresholdHigh,
                                          kept))
                     .first;
      return factor->second;
    };
    // dV += (Pᵀ ∘ Z) dO: Pᵀ ∘ Z is what O used. dPᵀ is taken only after
    // this, so that an engine that computes it here need not hold Sᵀ's and
    // dPᵀ's fragments together (with both, the sm80 D = 128 kernel spilled).
    SmallVector<Frags> pdT = pT;
    if (s.dropout)
      pdT = timesElementwise(pT, [&](int64_t m, int64_t n, int64_t ii,
                                     int64_t j) {
        return dropoutAt(m, n, ii, j);
      });
    accumulateDV(dV, pdT, stage);
    // With dV issued, P is needed only for dS, which takes softcap's slope
    // as a factor: folded into P here, the slope is not held across the dP
    // product (dBias, the capped score's gradient, needs P alone).
    bool slopeInP = s.softcap && !s.gradBias;
    if (slopeInP)
      pT = timesElementwise(pT, [&](int64_t m, int64_t n, int64_t ii,
                                    int64_t j) -> Value {
        return arith::ExtFOp::create(b, b.getF32Type(),
                                     accGet(b, slopeT[m][n], ii, j));
      });
    SmallVector<Frags> dpT = computeDPT(stage);

    // dSᵀ = Pᵀ ∘ (dPᵀ ∘ Z − Dsum).
    SmallVector<Frags> dsT = pT;
    for (int64_t n = 0; n < nTilesM; ++n)
      for (int64_t j = 0; j < 2; ++j) {
        Value dsum = statAt("delta", n, j);
        for (int64_t m = 0; m < mk; ++m)
          for (int64_t ii = 0; ii < 2; ++ii) {
            Value pv = accGet(b, pT[m][n], ii, j);
            Value z = s.dropout ? dropoutAt(m, n, ii, j) : Value();
            Value ds = scoreGradient(pv, accGet(b, dpT[m][n], ii, j),
                                     dsum, z);
            if (s.gradBias) {
              // dBias = dS: each (query, key) belongs to one block pair, so
              // a plain store suffices.
              Value q = queryOf(qStart32, n, j), k = keyOf(m, ii);
              Value ok = arith::AndIOp::create(
                  b, arith::CmpIOp::create(b, arith::CmpIPredicate::slt, q, i32(seqQ)),
                  arith::CmpIOp::create(b, arith::CmpIPredicate::slt, k, i32(seqK)));
              // Column groups that share the scores hold the same dS.
              if (columnGroup && !s.scoresByQueryHalves())
                ok = arith::AndIOp::create(b, ok, inFirstColumnGroup());
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
            if (s.softcap && !slopeInP)
              ds = rawScoreGradient(
                  ds, arith::ExtFOp::create(b, b.getF32Type(),
                                            accGet(b, slopeT[m][n], ii, j)));
            dsT[m][n] = accSet(b, dsT[m][n], ds, ii, j);
          }
      }

    accumulateDK(dK, dsT, stage);
    if (!s.deterministic)
      accumulateDQ(dsT, stepStart(/*again=*/true), stage);
    finishQueryBlock(dK, dV);
    // The next iteration's prefetch overwrites the stage read here (and
    // the dS tile), an iterator's record of the step included: the dQ
    // tile's destination is read before the barrier, not after it.
    Value publishStart = s.stagesDQ() ? stepStart(/*again=*/true) : Value();
    releaseQueryBlock(stage, publishStart);
    SmallVector<Value> yields(dK);
    yields.append(dV.begin(), dV.end());
    scf::YieldOp::create(b, yields);
    std::tie(tid, lane, warp, g, t, kStart, warpKey0, columnGroup,
             scoreQuery0) = coords;
    leaveQueryLoop();
  }

  return loop.getResults();
}

void BackwardBuilder::writeGradients(ValueRange results) {
  // Epilogue: dK · scale and dV. A block no query sees writes zeros.
  // Without GQA (Hq = Hkv, known at launch) the block's query head is its
  // kv head's only one, so it writes grad_k / grad_v itself and the
  // postprocess has nothing to sum; otherwise one slice per query head, the
  // group summed by the postprocess.
  SmallVector<Value> dK(results.take_front(dkCount)),
      dV(results.drop_front(dkCount));
  if (s.stagesDQ())
    drainDQ();
  enterEpilogue();
  storeGradients(dK, dV,
                 s.mainWritesKeyGradients()
                     ? Value(arith::CmpIOp::create(
                                 b, arith::CmpIPredicate::eq, headsQ,
                                 idx("heads_kv")))
                           : Value());
}
