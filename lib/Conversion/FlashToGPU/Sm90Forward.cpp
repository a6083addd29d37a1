//===- Sm90Forward.cpp - the sm90 recipe's forward matrix engine ----------===//
//
// The forward schedule of ForwardBuilder.cpp on Hopper's warpgroup MMA: each
// warpgroup (4 warps) owns 64 query rows, S = Q·Kᵀ is one chain of
// wgmma m64n{block_n}k16 with Q and K read from shared memory, and
// O += P·V a chain of wgmma m64n{Dv}k16 with P straight from registers (the
// accumulator layout packs into the A operand, as with mma.sync) and V read
// N-major. Q, K and V live in 128-byte-swizzled tiles (Wgmma.h) filled by
// cp.async; a proxy fence makes those generic-proxy writes visible to the
// tensor cores' async-proxy reads before the barrier that publishes a tile.
//
// With three or more K/V stages the key loop overlaps the softmax with the
// tensor cores (FlashAttention-3's intra-warpgroup pipelining): iteration j
// issues S_j = Q·K_jᵀ and O += P_{j-1}·V_{j-1} as two asynchronous groups,
// waits for S_j only, runs the softmax of block j while the P·V product is
// still in flight, then waits for it and rescales O. ptxas moves that wait
// up to the top of the softmax's block unless it has a block of its own
// (KernelSpec::waitsForOutputAfterSoftmax, wgmma::waitGroupThenCopy). With
// two stages the shared FlashAttention-2 order is used.
//
//===----------------------------------------------------------------------===//
#include "Sm90Forward.h"
#include "Fragments.h"
#include "Recipes.h"
#include "BlockSparseIterator.h"
#include "VarlenScheduler.h"
#include "Wgmma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

void Sm90ForwardBuilder::carveSharedMemory() {
  carveSwizzledQKV();
  qDesc = warpgroupQDescriptor();
}

Value Sm90ForwardBuilder::warpgroupQDescriptor() {
  // Warpgroup w's rows start 64 rows (8 swizzle atoms) into each column
  // block of Q (16-bit units).
  int64_t rowBytes = s.tmaSwizzleBytes(s.headDim);
  Value wgRows = arith::MulIOp::create(
      b, arith::DivUIOp::create(b, warp, cIdx(b, 4)),
      cIdx(b, 64 * rowBytes / 2));
  return wgmma::kMajorDescriptor(b, swizzledAddress(wgRows), rowBytes);
}

void Sm90ForwardBuilder::copyOperand(StringRef name, Value base,
                                     Value rowStride, Value rowStart,
                                     Value offset, int64_t rows, int64_t cols,
                                     SmallVectorImpl<Value> &tokens,
                                     RowCheck check) {
  copySwizzled(arg.lookup(name), base, rowStride, rowStart,
               name == "q" ? seqQ : seqK, offset, rows, cols, tokens, check);
}

Value Sm90ForwardBuilder::loadQTile() {
  SmallVector<Value> tokens;
  copyOperand("q", qBase, qStrideS, mStart, cIdx(b, 0), s.blockM, s.headDim,
               tokens);
  return commitGroup(tokens);
}

Value Sm90ForwardBuilder::loadKVBlock(Value block, Value stage) {
  Value rowStart = arith::MulIOp::create(b, block, cIdx(b, s.blockN));
  return commitKVCopies(
      rowStart, [&](RowCheck check, SmallVectorImpl<Value> &tokens) {
        copyOperand("k", kBase, kStrideS, rowStart, kOffset(stage), s.blockN,
                    s.headDim, tokens, check);
        copyOperand("v", vBase, vStrideS, rowStart, vOffset(stage), s.blockN,
                    s.headDimV, tokens, check);
      });
}

SmallVector<Value> Sm90ForwardBuilder::issueScores(Value stage) {
  Value kDesc = wgmma::kMajorDescriptor(b, swizzledAddress(kOffset(stage)));
  return wgmma::productKMajor(b, qDesc, s.blockM, kDesc, s.blockN, s.headDim,
                              s.elementType);
}

SmallVector<Value> Sm90ForwardBuilder::issueOutput(ArrayRef<Value> o,
                                                   ArrayRef<Value> p,
                                                   Value stage) {
  // V is [key][dv]: an N-major B operand whose 64-column blocks are a
  // tile of block_n rows apart; k-step kk starts 16 rows (2 atoms) further.
  Value vDesc = wgmma::mnMajorDescriptor(
      b, swizzledAddress(vOffset(stage)), s.blockN * swizzle::kRowBytes);
  SmallVector<Value> acc(o);
  for (int64_t kk = 0; kk < s.blockN / 16; ++kk) {
    // Key tiles 2kk and 2kk+1 of P form the A operand of k-step kk.
    Value a[4] = {p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3]};
    acc = wgmma::mmaRegisterA(
        b, acc, a, wgmma::advance(b, vDesc, wgmma::mnStepBytes(kk)),
        s.headDimV, s.elementType, /*accumulate=*/true, /*transposeB=*/true);
  }
  wgmma::commitGroup(b);
  return acc;
}

