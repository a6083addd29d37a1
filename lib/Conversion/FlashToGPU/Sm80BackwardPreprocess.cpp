//===- Sm80BackwardPreprocess.cpp - Dsum = rowsum(dO ∘ O), zero dQ --------===//
//
// The backward's per-row correction term Dsum_i = Σ_e dO[i,e] O[i,e] (f32,
// [B, Hq, Sq]), computed once before the main kernel visits any key, as
// FlashAttention-2's preprocessing does; with the atomic dQ it also zeroes
// the f32 accumulator. Memory-bound: each thread takes one 16-byte chunk of
// a row of O and dO (8 elements; rows are 16-byte aligned, docs/KERNEL_ABI.md),
// the Dv / 8 lanes of a row sum their products with shuffles, and the same
// lanes zero the row of dq_accum with 16-byte stores (with dQ tiles,
// KernelSpec::dqTiles, the block zeroes its query block's whole tile, rows
// past Sq included: the main kernel adds all of it).
//
//===----------------------------------------------------------------------===//
#include "Fragments.h"
#include "KernelBuilderBase.h"
#include "Recipes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

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
    // Lanes per row: Dv / 8 rounded up to a power of two (the shuffle
    // tree's width; D = 96 leaves 4 of 16 idle), or D / 8 where D > Dv,
    // as the same lanes zero dq_accum's D columns; rows a pass covers.
    int64_t lanesPerRow =
        llvm::PowerOf2Ceil(std::max(s.headDim, s.headDimV) / 8);
    int64_t rowsPerPass = s.threads() / lanesPerRow;
    int64_t passes = llvm::divideCeil(s.blockM, rowsPerPass);
    Value chunk = arith::RemUIOp::create(b, tid, cIdx(b, lanesPerRow));
    Value rowInPass = arith::DivUIOp::create(b, tid, cIdx(b, lanesPerRow));
    Value col = arith::MulIOp::create(b, chunk, cIdx(b, 8));
    Value hasChunk = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, chunk,
                                           cIdx(b, s.headDimV / 8));
    Value safeCol = arith::SelectOp::create(b, hasChunk, col, cIdx(b, 0));
    auto vecTy = VectorType::get({8}, s.elementType);
    auto f32x8 = VectorType::get({8}, b.getF32Type());
    auto f32x4 = VectorType::get({4}, b.getF32Type());
    Value lastRow = arith::SubIOp::create(b, seqQ, cIdx(b, 1));

    // Every pass's loads first (the passes are unrolled): a thread then has
    // all its reads in flight at once, which a memory-bound kernel needs;
    // loads cannot move above the stores of an earlier pass by themselves,
    // as the operands may alias for all the compiler knows. Every lane
    // loads (a clamped row and column) so that the shuffles see a full
    // warp; invalid lanes contribute 0.
    SmallVector<Value> rows, rowsInBlock, inRange, prods;
    for (int64_t pass = 0; pass < passes; ++pass) {
      Value rowInBlock = arith::AddIOp::create(b, rowInPass,
                                               cIdx(b, pass * rowsPerPass));
      rowsInBlock.push_back(rowInBlock);
      Value row = arith::AddIOp::create(b, rowStart, rowInBlock);
      rows.push_back(row);
      inRange.push_back(arith::AndIOp::create(
          b, arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, seqQ),
          arith::CmpIOp::create(b, arith::CmpIPredicate::ult, rowInBlock,
                                cIdx(b, s.blockM))));
      Value safeRow = arith::MinSIOp::create(b, row, lastRow);
      auto load = [&](StringRef name, Value base, Value stride) {
        Value at = arith::AddIOp::create(
            b, base,
            arith::AddIOp::create(b, arith::MulIOp::create(b, safeRow, stride),
                                  safeCol));
        Value v = vector::LoadOp::create(b, vecTy, arg.lookup(name),
                                         ValueRange{at},
                                         /*nontemporal=*/false, llvm::Align(16));
        return Value(arith::ExtFOp::create(b, f32x8, v));
      };
      prods.push_back(arith::MulFOp::create(b, load("o", oBase, oStride),
                                            load("do", doBase, doStride)));
    }
    Value zero = arith::ConstantOp::create(
        b, f32x4, DenseElementsAttr::get(f32x4, b.getF32FloatAttr(0.0f)));
    for (int64_t pass = 0; pass < passes; ++pass) {
      Value sum =
          vector::ReductionOp::create(b, vector::CombiningKind::ADD, prods[pass]);
      sum = arith::SelectOp::create(
          b, arith::AndIOp::create(b, hasChunk, inRange[pass]), sum,
          cF32(b, 0.0f));
      for (int64_t offset = lanesPerRow / 2; offset >= 1; offset /= 2)
        sum = arith::AddFOp::create(
            b, sum,
            gpu::ShuffleOp::create(b, sum, offset, 32, gpu::ShuffleMode::XOR)
                .getShuffleResult());
      Value at = arith::AddIOp::create(
          b, arith::MulIOp::create(b, slice, seqQ), rows[pass]);
      auto ifLead = scf::IfOp::create(
          b, TypeRange{},
          arith::AndIOp::create(
              b, inRange[pass],
              arith::CmpIOp::create(b, arith::CmpIPredicate::eq, chunk, cIdx(b, 0))),
          false);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&ifLead.getThenRegion().front());
        memref::StoreOp::create(b, sum, arg.lookup("delta"), ValueRange{at});
      }
      if (s.deterministic)
        continue;
      // dq_accum rows hold D floats: each of the D / 8 lanes zeroes 8. A
      // tile is block_m x D values in some order: zeroed as if rows.
      Value zeroes = s.dqTiles
                         ? Value(arith::CmpIOp::create(
                               b, arith::CmpIPredicate::ult, rowsInBlock[pass],
                               cIdx(b, s.blockM)))
                         : inRange[pass];
      auto ifZero = scf::IfOp::create(
          b, TypeRange{},
          arith::AndIOp::create(
              b, zeroes,
              arith::CmpIOp::create(b, arith::CmpIPredicate::ult, chunk,
                                    cIdx(b, s.headDim / 8))),
          false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifZero.getThenRegion().front());
      Value dqRow = at;
      if (s.dqTiles) // row rowInBlock of tile (slice, blockIdx.x)
        dqRow = arith::AddIOp::create(
            b,
            arith::MulIOp::create(
                b, slice,
                arith::MulIOp::create(
                    b, arith::CeilDivUIOp::create(b, seqQ, cIdx(b, s.blockM)),
                    cIdx(b, s.blockM))),
            arith::AddIOp::create(b, rowStart, rowsInBlock[pass]));
      Value dqAt = arith::AddIOp::create(
          b, arith::MulIOp::create(b, dqRow, cIdx(b, s.headDim)), col);
      for (int64_t h = 0; h < 2; ++h)
        vector::StoreOp::create(
            b, zero, arg.lookup("dq_accum"),
            ValueRange{arith::AddIOp::create(b, dqAt, cIdx(b, 4 * h))},
            /*nontemporal=*/false, llvm::Align(16));
    }
    gpu::ReturnOp::create(b);
  }
};

} // namespace

void mlir::flash::buildSm80BackwardPreprocessKernel(gpu::GPUFuncOp func,
                                                    const KernelSpec &spec) {
  Sm80BackwardPreprocessBuilder(func, spec).build();
}
