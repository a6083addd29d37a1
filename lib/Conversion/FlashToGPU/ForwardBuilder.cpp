//===- ForwardBuilder.cpp - the forward schedule every recipe shares ------===//
//
// One thread block computes block_m query rows of one (batch, head); its
// warps split the rows, 16 * mt each. Per block:
//   1. the Q tile and the first key blocks start streaming into shared
//      memory (the recipe's copies);
//   2. walk the key blocks the causal/window band allows, K and V tiles
//      streamed through a `stages`-deep ring;
//   3. S = Q·Kᵀ (the recipe's matrix engine), score pipeline and masks on the
//      fragments, online softmax in f32 with exp2 and log2(e) folded into
//      the scale;
//   4. P re-packed in registers as the A operand of O += P·V;
//   5. epilogue: O / l staged through the Q tile and written in 16-byte
//      stores (straight from the fragments where the tiles are padded or
//      O is f32, FlashOps.td's partial results), LSE from the fragments.
// Rows past Sq and keys past Sk are zero-filled by the copies and masked,
// so any Sq and Sk work.
//
//===----------------------------------------------------------------------===//
#include "Fragments.h"
#include "ForwardBuilder.h"
#include "Recipes.h"
#include "Swizzle.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/ScopeExit.h"

#include <cmath>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

Value ForwardBuilder::queryBlockOfBlock(Value blockIdX, Value gridDimX) {
  if (s.causal == KernelSpec::Causal::None)
    return blockIdX;
  // Causal blocks near the end of the sequence see the most keys: launch
  // them first so that the short ones fill the tail of the grid.
  Value last = arith::SubIOp::create(b, gridDimX, cIdx(b, 1));
  return arith::SubIOp::create(b, last, blockIdX);
}

Value ForwardBuilder::firstRowOfBlock(Value blockIdX, Value gridDimX) {
  return arith::MulIOp::create(b, queryBlockOfBlock(blockIdX, gridDimX),
                               cIdx(b, s.blockM));
}

void ForwardBuilder::readForwardArguments() {
  readArguments();
  if (s.takesTileOrder()) {
    GridTile tile = orderedTileOfBlock();
    head = tile.head;
    batchIdx = tile.batch;
    headKV = kvHeadOf(head);
    mStart = arith::MulIOp::create(b, tile.block, cIdx(b, s.blockM));
  } else {
    mStart = firstRowOfBlock(gpu::BlockIdOp::create(b, gpu::Dimension::x),
                             gpu::GridDimOp::create(b, gpu::Dimension::x));
  }
  qBase = operandBase("q", head);
  kBase = operandBase("k", headKV);
  vBase = operandBase("v", headKV);
  qStrideS = idx("q_stride_s");
  kStrideS = idx("k_stride_s");
  vStrideS = idx("v_stride_s");
}

void ForwardBuilder::carveSwizzledQKV() {
  qElems = s.blockM * KernelSpec::swizzleWidth(s.headDim);
  // An FP8 cache's K/V rows are half as many 16-bit units.
  kElems = s.blockN * KernelSpec::swizzleWidth(s.cacheColumns(s.headDim));
  vElems = s.blockN * KernelSpec::swizzleWidth(s.cacheColumns(s.headDimV));
  carveSwizzledTiles(qElems + s.stages * (kElems + vElems));
}

Value ForwardBuilder::kOffset(Value stage) {
  return arith::AddIOp::create(
      b, cIdx(b, qElems), arith::MulIOp::create(b, stage, cIdx(b, kElems)));
}

Value ForwardBuilder::vOffset(Value stage) {
  return arith::AddIOp::create(
      b, cIdx(b, qElems + s.stages * kElems),
      arith::MulIOp::create(b, stage, cIdx(b, vElems)));
}

Value ForwardBuilder::commitKVCopies(
    Value rowStart,
    function_ref<void(RowCheck, SmallVectorImpl<Value> &)> copyKV,
    Value rowLimit) {
  SmallVector<Value> tokens;
  // Which variants branch is ptxas's register allocation at 255 registers:
  // these are the ones that stay spill-free either way.
  bool branch = s.swizzledTiles() && !s.dropout &&
                (s.usesWgmma() ||
                 (isPlainScore() && !s.mask && !s.maskMod));
  if (!branch) {
    copyKV(RowCheck::PerChunk, tokens);
    return commitGroup(tokens);
  }
  ifRowsBelow(rowStart, s.blockN, rowLimit ? rowLimit : seqK,
              [&](RowCheck check) {
    SmallVector<Value> inBranch; // tokens cannot leave the branch
    copyKV(check, inBranch);
  });
  return commitGroup({});
}

