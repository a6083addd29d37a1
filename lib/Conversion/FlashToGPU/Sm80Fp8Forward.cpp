//===- Sm80Fp8Forward.cpp - the FP8 (e4m3) forward on mma.sync ------------===//
//
// The FP8 forward for sm_89 (Ada: L4, L40S), where wgmma is absent: the sm80
// recipe's schedule (ForwardBuilder.cpp, Sm80Forward.cpp: cp.async into
// 128-byte-swizzled tiles, one 16-row slab a warp, P kept in registers) on
// mma.sync m16n8k32 e4m3, with docs/FP8.md's semantics as the Hopper kernel
// (Sm90Fp8Forward.cpp):
//
//   S  = Q8 · K8ᵀ                    mma m16n8k32 e4m3, f32 accumulators
//   p  = exp2(S · scale·qd·kd·log2 e − m + 8)      (256 · the softmax's p)
//   P8 = e4m3(p)                     cvt.rn.satfinite, in registers
//   O += P8 · V8                     mma m16n8k32 e4m3, B from Vᵀ
//   O  = v_descale · O / l,  LSE = (m + log2 l − 8) · ln 2
//
// The tiles hold bytes in the 16-bit tiles' geometry: a row of D e4m3
// codes is D / 2 units, so the ldmatrix loads and the swizzle are the
// 16-bit kernel's. An m16n8k32 e4m3 operand register holds 4 codes where
// m16n8k16's holds 2 halves, at the same byte positions: ldmatrix of Q's
// and K's rows gives the A and B operands of a 32-key step as it gives a
// 16-column step's. The B operand of O += P·V wants the keys of one value
// column contiguous: Vᵀ [B][Hkv][Dv][Sk] (docs/KERNEL_ABI.md "FP8
// forwards"), Dv rows of block_n = 128 keys a stage, read by ldmatrix
// without transposition. P's k32 A operands are each thread's own
// accumulator pairs (e4m3ProbabilityOperands, shared with wgmma's register
// operand), Vᵀ's keys being permuted within groups of 32 to match
// (fp8_vt_layout.h).
//
// Vᵀ's key tail: a stage's columns past Sk_pad (Sk rounded up to the key
// group: the last group's keys are spread over all its positions) are
// zero-filled byte-exactly (cp.async's src-size), since P = 0 there would
// still turn a NaN code of the row's padding into a NaN of O.
//
//===----------------------------------------------------------------------===//
#include "Fp8Descales.h"
#include "Fragments.h"
#include "Recipes.h"
#include "Sm80Forward.h"
#include "flashfuse/fp8_vt_layout.h"
#include "Swizzle.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

class Sm80Fp8ForwardBuilder : public Fp8Descales<Sm80ForwardBuilder> {
public:
  using Fp8Descales<Sm80ForwardBuilder>::Fp8Descales;

protected:
  /// 16-bit units of a Q or K row (D codes) and of a Vᵀ row (block_n).
  int64_t qkUnits() const { return s.headDim / 2; }
  int64_t vtUnits() const { return s.blockN / 2; }
  /// Vᵀ's (batch, kv head) base and its row (Dv) stride, in bytes.
  Value vtBase, vtStrideD;
  /// The walk's first key block (previousPosition's floor).
  Value walkStart;

  void readForwardArguments() override {
    readArguments();
    mStart = firstRowOfBlock(gpu::BlockIdOp::create(b, gpu::Dimension::x),
                             gpu::GridDimOp::create(b, gpu::Dimension::x));
    // Q and K are copied through their 16-bit views (isCacheView): bases
    // and row strides in units; the runtime checks the strides are
    // multiples of 16 bytes.
    Value two = cIdx(b, 2);
    qBase = arith::DivUIOp::create(b, operandBase("q", head), two);
    kBase = arith::DivUIOp::create(b, operandBase("k", headKV), two);
    qStrideS = arith::DivUIOp::create(b, idx("q_stride_s"), two);
    kStrideS = arith::DivUIOp::create(b, idx("k_stride_s"), two);
    vtBase = operandBase("vt", headKV);
    vtStrideD = idx("vt_stride_d");
  }

