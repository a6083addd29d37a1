/* How many splits of the key sequence a decode launch uses
 * (docs/KVCACHE.md). One definition, plain C99 and header-only, for the
 * runtime (launch time, actual sizes) and flash-select-config (compile
 * time, static sizes).
 */
#ifndef FLASHFUSE_DECODE_SPLITS_H
#define FLASHFUSE_DECODE_SPLITS_H

#include <stdint.h>

/* Splits for a decode grid of batch * heads_kv * m_blocks blocks over at
 * most key_blocks_max blocks of keys per sequence, on sm_count SMs running
 * blocks_per_sm blocks each.
 *
 * Decoding reads K and V once and does little arithmetic per byte, so its
 * speed is the number of bytes in flight: every SM must hold blocks that
 * stream keys. Without splits the grid has one block per (batch, kv head),
 * often fewer than the SMs. When the unsplit grid already fills most of one
 * wave, splitting only adds the combine's traffic: 1. Otherwise enough
 * splits for about two waves (so that the ragged tail of one wave overlaps
 * the next), but never so many that a split walks fewer than
 * kMinBlocksPerSplit key blocks (its prologue, epilogue and the partial
 * row it writes must stay small against the keys it streams).
 *
 * Why these numbers:
 * - 0.8 of a wave: a split costs the combine kernel's launch and a write
 *   and re-read of B * Hq * Sq * (Dv + 1) f32 per split; below one full
 *   wave the idle SMs cost more than that only when a good part of the
 *   GPU idles, so a grid within a fifth of a full wave is left whole.
 * - two waves, not one: blocks of one wave do not finish together (the
 *   lengths of a batch are ragged, and SMs run at slightly different
 *   speeds), and with a single wave the slowest block sets the time; with
 *   two, SMs freed early take blocks of the second wave.
 * - 4 key blocks (256 keys at block_n = 64): at fewer, a split's pipeline
 *   prologue and its partial row's 4 * (Dv + 1) bytes per packed row are
 *   no longer small against the 2 * block_n * D * 2 bytes of each key
 *   block it streams.
 * - 128 splits: beyond that the combine's reads of the partial rows rival
 *   the cache reads they were meant to overlap, for any shape decoding is
 *   used for.
 * key_blocks_max is ceil(capacity / block_n): the runtime does not read
 * the lengths (they are on the GPU), and the kernel divides each
 * sequence's actual key blocks evenly between the splits. */
static inline int32_t flashfuse_decode_num_splits(int64_t batch,
                                                  int64_t heads_kv,
                                                  int64_t m_blocks,
                                                  int64_t key_blocks_max,
                                                  int64_t sm_count,
                                                  int64_t blocks_per_sm) {
  const int64_t kMinBlocksPerSplit = 4, kMaxSplits = 128;
  int64_t base = batch * heads_kv * m_blocks;
  int64_t slots = sm_count * (blocks_per_sm > 0 ? blocks_per_sm : 1);
  if (base <= 0 || key_blocks_max <= 0 || 5 * base >= 4 * slots)
    return 1;
  int64_t splits = (2 * slots + base - 1) / base;
  int64_t most = key_blocks_max / kMinBlocksPerSplit;
  if (splits > most)
    splits = most;
  if (splits > kMaxSplits)
    splits = kMaxSplits;
  return splits < 1 ? 1 : (int32_t)splits;
}

#endif