Value ForwardBuilder::warpFirstRow() {
  return arith::MulIOp::create(b, warp, cIdx(b, 16 * mt));
}

std::pair<Value, Value> ForwardBuilder::blockKeyRange() {
  return keyBlockRange(mStart, s.blockM, s.blockN);
}

Value ForwardBuilder::keyStartAt(Value position) {
  Value block = keyBlockAt(position);
  return arith::MulIOp::create(b, block, cIdx(b, s.blockN));
}

Value ForwardBuilder::rowOf(int64_t m, int64_t i) {
  // mStart + warp * 16 * mt + 16 m + g + 8 i
  Value r = arith::AddIOp::create(
      b, arith::AddIOp::create(b, mStart,
                               arith::MulIOp::create(b, warp, cIdx(b, 16 * mt))),
      arith::AddIOp::create(b, g, cIdx(b, 16 * m + 8 * i)));
  return i32(r);
}

Value ForwardBuilder::colOf(Value kvStart32, int64_t n, int64_t j) {
  // kvStart + 8n + 2t + j
  return arith::AddIOp::create(
      b, kvStart32,
      i32(arith::AddIOp::create(b, arith::MulIOp::create(b, t, cIdx(b, 2)),
                                cIdx(b, 8 * n + j))));
}

void ForwardBuilder::applyScorePipeline(SmallVector<Frags> &sc,
                                            Value kvStart, bool masked,
                                            Value maskModApplies) {
  bool plain = isPlainScore();
  Value negInf = cF32(b, -INFINITY);
  Value kvStart32 = i32(kvStart);
  // Column of fragment element (n, j) = colBase + 8n + j.
  Value colBase = colOf(kvStart32, 0, 0);
  // A full block of a block-sparse walk keeps what the band keeps.
  Value skipsElementMasks;
  if (masked && maskModApplies)
    skipsElementMasks = arith::XOrIOp::create(
        b, maskModApplies, arith::ConstantIntOp::create(b, b.getI1Type(), 1));
  bool alibiOnly = isAlibiOnlyScore();
  for (int64_t m = 0; m < mt; ++m)
    for (int64_t i = 0; i < 2; ++i) {
      Value row = rowOf(m, i);
      Value slope = s.alibi && !alibiOnly ? rowAlibiSlope(m, i) : Value();
      // ALiBi alone: the row's end of the distance at this thread's first
      // column of the block (colBase), so that a score's is that plus a
      // constant (alibiLog2Bias's FADD folds it in as an immediate).
      Value alibiRowF;
      if (alibiOnly)
        alibiRowF = arith::SIToFPOp::create(
            b, b.getF32Type(),
            arith::SubIOp::create(b, alibiDiagonal(row), colBase));
      RowBand band;
      if (masked)
        band = rowBand(row, colBase);
      for (int64_t n = 0; n < nTilesN; ++n)
        for (int64_t j = 0; j < 2; ++j) {
          Value v = accGet(b, sc[m][n], i, j);
          Value c = arith::ConstantIntOp::create(b, b.getI32Type(), 8 * n + j);
          Value col;
          if ((!plain && !alibiOnly) || s.mask || s.maskMod)
            col = arith::AddIOp::create(b, colBase, c);
          if (alibiOnly)
            v = LLVM::FMAOp::create(
                b, v, scoreFactor,
                alibiLog2Bias(alibiRowF, cF32(b, float(8 * n + j)),
                              /*addend=*/Value()));
          else if (!plain)
            v = arith::MulFOp::create(
                b, transformScore(v, row, col, /*tanhOut=*/nullptr, slope),
                cF32(b, float(M_LOG2E)));
          if (masked) {
            Value keep = band.contains(b, c);
            if (s.mask || s.maskMod) {
              Value elementKeep = operandMaskPredicate(row, col);
              if (skipsElementMasks)
                elementKeep =
                    arith::OrIOp::create(b, elementKeep, skipsElementMasks);
              keep = arith::AndIOp::create(b, keep, elementKeep);
            }
            v = arith::SelectOp::create(b, keep, v, negInf);
          }
          sc[m][n] = accSet(b, sc[m][n], v, i, j);
        }
    }
}

