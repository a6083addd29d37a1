//===- LinalgBuilders.h - terse linalg-on-tensors construction -*- C++ -*-===//
//
// Both CPU lowerings are written as chains of linalg.generic on tensors;
// these helpers keep each step to the maps, the iterators and the body.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_CONVERSION_COMMON_LINALGBUILDERS_H
#define FLASHFUSE_CONVERSION_COMMON_LINALGBUILDERS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::flash {

using GenericBody = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// A tensor.empty of `sizes` and element type `elt`.
Value buildEmpty(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                 Type elt);

/// An f32 tensor of `sizes` filled with `value`.
Value buildFilledF32(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                     float value);

/// A linalg.generic with one output (`init`), whose body yields what `body`
/// returns given the block arguments (inputs..., output). Loops whose
/// iterator is `reduction` accumulate into the output.
Value buildGeneric(OpBuilder &b, Location loc, ValueRange inputs, Value init,
                   ArrayRef<AffineMap> maps,
                   ArrayRef<utils::IteratorType> iterators, GenericBody body);

/// The body of a contraction: out + f32(a) * f32(b) for block arguments
/// (a, b, out), inputs of any float type widened to f32.
Value multiplyAccumulateF32(OpBuilder &b, Location loc, ValueRange args);

/// Iterator types: `numParallel` parallel loops then `numReduction`
/// reduction loops.
SmallVector<utils::IteratorType> parallelThenReduction(unsigned numParallel,
                                                       unsigned numReduction);

/// linalg.index values of loops [0, n) inside a generic body.
SmallVector<Value, 6> loopIndices(OpBuilder &b, Location loc, unsigned n);

} // namespace mlir::flash

#endif // FLASHFUSE_CONVERSION_COMMON_LINALGBUILDERS_H
