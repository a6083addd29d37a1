//===- AlibiScoreMod.h - ALiBi's bias as a score_mod region -----*- C++ -*-===//
//
// The CPU lowerings have no ALiBi stage of their own: they see ALiBi's bias
// as the last step of a score_mod region, which the score pipeline already
// evaluates (forward) and differentiates (derivative 1, backward). The GPU
// kernels keep the `alibi` operand and add the bias natively.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_CONVERSION_COMMON_ALIBISCOREMOD_H
#define FLASHFUSE_CONVERSION_COMMON_ALIBISCOREMOD_H

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"

namespace mlir::flash {

/// Builds into the empty region `target` the score_mod block
/// (s, b, h, i, j) -> inner(s, b, h, i, j) - slope * |i + diagOffset(b) - j|,
/// slope = slopes[h] ([Hq]) or slopes[b, h] ([B, Hq]), the distance taken
/// in index arithmetic (exact) and converted once. `inner` is the score_mod
/// that runs first (cloned; null or empty: the identity). `diagOffset`
/// builds Sk - Sq (index) for the region's b at the builder's point.
void buildAlibiScoreMod(
    OpBuilder &b, Location loc, Region &target, Value slopes,
    function_ref<Value(OpBuilder &, Location, Value batch)> diagOffset,
    Region *inner = nullptr);

/// Rewrites every flash.attention / flash.attention_grad under `root` that
/// has `alibi(...)` into the same op whose score_mod ends with the bias
/// (buildAlibiScoreMod; Sk - Sq from the operands' shapes, or each packed
/// sequence's Lk_b - Lq_b from its cu_seqlens), without the operand.
void foldAlibiIntoScoreMods(Operation *root);

} // namespace mlir::flash

#endif
