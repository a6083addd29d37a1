// Decode plans (runtime.h "flashfuse_decode_plan"): a launch prepared once
// and replayed with each step's addresses. The kernels come from
// data/decode's manifest and the driver is a table of stubs that records
// what would be launched, so every kernel parameter a plan passes is
// checked against the addresses and sizes of the step, for several steps
// of one plan, without a GPU. Reaches the runtime's internals (handles.h),
// so it includes no runtime.hpp (test_support.h).
#include "decode_args.h"
#include "test_support.h"

#include "handles.h"
#include "launch.h"
#include "manifest.h"
#include "prepared_launch.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using flashfuse_test::dataDir;
using flashfuse_test::failures;
using flashfuse_test::fakePointer;
namespace cu = flashfuse::cu;

#define EXPECT_STATUS(call, status, fragment)                                  \
  flashfuse_test::expectStatus(call, status, fragment, __LINE__)

// What the stub driver saw.
struct Launch {
  const flashfuse::KernelSpec *spec;
  unsigned grid[3], threads, smem;
  void *stream;
  std::vector<uint64_t> slots; // one 8-byte value per kernel parameter
  // Thread-block clusters (cuLaunchKernelEx): (clusterX, 1, 1) blocks;
  // 1 for cuLaunchKernel.
  unsigned clusterX = 1;
  bool ex = false; // launched through cuLaunchKernelEx
};
struct Memset {
  uint64_t address;
  unsigned value;
  size_t count;
  void *stream;
};
std::vector<Launch> launches;
std::vector<Memset> memsets;
// The runtime's split counters (split_arrivals.h): what the stub driver
// allocated, and the capture it reports for every stream.
struct Allocation {
  uint64_t address;
  size_t bytes;
};
std::vector<Allocation> allocations;
int captureStatus = cu::CU_STREAM_CAPTURE_STATUS_NONE;
uint64_t captureId = 0;
cu::CUresult launchResult = cu::CUDA_SUCCESS;
// The kernels' specs, by the fake function handle (index + 1).
std::vector<const flashfuse::KernelSpec *> specs;
cu::CUctx_st *const kContext = reinterpret_cast<cu::CUctx_st *>(0x1000);

int slotCount(const flashfuse::KernelSpec &spec) {
  int n = 0;
  for (const flashfuse::ParamSpec &p : spec.params)
    n += p.type == FLASHFUSE_PARAM_MEMREF ? 5 : 1;
  return n;
}

cu::CUresult stubLaunch(cu::CUfunction f, unsigned gx, unsigned gy,
                        unsigned gz, unsigned bx, unsigned, unsigned,
                        unsigned smem, cu::CUstream stream, void **params,
                        void **) {
  const flashfuse::KernelSpec *spec =
      specs[reinterpret_cast<uintptr_t>(f) - 1];
  Launch l{spec, {gx, gy, gz}, bx, smem, stream, {}};
  for (int i = 0; i < slotCount(*spec); ++i)
    l.slots.push_back(*static_cast<const uint64_t *>(params[i]));
  launches.push_back(l);
  return launchResult;
}

// cuLaunchKernelEx: the same record, with the cluster dimension of the
// configuration's attributes (which must be (x, 1, 1), and the blocks 1-D).
cu::CUresult stubLaunchEx(const cu::CUlaunchConfig *config, cu::CUfunction f,
                          void **params, void **extra) {
  unsigned clusterX = 1;
  bool wellFormed = config->blockDimY == 1 && config->blockDimZ == 1;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const cu::CUlaunchAttribute &attr = config->attrs[i];
    if (attr.id != cu::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
      continue;
    clusterX = attr.value.clusterDim.x;
    wellFormed = wellFormed && attr.value.clusterDim.y == 1 &&
                 attr.value.clusterDim.z == 1 &&
                 config->gridDimX % clusterX == 0;
  }
  EXPECT(wellFormed);
  cu::CUresult r = stubLaunch(f, config->gridDimX, config->gridDimY,
                              config->gridDimZ, config->blockDimX,
                              config->blockDimY, config->blockDimZ,
                              config->sharedMemBytes, config->hStream, params,
                              extra);
  launches.back().clusterX = clusterX;
  launches.back().ex = true;
  return r;
}

// The allocations cleared whole on the legacy stream (split_arrivals.h's
// chunks), by address.
std::vector<uint64_t> zeroedAllocations;

cu::CUresult stubMemset(cu::CUdeviceptr dst, unsigned value, size_t count,
                        cu::CUstream stream) {
  memsets.push_back({dst, value, count, stream});
  for (const Allocation &a : allocations)
    if (a.address == dst && a.bytes == count * 4 && value == 0 && !stream)
      zeroedAllocations.push_back(dst);
  return cu::CUDA_SUCCESS;
}

// Whether `count` counters at `address` lie in an allocation that was
// cleared whole.
bool inZeroedAllocation(uint64_t address, size_t count) {
  for (const Allocation &a : allocations)
    if (address >= a.address && address + count * 4 <= a.address + a.bytes)
      for (uint64_t z : zeroedAllocations)
        if (z == a.address)
          return true;
  return false;
}

// The address launch `l` bound to memref param `name` (0 if none).
uint64_t boundAddress(const Launch &l, const char *name) {
  size_t slot = 0;
  for (const flashfuse::ParamSpec &p : l.spec->params) {
    if (p.name == name)
      return l.slots[slot];
    slot += p.type == FLASHFUSE_PARAM_MEMREF ? 5 : 1;
  }
  return 0;
}

// Whether a memset ran on `stream`.
bool clearedOn(void *stream) {
  for (const Memset &m : memsets)
    if (m.stream == stream)
      return true;
  return false;
}

cu::CUresult stubCaptureInfo(cu::CUstream, int *status, uint64_t *id, void **,
                             const void ***, size_t *) {
  *status = captureStatus;
  *id = captureId;
  return cu::CUDA_SUCCESS;
}

cu::CUresult stubAlloc(cu::CUdeviceptr *ptr, size_t bytes) {
  // 16 MiB apart, from 0xd00000000 (far from stepAddresses').
  *ptr = 0xd00000000ull + allocations.size() * 0x1000000ull;
  allocations.push_back({*ptr, bytes});
  return cu::CUDA_SUCCESS;
}

cu::CUresult stubSynchronize(cu::CUstream) { return cu::CUDA_SUCCESS; }

cu::CUresult stubGetCurrent(cu::CUcontext *ctx) {
  *ctx = kContext;
  return cu::CUDA_SUCCESS;
}

cu::CUresult stubErrorName(cu::CUresult, const char **name) {
  *name = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
  return cu::CUDA_SUCCESS;
}

// data/decode's kernels as a loaded artifact on a 132-SM GPU (the H100's),
// two blocks of each an SM.
struct FakeArtifact {
  flashfuse::DriverApi api{};
  flashfuse_context context;
  flashfuse_artifact artifact;
  std::vector<std::unique_ptr<flashfuse_kernel>> kernels;

