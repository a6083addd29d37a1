//===- SplitMerge.h - merge split-KV partial rows by their LSE --*- C++ -*-===//
//
// The merge of Flash-Decoding's splits (docs/KERNEL_ABI.md "Decode"):
// split s left row r's O_s (f32, normalised by its own row sum) at
// o_partial[(s * rows + r) * Dv ...] and lse_s at lse_partial[s * rows + r];
//   lse = log Σ_s exp(lse_s),   O = Σ_s exp(lse_s - lse) · O_s,
// with -inf for a split that saw no key (weight 0) and, when every split is
// empty, O = 0 and lse = +inf as the op's contract says. One warp merges
// one row: the lanes share the splits for the two reductions, then the
// columns for the sum of the O_s, so each partial row is read once,
// coalesced. Used by the decode_combine kernel. The decode kernel's last
// split of a row group, which merges in place of a combine launch, deals
// (row, 4 columns) items out to all its threads instead (mergeSplitQuad);
// LseMerge's arithmetic also serves the decode's merge within a
// thread-block cluster (Sm80Decode.cpp), whose splits' rows are in shared
// memory.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_SPLITMERGE_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_SPLITMERGE_H

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::flash {

/// Row `row` of `rows` merged over `numSplits` splits (all index values),
/// as the lanes of one warp hold it.
struct MergedRow {
  Value lse;                  // f32, +inf for a row no split saw
  SmallVector<Value> columns; // f32, column lane + 32 k in columns[k]
};

/// One row's merge from its largest partial LSE: lse = max + ln Σ_s w_s,
/// O = Σ_s w_s O_s / Σ_s w_s with w_s = exp(lse_s - max). A row no split
/// saw (max = -inf) shifts by 0 instead, so that every w_s is exp(-inf) =
/// 0, not NaN, and ends with O = 0 and LSE +inf.
struct LseMerge {
  Value empty; // i1: no split saw the row
  Value shift; // f32: max, or 0 for an empty row
  LseMerge(ImplicitLocOpBuilder &b, Value maxLse);
  /// w_s of a split whose LSE is `lseS`.
  Value weight(ImplicitLocOpBuilder &b, Value lseS) const;
  /// 1 / Σ_s w_s (0 for an empty row).
  Value inverseSum(ImplicitLocOpBuilder &b, Value sum) const;
  /// The merged LSE, max + ln Σ_s w_s (+inf for an empty row).
  Value lse(ImplicitLocOpBuilder &b, Value maxLse, Value sum) const;
};

/// Reads the partial results of `rowIds` (lsePartial and oPartial are the
/// f32 memrefs of the ABI) and merges them; every lane of the warp must
/// call it with the same rows. The rows are merged side by side, so that
/// the loads of all of them are in flight together; `unroll` splits' rows
/// are loaded at once: more loads in flight, more registers.
SmallVector<MergedRow> mergeSplitRows(ImplicitLocOpBuilder &b, Value lane,
                                      ArrayRef<Value> rowIds, Value rows,
                                      Value numSplits, Value lsePartial,
                                      Value oPartial, int64_t headDimV,
                                      int64_t unroll);

/// Columns [col, col + 4) of one row merged over the splits, and the row's
/// LSE, as one thread holds them.
struct MergedQuad {
  Value lse;     // f32, +inf for a row no split saw
  Value columns; // vector<4xf32>
};

/// Reads row `row`'s LSE and columns [col, col + 4) (col a multiple of 4)
/// of `numSplits` splits, first, first + stride, ..., and merges them,
/// `unroll` splits at a time (their loads independent, so in flight
/// together) with a running max, so the partial results are read in one
/// pass: the merge costs numSplits / unroll L2 round trips. oPartial must
/// be 16-byte aligned.
MergedQuad mergeSplitQuad(ImplicitLocOpBuilder &b, Value row, Value col,
                          Value rows, Value first, Value stride,
                          Value numSplits, Value lsePartial, Value oPartial,
                          int64_t headDimV, int64_t unroll);

/// Stores the merged row: columns at out[oRow + column] in `elementType`
/// (those past Dv skipped), and lane 0 its LSE at lse[row].
void storeMergedRow(ImplicitLocOpBuilder &b, const MergedRow &merged,
                    Value lane, Value out, Value oRow, Value lse, Value row,
                    Type elementType, int64_t headDimV);

} // namespace mlir::flash

#endif
