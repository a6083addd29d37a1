/* decode_splits.h is included by the compiler (flash-select-config) and the
 * runtime alike, so it must stay plain C99 with no dependency: this file is
 * compiled as strict C99 with warnings as errors, and checks the split
 * counts of the decode shapes the rule was designed for (docs/KVCACHE.md;
 * ANCHORS.md's decode table) on a 132-SM GPU (H100 SXM / H200).
 *
 * The decode kernel packs the G = Hq / Hkv = 4 query heads of a kv head
 * into one 64-row block (m_blocks = 1 at Sq = 1), streams 64-key blocks,
 * and two such blocks fit an SM (blocks_per_sm = 2: 264 slots). */
#include "flashfuse/decode_splits.h"

#include <stdio.h>

static int failures = 0;

static void expect(const char *what, int32_t got, int32_t want) {
  if (got != want) {
    fprintf(stderr, "  %s: got %d, want %d\n", what, (int)got,
            (int)want);
    ++failures;
  }
}

static int32_t blocks_per_sm_90(int64_t smem, int64_t head_dim_v) {
  return (int32_t)flashfuse_decode_blocks_per_sm(233472, smem, head_dim_v);
}

int main(void) {
  const int64_t sms = 132, perSm = 2, blockN = 64;
  /* B=16 Hkv=8 Sk=8k: 128 blocks fill half of 264 slots; one wave is
   * floor(264 / 128) = 2 splits of 64 key blocks. */
  expect("B=16 Hkv=8 8k",
         flashfuse_decode_num_splits(16, 8, 1, 8192 / blockN, sms, perSm), 2);
  /* B=4 Hkv=8 64k: 32 blocks; floor(264 / 32) = 8 splits. */
  expect("B=4 Hkv=8 64k",
         flashfuse_decode_num_splits(4, 8, 1, 65536 / blockN, sms, perSm), 8);
  /* B=64 Hkv=8 2k: 512 blocks are nearly two waves already: no split. */
  expect("B=64 Hkv=8 2k",
         flashfuse_decode_num_splits(64, 8, 1, 2048 / blockN, sms, perSm), 1);
  /* B=1 Hkv=8 128k: 8 blocks; 33 splits of 63 key blocks. */
  expect("B=1 Hkv=8 128k",
         flashfuse_decode_num_splits(1, 8, 1, 131072 / blockN, sms, perSm),
         33);
  /* One block per SM: 128 blocks are 0.97 of a wave, so B=16 stays whole. */
  expect("B=16 Hkv=8 8k, 1 block/SM",
         flashfuse_decode_num_splits(16, 8, 1, 8192 / blockN, sms, 1), 1);
  /* Half a wave: 132 of 264 slots splits in two, 133 does not split. */
  expect("132 blocks", flashfuse_decode_num_splits(132, 1, 1, 1024, sms, perSm),
         2);
  expect("133 blocks", flashfuse_decode_num_splits(133, 1, 1, 1024, sms, perSm),
         1);
  /* Each split walks at least 4 key blocks: a 256-key cache (4 blocks) is
   * never split, a 512-key one (8 blocks) at most twice. */
  expect("short cache", flashfuse_decode_num_splits(1, 8, 1, 4, sms, perSm), 1);
  expect("8 key blocks", flashfuse_decode_num_splits(1, 8, 1, 8, sms, perSm),
         2);
  /* At most 128 splits, however few blocks and long the cache. */
  expect("cap", flashfuse_decode_num_splits(1, 1, 1, 1 << 20, sms, perSm), 128);
  /* Degenerate inputs give one split, never zero or a division by zero. */
  expect("no keys", flashfuse_decode_num_splits(1, 8, 1, 0, sms, perSm), 1);
  expect("no blocks", flashfuse_decode_num_splits(0, 8, 1, 64, sms, perSm), 1);
  expect("blocks_per_sm 0",
         flashfuse_decode_num_splits(4, 8, 1, 1024, sms, 0), 4);
  {
    /* Splits merged in clusters of up to 8 (one block an SM, 128-key
     * blocks, Hkv = 8): as many as fit at once, one key block each at
     * least. `fits`: the clusters of n blocks an H200 runs at once; `few`:
     * only 7 of 4 or more. */
    static const int32_t fits[9] = {0, 0, 66, 44, 32, 24, 20, 16, 16};
    static const int32_t few[9] = {0, 0, 66, 44, 7, 7, 7, 7, 7};
    static const struct {
      const char *what;
      int64_t batch, key_blocks, cluster_max;
      const int32_t *capacity;
      int64_t page_size;
      int32_t want;
    } cases[] = {
        /* 512 keys: no split by the one-wave rule; 4 in clusters. 2k: the
         * rule's 4; 8 in clusters, unless fewer than 8 clusters of 4 fit
         * (the rule's 4, merged through the counters). */
        {"1/512", 1, 4, 8, fits, 0, 4},
        {"1/2k", 1, 16, 8, fits, 0, 8},
        {"1/2k, few", 1, 16, 8, few, 0, 4},
        /* The rule's 16 exceed the clusters' 8: 8 in clusters up to 64
         * key blocks each contiguous (8k to 64k), 32 with pages of 64 rows
         * (32k), 16 with pages of 16 (16k); the rule's 16 past that, or
         * where 8 clusters of 8 do not fit. */
        {"1/8k", 1, 64, 8, fits, 0, 8},
        {"1/32k", 1, 256, 8, fits, 0, 8},
        {"1/64k", 1, 512, 8, fits, 0, 8},
        {"1/128k", 1, 1024, 8, fits, 0, 16},
        {"1/32k, page 64", 1, 256, 8, fits, 64, 8},
        {"1/64k, page 64", 1, 512, 8, fits, 64, 16},
        {"1/16k, page 16", 1, 128, 8, fits, 16, 8},
        {"1/32k, page 16", 1, 256, 8, fits, 16, 16},
        {"1/8k, few", 1, 64, 8, few, 0, 16},
        /* B=4 4k: the rule's 4 stand (32 clusters of 4 fit, more do not);
         * no capacity or no clusters: the rule. */
        {"4/4k", 4, 32, 8, fits, 0, 4},
        {"no capacity", 1, 16, 8, 0, 0, 4},
        {"no clusters", 1, 16, 0, fits, 0, 4},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; ++i)
      expect(cases[i].what,
             flashfuse_decode_num_splits_clustered(
                 cases[i].batch, 8, 1, cases[i].key_blocks, sms, 1,
                 cases[i].cluster_max, cases[i].capacity, cases[i].page_size),
             cases[i].want);
    /* Caches the caps of 32/8 heads do not fit (B = 1 unless named), 8
     * splits in clusters at most, the fits above:
     * - an FP8 cache (256-key blocks): 8 in clusters up to 4 key blocks
     *   each (8k keys), the rule's 16 past that, contiguous or paged;
     *   B = 2's rule gives 8 itself, which clusters merge;
     * - 16-bit, 16/2 heads (16 blocks in clusters, under a fifth of 132
     *   SMs): up to 8 key blocks each, the rule past that; 32/4 (32
     *   blocks) keeps the caps of 32/8;
     * - D = 256's tile (64 rows, 32-key blocks): never 8 in clusters
     *   where the rule gives more; at 1k (32 blocks) the rule's 8 still
     *   merge in clusters. */
    {
      static const struct {
        const char *what;
        int64_t batch, heads_kv, key_blocks, page_size, element_bytes,
            head_dim, block_n;
        int32_t want;
      } other[] = {
          {"fp8 1/2k", 1, 8, 8, 0, 1, 128, 256, 8},
          {"fp8 1/8k", 1, 8, 32, 0, 1, 128, 256, 8},
          {"fp8 1/16k", 1, 8, 64, 0, 1, 128, 256, 16},
          {"fp8 1/128k", 1, 8, 512, 0, 1, 128, 256, 16},
          {"fp8 1/32k, page 64", 1, 8, 128, 64, 1, 128, 256, 16},
          {"fp8 1/8k, page 16", 1, 8, 32, 16, 1, 128, 256, 8},
          {"fp8 2/128k", 2, 8, 512, 0, 1, 128, 256, 8},
          {"16/2 8k", 1, 2, 64, 0, 2, 128, 128, 8},
          {"16/2 32k", 1, 2, 256, 0, 2, 128, 128, 64},
          {"16/2 32k, page 64", 1, 2, 256, 64, 2, 128, 128, 64},
          {"32/4 32k", 1, 4, 256, 0, 2, 128, 128, 8},
          {"32/8 32k", 1, 8, 256, 0, 2, 128, 128, 8},
          {"D 256 16/8 4k", 1, 8, 128, 0, 2, 256, 32, 16},
          {"D 256 8/4 8k", 1, 4, 256, 0, 2, 256, 32, 33},
          {"D 256 16/8 1k", 1, 8, 32, 0, 2, 256, 32, 8},
      };
      for (i = 0; i < sizeof other / sizeof other[0]; ++i)
        expect(other[i].what,
               flashfuse_decode_num_splits_in_clusters(
                   other[i].batch, other[i].heads_kv, 1, other[i].key_blocks,
                   sms, 1, 8, fits, other[i].page_size,
                   other[i].element_bytes, other[i].head_dim,
                   other[i].block_n),
               other[i].want);
    }
    expect("16-bit caps",
           flashfuse_decode_cluster_key_blocks_per_split(0, 2, 128, 128, 64, sms) ==
                   64 &&
               flashfuse_decode_cluster_key_blocks_per_split(64, 2, 128, 128,
                                                             64, sms) == 32 &&
               flashfuse_decode_cluster_key_blocks_per_split(16, 2, 128, 128,
                                                             64, sms) == 16,
           1);
  }
  /* Two waves of one block an SM or more: tiles that fit two an SM. */
  expect("264 blocks, 132 SMs", flashfuse_decode_grid_of_waves(264, sms), 1);
  expect("263 blocks, 132 SMs", flashfuse_decode_grid_of_waves(263, sms), 0);
  expect("no SM count", flashfuse_decode_grid_of_waves(512, 0), 0);
  /* Blocks an SM (sm_90's 228 KiB): as many as the shared memory holds,
   * two at most past Dv = 80 (the registers), one at least. */
  expect("70 KiB, Dv 128", blocks_per_sm_90(70656, 128), 2);
  expect("70 KiB, Dv 96", blocks_per_sm_90(70656, 96), 2);
  expect("70 KiB, Dv 80", blocks_per_sm_90(70656, 80), 3);
  expect("40 KiB, Dv 32", blocks_per_sm_90(40960, 32), 5);
  expect("136 KiB, Dv 128", blocks_per_sm_90(139264, 128), 1);
  expect("more than an SM", blocks_per_sm_90(300000, 64), 1);
  expect("no smem", blocks_per_sm_90(0, 128), 1);
  /* The counters' merge in two levels past 32 splits: chunks of 16. */
  expect("32 splits: one level", (int)flashfuse_decode_merge_chunks(32), 0);
  expect("33 splits: 3 chunks", (int)flashfuse_decode_merge_chunks(33), 3);
  expect("128 splits: 8 chunks", (int)flashfuse_decode_merge_chunks(128), 8);
  expect("counters, 8 groups, 16 splits",
         (int)flashfuse_decode_split_counters(8, 16), 8);
  expect("counters, 2 groups, 70 splits",
         (int)flashfuse_decode_split_counters(2, 70), 2 * (1 + 5));
  printf("%s decode_splits_c99\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
