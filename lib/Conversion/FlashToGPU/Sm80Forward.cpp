//===- Sm80Forward.cpp - the sm80 recipe's forward matrix engine ----------===//
//
// The FlashAttention-2 forward (ForwardBuilder.cpp) on mma.sync m16n8k16:
// Q, K and V tiles in shared memory, copied by cp.async; Q's A operands
// ldmatrix'd into registers once when they fit; K read with ldmatrix and V
// with ldmatrix.trans as B operands. The tiles use the 128-byte swizzle
// (Swizzle.h) where D is a multiple of 64, padded rows otherwise (D = 32,
// 96), both free of ldmatrix bank conflicts; the swizzle also keeps the
// cp.async writes to whole lines (run 44, docs/PERF.md).
//
//===----------------------------------------------------------------------===//
#include "ForwardBuilder.h"
#include "Fragments.h"
#include "Recipes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

class Sm80ForwardBuilder : public ForwardBuilder {
public:
  using ForwardBuilder::ForwardBuilder;

private:
  // Padded rows: [block_m][D + pad], [stages][block_n][D + pad] (and Dv).
  Value sQ, sK, sV;

  void carveSharedMemory() override;
  Value loadQTile() override;
  Value loadKVBlock(Value block, Value stage) override;
  bool keepsQInRegisters() override { return s.qInRegisters(); }
  Frags loadQOperand(int64_t m, int64_t kk) override;
  SmallVector<Frags> computeScores(ArrayRef<Frags> qRegs, Value stage) override;
  void accumulateOutput(SmallVector<Value> &acc, const PackedP &packedP,
                        Value stage) override;
};

void Sm80ForwardBuilder::carveSharedMemory() {
  if (s.swizzledTiles()) {
    carveSwizzledQKV();
    return;
  }
  Value raw = sharedMemoryBytes();
  int64_t pad = KernelSpec::kRowPad;
  sQ = sharedTile(raw, {s.blockM, s.headDim + pad}, 0, s.elementType);
  sK = sharedTile(raw, {s.stages, s.blockN, s.headDim + pad}, s.qTileBytes(),
                  s.elementType);
  sV = sharedTile(raw, {s.stages, s.blockN, s.headDimV + pad},
                  s.qTileBytes() + s.stages * s.kStageBytes(), s.elementType);
}

Value Sm80ForwardBuilder::loadKVBlock(Value block, Value stage) {
  Value rowStart = arith::MulIOp::create(b, block, cIdx(b, s.blockN));
  // K and V of one block form one commit group: the waits below count one
  // group per block, so a separate K group would make the wait for this
  // block also wait for the next block's K, serialising the prefetch.
  SmallVector<Value> tokens;
  if (s.swizzledTiles()) {
    copySwizzled(arg.lookup("k"), kBase, kStrideS, rowStart, seqK,
                 kOffset(stage), s.blockN, s.headDim, tokens);
    copySwizzled(arg.lookup("v"), vBase, vStrideS, rowStart, seqK,
                 vOffset(stage), s.blockN, s.headDimV, tokens);
    return commitGroup(tokens);
  }
  issueTileCopies(arg.lookup("k"), kBase, kStrideS, rowStart, seqK, sK, stage,
                  s.blockN, s.headDim, tokens);
  issueTileCopies(arg.lookup("v"), vBase, vStrideS, rowStart, seqK, sV, stage,
                  s.blockN, s.headDimV, tokens);
  return commitGroup(tokens);
}

Value Sm80ForwardBuilder::loadQTile() {
  if (s.swizzledTiles()) {
    SmallVector<Value> tokens;
    copySwizzled(arg.lookup("q"), qBase, qStrideS, mStart, seqQ, cIdx(b, 0),
                 s.blockM, s.headDim, tokens);
    return commitGroup(tokens);
  }
  return copyTileAsync(arg.lookup("q"), qBase, qStrideS, mStart, seqQ, sQ,
                       ValueRange{}, s.blockM, s.headDim);
}