void ForwardBuilder::build() {
  mt = s.mTilesPerWarp();
  nTilesN = s.blockN / s.keyWarps() / 8;
  // Whole mma steps (HeadDims.h's mmaWidth): an odd multiple of 8 takes one
  // more k16 step over zero-filled columns, and one more n8 tile of O that
  // is never stored. A step reads 32 bytes of a row: 16 halves, 32 e4m3.
  nTilesD = s.mmaDim() * s.elementBytes() / 32;
  nTilesDv = s.mmaDimV() / 8;
  readForwardArguments();
  carveSharedMemory();
  auto [nStart, nEnd] = blockKeyRange();
  scoreFactor = arith::MulFOp::create(b, scoreScale(),
                                      cF32(b, float(M_LOG2E)));

  // Prologue: Q and the first prefetchDistance() key blocks in flight.
  // Out-of-range blocks are fetched as zeros (src-size 0), keeping the group
  // count uniform so that the waits below need no branches.
  Value lastGroup = loadQTile();
  int64_t ahead = prefetchDistance();
  for (int64_t st = 0; st < ahead; ++st)
    lastGroup = loadKVBlock(
        keyBlockAt(arith::AddIOp::create(b, nStart, cIdx(b, st))),
        cIdx(b, st));
  nvgpu::DeviceAsyncWaitOp::create(b, lastGroup,
                                   b.getI32IntegerAttr(std::max<int64_t>(ahead - 1, 0)));
  publishTiles();
  gpu::BarrierOp::create(b);

  // Q's A operands live in registers for the whole key loop when they fit;
  // otherwise they are re-read from shared memory at every k-step.
  SmallVector<Frags> qOps; // [m * D/16 + kk]
  if (keepsQInRegisters())
    for (int64_t m = 0; m < mt; ++m)
      for (int64_t kk = 0; kk < nTilesD; ++kk)
        qOps.push_back(loadQOperand(m, kk));

  // Loop-carried state: O accumulators [mt][Dv/8], row max m and partial row
  // sum l for rows g and g+8 of each m-tile (log2 domain).
  SoftmaxState init;
  for (int64_t m = 0; m < mt; ++m)
    for (int64_t n = 0; n < nTilesDv; ++n)
      init.acc.push_back(accZero(b));
  init.rowMax.assign(2 * mt, cF32(b, -INFINITY));
  init.rowSum.assign(2 * mt, cF32(b, 0.0f));
  SoftmaxState final = buildKeyLoop(qOps, nStart, nEnd, init, lastGroup);
  writeEpilogue(final);
  gpu::ReturnOp::create(b);
}

SmallVector<Value> ForwardBuilder::SoftmaxState::flat() const {
  SmallVector<Value> v(acc);
  v.append(rowMax.begin(), rowMax.end());
  v.append(rowSum.begin(), rowSum.end());
  return v;
}

ForwardBuilder::SoftmaxState
ForwardBuilder::unflatten(ValueRange values) const {
  SoftmaxState st;
  int64_t nAcc = mt * nTilesDv;
  st.acc.assign(values.begin(), values.begin() + nAcc);
  st.rowMax.assign(values.begin() + nAcc, values.begin() + nAcc + 2 * mt);
  st.rowSum.assign(values.begin() + nAcc + 2 * mt,
                   values.begin() + nAcc + 4 * mt);
  return st;
}

ForwardBuilder::SoftmaxState
ForwardBuilder::buildKeyLoop(ArrayRef<Frags> qOps, Value nStart, Value nEnd,
                             const SoftmaxState &init, Value anyGroup) {
  readTileAlibiSlope();
  auto loop = scf::ForOp::create(b, nStart, nEnd, cIdx(b, 1), init.flat());
  OpBuilder::InsertionGuard guard(b);
  // Per-block score factors (enterKeyBlock) live inside the loop only.
  Value tileScoreFactor = scoreFactor, tileScaleOverride = scaleOverride;
  llvm::scope_exit restoreFactors([&] {
    scoreFactor = tileScoreFactor;
    scaleOverride = tileScaleOverride;
  });
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  SoftmaxState st = unflatten(loop.getRegionIterArgs());

  Value stage = acquireKeyBlock(j, nStart);

  SmallVector<Frags> sc = computeScores(qOps, stage);
  // Every block rescales O, the walk's first included (O is 0 there).
  beginKeyBlock(j, /*first=*/false);
  Value kvStart = scoredKeyStart(j);
  if (warpKeyOffset) // this warp's keys of the block
    kvStart = arith::AddIOp::create(b, kvStart, warpKeyOffset);
  enterKeyBlock(j);
  maskScores(sc, kvStart, j);
  SoftmaxStep step = onlineSoftmax(sc, st, kvStart);
  SmallVector<SmallVector<Value>> factors = outputRescale(step.alpha, j);
  if (s.skipsUnitRescale())
    rescaleUnlessUnit(st.acc, factors);
  else
    rescale(st.acc, factors);
  accumulateOutput(st.acc, step.p, stage);
  // The next iteration's prefetch overwrites the stage read here.
  gpu::BarrierOp::create(b);
  st.rowMax = step.rowMax;
  st.rowSum = step.rowSum;
  scf::YieldOp::create(b, st.flat());
  return unflatten(loop.getResults());
}

