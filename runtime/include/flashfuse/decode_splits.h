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
 * stream keys. Without splits the grid has one block per (batch, kv head,
 * m-block), often fewer than the SMs. The rule: as many splits as fill one
 * wave, floor(slots / blocks), and 1 where the unsplit grid already fills
 * more than half a wave.
 *
 * Why these numbers:
 * - one wave, not two: a block's prologue (the Q tile, the first K/V
 *   stages) and epilogue (the warps' merge, the partial row) leave its SM's
 *   memory pipe idle unless another block streams beside it, and a second
 *   wave adds one such gap per SM. Measured on an H200 (run 77,
 *   docs/PERF.md), one wave read 3.5-4.3 TB/s where two waves read
 *   2.8-3.8 TB/s (B = 1 at 128k: 3953 against 3405 GB/s), and never less
 *   within noise.
 * - floor, not ceil: a wave and a few blocks is two waves.
 * - 4 key blocks at least per split: at fewer, a split's pipeline
 *   prologue and its partial row's 4 * (Dv + 1) bytes per packed row are
 *   no longer small against the 2 * block_n * D * 2 bytes of each key
 *   block it streams.
 * - 128 splits at most: beyond that the combine's reads of the partial
 *   rows rival the cache reads they were meant to overlap, for any shape
 *   decoding is used for.
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
  if (base <= 0 || key_blocks_max <= 0)
    return 1;
  int64_t splits = slots / base;
  int64_t most = key_blocks_max / kMinBlocksPerSplit;
  if (splits > most)
    splits = most;
  if (splits > kMaxSplits)
    splits = kMaxSplits;
  return splits < 1 ? 1 : (int32_t)splits;
}

/* The most key blocks of block_n keys each of cluster_max splits may walk
 * for those splits to merge in thread-block clusters where the one-wave
 * rule gives more splits (flashfuse_decode_num_splits_in_clusters): a
 * launch of cluster_blocks blocks in clusters on sm_count SMs, over a
 * cache of page_size rows a page (0: contiguous) and cache_element_bytes
 * bytes an element (2: f16 / bf16, 1: e4m3).
 *
 * The merge in clusters saves a fixed ~2 us; taking cluster_max splits
 * instead of the rule's count leaves SMs without a block, and what that
 * costs grows with the cache, faster the smaller the pages (a block
 * streams a paged cache more slowly, so half the blocks lose more). B = 1,
 * 32/8 heads (64 blocks in clusters), 128-key blocks, 8 splits in clusters
 * against the rule's 16 through the counters (H200, runs 254, 257):
 * contiguous 8k 12.6 us against 15.4, 16k 22.1 / 26.3, 32k 37.5 / 41.2, 64k
 * 68.3 / 70.8, 128k 128.9 / 128.5; page 64 32k 40.7 / 42.4; page 16 16k
 * 28.3 / 27.9, 32k 49.3 / 43.0. So 64 key blocks a split contiguous, 32
 * with pages of 64 rows or more, 16 with smaller ones.
 *
 * Those 64 blocks keep the memory busy because a 16-bit block streams its
 * cache at about 75 GB/s (H100). Three kinds of launch stream too little
 * for those caps. Two take 1024 keys a split instead (docs/PERF.md runs
 * 557-558, H100, B = 1, D = 128):
 * - an FP8 cache, whose blocks convert every code before their products
 *   (about 32 GB/s of codes a block): 32/8 heads, 256-key blocks, 8
 *   splits in clusters against the rule's 12-16 lost from 16k keys on
 *   (contiguous 16k 24.8 us against 22.6, 32k 41.7 / 37.5, 64k 71.7 /
 *   58.8, 128k 132.0 / 101.6; pages of 64 rows 1.15-1.36x, of 16
 *   1.12-1.19x) and won at 8k (17.3 against 18.8);
 * - clusters on under a fifth of the SMs: 16/2 heads (16 blocks in
 *   clusters) took 36.6 us at 32k in 8 splits against 21.5 in 32, 39.2
 *   against 22.3 with pages of 64 rows, and tied at 8k (15.2 / 15.0).
 *   At 32/4 heads (32 blocks, a quarter of an H100) 16 splits beat 8 in
 *   clusters by 3-11% at 16k-32k but the rule's own 33 did not, so the
 *   caps above stand there.
 * The third, past head_dim 128, takes none: the decode tile measured there
 * (64 rows by 32 keys at D = 256, which paged caches and ALiBi still take)
 * computes its 64 rows for a group's few and streams slowest of all; the
 * 16-row tile that contiguous caches take since docs/PERF.md run 565 was
 * not timed against clusters. D = 256, B = 1 (run 562, H100): 8 splits in
 * clusters took 30.1 / 52.0 / 93.1 us at 4k / 8k / 16k keys (16/8 heads)
 * where the rule's 16
 * took 23.2 / 35.6 / 56.3, and 30.3 / 50.4 / 92.5 (8/4) where its 16-32
 * took 23.0 / 25.4 / 37.4: 1.30-2.47x. */
