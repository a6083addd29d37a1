//===- SplitMerge.cpp - merge split-KV partial rows by their LSE ----------===//
#include "SplitMerge.h"

#include "Fragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

/// Σ or max of `init` combined with f(s, r) over the lane's splits
/// s = lane, lane + 32, ..., then over the warp, for each row r.
SmallVector<Value> reduceOverSplits(ImplicitLocOpBuilder &b, Value lane,
                                    Value numSplits, int64_t numRows,
                                    Value init, bool isMax,
                                    function_ref<Value(Value, int64_t)> term) {
  SmallVector<Value> inits(numRows, init);
  auto loop = scf::ForOp::create(b, lane, numSplits, cIdx(b, 32), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> next;
    for (int64_t r = 0; r < numRows; ++r) {
      Value acc = loop.getRegionIterArgs()[r];
      Value v = term(loop.getInductionVar(), r);
      next.push_back(isMax ? Value(arith::MaximumFOp::create(b, acc, v))
                           : Value(arith::AddFOp::create(b, acc, v)));
    }
    scf::YieldOp::create(b, next);
  }
  SmallVector<Value> out;
  for (Value v : loop.getResults())
    out.push_back(isMax ? warpReduceMax(b, v) : warpReduceSum(b, v));
  return out;
}

} // namespace

LseMerge::LseMerge(ImplicitLocOpBuilder &b, Value maxLse) {
  empty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, maxLse,
                                cF32(b, -INFINITY));
  shift = arith::SelectOp::create(b, empty, cF32(b, 0.0f), maxLse);
}

Value LseMerge::weight(ImplicitLocOpBuilder &b, Value lseS) const {
  return exp2Approx(
      b, arith::MulFOp::create(b, arith::SubFOp::create(b, lseS, shift),
                               cF32(b, float(M_LOG2E))));
}

Value LseMerge::inverseSum(ImplicitLocOpBuilder &b, Value sum) const {
  return arith::SelectOp::create(b, empty, cF32(b, 0.0f),
                                 arith::DivFOp::create(b, cF32(b, 1.0f), sum));
}

Value LseMerge::lse(ImplicitLocOpBuilder &b, Value maxLse, Value sum) const {
  return arith::SelectOp::create(
      b, empty, cF32(b, INFINITY),
      arith::AddFOp::create(
          b, maxLse,
          arith::MulFOp::create(b, log2Approx(b, sum), cF32(b, float(M_LN2)))));
}

