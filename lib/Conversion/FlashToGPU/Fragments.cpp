//===- Fragments.cpp - mma.sync fragments, ldmatrix, quad reductions ------===//
#include "Fragments.h"
#include "Swizzle.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::flash;

Value frag::cIdx(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

Value frag::cF32(ImplicitLocOpBuilder &b, float v) {
  return arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(v));
}

/// The four 8x8 matrices of an ldmatrix.x4 result (vector<4x2xhalf>) as
/// i32 registers: ldmatrix is type-agnostic, each 2 x 16-bit row is one
/// register.
static frag::Regs asI32Registers(ImplicitLocOpBuilder &b, Value m) {
  auto i32x1 = VectorType::get({4, 1}, b.getI32Type());
  Value asI32 = vector::BitCastOp::create(b, i32x1, m);
  frag::Regs regs;
  for (int64_t i = 0; i < 4; ++i)
    regs.push_back(vector::ExtractOp::create(b, asI32, ArrayRef<int64_t>{i, 0}));
  return regs;
}

frag::Regs frag::ldmatrixX4(ImplicitLocOpBuilder &b, Value smem,
                            ValueRange leadingIdx, Value row, Value col,
                            Type elementType, bool transpose) {
  SmallVector<Value> idx(leadingIdx.begin(), leadingIdx.end());
  idx.push_back(row);
  idx.push_back(col);
  auto vecTy = VectorType::get({4, 2}, elementType);
  Value m = nvgpu::LdMatrixOp::create(b, vecTy, smem, idx, transpose,
                                      /*numTiles=*/4u);
  return asI32Registers(b, m);
}

// Lane l feeds the row address of matrix l / 8 of the x4 load. The four
// matrices of an A operand are (rows 0-7 | 8-15) x (k 0-7), then x (k 8-15);
// of a B pair, (k 0-7 | 8-15) of tile n0, then of tile n0 + 8.
static Value laneDiv(ImplicitLocOpBuilder &b, Value lane, int64_t d) {
  return arith::DivUIOp::create(b, lane, frag::cIdx(b, d));
}
static Value laneRem(ImplicitLocOpBuilder &b, Value lane, int64_t d) {
  return arith::RemUIOp::create(b, lane, frag::cIdx(b, d));
}
/// `lanePart + offset`, in that order: the lane-dependent part is computed
/// once per kernel and the tile offset (a constant in the unrolled loops)
/// added last, so that LLVM folds offset * row pitch into the ldmatrix
/// address as an immediate instead of keeping one address register per
/// tile (which cost D = 128 registers and spills).
static Value plusOffset(ImplicitLocOpBuilder &b, Value lanePart, Value offset) {
  return arith::AddIOp::create(b, lanePart, offset);
}
static Value times8(ImplicitLocOpBuilder &b, Value x) {
  return arith::MulIOp::create(b, x, frag::cIdx(b, 8));
}

/// The stored row (0-15) and 8-column chunk (0 or 1) of the 16 x 16 block
/// that lane l addresses in `pattern`.
static std::pair<Value, Value> laneRowChunk(ImplicitLocOpBuilder &b,
                                            Value lane, frag::X4 pattern) {
  using frag::X4;
  Value half = arith::RemUIOp::create(b, laneDiv(b, lane, 8), frag::cIdx(b, 2));
  switch (pattern) {
  case X4::A: // row l % 16, chunk l / 16
    return {laneRem(b, lane, 16), laneDiv(b, lane, 16)};
  case X4::ATransposed:
    // Matrix i is stored block (k half i / 2, m half i % 2), transposed.
  case X4::BPair:
    // Matrices: (k 0-7 | 8-15) of tile n0, then of tile n0 + 8.
    // Row 8 (l / 16) + l % 8, chunk (l / 8) % 2.
    return {arith::AddIOp::create(b, times8(b, laneDiv(b, lane, 16)),
                                  laneRem(b, lane, 8)),
            half};
  case X4::BPairTransposed: // row 8 ((l / 8) % 2) + l % 8, chunk l / 16
    return {arith::AddIOp::create(b, times8(b, half), laneRem(b, lane, 8)),
            laneDiv(b, lane, 16)};
  }
  llvm_unreachable("unknown ldmatrix pattern");
}

static bool isTransposed(frag::X4 pattern) {
  return pattern == frag::X4::ATransposed ||
         pattern == frag::X4::BPairTransposed;
}

