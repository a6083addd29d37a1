//===- DecodeCombine.cpp - merge split-KV partial results by their LSE -----===//
//
// decode_combine (docs/KERNEL_ABI.md "Decode"): one warp per output row
// (b, h, i) of [B, Hq, Sq] merges the splits' partial results
// (SplitMerge.h). The decode kernels merge in their last split instead
// when launched with a split tag; this kernel serves launches without one
// (the host IR of flash-lower-to-gpu).
//
//===----------------------------------------------------------------------===//
#include "Fragments.h"
#include "KernelBuilderBase.h"
#include "Recipes.h"
#include "SplitMerge.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

class DecodeCombineBuilder : protected KernelBuilderBase {
public:
  DecodeCombineBuilder(gpu::GPUFuncOp func, const KernelSpec &spec)
      : KernelBuilderBase(func, spec) {}
  void build();
};

void DecodeCombineBuilder::build() {
  bindArguments();
  setThreadCoordinates(gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  Value numSplits = idx("num_splits");
  Value headsQ = idx("heads_q"), seqQ = idx("seq_q");
  Value rows = arith::MulIOp::create(
      b, arith::MulIOp::create(b, idx("batch"), headsQ), seqQ);
  Value row = arith::AddIOp::create(
      b,
      arith::MulIOp::create(b, gpu::BlockIdOp::create(b, gpu::Dimension::x),
                            cIdx(b, s.warps)),
      warp);
  Value inRange =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row, rows);
  auto ifRow = scf::IfOp::create(b, TypeRange{}, inRange, false);
  b.setInsertionPointToStart(&ifRow.getThenRegion().front());

  MergedRow merged =
      mergeSplitRows(b, lane, {row}, rows, numSplits,
                     arg.lookup("lse_partial"), arg.lookup("o_partial"),
                     s.headDimV, /*unroll=*/8)[0];

  // Row -> (batch, head, position) of O, in Q's layout.
  Value position = arith::RemUIOp::create(b, row, seqQ);
  Value rest = arith::DivUIOp::create(b, row, seqQ);
  Value h = arith::RemUIOp::create(b, rest, headsQ);
  batchIdx = arith::DivUIOp::create(b, rest, headsQ);
  Value oRow = arith::AddIOp::create(
      b, operandBase("o", h),
      arith::MulIOp::create(b, position, idx("o_stride_s")));
  storeMergedRow(b, merged, lane, arg.lookup("o"), oRow, arg.lookup("lse"),
                 row, s.elementType, s.headDimV);

  b.setInsertionPointAfter(ifRow);
  gpu::ReturnOp::create(b);
}

} // namespace

void mlir::flash::buildDecodeCombineKernel(gpu::GPUFuncOp func,
                                           const KernelSpec &spec) {
  DecodeCombineBuilder(func, spec).build();
}
