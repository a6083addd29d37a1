//===- KVCacheFp8.cpp - decode steps over a dequantised FP8 KV cache ------===//
//
// A model whose static KV cache is stored in float8_e4m3fn dequantises the
// whole cache right before each decode step attends over it:
// `k_cache.to(torch.bfloat16) * k_scale`, the same extf + mulf that
// Fp8Dequant.cpp matches for FP8 attention. Raised as it stands, the step
// becomes a 16-bit flash.attention_kvcache over the dequantised cache: the
// dequantise reads the e4m3 cache and writes a 16-bit copy of every row
// (capacity C, not just the L_b rows attended), and the decode reads that
// copy, twice the bytes of the e4m3 cache. The FP8 cache form of the op
// (docs/KVCACHE.md "FP8 cache") reads the e4m3 rows itself with
// k_descale / v_descale, so when both caches are such dequantises the op
// is rebuilt on them and the dequantises go.
//
// The descales are the model's scales read in f32 ([] per tensor, [B, Hkv]
// per kv head); the op dequantises in f32 where the model rounded each
// product to 16 bits, a difference within the FP8 numerics rule, as for
// FP8 attention. What stays 16-bit (a remark under explain=true says why):
//   - only one cache dequantised, or an f8E5M2 cache: the FP8 cache form
//     takes both caches in e4m3;
//   - a scale that varies along the rows or channels (per token, per
//     element): a descale is per tensor or per (sequence, kv head);
//   - a query dequantised from FP8 too: the FP8 cache form takes a 16-bit
//     query (FP8 Q is flash.attention's form), and an FP8-Q model is left
//     whole to the 16-bit form rather than half absorbed;
//   - a query that is not f16 / bf16 (an f32 model): the FP8 cache form
//     writes O in the query's 16-bit type;
//   - a dequantised cache that something else reads too: the 16-bit copy
//     is then materialised anyway, and the other reader would see values
//     rounded to 16 bits where the op saw f32 products.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::raise;

/// Whether the dequantise `d` feeding `user` has no other reader: its
/// result only `user`'s, each inner generic's only the next one's.
static bool onlyFeeds(const Fp8Dequant &d, Operation *user) {
  for (Operation *op : d.ops) {
    if (!llvm::all_of(op->getUsers(), [&](Operation *u) { return u == user; }))
      return false;
    user = op;
  }
  return true;
}

Operation *mlir::flash::raise::raiseFp8KVCache(AttentionKVCacheOp op,
                                               std::string &whyNot) {
  whyNot.clear();
  // The raise builds neither pages nor new rows (KVCacheRewrite.cpp); with
  // them the updated caches would change type too.
  if (op.isPaged() || op.hasNewKV() || op.getKDescale() || op.hasAlibi())
    return op;
  const char *names[2] = {"key cache", "value cache"};
  Value caches[2] = {op.getKeyCache(), op.getValueCache()};
  std::optional<Fp8Dequant> dq[2];
  for (int i = 0; i < 2; ++i) {
    std::string why;
    FailureOr<Fp8Dequant> d = matchFp8Dequant(caches[i], why);
    if (succeeded(d)) {
      dq[i] = *d;
    } else if (!why.empty() && whyNot.empty()) {
      whyNot = ("'" + Twine(names[i]) + "': " + why).str();
    }
  }
  if (!dq[0] && !dq[1] && whyNot.empty())
    return op; // no FP8 cache here, and nothing to explain
  if (!whyNot.empty())
    return op;
  if (!dq[0] || !dq[1]) {
    whyNot = "only one of the K and V caches is dequantised from FP8 (the "
             "FP8 cache form takes both in e4m3)";
    return op;
  }
  {
    std::string ignored;
    if (succeeded(matchFp8Dequant(op.getQuery(), ignored))) {
      whyNot = "the query is dequantised from FP8 too; "
               "flash.attention_kvcache takes a 16-bit query with an FP8 "
               "cache (FP8 Q is flash.attention's form)";
      return op;
    }
  }
  for (int i = 0; i < 2; ++i)
    if (failed(checkFp8Source(*dq[i], names[i], "an FP8 cache is", whyNot)))
      return op;
  Type qElt = getElementTypeOrSelf(op.getQuery());
  if (!qElt.isBF16() && !qElt.isF16()) {
    whyNot = "the query is not bf16 or f16 (an FP8 cache takes a 16-bit "
             "query, and O is in its type)";
    return op;
  }
  for (int i = 0; i < 2; ++i)
    if (!onlyFeeds(*dq[i], op)) {
      whyNot = ("the dequantised " + Twine(names[i]) +
                " has other users, so its 16-bit copy is computed anyway")
                   .str();
      return op;
    }
  SmallVector<int64_t, 4> perms[2] = {op.getKeyPerm(), op.getValuePerm()};
  bool perHead[2];
  for (int i = 0; i < 2; ++i)
    if (failed(checkFp8Scale(*dq[i], perms[i], names[i], perHead[i], whyNot)))
      return op;

  OpBuilder b(op);
  Location loc = op.getLoc();
  Value descales[2];
  for (int i = 0; i < 2; ++i)
    descales[i] = buildFp8Descale(b, loc, *dq[i], perHead[i], perms[i],
                                  op.getBatch(), op.getHeadsKV());
  Type lseType = op.getLse() ? op.getLse().getType() : Type();
  auto fp8 = AttentionKVCacheOp::create(
      b, loc, op.getOutput().getType(), lseType, /*key_cache_out=*/Type(),
      /*value_cache_out=*/Type(), op.getQuery(), dq[0]->f8, dq[1]->f8,
      op.getCacheSeqlens(), /*block_table=*/Value(), op.getCacheLeftpad(),
      /*key_new=*/Value(),
      /*value_new=*/Value(), descales[0], descales[1],
      /*alibi_slopes=*/Value(), /*rotary_cos=*/Value(), /*rotary_sin=*/Value(),
      op.getCacheBatchIdx(),
      op.getScaleAttr(), op.getCausalAttr(), op.getWindowLeftAttr(),
      op.getWindowRightAttr(), op.getSoftcapAttr(),
      /*rotary_interleaved=*/UnitAttr(), op.getQPermAttr(), op.getKPermAttr(),
      op.getVPermAttr(), op.getConfigAttr());
  for (NamedAttribute a : op->getDiscardableAttrs())
    fp8->setAttr(a.getName(), a.getValue());
  op->replaceAllUsesWith(fp8->getResults());
  op->erase();
  eraseFp8DequantIfUnused(*dq[0]);
  // K and V may be one dequantised tensor, erased once.
  if (dq[1]->ops.front() != dq[0]->ops.front())
    eraseFp8DequantIfUnused(*dq[1]);
  return fp8;
}