  /// The descales once the key range is known (before build() derives the
  /// score factor from scaleOverride).
  std::pair<Value, Value> blockKeyRange() override {
    auto range = Fp8Descales<Sm80ForwardBuilder>::blockKeyRange();
    walkStart = range.first;
    prepareDescales(range.first, range.second);
    return range;
  }

  /// The FA2 order rescales O at every block, the walk's first included
  /// (O is 0 there): its "previous" block is itself, a ratio of 1.
  Value previousPosition(Value position) override {
    Value after = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                        position, walkStart);
    Value before = arith::SubIOp::create(b, position, cIdx(b, 1));
    return arith::SelectOp::create(b, after, before, position);
  }

  void carveSharedMemory() override {
    // KernelSpec::smemBytes's layout: Q, then the stages' K and Vᵀ tiles.
    qElems = s.blockM * KernelSpec::swizzleWidth(qkUnits());
    kElems = s.blockN * KernelSpec::swizzleWidth(qkUnits());
    vElems = s.headDimV * KernelSpec::swizzleWidth(vtUnits());
    carveSwizzledTiles(qElems + s.stages * (kElems + vElems), b.getBF16Type());
  }

  Value loadQTile() override {
    SmallVector<Value> tokens;
    copySwizzled(arg.lookup("q"), qBase, qStrideS, mStart, seqQ, cIdx(b, 0),
                 s.blockM, qkUnits(), tokens);
    return commitGroup(tokens);
  }

  Value loadKVBlock(Value block, Value stage) override {
    Value rowStart = arith::MulIOp::create(b, block, cIdx(b, s.blockN));
    return commitKVCopies(
        rowStart, [&](RowCheck check, SmallVectorImpl<Value> &tokens) {
          copySwizzled(arg.lookup("k"), kBase, kStrideS, rowStart, seqK,
                       kOffset(stage), s.blockN, qkUnits(), tokens, check);
          copyValuesTransposed(rowStart, stage, check);
        });
  }

  /// Stage `stage`'s Vᵀ tile: Dv rows of the block_n keys from `keyStart`,
  /// 16-byte chunks spread row-major over the block's threads. Where the
  /// block may reach past Sk (`check` not None), a chunk copies only
  /// its positions below Sk_pad (fp8_vt_layout.h) and zero-fills the rest.
  void copyValuesTransposed(Value keyStart, Value stage, RowCheck check) {
    int64_t chunksPerRow = s.blockN / 16;
    int64_t threads = s.threads();
    int64_t rowsPerPass = threads / chunksPerRow;
    assert(threads % chunksPerRow == 0 && s.headDimV % rowsPerPass == 0 &&
           "whole rows per pass");
    Value chunk = arith::RemUIOp::create(b, tid, cIdx(b, chunksPerRow));
    Value row0 = arith::DivUIOp::create(b, tid, cIdx(b, chunksPerRow));
    Value firstKey = arith::AddIOp::create(
        b, keyStart, arith::MulIOp::create(b, chunk, cIdx(b, 16)));
    Value srcBytes;
    if (check != RowCheck::None) {
      // min(max(Sk_pad - firstKey, 0), 16), in signed 32 bits.
      constexpr int64_t group = FLASHFUSE_FP8_VT_KEY_GROUP;
      Value padded = arith::AndIOp::create(
          b, arith::AddIOp::create(b, i32(seqK), cI32(group - 1)),
          cI32(~(group - 1)));
      Value left = arith::SubIOp::create(b, padded, i32(firstKey));
      Value clamped = arith::MaxSIOp::create(b, left, cI32(0));
      srcBytes = arith::MinSIOp::create(b, clamped, cI32(16));
    }
    Value vt = arg.lookup("vt");
    auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
    auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
    Value firstElement = byteAddress(vt, ValueRange{cIdx(b, 0)});
    Value valid;
    if (srcBytes)
      valid = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, srcBytes,
                                    cI32(0));
    for (int64_t pass = 0; pass < s.headDimV / rowsPerPass; ++pass) {
      Value row = arith::AddIOp::create(b, row0, cIdx(b, pass * rowsPerPass));
      Value src = byteAddress(
          vt, ValueRange{arith::AddIOp::create(
                  b, vtBase,
                  arith::AddIOp::create(
                      b, arith::MulIOp::create(b, row, vtStrideD), firstKey))});
      // A chunk wholly past Sk reads nothing: point it at the buffer's
      // first byte, which is mapped.
      if (valid)
        src = arith::SelectOp::create(b, valid, src, firstElement);
      Value dstIndex = arith::AddIOp::create(
          b, vOffset(stage),
          swizzle::offset(b, row, arith::MulIOp::create(b, chunk, cIdx(b, 8)),
                          s.headDimV));
      NVVM::CpAsyncOp::create(
          b, LLVM::IntToPtrOp::create(
                 b, sharedPtr, byteAddress(swizzledTiles, ValueRange{dstIndex})),
          LLVM::IntToPtrOp::create(b, globalPtr, src), b.getI32IntegerAttr(16),
          NVVM::LoadCacheModifierKindAttr::get(b.getContext(),
                                               NVVM::LoadCacheModifierKind::CG),
          srcBytes);
    }
  }

  /// ldmatrix.x4 of the 16 x 16-unit block at (row0, col0) of the tile at
  /// `offset` of `rows` rows.
  Regs loadUnits(Value offset, int64_t rows, X4 pattern, Value row0,
                 int64_t col0) {
    return ldmatrixSwizzled(b, swizzledTiles, offset, rows, pattern, lane,
                            row0, col0, b.getBF16Type());
  }

  Frags loadQOperand(int64_t m, int64_t kk) override {
    Value row = arith::AddIOp::create(b, warpFirstRow(), cIdx(b, 16 * m));
    Regs r = loadUnits(cIdx(b, 0), s.blockM, X4::A, row, 16 * kk);
    return Frags(r.begin(), r.end());
  }

  // Q·Kᵀ: Sm80ForwardBuilder::computeScores over nTilesD steps of 32 keys'
  // D codes (16 units) each, on these operands.
  Regs loadKeyOperands(Value stage, int64_t p, int64_t kk) override {
    return loadUnits(kOffset(stage), s.blockN, X4::BPair, cIdx(b, 16 * p),
                     16 * kk);
  }
  Value mmaStep(ArrayRef<Value> a, ArrayRef<Value> bOp, Value c) override {
    return mmaE4m3(b, a, bOp, c);
  }

  void accumulateOutput(SmallVector<Value> &acc, const PackedP &packedP,
                        Value stage) override {
    // O += P V over 32-key steps: P's k32 A operands from its e4m3 pairs,
    // V's B operands from Vᵀ's rows (value columns) by plain ldmatrix.
    SmallVector<SmallVector<Value>> pA(mt);
    for (int64_t m = 0; m < mt; ++m)
      pA[m] = e4m3ProbabilityOperands(b, packedP[m]);
    for (int64_t kk = 0; kk < s.blockN / 32; ++kk)
      for (int64_t p = 0; p < nTilesDv / 2; ++p) {
        Regs vf = loadUnits(vOffset(stage), s.headDimV, X4::BPair,
                            cIdx(b, 16 * p), 16 * kk);
        for (int64_t m = 0; m < mt; ++m) {
          ArrayRef<Value> a = ArrayRef<Value>(pA[m]).slice(4 * kk, 4);
          Value &a0 = acc[m * nTilesDv + 2 * p];
          Value &a1 = acc[m * nTilesDv + 2 * p + 1];
          a0 = mmaE4m3(b, a, {vf[0], vf[1]}, a0);
          a1 = mmaE4m3(b, a, {vf[2], vf[3]}, a1);
        }
      }
  }
};

} // namespace

void mlir::flash::buildSm80Fp8ForwardKernel(gpu::GPUFuncOp func,
                                            const KernelSpec &spec) {
  Sm80Fp8ForwardBuilder(func, spec).build();
}
