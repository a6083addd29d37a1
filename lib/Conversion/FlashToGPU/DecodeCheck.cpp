//===- DecodeCheck.cpp - the KV cache's lengths and page table, on device --===//
//
// decode_check (docs/KERNEL_ABI.md "Decode"): the lengths and the page
// table live on the GPU, where the host cannot see them without a copy of
// the whole table; this one-block kernel validates them there and leaves a
// 4-element status that the host reads back instead.
//
// Every sequence b has 1 + max_pages entries, its key range
// [b * (1 + max_pages), (b + 1) * (1 + max_pages)): entry 0 is its length
// (cache_seqlens[b] >= 0 and cache_seqlens[b] + seq_new <= capacity), entry
// 1 + p its page p (block_table[b][p] in [0, num_pages) where p is one of
// the ceil(L_b / page_size) pages the sequence uses). Over a pool of
// sequences (cache_batch_idx) entry 1 is instead its pool row
// (cache_batch_idx[b] in [0, cache_batch), and, when the step appends new
// rows, no earlier sequence's: two sequences appending into one row would
// overwrite each other's; a debug check's O(B^2) reads). The threads stride
// over the entries; the lowest faulty key is the first offending sequence,
// its length before its pages, its pages in order. A shared-memory
// atomic min reduces the threads' lowest keys, and thread 0 decodes the
// winner into the status, so the kernel writes the whole status and the
// caller need not clear it.
//
//===----------------------------------------------------------------------===//
#include "Fragments.h"
#include "KernelBuilderBase.h"
#include "Recipes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

/// check_status[0] (KERNEL_ABI.md "Decode"; runtime/lib/decode.cpp reads
/// them).
enum CheckCode : int32_t {
  kValid = 0,
  kNegativeLength = 1,
  kBeyondCapacity = 2,
  kPageOutOfRange = 3,
  kPoolRowOutOfRange = 4,
  kPoolRowShared = 5
};

class DecodeCheckBuilder : protected KernelBuilderBase {
public:
  DecodeCheckBuilder(gpu::GPUFuncOp func, const KernelSpec &spec)
      : KernelBuilderBase(func, spec) {}
  void build();

private:
  Value c32(int32_t v) {
    return arith::ConstantIntOp::create(b, b.getI32Type(), v);
  }
  // Entries per sequence: 1 + max_pages when paged, else 1 (2 over a pool).
  Value slots;
  Value capacity; // seq_k
  Value seqNew;
  /// Sequence `seq`'s length entry: (cache_seqlens[seq] as index, whether
  /// it breaks the contract).
  std::pair<Value, Value> lengthFault(Value seq);
  /// block_table[seq][page], as i32.
  Value tableEntry(Value seq, Value page);
  /// cache_batch_idx[seq], as i32.
  Value poolRow(Value seq) {
    return memref::LoadOp::create(b, arg.lookup("cache_batch_idx"),
                                  ValueRange{seq});
  }
  /// Whether pool row `row` (i32) is outside [0, cache_batch).
  Value outsidePool(Value row) {
    Value at = asIndex(row);
    return arith::OrIOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::slt, at, cIdx(b, 0)),
        arith::CmpIOp::create(b, arith::CmpIPredicate::sge, at,
                              idx("cache_batch")));
  }
  /// The lowest sequence before `seq` whose pool row is `row` (i32) where
  /// the step appends rows, else `seq` itself (index).
  Value firstSharer(Value seq, Value row);
  /// Whether entry `key` (index) is faulty.
  Value isFaulty(Value key);
};

std::pair<Value, Value> DecodeCheckBuilder::lengthFault(Value seq) {
  Value cached = asIndex(memref::LoadOp::create(
      b, arg.lookup("cache_seqlens"), ValueRange{seq}));
  Value negative =
      arith::CmpIOp::create(b, arith::CmpIPredicate::slt, cached, cIdx(b, 0));
  // In 64-bit index arithmetic: a length near 2^31 plus seq_new must not
  // wrap around below the capacity.
  Value beyond = arith::CmpIOp::create(
      b, arith::CmpIPredicate::sgt, arith::AddIOp::create(b, cached, seqNew),
      capacity);
  return {cached, arith::OrIOp::create(b, negative, beyond)};
}