SmallVector<ForwardBuilder::Frags>
Sm90ForwardBuilder::toFragments(ArrayRef<Value> regs) {
  return {wgmma::toFragments(b, regs)};
}

SmallVector<Value> Sm90ForwardBuilder::fromFragments(ArrayRef<Value> frags) {
  return wgmma::fromFragments(b, frags);
}

SmallVector<Value> Sm90ForwardBuilder::packedRegisters(const PackedP &p) {
  SmallVector<Value> regs;
  for (int64_t n = 0; n < nTilesN; ++n)
    for (int64_t i = 0; i < 2; ++i)
      regs.push_back(p[0][n][i]);
  return regs;
}

Value Sm90ForwardBuilder::ringPosition(Value block, Value nStart) {
  Value pos = arith::SubIOp::create(b, block, nStart);
  return ringBase ? arith::AddIOp::create(b, pos, ringBase) : pos;
}

Value Sm90ForwardBuilder::stageOf(Value block, Value nStart) {
  return arith::RemUIOp::create(b, ringPosition(block, nStart),
                                cIdx(b, s.stages));
}

SmallVector<ForwardBuilder::Frags>
Sm90ForwardBuilder::computeScores(ArrayRef<Frags>, Value stage) {
  wgmma::fence(b);
  SmallVector<Value> acc = issueScores(stage);
  wgmma::waitGroup(b, 0);
  return toFragments(wgmma::pinRegisters(b, acc));
}

void Sm90ForwardBuilder::accumulateOutput(SmallVector<Value> &acc,
                                          const PackedP &packedP, Value stage) {
  outputAndWait(acc, packedRegisters(packedP), stage);
}

void Sm90ForwardBuilder::outputAndWait(SmallVector<Value> &acc,
                                       ArrayRef<Value> pRegs, Value stage,
                                       function_ref<void()> issued) {
  // The rescaled O and the packed P are written by ordinary instructions:
  // they must be in their registers before the fence.
  SmallVector<Value> o = wgmma::pinRegisters(b, fromFragments(acc));
  SmallVector<Value> p = wgmma::pinRegisters(b, pRegs);
  wgmma::fence(b);
  o = issueOutput(o, p, stage);
  if (issued)
    issued();
  wgmma::waitGroup(b, 0);
  // P is read by the product until the wait: keep it alive up to there.
  SmallVector<Value> pinned(o);
  pinned.append(p.begin(), p.end());
  pinned = wgmma::pinRegisters(b, pinned);
  acc = toFragments(ArrayRef<Value>(pinned).take_front(o.size()))[0];
}

void Sm90ForwardBuilder::prefetchAhead(Value block, Value nStart) {
  Value next = arith::AddIOp::create(b, block, cIdx(b, prefetchDistance()));
  loadKVBlock(keyBlockAt(next), stageOf(next, nStart));
}

void Sm90ForwardBuilder::acquireFirstBlock(Value nStart) {
  // Published by the prologue; its stage's successor goes out now.
  prefetchAhead(nStart, nStart);
}

void Sm90ForwardBuilder::acquireBlock(Value j, Value nStart, Value anyGroup) {
  // Block j's K/V landed (at most ahead - 1 younger groups pending); every
  // thread is past iteration j-1, so the stage of block j-2 is free.
  nvgpu::DeviceAsyncWaitOp::create(
      b, anyGroup, b.getI32IntegerAttr(prefetchDistance() - 1));
  publishTiles();
  gpu::BarrierOp::create(b);
  prefetchAhead(j, nStart);
}