Value ForwardBuilder::acquireKeyBlock(Value position, Value nStart) {
  Value rel = arith::SubIOp::create(b, position, nStart);
  Value stage = arith::RemUIOp::create(b, rel, cIdx(b, s.stages));
  Value pfBlock = arith::AddIOp::create(b, position, cIdx(b, s.stages - 1));
  Value pfStage = arith::RemUIOp::create(
      b, arith::AddIOp::create(b, rel, cIdx(b, s.stages - 1)), cIdx(b, s.stages));
  Value group = loadKVBlock(keyBlockAt(pfBlock), pfStage);
  nvgpu::DeviceAsyncWaitOp::create(b, group, b.getI32IntegerAttr(s.stages - 1));
  publishTiles();
  gpu::BarrierOp::create(b);
  return stage;
}

void ForwardBuilder::maskScores(SmallVector<Frags> &sc, Value kvStart,
                                Value position) {
  // Masks only where the block can contain masked elements: the tail of
  // Sk, the causal diagonal, window edges, or a mask operand/region.
  Value needMask = tileNeedsMask(mStart, s.blockM, kvStart, s.blockN,
                                 /*rowTail=*/false);
  // A step that skips mask_mod (a full block) needs masks only where the
  // band or the tail reach into it.
  Value maskModApplies =
      position && s.maskMod ? scoredMaskModApplies(position) : Value();
  if (maskModApplies)
    needMask = arith::SelectOp::create(
        b, maskModApplies, needMask,
        tileNeedsMask(mStart, s.blockM, kvStart, s.blockN, /*rowTail=*/false,
                      /*elementMasks=*/false));
  SmallVector<Type> fragTypes(mt * nTilesN, sc[0][0].getType());
  auto ifOp = scf::IfOp::create(b, fragTypes, needMask, /*withElse=*/true);
  for (bool masked : {true, false}) {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(masked ? &ifOp.getThenRegion().front()
                                      : &ifOp.getElseRegion().front());
    SmallVector<Frags> copy = sc;
    applyScorePipeline(copy, kvStart, masked, maskModApplies);
    SmallVector<Value> flat;
    for (auto &row : copy)
      flat.append(row.begin(), row.end());
    scf::YieldOp::create(b, flat);
  }
  for (int64_t m = 0; m < mt; ++m)
    for (int64_t n = 0; n < nTilesN; ++n)
      sc[m][n] = ifOp.getResult(m * nTilesN + n);
}

