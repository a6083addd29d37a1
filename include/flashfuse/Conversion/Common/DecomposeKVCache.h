//===- DecomposeKVCache.h - flash.attention_kvcache in other ops -*- C++ -*-===//
//
// The CPU lowerings serve flash.attention_kvcache by rewriting it into ops
// they already lower: the appended rows written into the caches, the paged
// cache gathered into a dense one, and a flash.attention whose mask_mod
// region holds the per-sequence length, causal and window rules of
// docs/KVCACHE.md. The GPU lowering has its own decode kernels and does not
// use this.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_CONVERSION_COMMON_DECOMPOSEKVCACHE_H
#define FLASHFUSE_CONVERSION_COMMON_DECOMPOSEKVCACHE_H

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::flash {

/// Replaces `op` (static shapes only) with the update of the caches (when
/// it has `new_kv`), the gather of paged caches and a flash.attention over
/// the first cache_seqlens[b] + Snew rows of each sequence.
void decomposeAttentionKVCache(RewriterBase &rewriter, AttentionKVCacheOp op);

/// Decomposes every flash.attention_kvcache under `root`. An op with a
/// dynamic shape is reported ("<lowering> needs static shapes: ...") and
/// left in place; fails when any op was.
LogicalResult decomposeKVCacheOps(Operation *root, StringRef lowering);

/// The same rewrite as a pattern (it does not match dynamic shapes), for
/// drivers that combine it with others.
void populateDecomposeKVCachePatterns(RewritePatternSet &patterns);

} // namespace mlir::flash

#endif // FLASHFUSE_CONVERSION_COMMON_DECOMPOSEKVCACHE_H
