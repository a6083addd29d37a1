//===- Sm80Forward.cpp - the FlashAttention-2 forward kernel --------------===//
//
// One thread block computes block_m query rows of one (batch, head); its
// warps split the rows, 16 * mTilesPerWarp each. Per block:
//   1. cp.async the Q tile into shared memory, then ldmatrix it into
//      registers once (A operands of every Q·Kᵀ mma);
//   2. walk the key blocks the causal/window band allows, K and V tiles
//      streamed through a `stages`-deep cp.async ring;
//   3. S = Q·Kᵀ with mma.sync, score pipeline and masks on the fragments,
//      online softmax in f32 with exp2 and log2(e) folded into the scale;
//   4. P re-packed in registers as the A operand of O += P·V, V read with
//      ldmatrix.trans;
//   5. epilogue: O / l and LSE written straight from the fragments.
// Rows past Sq and keys past Sk are zero-filled by cp.async (src-size 0) and
// masked, so any Sq and Sk work.
//
//===----------------------------------------------------------------------===//
#include "Fragments.h"
#include "Recipes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

SmallVector<Type> mlir::flash::getKernelArgumentTypes(MLIRContext *ctx,
                                                      const KernelSpec &spec) {
  Builder b(ctx);
  auto memref1d = [&](Type t) {
    return MemRefType::get({ShapedType::kDynamic}, t);
  };
  SmallVector<Type> types;
  for (const std::string &p : spec.params()) {
    StringRef kind = StringRef(p).split(':').first;
    StringRef name = StringRef(p).split(':').second;
    if (kind == "memref") {
      Type elt = spec.elementType;
      if (name == "lse" || name == "bias")
        elt = b.getF32Type();
      else if (name == "mask")
        elt = b.getI8Type();
      types.push_back(memref1d(elt));
    } else if (kind == "i32") {
      types.push_back(b.getI32Type());
    } else if (kind == "i64") {
      types.push_back(b.getI64Type());
    } else {
      types.push_back(b.getF32Type());
    }
  }
  return types;
}

namespace {

/// Builds one forward kernel. Loops over fragments are unrolled here, in
/// C++, so every fragment is an SSA value the backend keeps in registers.
class Sm80ForwardBuilder {
public:
  Sm80ForwardBuilder(gpu::GPUFuncOp func, const KernelSpec &spec)
      : func(func), s(spec),
        b(func.getLoc(), OpBuilder::atBlockBegin(&func.getBody().front())) {}

  void build();

private:
  gpu::GPUFuncOp func;
  const KernelSpec &s;
  ImplicitLocOpBuilder b;

  // Arguments.
  llvm::StringMap<Value> arg;
  Value idx(StringRef name) { // an integer argument as index
    return arith::IndexCastOp::create(b, b.getIndexType(), arg.lookup(name));
  }
  Value i32(Value index) {
    return arith::IndexCastOp::create(b, b.getI32Type(), index);
  }

  // Block-invariant values.
  Value tid, lane, warp, g, t;
  Value batchIdx, head, headKV, seqQ, seqK, headsQ;
  Value qBase, kBase, vBase, oBase, qStrideS, kStrideS, vStrideS, oStrideS;
  Value mStart;       // first query row of this block
  Value diagOffset;   // key j is on the diagonal of query i when j == i + off
  Value windowLeft, windowRight; // i32, -1 = unbounded
  Value sQ, sK, sV;   // shared-memory tiles
  int64_t mt = 0, nTilesN = 0, nTilesD = 0, nTilesDv = 0;

  void readArguments();
  void carveSharedMemory();
  /// cp.async `rows` x `cols` elements starting at global row `rowStart` into
  /// `tile[lead..]`; rows at or past `rowLimit` are zero-filled. Appends the
  /// copies' tokens to `tokens`.
  void copyTileAsync(Value gmem, Value base, Value rowStride, Value rowStart,
                     Value rowLimit, Value tile, ValueRange lead, int64_t rows,
                     int64_t cols, SmallVectorImpl<Value> &tokens);
  /// cp.async.commit_group of the copies issued so far.
  Value commitGroup(ArrayRef<Value> tokens);
  Value loadKVBlock(Value block, Value stage);
  std::pair<Value, Value> keyBlockRange();