ForwardBuilder::SoftmaxStep
ForwardBuilder::onlineSoftmax(ArrayRef<Frags> sc, const SoftmaxState &st,
                              Value kvStart) {
  // Per fragment row (m, i). Each probability pair is packed to 16 bits as
  // soon as it exists ([m][n][i], one register): the f32 scores die early,
  // which register pressure at D = 128 needs.
  SoftmaxStep step;
  step.rowMax.resize(2 * mt);
  step.rowSum.resize(2 * mt);
  step.p.assign(mt, SmallVector<std::array<Value, 2>>(nTilesN));
  step.alpha.assign(mt, SmallVector<Value>(2));
  Value kvStart32 = i32(kvStart);
  Value negInf = cF32(b, -INFINITY);
  // Dropout draws once for the octet of tiles n and n + 1 (n even: key
  // blocks start at multiples of 16), rows g and g + 8 (Philox.h): where
  // row i = 0 of tile n first needs it, reused by the other three pairs.
  SmallVector<std::optional<std::array<Value, 8>>> dropoutOctets(
      mt * nTilesN / 2);
  for (int64_t m = 0; m < mt; ++m)
    for (int64_t i = 0; i < 2; ++i) {
      Value mx = st.rowMax[2 * m + i];
      Value local = negInf;
      for (int64_t n = 0; n < nTilesN; ++n)
        for (int64_t jj = 0; jj < 2; ++jj)
          local = arith::MaximumFOp::create(b, local, accGet(b, sc[m][n], i, jj));
      // Plain scores are still raw: their max scales by scale * log2(e)
      // (> 0, checked by the runtime), and each exponent below is one FFMA.
      Value localMax = quadReduceMax(b, local);
      if (isPlainScore())
        localMax = arith::MulFOp::create(b, localMax, scoreFactor);
      Value mNew = arith::MaximumFOp::create(b, mx, localMax);
      // A max that grows by no more than the slack is not taken: alpha is
      // then 1 and O's rescale skippable. Selected rather than left to
      // exp2(m - m): exactly 1 whatever ex2.approx gives, and also for rows
      // still at m = -inf, whose exp2(-inf) = 0 would fail the warp's vote.
      Value grows;
      if (float slack = s.runningMaxSlackLog2()) {
        grows = arith::CmpFOp::create(
            b, arith::CmpFPredicate::OGT, localMax,
            arith::AddFOp::create(b, mx, cF32(b, slack)));
        mNew = arith::SelectOp::create(b, grows, localMax, mx);
      }
      // A row with every key masked so far keeps m = -inf; subtract 0
      // instead so that exp2 sees -inf - 0 = -inf, not NaN.
      Value isNegInf = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mNew, negInf);
      Value mUse = arith::SelectOp::create(b, isNegInf, cF32(b, 0.0f), mNew);
      step.alpha[m][i] = exp2Approx(b, arith::SubFOp::create(b, mx, mUse));
      if (grows)
        step.alpha[m][i] =
            arith::SelectOp::create(b, grows, step.alpha[m][i], cF32(b, 1.0f));
      Value negMUse = arith::NegFOp::create(b, mUse);
      // P scaled by 2^offset (FP8's 256, moving p onto e4m3's normal
      // range): the row sum carries the same factor, which 1 / l cancels
      // and rowStatistics takes out of the LSE.
      float offset = probabilityLog2Scale();
      if (offset)
        negMUse = arith::AddFOp::create(b, negMUse, cF32(b, offset));
      Value sum = cF32(b, 0.0f);
      for (int64_t n = 0; n < nTilesN; ++n) {
        Value pair[2];
        for (int64_t jj = 0; jj < 2; ++jj) {
          Value x = accGet(b, sc[m][n], i, jj);
          // Scores already in the log2 domain (softcap, bias, score_mod)
          // take the offset through negMUse as well.
          pair[jj] = exp2Approx(
              b, isPlainScore()
                     ? Value(LLVM::FMAOp::create(b, x, scoreFactor, negMUse))
                 : offset ? Value(arith::AddFOp::create(b, x, negMUse))
                          : Value(arith::SubFOp::create(b, x, mUse)));
          sum = arith::AddFOp::create(b, sum, pair[jj]);
          // Dropout scales P after it entered the row sum: the softmax
          // normalises over every key, dropout then zeroes some of P.
          if (s.dropout) {
            auto &octet = dropoutOctets[(m * nTilesN + n) / 2];
            if (!octet)
              octet = dropoutOctetFactors(rowOf(m, 0),
                                          colOf(kvStart32, n - n % 2, 0));
            pair[jj] = arith::MulFOp::create(
                b, pair[jj], (*octet)[4 * (n % 2) + 2 * i + jj]);
          }
        }
        step.p[m][n][i] = packPair(b, pair[0], pair[1], probabilityType());
      }
      step.rowMax[2 * m + i] = mNew;
      step.rowSum[2 * m + i] = arith::AddFOp::create(
          b, arith::MulFOp::create(b, st.rowSum[2 * m + i], step.alpha[m][i]), sum);
    }
  return step;
}

void ForwardBuilder::rescale(SmallVector<Value> &acc,
                             ArrayRef<SmallVector<Value>> alpha) {
  for (int64_t m = 0; m < mt; ++m)
    for (int64_t n = 0; n < nTilesDv; ++n) {
      Value a = acc[m * nTilesDv + n];
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t jj = 0; jj < 2; ++jj)
          a = accSet(b, a, arith::MulFOp::create(b, accGet(b, a, i, jj), alpha[m][i]), i, jj);
      acc[m * nTilesDv + n] = a;
    }
}