static inline int64_t flashfuse_decode_cluster_key_blocks_per_split(
    int64_t page_size, int64_t cache_element_bytes, int64_t head_dim,
    int64_t block_n, int64_t cluster_blocks, int64_t sm_count) {
  const int64_t kShortSplitKeys = 1024;
  if (head_dim > 128)
    return 0;
  if (cache_element_bytes == 1 || 5 * cluster_blocks < sm_count)
    return block_n >= kShortSplitKeys || block_n <= 0
               ? 1
               : kShortSplitKeys / block_n;
  return page_size == 0 ? 64 : page_size >= 64 ? 32 : 16;
}

/* The split count where the kernel merges up to cluster_max splits inside
 * a thread-block cluster (docs/KERNEL_ABI.md "Decode", merge_splits 2; 0:
 * it cannot), the GPU running cluster_capacity[n] clusters of n blocks at
 * once, over a cache of page_size rows a page (0: contiguous), of
 * cache_element_bytes bytes an element, in blocks of block_n keys of
 * head_dim elements. Such a
 * merge keeps the partial rows in shared memory and costs two cluster
 * barriers, where a merge through the counters writes them to L2 and
 * reads them back behind a fence and an atomic (about 2 us at B = 1): so
 * a split of even one key block pays, and small grids take the most
 * splits up to cluster_max (one key block each at least) whose clusters
 * all run at once, where flashfuse_decode_num_splits gives fewer. On an
 * H200 (docs/PERF.md runs 250-251, 32/8 heads, D = 128, one block an SM)
 * B = 1 took 6.3 us at 512 keys in 4 splits against 7.6 in one, and 7.6
 * at 2k in 8 against 11.5 in 4 merged through the counters.
 * Where the one-wave rule gives more than cluster_max splits, cluster_max
 * splits in clusters still win while each walks few enough key blocks
 * (flashfuse_decode_cluster_key_blocks_per_split); past that the rule's
 * count stands (the counters merge it). */
static inline int32_t flashfuse_decode_num_splits_in_clusters(
    int64_t batch, int64_t heads_kv, int64_t m_blocks, int64_t key_blocks_max,
    int64_t sm_count, int64_t blocks_per_sm, int64_t cluster_max,
    const int32_t *cluster_capacity, int64_t page_size,
    int64_t cache_element_bytes, int64_t head_dim, int64_t block_n) {
  int32_t splits = flashfuse_decode_num_splits(
      batch, heads_kv, m_blocks, key_blocks_max, sm_count, blocks_per_sm);
  int64_t base = batch * heads_kv * m_blocks;
  int64_t n = cluster_max;
  if (!cluster_capacity || cluster_max <= 1 || base <= 0)
    return splits;
  if (splits > cluster_max)
    return key_blocks_max <= flashfuse_decode_cluster_key_blocks_per_split(
                                 page_size, cache_element_bytes, head_dim,
                                 block_n, base * cluster_max, sm_count) *
                                 cluster_max &&
                   base <= cluster_capacity[cluster_max]
               ? (int32_t)cluster_max
               : splits;
  if (n > key_blocks_max)
    n = key_blocks_max;
  for (; n > splits && n > 1; --n)
    if (base <= cluster_capacity[n])
      return (int32_t)n;
  return splits;
}

/* flashfuse_decode_num_splits_in_clusters over a 16-bit cache, D = 128,
 * in blocks of 128 keys (the tile its caps were measured on). */
static inline int32_t flashfuse_decode_num_splits_clustered(
    int64_t batch, int64_t heads_kv, int64_t m_blocks, int64_t key_blocks_max,
    int64_t sm_count, int64_t blocks_per_sm, int64_t cluster_max,
    const int32_t *cluster_capacity, int64_t page_size) {
  return flashfuse_decode_num_splits_in_clusters(
      batch, heads_kv, m_blocks, key_blocks_max, sm_count, blocks_per_sm,
      cluster_max, cluster_capacity, page_size, 2, 128, 128);
}

