//===- KVAppend.cpp - new_kv's rows written into the KV cache -------------===//
//
// kv_append (docs/KERNEL_ABI.md "Decode"): one warp per new row (b, h, t)
// of [B, Hkv, Snew] (then, with rotary, per query row), block_m rows a
// block. Row t of sequence b goes to its
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
// Rotary embedding (KernelSpec::rotaryDim; docs/KVCACHE.md "Rotary") is a
// stage of the same copy: a new key row is rotated at its cache row p
// before it is stored (and quantised), and the query, which the decode
// kernel reads as it is, is rotated into q_rot by warps of its own after
// the new rows' (one per row of [B, Hq, Sq]), so that the decode kernels
// stay as they are and read q_rot. A lane rotates whole pieces: GPT-J
// pairs (2e, 2e + 1) lie inside one piece; GPT-NeoX halves pair piece c
// with piece c + rotaryDim / 2, so one lane loads, rotates and stores
// both. Each pair is x0 c - x1 n, x1 c + x0 n in f32, rounded to the
// element type, as the CPU lowerings compute it. The table row is
// clamped into [0, seq_rotary): the runtime and the verifier keep every
// cache row inside it, a query row past Snew may not be.
//
// A pool of sequences (KernelSpec::cacheBatchIdx) puts row t of sequence
// b in row cache_batch_idx[b] of the caches.
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
  /// to e4m3 (8 bytes of `dst` per lane and step); with a `tableRow` (the
  /// element offset of the row's position in rotary_cos / rotary_sin),
  /// rotated first.
  void copyRow(Value src, Value srcOffset, Value dst, Value dstOffset,
               int64_t cols, Value inverse, Value tableRow = Value());
  /// Stores piece `v` (8 elements) at element `offset + col` of `dst`,
  /// quantised with `inverse` when given.
  void storePiece(Value v, Value dst, Value offset, Value col, Value inverse);
  /// 8 elements of `table` (rotary_cos or rotary_sin) from `at`, in f32.
  Value loadTable(StringRef table, Value at, int64_t n);
  /// (x0 c - x1 n, x1 c + x0 n) element by element, in f32, rounded back
  /// to the element type; all four are vectors of one length.
  std::pair<Value, Value> rotatePairs(Value x0, Value x1, Value c, Value n);
  /// GPT-NeoX halves: the pieces of the first half, each with its partner
  /// rotaryDim / 2 on, then the unrotated tail as pieces.
  void copyRotatedHalves(Value src, Value srcOffset, Value dst,
                         Value dstOffset, int64_t cols, Value inverse,
                         Value tableRow);
  /// The element offset of position `p` (an index, any value) in the
  /// rotary tables, p clamped into [0, seq_rotary).
  Value tableRowOf(Value p);
  /// Query row `qRow` of [B, Hq, Sq] rotated from q into q_rot.
  void rotateQueryRow(Value qRow);
  /// 8 elements x (vector<8xelementType>) as e4m3 codes x * inverse,
  /// saturated, rounded to nearest even: vector<8xf8E4M3FN>.
  Value quantize(Value x, Value inverse);
  /// Opens an scf.if on `cond` and moves the insertion point into it.
  void enterIf(Value cond);
  /// Calls `body` for the items [0, items) of a row, lane l taking items
  /// l, l + 32, ... (a warp's accesses of a step are then contiguous).
  void forEachLaneItem(int64_t items, function_ref<void(Value)> body);
};