  using Frags = SmallVector<Value>;
  /// S = Q Kᵀ for one key block: [mt][nTile] accumulators. `qRegs` holds
  /// the A operands of Q, [m * D/16 + kk], or is empty when Q is re-read
  /// from shared memory (KernelSpec::qInRegisters).
  SmallVector<Frags> computeScores(ArrayRef<Frags> qRegs, Value stage);
  /// The A operand of Q for m-tile m and k-step kk, from shared memory.
  Frags loadQOperand(int64_t m, int64_t kk);
  /// Scale, softcap, bias, score_mod and masks, into the log2 domain.
  void applyScorePipeline(SmallVector<Frags> &sc, Value kvStart, bool masked);
  /// Keep-bit of the mask operand and the mask_mod region at (row, col).
  Value operandMaskPredicate(Value row, Value col);
  /// Columns [lo, hi) (relative to colBase) that row `row` may see: the
  /// key-length tail, the causal diagonal and the window.
  struct RowBand {
    Value lo, hi;
  };
  RowBand rowBand(Value row, Value colBase);
  /// No softcap, bias or score_mod: scores stay raw until the exponent,
  /// where scale * log2(e) folds into one FFMA (FlashAttention-2's trick).
  bool isPlainScore() const { return !s.softcap && !s.bias && !s.scoreMod; }
  Value scoreFactor; // scale * log2(e), for plain scores
  /// Offset of element (batch, head, row, col) of the bias or mask operand,
  /// clamped into range so that loads for masked-out elements stay inside.
  Value broadcastOperandOffset(StringRef prefix, Value row, Value col);
  /// Clones a score_mod / mask_mod body with its block arguments bound.
  Value inlineRegion(Region *region, ArrayRef<Value> args);
  Value asIndex(Value v) {
    return arith::IndexCastOp::create(b, b.getIndexType(), v);
  }
  Value rowOf(int64_t m, int64_t i); // query row of fragment row (m, i), i32
};

void Sm80ForwardBuilder::readArguments() {
  for (auto [i, p] : llvm::enumerate(s.params()))
    arg[StringRef(p).split(':').second] = func.getArgument(i);
  tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value c32 = cIdx(b, 32);
  lane = arith::RemUIOp::create(b, tid, c32);
  warp = arith::DivUIOp::create(b, tid, c32);
  g = arith::DivUIOp::create(b, lane, cIdx(b, 4));
  t = arith::RemUIOp::create(b, lane, cIdx(b, 4));

  Value mBlock = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  if (s.causal != KernelSpec::Causal::None) {
    // Causal blocks near the end of the sequence see the most keys: launch
    // them first so that the short ones fill the tail of the grid.
    Value last = arith::SubIOp::create(
        b, gpu::GridDimOp::create(b, gpu::Dimension::x), cIdx(b, 1));
    mBlock = arith::SubIOp::create(b, last, mBlock);
  }
  head = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  batchIdx = gpu::BlockIdOp::create(b, gpu::Dimension::z);
  headsQ = idx("heads_q");
  Value group = arith::DivUIOp::create(b, headsQ, idx("heads_kv"));
  headKV = arith::DivUIOp::create(b, head, group);
  seqQ = idx("seq_q");
  seqK = idx("seq_k");
  mStart = arith::MulIOp::create(b, mBlock, cIdx(b, s.blockM));

  auto base = [&](StringRef t, Value h) {
    Value bOff = arith::MulIOp::create(b, batchIdx, idx((t + "_stride_b").str()));
    Value hOff = arith::MulIOp::create(b, h, idx((t + "_stride_h").str()));
    return Value(arith::AddIOp::create(b, bOff, hOff));
  };
  qBase = base("q", head);
  kBase = base("k", headKV);
  vBase = base("v", headKV);
  oBase = base("o", head);
  qStrideS = idx("q_stride_s");
  kStrideS = idx("k_stride_s");
  vStrideS = idx("v_stride_s");
  oStrideS = idx("o_stride_s");

  diagOffset = s.causal == KernelSpec::Causal::BottomRight
                   ? Value(arith::SubIOp::create(b, seqK, seqQ))
                   : cIdx(b, 0);
  windowLeft = arg.lookup("window_left");
  windowRight = arg.lookup("window_right");
}

void Sm80ForwardBuilder::carveSharedMemory() {
  auto wg = gpu::AddressSpaceAttr::get(b.getContext(),
                                       gpu::AddressSpace::Workgroup);
  auto bytes = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                               MemRefLayoutAttrInterface(), wg);
  Value raw = gpu::DynamicSharedMemoryOp::create(b, bytes);
  auto view = [&](ArrayRef<int64_t> shape, int64_t offset) {
    auto ty = MemRefType::get(shape, s.elementType, MemRefLayoutAttrInterface(), wg);
    return Value(memref::ViewOp::create(b, ty, raw, cIdx(b, offset), ValueRange{}));
  };
  int64_t pad = KernelSpec::kRowPad;
  sQ = view({s.blockM, s.headDim + pad}, 0);
  sK = view({s.stages, s.blockN, s.headDim + pad}, s.qTileBytes());
  sV = view({s.stages, s.blockN, s.headDimV + pad},
            s.qTileBytes() + s.stages * s.kStageBytes());
}