frag::Regs frag::ldmatrixPadded(ImplicitLocOpBuilder &b, Value smem,
                                ValueRange lead, Value lane, X4 pattern,
                                Value row0, Value col0, Type elementType) {
  auto [row, chunk] = laneRowChunk(b, lane, pattern);
  return frag::ldmatrixX4(b, smem, lead, plusOffset(b, row, row0),
                          plusOffset(b, times8(b, chunk), col0), elementType,
                          isTransposed(pattern));
}

frag::Regs frag::loadA(ImplicitLocOpBuilder &b, Value smem, ValueRange lead,
                       Value lane, Value m0, Value k0, Type elementType) {
  return ldmatrixPadded(b, smem, lead, lane, X4::A, m0, k0, elementType);
}

frag::Regs frag::loadATransposed(ImplicitLocOpBuilder &b, Value smem,
                                 ValueRange lead, Value lane, Value m0,
                                 Value k0, Type elementType) {
  return ldmatrixPadded(b, smem, lead, lane, X4::ATransposed, k0, m0, elementType);
}

frag::Regs frag::loadBPair(ImplicitLocOpBuilder &b, Value smem, ValueRange lead,
                           Value lane, Value n0, Value k0, Type elementType) {
  return ldmatrixPadded(b, smem, lead, lane, X4::BPair, n0, k0, elementType);
}

frag::Regs frag::loadBPairTransposed(ImplicitLocOpBuilder &b, Value smem,
                                     ValueRange lead, Value lane, Value n0,
                                     Value k0, Type elementType) {
  return ldmatrixPadded(b, smem, lead, lane, X4::BPairTransposed, k0, n0,
                    elementType);
}

frag::Regs frag::ldmatrixSwizzled(ImplicitLocOpBuilder &b, Value tiles,
                                  Value tileOffset, int64_t rows, X4 pattern,
                                  Value lane, Value row0, int64_t col0,
                                  Type elementType) {
  assert(col0 % 16 == 0 && "blocks start at even chunks");
  using swizzle::kRowElements;
  // Lane offset of the block at (0, 0): row r, chunk c at c ^ (r % 8). As
  // row0 % 8 == 0 and col0's chunk (col0 % 64) / 8 is even, the block at
  // (row0, col0) moves the row by row0 and flips the swizzled chunk's bits
  // 1-2 by that chunk: offset bits 4-5, which the lane offset's row part
  // (bits >= 6) and chunk bit 0 (bit 3) leave alone.
  auto [row, chunk] = laneRowChunk(b, lane, pattern);
  Value swizzledChunk = arith::XOrIOp::create(
      b, chunk, arith::RemUIOp::create(b, row, cIdx(b, 8)));
  Value laneOffset = arith::AddIOp::create(
      b, arith::MulIOp::create(b, row, cIdx(b, kRowElements)),
      times8(b, swizzledChunk));
  // The xor goes on tileOffset + laneOffset (tile offsets are multiples of
  // 512 elements, 1024 bytes): where the tile offset changes with the
  // pipeline stage, the four xor'd addresses are then per-iteration values
  // instead of four registers hoisted across the whole key loop.
  Value inBlock = arith::XOrIOp::create(
      b, arith::AddIOp::create(b, tileOffset, laneOffset),
      cIdx(b, col0 % kRowElements));
  Value blockStart = arith::AddIOp::create(
      b, arith::MulIOp::create(b, row0, cIdx(b, kRowElements)),
      cIdx(b, col0 / kRowElements * rows * kRowElements));
  auto vecTy = VectorType::get({4, 2}, elementType);
  Value m = nvgpu::LdMatrixOp::create(b, vecTy, tiles,
                                      ValueRange{arith::AddIOp::create(
                                          b, inBlock, blockStart)},
                                      isTransposed(pattern), /*numTiles=*/4u);
  return asI32Registers(b, m);
}

frag::Regs frag::accPairToA(ImplicitLocOpBuilder &b, Value c0, Value c1,
                            Type elementType) {
  return {packPair(b, accGet(b, c0, 0, 0), accGet(b, c0, 0, 1), elementType),
          packPair(b, accGet(b, c0, 1, 0), accGet(b, c0, 1, 1), elementType),
          packPair(b, accGet(b, c1, 0, 0), accGet(b, c1, 0, 1), elementType),
          packPair(b, accGet(b, c1, 1, 0), accGet(b, c1, 1, 1), elementType)};
}