void KVAppendBuilder::enterIf(Value cond) {
  auto ifOp = scf::IfOp::create(b, TypeRange{}, cond, false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
}

void KVAppendBuilder::forEachLaneItem(int64_t items,
                                      function_ref<void(Value)> body) {
  for (int64_t first = 0; first < items; first += 32) {
    Value item = arith::AddIOp::create(b, lane, cIdx(b, first));
    OpBuilder::InsertionGuard guard(b);
    if (first + 32 > items)
      enterIf(arith::CmpIOp::create(b, arith::CmpIPredicate::ult, item,
                                    cIdx(b, items)));
    body(item);
  }
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

// Rows start on 16-byte boundaries (the ABI's stride rule, which the
// runtime checks), so each piece is one 128-bit load and a 128-bit (or,
// quantised, 64-bit) store.
static constexpr int64_t kPiece = 8; // 2-byte elements

void KVAppendBuilder::storePiece(Value v, Value dst, Value offset, Value col,
                                 Value inverse) {
  if (inverse)
    v = quantize(v, inverse);
  vector::StoreOp::create(b, v, dst,
                          ValueRange{arith::AddIOp::create(b, offset, col)},
                          /*nontemporal=*/false,
                          llvm::MaybeAlign(inverse ? 8 : 16));
}

Value KVAppendBuilder::loadTable(StringRef table, Value at, int64_t n) {
  // A table row is rotaryDim / 2 elements, a multiple of 8: 16-byte rows;
  // n elements from a multiple of n are n * 2 bytes aligned.
  Value v = vector::LoadOp::create(b, VectorType::get({n}, s.elementType),
                                   arg.lookup(table), ValueRange{at},
                                   /*nontemporal=*/false,
                                   llvm::MaybeAlign(2 * n));
  return arith::ExtFOp::create(b, VectorType::get({n}, b.getF32Type()), v);
}

std::pair<Value, Value> KVAppendBuilder::rotatePairs(Value x0, Value x1,
                                                     Value c, Value n) {
  auto shape = cast<VectorType>(x0.getType()).getShape();
  auto f32Ty = VectorType::get(shape, b.getF32Type());
  x0 = arith::ExtFOp::create(b, f32Ty, x0);
  x1 = arith::ExtFOp::create(b, f32Ty, x1);
  Value x0c = arith::MulFOp::create(b, x0, c);
  Value x1n = arith::MulFOp::create(b, x1, n);
  Value x1c = arith::MulFOp::create(b, x1, c);
  Value x0n = arith::MulFOp::create(b, x0, n);
  auto eltTy = VectorType::get(shape, s.elementType);
  return {arith::TruncFOp::create(b, eltTy, arith::SubFOp::create(b, x0c, x1n)),
          arith::TruncFOp::create(b, eltTy, arith::AddFOp::create(b, x1c, x0n))};
}

Value KVAppendBuilder::tableRowOf(Value p) {
  Value last = arith::SubIOp::create(b, idx("seq_rotary"), cIdx(b, 1));
  p = arith::MaxSIOp::create(b, p, cIdx(b, 0));
  p = arith::MinSIOp::create(b, p, last);
  return arith::MulIOp::create(b, p, cIdx(b, s.rotaryDim / 2));
}

void KVAppendBuilder::copyRotatedHalves(Value src, Value srcOffset, Value dst,
                                        Value dstOffset, int64_t cols,
                                        Value inverse, Value tableRow) {
  auto vecTy = VectorType::get({kPiece}, s.elementType);
  int64_t half = s.rotaryDim / 2;
  int64_t pairPieces = half / kPiece;
  int64_t items = pairPieces + (cols - s.rotaryDim) / kPiece;
  auto load = [&](Value base, Value col) -> Value {
    return vector::LoadOp::create(b, vecTy, src,
                                  ValueRange{arith::AddIOp::create(b, base, col)},
                                  /*nontemporal=*/false, llvm::MaybeAlign(16));
  };
  forEachLaneItem(items, [&](Value item) {
    auto ifOp = scf::IfOp::create(
        b, TypeRange{},
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, item,
                              cIdx(b, pairPieces)),
        /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value col0 = arith::MulIOp::create(b, item, cIdx(b, kPiece));
      Value col1 = arith::AddIOp::create(b, col0, cIdx(b, half));
      Value at = arith::AddIOp::create(b, tableRow, col0);
      auto [y0, y1] = rotatePairs(load(srcOffset, col0), load(srcOffset, col1),
                                  loadTable("rotary_cos", at, kPiece),
                                  loadTable("rotary_sin", at, kPiece));
      storePiece(y0, dst, dstOffset, col0, inverse);
      storePiece(y1, dst, dstOffset, col1, inverse);
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      Value col = arith::AddIOp::create(
          b,
          arith::MulIOp::create(
              b, arith::SubIOp::create(b, item, cIdx(b, pairPieces)),
              cIdx(b, kPiece)),
          cIdx(b, s.rotaryDim));
      storePiece(load(srcOffset, col), dst, dstOffset, col, inverse);
    }
  });
}

void KVAppendBuilder::copyRow(Value src, Value srcOffset, Value dst,
                              Value dstOffset, int64_t cols, Value inverse,
                              Value tableRow) {
  if (tableRow && !s.rotaryInterleaved)
    return copyRotatedHalves(src, srcOffset, dst, dstOffset, cols, inverse,
                             tableRow);
  auto vecTy = VectorType::get({kPiece}, s.elementType);
  forEachLaneItem(cols / kPiece, [&](Value piece) {
    Value col = arith::MulIOp::create(b, piece, cIdx(b, kPiece));
    Value v = vector::LoadOp::create(
        b, vecTy, src, ValueRange{arith::AddIOp::create(b, srcOffset, col)},
        /*nontemporal=*/false, llvm::MaybeAlign(16));
    if (tableRow) {
      // GPT-J pairs: the piece's 4 pairs (even, odd elements) at the
      // table's col / 2. A piece past rotaryDim reads the last pieces'
      // entries (kept in the row) and keeps its own values.
      Value inRotary = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, col,
                                             cIdx(b, s.rotaryDim));
      Value tableCol = arith::DivUIOp::create(
          b,
          arith::MinUIOp::create(b, col, cIdx(b, s.rotaryDim - kPiece)),
          cIdx(b, 2));
      Value at = arith::AddIOp::create(b, tableRow, tableCol);
      Value even =
          vector::ShuffleOp::create(b, v, v, ArrayRef<int64_t>{0, 2, 4, 6});
      Value odd =
          vector::ShuffleOp::create(b, v, v, ArrayRef<int64_t>{1, 3, 5, 7});
      auto [y0, y1] = rotatePairs(even, odd,
                                  loadTable("rotary_cos", at, kPiece / 2),
                                  loadTable("rotary_sin", at, kPiece / 2));
      Value y = vector::ShuffleOp::create(
          b, y0, y1, ArrayRef<int64_t>{0, 4, 1, 5, 2, 6, 3, 7});
      v = arith::SelectOp::create(b, inRotary, y, v);
    }
    storePiece(v, dst, dstOffset, col, inverse);
  });
}