SmallVector<ForwardBuilder::Frags>
Sm80ForwardBuilder::computeScores(ArrayRef<Frags> qRegs, Value stage) {
  SmallVector<Frags> sc(mt, Frags(nTilesN, accZero(b)));
  for (int64_t kk = 0; kk < nTilesD; ++kk) {
    SmallVector<Frags> qa(mt);
    for (int64_t m = 0; m < mt; ++m)
      qa[m] = qRegs.empty() ? loadQOperand(m, kk) : qRegs[m * nTilesD + kk];
    for (int64_t p = 0; p < nTilesN / 2; ++p) {
      Regs kf = s.swizzledTiles()
                    ? ldmatrixSwizzled(b, swizzledTiles, kOffset(stage),
                                       s.blockN, X4::BPair, lane,
                                       cIdx(b, p * 16), kk * 16, s.elementType)
                    : loadBPair(b, sK, stage, lane, cIdx(b, p * 16),
                                cIdx(b, kk * 16), s.elementType);
      for (int64_t m = 0; m < mt; ++m) {
        sc[m][2 * p] = mma(b, qa[m], {kf[0], kf[1]}, sc[m][2 * p], s.elementType);
        sc[m][2 * p + 1] =
            mma(b, qa[m], {kf[2], kf[3]}, sc[m][2 * p + 1], s.elementType);
      }
    }
  }
  return sc;
}

ForwardBuilder::Frags Sm80ForwardBuilder::loadQOperand(int64_t m,
                                                           int64_t kk) {
  Value row = arith::AddIOp::create(
      b, arith::MulIOp::create(b, warp, cIdx(b, 16 * mt)), cIdx(b, 16 * m));
  Regs r = s.swizzledTiles()
               ? ldmatrixSwizzled(b, swizzledTiles, cIdx(b, 0), s.blockM, X4::A,
                                  lane, row, 16 * kk, s.elementType)
               : loadA(b, sQ, ValueRange{}, lane, row, cIdx(b, 16 * kk),
                       s.elementType);
  return Frags(r.begin(), r.end());
}

void Sm80ForwardBuilder::accumulateOutput(SmallVector<Value> &acc,
                                          const PackedP &packedP, Value stage) {
  // O += P V: P's packed pairs of key tiles 2kk, 2kk+1 form the A operand,
  // V ([key][dv] in shared memory) is read with ldmatrix.trans.
  for (int64_t kk = 0; kk < s.blockN / 16; ++kk) {
    SmallVector<Regs> pA(mt);
    for (int64_t m = 0; m < mt; ++m)
      pA[m] = {packedP[m][2 * kk][0], packedP[m][2 * kk][1],
               packedP[m][2 * kk + 1][0], packedP[m][2 * kk + 1][1]};
    for (int64_t p = 0; p < nTilesDv / 2; ++p) {
      Regs vf = s.swizzledTiles()
                    ? ldmatrixSwizzled(b, swizzledTiles, vOffset(stage),
                                       s.blockN, X4::BPairTransposed, lane,
                                       cIdx(b, kk * 16), p * 16, s.elementType)
                    : loadBPairTransposed(b, sV, stage, lane, cIdx(b, p * 16),
                                          cIdx(b, kk * 16), s.elementType);
      for (int64_t m = 0; m < mt; ++m) {
        Value &a0 = acc[m * nTilesDv + 2 * p];
        Value &a1 = acc[m * nTilesDv + 2 * p + 1];
        a0 = mma(b, pA[m], {vf[0], vf[1]}, a0, s.elementType);
        a1 = mma(b, pA[m], {vf[2], vf[3]}, a1, s.elementType);
      }
    }
  }
}

} // namespace

void mlir::flash::buildSm80ForwardKernel(gpu::GPUFuncOp func,
                                         const KernelSpec &spec) {
  Sm80ForwardBuilder(func, spec).build();
}
