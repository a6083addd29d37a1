//===- DocumentLists.cpp - block lists of a runtime document mask ---------===//
//
// For query block qb with ids in [qmin, qmax] and key block kb with ids in
// [kmin, kmax]:
//   - disjoint ranges: no (i, j) of the block has equal ids, so the
//     document term masks all of it: skipped;
//   - qmin = qmax = kmin = kmax: every (i, j) has equal ids, so the block is
//     as the index-only terms make it (full where they keep it whole);
//   - otherwise partial (the kernels evaluate the mask_mod).
// A block the index-only terms or the band mask entirely is skipped
// whatever the ids. Each verdict holds for every (i, j) of the block, so the
// lists describe the mask exactly as FlashOps.td's contract requires.
//
// The lists are built by loops over (batch row, qb, kb), kb innermost, so each
// row is sorted; a row has at most KB entries, so KB slots always suffice.
// Each step writes kb at the row's next free slot of both lists and only
// advances the count of the list it belongs to: slots below a count are
// never rewritten, slots past it hold stale (in-range) indices, which the
// contract ignores. This keeps the loop body free of branches.
//
//===----------------------------------------------------------------------===//
#include "DocumentLists.h"

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::flash;

namespace {

/// `t` when `v` is `tensor.extract %t[index]` of a rank-1 integer tensor,
/// or `tensor.extract %t[batchIdx, index]` of a rank-2 one with `batch`
/// rows, of at least `minSize` static elements per row, defined above
/// `region` and not a constant.
Value idsRead(Value v, Value batchIdx, int64_t batch, Value index,
              int64_t minSize, Region &region) {
  auto extract = v.getDefiningOp<tensor::ExtractOp>();
  if (!extract || extract.getIndices().empty() ||
      extract.getIndices().back() != index)
    return {};
  Value t = extract.getTensor();
  auto type = cast<RankedTensorType>(t.getType());
  bool perBatch = type.getRank() == 2 && !ShapedType::isDynamic(batch) &&
                  type.getDimSize(0) == batch &&
                  extract.getIndices()[0] == batchIdx;
  if ((type.getRank() != 1 && !perBatch) ||
      type.isDynamicDim(type.getRank() - 1) ||
      type.getDimSize(type.getRank() - 1) < minSize ||
      !isa<IntegerType>(type.getElementType()) ||
      region.isAncestor(t.getParentRegion()) || matchPattern(t, m_Constant()))
    return {};
  return t;
}

Value index(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// Each block's smallest and largest id: two tensor<rows x nBlocks x elt>
/// for the first `seq` ids of each row of `ids` (rank 1: one row) in
/// blocks of `block` (the last one short).
std::pair<Value, Value> blockRanges(OpBuilder &b, Location loc, Value ids,
                                    int64_t seq, int64_t block) {
  auto idsType = cast<RankedTensorType>(ids.getType());
  bool perBatch = idsType.getRank() == 2;
  int64_t rows = perBatch ? idsType.getDimSize(0) : 1;
  int64_t nBlocks = llvm::divideCeil(seq, block);
  Type elt = idsType.getElementType();
  Value empty =
      tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{rows, nBlocks}, elt);
  Value c0 = index(b, loc, 0), c1 = index(b, loc, 1);
  auto byRow = scf::ForOp::create(
      b, loc, c0, index(b, loc, rows), c1, ValueRange{empty, empty},
      [&](OpBuilder &b, Location loc, Value row, ValueRange rowAcc) {
        auto at = [&](Value t) -> SmallVector<Value, 2> {
          if (perBatch)
            return {row, t};
          return {t};
        };
        auto byBlock = scf::ForOp::create(
            b, loc, c0, index(b, loc, nBlocks), c1, rowAcc,
            [&](OpBuilder &b, Location loc, Value blk, ValueRange acc) {
              Value lo =
                  arith::MulIOp::create(b, loc, blk, index(b, loc, block));
              Value hi = arith::MinSIOp::create(
                  b, loc,
                  arith::AddIOp::create(b, loc, lo, index(b, loc, block)),
                  index(b, loc, seq));
              Value first = tensor::ExtractOp::create(b, loc, ids, at(lo));
              Value next = arith::AddIOp::create(b, loc, lo, c1);
              auto scan = scf::ForOp::create(
                  b, loc, next, hi, c1, ValueRange{first, first},
                  [&](OpBuilder &b, Location loc, Value t, ValueRange mm) {
                    Value x = tensor::ExtractOp::create(b, loc, ids, at(t));
                    scf::YieldOp::create(
                        b, loc,
                        ValueRange{arith::MinSIOp::create(b, loc, mm[0], x),
                                   arith::MaxSIOp::create(b, loc, mm[1], x)});
                  });
              Value mins = tensor::InsertOp::create(
                  b, loc, scan.getResult(0), acc[0], ValueRange{row, blk});
              Value maxs = tensor::InsertOp::create(
                  b, loc, scan.getResult(1), acc[1], ValueRange{row, blk});
              scf::YieldOp::create(b, loc, ValueRange{mins, maxs});
            });
        scf::YieldOp::create(b, loc, byBlock.getResults());
      });
  return {byRow.getResult(0), byRow.getResult(1)};
}

} // namespace