void Sm80ForwardBuilder::copyTileAsync(Value gmem, Value base,
                                       Value rowStride, Value rowStart,
                                       Value rowLimit, Value tile,
                                       ValueRange lead, int64_t rows,
                                       int64_t cols,
                                       SmallVectorImpl<Value> &tokens) {
  // 16-byte chunks, spread over the block's threads row-major so that a warp
  // reads whole rows: coalesced global reads.
  int64_t chunksPerRow = cols / 8, chunks = rows * chunksPerRow;
  int64_t threads = s.threads();
  for (int64_t first = 0; first < chunks; first += threads) {
    Value chunk = arith::AddIOp::create(b, tid, cIdx(b, first));
    Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, chunk,
                                          cIdx(b, chunks));
    chunk = arith::SelectOp::create(b, inRange, chunk, cIdx(b, 0));
    Value r = arith::DivUIOp::create(b, chunk, cIdx(b, chunksPerRow));
    Value c = arith::MulIOp::create(
        b, arith::RemUIOp::create(b, chunk, cIdx(b, chunksPerRow)), cIdx(b, 8));
    // A thread with no chunk left still issues a copy (src-size 0, so it
    // writes 16 zero bytes): aim it at the row padding, which nothing reads.
    c = arith::SelectOp::create(b, inRange, c, cIdx(b, cols));
    Value row = arith::AddIOp::create(b, rowStart, r);
    Value valid = arith::AndIOp::create(
        b, inRange,
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, rowLimit));
    // Out-of-range rows read row 0 (always mapped) with src-size 0: the
    // hardware writes zeros and reads nothing.
    Value srcRow = arith::SelectOp::create(b, valid, row, cIdx(b, 0));
    Value src = arith::AddIOp::create(
        b, base,
        arith::AddIOp::create(b, arith::MulIOp::create(b, srcRow, rowStride), c));
    Value srcElems = arith::SelectOp::create(b, valid, cIdx(b, 8), cIdx(b, 0));
    SmallVector<Value> dstIdx(lead.begin(), lead.end());
    dstIdx.push_back(r);
    dstIdx.push_back(c);
    auto tokTy = nvgpu::DeviceAsyncTokenType::get(b.getContext());
    Value tok = nvgpu::DeviceAsyncCopyOp::create(
        b, tokTy, tile, dstIdx, gmem, ValueRange{src}, b.getIndexAttr(8),
        srcElems, /*bypassL1=*/b.getUnitAttr());
    tokens.push_back(tok);
  }
}

Value Sm80ForwardBuilder::commitGroup(ArrayRef<Value> tokens) {
  auto tokTy = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  return nvgpu::DeviceAsyncCreateGroupOp::create(b, tokTy, tokens);
}

Value Sm80ForwardBuilder::loadKVBlock(Value block, Value stage) {
  Value rowStart = arith::MulIOp::create(b, block, cIdx(b, s.blockN));
  // K and V of one block form one commit group: the wait before the block is
  // used covers both, and the group count per block stays one, which the
  // wait depths below rely on.
  SmallVector<Value> tokens;
  copyTileAsync(arg.lookup("k"), kBase, kStrideS, rowStart, seqK, sK, stage,
                s.blockN, s.headDim, tokens);
  copyTileAsync(arg.lookup("v"), vBase, vStrideS, rowStart, seqK, sV, stage,
                s.blockN, s.headDimV, tokens);
  return commitGroup(tokens);
}

std::pair<Value, Value> Sm80ForwardBuilder::keyBlockRange() {
  // Keys any row of [mStart, mStart + block_m) may see: [lo, hi).
  Value zero = cIdx(b, 0);
  Value hi = seqK;
  Value rowEnd = arith::AddIOp::create(b, mStart, cIdx(b, s.blockM));
  Value diagEnd = arith::AddIOp::create(b, rowEnd, diagOffset); // exclusive
  if (s.causal != KernelSpec::Causal::None)
    hi = arith::MinSIOp::create(b, hi, diagEnd);
  Value lo = zero;
  if (s.window) {
    Value wr = arith::IndexCastOp::create(b, b.getIndexType(), windowRight);
    Value wl = arith::IndexCastOp::create(b, b.getIndexType(), windowLeft);
    Value wrBound = arith::AddIOp::create(b, diagEnd, wr);
    Value hasRight = arith::CmpIOp::create(b, arith::CmpIPredicate::sge, wr, zero);
    hi = arith::SelectOp::create(b, hasRight,
                                 arith::MinSIOp::create(b, hi, wrBound), hi);
    Value loBound = arith::SubIOp::create(
        b, arith::AddIOp::create(b, mStart, diagOffset), wl);
    Value hasLeft = arith::CmpIOp::create(b, arith::CmpIPredicate::sge, wl, zero);
    lo = arith::SelectOp::create(b, hasLeft,
                                 arith::MaxSIOp::create(b, loBound, zero), zero);
  }
  hi = arith::MaxSIOp::create(b, hi, zero);
  Value bn = cIdx(b, s.blockN);
  Value nEnd = arith::CeilDivUIOp::create(b, hi, bn);
  Value nStart = arith::DivUIOp::create(b, lo, bn);
  nStart = arith::MinUIOp::create(b, nStart, nEnd);
  return {nStart, nEnd};
}