void ForwardBuilder::rescaleUnlessUnit(SmallVector<Value> &acc,
                                       ArrayRef<SmallVector<Value>> alpha) {
  // Once the running maxima settle, alpha is exactly 1 for every row of the
  // warp in most key blocks: skip the mt * Dv / 2 multiplies then (a warp
  // vote, one uniform branch).
  Value unit = arith::ConstantIntOp::create(b, b.getI1Type(), 1);
  for (const SmallVector<Value> &rows : alpha)
    for (Value a : rows)
      unit = arith::AndIOp::create(
          b, unit,
          arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, a, cF32(b, 1.0f)));
  Value fullMask = arith::ConstantIntOp::create(b, b.getI32Type(), -1);
  Value warpUnit = NVVM::VoteSyncOp::create(b, b.getI1Type(), fullMask, unit,
                                            NVVM::VoteSyncKind::all);
  SmallVector<Type> types(acc.size(), acc.front().getType());
  auto ifOp = scf::IfOp::create(b, types, warpUnit, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    scf::YieldOp::create(b, acc);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    SmallVector<Value> scaled(acc);
    rescale(scaled, alpha);
    scf::YieldOp::create(b, scaled);
  }
  acc.assign(ifOp.getResults().begin(), ifOp.getResults().end());
}

bool ForwardBuilder::stagesOutput() const {
  // O's rows go through the swizzled Q tile, which holds them when
  // Dv <= D (Q is the tile no cp.async may still be writing: the last
  // iterations prefetch past the band into the K/V ring).
  // The copy-out gives each lane one 16-byte chunk of a row and a warp
  // whole rows per pass: the rows' chunks must divide the warp's 32 lanes
  // (192-column rows, Dv in (128, 192], are stored from the fragments).
  // An f32 O is stored from the fragments too: its rows are twice the
  // bytes of the 16-bit Q tile's, and each lane's 8-byte stores already
  // fill whole 32-byte sectors (a quad writes 32 contiguous bytes). So is
  // the FP8 forward's 16-bit O, twice the bytes of its e4m3 Q tile's rows.
  int64_t width = KernelSpec::swizzleWidth(s.headDimV);
  return s.swizzledTiles() && s.outputType() == s.elementType &&
         width <= KernelSpec::swizzleWidth(s.headDim) && 32 % (width / 8) == 0;
}

void ForwardBuilder::writeEpilogue(const SoftmaxState &final) {
  // Epilogue: O = acc / l, LSE = (m + log2 l) ln 2; l == 0 (every key
  // masked) gives O = 0 and LSE = +inf.
  bool staged = stagesOutput();
  if (staged) {
    // O overwrites the Q tile: every warp must be done with it (the sm90
    // recipe's wgmma reads a whole warpgroup's Q rows).
    syncComputeWarps();
    // The staging's addresses derive from coordinates read afresh, so that
    // no value computed before the key loop stays live across it for them
    // (the loop runs at the 255-register cap; kept, such values spilled in
    // D = 96/128 variants). The direct stores are left as they were: there
    // the rereading itself cost a D = 32 dropout kernel (128 registers) a
    // spill.
    rereadCoordinates();
    mStart = rereadFirstRow();
  }
  oBase = operandBase("o", head);
  oStrideS = idx("o_stride_s");
  Value lse = arg.lookup("lse");
  Value lseRowBase = lseRowStart();
  Value isLeader = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, t, cIdx(b, 0));
  for (int64_t m = 0; m < mt; ++m)
    for (int64_t i = 0; i < 2; ++i) {
      auto [inv, lseVal] = finalRowStatistics(final, m, i, INFINITY);
      SmallVector<Value> pairs;
      for (int64_t n = 0; n < nTilesDv; ++n) {
        Value a = final.acc[m * nTilesDv + n];
        pairs.push_back(arith::MulFOp::create(b, accGet(b, a, i, 0), inv));
        pairs.push_back(arith::MulFOp::create(b, accGet(b, a, i, 1), inv));
      }
      if (staged)
        stageOutputRow(m, i, pairs);
      Value row = arith::IndexCastOp::create(b, b.getIndexType(), rowOf(m, i));
      Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, seqQ);
      auto ifRow = scf::IfOp::create(b, TypeRange{}, inRange, /*withElse=*/false);
      OpBuilder::InsertionGuard g3(b);
      b.setInsertionPointToStart(&ifRow.getThenRegion().front());
      if (!staged)
        storeOutputRow(row, pairs);
      auto ifLead = scf::IfOp::create(b, TypeRange{}, isLeader, false);
      b.setInsertionPointToStart(&ifLead.getThenRegion().front());
      memref::StoreOp::create(b, lseVal, lse,
                              ValueRange{arith::AddIOp::create(b, lseRowBase, row)});
    }
  if (staged)
    copyOutStagedRows();
}