std::optional<DocumentMask> mlir::flash::matchDocumentMask(Region &maskMod,
                                                           int64_t batch,
                                                           int64_t seqQ,
                                                           int64_t seqK) {
  if (!maskMod.hasOneBlock() || maskMod.front().getNumArguments() != 4)
    return std::nullopt;
  Block &body = maskMod.front();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield || yield.getValues().size() != 1)
    return std::nullopt;
  // The leaves of the `and` tree the region yields.
  SmallVector<Value> leaves, work{yield.getValues()[0]};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    auto andOp = v.getDefiningOp<arith::AndIOp>();
    if (andOp && andOp->getParentRegion() == &maskMod) {
      work.push_back(andOp.getRhs());
      work.push_back(andOp.getLhs());
      continue;
    }
    leaves.push_back(v);
  }
  Value bIdx = body.getArgument(0);
  Value qIdx = body.getArgument(2), kIdx = body.getArgument(3);
  DocumentMask doc;
  for (Value leaf : leaves) {
    auto cmp = leaf.getDefiningOp<arith::CmpIOp>();
    if (!doc.queryIds && cmp &&
        cmp.getPredicate() == arith::CmpIPredicate::eq) {
      for (auto [qSide, kSide] : {std::pair(cmp.getLhs(), cmp.getRhs()),
                                  std::pair(cmp.getRhs(), cmp.getLhs())}) {
        Value q = idsRead(qSide, bIdx, batch, qIdx, seqQ, maskMod);
        Value k = idsRead(kSide, bIdx, batch, kIdx, seqK, maskMod);
        // Both per batch or neither.
        if (q && k &&
            cast<RankedTensorType>(q.getType()).getRank() ==
                cast<RankedTensorType>(k.getType()).getRank()) {
          doc.queryIds = q;
          doc.keyIds = k;
          break;
        }
      }
      if (doc.queryIds)
        continue;
    }
    doc.rest.push_back(leaf);
  }
  if (!doc.queryIds)
    return std::nullopt;
  if (cast<RankedTensorType>(doc.queryIds.getType()).getRank() == 2)
    doc.batch = batch;
  return doc;
}