SmallVector<SmallVector<Value>>
frag::warpProductNT(ImplicitLocOpBuilder &b, Value lane, Value aTile,
                    Value aRow0, Value bTile, ValueRange bLead, int64_t mTiles,
                    int64_t nTiles, int64_t depth, Type elementType) {
  SmallVector<SmallVector<Value>> acc(mTiles,
                                      SmallVector<Value>(nTiles, accZero(b)));
  for (int64_t kk = 0; kk < depth / 16; ++kk) {
    SmallVector<Regs> a(mTiles);
    for (int64_t m = 0; m < mTiles; ++m)
      a[m] = loadA(b, aTile, ValueRange{}, lane,
                   arith::AddIOp::create(b, aRow0, cIdx(b, 16 * m)),
                   cIdx(b, 16 * kk), elementType);
    for (int64_t p = 0; p < nTiles / 2; ++p) {
      Regs bf = loadBPair(b, bTile, bLead, lane, cIdx(b, 16 * p),
                          cIdx(b, 16 * kk), elementType);
      for (int64_t m = 0; m < mTiles; ++m) {
        acc[m][2 * p] = mma(b, a[m], {bf[0], bf[1]}, acc[m][2 * p], elementType);
        acc[m][2 * p + 1] =
            mma(b, a[m], {bf[2], bf[3]}, acc[m][2 * p + 1], elementType);
      }
    }
  }
  return acc;
}

Value frag::mma(ImplicitLocOpBuilder &b, ArrayRef<Value> a, ArrayRef<Value> bOp,
                Value c, Type elementType) {
  // nvvm.mma.sync rather than nvgpu.mma.sync: the latter cannot type bf16
  // operands in MLIR 22, and one path for both dtypes is simpler.
  auto ptxType = elementType.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  SmallVector<Value, 4> cVals;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j)
      cVals.push_back(accGet(b, c, i, j));
  // The NVVM op types f16 operands as vector<2xf16> and bf16 ones as i32.
  SmallVector<Value, 4> aOps(a.begin(), a.end()), bOps(bOp.begin(), bOp.end());
  if (elementType.isF16()) {
    auto asHalves = [&](Value r) {
      Value v = vector::FromElementsOp::create(
          b, VectorType::get({1}, b.getI32Type()), ValueRange{r});
      return Value(vector::BitCastOp::create(
          b, VectorType::get({2}, elementType), v));
    };
    for (Value &r : aOps)
      r = asHalves(r);
    for (Value &r : bOps)
      r = asHalves(r);
  }
  Type f32 = b.getF32Type();
  auto resTy = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  std::array<int64_t, 3> shape = {16, 8, 16};
  std::array<NVVM::MMATypes, 2> types = {ptxType, ptxType};
  std::array<NVVM::MMALayout, 2> layouts = {NVVM::MMALayout::row, NVVM::MMALayout::col};
  Value d = NVVM::MmaOp::create(b, b.getLoc(), resTy, aOps, bOps, cVals, shape,
                                /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
                                types, layouts);
  Value out = accZero(b);
  for (int64_t k = 0; k < 4; ++k) {
    Value e = LLVM::ExtractValueOp::create(b, d, ArrayRef<int64_t>{k});
    out = accSet(b, out, e, k / 2, k % 2);
  }
  return out;
}

Value frag::packPair(ImplicitLocOpBuilder &b, Value lo, Value hi,
                     Type elementType) {
  // e4m3: cvt.rn.satfinite.e4m3x2.f32, `lo` in the low byte (the op puts
  // its first operand in the high one).
  if (isa<Float8E4M3FNType>(elementType))
    return NVVM::ConvertF32x2ToF8x2Op::create(
        b, b.getI16Type(), hi, lo, NVVM::FPRoundingMode::RN,
        NVVM::SaturationMode::SATFINITE, /*relu=*/false,
        elementType);
  auto f32x2 = VectorType::get({2}, b.getF32Type());
  Value v = vector::FromElementsOp::create(b, f32x2, ValueRange{lo, hi});
  Value h = arith::TruncFOp::create(b, VectorType::get({2}, elementType), v);
  Value i = vector::BitCastOp::create(b, VectorType::get({1}, b.getI32Type()), h);
  return vector::ExtractOp::create(b, i, ArrayRef<int64_t>{0});
}