  FakeArtifact() {
    api.cuLaunchKernel = stubLaunch;
    // A CUDA 12 driver: clusters can be launched (tests of older drivers
    // clear it).
    api.cuLaunchKernelEx = stubLaunchEx;
    api.cuMemsetD32Async = stubMemset;
    api.cuStreamGetCaptureInfo = stubCaptureInfo;
    api.cuMemAlloc = stubAlloc;
    api.cuStreamSynchronize = stubSynchronize;
    api.cuCtxGetCurrent = stubGetCurrent;
    api.cuGetErrorName = stubErrorName;
    context.api = &api;
    context.ctx = kContext;
    context.smCount = 132;
    context.maxThreadsPerBlock = 1024;
    context.maxGrid[0] = 0x7fffffff;
    context.maxGrid[1] = context.maxGrid[2] = 65535;
    artifact.context = &context;
    if (flashfuse::readManifest(dataDir + "/decode", artifact.manifest.data) !=
        FLASHFUSE_SUCCESS) {
      std::fprintf(stderr, "  %s\n", flashfuse_last_error());
      ++failures;
      return;
    }
    specs.clear();
    for (const flashfuse::KernelSpec &spec : artifact.manifest.data.kernels) {
      specs.push_back(&spec);
      auto k = std::make_unique<flashfuse_kernel>();
      k->artifact = &artifact;
      k->spec = &spec;
      k->function = reinterpret_cast<cu::CUfunction>(specs.size());
      k->blocksPerSm = 2;
      // 32 clusters of each size at once (the runtime asks the driver).
      for (int n = 2; n < int(k->clusterCapacity.size()); ++n)
        k->clusterCapacity[n] = 32;
      kernels.push_back(std::move(k));
    }
  }
  flashfuse_kernel *kernel(int i) {
    return i >= 0 && i < int(kernels.size()) ? kernels[i].get() : nullptr;
  }
};

// data/decode's kernels: 0 (f16, D = 128, merged by combine 2), 1 (paged
// bf16 D = 64, combine 3), 8 (f16, D = 128, merges its splits itself);
// their kv_append kernels 4 and 5; 9 (kernel 8 as built since it puts its
// counters back to 0: split_arrivals); 10 (kernel 9 that also merges up to
// 8 splits in a thread-block cluster: cluster_merge 8); 11 (kernel 0 over a
// left-padded cache: cache_leftpad); 12 (kernel 0 with ALiBi, slopes
// [B, Hq]: alibi_slopes); 13 and 14 (kernels 0 and 4 over a pool of
// sequences: cache_batch_idx).
constexpr int kDecode = 0, kPaged = 1, kCombine = 2, kPagedCombine = 3,
              kAppend = 4, kPagedAppend = 5, kMerging = 8, kArrivals = 9,
              kCluster = 10, kLeftPad = 11, kAlibi = 12, kPool = 13,
              kPoolAppend = 14;

// The addresses of step `step`: every buffer moves between steps, as
// freshly allocated outputs and a workspace from a caching allocator do.
flashfuse_decode_addresses stepAddresses(int step, bool paged,
                                         size_t workspaceBytes,
                                         bool newRows = false,
                                         bool leftpad = false,
                                         bool alibi = false,
                                         bool pool = false) {
  auto at = [&](uintptr_t base) {
    return const_cast<void *>(fakePointer(base + uintptr_t(step) * 0x10000));
  };
  flashfuse_decode_addresses s{};
  s.q = at(0x10000000);
  s.k_cache = at(0x20000000);
  s.v_cache = at(0x30000000);
  s.o = at(0x40000000);
  s.lse = static_cast<float *>(at(0x50000000));
  s.cache_seqlens = static_cast<const int32_t *>(at(0x60000000));
  if (paged)
    s.block_table = static_cast<const int32_t *>(at(0x70000000));
  if (newRows) {
    s.k_new = at(0xa0000000);
    s.v_new = at(0xb0000000);
  }
  if (leftpad)
    s.cache_leftpad = static_cast<const int32_t *>(at(0xc0000000));
  if (alibi)
    s.alibi_slopes = static_cast<const float *>(at(0xd0000000));
  if (pool)
    s.cache_batch_idx = static_cast<const int32_t *>(at(0xe0000000));
  if (workspaceBytes) {
    s.workspace = at(0x80000000);
    s.workspace_bytes = workspaceBytes;
  }
  return s;
}

// `a` with the addresses of step `s`, as the unprepared entry points take
// them.
flashfuse_decode_args withStep(flashfuse_decode_args a,
                               const flashfuse_decode_addresses &s) {
  a.q = s.q;
  a.k_cache = s.k_cache;
  a.v_cache = s.v_cache;
  a.o = s.o;
  a.lse = s.lse;
  a.cache_seqlens = s.cache_seqlens;
  a.block_table = s.block_table;
  a.k_new = s.k_new;
  a.v_new = s.v_new;
  a.k_descale = s.k_descale;
  a.v_descale = s.v_descale;
  a.cache_leftpad = s.cache_leftpad;
  a.alibi_slopes = s.alibi_slopes;
  a.cache_batch_idx = s.cache_batch_idx;
  return a;
}

size_t alignPartial(size_t bytes) { return (bytes + 255) / 256 * 256; }

// Checks launch `l` of `spec` against step `s` of `a`, split `splits` ways:
// every memref param at the address its buffer names (the partial results
// and the counters at their offsets in the workspace), and the sizes.
// `merging`: the decode merges its splits through counters; `cluster`: in
// thread-block clusters (no partial results or counters: their params at
// O and LSE, unread).
void expectParams(const Launch &l, const flashfuse::KernelSpec &spec,
                  const flashfuse_decode_args &a,
                  const flashfuse_decode_addresses &s, int splits,
                  bool merging, int line, uintptr_t keptCounters = 0,
                  bool cluster = false) {
  auto address = [](const void *p) { return reinterpret_cast<uintptr_t>(p); };
  int64_t rows = a.batch * a.heads_q * a.seq_q;
  uintptr_t ws = address(s.workspace);
  size_t lseOffset = alignPartial(size_t(splits) * rows * a.head_dim_v * 4);
  size_t countersOffset = alignPartial(lseOffset + size_t(splits) * rows * 4);
  std::map<std::string, uintptr_t> buffers = {
      {"q", address(s.q)},
      {"k", address(s.k_cache)},
      {"v", address(s.v_cache)},
      {"o", address(s.o)},
      {"lse", address(s.lse)},
      {"cache_seqlens", address(s.cache_seqlens)},
      {"cache_leftpad", address(s.cache_leftpad)},
      {"alibi_slopes", address(s.alibi_slopes)},
      {"cache_batch_idx", address(s.cache_batch_idx)},
      {"block_table", address(s.block_table)},
      {"k_new", address(s.k_new)},
      {"v_new", address(s.v_new)},
      {"o_partial", splits > 1 && !cluster ? ws : address(s.o)},
      {"lse_partial",
       splits > 1 && !cluster ? ws + lseOffset : address(s.lse)},
      {"split_counters", merging ? ws + countersOffset : address(s.lse)},
      {"split_arrivals", !merging      ? address(s.lse)
                         : keptCounters ? keptCounters
                                        : ws + countersOffset}};
  int64_t capacity = a.page_size ? a.max_pages * a.page_size : a.cache_len;
  std::map<std::string, int64_t> scalars = {
      {"batch", a.batch},         {"heads_q", a.heads_q},
      {"heads_kv", a.heads_kv},   {"seq_q", a.seq_q},
      {"seq_k", capacity},        {"num_splits", splits},
      {"merge_splits", cluster ? 2 : merging},
      {"q_stride_b", a.q_stride[0]},
      {"k_stride_s", a.k_stride[2]}, {"num_pages", a.num_pages},
      {"seq_new", a.seq_new},     {"k_new_stride_h", a.k_new_stride[1]},
      {"block_table_stride", a.block_table_stride},
      {"cache_batch", a.cache_batch}};
  if (l.spec != &spec) {
    std::fprintf(stderr, "  line %d: launched '%s', expected '%s'\n", line,
                 l.spec->name.c_str(), spec.name.c_str());
    ++failures;
    return;
  }
  size_t slot = 0;
  for (const flashfuse::ParamSpec &p : spec.params) {
    if (p.type == FLASHFUSE_PARAM_MEMREF) {
      auto it = buffers.find(p.name);
      bool ok = it != buffers.end() && l.slots[slot] == it->second &&
                l.slots[slot + 1] == it->second && l.slots[slot + 2] == 0 &&
                l.slots[slot + 4] == 1;
      if (!ok) {
        std::fprintf(stderr, "  line %d: '%s' param '%s' bound to 0x%llx\n",
                     line, spec.name.c_str(), p.name.c_str(),
                     static_cast<unsigned long long>(l.slots[slot]));
        ++failures;
      }
      slot += 5;
      continue;
    }
    auto it = scalars.find(p.name);
    if (it != scalars.end() && p.type != FLASHFUSE_PARAM_F32) {
      int64_t value = p.type == FLASHFUSE_PARAM_I32
                          ? int64_t(int32_t(uint32_t(l.slots[slot])))
                          : int64_t(l.slots[slot]);
      if (value != it->second) {
        std::fprintf(stderr, "  line %d: '%s' param '%s' = %lld, not %lld\n",
                     line, spec.name.c_str(), p.name.c_str(),
                     static_cast<long long>(value),
                     static_cast<long long>(it->second));
        ++failures;
      }
    }
    ++slot;
  }
}