SmallVector<MergedRow>
mlir::flash::mergeSplitRows(ImplicitLocOpBuilder &b, Value lane,
                            ArrayRef<Value> rowIds, Value rows, Value numSplits,
                            Value lsePartial, Value oPartial, int64_t headDimV,
                            int64_t unroll) {
  int64_t numRows = rowIds.size();
  auto partialLse = [&](Value split, int64_t r) {
    return memref::LoadOp::create(
        b, lsePartial,
        ValueRange{arith::AddIOp::create(
            b, arith::MulIOp::create(b, split, rows), rowIds[r])});
  };
  // Lane l sums columns l, l + 32, ... of each row over the splits,
  // `unroll` splits at a time: their loads are independent, so that many
  // are in flight at once (one at a time, a row's merge is a chain of
  // dependent L2 round trips, as long as the decode itself at B = 1).
  int64_t perLane = (headDimV + 31) / 32;
  // The O columns of splits [first, first + unroll) (splits past the last
  // read split 0), [u * numRows + r][k], and whether each split exists.
  struct Chunk {
    SmallVector<Value> inRange, split;
    SmallVector<SmallVector<Value>> parts;
  };
  auto loadChunk = [&](Value first) {
    Chunk c;
    for (int64_t u = 0; u < unroll; ++u) {
      Value split = arith::AddIOp::create(b, first, cIdx(b, u));
      c.inRange.push_back(arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                                split, numSplits));
      c.split.push_back(
          arith::SelectOp::create(b, c.inRange.back(), split, cIdx(b, 0)));
      for (int64_t r = 0; r < numRows; ++r) {
        Value base = arith::MulIOp::create(
            b,
            arith::AddIOp::create(
                b, arith::MulIOp::create(b, c.split.back(), rows), rowIds[r]),
            cIdx(b, headDimV));
        c.parts.emplace_back();
        for (int64_t k = 0; k < perLane; ++k) {
          // Columns past Dv (Dv not a multiple of 32) read column 0, unused.
          Value col = arith::AddIOp::create(b, lane, cIdx(b, 32 * k));
          if (32 * (k + 1) > headDimV)
            col = arith::SelectOp::create(
                b,
                arith::CmpIOp::create(b, arith::CmpIPredicate::ult, col,
                                      cIdx(b, headDimV)),
                col, cIdx(b, 0));
          c.parts.back().push_back(memref::LoadOp::create(
              b, oPartial, ValueRange{arith::AddIOp::create(b, base, col)}));
        }
      }
    }
    return c;
  };
  // The first chunk's columns are loaded before the LSE reductions: they
  // do not depend on them, so their L2 round trip overlaps the LSEs'
  // instead of following it (a merge of up to `unroll` splits is then one
  // round trip for its data).
  Chunk firstChunk = loadChunk(cIdx(b, 0));

  SmallVector<Value> maxLse =
      reduceOverSplits(b, lane, numSplits, numRows, cF32(b, -INFINITY),
                       /*isMax=*/true, partialLse);
  SmallVector<LseMerge> rowMerge;
  for (int64_t r = 0; r < numRows; ++r)
    rowMerge.emplace_back(b, maxLse[r]);
  SmallVector<Value> sum =
      reduceOverSplits(b, lane, numSplits, numRows, cF32(b, 0.0f),
                       /*isMax=*/false, [&](Value split, int64_t r) {
                         return rowMerge[r].weight(b, partialLse(split, r));
                       });
  SmallVector<MergedRow> merged(numRows);
  SmallVector<Value> invSum;
  for (int64_t r = 0; r < numRows; ++r) {
    merged[r].lse = rowMerge[r].lse(b, maxLse[r], sum[r]);
    invSum.push_back(rowMerge[r].inverseSum(b, sum[r]));
  }

  // acc += each split's weight times its columns, for one chunk.
  auto accumulate = [&](SmallVector<Value> &acc, const Chunk &c) {
    for (int64_t u = 0; u < unroll; ++u)
      for (int64_t r = 0; r < numRows; ++r) {
        Value weight = arith::SelectOp::create(
            b, c.inRange[u],
            arith::MulFOp::create(
                b, rowMerge[r].weight(b, partialLse(c.split[u], r)), invSum[r]),
            cF32(b, 0.0f));
        for (int64_t k = 0; k < perLane; ++k) {
          Value &a = acc[r * perLane + k];
          a = arith::AddFOp::create(
              b, a,
              arith::MulFOp::create(b, weight, c.parts[u * numRows + r][k]));
        }
      }
  };
  SmallVector<Value> acc(numRows * perLane, cF32(b, 0.0f));
  accumulate(acc, firstChunk);
  auto loop =
      scf::ForOp::create(b, cIdx(b, unroll), numSplits, cIdx(b, unroll), acc);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> next(loop.getRegionIterArgs());
    accumulate(next, loadChunk(loop.getInductionVar()));
    scf::YieldOp::create(b, next);
  }
  for (int64_t r = 0; r < numRows; ++r)
    merged[r].columns.assign(loop.getResults().begin() + r * perLane,
                             loop.getResults().begin() + (r + 1) * perLane);
  return merged;
}