Value DecodeCheckBuilder::tableEntry(Value seq, Value page) {
  Value entry = arith::AddIOp::create(
      b, arith::MulIOp::create(b, seq, idx("block_table_stride")), page);
  return memref::LoadOp::create(b, arg.lookup("block_table"),
                                ValueRange{entry});
}

Value DecodeCheckBuilder::firstSharer(Value seq, Value row) {
  // No new rows: sharing a row is reading it twice, which is valid.
  Value upTo = arith::SelectOp::create(
      b,
      arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, seqNew, cIdx(b, 0)),
      seq, cIdx(b, 0));
  auto loop = scf::ForOp::create(b, cIdx(b, 0), upTo, cIdx(b, 1),
                                 ValueRange{seq});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value other = loop.getInductionVar(), first = loop.getRegionIterArgs()[0];
  Value same = arith::AndIOp::create(
      b,
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, poolRow(other), row),
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, first, seq));
  scf::YieldOp::create(
      b, ValueRange{arith::SelectOp::create(b, same, other, first)});
  return loop.getResult(0);
}

Value DecodeCheckBuilder::isFaulty(Value key) {
  Value seq = arith::DivUIOp::create(b, key, slots);
  Value slot = arith::RemUIOp::create(b, key, slots);
  auto [cached, badLength] = lengthFault(seq);
  Value isLength =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, slot, cIdx(b, 0));
  if (s.cacheBatchIdx) {
    Value row = poolRow(seq);
    Value shared = arith::CmpIOp::create(b, arith::CmpIPredicate::ne,
                                         firstSharer(seq, row), seq);
    return arith::SelectOp::create(
        b, isLength, badLength,
        arith::OrIOp::create(b, outsidePool(row), shared));
  }
  if (!s.pageSize)
    return badLength;
  // Page p = slot - 1 < max_pages: its entry is inside row `seq` of the
  // table, so it is read unconditionally and only judged where the
  // sequence's length is valid and uses the page.
  Value page = arith::SubIOp::create(
      b, arith::MaxUIOp::create(b, slot, cIdx(b, 1)), cIdx(b, 1));
  Value used = arith::CeilDivSIOp::create(
      b, arith::AddIOp::create(b, cached, seqNew), cIdx(b, s.pageSize));
  Value index = asIndex(tableEntry(seq, page));
  Value outside = arith::OrIOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::slt, index, cIdx(b, 0)),
      arith::CmpIOp::create(b, arith::CmpIPredicate::sge, index,
                            idx("num_pages")));
  Value badPage = arith::AndIOp::create(
      b,
      arith::AndIOp::create(
          b, arith::XOrIOp::create(b, badLength,
                                   arith::ConstantIntOp::create(b, b.getI1Type(), 1)),
          arith::CmpIOp::create(b, arith::CmpIPredicate::ult, page, used)),
      outside);
  return arith::SelectOp::create(b, isLength, badLength, badPage);
}

