//===- LowerEachOp.h - the driver loop every flash lowering shares -*- C++ -*-===//
#ifndef FLASHFUSE_CONVERSION_COMMON_LOWEREACHOP_H
#define FLASHFUSE_CONVERSION_COMMON_LOWEREACHOP_H

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"

namespace mlir::flash {

struct VarlenIndices;

/// Replaces every flash.attention and flash.attention_grad under `root`
/// with `lowerForward` / `lowerBackward`, after requireStaticShapes (named
/// `lowering` in its diagnostic). flash.attention_kvcache ops are first
/// decomposed into flash.attention (decomposeKVCacheOps) and lowered with
/// the rest, and varlen flash.attention ops into dense ones
/// (decomposeVarlenOps). Every op is tried, so all refusals are
/// reported in one run; fails when any op was refused. The callbacks get,
/// for a dense op that a packed one with dropout became, the indices its
/// keep test draws at (VarlenIndices::local), null for every other op.
LogicalResult lowerEachFlashOp(
    Operation *root, StringRef lowering,
    function_ref<LogicalResult(AttentionOp, const VarlenIndices *)>
        lowerForward,
    function_ref<LogicalResult(AttentionGradOp, const VarlenIndices *)>
        lowerBackward);

/// Copies `from`'s dialect-prefixed attributes (provenance, tool markers)
/// to `to`, the op a rewrite replaces it with, so that they stay with the
/// computation (the varlen and block-sparse decompositions).
void copyDiscardableAttrs(Operation *from, Operation *to);

} // namespace mlir::flash

#endif
