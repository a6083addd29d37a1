//===- Sm80BackwardPreprocess.cpp - Dsum = rowsum(dO ∘ O), zero dQ --------===//
//
// The backward's per-row correction term Dsum_i = Σ_e dO[i,e] O[i,e] (f32,
// [B, Hq, Sq]), computed once before the main kernel visits any key, as
// FlashAttention-2's preprocessing does; with the atomic dQ it also zeroes
// the f32 accumulator. A warp per row: each lane reads D / 32 columns
// (coalesced), then a butterfly sum over the warp.
//
//===----------------------------------------------------------------------===//
#include "Fragments.h"
#include "KernelBuilderBase.h"
#include "Recipes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

class Sm80BackwardPreprocessBuilder : KernelBuilderBase {
public:
  Sm80BackwardPreprocessBuilder(gpu::GPUFuncOp func, const KernelSpec &spec)
      : KernelBuilderBase(func, spec) {}

  void build() {
    readArguments();
    Value rowStart = arith::MulIOp::create(
        b, gpu::BlockIdOp::create(b, gpu::Dimension::x), cIdx(b, s.blockM));
    Value oBase = operandBase("o", head), doBase = operandBase("do", head);
    Value oStride = idx("o_stride_s"), doStride = idx("do_stride_s");
    Value slice = arith::AddIOp::create(
        b, arith::MulIOp::create(b, batchIdx, headsQ), head);
    auto loop = scf::ForOp::create(b, warp, cIdx(b, s.blockM), cIdx(b, s.warps));
    b.setInsertionPointToStart(loop.getBody());
    Value row = arith::AddIOp::create(b, rowStart, loop.getInductionVar());
    auto ifRow = scf::IfOp::create(
        b, TypeRange{},
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, seqQ), false);
    b.setInsertionPointToStart(&ifRow.getThenRegion().front());
    Value oRow = arith::AddIOp::create(b, oBase, arith::MulIOp::create(b, row, oStride));
    Value doRow =
        arith::AddIOp::create(b, doBase, arith::MulIOp::create(b, row, doStride));
    Value at = arith::AddIOp::create(b, arith::MulIOp::create(b, slice, seqQ), row);
    Value sum = cF32(b, 0.0f);
    for (int64_t c = 0; c < s.headDimV / 32; ++c) {
      Value col = arith::AddIOp::create(b, lane, cIdx(b, 32 * c));
      auto load = [&](StringRef name, Value rowOff) {
        Value v = memref::LoadOp::create(
            b, arg.lookup(name), ValueRange{arith::AddIOp::create(b, rowOff, col)});
        return Value(arith::ExtFOp::create(b, b.getF32Type(), v));
      };
      sum = arith::AddFOp::create(
          b, sum, arith::MulFOp::create(b, load("o", oRow), load("do", doRow)));
    }
    for (int32_t offset : {16, 8, 4, 2, 1})
      sum = arith::AddFOp::create(
          b, sum,
          gpu::ShuffleOp::create(b, sum, offset, 32, gpu::ShuffleMode::XOR)
              .getShuffleResult());
    auto ifLead = scf::IfOp::create(
        b, TypeRange{},
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, cIdx(b, 0)), false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifLead.getThenRegion().front());
      memref::StoreOp::create(b, sum, arg.lookup("delta"), ValueRange{at});
    }
    if (!s.deterministic) {
      Value dqRow = arith::MulIOp::create(b, at, cIdx(b, s.headDim));
      for (int64_t c = 0; c < s.headDim / 32; ++c)
        memref::StoreOp::create(
            b, cF32(b, 0.0f), arg.lookup("dq_accum"),
            ValueRange{arith::AddIOp::create(
                b, dqRow, arith::AddIOp::create(b, lane, cIdx(b, 32 * c)))});
    }
    b.setInsertionPointAfter(loop);
    gpu::ReturnOp::create(b);
  }
};

} // namespace

void mlir::flash::buildSm80BackwardPreprocessKernel(gpu::GPUFuncOp func,
                                                    const KernelSpec &spec) {
  Sm80BackwardPreprocessBuilder(func, spec).build();
}