Value ForwardBuilder::rereadFirstRow() {
  return firstRowOfBlock(readSpecialRegisterOpaquely("ctaid.x"),
                         readSpecialRegisterOpaquely("nctaid.x"));
}

Value ForwardBuilder::stagingOffset(Value at) {
  return outputStagingOffset ? arith::AddIOp::create(b, at, outputStagingOffset)
                             : at;
}

Value ForwardBuilder::lseRowStart() {
  return arith::MulIOp::create(
      b, arith::AddIOp::create(b, arith::MulIOp::create(b, batchIdx, headsQ), head),
      seqQ);
}

std::pair<Value, Value>
ForwardBuilder::finalRowStatistics(const SoftmaxState &final, int64_t m,
                                   int64_t i, float emptyLse) {
  Value l = quadReduceSum(b, final.rowSum[2 * m + i]);
  Value mx = final.rowMax[2 * m + i];
  auto [inv, lse] = rowStatistics(l, mx, emptyLse);
  if (Value factor = outputFactor())
    inv = arith::MulFOp::create(b, inv, factor);
  return {inv, lse};
}

std::pair<Value, Value> ForwardBuilder::rowStatistics(Value l, Value mx,
                                                      float emptyLse) {
  Value positive = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, l, cF32(b, 0.0f));
  Value inv = arith::SelectOp::create(
      b, positive, arith::DivFOp::create(b, cF32(b, 1.0f), l), cF32(b, 0.0f));
  Value log2Sum = arith::AddFOp::create(b, mx, log2Approx(b, l));
  if (float offset = probabilityLog2Scale())
    log2Sum = arith::SubFOp::create(b, log2Sum, cF32(b, offset));
  Value lse = arith::SelectOp::create(
      b, positive, arith::MulFOp::create(b, log2Sum, cF32(b, float(M_LN2))),
      cF32(b, emptyLse));
  return {inv, lse};
}

Value ForwardBuilder::outputRowStart(Value row) {
  return arith::AddIOp::create(b, oBase, arith::MulIOp::create(b, row, oStrideS));
}

void ForwardBuilder::storeOutputRow(Value row, ArrayRef<Value> pairs) {
  // Straight from the fragments: columns 8n + 2t, 8n + 2t + 1, 4 bytes a
  // store (the padded-tile kernels, which have no swizzled Q tile to stage
  // through), 8 unrounded bytes where O is f32.
  Value oRow = outputRowStart(row);
  for (int64_t n = 0; n < s.headDimV / 8; ++n) {
    Value col = arith::AddIOp::create(b, arith::MulIOp::create(b, t, cIdx(b, 2)),
                                      cIdx(b, 8 * n));
    storePair(b, pairs[2 * n], pairs[2 * n + 1], s.outputType(), arg.lookup("o"),
              ValueRange{arith::AddIOp::create(b, oRow, col)});
  }
}

void ForwardBuilder::stageOutputRow(int64_t m, int64_t i, ArrayRef<Value> pairs) {
  // Fragment row (m, i) of this warp into its own rows of the Q tile, in
  // the swizzled layout: the 8 rows one store covers land in 8 different
  // 16-byte bank groups, so the 4-byte stores are conflict-free.
  Value rowInTile = arith::AddIOp::create(
      b, arith::MulIOp::create(b, warp, cIdx(b, 16 * mt)),
      arith::AddIOp::create(b, g, cIdx(b, 16 * m + 8 * i)));
  Value twoT = arith::MulIOp::create(b, t, cIdx(b, 2));
  for (int64_t n = 0; n < nTilesDv; ++n) {
    Value at = stagingOffset(arith::AddIOp::create(
        b, swizzle::offset(b, rowInTile, cIdx(b, 8 * n), s.blockM), twoT));
    storePair(b, pairs[2 * n], pairs[2 * n + 1], s.elementType, swizzledTiles,
              ValueRange{at});
  }
}

