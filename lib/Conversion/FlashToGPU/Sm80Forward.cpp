//===- Sm80Forward.cpp - the sm80 recipe's forward matrix engine ----------===//
//
// The FlashAttention-2 forward (ForwardBuilder.cpp) on mma.sync m16n8k16:
// Q, K and V tiles in shared memory, copied by cp.async; Q's A operands
// ldmatrix'd into registers once when they fit; K read with ldmatrix and V
// with ldmatrix.trans as B operands. The tiles use the 128-byte swizzle
// (Swizzle.h) where D >= 64 (KernelSpec::swizzledTiles), padded rows
// otherwise (D = 32), both free of ldmatrix bank conflicts; the swizzle also
// keeps the cp.async writes to whole lines (run 44, docs/PERF.md).
//
//===----------------------------------------------------------------------===//
#include "Sm80Forward.h"
#include "Fragments.h"
#include "Recipes.h"
#include "BlockSparseIterator.h"
#include "VarlenScheduler.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

void Sm80ForwardBuilder::carveSharedMemory() {
  if (s.swizzledTiles()) {
    carveSwizzledQKV();
    return;
  }
  Value raw = sharedMemoryBytes();
  int64_t pad = KernelSpec::kRowPad;
  sQ = sharedTile(raw, {s.blockM, s.mmaDim() + pad}, 0, s.elementType);
  sK = sharedTile(raw, {s.stages, s.blockN, s.mmaDim() + pad}, s.qTileBytes(),
                  s.elementType);
  sV = sharedTile(raw, {s.stages, s.blockN, s.mmaDimV() + pad},
                  s.qTileBytes() + s.stages * s.kStageBytes(), s.elementType);
}

void Sm80ForwardBuilder::copyOperand(Operand op, Value stage, Value rowStart,
                                     SmallVectorImpl<Value> &tokens,
                                     RowCheck check, RowAddress rowAddress,
                                     Value rowLimit, const PagedRows *paged) {
  bool isQ = op == Operand::Q;
  StringRef name = isQ ? "q" : op == Operand::K ? "k" : "v";
  Value base = isQ ? qBase : op == Operand::K ? kBase : vBase;
  Value stride = isQ ? qStrideS : op == Operand::K ? kStrideS : vStrideS;
  int64_t rows = isQ ? s.blockM : s.blockN;
  int64_t cols = op == Operand::V ? s.headDimV : s.headDim;
  if (!isQ) // 16-bit units: half the row of an FP8 cache
    cols = s.cacheColumns(cols);
  Value limit = rowLimit ? rowLimit : isQ ? seqQ : seqK;
  if (s.swizzledTiles()) {
    Value offset = isQ ? cIdx(b, 0)
                       : op == Operand::K ? kOffset(stage) : vOffset(stage);
    copySwizzled(arg.lookup(name), base, stride, rowStart, limit, offset, rows,
                 cols, tokens, check, rowAddress, paged);
    return;
  }
  Value tile = isQ ? sQ : op == Operand::K ? sK : sV;
  issueTileCopies(arg.lookup(name), base, stride, rowStart, limit, tile,
                  isQ ? ValueRange{} : ValueRange{stage}, rows, cols, tokens,
                  check, rowAddress, paged);
}

Regs Sm80ForwardBuilder::loadBlock(Operand op, Value stage, X4 pattern,
                                   Value row0, int64_t col0) {
  bool isQ = op == Operand::Q;
  if (s.swizzledTiles()) {
    Value offset = isQ ? cIdx(b, 0)
                       : op == Operand::K ? kOffset(stage) : vOffset(stage);
    return ldmatrixSwizzled(b, swizzledTiles, offset,
                            isQ ? s.blockM : s.blockN, pattern, lane, row0,
                            col0, s.elementType);
  }
  Value tile = isQ ? sQ : op == Operand::K ? sK : sV;
  return ldmatrixPadded(b, tile, isQ ? ValueRange{} : ValueRange{stage}, lane,
                        pattern, row0, cIdx(b, col0), s.elementType);
}

