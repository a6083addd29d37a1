// Launch grids (KERNEL_ABI.md "Grids"): the tile grid of a `grid tiles`
// kernel and the walk of a `grid persistent` one, dense and over packed
// batches, sized from the named arguments and the GPU's SM count without
// a GPU. Reaches the runtime's internals (launch.h), so it includes no
// runtime.hpp (test_support.h).
#include "handles.h"
#include "launch.h"
#include "manifest.h"
#include "test_support.h"

#include <cstdio>
#include <string>
#include <vector>

namespace {

#define EXPECT_STATUS(call, status, fragment)                                  \
  flashfuse_test::expectStatus(call, status, fragment, __LINE__)

// An sm90ws-like forward of 128-row tiles: `extra` its causal mask and
// grid lines.
std::string forward(const char *name, const char *extra) {
  return std::string("kernel ") + name +
         "\n  kind forward\n  dtype bf16\n  head_dim 128\n"
         "  head_dim_v 128\n  block_m 128\n  block_n 128\n  threads 384\n"
         "  smem 0\n" +
         extra + "  params memref:q\nend\n";
}

// A forward per grid key, their packed-batch twins, and a packed walk
// without a causal mask.
const std::string kManifest =
    std::string("flashfuse-manifest 1\narch 90\nptx k.ptx\n") +
    forward("tiles", "  causal none\n") +
    forward("walk", "  causal top_left\n  grid persistent\n") +
    forward("tiles_varlen", "  causal none\n  varlen 1\n") +
    forward("walk_varlen",
            "  causal top_left\n  varlen 1\n  grid persistent\n") +
    forward("walk_varlen_full",
            "  causal none\n  varlen 1\n  grid persistent\n");

struct Grid {
  unsigned x, y, z;
};

// An H100's SMs and grid limits.
void describeGpu(flashfuse_context &c) {
  c.smCount = 132;
  c.maxThreadsPerBlock = 1024;
  c.maxGrid[0] = 0x7fffffff;
  c.maxGrid[1] = c.maxGrid[2] = 65535;
}

Grid launchGrid(const flashfuse::KernelSpec &spec,
                const std::vector<std::pair<const char *, int64_t>> &ints) {
  std::vector<flashfuse_arg> args;
  for (auto [name, value] : ints)
    args.push_back(flashfuse::integer(name, FLASHFUSE_PARAM_I32, value));
  flashfuse_context c;
  describeGpu(c);
  unsigned grid[3] = {0, 0, 0};
  EXPECT_STATUS(flashfuse::gridSize(spec, args.data(), int(args.size()), c,
                                    grid),
                FLASHFUSE_SUCCESS, "");
  return {grid[0], grid[1], grid[2]};
}

bool same(Grid g, unsigned x, unsigned y, unsigned z) {
  return g.x == x && g.y == y && g.z == z;
}

void testDense() {
  flashfuse::Manifest m;
  EXPECT_STATUS(flashfuse::parseManifest(kManifest, "grids", m),
                FLASHFUSE_SUCCESS, "");
  if (m.kernels.size() != 5)
    return (void)++flashfuse_test::failures;
  const flashfuse::KernelSpec &tiles = m.kernels[0], &walk = m.kernels[1];
  // 2k rows, 16 heads, batch 8: 16 x 16 x 8 tiles.
  EXPECT(same(launchGrid(tiles, {{"batch", 8}, {"heads_q", 16},
                                 {"seq_q", 2048}, {"seq_k", 2048}}),
              16, 16, 8));
  // The walk: one block an SM, fewer where there are fewer tiles, one a
  // tile past 8192 keys.
  EXPECT(same(launchGrid(walk, {{"batch", 8}, {"heads_q", 16},
                                {"seq_q", 2048}, {"seq_k", 2048}}),
              132, 1, 1));
  EXPECT(same(launchGrid(walk, {{"batch", 1}, {"heads_q", 4},
                                {"seq_q", 1000}, {"seq_k", 1000}}),
              32, 1, 1));
  EXPECT(same(launchGrid(walk, {{"batch", 1}, {"heads_q", 16},
                                {"seq_q", 16384}, {"seq_k", 16384}}),
              2048, 1, 1));
  // Causal over an odd number of query blocks (17: 8 pairs and a single a
  // head and batch, 9 units): the largest grid coprime with 9.
  EXPECT(same(launchGrid(walk, {{"batch", 8}, {"heads_q", 16},
                                {"seq_q", 2176}, {"seq_k", 2176}}),
              131, 1, 1));
}

void testPacked() {
  flashfuse::Manifest m;
  EXPECT_STATUS(flashfuse::parseManifest(kManifest, "grids", m),
                FLASHFUSE_SUCCESS, "");
  if (m.kernels.size() != 5)
    return (void)++flashfuse_test::failures;
  const flashfuse::KernelSpec &tiles = m.kernels[2], &walk = m.kernels[3];
  // A block per query block of the longest sequence, head and sequence.
  EXPECT(same(launchGrid(tiles, {{"heads_q", 16}, {"num_seqs", 16},
                                 {"max_seqlen_q", 4000}}),
              32, 16, 16));
  // The walk over those units, where the sequences are about equally
  // long (on average 88% of the longest, in queries and in keys, under a
  // causal mask as `walk`'s; 95% without, as `full`'s) and the longest key
  // sequence is at most 8192: max_seqlen_k where the launch names it (the
  // forward's own launch does), else max_seqlen_q. Elsewhere a block a
  // unit: (T, 1, 1).
  const flashfuse::KernelSpec &full = m.kernels[4];
  struct Case {
    const flashfuse::KernelSpec *kernel;
    int64_t heads, seqs, totalQ, totalK, maxQ, maxK; // maxK 0: not named
    unsigned blocks;
    bool walks;
  } cases[] = {
      {&walk, 16, 16, 64000, 64000, 4000, 4000, 132, true},
      {&walk, 16, 16, 58000, 64000, 4000, 0, 132, true},
      {&walk, 2, 3, 900, 900, 300, 0, 18, true},
      // past 8192 keys
      {&walk, 16, 2, 2048, 32768, 1024, 16384, 256, false},
      {&walk, 16, 4, 40000, 40000, 10000, 0, 5056, false},
      // half the longest on average; equal queries over unequal keys
      {&walk, 16, 16, 33000, 33000, 4096, 4096, 8192, false},
      {&walk, 16, 16, 16384, 40000, 1024, 4096, 2048, false},
      // without a causal mask, 95%
      {&full, 16, 16, 64000, 64000, 4000, 4000, 132, true},
      {&full, 16, 16, 58000, 64000, 4000, 0, 8192, false},
      {&full, 16, 16, 48000, 48000, 3000, 3000, 132, true},
      // causal over an odd number of query blocks: a pair and a single a
      // (head, sequence), 2 units, so 131 CTAs; 5 blocks, 3 units: 131
      {&walk, 16, 85, 32640, 32640, 384, 384, 131, true},
      {&walk, 16, 51, 32640, 32640, 640, 640, 131, true},
      // 4 units of equal pairs: 132
      {&walk, 16, 64, 32768, 32768, 512, 512, 132, true},
  };
  for (const Case &k : cases) {
    std::vector<std::pair<const char *, int64_t>> args = {
        {"heads_q", k.heads}, {"num_seqs", k.seqs}, {"seq_q", k.totalQ},
        {"seq_k", k.totalK},  {"max_seqlen_q", k.maxQ}};
    if (k.maxK)
      args.push_back({"max_seqlen_k", k.maxK});
    Grid g = launchGrid(*k.kernel, args);
    if (!same(g, k.blocks, 1, 1)) {
      std::fprintf(stderr, "  %s: %u x %u x %u blocks, expected %u\n",
                   k.kernel->name.c_str(), g.x, g.y, g.z, k.blocks);
      ++flashfuse_test::failures;
    }
    // The rule the runtime exports for callers choosing a kernel.
    bool walks = flashfuse_packed_batch_walks(
        k.totalQ, k.maxK ? k.totalK : k.totalQ, k.seqs, k.maxQ,
        k.maxK ? k.maxK : k.maxQ, k.kernel->variant.causal);
    if (walks != k.walks) {
      std::fprintf(stderr, "  %s: flashfuse_packed_batch_walks %d, expected %d\n",
                   k.kernel->name.c_str(), walks, k.walks);
      ++flashfuse_test::failures;
    }
  }
  // The walk's grid needs the packed batch's sizes as the tile grid does.
  std::vector<flashfuse_arg> none;
  flashfuse_context c;
  describeGpu(c);
  unsigned grid[3];
  EXPECT_STATUS(flashfuse::gridSize(walk, none.data(), 0, c, grid),
                FLASHFUSE_ERROR_INVALID_ARGUMENT,
                "the grid needs a positive i32 argument 'heads_q'");
}

} // namespace

int main(int argc, char **argv) {
  static const flashfuse_test::Test tests[] = {{"grid_dense", testDense},
                                               {"grid_packed", testPacked}};
  return flashfuse_test::runTests(argc, argv, tests);
}
