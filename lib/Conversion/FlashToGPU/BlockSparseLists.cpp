//===- BlockSparseLists.cpp - reading the block-sparse lists --------------===//
//
// The list reading both iterators share: the forward's lists (key blocks
// per query block) and the transposed ones the backward's main kernel
// walks (query blocks per key block) have the same layout, so one row
// reader and one entry-to-block map serve both (SparseLists names which).
//
//===----------------------------------------------------------------------===//
#include "BlockSparseLists.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::flash;

namespace {
Value indexArg(ImplicitLocOpBuilder &b, const llvm::StringMap<Value> &arg,
               StringRef name) {
  return arith::IndexCastOp::create(b, b.getIndexType(), arg.lookup(name));
}

Value cIndex(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

/// element `offset` (index) of the i32 list `name`, as an index.
Value loadEntry(ImplicitLocOpBuilder &b, const llvm::StringMap<Value> &arg,
                StringRef name, Value offset) {
  Value v = memref::LoadOp::create(b, arg.lookup(name), ValueRange{offset});
  return arith::IndexCastOp::create(b, b.getIndexType(), v);
}
} // namespace

SparseLists mlir::flash::SparseLists::forward(const KernelSpec &s) {
  return {"kv", s.sparseBlockK, s.blockN, s.fullBlocks};
}

SparseLists mlir::flash::SparseLists::transposed(const KernelSpec &s) {
  return {"q", s.sparseBlockQ, s.blockM, s.fullBlocks};
}

SparseListRow mlir::flash::readSparseListRow(ImplicitLocOpBuilder &b,
                                             const llvm::StringMap<Value> &arg,
                                             const SparseLists &lists,
                                             Value batch, Value head,
                                             Value rowBlock) {
  // One list pair, `prefix` "" (partial) or "full_": its clamped count and
  // the offset of its row's first slot. Strides are 0 where a list
  // broadcasts the batch or the heads.
  auto readRow = [&](StringRef prefix) -> std::pair<Value, Value> {
    std::string p = prefix.str() + lists.family.str() + "_";
    // One statement per op: the IR must not depend on the order C++
    // evaluates arguments in.
    auto strided = [&](StringRef list, Value last) {
      Value sb = indexArg(b, arg, p + list.str() + "_stride_b");
      Value sh = indexArg(b, arg, p + list.str() + "_stride_h");
      Value atB = arith::MulIOp::create(b, batch, sb);
      Value atH = arith::MulIOp::create(b, head, sh);
      Value off = arith::AddIOp::create(b, atB, atH);
      return arith::AddIOp::create(b, off, last);
    };
    Value slots = indexArg(b, arg, p + "slots");
    Value n = loadEntry(b, arg, p + "num_blocks",
                        strided("num_blocks", rowBlock));
    n = arith::MaxSIOp::create(b, n, cIndex(b, 0));
    n = arith::MinSIOp::create(b, n, slots);
    Value rowStart =
        strided("indices", arith::MulIOp::create(b, rowBlock, slots));
    return {n, rowStart};
  };
  // Kept in i32 across the key loop: four i64 values there made the sm80
  // engine's causal D = 128 kernel spill (108 bytes on sm_90a).
  auto toI32 = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, b.getI32Type(), v);
  };
  SparseListRow row;
  auto [numPartial, partialRow] = readRow("");
  row.numPartial = toI32(numPartial);
  row.partialRow = toI32(partialRow);
  if (lists.fullBlocks) {
    auto [numFull, fullRow] = readRow("full_");
    row.numFull = toI32(numFull);
    row.fullRow = toI32(fullRow);
  } else {
    row.numFull = arith::ConstantIntOp::create(b, b.getI32Type(), 0);
    row.fullRow = row.numFull;
  }
  return row;
}

