//===- BlockSparseLists.h - reading block-sparse lists in a kernel -*- C++ -*-===//
//
// What the block-sparse iterators share (BlockSparseIterator.h: the
// forward's key-block walk; BlockSparseQueryIterator.h: the backward's
// query-block walk): a row of one family of lists, read once, and the
// map from a walk position to the kernel block it visits. Both families
// have the layout of docs/KERNEL_ABI.md "Block-sparse": counts
// [B', H', R] and indices [B', H', R, slots], i32, with batch and head
// strides (0 where a list broadcasts) and a `slots` argument, partial
// lists first and optional `full_` ones.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_BLOCKSPARSELISTS_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_BLOCKSPARSELISTS_H

#include "flashfuse/Conversion/FlashToGPU/KernelSpec.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::flash {

/// Which lists a walk reads, by their kernel-argument names.
struct SparseLists {
  /// "kv": the forward's lists (kv_num_blocks, kv_indices, kv_slots, ...):
  /// key blocks per query block. "q": the transposed lists (q_num_blocks,
  /// ...): query blocks per key block.
  StringRef family;
  /// Rows (keys) of one listed block, and of one kernel block: the
  /// kernel visits listedBlock / kernelBlock blocks per entry.
  int64_t listedBlock, kernelBlock;
  bool fullBlocks;
  /// The forward's lists as a kernel of `s` walks them: entries of
  /// sparseBlockK keys, kernel blocks of block_n.
  static SparseLists forward(const KernelSpec &s);
  /// The transposed lists: entries of sparseBlockQ rows, kernel blocks of
  /// block_m.
  static SparseLists transposed(const KernelSpec &s);
};

/// The engine-independent half: one row of the lists, in i32 (they live
/// across the walk's loop; list offsets fit 31 bits).
struct SparseListRow {
  Value numPartial, numFull; // clamped into [0, slots]
  Value partialRow, fullRow; // element offsets of the rows' first slot
};

/// Reads row `rowBlock` (index) of `lists` (the kernel arguments in `arg`)
/// for batch `batch`, query head `head`; numFull is 0 without full lists.
SparseListRow readSparseListRow(ImplicitLocOpBuilder &b,
                                const llvm::StringMap<Value> &arg,
                                const SparseLists &lists, Value batch,
                                Value head, Value rowBlock);

/// The kernel block (of lists.kernelBlock rows or keys) of walk position
/// `position` (index): position / r names the entry (partial entries
/// first, then full ones), position % r the kernel block within it; the
/// first kernel block past `seqLen` (index: Sk for the forward's lists, Sq
/// for the transposed ones) for a position past the walk or an index
/// outside [0, ceil(seqLen / listedBlock)).
Value sparseBlockAt(ImplicitLocOpBuilder &b, const llvm::StringMap<Value> &arg,
                    const SparseLists &lists, const SparseListRow &row,
                    Value position, Value seqLen);

/// The walk's positions past its first: (numPartial + numFull) * r (index),
/// r = stepsPerEntry kernel blocks per entry.
Value sparseWalkLength(ImplicitLocOpBuilder &b, const SparseListRow &row,
                       int64_t stepsPerEntry);

/// i1: walk position `position` (index) lies in a partial entry (partial
/// entries come first), where mask_mod applies.
Value sparseStepIsPartial(ImplicitLocOpBuilder &b, const SparseListRow &row,
                          Value position, int64_t stepsPerEntry);

} // namespace mlir::flash

#endif