// A plan of kernels `decode` and `combine` launched for three steps, each
// with its own addresses: the parameters, grids and counter clears of every
// launch follow that step's addresses. Returns the plan's split count.
int checkSteps(FakeArtifact &f, int decode, int combine,
               const flashfuse_decode_args &a, int line) {
  flashfuse_decode_plan *plan = nullptr;
  EXPECT_STATUS(flashfuse_decode_plan_create(f.kernel(decode),
                                             f.kernel(combine), &a, &plan),
                FLASHFUSE_SUCCESS, "");
  if (!plan)
    return 0;
  int32_t splits = 0;
  size_t bytes = 0;
  EXPECT_STATUS(flashfuse_decode_plan_info(plan, &splits, &bytes),
                FLASHFUSE_SUCCESS, "");
  // The unprepared path's own count (prepareDecode) agrees.
  int32_t splitsUnprepared = 0;
  size_t bytesUnprepared = 0;
  const flashfuse::KernelSpec &spec = *f.kernel(decode)->spec;
  bool leftpad = spec.variant.leftpad != 0, alibi = spec.variant.alibi != 0,
       pool = spec.variant.batch_idx != 0;
  flashfuse_decode_args withAddresses = withStep(
      a, stepAddresses(0, a.page_size != 0, 0, false, leftpad, alibi, pool));
  EXPECT_STATUS(flashfuse_decode_workspace_bytes(
                    f.kernel(decode), f.kernel(combine), &withAddresses,
                    &splitsUnprepared, &bytesUnprepared),
                FLASHFUSE_SUCCESS, "");
  EXPECT(splits == splitsUnprepared && bytes == bytesUnprepared);
  bool merging = false, keeps = false;
  for (const flashfuse::ParamSpec &p : spec.params) {
    merging = merging || p.name == "split_counters" ||
              p.name == "split_arrivals";
    keeps = keeps || p.name == "split_arrivals";
  }
  // Merged in clusters where the kernel can merge this many splits so
  // (up to the portable 8), the driver launches clusters and one per row
  // group all fit at once.
  int64_t rowGroups =
      a.batch * a.heads_kv *
      ((a.heads_q / a.heads_kv * a.seq_q + spec.block_m - 1) / spec.block_m);
  bool cluster = splits > 1 && splits <= spec.clusterMerge && splits <= 8 &&
                 f.api.cuLaunchKernelEx &&
                 rowGroups <= f.kernel(decode)->clusterCapacity[splits];
  if (cluster)
    EXPECT(bytes == 0);
  merging = merging && splits > 1 && !cluster;
  keeps = keeps && merging;
  std::vector<uint64_t> kept;
  int64_t group = a.heads_q / a.heads_kv;
  int64_t mBlocks = (group * a.seq_q + spec.block_m - 1) / spec.block_m;
  for (int step = 0; step < 3; ++step) {
    launches.clear();
    memsets.clear();
    flashfuse_decode_addresses s =
        stepAddresses(step, a.page_size != 0, bytes, false, leftpad, alibi,
                      pool);
    void *stream = const_cast<void *>(fakePointer(0xabc0 + step));
    EXPECT_STATUS(flashfuse_decode_plan_launch(plan, &s, stream),
                  FLASHFUSE_SUCCESS, "");
    bool combined = splits > 1 && !merging && !cluster;
    if (launches.size() != (combined ? 2u : 1u)) {
      std::fprintf(stderr, "  line %d: %zu launches\n", line, launches.size());
      ++failures;
      continue;
    }
    const Launch &d = launches[0];
    uint64_t keptAt = keeps ? boundAddress(d, "split_arrivals") : 0;
    expectParams(d, spec, a, s, splits, merging, line, keptAt, cluster);
    EXPECT(d.grid[0] == unsigned(splits * mBlocks) &&
           d.grid[1] == unsigned(a.heads_kv) && d.grid[2] == unsigned(a.batch));
    // One cluster per row group: its splits, adjacent in x.
    EXPECT(d.clusterX == (cluster ? unsigned(splits) : 1u) && d.ex == cluster);
    EXPECT(d.threads == unsigned(spec.threads) &&
           d.smem == unsigned(spec.smem) && d.stream == stream);
    if (combined)
      expectParams(launches[1], *f.kernel(combine)->spec, a, s, splits, false,
                   line);
    // The counters, one per (batch, kv head, m-block): the runtime's,
    // cleared once when allocated and never on the step's stream; or
    // the workspace's, cleared first.
    size_t counterCount = size_t(a.batch * a.heads_kv * mBlocks);
    if (keeps) {
      EXPECT(!clearedOn(stream) && inZeroedAllocation(keptAt, counterCount));
      kept.push_back(keptAt);
    } else if (merging) {
      size_t rows = size_t(a.batch * a.heads_q * a.seq_q);
      size_t lseOffset = alignPartial(size_t(splits) * rows * a.head_dim_v * 4);
      size_t counters = alignPartial(lseOffset + size_t(splits) * rows * 4);
      EXPECT(memsets.size() == 1 &&
             memsets[0].address ==
                 reinterpret_cast<uintptr_t>(s.workspace) + counters &&
             memsets[0].value == 0 && memsets[0].count == counterCount &&
             memsets[0].stream == stream);
    } else {
      EXPECT(memsets.empty());
    }
  }
  // Each step ran on a stream of its own: counters of its own.
  if (keeps)
    EXPECT(kept.size() == 3 && kept[0] != kept[1] && kept[1] != kept[2] &&
           kept[0] != kept[2]);
  flashfuse_decode_plan_destroy(plan);
  return splits;
}

