//===- LowerEachOp.cpp - the driver loop every flash lowering shares ------===//
#include "flashfuse/Conversion/Common/LowerEachOp.h"

#include "flashfuse/Conversion/Common/AlibiScoreMod.h"
#include "flashfuse/Conversion/Common/DecomposeKVCache.h"
#include "flashfuse/Conversion/Common/DecomposeVarlen.h"
#include "flashfuse/Conversion/Common/Layout.h"

using namespace mlir;

void mlir::flash::copyDiscardableAttrs(Operation *from, Operation *to) {
  for (NamedAttribute a : from->getDiscardableAttrs())
    to->setAttr(a.getName(), a.getValue());
}

LogicalResult mlir::flash::lowerEachFlashOp(
    Operation *root, StringRef lowering,
    function_ref<LogicalResult(AttentionOp, const VarlenIndices *)>
        lowerForward,
    function_ref<LogicalResult(AttentionGradOp, const VarlenIndices *)>
        lowerBackward) {
  // flash.attention_kvcache is served by the flash.attention it decomposes
  // into, so both CPU lowerings accept it without code of their own.
  bool refused = failed(decomposeKVCacheOps(root, lowering));
  // ALiBi's bias, into each op's score_mod (before the varlen decomposition,
  // which re-bases the region's indices per sequence).
  foldAlibiIntoScoreMods(root);
  // Likewise the varlen form of flash.attention, into the dense op over the
  // packed tensors with a per-sequence mask_mod.
  VarlenDropoutIndices dropoutIndices;
  refused |= failed(decomposeVarlenOps(root, lowering, dropoutIndices));
  // Collected first: lowering replaces the ops being walked.
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (isa<AttentionOp, AttentionGradOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    if (failed(requireStaticShapes(op, lowering))) {
      refused = true;
      continue;
    }
    auto found = dropoutIndices.find(op);
    const VarlenIndices *at =
        found == dropoutIndices.end() ? nullptr : &found->second;
    if (auto forward = dyn_cast<AttentionOp>(op))
      refused |= failed(lowerForward(forward, at));
    else
      refused |= failed(lowerBackward(cast<AttentionGradOp>(op), at));
  }
  return failure(refused);
}
