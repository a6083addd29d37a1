//===- KVAppend.cpp - new_kv's rows written into the KV cache -------------===//
//
// kv_append (docs/KERNEL_ABI.md "Decode"): one warp per new row (b, h, t)
// of [B, Hkv, Snew], block_m rows a block. Row t of sequence b goes to its
// cache row p = cache_seqlens[b] + t, through the page table when paged.
// The lanes move a row in 16-byte pieces, lane l the pieces l, l + 32, ...:
// a warp's loads and stores of a row are each one coalesced transaction.
//
// An FP8 cache (KernelSpec::fp8Cache) gets each row quantised on the way:
// a lane's 8 elements (16 bytes of new_kv) widened to f32, multiplied by
// the f32 reciprocal of its (b, h) descale, converted pairwise by
// cvt.rn.satfinite.e4m3x2.f32 (sm_89+) and stored as 8 bytes. That is the
// CPU lowerings' e4m3(clamp(x * (1 / d), -448, 448)) (Fp8Math.h's
// quantizeToE4M3) code for code: the reciprocal is one IEEE division per
// row (arith.divf of 1, which NVPTX emits as rcp.rn.f32, correctly
// rounded like the CPU's division), the product is rounded to f32 before the
// conversion, which rounds to nearest even and saturates finite values and
// infinities beyond +-448 to +-448: the code of clamping first, 448 being
// e4m3fn's largest finite value. A NaN stays NaN in both, but cvt writes
// the canonical 0x7f where the CPU path keeps its sign (0xff for a
// negative NaN).
//
// A destination outside the cache (a negative length, p beyond the
// capacity, a page index outside [0, num_pages)) is skipped. The decode
// kernel clamps such values, which only changes what it reads; clamped
// here, the write would land on a row of another sequence.
//
//===----------------------------------------------------------------------===//
#include "Fragments.h"
#include "KernelBuilderBase.h"
#include "Recipes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

class KVAppendBuilder : protected KernelBuilderBase {
public:
  KVAppendBuilder(gpu::GPUFuncOp func, const KernelSpec &spec)
      : KernelBuilderBase(func, spec) {}
  void build();

private:
  /// Copies `cols` elements from element `srcOffset` of `src` to element
  /// `dstOffset` of `dst`, 16 bytes of `src` per lane and step; with an
  /// `inverse` (an FP8 cache: the f32 1 / descale of the row), quantised
  /// to e4m3 (8 bytes of `dst` per lane and step).
  void copyRow(Value src, Value srcOffset, Value dst, Value dstOffset,
               int64_t cols, Value inverse);
  /// 8 elements x (vector<8xelementType>) as e4m3 codes x * inverse,
  /// saturated, rounded to nearest even: vector<8xf8E4M3FN>.
  Value quantize(Value x, Value inverse);
  /// Opens an scf.if on `cond` and moves the insertion point into it.
  void enterIf(Value cond);
};