MergedQuad mlir::flash::mergeSplitQuad(ImplicitLocOpBuilder &b, Value row,
                                       Value col, Value rows, Value first,
                                       Value stride, Value numSplits,
                                       Value lsePartial, Value oPartial,
                                       int64_t headDimV, int64_t unroll) {
  auto f32x4 = VectorType::get({4}, b.getF32Type());
  Value negInf = cF32(b, -INFINITY);
  auto broadcast = [&](Value x) {
    return vector::BroadcastOp::create(b, f32x4, x);
  };
  // State: the largest LSE so far m, and Σ w_s, Σ w_s O_s with the weights
  // w_s = exp(lse_s - m) relative to it (LseMerge's shift: 0 while every
  // split seen was empty, so no -inf - -inf).
  auto loop = scf::ForOp::create(
      b, cIdx(b, 0), numSplits, cIdx(b, unroll),
      ValueRange{negInf, cF32(b, 0.0f),
                 arith::ConstantOp::create(
                     b, f32x4, DenseElementsAttr::get(f32x4, 0.0f))});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value m = loop.getRegionIterArgs()[0], sum = loop.getRegionIterArgs()[1],
          acc = loop.getRegionIterArgs()[2];
    // Splits past the last read the first's rows (always written) and
    // weigh 0: every load of the chunk is independent of the others.
    SmallVector<Value> lses, parts;
    for (int64_t u = 0; u < unroll; ++u) {
      Value nth = arith::AddIOp::create(b, loop.getInductionVar(), cIdx(b, u));
      Value inRange =
          arith::CmpIOp::create(b, arith::CmpIPredicate::ult, nth, numSplits);
      Value split = arith::AddIOp::create(
          b, first,
          arith::MulIOp::create(
              b, arith::SelectOp::create(b, inRange, nth, cIdx(b, 0)),
              stride));
      Value partialRow = arith::AddIOp::create(
          b, arith::MulIOp::create(b, split, rows), row);
      lses.push_back(arith::SelectOp::create(
          b, inRange,
          memref::LoadOp::create(b, lsePartial, ValueRange{partialRow}),
          negInf));
      parts.push_back(vector::LoadOp::create(
          b, f32x4, oPartial,
          ValueRange{arith::AddIOp::create(
              b, arith::MulIOp::create(b, partialRow, cIdx(b, headDimV)),
              col)},
          /*nontemporal=*/false, llvm::Align(16)));
    }
    Value newMax = m;
    for (Value l : lses)
      newMax = arith::MaximumFOp::create(b, newMax, l);
    LseMerge shifted(b, newMax);
    // The sums so far, from m's shift to the new one.
    Value rescale = shifted.weight(b, m);
    sum = arith::MulFOp::create(b, sum, rescale);
    acc = arith::MulFOp::create(b, acc, broadcast(rescale));
    for (int64_t u = 0; u < unroll; ++u) {
      Value w = shifted.weight(b, lses[u]);
      sum = arith::AddFOp::create(b, sum, w);
      acc = arith::AddFOp::create(
          b, acc, arith::MulFOp::create(b, broadcast(w), parts[u]));
    }
    scf::YieldOp::create(b, ValueRange{newMax, sum, acc});
  }
  Value maxLse = loop.getResult(0), sum = loop.getResult(1);
  LseMerge rowMerge(b, maxLse);
  MergedQuad merged;
  merged.lse = rowMerge.lse(b, maxLse, sum);
  merged.columns = arith::MulFOp::create(
      b, loop.getResult(2), broadcast(rowMerge.inverseSum(b, sum)));
  return merged;
}

void mlir::flash::storeMergedRow(ImplicitLocOpBuilder &b,
                                 const MergedRow &merged, Value lane, Value out,
                                 Value oRow, Value lse, Value row,
                                 Type elementType, int64_t headDimV) {
  int64_t perLane = (headDimV + 31) / 32;
  for (int64_t k = 0; k < perLane; ++k) {
    Value col = arith::AddIOp::create(b, lane, cIdx(b, 32 * k));
    OpBuilder::InsertionGuard guard(b);
    if (32 * (k + 1) > headDimV) {
      auto ifCol =
          scf::IfOp::create(b, TypeRange{},
                            arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                                  col, cIdx(b, headDimV)),
                            false);
      b.setInsertionPointToStart(&ifCol.getThenRegion().front());
    }
    Value v = arith::TruncFOp::create(b, elementType, merged.columns[k]);
    memref::StoreOp::create(b, v, out,
                            ValueRange{arith::AddIOp::create(b, oRow, col)});
  }
  OpBuilder::InsertionGuard guard(b);
  Value isLeader =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, cIdx(b, 0));
  auto ifLead = scf::IfOp::create(b, TypeRange{}, isLeader, false);
  b.setInsertionPointToStart(&ifLead.getThenRegion().front());
  memref::StoreOp::create(b, merged.lse, lse, ValueRange{row});
}