SmallVector<Sm80ForwardBuilder::Frags>
Sm80ForwardBuilder::computeScores(ArrayRef<Frags> qRegs, Value stage) {
  SmallVector<Frags> sc(mt, Frags(nTilesN, accZero(b)));
  // Lane l addresses key row 16p + 8(l/16) + l%8 and column 16kk + 8((l/8)%2):
  // the four 8x8 matrices are (keys 0-7 | 8-15) x (d 0-7 | 8-15), i.e. the
  // B operands of two adjacent 8-key tiles.
  Value rowInPair = arith::AddIOp::create(
      b, arith::MulIOp::create(b, arith::DivUIOp::create(b, lane, cIdx(b, 16)),
                               cIdx(b, 8)),
      arith::RemUIOp::create(b, lane, cIdx(b, 8)));
  Value colHalf = arith::MulIOp::create(
      b,
      arith::RemUIOp::create(b, arith::DivUIOp::create(b, lane, cIdx(b, 8)),
                             cIdx(b, 2)),
      cIdx(b, 8));
  for (int64_t kk = 0; kk < nTilesD; ++kk) {
    SmallVector<Frags> qa(mt);
    for (int64_t m = 0; m < mt; ++m)
      qa[m] = qRegs.empty() ? loadQOperand(m, kk) : qRegs[m * nTilesD + kk];
    Value col = arith::AddIOp::create(b, colHalf, cIdx(b, kk * 16));
    for (int64_t p = 0; p < nTilesN / 2; ++p) {
      Value row = arith::AddIOp::create(b, rowInPair, cIdx(b, p * 16));
      Regs kf = ldmatrixX4(b, sK, stage, row, col, s.elementType,
                           /*transpose=*/false);
      for (int64_t m = 0; m < mt; ++m) {
        sc[m][2 * p] = mma(b, qa[m], {kf[0], kf[1]}, sc[m][2 * p], s.elementType);
        sc[m][2 * p + 1] =
            mma(b, qa[m], {kf[2], kf[3]}, sc[m][2 * p + 1], s.elementType);
      }
    }
  }
  return sc;
}

Sm80ForwardBuilder::Frags Sm80ForwardBuilder::loadQOperand(int64_t m,
                                                           int64_t kk) {
  // Lane l addresses row 16m + l%16 of its warp's rows and column
  // 16kk + 8(l/16): matrices (rows 0-7 | 8-15) x (d 0-7 | 8-15) in A order.
  Value warpRow = arith::MulIOp::create(b, warp, cIdx(b, 16 * mt));
  Value row = arith::AddIOp::create(
      b, warpRow,
      arith::AddIOp::create(b, arith::RemUIOp::create(b, lane, cIdx(b, 16)),
                            cIdx(b, 16 * m)));
  Value col = arith::AddIOp::create(
      b, arith::MulIOp::create(b, arith::DivUIOp::create(b, lane, cIdx(b, 16)),
                               cIdx(b, 8)),
      cIdx(b, 16 * kk));
  Regs r = ldmatrixX4(b, sQ, ValueRange{}, row, col, s.elementType,
                      /*transpose=*/false);
  return Frags(r.begin(), r.end());
}

Value Sm80ForwardBuilder::rowOf(int64_t m, int64_t i) {
  // mStart + warp * 16 * mt + 16 m + g + 8 i
  Value r = arith::AddIOp::create(
      b, arith::AddIOp::create(b, mStart,
                               arith::MulIOp::create(b, warp, cIdx(b, 16 * mt))),
      arith::AddIOp::create(b, g, cIdx(b, 16 * m + 8 * i)));
  return i32(r);
}

Value Sm80ForwardBuilder::broadcastOperandOffset(StringRef prefix, Value row,
                                                 Value col) {
  Type i32Ty = b.getI32Type();
  Value one = arith::ConstantIntOp::create(b, i32Ty, 1);
  Value r = arith::MinSIOp::create(b, row, arith::SubIOp::create(b, i32(seqQ), one));
  Value c = arith::MinSIOp::create(b, col, arith::SubIOp::create(b, i32(seqK), one));
  auto term = [&](Value x, StringRef dim) {
    return Value(arith::MulIOp::create(b, x, idx((prefix + "_stride_" + dim).str())));
  };
  Value off = arith::AddIOp::create(b, term(batchIdx, "b"), term(head, "h"));
  off = arith::AddIOp::create(b, off, term(asIndex(r), "q"));
  return arith::AddIOp::create(b, off, term(asIndex(c), "k"));
}