std::array<Value, 4>
mlir::flash::buildDocumentLists(OpBuilder &b, Location loc,
                                const DocumentMask &doc,
                                ArrayRef<StaticBlock> classes, int64_t seqQ,
                                int64_t seqK, int64_t bq, int64_t bk) {
  int64_t qBlocks = llvm::divideCeil(seqQ, bq);
  int64_t kBlocks = llvm::divideCeil(seqK, bk);
  auto [qMin, qMax] = blockRanges(b, loc, doc.queryIds, seqQ, bq);
  auto [kMin, kMax] = blockRanges(b, loc, doc.keyIds, seqK, bk);

  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  auto classType = RankedTensorType::get({qBlocks, kBlocks}, i8);
  SmallVector<int8_t> classBytes;
  for (StaticBlock c : classes)
    classBytes.push_back(int8_t(c));
  Value classTable = arith::ConstantOp::create(
      b, loc, classType,
      DenseElementsAttr::get(classType, ArrayRef<int8_t>(classBytes)));
  int64_t nb = doc.batch ? doc.batch : 1;
  auto numType = RankedTensorType::get({nb, 1, qBlocks}, i32);
  auto idxType = RankedTensorType::get({nb, 1, qBlocks, kBlocks}, i32);
  Value zeroNum = arith::ConstantOp::create(
      b, loc, numType, DenseElementsAttr::get(numType, int32_t(0)));
  Value zeroIdx = arith::ConstantOp::create(
      b, loc, idxType, DenseElementsAttr::get(idxType, int32_t(0)));
  Value c0 = index(b, loc, 0), c1 = index(b, loc, 1);

  // One row of lists per batch (per-batch ids) or one for all.
  auto batches = scf::ForOp::create(
      b, loc, c0, index(b, loc, nb), c1,
      ValueRange{zeroNum, zeroIdx, zeroNum, zeroIdx},
      [&](OpBuilder &b, Location loc, Value bi, ValueRange batchLists) {
        auto rows = scf::ForOp::create(
            b, loc, c0, index(b, loc, qBlocks), c1, batchLists,
            [&](OpBuilder &b, Location loc, Value qb, ValueRange lists) {
              Value qlo =
                  tensor::ExtractOp::create(b, loc, qMin, ValueRange{bi, qb});
              Value qhi =
                  tensor::ExtractOp::create(b, loc, qMax, ValueRange{bi, qb});
              Value zero32 = arith::ConstantIntOp::create(b, loc, i32, 0);
              auto cols = scf::ForOp::create(
                  b, loc, c0, index(b, loc, kBlocks), c1,
                  ValueRange{zero32, zero32, lists[1], lists[3]},
                  [&](OpBuilder &b, Location loc, Value kb, ValueRange st) {
                    using P = arith::CmpIPredicate;
                    auto cmp = [&](P p, Value x, Value y) -> Value {
                      return arith::CmpIOp::create(b, loc, p, x, y);
                    };
                    Value klo = tensor::ExtractOp::create(b, loc, kMin,
                                                          ValueRange{bi, kb});
                    Value khi = tensor::ExtractOp::create(b, loc, kMax,
                                                          ValueRange{bi, kb});
                    Value cls = tensor::ExtractOp::create(b, loc, classTable,
                                                          ValueRange{qb, kb});
                    Value disjoint = arith::OrIOp::create(
                        b, loc, cmp(P::slt, qhi, klo), cmp(P::slt, khi, qlo));
                    auto isClass = [&](StaticBlock c) {
                      return cmp(
                          P::eq, cls,
                          arith::ConstantIntOp::create(b, loc, i8, int(c)));
                    };
                    auto negate = [&](Value v) -> Value {
                      return arith::XOrIOp::create(
                          b, loc, v,
                          arith::ConstantIntOp::create(b, loc, 1, 1));
                    };
                    Value skip = arith::OrIOp::create(
                        b, loc, disjoint, isClass(StaticBlock::Skipped));
                    Value oneId = arith::AndIOp::create(
                        b, loc,
                        arith::AndIOp::create(b, loc, cmp(P::eq, qlo, qhi),
                                              cmp(P::eq, klo, khi)),
                        cmp(P::eq, qlo, klo));
                    Value full = arith::AndIOp::create(
                        b, loc, oneId, isClass(StaticBlock::Full));
                    Value partial = arith::AndIOp::create(b, loc, negate(skip),
                                                          negate(full));
                    Value kb32 = arith::IndexCastOp::create(b, loc, i32, kb);
                    auto slot = [&](Value n) -> Value {
                      return arith::IndexCastOp::create(b, loc,
                                                        b.getIndexType(), n);
                    };
                    Value pIdx = tensor::InsertOp::create(
                        b, loc, kb32, st[2],
                        ValueRange{bi, c0, qb, slot(st[0])});
                    Value fIdx = tensor::InsertOp::create(
                        b, loc, kb32, st[3],
                        ValueRange{bi, c0, qb, slot(st[1])});
                    Value np = arith::AddIOp::create(
                        b, loc, st[0],
                        arith::ExtUIOp::create(b, loc, i32, partial));
                    Value nf = arith::AddIOp::create(
                        b, loc, st[1],
                        arith::ExtUIOp::create(b, loc, i32, full));
                    scf::YieldOp::create(b, loc,
                                         ValueRange{np, nf, pIdx, fIdx});
                  });
              Value pNum = tensor::InsertOp::create(
                  b, loc, cols.getResult(0), lists[0], ValueRange{bi, c0, qb});
              Value fNum = tensor::InsertOp::create(
                  b, loc, cols.getResult(1), lists[2], ValueRange{bi, c0, qb});
              scf::YieldOp::create(
                  b, loc,
                  ValueRange{pNum, cols.getResult(2), fNum, cols.getResult(3)});
            });
        scf::YieldOp::create(b, loc, rows.getResults());
      });
  return {batches.getResult(0), batches.getResult(1), batches.getResult(2),
          batches.getResult(3)};
}
