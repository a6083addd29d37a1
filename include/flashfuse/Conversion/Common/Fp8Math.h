//===- Fp8Math.h - the FP8 steps of flash.attention -------------*- C++ -*-===//
//
// The scalar steps FP8 flash.attention adds to the f32 attention (FlashOps.td
// states the semantics): reading a descale factor and quantising P to e4m3
// for the P·V product. Both CPU lowerings build them from here, and the GPU
// kernels and the Python reference use the same two constants.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_CONVERSION_COMMON_FP8MATH_H
#define FLASHFUSE_CONVERSION_COMMON_FP8MATH_H

#include "mlir/IR/Builders.h"

namespace mlir::flash {

/// P is quantised as e4m3(min(p * kFp8ProbScale, kE4M3Max)): a power of two,
/// so the scaling itself is exact, that maps p = 1 below e4m3's maximum.
inline constexpr float kFp8ProbScale = 256.0f;
/// The largest finite f8E4M3FN value.
inline constexpr float kE4M3Max = 448.0f;

/// The factor of `descale` (f32, [], [B, H] or [B, H, N]) for `batch`,
/// `head` and sequence row `row` (index values): a per-tensor descale
/// ignores all three, a per-head one `row`, and a per-block one reads block
/// row / blockRows (flash.attention's `descale_block_size`).
Value readDescale(OpBuilder &b, Location loc, Value descale, Value batch,
                  Value head, Value row = Value(), int64_t blockRows = 0);

/// Whether `descale` has one factor per block of the sequence ([B, H, N]).
bool isBlockDescale(Value descale);

/// The f32 value of P8 = e4m3(min(p * 256, 448)) for an f32 probability p in
/// [0, 1]: an arith.truncf to f8E4M3FN and its arith.extf back.
Value quantizeProbability(OpBuilder &b, Location loc, Value p);

/// An FP8 KV cache's element: descale * f32(x8), in f32 (the dequantised
/// cache of flash.attention_kvcache's FP8 form).
Value dequantizeE4M3(OpBuilder &b, Location loc, Value x8, Value descale);

/// A new row's element as an FP8 cache stores it:
/// e4m3(clamp(f32(x) * invDescale, -448, 448)), rounded to nearest even,
/// as an f8E4M3FN value; `invDescale` is the f32 1 / descale. Saturating
/// (vLLM's reshape_and_cache does the same) rather than letting truncf turn
/// an outlier into NaN.
Value quantizeToE4M3(OpBuilder &b, Location loc, Value x, Value invDescale);

} // namespace mlir::flash

#endif // FLASHFUSE_CONVERSION_COMMON_FP8MATH_H