void ForwardBuilder::copyOutStagedRows() {
  // Each warp reads back its own 16 * mt rows, so a warp barrier orders the
  // stores above before the reads. Then 16 bytes a lane, whole rows per
  // pass: a warp stores 512 contiguous bytes at a time where the fragments
  // store 4 (FlashAttention-2 stages O in shared memory for the same reason;
  // the fragments' stores were 7% of the 2k forward's stall samples, ncu
  // run 56).
  NVVM::SyncWarpOp::create(b, arith::ConstantIntOp::create(b, b.getI32Type(), -1));
  int64_t width = KernelSpec::swizzleWidth(s.headDimV);
  int64_t chunksPerRow = width / 8, rowsPerPass = 32 / chunksPerRow;
  int64_t passes = 16 * mt / rowsPerPass;
  Value rowInPass = arith::DivUIOp::create(b, lane, cIdx(b, chunksPerRow));
  Value chunk = arith::RemUIOp::create(b, lane, cIdx(b, chunksPerRow));
  Value col = arith::MulIOp::create(b, chunk, cIdx(b, 8));
  Value firstRow = arith::AddIOp::create(
      b, arith::MulIOp::create(b, warp, cIdx(b, 16 * mt)), rowInPass);
  // Swizzle.h's layout with the row-dependent part split off: pass p reads
  // row firstRow + p * rowsPerPass, whose row % 8 is rowInPass ^ (p *
  // rowsPerPass % 8) (the warp's rows start at a multiple of 8 and
  // rowInPass < rowsPerPass), so its chunk sits at chunkSwizzled ^ that
  // constant.
  Value chunkSwizzled = arith::XOrIOp::create(
      b, arith::RemUIOp::create(b, chunk, cIdx(b, 8)), rowInPass);
  Value tileRowStart = arith::AddIOp::create(
      b,
      arith::MulIOp::create(
          b, arith::DivUIOp::create(b, col, cIdx(b, swizzle::kRowElements)),
          cIdx(b, s.blockM * swizzle::kRowElements)),
      arith::MulIOp::create(b, firstRow, cIdx(b, swizzle::kRowElements)));
  // The global side: one address, stepped by rowsPerPass rows per pass.
  Value out = arg.lookup("o");
  Value firstGlobalRow = arith::AddIOp::create(b, mStart, firstRow);
  Value address = byteAddress(
      out, ValueRange{arith::AddIOp::create(b, outputRowStart(firstGlobalRow), col)});
  Value passBytes = arith::IndexCastOp::create(
      b, b.getI64Type(),
      arith::MulIOp::create(b, oStrideS, cIdx(b, rowsPerPass * 2)));
  // Lanes past Dv (D = 96 keeps 128-column rows) store nothing.
  Value colValid = width == s.headDimV
                       ? Value()
                       : arith::CmpIOp::create(b, arith::CmpIPredicate::ult, col,
                                               cIdx(b, s.headDimV));
  auto chunkTy = VectorType::get({8}, s.elementType);
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  ifRowsBelow(mStart, s.blockM, seqQ, [&](RowCheck check) {
    Value to = address;
    for (int64_t p = 0; p < passes; ++p) {
      if (p)
        to = arith::AddIOp::create(b, to, passBytes);
      int64_t rowDelta = p * rowsPerPass;
      Value at = arith::AddIOp::create(
          b, tileRowStart,
          arith::AddIOp::create(
              b,
              arith::MulIOp::create(
                  b,
                  arith::XOrIOp::create(b, chunkSwizzled, cIdx(b, rowDelta % 8)),
                  cIdx(b, 8)),
              cIdx(b, rowDelta * swizzle::kRowElements)));
      Value data = vector::LoadOp::create(b, chunkTy, swizzledTiles,
                                          ValueRange{stagingOffset(at)}, /*nontemporal=*/false,
                                          llvm::Align(16));
      Value valid = colValid;
      if (check == RowCheck::Checked) {
        Value rowValid = arith::CmpIOp::create(
            b, arith::CmpIPredicate::slt,
            arith::AddIOp::create(b, firstGlobalRow, cIdx(b, rowDelta)), seqQ);
        valid = valid ? arith::AndIOp::create(b, valid, rowValid) : rowValid;
      }
      OpBuilder::InsertionGuard guard(b);
      if (valid) {
        auto ifValid = scf::IfOp::create(b, TypeRange{}, valid, /*withElse=*/false);
        b.setInsertionPointToStart(&ifValid.getThenRegion().front());
      }
      LLVM::StoreOp::create(b, data, LLVM::IntToPtrOp::create(b, globalPtr, to),
                            /*alignment=*/16);
    }
  });
}
