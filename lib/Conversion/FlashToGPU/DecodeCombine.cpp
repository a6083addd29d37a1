//===- DecodeCombine.cpp - merge split-KV partial results by their LSE -----===//
//
// decode_combine (docs/KERNEL_ABI.md, "Decode"): one warp per output row
// (b, h, i) of [B, Hq, Sq]. Split s left O_s (f32, normalised by its own
// row sum) and lse_s; the row's
//   lse = log Σ_s exp(lse_s),   O = Σ_s exp(lse_s - lse) · O_s,
// with -inf for a split that saw no key (weight 0) and, when every split is
// empty, O = 0 and lse = +inf as the op's contract says. The lanes share
// the splits for the two reductions, then the columns for the sum of the
// O_s: each partial row is read once, coalesced.
//
//===----------------------------------------------------------------------===//
#include "Fragments.h"
#include "KernelBuilderBase.h"
#include "Recipes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

class DecodeCombineBuilder : protected KernelBuilderBase {
public:
  DecodeCombineBuilder(gpu::GPUFuncOp func, const KernelSpec &spec)
      : KernelBuilderBase(func, spec) {}
  void build();

private:
  /// Σ or max of `init` combined with f(s) over the lane's splits
  /// s = lane, lane + 32, ..., then over the warp.
  Value reduceOverSplits(Value init, bool isMax,
                         function_ref<Value(Value split)> term);
  Value numSplits, rows, row;
};

Value DecodeCombineBuilder::reduceOverSplits(
    Value init, bool isMax, function_ref<Value(Value split)> term) {
  auto loop = scf::ForOp::create(b, lane, numSplits, cIdx(b, 32),
                                 ValueRange{init});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value acc = loop.getRegionIterArgs()[0];
    Value v = term(loop.getInductionVar());
    scf::YieldOp::create(
        b, isMax ? Value(arith::MaximumFOp::create(b, acc, v))
                 : Value(arith::AddFOp::create(b, acc, v)));
  }
  return isMax ? warpReduceMax(b, loop.getResult(0))
               : warpReduceSum(b, loop.getResult(0));
}

