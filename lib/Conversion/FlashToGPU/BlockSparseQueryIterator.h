//===- BlockSparseQueryIterator.h - the backward's query-block walk -*- C++ -*-===//
//
// The query-block iterator of the block-sparse backward (docs/KERNEL_ABI.md
// "Block-sparse backward"), as a part any backward engine takes on:
// BlockSparseQueryIterator<E> is engine E (Sm80BackwardBuilder or
// Sm90BackwardBuilder) walking the
// query blocks whose rows list its key block instead of the causal/window
// band, the mirror of BlockSparseIterator<E> for the forward. It reads the
// transposed lists (q_num_blocks / q_indices, and full_q_* with full
// blocks), which the backward_sparse_transpose kernel builds from the
// forward's lists before the main kernel runs: row (b, h, kb) lists the
// query blocks of (b, h) that list key block kb, sorted, partial ones in
// the partial list and full ones in the full list. Everything else
// (operand producer, matrix engine, the dS pipeline, the dQ reduction and
// the epilogue) is E's, unchanged: the engine's query loop runs over
// positions [0, (n_partial + n_full) * r) and asks fetchQueryBlock which
// block of block_m rows to fetch (r = BQ / block_m kernel blocks per
// sparse query block), and appliesMaskMod whether mask_mod applies (a
// partial entry) or not (a full one; the band and the tails still mask
// it).
//
// The block's key block is kb = kStart / BK (BK a multiple of block_n,
// checked by getKernelSpec). Positions past the walk, and indices outside
// [0, QB), visit the query block past the last row: zero-filled by the
// copies, masked by the row tail (P = 0, so dK, dV and dQ get nothing).
//
// The lists are read once per step, where its Q and dO tiles are fetched:
// the query block and whether its entry is partial are recorded in the
// stage's slot next to its LSE and Dsum (BackwardBuilder::stepSlots), and
// the step reads them from there (a shared load) wherever it needs them.
// The row (counts and offsets) is saved there too before the loop, and
// each fetch reads it back. Read from the lists at each use instead, the
// sm90 D = 128 kernels spilled 36-92 bytes; held across the loop, 4-16.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_BLOCKSPARSEQUERYITERATOR_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_BLOCKSPARSEQUERYITERATOR_H

#include "BackwardBuilder.h"
#include "BlockSparseLists.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::flash {

template <class Engine>
class BlockSparseQueryIterator : public Engine {
public:
  using Engine::Engine;

protected:
  /// The block's row of the transposed lists, read from its coordinates.
  SparseListRow readRow() {
    auto &b = this->b;
    Value kBlock = arith::DivUIOp::create(
        b, this->kStart,
        arith::ConstantIndexOp::create(b, this->s.sparseBlockK));
    return readSparseListRow(b, this->arg, SparseLists::transposed(this->s),
                             this->batchIdx, this->head, kBlock);
  }

  /// The row as blockQueryRange saved it after the stage slots (each
  /// thread stores the same values and reads its own store back).
  static constexpr int64_t kRowWords = 4;
  Value rowWord(int64_t i) {
    return arith::ConstantIndexOp::create(this->b, 4 * this->s.stages + i);
  }
  SparseListRow savedRow() {
    auto &b = this->b;
    auto load = [&](int64_t i) -> Value {
      return memref::LoadOp::create(b, this->stepSlots, ValueRange{rowWord(i)});
    };
    SparseListRow row;
    row.numPartial = load(0);
    row.numFull = load(1);
    row.partialRow = load(2);
    row.fullRow = load(3);
    return row;
  }

  /// Positions [0, (n_partial + n_full) * r). The row is saved in shared
  /// memory for the steps' fetches rather than held across the loop.
  std::pair<Value, Value> blockQueryRange() override {
    auto &b = this->b;
    SparseListRow row = readRow();
    Value words[kRowWords] = {row.numPartial, row.numFull, row.partialRow,
                              row.fullRow};
    for (int64_t i = 0; i < kRowWords; ++i)
      memref::StoreOp::create(b, words[i], this->stepSlots,
                              ValueRange{rowWord(i)});
    Value steps = sparseWalkLength(b, row, stepsPerEntry());
    return {arith::ConstantIndexOp::create(b, 0), steps};
  }

  /// Reads the step's entry from the lists and records it in the stage's
  /// slot: [0] the query block, [1] 1 where the entry is partial (mask_mod
  /// applies). Every thread stores the same values; the slot was last read
  /// by the step before the barrier that ended it.
  Value fetchQueryBlock(Value position, Value stage) override {
    auto &b = this->b;
    SparseListRow row = savedRow();
    Value block = sparseBlockAt(b, this->arg, SparseLists::transposed(this->s),
                                row, position, this->seqQ);
    Value base = arith::MulIOp::create(b, stage,
                                       arith::ConstantIndexOp::create(b, 4));
    memref::StoreOp::create(
        b, arith::IndexCastOp::create(b, b.getI32Type(), block),
        this->stepSlots, ValueRange{base});
    if (this->s.maskMod) {
      Value partial = sparseStepIsPartial(b, row, position, stepsPerEntry());
      memref::StoreOp::create(
          b, arith::ExtUIOp::create(b, b.getI32Type(), partial),
          this->stepSlots,
          ValueRange{arith::AddIOp::create(
              b, base, arith::ConstantIndexOp::create(b, 1))});
    }
    return block;
  }

  /// Read from the stage's slot at the top of the step and again where
  /// used, except in a band-masked walk of full entries without mask_mod,
  /// which keeps the top's block: measured, not derived (ptxas 13 at the
  /// 255-register cap spilled 4 bytes in the sm90 causal D = 128 kernels
  /// with the reads, and as many in the partial-only ones without them).
  Value topBlock;
  Value stepQueryBlock(Value position, Value stage, bool again) override {
    auto &b = this->b;
    const KernelSpec &s = this->s;
    bool bandMasked = s.causal != KernelSpec::Causal::None || s.window;
    if (again && topBlock && s.fullBlocks && bandMasked && !s.maskMod)
      return topBlock;
    Value slot = arith::MulIOp::create(b, stage,
                                       arith::ConstantIndexOp::create(b, 4));
    Value block = arith::IndexCastOp::create(
        b, b.getIndexType(),
        memref::LoadOp::create(b, this->stepSlots, ValueRange{slot}));
    if (!again)
      topBlock = block;
    return block;
  }

  /// Partial entries come first: mask_mod applies below n_partial * r.
  Value appliesMaskMod(Value position, Value stage) override {
    auto &b = this->b;
    Value slot = arith::AddIOp::create(
        b,
        arith::MulIOp::create(b, stage, arith::ConstantIndexOp::create(b, 4)),
        arith::ConstantIndexOp::create(b, 1));
    return arith::CmpIOp::create(
        b, arith::CmpIPredicate::ne,
        memref::LoadOp::create(b, this->stepSlots, ValueRange{slot}),
        arith::ConstantIntOp::create(b, b.getI32Type(), 0));
  }

private:
  int64_t stepsPerEntry() const { return this->s.sparseBlockQ / this->s.blockM; }
};

} // namespace mlir::flash

#endif