void DecodeCheckBuilder::build() {
  bindArguments();
  setThreadCoordinates(gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  capacity = idx("seq_k");
  seqNew = idx("seq_new");
  slots = s.pageSize ? Value(arith::AddIOp::create(
                           b,
                           arith::DivUIOp::create(b, capacity,
                                                  cIdx(b, s.pageSize)),
                           cIdx(b, 1)))
                     : cIdx(b, s.cacheBatchIdx ? 2 : 1);
  Value keys = arith::MulIOp::create(b, idx("batch"), slots);
  Type i64 = b.getI64Type();
  Value none = arith::ConstantIntOp::create(
      b, i64, std::numeric_limits<int64_t>::max());
  Value lowest = sharedTile(sharedMemoryBytes(), {1}, 0, i64);
  Value isFirst =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, cIdx(b, 0));
  {
    OpBuilder::InsertionGuard guard(b);
    auto ifFirst = scf::IfOp::create(b, TypeRange{}, isFirst, false);
    b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
    memref::StoreOp::create(b, none, lowest, ValueRange{cIdx(b, 0)});
  }
  gpu::BarrierOp::create(b);

  // This thread's lowest faulty key (its keys rise, so the first fault).
  auto loop = scf::ForOp::create(b, tid, keys, cIdx(b, s.threads()),
                                 ValueRange{none});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value key = loop.getInductionVar();
    Value best = loop.getRegionIterArgs()[0];
    Value keyI64 = arith::IndexCastOp::create(b, i64, key);
    scf::YieldOp::create(
        b, ValueRange{arith::SelectOp::create(
               b, isFaulty(key), arith::MinSIOp::create(b, best, keyI64),
               best)});
  }
  Value found = arith::CmpIOp::create(b, arith::CmpIPredicate::ne,
                                      loop.getResult(0), none);
  {
    OpBuilder::InsertionGuard guard(b);
    auto ifFound = scf::IfOp::create(b, TypeRange{}, found, false);
    b.setInsertionPointToStart(&ifFound.getThenRegion().front());
    memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::mins,
                                loop.getResult(0), lowest,
                                ValueRange{cIdx(b, 0)});
  }
  gpu::BarrierOp::create(b);

  auto ifFirst = scf::IfOp::create(b, TypeRange{}, isFirst, false);
  b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
  Value status = arith::CmpIOp::create(
      b, arith::CmpIPredicate::ne,
      memref::LoadOp::create(b, lowest, ValueRange{cIdx(b, 0)}), none);
  Value zero = c32(0);
  SmallVector<Value, 4> fields = {c32(kValid), zero, zero, zero};
  auto ifFault = scf::IfOp::create(b, TypeRange(SmallVector<Type>(4, b.getI32Type())),
                                   status, true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifFault.getThenRegion().front());
    Value key = asIndex(memref::LoadOp::create(b, lowest, ValueRange{cIdx(b, 0)}));
    Value seq = arith::DivUIOp::create(b, key, slots);
    Value slot = arith::RemUIOp::create(b, key, slots);
    Value cached = memref::LoadOp::create(b, arg.lookup("cache_seqlens"),
                                          ValueRange{seq});
    Value lengthCode = arith::SelectOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::slt, cached, zero),
        c32(kNegativeLength), c32(kBeyondCapacity));
    Value code = lengthCode, value = cached, page = zero;
    if (s.cacheBatchIdx) {
      // Outside the pool (4), else shared with an earlier sequence (5),
      // whose index goes where a page's would.
      Value isLength =
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, slot, cIdx(b, 0));
      Value row = poolRow(seq);
      Value outside = outsidePool(row);
      Value poolCode = arith::SelectOp::create(
          b, outside, c32(kPoolRowOutOfRange), c32(kPoolRowShared));
      code = arith::SelectOp::create(b, isLength, lengthCode, poolCode);
      value = arith::SelectOp::create(b, isLength, cached, row);
      page = arith::SelectOp::create(
          b, arith::OrIOp::create(b, isLength, outside), zero,
          i32(firstSharer(seq, row)));
    }
    if (s.pageSize) {
      Value isLength =
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, slot, cIdx(b, 0));
      Value p = arith::SubIOp::create(
          b, arith::MaxUIOp::create(b, slot, cIdx(b, 1)), cIdx(b, 1));
      code = arith::SelectOp::create(b, isLength, lengthCode,
                                     c32(kPageOutOfRange));
      value = arith::SelectOp::create(b, isLength, cached, tableEntry(seq, p));
      page = arith::SelectOp::create(b, isLength, zero, i32(p));
    }
    scf::YieldOp::create(b, ValueRange{code, i32(seq), value, page});
  }
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifFault.getElseRegion().front());
    scf::YieldOp::create(b, fields);
  }
  Value out = arg.lookup("check_status");
  for (int64_t i = 0; i < 4; ++i)
    memref::StoreOp::create(b, ifFault.getResult(i), out,
                            ValueRange{cIdx(b, i)});
  b.setInsertionPointAfter(ifFirst);
  gpu::ReturnOp::create(b);
}

} // namespace

void mlir::flash::buildDecodeCheckKernel(gpu::GPUFuncOp func,
                                         const KernelSpec &spec) {
  DecodeCheckBuilder(func, spec).build();
}