void testStepsFollowTheirAddresses() {
  FakeArtifact f;
  flashfuse_decode_args a = flashfuse_test::decodeStepArgs();
  // Automatic: 24 blocks on 132 SMs split; a combine merges them.
  EXPECT(checkSteps(f, kDecode, kCombine, a, __LINE__) > 1);
  a.num_splits = 1; // one split: O and LSE written directly
  EXPECT(checkSteps(f, kDecode, kCombine, a, __LINE__) == 1);
  a.num_splits = 4;
  EXPECT(checkSteps(f, kDecode, kCombine, a, __LINE__) == 4);
  // The decode merges its splits itself: counters in the workspace.
  a.num_splits = 0;
  EXPECT(checkSteps(f, kMerging, -1, a, __LINE__) > 1);
  a.num_splits = 3;
  EXPECT(checkSteps(f, kMerging, -1, a, __LINE__) == 3);
  // ... and puts them back to 0: the runtime's counters.
  a.num_splits = 0;
  EXPECT(checkSteps(f, kArrivals, -1, a, __LINE__) > 1);
  a.num_splits = 3;
  EXPECT(checkSteps(f, kArrivals, -1, a, __LINE__) == 3);
  a.num_splits = 1; // no counters: the param is bound to an unread buffer
  EXPECT(checkSteps(f, kArrivals, -1, a, __LINE__) == 1);
  // A left-padded cache: its first rows move too (the same splits).
  a.num_splits = 0;
  int32_t plain = checkSteps(f, kDecode, kCombine, a, __LINE__);
  EXPECT(checkSteps(f, kLeftPad, kCombine, a, __LINE__) == plain);
  // ALiBi: its slopes move too (the same splits).
  EXPECT(checkSteps(f, kAlibi, kCombine, a, __LINE__) == plain);
  // A pool of sequences: its indices move too, and its size (dim 0 of the
  // caches) is the plan's.
  flashfuse_decode_args pooled = a;
  pooled.cache_batch = 6;
  EXPECT(checkSteps(f, kPool, kCombine, pooled, __LINE__) == plain);
  // Paged: the table moves too.
  flashfuse_decode_args p = flashfuse_test::pagedStepArgs();
  EXPECT(checkSteps(f, kPaged, kPagedCombine, p, __LINE__) > 1);
  p.num_splits = 1;
  EXPECT(checkSteps(f, kPaged, kPagedCombine, p, __LINE__) == 1);
}

