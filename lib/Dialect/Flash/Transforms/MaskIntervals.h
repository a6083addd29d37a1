//===- MaskIntervals.h - a mask_mod over index rectangles --------*- C++
//-*-===//
//
// Interval (range) evaluation of a flash.attention `mask_mod` region:
// given an interval for each of its arguments (b, h, q_idx, kv_idx), a
// sound enclosure of the i1 it yields over every point of that box. The
// block-sparsity pass asks it, for each (query block, key block) rectangle,
// whether the mask keeps all of it, none of it, or some of it.
//
// Soundness is the whole point: an op the evaluator does not model, a
// value it cannot bound, a possible overflow, all give "unknown", which the
// caller reads as a partial block (the kernels then apply the mask_mod, so
// the result is the dense op's). Only a proven answer skips a block or
// skips the mask_mod in it.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_DIALECT_FLASH_TRANSFORMS_MASKINTERVALS_H
#define FLASHFUSE_LIB_DIALECT_FLASH_TRANSFORMS_MASKINTERVALS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Region.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <cstdint>
#include <optional>

namespace mlir::flash {

/// The closed signed interval [lo, hi] of an integer (or index) value; an i1
/// is held as 0 (false) / 1 (true), so [0, 1] is "either".
struct Interval {
  int64_t lo, hi;
  static Interval point(int64_t v) { return {v, v}; }
  bool isPoint() const { return lo == hi; }
};

/// What the mask keeps over a box of indices.
enum class BoxVerdict { None, All, Some };

/// Evaluates one mask_mod region over boxes. Built once per region (the
/// ops it models are checked then), asked once per block.
class MaskIntervalEvaluator {
public:
  explicit MaskIntervalEvaluator(Region &maskMod);

  /// The first op of the region the evaluator cannot bound, if any: its
  /// results are unknown, so the verdict of a box may still be decided by
  /// the rest (an `or` with a true side), but usually is not. For remarks.
  Operation *getFirstUnmodelled() const { return firstUnmodelled; }

  /// True when the region reads its b or h argument.
  bool readsBatchOrHead() const { return usesBatchOrHead; }

  /// The verdict for b, h, q_idx, kv_idx ranging over `box` (inclusive).
  BoxVerdict evaluate(const std::array<Interval, 4> &box);

  /// The verdict of the conjunction of `terms` (i1 values of the region)
  /// over `box`: a part of the mask, the rest of which the caller decides.
  BoxVerdict evaluate(const std::array<Interval, 4> &box,
                      llvm::ArrayRef<Value> terms);

private:
  std::optional<Interval> evalOp(Operation *op);
  std::optional<Interval> lookup(Value v);

  Region &region;
  llvm::SmallVector<Operation *> ops;
  Operation *firstUnmodelled = nullptr;
  bool usesBatchOrHead = false;
  /// Known intervals of the region's values for the current box (a value
  /// absent is unknown).
  llvm::DenseMap<Value, Interval> env;
  /// The elements of the constant tensors the region reads (a document
  /// table given as a constant), flattened row-major.
  llvm::DenseMap<Value, llvm::SmallVector<int64_t>> constants;
};

} // namespace mlir::flash

#endif // FLASHFUSE_LIB_DIALECT_FLASH_TRANSFORMS_MASKINTERVALS_H