Value Sm80ForwardBuilder::inlineRegion(Region *region, ArrayRef<Value> args) {
  IRMapping map;
  Block &body = region->front();
  for (auto [blockArg, v] : llvm::zip(body.getArguments(), args))
    map.map(blockArg, v);
  for (Operation &op : body.without_terminator())
    b.clone(op, map);
  return map.lookup(body.getTerminator()->getOperand(0));
}

Value Sm80ForwardBuilder::operandMaskPredicate(Value row, Value col) {
  Value ok = arith::ConstantIntOp::create(b, b.getI1Type(), 1);
  if (s.mask) {
    Value m = memref::LoadOp::create(
        b, arg.lookup("mask"), ValueRange{broadcastOperandOffset("mask", row, col)});
    ok = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, m,
                               arith::ConstantIntOp::create(b, b.getI8Type(), 0));
  }
  if (s.maskMod)
    ok = arith::AndIOp::create(
        b, ok,
        inlineRegion(s.maskMod, {batchIdx, head, asIndex(row), asIndex(col)}));
  return ok;
}

Sm80ForwardBuilder::RowBand
Sm80ForwardBuilder::rowBand(Value row, Value colBase) {
  // Element (row, colBase + c) is inside the band iff lo <= c < hi, with the
  // bounds per row; c = 8n + j is a compile-time constant per fragment
  // element, so the per-element test is two compares against immediates.
  Type i32Ty = b.getI32Type();
  auto ci = [&](int64_t v) {
    return Value(arith::ConstantIntOp::create(b, i32Ty, v));
  };
  Value hi = arith::SubIOp::create(b, i32(seqK), colBase);
  Value lo = ci(0);
  Value diag = arith::SubIOp::create(
      b, arith::AddIOp::create(b, row, i32(diagOffset)), colBase);
  Value one = ci(1);
  if (s.causal != KernelSpec::Causal::None)
    hi = arith::MinSIOp::create(b, hi, arith::AddIOp::create(b, diag, one));
  if (s.window) {
    Value zero = ci(0);
    Value hasRight =
        arith::CmpIOp::create(b, arith::CmpIPredicate::sge, windowRight, zero);
    Value rightHi = arith::AddIOp::create(
        b, arith::AddIOp::create(b, diag, windowRight), one);
    hi = arith::SelectOp::create(b, hasRight,
                                 arith::MinSIOp::create(b, hi, rightHi), hi);
    Value hasLeft =
        arith::CmpIOp::create(b, arith::CmpIPredicate::sge, windowLeft, zero);
    lo = arith::SelectOp::create(b, hasLeft,
                                 arith::SubIOp::create(b, diag, windowLeft), lo);
  }
  return {lo, hi};
}

void Sm80ForwardBuilder::applyScorePipeline(SmallVector<Frags> &sc,
                                            Value kvStart, bool masked) {
  const float log2e = float(M_LOG2E);
  Value scale = arg.lookup("scale");
  bool plain = isPlainScore();
  bool needsCoords = !plain || s.mask || s.maskMod;
  Value negInf = cF32(b, -INFINITY);
  Type i32Ty = b.getI32Type();
  // Column of fragment element (n, j) = colBase + 8n + j.
  Value colBase = arith::AddIOp::create(
      b, i32(kvStart), i32(arith::MulIOp::create(b, t, cIdx(b, 2))));
  for (int64_t m = 0; m < mt; ++m)
    for (int64_t i = 0; i < 2; ++i) {
      Value row = rowOf(m, i);
      RowBand band;
      if (masked)
        band = rowBand(row, colBase);
      for (int64_t n = 0; n < nTilesN; ++n)
        for (int64_t j = 0; j < 2; ++j) {
          Value v = accGet(b, sc[m][n], i, j);
          Value c = arith::ConstantIntOp::create(b, i32Ty, 8 * n + j);
          Value col;
          if (needsCoords)
            col = arith::AddIOp::create(b, colBase, c);
          if (!plain) {
            v = arith::MulFOp::create(b, v, scale);
            if (s.softcap) {
              Value cap = arg.lookup("softcap");
              v = arith::MulFOp::create(
                  b, cap, tanhApprox(b, arith::DivFOp::create(b, v, cap)));
            }
            if (s.bias)
              v = arith::AddFOp::create(
                  b, v,
                  memref::LoadOp::create(
                      b, arg.lookup("bias"),
                      ValueRange{broadcastOperandOffset("bias", row, col)}));
            if (s.scoreMod)
              v = inlineRegion(s.scoreMod, {v, batchIdx, head, asIndex(row),
                                            asIndex(col)});
            v = arith::MulFOp::create(b, v, cF32(b, log2e));
          }
          if (masked) {
            Value keep = arith::AndIOp::create(
                b, arith::CmpIOp::create(b, arith::CmpIPredicate::sle, band.lo, c),
                arith::CmpIOp::create(b, arith::CmpIPredicate::slt, c, band.hi));
            if (s.mask || s.maskMod)
              keep = arith::AndIOp::create(b, keep, operandMaskPredicate(row, col));
            v = arith::SelectOp::create(b, keep, v, negInf);
          }
          sc[m][n] = accSet(b, sc[m][n], v, i, j);
        }
    }
}