ForwardBuilder::SoftmaxState
Sm90ForwardBuilder::buildKeyLoop(ArrayRef<Frags> qOps, Value nStart,
                                 Value nEnd, const SoftmaxState &init,
                                 Value anyGroup) {
  if (!overlapped())
    return ForwardBuilder::buildKeyLoop(qOps, nStart, nEnd, init, anyGroup);
  readTileAlibiSlope();
  auto kvStartOf = [&](Value block) { return scoredKeyStart(block); };

  // A block with no visible key block skips everything (the epilogue then
  // writes O = 0, LSE = +inf).
  Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, nStart, nEnd);
  SmallVector<Value> initFlat = init.flat();
  auto ifAny = scf::IfOp::create(b, ValueRange(initFlat).getTypes(), any,
                                 /*withElse=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifAny.getElseRegion().front());
    scf::YieldOp::create(b, initFlat);
  }
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifAny.getThenRegion().front());

  // Per-block score factors (enterKeyBlock) live inside the walk only.
  Value tileScoreFactor = scoreFactor, tileScaleOverride = scaleOverride;
  llvm::scope_exit restoreFactors([&] {
    scoreFactor = tileScoreFactor;
    scaleOverride = tileScaleOverride;
  });

  // The first block: S and softmax only.
  acquireFirstBlock(nStart);
  awaitIssueTurn();
  wgmma::fence(b);
  SmallVector<Value> s0 = issueScores(stageOf(nStart, nStart));
  passIssueTurn();
  beginKeyBlock(nStart, /*first=*/true);
  wgmma::waitGroup(b, 0);
  releaseKeys(nStart, nStart);
  SmallVector<Frags> sc = toFragments(wgmma::pinRegisters(b, s0));
  enterKeyBlock(nStart);
  maskScores(sc, kvStartOf(nStart), nStart);
  SoftmaxStep first = onlineSoftmax(sc, init, kvStartOf(nStart));

  // Blocks nStart+1 .. nEnd-1: carries O (scaled to the running max), m, l
  // and the previous block's packed P, whose P·V is still to be done.
  SoftmaxState st0 = init;
  st0.rowMax = first.rowMax;
  st0.rowSum = first.rowSum;
  SmallVector<Value> carried = st0.flat();
  SmallVector<Value> p0 = packedRegisters(first.p);
  int64_t nState = carried.size();
  carried.append(p0.begin(), p0.end());
  auto loop = scf::ForOp::create(b, arith::AddIOp::create(b, nStart, cIdx(b, 1)),
                                 nEnd, cIdx(b, 1), carried);
  {
    OpBuilder::InsertionGuard gl(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    auto iter = loop.getRegionIterArgs();
    SoftmaxState st = unflatten(iter.take_front(nState));
    SmallVector<Value> pPrev(iter.drop_front(nState));

    acquireBlock(j, nStart, anyGroup);

    SmallVector<Value> o = wgmma::pinRegisters(b, fromFragments(st.acc));
    pPrev = wgmma::pinRegisters(b, pPrev);
    awaitIssueTurn();
    wgmma::fence(b);
    SmallVector<Value> sj = issueScores(stageOf(j, nStart));
    Value prev = arith::SubIOp::create(b, j, cIdx(b, 1));
    acquireValues(prev, nStart);
    o = issueOutput(o, pPrev, stageOf(prev, nStart));
    passIssueTurn();
    beginKeyBlock(j, /*first=*/false);
    // S_j is ready once at most the P·V group is pending.
    wgmma::waitGroup(b, 1);
    releaseKeys(j, nStart);
    SmallVector<Frags> scj = toFragments(wgmma::pinRegisters(b, sj));
    enterKeyBlock(j);
    maskScores(scj, kvStartOf(j), j);
    SoftmaxStep step = onlineSoftmax(scj, st, kvStartOf(j));
    SmallVector<Value> pj;
    if (s.waitsForOutputAfterSoftmax())
      // In a block of the wait's own, P_j's registers for the next product
      // taken after it. The token j is uniform and at least 1.
      pj = wgmma::waitGroupThenCopy(b, 0, i32(j), packedRegisters(step.p));
    else
      wgmma::waitGroup(b, 0);
    releaseBlock(prev, nStart);
    // P_{j-1} is read by the P·V product until this wait: keep it alive.
    SmallVector<Value> pinned(o);
    pinned.append(pPrev.begin(), pPrev.end());
    pinned = wgmma::pinRegisters(b, pinned);
    SoftmaxState next;
    next.acc = toFragments(ArrayRef<Value>(pinned).take_front(o.size()))[0];
    if (s.runningMaxSlackLog2()) {
      // P packed before the vote's branch: in the block of its exponentials,
      // where ptxas merges its byte pairs into the conversions.
      if (pj.empty())
        pj = packedRegisters(step.p);
      rescaleUnlessUnit(next.acc, outputRescale(step.alpha, j));
    } else {
      rescale(next.acc, outputRescale(step.alpha, j));
    }
    next.rowMax = step.rowMax;
    next.rowSum = step.rowSum;
    SmallVector<Value> yields = next.flat();
    if (pj.empty())
      pj = packedRegisters(step.p);
    yields.append(pj.begin(), pj.end());
    scf::YieldOp::create(b, yields);
  }
  // The last block's P·V.
  auto results = loop.getResults();
  SoftmaxState last = unflatten(results.take_front(nState));
  Value lastBlock = arith::SubIOp::create(b, nEnd, cIdx(b, 1));
  acquireValues(lastBlock, nStart);
  clearValuesPastKeys(lastBlock, nStart);
  awaitIssueTurn();
  outputAndWait(last.acc, SmallVector<Value>(results.drop_front(nState)),
                stageOf(lastBlock, nStart), [&] { passIssueTurn(); });
  scf::YieldOp::create(b, last.flat());
  return unflatten(ifAny.getResults());
}

void mlir::flash::buildSm90ForwardKernel(gpu::GPUFuncOp func,
                                         const KernelSpec &spec) {
  if (spec.varlen)
    VarlenScheduler<Sm90ForwardBuilder>(func, spec).build();
  else if (spec.blockSparse)
    BlockSparseIterator<Sm90ForwardBuilder>(func, spec).build();
  else
    Sm90ForwardBuilder(func, spec).build();
}