Value mlir::flash::sparseBlockAt(ImplicitLocOpBuilder &b,
                                 const llvm::StringMap<Value> &arg,
                                 const SparseLists &lists,
                                 const SparseListRow &row, Value position,
                                 Value seqLen) {
  int64_t r = lists.listedBlock / lists.kernelBlock;
  std::string family = lists.family.str();
  Value entry = position, sub;
  if (r > 1) {
    entry = arith::DivUIOp::create(b, position, cIndex(b, r));
    sub = arith::RemUIOp::create(b, position, cIndex(b, r));
  }
  Type idx = b.getIndexType();
  auto asIndex = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, idx, v);
  };
  Value numPartial = asIndex(row.numPartial);
  Value total = asIndex(arith::AddIOp::create(b, row.numPartial, row.numFull));
  Value inWalk =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, entry, total);
  // Entries are read only inside the walk: a row may have no slot at all.
  auto ifWalk = scf::IfOp::create(b, TypeRange{idx}, inWalk, true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifWalk.getThenRegion().front());
    Value kb;
    auto partialEntry = [&] {
      return loadEntry(b, arg, family + "_indices",
                       arith::AddIOp::create(b, asIndex(row.partialRow),
                                             entry));
    };
    if (!lists.fullBlocks) {
      kb = partialEntry();
    } else {
      Value isPartial = arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                              entry, numPartial);
      auto ifPartial = scf::IfOp::create(b, TypeRange{idx}, isPartial, true);
      {
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(&ifPartial.getThenRegion().front());
        scf::YieldOp::create(b, partialEntry());
        b.setInsertionPointToStart(&ifPartial.getElseRegion().front());
        Value fullEntry = arith::SubIOp::create(b, entry, numPartial);
        scf::YieldOp::create(
            b, loadEntry(b, arg, "full_" + family + "_indices",
                         arith::AddIOp::create(b, asIndex(row.fullRow),
                                               fullEntry)));
      }
      kb = ifPartial.getResult(0);
    }
    scf::YieldOp::create(b, kb);
    b.setInsertionPointToStart(&ifWalk.getElseRegion().front());
    scf::YieldOp::create(b, cIndex(b, -1));
  }
  Value kb = ifWalk.getResult(0);
  // A listed index outside [0, KB) (and the -1 past the walk) visits the
  // block past the last key (row, for the transposed lists).
  Value keyBlocks =
      arith::CeilDivUIOp::create(b, seqLen, cIndex(b, lists.listedBlock));
  Value pastEnd =
      arith::CeilDivUIOp::create(b, seqLen, cIndex(b, lists.kernelBlock));
  Value nonNegative =
      arith::CmpIOp::create(b, arith::CmpIPredicate::sge, kb, cIndex(b, 0));
  Value belowEnd =
      arith::CmpIOp::create(b, arith::CmpIPredicate::slt, kb, keyBlocks);
  Value valid = arith::AndIOp::create(b, nonNegative, belowEnd);
  Value block = kb;
  if (r > 1) {
    Value first = arith::MulIOp::create(b, kb, cIndex(b, r));
    block = arith::AddIOp::create(b, first, sub);
  }
  return arith::SelectOp::create(b, valid, block, pastEnd);
}

Value mlir::flash::sparseWalkLength(ImplicitLocOpBuilder &b,
                                    const SparseListRow &row,
                                    int64_t stepsPerEntry) {
  Value entries = arith::IndexCastOp::create(
      b, b.getIndexType(),
      arith::AddIOp::create(b, row.numPartial, row.numFull));
  return arith::MulIOp::create(b, entries, cIndex(b, stepsPerEntry));
}

Value mlir::flash::sparseStepIsPartial(ImplicitLocOpBuilder &b,
                                       const SparseListRow &row,
                                       Value position, int64_t stepsPerEntry) {
  Value partialEntries =
      arith::IndexCastOp::create(b, b.getIndexType(), row.numPartial);
  Value partialSteps =
      arith::MulIOp::create(b, partialEntries, cIndex(b, stepsPerEntry));
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, position,
                               partialSteps);
}