void frag::storePair(ImplicitLocOpBuilder &b, Value lo, Value hi,
                     Type elementType, Value memory, ValueRange indices) {
  auto f32x2 = VectorType::get({2}, b.getF32Type());
  auto pairTy = VectorType::get({2}, elementType);
  Value h = vector::FromElementsOp::create(b, f32x2, ValueRange{lo, hi});
  if (!elementType.isF32())
    h = arith::TruncFOp::create(b, pairTy, h);
  vector::StoreOp::create(b, h, memory, indices, /*nontemporal=*/false,
                          llvm::Align(2 * elementType.getIntOrFloatBitWidth() / 8));
}

/// Butterfly max or sum over the lanes that differ from this one in the
/// bits from `first` up to (not including) `end`: groups of `end`
/// consecutive lanes where `first` is 1.
static Value laneReduce(ImplicitLocOpBuilder &b, Value v, bool isMax,
                        int32_t end, int32_t first = 1) {
  for (int32_t offset = first; offset < end; offset *= 2) {
    auto shfl = gpu::ShuffleOp::create(b, v, offset, /*width=*/32,
                                       gpu::ShuffleMode::XOR);
    Value other = shfl.getShuffleResult();
    v = isMax ? Value(arith::MaximumFOp::create(b, v, other))
              : Value(arith::AddFOp::create(b, v, other));
  }
  return v;
}

Value frag::quadReduceMax(ImplicitLocOpBuilder &b, Value v) {
  return laneReduce(b, v, /*isMax=*/true, 4);
}
Value frag::quadReduceSum(ImplicitLocOpBuilder &b, Value v) {
  return laneReduce(b, v, /*isMax=*/false, 4);
}
Value frag::columnReduceMax(ImplicitLocOpBuilder &b, Value v) {
  return laneReduce(b, v, /*isMax=*/true, 32, /*first=*/4);
}
Value frag::columnReduceSum(ImplicitLocOpBuilder &b, Value v) {
  return laneReduce(b, v, /*isMax=*/false, 32, /*first=*/4);
}
Value frag::warpReduceMax(ImplicitLocOpBuilder &b, Value v) {
  return laneReduce(b, v, /*isMax=*/true, 32);
}
Value frag::warpReduceSum(ImplicitLocOpBuilder &b, Value v) {
  return laneReduce(b, v, /*isMax=*/false, 32);
}

/// A pure NVVM intrinsic on one f32. Intrinsics, unlike inline PTX (which
/// MLIR lowers to side-effecting inline asm), leave LLVM free to schedule,
/// hoist and combine them.
static Value unaryIntrinsic(ImplicitLocOpBuilder &b, StringRef name, Value x) {
  return LLVM::CallIntrinsicOp::create(b, b.getLoc(), b.getF32Type(),
                                       b.getStringAttr(name), ValueRange{x})
      .getResult(0);
}

void frag::atomicAddPair(ImplicitLocOpBuilder &b, Value memory, Value index,
                         Value lo, Value hi, bool vectorRed) {
  if (!vectorRed) {
    Value next = arith::AddIOp::create(b, index, cIdx(b, 1));
    memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addf, lo, memory,
                                ValueRange{index});
    memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addf, hi, memory,
                                ValueRange{next});
    return;
  }
  // The element's generic address; kernel arguments point to global memory,
  // which red.global addresses after cvta.to.global.
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, memory);
  Value addr = arith::AddIOp::create(
      b, base, arith::MulIOp::create(b, index, cIdx(b, 4)));
  Value addr64 = arith::IndexCastOp::create(b, b.getI64Type(), addr);
  NVVM::InlinePtxOp::create(
      b, TypeRange{}, ValueRange{addr64, lo, hi}, ValueRange{},
      "{ .reg .u64 ga; cvta.to.global.u64 ga, $0; "
      "red.global.add.v2.f32 [ga], {$1, $2}; }",
      /*predicate=*/Value());
}

Value frag::exp2Approx(ImplicitLocOpBuilder &b, Value x) {
  return unaryIntrinsic(b, "llvm.nvvm.ex2.approx.ftz.f", x);
}

Value frag::reciprocalApprox(ImplicitLocOpBuilder &b, Value x) {
  return unaryIntrinsic(b, "llvm.nvvm.rcp.approx.ftz.f", x);
}

Value frag::log2Approx(ImplicitLocOpBuilder &b, Value x) {
  return unaryIntrinsic(b, "llvm.nvvm.lg2.approx.ftz.f", x);
}

