// Launch grids (KERNEL_ABI.md "Grids"): the tile grid of a `grid tiles`
// kernel and the walk of a `grid persistent` one, dense and over packed
// batches, sized from the named arguments and the GPU's SM count without
// a GPU. Reaches the runtime's internals (launch.h), so it includes no
// runtime.hpp (test_support.h).
#include "handles.h"
#include "launch.h"
#include "manifest.h"
#include "test_support.h"

#include <string>
#include <vector>

namespace {

#define EXPECT_STATUS(call, status, fragment)                                  \
  flashfuse_test::expectStatus(call, status, fragment, __LINE__)

// Two sm90ws-like forwards of 128-row tiles, one per grid key, and their
// packed-batch twins.
const char *kManifest = R"(flashfuse-manifest 1
arch 90
ptx k.ptx
kernel tiles
  kind forward
  dtype bf16
  head_dim 128
  head_dim_v 128
  block_m 128
  block_n 128
  threads 384
  smem 0
  causal none
  params memref:q
end
kernel walk
  kind forward
  dtype bf16
  head_dim 128
  head_dim_v 128
  block_m 128
  block_n 128
  threads 384
  smem 0
  causal top_left
  grid persistent
  params memref:q
end
kernel tiles_varlen
  kind forward
  dtype bf16
  head_dim 128
  head_dim_v 128
  block_m 128
  block_n 128
  threads 384
  smem 0
  causal none
  varlen 1
  params memref:q
end
kernel walk_varlen
  kind forward
  dtype bf16
  head_dim 128
  head_dim_v 128
  block_m 128
  block_n 128
  threads 384
  smem 0
  causal top_left
  varlen 1
  grid persistent
  params memref:q
end
kernel walk_varlen_full
  kind forward
  dtype bf16
  head_dim 128
  head_dim_v 128
  block_m 128
  block_n 128
  threads 384
  smem 0
  causal none
  varlen 1
  grid persistent
  params memref:q
end
)";

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
  // causal mask as this kernel's; 95% without) and the longest key
  // sequence is at most 8192: max_seqlen_k where the launch names it (the
  // forward's own launch does), else max_seqlen_q.
  EXPECT(same(launchGrid(walk, {{"heads_q", 16}, {"num_seqs", 16},
                                {"seq_q", 64000}, {"seq_k", 64000},
                                {"max_seqlen_q", 4000},
                                {"max_seqlen_k", 4000}}),
              132, 1, 1));
  EXPECT(same(launchGrid(walk, {{"heads_q", 16}, {"num_seqs", 16},
                                {"seq_q", 58000}, {"seq_k", 64000},
                                {"max_seqlen_q", 4000}}),
              132, 1, 1));
  EXPECT(same(launchGrid(walk, {{"heads_q", 2}, {"num_seqs", 3},
                                {"seq_q", 900}, {"seq_k", 900},
                                {"max_seqlen_q", 300}}),
              18, 1, 1));
  // A block a unit past 8192 keys ...
  EXPECT(same(launchGrid(walk, {{"heads_q", 16}, {"num_seqs", 2},
                                {"seq_q", 2048}, {"seq_k", 32768},
                                {"max_seqlen_q", 1024},
                                {"max_seqlen_k", 16384}}),
              256, 1, 1));
  EXPECT(same(launchGrid(walk, {{"heads_q", 16}, {"num_seqs", 4},
                                {"seq_q", 40000}, {"seq_k", 40000},
                                {"max_seqlen_q", 10000}}),
              5056, 1, 1));
  // ... and over unequal lengths: half the longest on average (queries
  // and keys), or equal queries over unequal keys.
  EXPECT(same(launchGrid(walk, {{"heads_q", 16}, {"num_seqs", 16},
                                {"seq_q", 33000}, {"seq_k", 33000},
                                {"max_seqlen_q", 4096},
                                {"max_seqlen_k", 4096}}),
              8192, 1, 1));
  EXPECT(same(launchGrid(walk, {{"heads_q", 16}, {"num_seqs", 16},
                                {"seq_q", 16384}, {"seq_k", 40000},
                                {"max_seqlen_q", 1024},
                                {"max_seqlen_k", 4096}}),
              2048, 1, 1));
  // Without a causal mask the batch must fill 95%.
  const flashfuse::KernelSpec &full = m.kernels[4];
  EXPECT(same(launchGrid(full, {{"heads_q", 16}, {"num_seqs", 16},
                                {"seq_q", 64000}, {"seq_k", 64000},
                                {"max_seqlen_q", 4000},
                                {"max_seqlen_k", 4000}}),
              132, 1, 1));
  EXPECT(same(launchGrid(full, {{"heads_q", 16}, {"num_seqs", 16},
                                {"seq_q", 58000}, {"seq_k", 64000},
                                {"max_seqlen_q", 4000}}),
              8192, 1, 1));
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