// The splits merged in a thread-block cluster (cluster_merge, KERNEL_ABI.md
// "Decode"): up to the kernel's 8 splits, the decode is launched as clusters
// of num_splits blocks with merge_splits 2 and needs no workspace; more
// splits, or a driver without cuLaunchKernelEx, merge through the counters.
void testClusterMerge() {
  FakeArtifact f;
  if (f.kernels.size() <= size_t(kCluster))
    return (void)++failures;
  EXPECT(f.kernel(kCluster)->spec->clusterMerge == 8);
  EXPECT(f.kernel(kArrivals)->spec->clusterMerge == 0); // absent
  flashfuse_decode_args a = flashfuse_test::decodeStepArgs();
  // Plan and unprepared query agree (checkSteps): 0 bytes, one launch.
  auto info = [&](int kernel, const flashfuse_decode_args &args,
                  int32_t &splits, size_t &bytes) {
    flashfuse_decode_args withAddresses =
        withStep(args, stepAddresses(0, false, 0));
    EXPECT_STATUS(flashfuse_decode_workspace_bytes(f.kernel(kernel), nullptr,
                                                   &withAddresses, &splits,
                                                   &bytes),
                  FLASHFUSE_SUCCESS, "");
  };
  for (int n = 2; n <= 8; ++n) {
    a.num_splits = n;
    EXPECT(checkSteps(f, kCluster, -1, a, __LINE__) == n);
    int32_t splits = 0;
    size_t bytes = 1;
    info(kCluster, a, splits, bytes);
    EXPECT(splits == n && bytes == 0);
  }
  // Automatic: 8 splits (runtime_test.cpp's testDecodeInKernelMerge), in
  // clusters.
  a.num_splits = 0;
  int32_t automatic = 0;
  size_t automaticBytes = 1;
  info(kCluster, a, automatic, automaticBytes);
  EXPECT(automatic == 8 && automaticBytes == 0);
  EXPECT(checkSteps(f, kCluster, -1, a, __LINE__) == 8);
  // More splits than a cluster merges: the counters (the workspace as the
  // kernel without cluster_merge needs it).
  a.num_splits = 16;
  int32_t splits = 0;
  size_t bytes = 0, arrivalsBytes = 0;
  info(kCluster, a, splits, bytes);
  info(kArrivals, a, splits, arrivalsBytes);
  EXPECT(splits == 16 && bytes > 0 && bytes == arrivalsBytes);
  EXPECT(checkSteps(f, kCluster, -1, a, __LINE__) == 16);
  // One split: neither.
  a.num_splits = 1;
  EXPECT(checkSteps(f, kCluster, -1, a, __LINE__) == 1);

  // The unprepared entry point launches the same cluster, with no
  // workspace.
  a.num_splits = 4;
  flashfuse_decode_addresses s = stepAddresses(2, false, 0);
  launches.clear();
  memsets.clear();
  flashfuse_decode_args step = withStep(a, s);
  EXPECT_STATUS(flashfuse_attention_decode(f.kernel(kCluster), nullptr, &step,
                                           nullptr, 0, nullptr),
                FLASHFUSE_SUCCESS, "");
  EXPECT(launches.size() == 1 && memsets.empty());
  if (launches.size() == 1) {
    EXPECT(launches[0].ex && launches[0].clusterX == 4);
    expectParams(launches[0], *f.kernel(kCluster)->spec, a, s, 4, false,
                 __LINE__, 0, /*cluster=*/true);
  }
  // A failed cluster launch says so.
  flashfuse_decode_plan *plan = nullptr;
  EXPECT_STATUS(flashfuse_decode_plan_create(f.kernel(kCluster), nullptr, &a,
                                             &plan),
                FLASHFUSE_SUCCESS, "");
  launchResult = 701;
  EXPECT_STATUS(flashfuse_decode_plan_launch(plan, &s, nullptr),
                FLASHFUSE_ERROR_CUDA,
                "launching kernel 'flash_decode_f16_d128_m16n128w4s2_cluster' "
                "with grid (4, 8, 3), block 128, 136192 bytes of shared "
                "memory, in clusters of 4 blocks: "
                "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
  launchResult = cu::CUDA_SUCCESS;
  flashfuse_decode_plan_destroy(plan);

  // Clusters that do not all fit at once (3 x 8 row groups, 23 clusters of
  // 4 at a time): the counters for 4 splits; the automatic count is then
  // the one-wave rule's, its clusters fitting or not.
  f.kernel(kCluster)->clusterCapacity[4] = 23;
  a.num_splits = 4;
  {
    size_t counterBytes = 0;
    info(kCluster, a, splits, bytes);
    info(kArrivals, a, splits, counterBytes);
    EXPECT(splits == 4 && bytes > 0 && bytes == counterBytes);
    EXPECT(checkSteps(f, kCluster, -1, a, __LINE__) == 4);
  }
  a.num_splits = 2; // 24 clusters of 2 fit
  info(kCluster, a, splits, bytes);
  EXPECT(splits == 2 && bytes == 0);
  f.kernel(kCluster)->clusterCapacity[4] = 32;

  // A driver without cuLaunchKernelEx: the counters, whatever the count.
  f.api.cuLaunchKernelEx = nullptr;
  for (int n : {2, 4, 8}) {
    a.num_splits = n;
    size_t counterBytes = 0;
    info(kCluster, a, splits, bytes);
    info(kArrivals, a, splits, counterBytes);
    EXPECT(splits == n && bytes > 0 && bytes == counterBytes);
    EXPECT(checkSteps(f, kCluster, -1, a, __LINE__) == n);
  }
}

// PreparedLaunch's clusters: refused where the driver cannot launch them or
// they do not divide the grid.
void testPreparedClusterLaunch() {
  FakeArtifact f;
  if (f.kernels.size() <= size_t(kCluster))
    return (void)++failures;
  // kv_append's grid: (3 * 8 * 3 + 3) / 4 = 18 blocks in x.
  flashfuse_decode_args a = flashfuse_test::decodeStepArgs();
  a.seq_new = 3;
  a.k_new = fakePointer(0xa0000000);
  a.v_new = fakePointer(0xb0000000);
  for (int d = 0; d < 4; ++d)
    a.k_new_stride[d] = a.v_new_stride[d] = a.k_stride[d];
  flashfuse_decode_addresses s = stepAddresses(0, false, 0, true);
  a = withStep(a, s);
  std::vector<flashfuse_arg> named = {
      flashfuse::buffer("k", a.k_cache, 1 << 20),
      flashfuse::buffer("v", a.v_cache, 1 << 20),
      flashfuse::buffer("k_new", a.k_new, 1 << 12),
      flashfuse::buffer("v_new", a.v_new, 1 << 12),
      flashfuse::buffer("cache_seqlens", a.cache_seqlens, 3),
      flashfuse::integer("batch", FLASHFUSE_PARAM_I32, 3),
      flashfuse::integer("heads_kv", FLASHFUSE_PARAM_I32, 8),
      flashfuse::integer("seq_k", FLASHFUSE_PARAM_I32, 4096),
      flashfuse::integer("seq_new", FLASHFUSE_PARAM_I32, 3)};
  for (const char *name :
       {"k_stride_b", "k_stride_h", "k_stride_s", "v_stride_b", "v_stride_h",
        "v_stride_s", "k_new_stride_b", "k_new_stride_h", "k_new_stride_s",
        "v_new_stride_b", "v_new_stride_h", "v_new_stride_s"})
    named.push_back(flashfuse::integer(name, FLASHFUSE_PARAM_I64, 16));
  // Placeholder addresses: buffer i at placeholderAddress(i).
  for (size_t i = 0; i < 5; ++i)
    named[i].ptr = flashfuse::placeholderAddress(static_cast<int>(i));
  int n = static_cast<int>(named.size());
  flashfuse_kernel &append = *f.kernel(kAppend);
  flashfuse::PreparedLaunch launch;
  EXPECT_STATUS(launch.prepare(append, named.data(), n, 4),
                FLASHFUSE_ERROR_INTERNAL,
                "clusters of 4 blocks do not divide grid.x = 18");
  EXPECT(!launch.prepared());
  EXPECT_STATUS(launch.prepare(append, named.data(), n, 3), FLASHFUSE_SUCCESS,
                "");
  const void *addresses[flashfuse::kMaxPreparedBuffers] = {
      s.k_cache, s.v_cache, s.k_new, s.v_new, s.cache_seqlens};
  launches.clear();
  EXPECT_STATUS(launch.launch(addresses, nullptr), FLASHFUSE_SUCCESS, "");
  EXPECT(launches.size() == 1 && launches[0].ex &&
         launches[0].clusterX == 3 && launches[0].grid[0] == 18);
  f.api.cuLaunchKernelEx = nullptr;
  flashfuse::PreparedLaunch old;
  EXPECT_STATUS(old.prepare(append, named.data(), n, 3),
                FLASHFUSE_ERROR_UNSUPPORTED,
                "cannot be prepared: it is launched in clusters of 3 blocks, "
                "which needs cuLaunchKernelEx");
  // launchBound itself refuses too (the plans never ask it to).
  launches.clear();
  EXPECT_STATUS(launch.launch(addresses, nullptr), FLASHFUSE_ERROR_UNSUPPORTED,
                "in clusters of 3 blocks needs cuLaunchKernelEx, which this "
                "CUDA driver does not have");
  EXPECT(launches.empty());
  // A plain launch is cuLaunchKernel's, as before.
  flashfuse::PreparedLaunch plain;
  EXPECT_STATUS(plain.prepare(append, named.data(), n), FLASHFUSE_SUCCESS, "");
  EXPECT_STATUS(plain.launch(addresses, nullptr), FLASHFUSE_SUCCESS, "");
  EXPECT(launches.size() == 1 && !launches[0].ex &&
         launches[0].clusterX == 1);
}

// flashfuse_attention_decode (a plan of one step) launches what a plan
// does with the same addresses.
void testUnpreparedLaunchIsAPlanOfOneStep() {
  FakeArtifact f;
  flashfuse_decode_args a = flashfuse_test::decodeStepArgs();
  flashfuse_decode_plan *plan = nullptr;
  EXPECT_STATUS(flashfuse_decode_plan_create(f.kernel(kMerging), nullptr, &a,
                                             &plan),
                FLASHFUSE_SUCCESS, "");
  size_t bytes = 0;
  EXPECT_STATUS(flashfuse_decode_plan_info(plan, nullptr, &bytes),
                FLASHFUSE_SUCCESS, "");
  flashfuse_decode_addresses s = stepAddresses(5, false, bytes);
  launches.clear();
  memsets.clear();
  EXPECT_STATUS(flashfuse_decode_plan_launch(plan, &s, nullptr),
                FLASHFUSE_SUCCESS, "");
  std::vector<Launch> planned = launches;
  std::vector<Memset> plannedMemsets = memsets;
  a = withStep(a, s);
  launches.clear();
  memsets.clear();
  EXPECT_STATUS(flashfuse_attention_decode(f.kernel(kMerging), nullptr, &a,
                                           s.workspace, s.workspace_bytes,
                                           nullptr),
                FLASHFUSE_SUCCESS, "");
  EXPECT(launches.size() == 1 && planned.size() == 1 &&
         launches[0].slots == planned[0].slots);
  EXPECT(memsets.size() == 1 && plannedMemsets.size() == 1 &&
         memsets[0].address == plannedMemsets[0].address);
  flashfuse_decode_plan_destroy(plan);
}

void testBadAddresses() {
  FakeArtifact f;
  flashfuse_decode_args a = flashfuse_test::decodeStepArgs();
  a.num_splits = 4;
  flashfuse_decode_plan *plan = nullptr;
  EXPECT_STATUS(flashfuse_decode_plan_create(f.kernel(kDecode),
                                             f.kernel(kCombine), &a, &plan),
                FLASHFUSE_SUCCESS, "");
  size_t bytes = 0;
  flashfuse_decode_plan_info(plan, nullptr, &bytes);
  auto expectBad = [&](void (*edit)(flashfuse_decode_addresses &),
                       const char *fragment, int line) {
    flashfuse_decode_addresses s = stepAddresses(1, false, bytes);
    edit(s);
    launches.clear();
    flashfuse_test::expectStatus(flashfuse_decode_plan_launch(plan, &s, nullptr),
                                 FLASHFUSE_ERROR_INVALID_ARGUMENT, fragment,
                                 line);
    // Nothing is launched for a step that fails its checks.
    EXPECT(launches.empty());
  };
#define EXPECT_BAD_STEP(edit, fragment)                                        \
  expectBad([](flashfuse_decode_addresses & s) { edit; }, fragment, __LINE__)
  EXPECT_BAD_STEP(s.q = nullptr, "with kernel "
                                 "'flash_decode_f16_d128_m64n64w4s3_causal': "
                                 "'q' is a null pointer");
  EXPECT_BAD_STEP(s.cache_seqlens = nullptr,
                  "'cache_seqlens' is a null pointer");
  EXPECT_BAD_STEP(s.lse = static_cast<float *>(
                      const_cast<void *>(fakePointer(0x50000004))),
                  "'lse' at 0x50000004 is not 16-byte aligned");
  EXPECT_BAD_STEP(s.block_table = static_cast<const int32_t *>(
                      fakePointer(0x70000000)),
                  "'block_table' was given, but the cache is contiguous");
  EXPECT_BAD_STEP(s.k_descale = static_cast<const float *>(
                      fakePointer(0x90000000)),
                  "'k_descale' was given, but the cache is not FP8");
  EXPECT_BAD_STEP(s.cache_leftpad = static_cast<const int32_t *>(
                      fakePointer(0xc0000000)),
                  "'cache_leftpad' was given, but the decode kernel was "
                  "compiled without cache_leftpad");
  EXPECT_BAD_STEP(s.alibi_slopes = static_cast<const float *>(
                      fakePointer(0xd0000000)),
                  "'alibi_slopes' was given, but the decode kernel was "
                  "compiled without ALiBi");
  EXPECT_BAD_STEP(s.workspace = nullptr, "need a workspace of");
  EXPECT_BAD_STEP(s.workspace_bytes -= 16, "the workspace has");
  EXPECT_BAD_STEP(s.workspace = const_cast<void *>(fakePointer(0x80000008)),
                  "the workspace at 0x80000008 is not 16-byte aligned");
#undef EXPECT_BAD_STEP
  EXPECT_STATUS(flashfuse_decode_plan_launch(plan, nullptr, nullptr),
                FLASHFUSE_ERROR_INVALID_ARGUMENT,
                "the plan and the addresses must not be NULL");
  flashfuse_decode_plan_destroy(plan);

  // A paged plan needs its table.
  flashfuse_decode_args p = flashfuse_test::pagedStepArgs();
  EXPECT_STATUS(flashfuse_decode_plan_create(f.kernel(kPaged),
                                             f.kernel(kPagedCombine), &p,
                                             &plan),
                FLASHFUSE_SUCCESS, "");
  flashfuse_decode_plan_info(plan, nullptr, &bytes);
  flashfuse_decode_addresses s = stepAddresses(0, false, bytes);
  EXPECT_STATUS(flashfuse_decode_plan_launch(plan, &s, nullptr),
                FLASHFUSE_ERROR_INVALID_ARGUMENT,
                "'block_table' is a null pointer");
  flashfuse_decode_plan_destroy(plan);

  // A plan of a kernel that reads an optional buffer (a left-padded
  // cache's first rows, ALiBi's slopes) needs it every step, aligned.
  auto needsEveryStep = [&](int kernel, const char *name,
                            void (*set)(flashfuse_decode_addresses &,
                                        const void *)) {
    EXPECT_STATUS(flashfuse_decode_plan_create(f.kernel(kernel),
                                               f.kernel(kCombine), &a, &plan),
                  FLASHFUSE_SUCCESS, "");
    flashfuse_decode_plan_info(plan, nullptr, &bytes);
    flashfuse_decode_addresses s = stepAddresses(0, false, bytes);
    EXPECT_STATUS(flashfuse_decode_plan_launch(plan, &s, nullptr),
                  FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  std::string("'") + name + "' is a null pointer");
    set(s, fakePointer(0xd0000004));
    EXPECT_STATUS(flashfuse_decode_plan_launch(plan, &s, nullptr),
                  FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  std::string("'") + name +
                      "' at 0xd0000004 is not 16-byte aligned");
    flashfuse_decode_plan_destroy(plan);
  };
  needsEveryStep(kLeftPad, "cache_leftpad",
                 [](flashfuse_decode_addresses &s, const void *p) {
                   s.cache_leftpad = static_cast<const int32_t *>(p);
                 });
  needsEveryStep(kAlibi, "alibi_slopes",
                 [](flashfuse_decode_addresses &s, const void *p) {
                   s.alibi_slopes = static_cast<const float *>(p);
                 });
  flashfuse_decode_plan_destroy(nullptr); // ignored
}

void testBadPlans() {
  FakeArtifact f;
  flashfuse_decode_args a = flashfuse_test::decodeStepArgs();
  // The checks of flashfuse_attention_decode, at creation.
  a.head_dim = 64;
  auto *plan = reinterpret_cast<flashfuse_decode_plan *>(0x1);
  EXPECT_STATUS(flashfuse_decode_plan_create(f.kernel(kDecode),
                                             f.kernel(kCombine), &a, &plan),
                FLASHFUSE_ERROR_INVALID_ARGUMENT, "head dims D=64 Dv=128");
  EXPECT(plan == nullptr); // cleared on failure
  a = flashfuse_test::decodeStepArgs();
  a.num_splits = 2;
  EXPECT_STATUS(flashfuse_decode_plan_create(f.kernel(kDecode), nullptr, &a,
                                             &plan),
                FLASHFUSE_ERROR_INVALID_ARGUMENT,
                "num_splits = 2 needs a decode_combine kernel");
  EXPECT_STATUS(flashfuse_decode_plan_create(f.kernel(kCombine), nullptr, &a,
                                             &plan),
                FLASHFUSE_ERROR_INVALID_ARGUMENT, "not a decode kernel");
  EXPECT_STATUS(flashfuse_decode_plan_create(f.kernel(kDecode),
                                             f.kernel(kCombine), &a, nullptr),
                FLASHFUSE_ERROR_INVALID_ARGUMENT,
                "the plan's output pointer must not be NULL");
  EXPECT_STATUS(flashfuse_decode_plan_info(nullptr, nullptr, nullptr),
                FLASHFUSE_ERROR_INVALID_ARGUMENT, "the plan is NULL");
}

// `a` with seq_new new rows of every sequence, k_new and v_new
// [B, seq_new, Hkv, D] as flash-attn lays them out.
flashfuse_decode_args withNewRows(flashfuse_decode_args a, int64_t seqNew) {
  a.seq_new = seqNew;
  const int64_t rows[4] = {seqNew * a.heads_kv * a.head_dim, a.head_dim,
                           a.heads_kv * a.head_dim, 1};
  for (int d = 0; d < 4; ++d)
    a.k_new_stride[d] = a.v_new_stride[d] = rows[d];
  return a;
}

// kv_append plans: each step's cache, lengths, table (or a pool's
// indices) and new rows.
void testAppendPlans() {
  FakeArtifact f;
  enum Form { kContiguous, kPagedCache, kPoolCache };
  for (Form form : {kContiguous, kPagedCache, kPoolCache}) {
    bool paged = form == kPagedCache, pool = form == kPoolCache;
    flashfuse_decode_args a = withNewRows(
        paged ? flashfuse_test::pagedStepArgs()
              : flashfuse_test::decodeStepArgs(),
        3);
    if (pool)
      a.cache_batch = 5; // a pool of 5 sequences' caches
    int kernel = paged ? kPagedAppend : pool ? kPoolAppend : kAppend;
    const flashfuse::KernelSpec &spec = *f.kernel(kernel)->spec;
    flashfuse_decode_plan *plan = nullptr;
    EXPECT_STATUS(
        flashfuse_kvcache_append_plan_create(f.kernel(kernel), &a, &plan),
        FLASHFUSE_SUCCESS, "");
    int32_t splits = 0;
    size_t bytes = 1;
    EXPECT_STATUS(flashfuse_decode_plan_info(plan, &splits, &bytes),
                  FLASHFUSE_SUCCESS, "");
    EXPECT(splits == 1 && bytes == 0);
    auto appendStep = [&](int step) {
      flashfuse_decode_addresses s =
          stepAddresses(step, paged, 0, true, false, false, pool);
      s.q = s.o = nullptr;
      s.lse = nullptr;
      return s;
    };
    for (int step = 0; step < 2; ++step) {
      flashfuse_decode_addresses s = appendStep(step);
      launches.clear();
      EXPECT_STATUS(flashfuse_decode_plan_launch(plan, &s, nullptr),
                    FLASHFUSE_SUCCESS, "");
      if (launches.size() != 1)
        return (void)++failures;
      expectParams(launches[0], spec, a, s, 1, false, __LINE__);
      // One warp per new row (b, h, t), block_m rows a block.
      EXPECT(launches[0].grid[0] == unsigned((3 * 8 * 3 + 3) / 4) &&
             launches[0].grid[1] == 1 && launches[0].grid[2] == 1);
    }
    flashfuse_decode_addresses s = stepAddresses(0, paged, 0, true);
    EXPECT_STATUS(flashfuse_decode_plan_launch(plan, &s, nullptr),
                  FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  "kv append with kernel '" + spec.name +
                      "': 'q' was given, but a kv_append reads the lengths "
                      "and the new rows");
    s = appendStep(0);
    s.v_new = nullptr;
    EXPECT_STATUS(flashfuse_decode_plan_launch(plan, &s, nullptr),
                  FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  "'v_new' is a null pointer");
    s = appendStep(0);
    s.cache_batch_idx = pool ? nullptr : s.cache_seqlens;
    EXPECT_STATUS(flashfuse_decode_plan_launch(plan, &s, nullptr),
                  FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  pool ? "'cache_batch_idx' is a null pointer"
                       : "'cache_batch_idx' was given, but the kernel was "
                         "compiled without a pool of sequences");
    flashfuse_decode_plan_destroy(plan);
  }
  // No new rows: nothing to launch, and k_new/v_new must not be given.
  flashfuse_decode_args a = flashfuse_test::decodeStepArgs();
  flashfuse_decode_plan *plan = nullptr;
  EXPECT_STATUS(
      flashfuse_kvcache_append_plan_create(f.kernel(kAppend), &a, &plan),
      FLASHFUSE_SUCCESS, "");
  flashfuse_decode_addresses s = stepAddresses(0, false, 0);
  s.q = s.o = nullptr;
  s.lse = nullptr;
  launches.clear();
  EXPECT_STATUS(flashfuse_decode_plan_launch(plan, &s, nullptr),
                FLASHFUSE_SUCCESS, "");
  EXPECT(launches.empty());
  s.k_new = fakePointer(0xa0000000);
  EXPECT_STATUS(flashfuse_decode_plan_launch(plan, &s, nullptr),
                FLASHFUSE_ERROR_INVALID_ARGUMENT,
                "'k_new' was given, but seq_new is 0");
  flashfuse_decode_plan_destroy(plan);
  // A decode plan does not append; an append plan is made of an append.
  a = withNewRows(flashfuse_test::decodeStepArgs(), 1);
  EXPECT_STATUS(flashfuse_kvcache_append_plan_create(f.kernel(kDecode), &a,
                                                     &plan),
                FLASHFUSE_ERROR_INVALID_ARGUMENT, "not a kv_append kernel");
  EXPECT_STATUS(flashfuse_decode_plan_create(f.kernel(kDecode),
                                             f.kernel(kCombine), &a, &plan),
                FLASHFUSE_SUCCESS, "");
  size_t bytes = 0;
  flashfuse_decode_plan_info(plan, nullptr, &bytes);
  s = stepAddresses(0, false, bytes, true);
  EXPECT_STATUS(flashfuse_decode_plan_launch(plan, &s, nullptr),
                FLASHFUSE_ERROR_INVALID_ARGUMENT,
                "'k_new' was given, but a decode does not append");
  flashfuse_decode_plan_destroy(plan);
}

// flashfuse_kvcache_append (a plan of one step) launches what a plan does;
// the q it ignores may be set.
void testUnpreparedAppendIsAPlanOfOneStep() {
  FakeArtifact f;
  flashfuse_decode_args a =
      withNewRows(flashfuse_test::pagedStepArgs(), 2);
  flashfuse_decode_plan *plan = nullptr;
  EXPECT_STATUS(
      flashfuse_kvcache_append_plan_create(f.kernel(kPagedAppend), &a, &plan),
      FLASHFUSE_SUCCESS, "");
  flashfuse_decode_addresses s = stepAddresses(4, true, 0, true);
  s.q = s.o = nullptr;
  s.lse = nullptr;
  launches.clear();
  EXPECT_STATUS(flashfuse_decode_plan_launch(plan, &s, nullptr),
                FLASHFUSE_SUCCESS, "");
  std::vector<Launch> planned = launches;
  a = withStep(a, s);
  a.q = fakePointer(0x10000000); // ignored by the append
  launches.clear();
  EXPECT_STATUS(flashfuse_kvcache_append(f.kernel(kPagedAppend), &a, nullptr),
                FLASHFUSE_SUCCESS, "");
  EXPECT(launches.size() == 1 && planned.size() == 1 &&
         launches[0].slots == planned[0].slots);
  flashfuse_decode_plan_destroy(plan);
}

// A failed launch names the kernel, its grid and its shared memory (the
// message is built on failure only).
void testLaunchFailure() {
  FakeArtifact f;
  flashfuse_decode_args a = flashfuse_test::decodeStepArgs();
  a.num_splits = 1;
  flashfuse_decode_plan *plan = nullptr;
  EXPECT_STATUS(flashfuse_decode_plan_create(f.kernel(kDecode),
                                             f.kernel(kCombine), &a, &plan),
                FLASHFUSE_SUCCESS, "");
  flashfuse_decode_addresses s = stepAddresses(0, false, 0);
  launchResult = 701;
  EXPECT_STATUS(flashfuse_decode_plan_launch(plan, &s, nullptr),
                FLASHFUSE_ERROR_CUDA,
                "launching kernel 'flash_decode_f16_d128_m64n64w4s3_causal' "
                "with grid (1, 8, 3), block 128, 104448 bytes of shared "
                "memory: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
  launchResult = cu::CUDA_SUCCESS;
  flashfuse_decode_plan_destroy(plan);
}

// The runtime's split counters (split_arrivals.h): the same for every
// launch on one stream, and for every launch of one CUDA graph capture on
// it; a capture never allocates, and one that finds no room left clears
// counters in the workspace instead; an invalidated capture is an error.
void testKeptCounters() {
  FakeArtifact f;
  flashfuse_decode_args a = flashfuse_test::decodeStepArgs();
  a.num_splits = 3;
  flashfuse_decode_plan *plan = nullptr;
  EXPECT_STATUS(flashfuse_decode_plan_create(f.kernel(kArrivals), nullptr, &a,
                                             &plan),
                FLASHFUSE_SUCCESS, "");
  if (!plan)
    return;
  size_t bytes = 0;
  flashfuse_decode_plan_info(plan, nullptr, &bytes);
  flashfuse_decode_addresses s = stepAddresses(0, false, bytes);
  size_t count = 3 * 8; // (batch, kv head) row groups of one m-block
  uint64_t workspaceCounters =
      reinterpret_cast<uintptr_t>(s.workspace) + bytes - count * 4;
  // The counters a launch on `stream` binds, and whether it cleared any.
  auto launch = [&](uintptr_t stream, bool *cleared = nullptr) {
    launches.clear();
    memsets.clear();
    void *st = const_cast<void *>(fakePointer(stream));
    EXPECT_STATUS(flashfuse_decode_plan_launch(plan, &s, st),
                  FLASHFUSE_SUCCESS, "");
    if (cleared)
      *cleared = clearedOn(st);
    return launches.size() == 1 ? boundAddress(launches[0], "split_arrivals")
                                : 0;
  };
  size_t allocated = allocations.size();
  bool cleared = true;
  uint64_t onA = launch(0x1000, &cleared);
  EXPECT(!cleared && inZeroedAllocation(onA, count));
  EXPECT(launch(0x1000, &cleared) == onA && !cleared);
  uint64_t onB = launch(0x2000);
  EXPECT(onB != onA && inZeroedAllocation(onB, count));
  EXPECT(launch(0x1000) == onA);
  // CU_STREAM_PER_THREAD (0x2) names each thread's own stream.
  uint64_t perThread = launch(0x2);
  uint64_t otherThread = 0;
  std::thread([&] { otherThread = launch(0x2); }).join();
  EXPECT(perThread != onA && perThread != onB && otherThread != perThread &&
         launch(0x2) == perThread);
  // Captures: their own counters, cut from the chunk allocated already.
  captureStatus = cu::CU_STREAM_CAPTURE_STATUS_ACTIVE;
  captureId = 7;
  uint64_t captured = launch(0x1000, &cleared);
  EXPECT(!cleared && captured != onA && captured != onB &&
         inZeroedAllocation(captured, count));
  EXPECT(launch(0x1000) == captured);
  captureId = 8;
  uint64_t other = launch(0x1000);
  EXPECT(other != captured && other != onA);
  EXPECT(allocations.size() == allocated + 1);
  // Captures use up the reserve; then one clears the workspace's counters.
  uint64_t last = 0;
  for (uint64_t id = 9; id < 9 + flashfuse::SplitArrivals::kReserve; ++id) {
    captureId = id;
    last = launch(0x1000, &cleared);
    if (last == workspaceCounters)
      break;
  }
  EXPECT(last == workspaceCounters && cleared &&
         allocations.size() == allocated + 1);
  // A launch outside captures refills the reserve.
  captureStatus = cu::CU_STREAM_CAPTURE_STATUS_NONE;
  captureId = 0;
  EXPECT(launch(0x1000) == onA);
  EXPECT(allocations.size() == allocated + 2);
  captureStatus = cu::CU_STREAM_CAPTURE_STATUS_ACTIVE;
  captureId = 1u << 30;
  EXPECT(inZeroedAllocation(launch(0x1000), count));
  captureStatus = cu::CU_STREAM_CAPTURE_STATUS_INVALIDATED;
  launches.clear();
  EXPECT_STATUS(flashfuse_decode_plan_launch(plan, &s, nullptr),
                FLASHFUSE_ERROR_CUDA, "capture was invalidated");
  EXPECT(launches.empty());
  captureStatus = cu::CU_STREAM_CAPTURE_STATUS_NONE;
  captureId = 0;
  flashfuse_decode_plan_destroy(plan);
}

// Kernels whose params depend on addresses in other ways are not prepared:
// those with tensor maps (made from the operands' addresses).
void testPreparedLaunchRefusesTensorMaps() {
  FakeArtifact f;
  flashfuse_manifest fp8;
  if (flashfuse::readManifest(dataDir + "/fp8", fp8.data) != FLASHFUSE_SUCCESS)
    return (void)++failures;
  flashfuse_kernel k;
  k.artifact = &f.artifact;
  k.spec = &fp8.data.kernels[0];
  flashfuse::PreparedLaunch launch;
  EXPECT_STATUS(launch.prepare(k, nullptr, 0), FLASHFUSE_ERROR_UNSUPPORTED,
                "cannot be prepared: it takes a tensor map");
  EXPECT(!launch.prepared());
}

} // namespace

int main(int argc, char **argv) {
  static const flashfuse_test::Test tests[] = {
      {"decode_plan_steps_follow_their_addresses",
       testStepsFollowTheirAddresses},
      {"decode_plan_unprepared_launch_is_a_plan_of_one_step",
       testUnpreparedLaunchIsAPlanOfOneStep},
      {"decode_plan_bad_addresses", testBadAddresses},
      {"decode_plan_bad_plans", testBadPlans},
      {"decode_plan_launch_failure", testLaunchFailure},
      {"decode_plan_kept_counters", testKeptCounters},
      {"decode_plan_cluster_merge", testClusterMerge},
      {"prepared_launch_clusters", testPreparedClusterLaunch},
      {"append_plans", testAppendPlans},
      {"append_unprepared_is_a_plan_of_one_step",
       testUnpreparedAppendIsAPlanOfOneStep},
      {"prepared_launch_refuses_tensor_maps",
       testPreparedLaunchRefusesTensorMaps},
  };
  return flashfuse_test::runTests(argc, argv, tests);
}
