//===- RaiseAttention.cpp - the flash-raise-attention pass ----------------===//
//
// Every attention has exactly one softmax, so the pass collects softmax
// anchors first (linalg.softmax and max reductions, in either input form),
// then matches and rewrites each. A candidate whose softmax matched but whose
// surroundings did not is a near-miss: with explain=true it gets a remark
// naming the failed step and the reason. The matcher itself lives in
// RaiseAttention/, one file per concern.
//
//===----------------------------------------------------------------------===//
#include "RaiseAttention/Match.h"

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"
#include "flashfuse/Dialect/Flash/Transforms/Passes.h"
#include "flashfuse/Dialect/TMTensor/IR/TMTensorDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::flash {
#define GEN_PASS_DEF_FLASHRAISEATTENTION
#include "flashfuse/Dialect/Flash/Transforms/Passes.h.inc"
} // namespace mlir::flash

using namespace mlir;
using namespace mlir::flash::raise;

namespace {
struct FlashRaiseAttention
    : flash::impl::FlashRaiseAttentionBase<FlashRaiseAttention> {
  using FlashRaiseAttentionBase::FlashRaiseAttentionBase;

  void runOnOperation() override {
    // torch-mlir's own attention op is attention by definition: no softmax
    // to anchor on, only its operands to read. Raised first, so that the
    // ops it leaves dead are gone before the anchors are collected.
    SmallVector<Operation *> tmAttentions;
    getOperation()->walk([&](flash::tm_tensor::AttentionOp op) {
      tmAttentions.push_back(op);
    });
    for (Operation *op : tmAttentions) {
      Explainer why;
      if (succeeded(raiseTMTensorAttention(op, why)) || !explain)
        continue;
      op->emitRemark() << "flash-raise-attention: tm_tensor.attention not "
                          "raised: "
                       << why.why->step << ": " << why.why->reason;
    }

    SmallVector<Operation *> anchors;
    getOperation()->walk([&](Operation *op) {
      if (isa<linalg::SoftmaxOp>(op)) {
        anchors.push_back(op);
        return;
      }
      if (auto r = matchReduction(op); r && r->kind == ReductionKind::Max)
        anchors.push_back(op);
    });
    DenseSet<Operation *> erased;
    for (Operation *anchor : anchors) {
      if (erased.contains(anchor))
        continue;
      Explainer why;
      auto m = matchAttention(anchor, why);
      FailureOr<Operation *> raised = failure();
      // A decode step (a length mask over a KV cache) becomes
      // flash.attention_kvcache; every other attention, and a decode step
      // the KV-cache op cannot express, the dense flash.attention.
      Explainer whyNotKVCache;
      KVCacheLength length;
      bool kvcache =
          succeeded(m) &&
          succeeded(matchKVCacheLength(**m, length, whyNotKVCache));
      if (kvcache)
        raised = rewriteAttentionKVCache(**m, length, erased, why);
      else if (succeeded(m))
        raised = rewriteAttention(**m, erased, why);
      if (succeeded(raised)) {
        if (explain && kvcache)
          (*raised)->emitRemark()
              << "flash-raise-attention: decode step: the mask keeps keys "
                 "j < L_b of a KV cache; cache_seqlens = L_b counts the rows "
                 "the model wrote into the cache before attending, so the "
                 "op attends over the updated cache without new_kv";
        if (explain && !(*m)->alibiNote.empty())
          (*raised)->emitRemark()
              << "flash-raise-attention: an ALiBi-shaped bias (slope x "
                 "position) kept in score_mod, not the alibi operand: "
              << (*m)->alibiNote;
        if (explain && whyNotKVCache.why)
          (*raised)->emitRemark()
              << "flash-raise-attention: dense flash.attention, not "
                 "flash.attention_kvcache: "
              << whyNotKVCache.why->reason;
        Operation *placed = *raised;
        if (auto dense = dyn_cast<flash::AttentionOp>(placed);
            dense && narrowUpcasts)
          placed = narrowUpcastAttention(dense);
        // The FP8 forms, each with the remark of the case it declines.
        auto toFp8 = [&](auto op, auto raiseFp8, StringRef declined) {
          std::string whyNot;
          placed = raiseFp8(op, whyNot);
          if (explain && !whyNot.empty())
            placed->emitRemark()
                << "flash-raise-attention: " << declined << ": " << whyNot;
        };
        if (auto step = dyn_cast<flash::AttentionKVCacheOp>(placed);
            step && fp8)
          toFp8(step, raiseFp8KVCache,
                "decode step over a dequantised FP8 KV cache, kept over the "
                "16-bit cache");
        if (auto dense = dyn_cast<flash::AttentionOp>(placed); dense && fp8)
          toFp8(dense, raiseFp8Dequant,
                "16-bit attention over dequantised FP8 inputs, not raised "
                "to FP8");
        continue;
      }
      if (explain && why.softmaxFound && why.why)
        report(anchor, *why.why);
    }
  }

  static void report(Operation *anchor, const Why &w) {
    auto diag = anchor->emitRemark()
                << "flash-raise-attention: found a softmax but not an "
                   "attention: "
                << w.step << ": " << w.reason;
    if (w.at && w.at != anchor)
      diag << " (at '" << w.at->getName() << "')";
  }
};
} // namespace
