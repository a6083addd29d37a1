//===- KVCacheReference.h - double-precision KV-cache reference -*- C++ -*-===//
//
// flash.attention_kvcache written straight from docs/KVCACHE.md in plain
// loops: the new rows are written into the caches through the page table,
// then each query row attends to the visible keys of its own sequence. It
// shares no code with the MLIR decomposition, so that the two can disagree.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_TOOLS_NUMERICS_KVCACHEREFERENCE_H
#define FLASHFUSE_TOOLS_NUMERICS_KVCACHEREFERENCE_H

#include "CaseSpec.h"
#include "HostTensor.h"

namespace flashfuse::numerics {

/// The op's inputs, values already rounded to the case's dtype (the caches
/// to cacheType(): e4m3 codes' values for an FP8 cache). Q, key_new,
/// value_new (and contiguous caches) are in the case's layout; paged caches
/// are [num_pages, page_size, Hkv, D]; blockTable is [B, max_pages];
/// kDescale / vDescale ([] or [B, Hkv]) only for an FP8 cache.
struct KVCacheInputs {
  HostTensor q, keyCache, valueCache, keyNew, valueNew;
  HostTensor seqlens, blockTable;
  HostTensor leftpad; // [B], empty without cache_leftpad
  HostTensor batchIdx; // [B], empty without cache_batch_idx
  HostTensor slopes;  // [Hq] or [B, Hq], empty without ALiBi
  HostTensor rotaryCos, rotarySin; // [R, rotary_dim / 2], empty without
  HostTensor kDescale, vDescale;
};

struct KVCacheOutputs {
  HostTensor output, lse, keyCacheOut, valueCacheOut;
};

/// `in` is not modified (HostTensor has no const accessors).
KVCacheOutputs referenceKVCache(const CaseSpec &c, KVCacheInputs &in);

} // namespace flashfuse::numerics

#endif
