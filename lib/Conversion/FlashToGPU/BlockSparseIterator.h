//===- BlockSparseIterator.h - the block-sparse key-block iterator -*- C++ -*-===//
//
// The key-block iterator of block-sparse attention (FlashOps.td
// "Block-sparse", docs/KERNEL_ABI.md "Block-sparse"), as a part any forward
// engine takes on: BlockSparseIterator<E> is engine E (Sm80ForwardBuilder,
// Sm90ForwardBuilder) walking the key blocks that the lists name for its
// query block instead of the causal/window band. Everything else (operand
// producer, mainloop, score pipeline, epilogue) is E's, unchanged: the
// engine's key loop runs over positions [0, (n_partial + n_full) * r) and
// asks keyBlockAt(position) which block of block_n keys to fetch and score
// (r = BK / block_n kernel blocks per sparse key block), and
// appliesMaskMod(position) whether mask_mod applies (a partial block) or
// not (a full one: only the band and the key-length tail can mask it, and
// a full block inside both takes the engine's unmasked path).
//
// The block's query block is qb = mStart / BQ (BQ a multiple of block_m,
// checked by getKernelSpec); where the engine takes a tile order
// (KernelSpec::takesTileOrder: the sm90ws forward) its tile is the order's
// entry for the block (KernelBuilderBase::orderedTile), read again with the
// row. Its counts are read once, clamped into
// [0, slots]; each step reads its list entry (a load one prefetch distance
// ahead of its use). An index outside [0, KB) is visited as the block past
// the last key (zero-filled by the copies, masked by the tail): outside the
// contract the answer is wrong, but nothing is read out of bounds. Steps
// past the walk's end (the prefetches of the last iterations) fetch that
// same block, as the dense walk fetches the blocks past its band.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_BLOCKSPARSEITERATOR_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_BLOCKSPARSEITERATOR_H

#include "BlockSparseLists.h"
#include "ForwardBuilder.h"

namespace mlir::flash {

template <class Engine>
class BlockSparseIterator : public Engine {
public:
  using Engine::Engine;

protected:
  /// The block's row of the lists. Inside the key loop (`opaque`) it is
  /// read again where it is used, from the block's coordinates read
  /// opaquely (so that LLVM cannot hoist the reads out of the loop), the
  /// kernel's parameters (which take no registers) and L1-resident counts:
  /// kept alive across the loop instead, the four values made the sm80
  /// engine's D = 128 kernels spill 8-108 bytes.
  SparseListRow readRow(bool opaque) {
    auto &b = this->b;
    Value batch = this->batchIdx, head = this->head, first = this->mStart;
    if (opaque && this->s.takesTileOrder()) {
      auto tile = this->rereadOrderedTile();
      batch = tile.batch;
      head = tile.head;
      first = arith::MulIOp::create(
          b, tile.block, arith::ConstantIndexOp::create(b, this->s.blockM));
    } else if (opaque) {
      batch = this->readSpecialRegisterOpaquely("ctaid.z");
      head = this->readSpecialRegisterOpaquely("ctaid.y");
      // One statement per op: the IR must not depend on the order C++
      // evaluates arguments in.
      Value blockX = this->readSpecialRegisterOpaquely("ctaid.x");
      Value gridX = this->readSpecialRegisterOpaquely("nctaid.x");
      first = this->firstRowOfBlock(blockX, gridX);
    }
    Value qBlock = arith::DivUIOp::create(
        b, first, arith::ConstantIndexOp::create(b, this->s.sparseBlockQ));
    return readSparseListRow(b, this->arg, SparseLists::forward(this->s),
                             batch, head, qBlock);
  }

  /// Positions [0, (n_partial + n_full) * r).
  std::pair<Value, Value> blockKeyRange() override {
    auto &b = this->b;
    Value steps =
        sparseWalkLength(b, readRow(/*opaque=*/false), stepsPerEntry());
    return {arith::ConstantIndexOp::create(b, 0), steps};
  }

  Value keyBlockAt(Value position) override {
    return sparseBlockAt(this->b, this->arg, SparseLists::forward(this->s),
                         readRow(/*opaque=*/true), position, this->seqK);
  }

  /// Partial entries come first: mask_mod applies below n_partial * r.
  Value appliesMaskMod(Value position) override {
    return sparseStepIsPartial(this->b, readRow(/*opaque=*/true), position,
                               stepsPerEntry());
  }

private:
  int64_t stepsPerEntry() const { return this->s.sparseBlockK / this->s.blockN; }
};

} // namespace mlir::flash

#endif