void KVAppendBuilder::enterIf(Value cond) {
  auto ifOp = scf::IfOp::create(b, TypeRange{}, cond, false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
}

Value KVAppendBuilder::quantize(Value x, Value inverse) {
  auto f32x8 = VectorType::get({8}, b.getF32Type());
  Value scaled = arith::MulFOp::create(
      b, arith::ExtFOp::create(b, f32x8, x),
      vector::BroadcastOp::create(b, f32x8, inverse));
  Type e4m3 = b.getType<Float8E4M3FNType>();
  SmallVector<Value, 4> pairs;
  for (int64_t i = 0; i < 8; i += 2)
    pairs.push_back(frag::packPair(
        b, vector::ExtractOp::create(b, scaled, ArrayRef<int64_t>{i}),
        vector::ExtractOp::create(b, scaled, ArrayRef<int64_t>{i + 1}), e4m3));
  // Each i16 holds element i in its low byte: little-endian, so the bytes
  // land in element order.
  Value packed = vector::FromElementsOp::create(
      b, VectorType::get({4}, b.getI16Type()), pairs);
  return vector::BitCastOp::create(b, VectorType::get({8}, e4m3), packed);
}

void KVAppendBuilder::copyRow(Value src, Value srcOffset, Value dst,
                              Value dstOffset, int64_t cols, Value inverse) {
  // Rows start on 16-byte boundaries (the ABI's stride rule, which the
  // runtime checks), so each piece is one 128-bit load and a 128-bit (or,
  // quantised, 64-bit) store.
  constexpr int64_t kPiece = 8; // 2-byte elements
  auto vecTy = VectorType::get({kPiece}, s.elementType);
  int64_t pieces = cols / kPiece;
  for (int64_t first = 0; first < pieces; first += 32) {
    Value piece = arith::AddIOp::create(b, lane, cIdx(b, first));
    OpBuilder::InsertionGuard guard(b);
    if (first + 32 > pieces)
      enterIf(arith::CmpIOp::create(b, arith::CmpIPredicate::ult, piece,
                                    cIdx(b, pieces)));
    Value col = arith::MulIOp::create(b, piece, cIdx(b, kPiece));
    Value v = vector::LoadOp::create(
        b, vecTy, src, ValueRange{arith::AddIOp::create(b, srcOffset, col)},
        /*nontemporal=*/false, llvm::MaybeAlign(16));
    if (inverse)
      v = quantize(v, inverse);
    vector::StoreOp::create(
        b, v, dst, ValueRange{arith::AddIOp::create(b, dstOffset, col)},
        /*nontemporal=*/false, llvm::MaybeAlign(inverse ? 8 : 16));
  }
}

void KVAppendBuilder::build() {
  bindArguments();
  setThreadCoordinates(gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  Value headsKV = idx("heads_kv"), seqNew = idx("seq_new");
  Value rows = arith::MulIOp::create(
      b, arith::MulIOp::create(b, idx("batch"), headsKV), seqNew);
  Value row = arith::AddIOp::create(
      b,
      arith::MulIOp::create(b, gpu::BlockIdOp::create(b, gpu::Dimension::x),
                            cIdx(b, s.warps)),
      warp);
  {
    OpBuilder::InsertionGuard guard(b);
    enterIf(arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row, rows));
    // Row -> (batch, kv head, new row t), row-major over [B, Hkv, Snew].
    Value t = arith::RemUIOp::create(b, row, seqNew);
    Value rest = arith::DivUIOp::create(b, row, seqNew);
    Value h = arith::RemUIOp::create(b, rest, headsKV);
    batchIdx = arith::DivUIOp::create(b, rest, headsKV);

    // The destination, in 64-bit index arithmetic: a length near 2^31 plus
    // t must not wrap around into the cache.
    Value cached = memref::LoadOp::create(b, arg.lookup("cache_seqlens"),
                                          ValueRange{batchIdx});
    Value position = arith::AddIOp::create(b, asIndex(cached), t);
    Value inCache = arith::AndIOp::create(
        b,
        arith::CmpIOp::create(b, arith::CmpIPredicate::sge, cached,
                              arith::ConstantIntOp::create(b, b.getI32Type(), 0)),
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, position,
                              idx("seq_k")));
    enterIf(inCache);
    Value kDst, vDst;
    if (s.pageSize) {
      // position < capacity = max_pages * page_size, so the entry lies in
      // row b of the table.
      Value pageSize = cIdx(b, s.pageSize);
      Value entry = arith::AddIOp::create(
          b, arith::MulIOp::create(b, batchIdx, idx("block_table_stride")),
          arith::DivUIOp::create(b, position, pageSize));
      Value page = asIndex(memref::LoadOp::create(
          b, arg.lookup("block_table"), ValueRange{entry}));
      enterIf(arith::AndIOp::create(
          b,
          arith::CmpIOp::create(b, arith::CmpIPredicate::sge, page, cIdx(b, 0)),
          arith::CmpIOp::create(b, arith::CmpIPredicate::slt, page,
                                idx("num_pages"))));
      Value inPage = arith::RemUIOp::create(b, position, pageSize);
      auto pagedRow = [&](StringRef cache) {
        return arith::AddIOp::create(
            b,
            arith::AddIOp::create(
                b, arith::MulIOp::create(b, page, idx((cache + "_stride_b").str())),
                arith::MulIOp::create(b, h, idx((cache + "_stride_h").str()))),
            arith::MulIOp::create(b, inPage, idx((cache + "_stride_s").str())));
      };
      kDst = pagedRow("k");
      vDst = pagedRow("v");
    } else {
      kDst = arith::AddIOp::create(
          b, operandBase("k", h),
          arith::MulIOp::create(b, position, idx("k_stride_s")));
      vDst = arith::AddIOp::create(
          b, operandBase("v", h),
          arith::MulIOp::create(b, position, idx("v_stride_s")));
    }
    auto newRow = [&](StringRef operand) {
      return arith::AddIOp::create(
          b, operandBase(operand, h),
          arith::MulIOp::create(b, t, idx((operand + "_stride_s").str())));
    };
    // An FP8 cache: the reciprocals of this row's descales, as the CPU
    // lowerings compute them (DecomposeKVCache.cpp's reciprocal).
    Value kInv, vInv;
    if (s.fp8Cache) {
      Value one = cF32(b, 1.0f);
      kInv = arith::DivFOp::create(b, one, loadDescale("k", h));
      vInv = arith::DivFOp::create(b, one, loadDescale("v", h));
    }
    copyRow(arg.lookup("k_new"), newRow("k_new"), arg.lookup("k"), kDst,
            s.headDim, kInv);
    copyRow(arg.lookup("v_new"), newRow("v_new"), arg.lookup("v"), vDst,
            s.headDimV, vInv);
  }
  gpu::ReturnOp::create(b);
}

} // namespace

void mlir::flash::buildKVAppendKernel(gpu::GPUFuncOp func,
                                      const KernelSpec &spec) {
  KVAppendBuilder(func, spec).build();
}