Value frag::tanhApprox(ImplicitLocOpBuilder &b, Value x) {
  // tanh.approx.f32: one MUFU op (2^-11 relative error, what FlashAttention
  // takes for its softcap). As 1 - 2 / (1 + e^2x) it took ex2 and a
  // quotient: with an IEEE division (div.rn.f32, a dozen instructions and a
  // slow-path branch) the softcap forward ran 4.8x the plain one, with
  // rcp.approx 1.66x, with this 1.41x (docs/PERF.md runs 326-327). The
  // capped score's relative error is the tanh's: under bf16's rounding of
  // a score (2^-9), at fp16's (2^-11).
  auto op = LLVM::InlineAsmOp::create(
      b, b.getF32Type(), ValueRange{x}, "tanh.approx.f32 $0, $1;", "=f,f",
      /*has_side_effects=*/false, /*is_align_stack=*/false,
      LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  return op.getResult(0);
}

Value frag::transposeMatrix(ImplicitLocOpBuilder &b, Value reg) {
  // No LLVM intrinsic for movmatrix (LLVM 22): inline PTX, free of side
  // effects so that LLVM may schedule it like the mma.sync around it.
  auto op = LLVM::InlineAsmOp::create(
      b, b.getI32Type(), ValueRange{reg},
      "movmatrix.sync.aligned.m8n8.trans.b16 $0, $1;", "=r,r",
      /*has_side_effects=*/false, /*is_align_stack=*/false,
      LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  return op.getResult(0);
}

Value frag::accGet(ImplicitLocOpBuilder &b, Value acc, int64_t i, int64_t j) {
  return vector::ExtractOp::create(b, acc, ArrayRef<int64_t>{i, j});
}

Value frag::accSet(ImplicitLocOpBuilder &b, Value acc, Value v, int64_t i,
                   int64_t j) {
  return vector::InsertOp::create(b, v, acc, ArrayRef<int64_t>{i, j});
}

Value frag::accZero(ImplicitLocOpBuilder &b) {
  auto ty = VectorType::get({2, 2}, b.getF32Type());
  return arith::ConstantOp::create(b, ty, DenseElementsAttr::get(ty, 0.0f));
}

SmallVector<Value>
frag::e4m3ProbabilityOperands(ImplicitLocOpBuilder &b,
                              ArrayRef<std::array<Value, 2>> pairs) {
  // Two 16-bit halves as one vector bitcast, which NVPTX emits as
  // mov.b32 {lo, hi}: ptxas then writes the second conversion's byte pair
  // into the first's register (F2FP's merge operand), where a shift and an
  // or of the zero-extended halves cost a PRMT per register.
  auto pairTy = VectorType::get({2}, b.getI16Type());
  auto wordTy = VectorType::get({1}, b.getI32Type());
  auto join = [&](Value lo, Value hi) {
    Value pair = vector::FromElementsOp::create(b, pairTy, ValueRange{lo, hi});
    return Value(vector::ExtractOp::create(
        b, vector::BitCastOp::create(b, wordTy, pair), ArrayRef<int64_t>{0}));
  };
  SmallVector<Value> regs;
  for (int64_t kk = 0; kk < int64_t(pairs.size()) / 4; ++kk)
    for (int64_t h = 0; h < 2; ++h)   // positions 0-15, then 16-31
      for (int64_t i = 0; i < 2; ++i) // row g, then g + 8
        regs.push_back(
            join(pairs[4 * kk + 2 * h][i], pairs[4 * kk + 2 * h + 1][i]));
  return regs;
}

Value frag::mmaE4m3(ImplicitLocOpBuilder &b, ArrayRef<Value> a,
                    ArrayRef<Value> bOp, Value c) {
  assert(a.size() == 4 && bOp.size() == 2 && "m16n8k32 operands");
  Type f32 = b.getF32Type();
  SmallVector<Value> inputs(a.begin(), a.end());
  inputs.append(bOp.begin(), bOp.end());
  for (int64_t k = 0; k < 4; ++k)
    inputs.push_back(accGet(b, c, k / 2, k % 2));
  auto resultTy = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                   {f32, f32, f32, f32});
  auto asmOp = LLVM::InlineAsmOp::create(
      b, resultTy, inputs,
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
      "{$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
      "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3", /*has_side_effects=*/false,
      /*is_align_stack=*/false, LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  Value out = accZero(b);
  for (int64_t k = 0; k < 4; ++k) {
    Value e = LLVM::ExtractValueOp::create(b, asmOp.getResult(0),
                                           ArrayRef<int64_t>{k});
    out = accSet(b, out, e, k / 2, k % 2);
  }
  return out;
}
