//===- BlockSparseQueryIterator.h - the backward's query-block walk -*- C++ -*-===//
//
// The query-block iterator of the block-sparse backward (docs/KERNEL_ABI.md
// "Block-sparse backward"), as a part any backward engine takes on:
// BlockSparseQueryIterator<E> is engine E (Sm80BackwardBuilder) walking the
// query blocks whose rows list its key block instead of the causal/window
// band, the mirror of BlockSparseIterator<E> for the forward. It reads the
// transposed lists (q_num_blocks / q_indices, and full_q_* with full
// blocks), which the backward_sparse_transpose kernel builds from the
// forward's lists before the main kernel runs: row (b, h, kb) lists the
// query blocks of (b, h) that list key block kb, sorted, partial ones in
// the partial list and full ones in the full list. Everything else
// (operand producer, matrix engine, the dS pipeline, the dQ reduction and
// the epilogue) is E's, unchanged: the engine's query loop runs over
// positions [0, (n_partial + n_full) * r) and asks queryBlockAt(position)
// which block of block_m rows to fetch (r = BQ / block_m kernel blocks per
// sparse query block), and appliesMaskMod(position) whether mask_mod
// applies (a partial entry) or not (a full one; the band and the tails
// still mask it).
//
// The block's key block is kb = kStart / BK (BK a multiple of block_n,
// checked by getKernelSpec). Positions past the walk, and indices outside
// [0, QB), visit the query block past the last row: zero-filled by the
// copies, masked by the row tail (P = 0, so dK, dV and dQ get nothing).
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_BLOCKSPARSEQUERYITERATOR_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_BLOCKSPARSEQUERYITERATOR_H

#include "BackwardBuilder.h"
#include "BlockSparseLists.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::flash {

template <class Engine>
class BlockSparseQueryIterator : public Engine {
public:
  using Engine::Engine;

protected:
  /// The block's row of the transposed lists. Inside the query loop
  /// (`opaque`) it is read again where it is used, from the block's
  /// coordinates read opaquely, as the forward's iterator does: the
  /// backward's loop needs every register for dK and dV.
  SparseListRow readRow(bool opaque) {
    auto &b = this->b;
    Value batch = this->batchIdx, head = this->head, first = this->kStart;
    if (opaque) {
      batch = this->readSpecialRegisterOpaquely("ctaid.z");
      head = this->readSpecialRegisterOpaquely("ctaid.y");
      Value blockX = this->readSpecialRegisterOpaquely("ctaid.x");
      first = arith::MulIOp::create(
          b, blockX, arith::ConstantIndexOp::create(b, this->s.blockN));
    }
    Value kBlock = arith::DivUIOp::create(
        b, first, arith::ConstantIndexOp::create(b, this->s.sparseBlockK));
    return readSparseListRow(b, this->arg, SparseLists::transposed(this->s),
                             batch, head, kBlock);
  }

  /// Positions [0, (n_partial + n_full) * r).
  std::pair<Value, Value> blockQueryRange() override {
    auto &b = this->b;
    Value steps =
        sparseWalkLength(b, readRow(/*opaque=*/false), stepsPerEntry());
    return {arith::ConstantIndexOp::create(b, 0), steps};
  }

  Value queryBlockAt(Value position) override {
    return sparseBlockAt(this->b, this->arg, SparseLists::transposed(this->s),
                         readRow(/*opaque=*/true), position, this->seqQ);
  }

  /// Read again from the lists: held across the step, the loaded block
  /// cost the D = 128 kernels with full lists a spill.
  Value queryStartAgain(Value position, Value qStart) override {
    return arith::MulIOp::create(
        this->b, queryBlockAt(position),
        arith::ConstantIndexOp::create(this->b, this->s.blockM));
  }

  /// Partial entries come first: mask_mod applies below n_partial * r.
  Value appliesMaskMod(Value position) override {
    return sparseStepIsPartial(this->b, readRow(/*opaque=*/true), position,
                               stepsPerEntry());
  }

private:
  int64_t stepsPerEntry() const { return this->s.sparseBlockQ / this->s.blockM; }
};

} // namespace mlir::flash

#endif
