//===- SoftmaxMath.h - f32 softmax statistics shared by lowerings -*- C++ -*-===//
//
// The scalar formulas both lowerings apply to softmax statistics, written
// once so that fully masked rows behave identically everywhere: such a row
// has max m = -inf and sum l = 0; it must give O = 0 and LSE = +inf, and no
// intermediate may compute -inf - (-inf) = NaN.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_CONVERSION_COMMON_SOFTMAXMATH_H
#define FLASHFUSE_CONVERSION_COMMON_SOFTMAXMATH_H

#include "mlir/IR/Builders.h"

namespace mlir::flash {

/// `v` extended (or passed through) to f32.
Value castToF32(OpBuilder &b, Location loc, Value v);
/// f32 `v` truncated (or passed through) to `type`.
Value castFromF32(OpBuilder &b, Location loc, Value v, Type type);

Value constF32(OpBuilder &b, Location loc, float v);
Value negInfF32(OpBuilder &b, Location loc);
Value posInfF32(OpBuilder &b, Location loc);

/// The row max to subtract before exp: 0 instead of -inf, so that
/// exp(s - m) of a fully masked row is exp(-inf) = 0 rather than NaN.
Value buildSafeRowMax(OpBuilder &b, Location loc, Value rowMax);

/// O = acc / l, or 0 when l == 0 (fully masked row).
Value buildNormalizedOutput(OpBuilder &b, Location loc, Value acc, Value sum);

/// LSE = safeMax + log(l), or +inf when l == 0 (fully masked row).
Value buildLogSumExp(OpBuilder &b, Location loc, Value safeMax, Value sum);

/// P = exp(s - LSE) recomputed in the backward pass, 0 when LSE = +inf.
Value buildProbabilityFromLse(OpBuilder &b, Location loc, Value score,
                              Value lse);

} // namespace mlir::flash

#endif // FLASHFUSE_CONVERSION_COMMON_SOFTMAXMATH_H