void DecodeCombineBuilder::build() {
  bindArguments();
  setThreadCoordinates(gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  numSplits = idx("num_splits");
  Value headsQ = idx("heads_q"), seqQ = idx("seq_q");
  rows = arith::MulIOp::create(
      b, arith::MulIOp::create(b, idx("batch"), headsQ), seqQ);
  row = arith::AddIOp::create(
      b,
      arith::MulIOp::create(b, gpu::BlockIdOp::create(b, gpu::Dimension::x),
                            cIdx(b, s.warps)),
      warp);
  Value inRange =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row, rows);
  auto ifRow = scf::IfOp::create(b, TypeRange{}, inRange, false);
  b.setInsertionPointToStart(&ifRow.getThenRegion().front());

  Value lsePartial = arg.lookup("lse_partial");
  auto partialLse = [&](Value split) {
    return memref::LoadOp::create(
        b, lsePartial,
        ValueRange{arith::AddIOp::create(
            b, arith::MulIOp::create(b, split, rows), row)});
  };
  Value negInf = cF32(b, -INFINITY), log2e = cF32(b, float(M_LOG2E));
  Value maxLse = reduceOverSplits(negInf, /*isMax=*/true, partialLse);
  Value empty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, maxLse,
                                      negInf);
  // Subtract 0 rather than -inf from an empty row's -inf: exp2 sees -inf.
  Value shift = arith::SelectOp::create(b, empty, cF32(b, 0.0f), maxLse);
  auto weightOf = [&](Value lseS) {
    return exp2Approx(b, arith::MulFOp::create(
                             b, arith::SubFOp::create(b, lseS, shift), log2e));
  };
  Value sum = reduceOverSplits(cF32(b, 0.0f), /*isMax=*/false,
                               [&](Value split) { return weightOf(partialLse(split)); });
  // lse = max + ln(sum); the weights below are exp(lse_s - lse), i.e.
  // exp(lse_s - max) / sum.
  Value lse = arith::SelectOp::create(
      b, empty, cF32(b, INFINITY),
      arith::AddFOp::create(
          b, maxLse,
          arith::MulFOp::create(b, log2Approx(b, sum), cF32(b, float(M_LN2)))));
  Value invSum = arith::SelectOp::create(
      b, empty, cF32(b, 0.0f), arith::DivFOp::create(b, cF32(b, 1.0f), sum));

  // Lane l sums columns l, l + 32, ... of the row over the splits,
  // kUnroll splits per iteration: their loads are independent, so that
  // many are in flight at once (one at a time, a row's merge is a chain of
  // dependent L2 round trips, as long as the decode itself at B = 1).
  constexpr int64_t kUnroll = 8;
  int64_t perLane = (s.headDimV + 31) / 32;
  SmallVector<Value> zeros(perLane, cF32(b, 0.0f));
  auto loop = scf::ForOp::create(b, cIdx(b, 0), numSplits, cIdx(b, kUnroll),
                                 zeros);
  Value outPartial = arg.lookup("o_partial");
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> acc(loop.getRegionIterArgs());
    SmallVector<Value> weights;
    SmallVector<SmallVector<Value>> parts;
    for (int64_t u = 0; u < kUnroll; ++u) {
      // Splits past the last read split 0 and weigh 0.
      Value split = arith::AddIOp::create(b, loop.getInductionVar(), cIdx(b, u));
      Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                            split, numSplits);
      split = arith::SelectOp::create(b, inRange, split, cIdx(b, 0));
      weights.push_back(arith::SelectOp::create(
          b, inRange,
          arith::MulFOp::create(b, weightOf(partialLse(split)), invSum),
          cF32(b, 0.0f)));
      Value base = arith::MulIOp::create(
          b,
          arith::AddIOp::create(b, arith::MulIOp::create(b, split, rows), row),
          cIdx(b, s.headDimV));
      parts.emplace_back();
      for (int64_t k = 0; k < perLane; ++k) {
        // Columns past Dv (Dv not a multiple of 32) read column 0, unused.
        Value col = arith::AddIOp::create(b, lane, cIdx(b, 32 * k));
        if (32 * (k + 1) > s.headDimV)
          col = arith::SelectOp::create(
              b,
              arith::CmpIOp::create(b, arith::CmpIPredicate::ult, col,
                                    cIdx(b, s.headDimV)),
              col, cIdx(b, 0));
        parts.back().push_back(memref::LoadOp::create(
            b, outPartial, ValueRange{arith::AddIOp::create(b, base, col)}));
      }
    }
    for (int64_t u = 0; u < kUnroll; ++u)
      for (int64_t k = 0; k < perLane; ++k)
        acc[k] = arith::AddFOp::create(
            b, acc[k], arith::MulFOp::create(b, weights[u], parts[u][k]));
    scf::YieldOp::create(b, acc);
  }

  // Row -> (batch, head, position) of O, in Q's layout.
  Value position = arith::RemUIOp::create(b, row, seqQ);
  Value rest = arith::DivUIOp::create(b, row, seqQ);
  Value h = arith::RemUIOp::create(b, rest, headsQ);
  batchIdx = arith::DivUIOp::create(b, rest, headsQ);
  Value oRow = arith::AddIOp::create(
      b, operandBase("o", h),
      arith::MulIOp::create(b, position, idx("o_stride_s")));
  Value out = arg.lookup("o");
  for (int64_t k = 0; k < perLane; ++k) {
    Value col = arith::AddIOp::create(b, lane, cIdx(b, 32 * k));
    OpBuilder::InsertionGuard guard(b);
    if (32 * (k + 1) > s.headDimV) {
      auto ifCol = scf::IfOp::create(
          b, TypeRange{},
          arith::CmpIOp::create(b, arith::CmpIPredicate::ult, col,
                                cIdx(b, s.headDimV)),
          false);
      b.setInsertionPointToStart(&ifCol.getThenRegion().front());
    }
    Value v = arith::TruncFOp::create(b, s.elementType, loop.getResult(k));
    memref::StoreOp::create(b, v, out,
                            ValueRange{arith::AddIOp::create(b, oRow, col)});
  }
  Value isLeader =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, cIdx(b, 0));
  auto ifLead = scf::IfOp::create(b, TypeRange{}, isLeader, false);
  b.setInsertionPointToStart(&ifLead.getThenRegion().front());
  memref::StoreOp::create(b, lse, arg.lookup("lse"), ValueRange{row});

  b.setInsertionPointAfter(ifRow);
  gpu::ReturnOp::create(b);
}

} // namespace

void mlir::flash::buildDecodeCombineKernel(gpu::GPUFuncOp func,
                                           const KernelSpec &spec) {
  DecodeCombineBuilder(func, spec).build();
}
