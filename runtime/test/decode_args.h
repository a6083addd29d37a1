// The decode steps the runtime's tests launch (runtime_test.cpp,
// decode_plan_test.cpp): sizes, strides and scalars, no addresses (each
// test gives its own). Only the C API, like test_support.h.
#ifndef FLASHFUSE_RUNTIME_TEST_DECODE_ARGS_H
#define FLASHFUSE_RUNTIME_TEST_DECODE_ARGS_H

#include "flashfuse/runtime.h"

#include <cstdint>

namespace flashfuse_test {

// q and o [B, Sq, Hq, D] and the caches' element strides, as [b, h, s, d].
inline void setDecodeStrides(flashfuse_decode_args &a, const int64_t q[4],
                             const int64_t kv[4]) {
  for (int d = 0; d < 4; ++d) {
    a.q_stride[d] = a.o_stride[d] = q[d];
    a.k_stride[d] = a.v_stride[d] = kv[d];
  }
}

// A decode step of B = 3 sequences, GQA 32/8, Sq = 1, D = 128 over a
// contiguous f16 cache of 4096 rows, in flash-attn's layouts: q and o
// [B, Sq, Hq, D], the cache [B, C, Hkv, D] (seen through [b, h, s, d]
// strides, as Python passes them). data/decode's kernel 0.
inline flashfuse_decode_args decodeStepArgs() {
  flashfuse_decode_args a;
  flashfuse_decode_args_init(&a);
  a.dtype = FLASHFUSE_DTYPE_F16;
  a.batch = 3;
  a.heads_q = 32;
  a.heads_kv = 8;
  a.seq_q = 1;
  a.head_dim = a.head_dim_v = 128;
  a.cache_len = 4096;
  const int64_t q[4] = {32 * 128, 128, 32 * 128, 1};
  const int64_t kv[4] = {4096 * 8 * 128, 128, 8 * 128, 1};
  setDecodeStrides(a, q, kv);
  a.scale = 0.088f;
  return a;
}

// The same step over a paged bf16 cache of D = 64, page 16 (data/decode's
// kernel 1): 700 pages [700, 16, 8, 64], a table of 300 pages per
// sequence (rows 304 apart), a window and a softcap.
inline flashfuse_decode_args pagedStepArgs() {
  flashfuse_decode_args a = decodeStepArgs();
  a.dtype = FLASHFUSE_DTYPE_BF16;
  a.head_dim = a.head_dim_v = 64;
  a.cache_len = 0;
  a.page_size = 16;
  a.num_pages = 700;
  a.max_pages = 300;
  a.block_table_stride = 304;
  const int64_t q[4] = {32 * 64, 64, 32 * 64, 1};
  const int64_t kv[4] = {16 * 8 * 64, 64, 8 * 64, 1}; // [page, h, row, d]
  setDecodeStrides(a, q, kv);
  a.window_left = 128;
  a.window_right = 0;
  a.softcap = 30.0f;
  return a;
}

} // namespace flashfuse_test

#endif // FLASHFUSE_RUNTIME_TEST_DECODE_ARGS_H
