//===- DocumentLists.h - block lists of a runtime document mask -*- C++ -*-===//
//
// A document (packed-sequence) mask keeps key j for query i when both lie in
// the same document: `ids_q[i] == ids_k[j]` for a sequence-id tensor known
// only at run time. Which blocks it keeps depends on those ids, so its
// block lists are computed at run time, by IR emitted before the op, from
// each block's smallest and largest id.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_DIALECT_FLASH_TRANSFORMS_DOCUMENTLISTS_H
#define FLASHFUSE_LIB_DIALECT_FLASH_TRANSFORMS_DOCUMENTLISTS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Region.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <cstdint>
#include <optional>

namespace mlir::flash {

/// A mask_mod `ids_q[q_idx] == ids_k[kv_idx] and rest...`, or per batch
/// `ids_q[b, q_idx] == ids_k[b, kv_idx] and rest...`.
struct DocumentMask {
  /// Integer tensors defined above the op, not constants (constant tables
  /// are decided at compile time), holding at least Sq / Sk ids per row:
  /// rank 1, or rank 2 with one row per batch.
  Value queryIds, keyIds;
  /// B for per-batch ids (the lists then have B' = B), else 0.
  int64_t batch = 0;
  /// The region's other i1 conjuncts (index-only terms such as causal),
  /// decided per block at compile time by the interval evaluator.
  llvm::SmallVector<Value> rest;
};

/// Recognises the form above in `maskMod` (the yield an `and` tree with
/// exactly such a compare among its leaves).
std::optional<DocumentMask> matchDocumentMask(Region &maskMod, int64_t batch,
                                              int64_t seqQ, int64_t seqK);

/// Class of a block by the index-only part of the mask (and the band).
enum class StaticBlock : int8_t { Skipped = 0, Partial = 1, Full = 2 };

/// Emits at `b`'s insertion point the IR that computes kv_num_blocks,
/// kv_indices, full_kv_num_blocks and full_kv_indices ([B', 1, QB] and
/// [B', 1, QB, KB], i32; B' = B for per-batch ids, else 1) for `doc` in blocks
/// of `bq` x `bk`, given the compile-time class of each block (QB x KB,
/// row-major).
std::array<Value, 4> buildDocumentLists(OpBuilder &b, Location loc,
                                        const DocumentMask &doc,
                                        llvm::ArrayRef<StaticBlock> classes,
                                        int64_t seqQ, int64_t seqK, int64_t bq,
                                        int64_t bk);

} // namespace mlir::flash

#endif // FLASHFUSE_LIB_DIALECT_FLASH_TRANSFORMS_DOCUMENTLISTS_H