void KVAppendBuilder::rotateQueryRow(Value qRow) {
  // qRow -> (batch, query head, row i), row-major over [B, Hq, Sq].
  Value seqQ = idx("seq_q");
  Value i = arith::RemUIOp::create(b, qRow, seqQ);
  Value rest = arith::DivUIOp::create(b, qRow, seqQ);
  Value h = arith::RemUIOp::create(b, rest, idx("heads_q"));
  batchIdx = arith::DivUIOp::create(b, rest, idx("heads_q"));
  Value p = asIndex(memref::LoadOp::create(b, arg.lookup("cache_seqlens"),
                                           ValueRange{batchIdx}));
  if (s.rotaryQueryRowsApart)
    p = arith::AddIOp::create(b, p, i);
  auto rowOf = [&](StringRef operand) {
    return arith::AddIOp::create(
        b, operandBase(operand, h),
        arith::MulIOp::create(b, i, idx((operand + "_stride_s").str())));
  };
  copyRow(arg.lookup("q"), rowOf("q"), arg.lookup("q_rot"), rowOf("q_rot"),
          s.headDim, /*inverse=*/Value(), tableRowOf(p));
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
    // Element (row, 0) of kv head h in `cache`'s sequence (or page) `seq`.
    auto rowAt = [&](StringRef cache, Value seq, Value row) -> Value {
      return arith::AddIOp::create(
          b,
          arith::AddIOp::create(
              b, arith::MulIOp::create(b, seq, idx((cache + "_stride_b").str())),
              arith::MulIOp::create(b, h, idx((cache + "_stride_h").str()))),
          arith::MulIOp::create(b, row, idx((cache + "_stride_s").str())));
    };
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
      kDst = rowAt("k", page, inPage);
      vDst = rowAt("v", page, inPage);
    } else if (s.cacheBatchIdx) {
      // Row cache_batch_idx[b] of the pool; an index outside it is
      // skipped, never clamped onto another sequence's row.
      Value at = asIndex(memref::LoadOp::create(
          b, arg.lookup("cache_batch_idx"), ValueRange{batchIdx}));
      enterIf(arith::AndIOp::create(
          b, arith::CmpIOp::create(b, arith::CmpIPredicate::sge, at, cIdx(b, 0)),
          arith::CmpIOp::create(b, arith::CmpIPredicate::slt, at,
                                idx("cache_batch"))));
      kDst = rowAt("k", at, position);
      vDst = rowAt("v", at, position);
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
    // position < seq_k <= seq_rotary; clamped all the same.
    Value kTableRow = s.rotaryDim ? tableRowOf(position) : Value();
    copyRow(arg.lookup("k_new"), newRow("k_new"), arg.lookup("k"), kDst,
            s.headDim, kInv, kTableRow);
    copyRow(arg.lookup("v_new"), newRow("v_new"), arg.lookup("v"), vDst,
            s.headDimV, vInv);
  }
  if (s.rotaryDim) {
    // The query's rows follow the new rows' in the grid.
    Value qRow = arith::SubIOp::create(b, row, rows);
    Value qRows = arith::MulIOp::create(
        b, arith::MulIOp::create(b, idx("batch"), idx("heads_q")),
        idx("seq_q"));
    OpBuilder::InsertionGuard guard(b);
    enterIf(arith::AndIOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::uge, row, rows),
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, qRow, qRows)));
    rotateQueryRow(qRow);
  }
  gpu::ReturnOp::create(b);
}

} // namespace

void mlir::flash::buildKVAppendKernel(gpu::GPUFuncOp func,
                                      const KernelSpec &spec) {
  KVAppendBuilder(func, spec).build();
}