/* Grids of several waves (docs/KVCACHE.md "Tiles for grids of several
 * waves"): where the unsplit grid of one-block-an-SM tiles has at least
 * FLASHFUSE_DECODE_WAVES_MIN waves (blocks >= that many times the SMs), a
 * tile that fits two blocks an SM overlaps one block's prologue and merge
 * with the other's copies: 64-key blocks three deep at D = 128 read 1-5%
 * more on an H200 at B = 64, 2k (docs/PERF.md runs 196, 231), two deep
 * (the library's now, at two blocks an SM by their registers) 0.5-1.0%
 * more again (runs 323-324), and 4-7% less on paged caches where the grid is
 * one wave (run 197).
 * flash-select-config (static sizes) and the Python package (launch
 * sizes; flashfuse/_kvcache_ops.py's WAVES_MIN, the same number) take
 * such tiles then. */
#define FLASHFUSE_DECODE_WAVES_MIN 2

static inline int flashfuse_decode_grid_of_waves(int64_t blocks,
                                                 int64_t sm_count) {
  return sm_count > 0 && blocks >= FLASHFUSE_DECODE_WAVES_MIN * sm_count;
}

/* The decode blocks of smem_per_block bytes of shared memory (> 0) and
 * a value head dim of head_dim_v that run at once on an SM of smem_per_sm
 * bytes: as many as the shared memory holds, and at most two where
 * head_dim_v > 80. LowerToGPU gives it to ptxas as the kernel's launch
 * bound (.minnctapersm), so that ptxas keeps the registers the blocks
 * need and no more; flash-select-config takes it for the split count.
 * Why: a 16-bit decode block of 128 threads holds Dv / 2 registers a
 * thread of O rows and D / 4 of query fragments (96 at D = 128), and at
 * three blocks an SM (168 registers) ptxas spilled the 70 KB tiles (64
 * keys two deep, 128 one deep, sm_90, bottom-right): 4 / 24 bytes at
 * D = 96, 40 / 104-196 at 112, 40-52 at 128 (docs/PERF.md run 323), and
 * 8-52 of the FP8 cache's 128-key tiles at 128; none at D = 80. At two
 * blocks (255 registers) none spills. */
static inline int64_t flashfuse_decode_blocks_per_sm(int64_t smem_per_sm,
                                                     int64_t smem_per_block,
                                                     int64_t head_dim_v) {
  int64_t blocks = smem_per_block > 0 ? smem_per_sm / smem_per_block : 1;
  if (head_dim_v > 80 && blocks > 2)
    blocks = 2;
  return blocks < 1 ? 1 : blocks;
}

/* The counters' merge (docs/KERNEL_ABI.md "Decode", merge_splits 1) in two
 * levels past 2 * FLASHFUSE_DECODE_MERGE_CHUNK splits: the splits of each
 * chunk of FLASHFUSE_DECODE_MERGE_CHUNK consecutive ones count in on a
 * counter of their own, and the block that completes a chunk merges the
 * chunk's rows into its first split's partial rows; the block that
 * completes the last chunk merges the chunks' rows. Why: one block reads
 * every split's rows from L2, about 0.1 us a split at B = 1 on an H100
 * (docs/PERF.md run 568: 8/1 heads, 16k keys, 13.9 us in 32 splits, 22.4
 * in 128 in one wave, SDPA's step 10.2); in two levels each block reads
 * at most a chunk's rows or the chunks', and chunks merge as they
 * complete, beside splits still streaming.
 * Returns the chunks a launch of `splits` splits merges in (0: one level). */
#define FLASHFUSE_DECODE_MERGE_CHUNK 16

static inline int64_t flashfuse_decode_merge_chunks(int64_t splits) {
  const int64_t chunk = FLASHFUSE_DECODE_MERGE_CHUNK;
  return splits > 2 * chunk ? (splits + chunk - 1) / chunk : 0;
}

/* The i32 counters (split_arrivals) a launch of `groups` row groups
 * (B * Hkv * m-blocks) in `splits` splits counts in on: one a group, and
 * in two levels one a chunk too (the group's at group * (1 + chunks), its
 * chunk c's right after it, at + 1 + c). */
static inline int64_t flashfuse_decode_split_counters(int64_t groups,
                                                      int64_t splits) {
  return groups * (1 + flashfuse_decode_merge_chunks(splits));
}

#endif