void Sm80ForwardBuilder::build() {
  mt = s.mTilesPerWarp();
  nTilesN = s.blockN / 8;
  nTilesD = s.headDim / 16;
  nTilesDv = s.headDimV / 8;
  readArguments();
  carveSharedMemory();
  auto [nStart, nEnd] = keyBlockRange();
  scoreFactor = arith::MulFOp::create(b, arg.lookup("scale"),
                                      cF32(b, float(M_LOG2E)));

  // Prologue: Q and the first stages-1 key blocks in flight. Out-of-range
  // blocks are fetched as zeros (src-size 0), keeping the group count
  // uniform so that the waits below need no branches.
  SmallVector<Value> qTokens;
  copyTileAsync(arg.lookup("q"), qBase, qStrideS, mStart, seqQ, sQ,
                ValueRange{}, s.blockM, s.headDim, qTokens);
  Value lastGroup = commitGroup(qTokens);
  for (int64_t st = 0; st + 1 < s.stages; ++st)
    lastGroup = loadKVBlock(arith::AddIOp::create(b, nStart, cIdx(b, st)),
                            cIdx(b, st));
  nvgpu::DeviceAsyncWaitOp::create(b, lastGroup,
                                   b.getI32IntegerAttr(std::max<int64_t>(s.stages - 2, 0)));
  gpu::BarrierOp::create(b);

  // Q's A operands live in registers for the whole key loop when they fit;
  // otherwise they are re-read from shared memory at every k-step.
  SmallVector<Frags> qOps; // [m * D/16 + kk]
  if (s.qInRegisters())
    for (int64_t m = 0; m < mt; ++m)
      for (int64_t kk = 0; kk < nTilesD; ++kk)
        qOps.push_back(loadQOperand(m, kk));

  // Loop-carried state: O accumulators [mt][Dv/8], row max m and partial row
  // sum l for rows g and g+8 of each m-tile (log2 domain).
  SmallVector<Value> init;
  for (int64_t m = 0; m < mt; ++m)
    for (int64_t n = 0; n < nTilesDv; ++n)
      init.push_back(accZero(b));
  for (int64_t k = 0; k < 2 * mt; ++k)
    init.push_back(cF32(b, -INFINITY));
  for (int64_t k = 0; k < 2 * mt; ++k)
    init.push_back(cF32(b, 0.0f));

  auto loop = scf::ForOp::create(b, nStart, nEnd, cIdx(b, 1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    auto iter = loop.getRegionIterArgs();
    SmallVector<Value> acc(iter.begin(), iter.begin() + mt * nTilesDv);
    SmallVector<Value> rowMax(iter.begin() + mt * nTilesDv,
                              iter.begin() + mt * nTilesDv + 2 * mt);
    SmallVector<Value> rowSum(iter.begin() + mt * nTilesDv + 2 * mt, iter.end());

    Value rel = arith::SubIOp::create(b, j, nStart);
    Value stage = arith::RemUIOp::create(b, rel, cIdx(b, s.stages));
    Value pfBlock = arith::AddIOp::create(b, j, cIdx(b, s.stages - 1));
    Value pfStage = arith::RemUIOp::create(
        b, arith::AddIOp::create(b, rel, cIdx(b, s.stages - 1)), cIdx(b, s.stages));
    Value group = loadKVBlock(pfBlock, pfStage);
    nvgpu::DeviceAsyncWaitOp::create(b, group, b.getI32IntegerAttr(s.stages - 1));
    gpu::BarrierOp::create(b);

    SmallVector<Frags> sc = computeScores(qOps, stage);

    // Masks only where the block can contain masked elements: the tail of
    // Sk, the causal diagonal, window edges, or a mask operand/region.
    Value kvStart = arith::MulIOp::create(b, j, cIdx(b, s.blockN));
    Value kvEnd = arith::AddIOp::create(b, kvStart, cIdx(b, s.blockN));
    Value needMask = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, kvEnd, seqK);
    if (s.causal != KernelSpec::Causal::None || s.window) {
      // Some element is past the diagonal of the block's first row.
      Value firstDiag = arith::AddIOp::create(b, mStart, diagOffset);
      needMask = arith::OrIOp::create(
          b, needMask,
          arith::CmpIOp::create(b, arith::CmpIPredicate::sgt,
                                arith::SubIOp::create(b, kvEnd, cIdx(b, 1)),
                                firstDiag));
    }
    if (s.window || s.mask || s.maskMod)
      needMask = arith::ConstantIntOp::create(b, b.getI1Type(), 1);
    SmallVector<Type> fragTypes(mt * nTilesN, sc[0][0].getType());
    auto ifOp = scf::IfOp::create(b, fragTypes, needMask, /*withElse=*/true);
    for (bool masked : {true, false}) {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(masked ? &ifOp.getThenRegion().front()
                                        : &ifOp.getElseRegion().front());
      SmallVector<Frags> copy = sc;
      applyScorePipeline(copy, kvStart, masked);
      SmallVector<Value> flat;
      for (auto &row : copy)
        flat.append(row.begin(), row.end());
      scf::YieldOp::create(b, flat);
    }
    for (int64_t m = 0; m < mt; ++m)
      for (int64_t n = 0; n < nTilesN; ++n)
        sc[m][n] = ifOp.getResult(m * nTilesN + n);

    // Online softmax, per fragment row (m, i). Each probability pair is
    // packed to 16 bits as soon as it exists ([m][n][i], one register), so
    // the f32 scores die early: that is what keeps D = 128 with two m-tiles
    // under 255 registers.
    SmallVector<Value> newMax(2 * mt), newSum(2 * mt);
    SmallVector<SmallVector<std::array<Value, 2>>> packedP(
        mt, SmallVector<std::array<Value, 2>>(nTilesN));
    SmallVector<SmallVector<Value>> alpha(mt, SmallVector<Value>(2));
    Value negInf = cF32(b, -INFINITY);
    for (int64_t m = 0; m < mt; ++m)
      for (int64_t i = 0; i < 2; ++i) {
        Value mx = rowMax[2 * m + i];
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
        // A row with every key masked so far keeps m = -inf; subtract 0
        // instead so that exp2 sees -inf - 0 = -inf, not NaN.
        Value isNegInf = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mNew, negInf);
        Value mUse = arith::SelectOp::create(b, isNegInf, cF32(b, 0.0f), mNew);
        alpha[m][i] = exp2Approx(b, arith::SubFOp::create(b, mx, mUse));
        Value negMUse = arith::NegFOp::create(b, mUse);
        Value sum = cF32(b, 0.0f);
        for (int64_t n = 0; n < nTilesN; ++n) {
          Value pair[2];
          for (int64_t jj = 0; jj < 2; ++jj) {
            Value x = accGet(b, sc[m][n], i, jj);
            pair[jj] = exp2Approx(
                b, isPlainScore()
                       ? Value(LLVM::FMAOp::create(b, x, scoreFactor, negMUse))
                       : Value(arith::SubFOp::create(b, x, mUse)));
            sum = arith::AddFOp::create(b, sum, pair[jj]);
          }
          packedP[m][n][i] = packPair(b, pair[0], pair[1], s.elementType);
        }
        newMax[2 * m + i] = mNew;
        newSum[2 * m + i] = arith::AddFOp::create(
            b, arith::MulFOp::create(b, rowSum[2 * m + i], alpha[m][i]), sum);
      }
    // Rescale the accumulators.
    for (int64_t m = 0; m < mt; ++m)
      for (int64_t n = 0; n < nTilesDv; ++n) {
        Value a = acc[m * nTilesDv + n];
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t jj = 0; jj < 2; ++jj)
            a = accSet(b, a, arith::MulFOp::create(b, accGet(b, a, i, jj), alpha[m][i]), i, jj);
        acc[m * nTilesDv + n] = a;
      }
    // O += P V. P's accumulators of key tiles 2kk, 2kk+1 form the A operand;
    // V's ldmatrix.trans lane l addresses key row 16kk + 8((l/8)%2) + l%8 and
    // column 16p + 8(l/16): matrices (keys 0-7 | 8-15) x (dv 0-7), then the
    // same for dv 8-15, i.e. the B operands of two adjacent 8-column tiles.
    Value vRowInPair = arith::AddIOp::create(
        b,
        arith::MulIOp::create(
            b, arith::RemUIOp::create(b, arith::DivUIOp::create(b, lane, cIdx(b, 8)), cIdx(b, 2)),
            cIdx(b, 8)),
        arith::RemUIOp::create(b, lane, cIdx(b, 8)));
    Value vColHalf = arith::MulIOp::create(
        b, arith::DivUIOp::create(b, lane, cIdx(b, 16)), cIdx(b, 8));
    for (int64_t kk = 0; kk < s.blockN / 16; ++kk) {
      SmallVector<Frags> pA(mt);
      for (int64_t m = 0; m < mt; ++m)
        pA[m] = {packedP[m][2 * kk][0], packedP[m][2 * kk][1],
                 packedP[m][2 * kk + 1][0], packedP[m][2 * kk + 1][1]};
      Value row = arith::AddIOp::create(b, vRowInPair, cIdx(b, kk * 16));
      for (int64_t p = 0; p < nTilesDv / 2; ++p) {
        Value col = arith::AddIOp::create(b, vColHalf, cIdx(b, p * 16));
        Regs vf = ldmatrixX4(b, sV, stage, row, col, s.elementType, /*transpose=*/true);
        for (int64_t m = 0; m < mt; ++m) {
          Value &a0 = acc[m * nTilesDv + 2 * p];
          Value &a1 = acc[m * nTilesDv + 2 * p + 1];
          a0 = mma(b, pA[m], {vf[0], vf[1]}, a0, s.elementType);
          a1 = mma(b, pA[m], {vf[2], vf[3]}, a1, s.elementType);
        }
      }
    }
    // The next iteration's prefetch overwrites the stage read here.
    gpu::BarrierOp::create(b);
    SmallVector<Value> yields = acc;
    yields.append(newMax.begin(), newMax.end());
    yields.append(newSum.begin(), newSum.end());
    scf::YieldOp::create(b, yields);
  }

  // Epilogue: O = acc / l, LSE = (m + log2 l) ln 2; l == 0 (every key
  // masked) gives O = 0 and LSE = +inf.
  auto results = loop.getResults();
  Value lse = arg.lookup("lse"), out = arg.lookup("o");
  Value lseRowBase = arith::MulIOp::create(
      b, arith::AddIOp::create(b, arith::MulIOp::create(b, batchIdx, headsQ), head),
      seqQ);
  Value isLeader = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, t, cIdx(b, 0));
  for (int64_t m = 0; m < mt; ++m)
    for (int64_t i = 0; i < 2; ++i) {
      Value l = quadReduceSum(b, results[mt * nTilesDv + 2 * mt + 2 * m + i]);
      Value mx = results[mt * nTilesDv + 2 * m + i];
      Value positive = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, l, cF32(b, 0.0f));
      Value inv = arith::SelectOp::create(
          b, positive, arith::DivFOp::create(b, cF32(b, 1.0f), l), cF32(b, 0.0f));
      Value lseVal = arith::SelectOp::create(
          b, positive,
          arith::MulFOp::create(b, arith::AddFOp::create(b, mx, log2Approx(b, l)),
                                cF32(b, float(M_LN2))),
          cF32(b, INFINITY));
      Value row = arith::IndexCastOp::create(b, b.getIndexType(), rowOf(m, i));
      Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, seqQ);
      auto ifRow = scf::IfOp::create(b, TypeRange{}, inRange, /*withElse=*/false);
      OpBuilder::InsertionGuard g3(b);
      b.setInsertionPointToStart(&ifRow.getThenRegion().front());
      Value oRow = arith::AddIOp::create(b, oBase, arith::MulIOp::create(b, row, oStrideS));
      auto pairTy = VectorType::get({2}, s.elementType);
      auto f32x2 = VectorType::get({2}, b.getF32Type());
      for (int64_t n = 0; n < nTilesDv; ++n) {
        Value a = results[m * nTilesDv + n];
        Value v = vector::FromElementsOp::create(
            b, f32x2,
            ValueRange{arith::MulFOp::create(b, accGet(b, a, i, 0), inv),
                       arith::MulFOp::create(b, accGet(b, a, i, 1), inv)});
        Value h = arith::TruncFOp::create(b, pairTy, v);
        Value col = arith::AddIOp::create(b, arith::MulIOp::create(b, t, cIdx(b, 2)),
                                          cIdx(b, 8 * n));
        vector::StoreOp::create(b, h, out, ValueRange{arith::AddIOp::create(b, oRow, col)});
      }
      auto ifLead = scf::IfOp::create(b, TypeRange{}, isLeader, false);
      b.setInsertionPointToStart(&ifLead.getThenRegion().front());
      memref::StoreOp::create(b, lseVal, lse,
                              ValueRange{arith::AddIOp::create(b, lseRowBase, row)});
    }
  gpu::ReturnOp::create(b);
}

} // namespace

void mlir::flash::buildSm80ForwardKernel(gpu::GPUFuncOp func,
                                         const KernelSpec &spec) {
  Sm80ForwardBuilder(func, spec).build();
}