Value Sm80ForwardBuilder::loadKVBlock(Value block, Value stage) {
  Value rowStart = arith::MulIOp::create(b, block, cIdx(b, s.blockN));
  return commitKVCopies(
      rowStart, [&](RowCheck check, SmallVectorImpl<Value> &tokens) {
        copyOperand(Operand::K, stage, rowStart, tokens, check);
        copyOperand(Operand::V, stage, rowStart, tokens, check);
      });
}

Value Sm80ForwardBuilder::loadQTile() {
  SmallVector<Value> tokens;
  copyOperand(Operand::Q, Value(), mStart, tokens);
  return commitGroup(tokens);
}

SmallVector<ForwardBuilder::Frags>
Sm80ForwardBuilder::computeScores(ArrayRef<Frags> qRegs, Value stage) {
  SmallVector<Frags> sc(mt, Frags(nTilesN, accZero(b)));
  for (int64_t kk = 0; kk < nTilesD; ++kk) {
    SmallVector<Frags> qa(mt);
    for (int64_t m = 0; m < mt; ++m)
      qa[m] = qRegs.empty() ? loadQOperand(m, kk) : qRegs[m * nTilesD + kk];
    for (int64_t p = 0; p < nTilesN / 2; ++p) {
      Regs kf = loadKeyOperands(stage, p, kk);
      for (int64_t m = 0; m < mt; ++m) {
        sc[m][2 * p] = mmaStep(qa[m], {kf[0], kf[1]}, sc[m][2 * p]);
        sc[m][2 * p + 1] = mmaStep(qa[m], {kf[2], kf[3]}, sc[m][2 * p + 1]);
      }
    }
  }
  return sc;
}

Regs Sm80ForwardBuilder::loadKeyOperands(Value stage, int64_t p,
                                         int64_t kk) {
  return loadBlock(Operand::K, stage, X4::BPair, keyRow(16 * p), kk * 16);
}

Value Sm80ForwardBuilder::mmaStep(ArrayRef<Value> a, ArrayRef<Value> bOp,
                                  Value c) {
  return mma(b, a, bOp, c, s.elementType);
}

ForwardBuilder::Frags Sm80ForwardBuilder::loadQOperand(int64_t m,
                                                           int64_t kk) {
  Value row = arith::AddIOp::create(b, warpFirstRow(), cIdx(b, 16 * m));
  Regs r = loadBlock(Operand::Q, Value(), X4::A, row, 16 * kk);
  return Frags(r.begin(), r.end());
}

Value Sm80ForwardBuilder::keyRow(int64_t row) {
  return warpKeyOffset ? Value(arith::AddIOp::create(b, warpKeyOffset,
                                                     cIdx(b, row)))
                       : cIdx(b, row);
}

void Sm80ForwardBuilder::accumulateOutput(SmallVector<Value> &acc,
                                          const PackedP &packedP, Value stage) {
  // O += P V: P's packed pairs of key tiles 2kk, 2kk+1 form the A operand,
  // V ([key][dv] in shared memory) is read with ldmatrix.trans.
  for (int64_t kk = 0; kk < nTilesN / 2; ++kk) {
    SmallVector<Regs> pA(mt);
    for (int64_t m = 0; m < mt; ++m)
      pA[m] = {packedP[m][2 * kk][0], packedP[m][2 * kk][1],
               packedP[m][2 * kk + 1][0], packedP[m][2 * kk + 1][1]};
    for (int64_t p = 0; p < nTilesDv / 2; ++p) {
      Regs vf = loadBlock(Operand::V, stage, X4::BPairTransposed,
                          keyRow(16 * kk), p * 16);
      for (int64_t m = 0; m < mt; ++m) {
        Value &a0 = acc[m * nTilesDv + 2 * p];
        Value &a1 = acc[m * nTilesDv + 2 * p + 1];
        a0 = mma(b, pA[m], {vf[0], vf[1]}, a0, s.elementType);
        a1 = mma(b, pA[m], {vf[2], vf[3]}, a1, s.elementType);
      }
    }
  }
}

void mlir::flash::buildSm80ForwardKernel(gpu::GPUFuncOp func,
                                         const KernelSpec &spec) {
  if (spec.varlen)
    VarlenScheduler<Sm80ForwardBuilder>(func, spec).build();
  else if (spec.blockSparse)
    BlockSparseIterator<Sm80ForwardBuilder>(func, spec).build();
  else
    Sm80ForwardBuilder(func, spec).build();
}
