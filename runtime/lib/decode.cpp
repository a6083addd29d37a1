// Attention over a KV cache (docs/KVCACHE.md): checks a
// flashfuse_decode_args against the decode and combine kernels, chooses the
// split count (decode_splits.h), lays out the workspace of partial results
// and turns it all into the named arguments of KERNEL_ABI.md "Decode".
#include "launch.h"
#include "prepared_launch.h"

#include "flashfuse/decode_splits.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace flashfuse {

namespace {

// lse_partial starts at the next multiple of this after o_partial: more
// than the 16 bytes the kernels need, so that it also starts a cache line
// and a DRAM burst of its own.
constexpr size_t kPartialAlign = 256;

// `bytes` rounded up to the next multiple of kPartialAlign.
size_t alignPartial(size_t bytes) {
  return (bytes + kPartialAlign - 1) / kPartialAlign * kPartialAlign;
}

// decode_check's status: code, sequence, value, page (KERNEL_ABI.md).
constexpr int64_t kCheckStatusElements = 4;

// The most splits merged in one thread-block cluster: the portable cluster
// size. Larger clusters need the kernel's non-portable opt-in
// (cuFuncSetAttribute), which the runtime does not make; a kernel's
// cluster_merge above it is used up to it.
constexpr int64_t kMaxClusterSplits = 8;

// What a launch will do: the split count and where the partial results lie
// in the workspace (both 0 bytes with one split: the decode then writes O
// and LSE itself), and who merges the splits (KERNEL_ABI.md "Decode"): the
// splits of each row group among themselves, launched as one thread-block
// cluster (merge_splits 2: through distributed shared memory, no
// workspace); the decode kernel's last split of each row group, counting
// in through split_arrivals (which the kernel leaves at 0, so the runtime
// keeps them: split_arrivals.h) or split_counters (older kernels: cleared
// before each launch) (merge_splits 1); or the combine kernel.
struct Plan {
  int32_t numSplits = 1;
  // Merged in a cluster of numSplits blocks (merge_splits 2): nothing in
  // the workspace, no counters.
  bool mergeInCluster = false;
  // Merged by the last split through the counters (merge_splits 1).
  bool mergeInKernel = false;
  // The kernel puts its counters back to 0 (split_arrivals). The workspace
  // has room for them all the same: a launch being captured into a CUDA
  // graph that finds none of the runtime's counters left clears them there.
  bool countersReset = false;
  size_t lseOffset = 0;      // bytes from the workspace's start to lse_partial
  size_t countersOffset = 0; // ... to the counters
  size_t bytes = 0;          // workspace needed
  int64_t oPartialElements = 0, lsePartialElements = 0, counterElements = 0;

  // Whether the combine kernel merges the splits (a second launch).
  bool combined() const {
    return numSplits > 1 && !mergeInCluster && !mergeInKernel;
  }
  // The decode's cluster size in blocks: numSplits in a cluster merge, else
  // 1 (a plain launch).
  unsigned clusterX() const {
    return mergeInCluster ? static_cast<unsigned>(numSplits) : 1u;
  }
  // The decode's merge_splits param.
  int mergeSplitsParam() const {
    return mergeInCluster ? 2 : mergeInKernel ? 1 : 0;
  }
};

// How many clusters of each size `kernel` runs at once (handles.h), or
// null where its context's driver cannot launch clusters
// (cuLaunchKernelEx, an optional entry point: older drivers lack it).
const int32_t *clusterCapacity(const flashfuse_kernel &kernel) {
  const flashfuse_context &c = *kernel.artifact->context;
  return c.api && c.api->cuLaunchKernelEx ? kernel.clusterCapacity.data()
                                          : nullptr;
}

bool takesParam(const KernelSpec &kernel, const char *name) {
  for (const ParamSpec &p : kernel.params)
    if (p.name == name)
      return true;
  return false;
}

// Whether the decode kernel merges its splits itself (it takes counters);
// kernels built before it leave them to decode_combine.
bool mergesInKernel(const KernelSpec &decode) {
  return takesParam(decode, "split_arrivals") ||
         takesParam(decode, "split_counters");
}

class DecodeChecker {
public:
  // `decode` is the kernel being launched: a decode kernel (with its
  // combine), or a kv_append or decode_check kernel, whose checks (append(),
  // deviceCheck()) name `task` in their messages.
  DecodeChecker(const KernelSpec &decode, const KernelSpec *combine,
                const flashfuse_decode_args &a,
                const char *task = "attention decode")
      : decode_(decode), combine_(combine), a_(a), task_(task) {}

  flashfuse_status bad(const std::string &what) const {
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                concat(task_, " with kernel '", decode_.name, "': ", what));
  }

  // Every check that needs neither the GPU nor the workspace.
  flashfuse_status check() const {
    const flashfuse_variant &v = decode_.variant;
    if (v.kind != FLASHFUSE_KIND_DECODE)
      return bad("not a decode kernel (flashfuse_attention_decode takes the "
                 "kinds decode and decode_combine)");
    if (combine_) {
      const flashfuse_variant &c = combine_->variant;
      if (c.kind != FLASHFUSE_KIND_DECODE_COMBINE)
        return bad(concat("'", combine_->name,
                          "' is not a decode_combine kernel"));
      // The combine reads the partial results the decode writes and writes
      // O in the dtype: it must agree on both.
      if (c.dtype != v.dtype || c.head_dim_v != v.head_dim_v)
        return bad(concat("the combine kernel '", combine_->name, "' is for ",
                          dtypeName(c.dtype), " Dv=", c.head_dim_v,
                          " but the decode kernel is ", dtypeName(v.dtype),
                          " Dv=", v.head_dim_v));
    }
    if (a_.dtype != v.dtype)
      return bad(concat("inputs are ", dtypeName(a_.dtype),
                        " but the kernel was compiled for ",
                        dtypeName(v.dtype)));
    if (auto s = checkCacheDtype(); s != FLASHFUSE_SUCCESS)
      return s;
    const int64_t sizes[] = {a_.batch, a_.heads_q, a_.heads_kv, a_.seq_q};
    const char *sizeNames[] = {"batch", "heads_q", "heads_kv", "seq_q"};
    for (int i = 0; i < 4; ++i)
      if (sizes[i] <= 0 || sizes[i] > kMaxI32)
        return bad(concat(sizeNames[i], " = ", sizes[i],
                          " (must be in [1, 2^31))"));
    if (a_.seq_new < 0 || a_.seq_new > kMaxI32)
      return bad(concat("seq_new = ", a_.seq_new, " (must be in [0, 2^31))"));
    if (a_.head_dim != v.head_dim || a_.head_dim_v != v.head_dim_v)
      return bad(concat("head dims D=", a_.head_dim, " Dv=", a_.head_dim_v,
                        " but the kernel was compiled for D=", v.head_dim,
                        " Dv=", v.head_dim_v));
    if (a_.heads_q % a_.heads_kv != 0)
      return bad(concat("heads_q = ", a_.heads_q,
                        " is not a multiple of heads_kv = ", a_.heads_kv));
    if (!std::isfinite(a_.scale))
      return bad("scale is not finite");
    if (std::string why = windowSoftcapProblem(v, a_.window_left,
                                               a_.window_right, a_.softcap);
        !why.empty())
      return bad(why);
    if (auto s = checkCache(); s != FLASHFUSE_SUCCESS)
      return s;
    // Query rows beyond the cache can never all see a key: bottom-right
    // alignment puts query i's diagonal at i + L_b - Sq, and L_b <= C.
    int64_t c = capacity();
    if (a_.seq_q > c)
      return bad(concat("seq_q = ", a_.seq_q,
                        " query rows exceed the cache's capacity ", c));
    if (a_.seq_new > c)
      return bad(concat("seq_new = ", a_.seq_new,
                        " new rows exceed the cache's capacity ", c));
    for (const Operand &op : tensors())
      if (std::string why = operandProblem(op); !why.empty())
        return bad(why);
    if (auto s = checkFp8Cache(); s != FLASHFUSE_SUCCESS)
      return s;
    if (!a_.lse)
      return bad("'lse' is a null pointer");
    if (!a_.cache_seqlens)
      return bad("'cache_seqlens' is a null pointer");
    if (v.leftpad && !a_.cache_leftpad)
      return bad("the kernel reads a left-padded cache, and 'cache_leftpad' "
                 "is a null pointer");
    if (!v.leftpad && a_.cache_leftpad)
      return bad("'cache_leftpad' was given, but the kernel was compiled "
                 "without it (a decode kernel of variant leftpad 1 reads it)");
    if (v.alibi && !a_.alibi_slopes)
      return bad("the kernel adds ALiBi, and 'alibi_slopes' is a null "
                 "pointer");
    if (!v.alibi && a_.alibi_slopes)
      return bad("'alibi_slopes' was given, but the kernel was compiled "
                 "without ALiBi (a decode kernel of variant alibi 1 or 2 "
                 "reads them)");
    if (a_.num_splits < 0)
      return bad(concat("num_splits = ", a_.num_splits,
                        " (0 chooses it, else it must be >= 1)"));
    if (a_.num_splits > 1 && !combine_ && !mergesInKernel(decode_))
      return bad(concat("num_splits = ", a_.num_splits,
                        " needs a decode_combine kernel to merge the splits, "
                        "and none was given"));
    return FLASHFUSE_SUCCESS;
  }

  // Every check of flashfuse_kvcache_append that needs no GPU: what the
  // copy reads and writes (caches, lengths, table, k_new/v_new).
  flashfuse_status append() const {
    const flashfuse_variant &v = decode_.variant;
    if (v.kind != FLASHFUSE_KIND_KV_APPEND)
      return bad("not a kv_append kernel (flashfuse_kvcache_append takes the "
                 "kind kv_append)");
    // An FP8 cache's append (kv_dtype e4m3) quantises the new rows, which
    // are in `dtype`, with the descales: the same dtype rules and
    // descale checks as the decode.
    if (a_.dtype != v.dtype)
      return bad(concat("inputs are ", dtypeName(a_.dtype),
                        " but the kernel was compiled for ",
                        dtypeName(v.dtype)));
    if (auto s = checkCacheDtype(); s != FLASHFUSE_SUCCESS)
      return s;
    if (auto s = checkSequences(); s != FLASHFUSE_SUCCESS)
      return s;
    if (a_.heads_kv <= 0 || a_.heads_kv > kMaxI32)
      return bad(concat("heads_kv = ", a_.heads_kv, " (must be in [1, 2^31))"));
    if (a_.head_dim != v.head_dim || a_.head_dim_v != v.head_dim_v)
      return bad(concat("head dims D=", a_.head_dim, " Dv=", a_.head_dim_v,
                        " but the kernel was compiled for D=", v.head_dim,
                        " Dv=", v.head_dim_v));
    std::vector<Operand> ops = tensors();
    for (const Operand &op : {ops[1], ops[2]})
      if (std::string why = operandProblem(op); !why.empty())
        return bad(why);
    if (auto s = checkFp8Cache(); s != FLASHFUSE_SUCCESS)
      return s;
    if (a_.seq_new > 0 && a_.batch * a_.heads_kv * a_.seq_new > kMaxI32)
      return bad(concat(a_.batch * a_.heads_kv * a_.seq_new,
                        " new rows (B x Hkv x seq_new) are more than one "
                        "launch covers (2^31 - 1)"));
    if (a_.seq_new > 0)
      for (const Operand &op : newRows())
        if (std::string why = operandProblem(op); !why.empty())
          return bad(why);
    return FLASHFUSE_SUCCESS;
  }

  // Every check of flashfuse_decode_check_on_device that needs no GPU:
  // the kernel reads the lengths and the table only.
  flashfuse_status deviceCheck(const int32_t *status) const {
    if (decode_.variant.kind != FLASHFUSE_KIND_DECODE_CHECK)
      return bad("not a decode_check kernel (flashfuse_decode_check_on_device "
                 "takes the kind decode_check)");
    if (auto s = checkSequences(); s != FLASHFUSE_SUCCESS)
      return s;
    if (!status)
      return bad("the status buffer is a null pointer (it takes 4 int32 on "
                 "the device)");
    return FLASHFUSE_SUCCESS;
  }

  // The named arguments of kv_append (KERNEL_ABI.md "Decode").
  std::vector<flashfuse_arg> appendArgs() const {
    std::vector<Operand> ops = tensors();
    std::vector<Operand> fresh = newRows();
    const Operand *all[4] = {&ops[1], &ops[2], &fresh[0], &fresh[1]};
    static const char *names[4] = {"k", "v", "k_new", "v_new"};
    static const char *strideNames[4][3] = {
        {"k_stride_b", "k_stride_h", "k_stride_s"},
        {"v_stride_b", "v_stride_h", "v_stride_s"},
        {"k_new_stride_b", "k_new_stride_h", "k_new_stride_s"},
        {"v_new_stride_b", "v_new_stride_h", "v_new_stride_s"}};
    std::vector<flashfuse_arg> out = sequenceArgs();
    for (int i = 0; i < 4; ++i) {
      out.push_back(buffer(names[i], all[i]->ptr,
                           span(all[i]->size, all[i]->stride)));
      for (int d = 0; d < 3; ++d)
        out.push_back(integer(strideNames[i][d], FLASHFUSE_PARAM_I64,
                              all[i]->stride[d]));
    }
    out.push_back(integer("heads_kv", FLASHFUSE_PARAM_I32, a_.heads_kv));
    addDescaleArgs(out);
    return out;
  }

  // The named arguments of decode_check.
  std::vector<flashfuse_arg> deviceCheckArgs(const int32_t *status) const {
    std::vector<flashfuse_arg> out = sequenceArgs();
    out.push_back(buffer("check_status", status, kCheckStatusElements));
    return out;
  }

  // Rows per sequence the cache can hold.
  int64_t capacity() const {
    return a_.page_size ? a_.max_pages * a_.page_size : a_.cache_len;
  }

  std::vector<Operand> tensors() const {
    // A paged cache is [page, h, row of the page, d] in the ABI's stride
    // order; a contiguous one [b, h, s, d].
    // A pool's caches hold cache_batch sequences, indexed through
    // cache_batch_idx.
    int64_t outer = a_.page_size           ? a_.num_pages
                    : decode_.variant.batch_idx ? a_.cache_batch
                                                : a_.batch;
    int64_t rows = a_.page_size ? a_.page_size : a_.cache_len;
    // An FP8 cache holds one byte an element: its strides must be
    // multiples of 16 of them (KERNEL_ABI.md "Decode").
    int cacheBytes = fp8Cache() ? 1 : 2;
    return {
        {"q", a_.q, a_.q_stride, {a_.batch, a_.heads_q, a_.seq_q, a_.head_dim}},
        {"k_cache", a_.k_cache, a_.k_stride,
         {outer, a_.heads_kv, rows, a_.head_dim}, cacheBytes},
        {"v_cache", a_.v_cache, a_.v_stride,
         {outer, a_.heads_kv, rows, a_.head_dim_v}, cacheBytes},
        {"o", a_.o, a_.o_stride,
         {a_.batch, a_.heads_q, a_.seq_q, a_.head_dim_v}},
    };
  }

  // The split count and workspace layout on a GPU of `smCount` SMs that
  // holds `blocksPerSm` decode blocks each, whose driver can launch
  // thread-block clusters of n blocks, clusterCapacity[n] at once, where
  // clusterCapacity is not null.
  flashfuse_status plan(int64_t smCount, int64_t blocksPerSm,
                        const int32_t *clusterCapacity, Plan &out) const {
    int64_t group = a_.heads_q / a_.heads_kv;
    int64_t mBlocks = (group * a_.seq_q + decode_.block_m - 1) / decode_.block_m;
    // The lengths are on the GPU, so the choice is made for a full cache:
    // the kernel divides each sequence's actual keys evenly between the
    // splits, so a shorter one only makes every split shorter.
    int64_t keyBlocks = (capacity() + decode_.block_n - 1) / decode_.block_n;
    int64_t splits = a_.num_splits;
    bool inKernel = mergesInKernel(decode_);
    // The most splits this launch can merge in a cluster (0: none).
    int64_t clusterMax =
        clusterCapacity ? std::min<int64_t>(decode_.clusterMerge,
                                            kMaxClusterSplits)
                        : 0;
    if (splits == 0)
      splits = combine_ || inKernel
                   ? flashfuse_decode_num_splits_in_clusters(
                         a_.batch, a_.heads_kv, mBlocks, keyBlocks, smCount,
                         blocksPerSm, clusterMax, clusterCapacity,
                         a_.page_size, fp8Cache() ? 1 : 2, a_.head_dim,
                         decode_.block_n)
                   : 1;
    out = Plan{};
    out.numSplits = static_cast<int32_t>(splits);
    // Named so even where unread (one split).
    out.countersReset = takesParam(decode_, "split_arrivals");
    if (splits == 1)
      return FLASHFUSE_SUCCESS;
    // The splits of a row group merge inside their cluster where the
    // kernel can merge that many and the driver can launch clusters:
    // nothing goes through global memory, so no workspace. Otherwise the
    // counters or the combine, as for kernels without the cluster merge.
    // One cluster a row group; all of them in one wave, or the launch
    // would take two (clusters must each fit a GPC: 32 clusters of 4 did
    // not fit an H200 at once and took 30 us where the counters took 24,
    // docs/PERF.md run 251).
    if (splits <= clusterMax &&
        a_.batch * a_.heads_kv * mBlocks <= clusterCapacity[splits]) {
      out.mergeInCluster = true;
      return FLASHFUSE_SUCCESS;
    }
    out.mergeInKernel = inKernel;
    int64_t rows = a_.batch * a_.heads_q * a_.seq_q;
    if (rows > kMaxElements / splits / a_.head_dim_v)
      return bad(concat("the partial results of ", splits,
                        " splits are too large"));
    out.lsePartialElements = splits * rows;
    out.oPartialElements = out.lsePartialElements * a_.head_dim_v;
    size_t oBytes = static_cast<size_t>(out.oPartialElements) * sizeof(float);
    out.lseOffset = alignPartial(oBytes);
    out.bytes = out.lseOffset +
                static_cast<size_t>(out.lsePartialElements) * sizeof(float);
    if (out.mergeInKernel) {
      // One int32 per row group (batch, kv head, m-block), and in a merge
      // of two levels one per chunk of its splits.
      out.counterElements = flashfuse_decode_split_counters(
          a_.batch * a_.heads_kv * mBlocks, splits);
      out.countersOffset = alignPartial(out.bytes);
      out.bytes = out.countersOffset +
                  static_cast<size_t>(out.counterElements) * sizeof(int32_t);
    }
    return FLASHFUSE_SUCCESS;
  }

  flashfuse_status checkWorkspace(const Plan &p, const void *workspace,
                                  size_t bytes) const {
    if (p.bytes == 0)
      return FLASHFUSE_SUCCESS;
    if (!workspace)
      return bad(concat(p.numSplits, " splits need a workspace of ", p.bytes,
                        " bytes (flashfuse_decode_workspace_bytes) but it is "
                        "a null pointer"));
    if (bytes < p.bytes)
      return bad(concat("the workspace has ", bytes, " bytes but ",
                        p.numSplits, " splits need ", p.bytes));
    auto address = reinterpret_cast<uintptr_t>(workspace);
    if (address % 16 != 0)
      return bad(concat("the workspace at ", hexAddress(address),
                        " is not 16-byte aligned"));
    return FLASHFUSE_SUCCESS;
  }

  // Every name a decode or combine kernel may take (KERNEL_ABI.md "Decode").
  // The counters are `arrivals` where given (a plan's placeholder for the
  // runtime's), else in the workspace.
  std::vector<flashfuse_arg> namedArgs(const Plan &p, const void *workspace,
                                       const void *arrivals = nullptr) const {
    std::vector<flashfuse_arg> out;
    static const char *strideNames[4][3] = {
        {"q_stride_b", "q_stride_h", "q_stride_s"},
        {"k_stride_b", "k_stride_h", "k_stride_s"},
        {"v_stride_b", "v_stride_h", "v_stride_s"},
        {"o_stride_b", "o_stride_h", "o_stride_s"}};
    static const char *bufferNames[4] = {"q", "k", "v", "o"};
    std::vector<Operand> ops = tensors();
    for (size_t i = 0; i < ops.size(); ++i) {
      out.push_back(buffer(bufferNames[i], ops[i].ptr,
                           span(ops[i].size, ops[i].stride)));
      for (int d = 0; d < 3; ++d)
        out.push_back(integer(strideNames[i][d], FLASHFUSE_PARAM_I64,
                              ops[i].stride[d]));
    }
    out.push_back(buffer("lse", a_.lse, a_.batch * a_.heads_q * a_.seq_q));
    if (p.numSplits > 1 && !p.mergeInCluster) {
      auto *base = static_cast<const char *>(workspace);
      out.push_back(buffer("o_partial", base, p.oPartialElements));
      out.push_back(
          buffer("lse_partial", base + p.lseOffset, p.lsePartialElements));
    } else {
      // The ABI leaves the partial buffers unused with one split and in a
      // cluster merge, but a memref param is bound to a valid buffer all
      // the same: O and LSE, which the kernel does not reach through these
      // params.
      out.push_back(buffer("o_partial", a_.o, 1));
      out.push_back(buffer("lse_partial", a_.lse, 1));
    }
    const char *counters =
        p.countersReset ? "split_arrivals" : "split_counters";
    if (p.mergeInKernel)
      out.push_back(buffer(counters,
                           arrivals ? arrivals
                                    : static_cast<const char *>(workspace) +
                                          p.countersOffset,
                           p.counterElements));
    else // unread (merge_splits 0 or 2)
      out.push_back(buffer(counters, a_.lse, 1));
    out.push_back(
        integer("merge_splits", FLASHFUSE_PARAM_I32, p.mergeSplitsParam()));
    addLengthArgs(out);
    if (decode_.variant.leftpad)
      out.push_back(buffer("cache_leftpad", a_.cache_leftpad, a_.batch));
    if (decode_.variant.alibi)
      out.push_back(buffer("alibi_slopes", a_.alibi_slopes,
                           int64_t(a_.heads_q) *
                               (decode_.variant.alibi == 2 ? a_.batch : 1)));
    out.push_back(integer("batch", FLASHFUSE_PARAM_I32, a_.batch));
    out.push_back(integer("heads_q", FLASHFUSE_PARAM_I32, a_.heads_q));
    out.push_back(integer("heads_kv", FLASHFUSE_PARAM_I32, a_.heads_kv));
    out.push_back(integer("seq_q", FLASHFUSE_PARAM_I32, a_.seq_q));
    out.push_back(integer("seq_k", FLASHFUSE_PARAM_I32, capacity()));
    out.push_back(integer("seq_new", FLASHFUSE_PARAM_I32, a_.seq_new));
    out.push_back(integer("num_splits", FLASHFUSE_PARAM_I32, p.numSplits));
    out.push_back(real("scale", a_.scale));
    out.push_back(integer("window_left", FLASHFUSE_PARAM_I32, a_.window_left));
    out.push_back(
        integer("window_right", FLASHFUSE_PARAM_I32, a_.window_right));
    out.push_back(real("softcap", a_.softcap));
    addDescaleArgs(out);
    return out;
  }

private:
  bool fp8Cache() const { return a_.kv_dtype == FLASHFUSE_DTYPE_E4M3; }

  // An FP8 cache's descales, named as its decode and kv_append take them
  // (KERNEL_ABI.md "Decode"); nothing for a 16-bit cache.
  void addDescaleArgs(std::vector<flashfuse_arg> &out) const {
    if (!fp8Cache())
      return;
    const float *ptrs[2] = {a_.k_descale, a_.v_descale};
    const int64_t *strides[2] = {a_.k_descale_stride, a_.v_descale_stride};
    static const char *names[2][3] = {
        {"k_descale", "k_descale_stride_b", "k_descale_stride_h"},
        {"v_descale", "v_descale_stride_b", "v_descale_stride_h"}};
    for (int i = 0; i < 2; ++i) {
      out.push_back(buffer(names[i][0], ptrs[i],
                           1 + (a_.batch - 1) * strides[i][0] +
                               (a_.heads_kv - 1) * strides[i][1]));
      out.push_back(integer(names[i][1], FLASHFUSE_PARAM_I64, strides[i][0]));
      out.push_back(integer(names[i][2], FLASHFUSE_PARAM_I64, strides[i][1]));
    }
  }

  // An FP8 cache's addresses and descales (after checkCacheDtype, which
  // requires the descales; batch and heads_kv checked positive): what its
  // decode and kv_append read and write 16 and 4 bytes at a time.
  flashfuse_status checkFp8Cache() const {
    if (!fp8Cache())
      return FLASHFUSE_SUCCESS;
    for (const Operand &op : {tensors()[1], tensors()[2]}) {
      auto address = reinterpret_cast<uintptr_t>(op.ptr);
      if (address % 16 != 0)
        return bad(concat("the FP8 cache '", op.name, "' at ",
                          hexAddress(address),
                          " is not 16-byte aligned (the kernels copy it "
                          "16 bytes at a time)"));
    }
    for (int i = 0; i < 2; ++i) {
      const float *d = i ? a_.v_descale : a_.k_descale;
      const int64_t *st = i ? a_.v_descale_stride : a_.k_descale_stride;
      const char *name = i ? "v_descale" : "k_descale";
      if (st[0] < 0 || st[1] < 0)
        return bad(concat("'", name, "' has a negative stride"));
      if (st[0] > kMaxElements / a_.batch ||
          st[1] > kMaxElements / a_.heads_kv)
        return bad(concat("'", name, "' is too large"));
      if (reinterpret_cast<uintptr_t>(d) % alignof(float) != 0)
        return bad(concat("'", name, "' is not 4-byte aligned"));
    }
    return FLASHFUSE_SUCCESS;
  }

  // The cache's dtype must be the kernel's, with descales iff it is e4m3.
  flashfuse_status checkCacheDtype() const {
    const flashfuse_variant &v = decode_.variant;
    if (a_.kv_dtype != 0 && a_.kv_dtype != FLASHFUSE_DTYPE_E4M3)
      return bad(concat("kv_dtype = ", static_cast<int>(a_.kv_dtype),
                        " (0: the caches have dtype; or "
                        "FLASHFUSE_DTYPE_E4M3)"));
    if (a_.kv_dtype != v.kv_dtype) {
      auto form = [&](flashfuse_dtype kv) {
        return kv ? std::string("an e4m3 (FP8) cache")
                  : concat("a ", dtypeName(v.dtype), " cache");
      };
      return bad(concat("the arguments describe ", form(a_.kv_dtype),
                        " but the kernel was compiled for ",
                        form(v.kv_dtype)));
    }
    if (fp8Cache() && (!a_.k_descale || !a_.v_descale))
      return bad(concat("an FP8 cache needs k_descale and v_descale, and '",
                        a_.k_descale ? "v_descale" : "k_descale",
                        "' is a null pointer"));
    if (!fp8Cache() && (a_.k_descale || a_.v_descale))
      return bad("k_descale/v_descale were given for a 16-bit cache (they "
                 "are for kv_dtype e4m3 only)");
    return FLASHFUSE_SUCCESS;
  }

  // What every kernel of a KV cache reads: the batch, the new rows' count,
  // the cache's form and capacity, the lengths.
  flashfuse_status checkSequences() const {
    if (a_.batch <= 0 || a_.batch > kMaxI32)
      return bad(concat("batch = ", a_.batch, " (must be in [1, 2^31))"));
    if (a_.seq_new < 0 || a_.seq_new > kMaxI32)
      return bad(concat("seq_new = ", a_.seq_new, " (must be in [0, 2^31))"));
    if (auto s = checkCache(); s != FLASHFUSE_SUCCESS)
      return s;
    if (a_.seq_new > capacity())
      return bad(concat("seq_new = ", a_.seq_new,
                        " new rows exceed the cache's capacity ", capacity()));
    if (!a_.cache_seqlens)
      return bad("'cache_seqlens' is a null pointer");
    return FLASHFUSE_SUCCESS;
  }

  // k_new and v_new as operands [b, h, t, d].
  std::vector<Operand> newRows() const {
    return {{"k_new", a_.k_new, a_.k_new_stride,
             {a_.batch, a_.heads_kv, a_.seq_new, a_.head_dim}},
            {"v_new", a_.v_new, a_.v_new_stride,
             {a_.batch, a_.heads_kv, a_.seq_new, a_.head_dim_v}}};
  }

  // The lengths and, paged, the page table with its sizes (over a pool,
  // its indices and size): what every kernel of a KV cache reads to find a
  // sequence's rows.
  void addLengthArgs(std::vector<flashfuse_arg> &out) const {
    out.push_back(buffer("cache_seqlens", a_.cache_seqlens, a_.batch));
    if (decode_.variant.batch_idx) {
      out.push_back(buffer("cache_batch_idx", a_.cache_batch_idx, a_.batch));
      out.push_back(integer("cache_batch", FLASHFUSE_PARAM_I32, a_.cache_batch));
    }
    if (a_.page_size) {
      out.push_back(buffer("block_table", a_.block_table,
                           (a_.batch - 1) * a_.block_table_stride +
                               a_.max_pages));
      out.push_back(integer("num_pages", FLASHFUSE_PARAM_I32, a_.num_pages));
      out.push_back(integer("block_table_stride", FLASHFUSE_PARAM_I64,
                            a_.block_table_stride));
    }
  }

  // The arguments of checkSequences(), named.
  std::vector<flashfuse_arg> sequenceArgs() const {
    std::vector<flashfuse_arg> out;
    addLengthArgs(out);
    out.push_back(integer("batch", FLASHFUSE_PARAM_I32, a_.batch));
    out.push_back(integer("seq_k", FLASHFUSE_PARAM_I32, capacity()));
    out.push_back(integer("seq_new", FLASHFUSE_PARAM_I32, a_.seq_new));
    return out;
  }

  // A pool of sequences is the kernel's (variant batch_idx 1, contiguous)
  // or not given at all: its indices, and its size, which stands for the
  // batch as the caches' dim 0.
  flashfuse_status checkPool() const {
    if (!decode_.variant.batch_idx) {
      if (a_.cache_batch_idx || a_.cache_batch)
        return bad("'cache_batch_idx' or cache_batch was given, but the "
                   "kernel was compiled without a pool of sequences (a "
                   "kernel of variant batch_idx 1 reads them)");
      return FLASHFUSE_SUCCESS;
    }
    if (!a_.cache_batch_idx)
      return bad("the kernel reads a pool of sequences, and "
                 "'cache_batch_idx' is a null pointer");
    if (a_.cache_batch <= 0 || a_.cache_batch > kMaxI32)
      return bad(concat("cache_batch = ", a_.cache_batch,
                        " (the sequences the pool holds, must be in "
                        "[1, 2^31))"));
    return FLASHFUSE_SUCCESS;
  }

  // The cache's form must be the kernel's: a paged kernel reads rows
  // through the table, a contiguous one by sequence (or through a pool's
  // indices), and the page size is compiled in.
  flashfuse_status checkCache() const {
    int32_t kernelPage = decode_.variant.page_size;
    if (a_.page_size != kernelPage) {
      auto form = [](int64_t page) {
        return page ? concat("a paged cache with page_size ", page)
                    : std::string("a contiguous cache");
      };
      return bad(concat("the arguments describe ", form(a_.page_size),
                        " but the kernel was compiled for ",
                        form(kernelPage)));
    }
    if (auto s = checkPool(); s != FLASHFUSE_SUCCESS)
      return s;
    if (!a_.page_size) {
      if (a_.block_table)
        return bad("a block_table was given for a contiguous cache (set "
                   "page_size and use a paged kernel, or pass none)");
      if (a_.cache_len <= 0 || a_.cache_len > kMaxI32)
        return bad(concat("cache_len = ", a_.cache_len,
                          " (must be in [1, 2^31))"));
      return FLASHFUSE_SUCCESS;
    }
    if (!a_.block_table)
      return bad("a paged cache needs a block_table, and it is a null "
                 "pointer");
    if (a_.num_pages <= 0 || a_.num_pages > kMaxI32)
      return bad(concat("num_pages = ", a_.num_pages,
                        " (must be in [1, 2^31))"));
    if (a_.max_pages <= 0 || a_.max_pages > kMaxI32 / a_.page_size)
      return bad(concat("max_pages = ", a_.max_pages,
                        " (must be >= 1, and max_pages * page_size < 2^31)"));
    if (a_.batch > 1 && a_.block_table_stride < a_.max_pages)
      return bad(concat("block_table_stride = ", a_.block_table_stride,
                        " is less than max_pages = ", a_.max_pages,
                        ": rows of the table would overlap"));
    return FLASHFUSE_SUCCESS;
  }

  const KernelSpec &decode_;
  const KernelSpec *combine_;
  const flashfuse_decode_args &a_;
  const char *task_;
};

// The verdict of a decode_check status (KERNEL_ABI.md "Decode"): the
// lowest offending sequence, what is wrong with it and the bad value.
flashfuse_status checkStatusVerdict(const int32_t *status,
                                    const flashfuse_decode_args &a) {
  int64_t capacity = a.page_size ? a.max_pages * a.page_size : a.cache_len;
  auto bad = [](const std::string &what) {
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                concat("KV cache check on the device: ", what));
  };
  int32_t b = status[1], value = status[2], page = status[3];
  switch (status[0]) {
  case 0:
    return FLASHFUSE_SUCCESS;
  case 1:
    return bad(concat("cache_seqlens[", b, "] = ", value, " is negative"));
  case 2:
    return bad(concat("cache_seqlens[", b, "] = ", value, " plus ",
                      a.seq_new, " new rows exceeds the cache capacity ",
                      capacity));
  case 3:
    return bad(concat("block_table[", b, "][", page, "] = ", value,
                      " is outside [0, ", a.num_pages, ") (page ", page,
                      " holds rows [", int64_t(page) * a.page_size, ", ",
                      int64_t(page + 1) * a.page_size, ") of sequence ", b,
                      ")"));
  case 4:
    return bad(concat("cache_batch_idx[", b, "] = ", value,
                      " is outside the pool [0, ", a.cache_batch, ")"));
  case 5:
    return bad(concat("cache_batch_idx[", b, "] = ", value,
                      " is also cache_batch_idx[", page, "]: sequences ",
                      page, " and ", b, " would both append their ",
                      a.seq_new, " new rows to pool row ", value));
  }
  return fail(FLASHFUSE_ERROR_INTERNAL,
              concat("the decode_check kernel wrote status code ", status[0],
                     ", which no version of the ABI defines"));
}

// Everything that can be checked without a GPU, leaving the plan and the
// named arguments ready for launchNamed. With `workspaceChecked` false the
// workspace is not looked at (flashfuse_decode_workspace_bytes).
flashfuse_status prepareDecode(const KernelSpec &decode,
                               const KernelSpec *combine,
                               const flashfuse_decode_args &args,
                               int64_t smCount, int64_t blocksPerSm,
                               const int32_t *clusterCapacity,
                               const void *workspace,
                               size_t workspaceBytes,
                               bool workspaceChecked, Plan &plan,
                               std::vector<flashfuse_arg> &named) {
  DecodeChecker checker(decode, combine, args);
  if (auto s = checker.check(); s != FLASHFUSE_SUCCESS)
    return s;
  if (auto s = checker.plan(smCount, blocksPerSm, clusterCapacity, plan);
      s != FLASHFUSE_SUCCESS)
    return s;
  if (!workspaceChecked)
    return FLASHFUSE_SUCCESS;
  if (auto s = checker.checkWorkspace(plan, workspace, workspaceBytes);
      s != FLASHFUSE_SUCCESS)
    return s;
  named = checker.namedArgs(plan, workspace);
  // A dry run of the binding catches a manifest whose params list names
  // something this runtime does not provide, before anything is launched.
  std::vector<ParamSlot> slots;
  if (auto s = bindParams(decode, named.data(), static_cast<int>(named.size()),
                          /*strict=*/false, slots);
      s != FLASHFUSE_SUCCESS)
    return s;
  if (plan.combined())
    return bindParams(*combine, named.data(), static_cast<int>(named.size()),
                      /*strict=*/false, slots);
  return FLASHFUSE_SUCCESS;
}

flashfuse_status checkKernels(const flashfuse_kernel *decode,
                              const flashfuse_kernel *combine,
                              const flashfuse_decode_args *args) {
  if (!decode || !args)
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                "decode kernel and arguments must not be NULL");
  // The two kernels agree on the partial buffers' layout only as compiled
  // together (KERNEL_ABI.md "Decode").
  if (combine && combine->artifact != decode->artifact)
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                concat("the decode kernel '", decode->spec->name,
                       "' and the combine kernel '", combine->spec->name,
                       "' come from different artifacts"));
  return FLASHFUSE_SUCCESS;
}

} // namespace

} // namespace flashfuse

namespace flashfuse {
namespace {

// The manifest entry `index` (range-checked) for the *_check entry points.
flashfuse_status manifestKernel(const flashfuse_manifest *manifest,
                                int32_t index, const void *args,
                                const KernelSpec *&out) {
  if (!manifest || !args)
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                "manifest and arguments must not be NULL");
  int32_t count = static_cast<int32_t>(manifest->data.kernels.size());
  if (index < 0 || index >= count)
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                concat("kernel index ", index, " out of range [0, ", count,
                       ")"));
  out = &manifest->data.kernels[index];
  return FLASHFUSE_SUCCESS;
}

// flashfuse_kvcache_append's checks; `named` is then ready to bind.
flashfuse_status prepareAppend(const KernelSpec &append,
                               const flashfuse_decode_args &args,
                               std::vector<flashfuse_arg> &named) {
  if (append.rotaryDim)
    return fail(FLASHFUSE_ERROR_UNSUPPORTED,
                concat("kernel '", append.name,
                       "' rotates the query and the new keys (rotary_dim ",
                       append.rotaryDim,
                       "): flashfuse_kvcache_append has no rotary operands; "
                       "the host code flash-lower-to-gpu compiles with it "
                       "launches it (docs/KVCACHE.md \"Rotary\")"));
  DecodeChecker checker(append, nullptr, args, "kv append");
  if (auto s = checker.append(); s != FLASHFUSE_SUCCESS)
    return s;
  if (args.seq_new == 0)
    return FLASHFUSE_SUCCESS; // nothing to copy, nothing launched
  named = checker.appendArgs();
  std::vector<ParamSlot> slots;
  return bindParams(append, named.data(), static_cast<int>(named.size()),
                    /*strict=*/false, slots);
}

flashfuse_status prepareDeviceCheck(const KernelSpec &check,
                                    const flashfuse_decode_args &args,
                                    const int32_t *status,
                                    std::vector<flashfuse_arg> &named) {
  DecodeChecker checker(check, nullptr, args, "KV cache check");
  if (auto s = checker.deviceCheck(status); s != FLASHFUSE_SUCCESS)
    return s;
  named = checker.deviceCheckArgs(status);
  std::vector<ParamSlot> slots;
  return bindParams(check, named.data(), static_cast<int>(named.size()),
                    /*strict=*/false, slots);
}

// The buffers of a launch over a KV cache, numbered for PreparedLaunch,
// and their names in messages.
enum DecodeBuffer : int {
  kBufferQ,
  kBufferK,
  kBufferV,
  kBufferO,
  kBufferLse,
  kBufferLengths,
  kBufferTable,
  kBufferKNew,
  kBufferVNew,
  kBufferKDescale,
  kBufferVDescale,
  kBufferLeftpad,
  kBufferAlibi,
  kBufferBatchIdx,
  kBufferWorkspace,
  // Not the caller's: the runtime's split counters (split_arrivals.h), or
  // the workspace's where it has none to give.
  kBufferSplitArrivals,
  kDecodeBuffers
};
static_assert(kDecodeBuffers <= kMaxPreparedBuffers, "too many buffers");
const char *const kDecodeBufferNames[kDecodeBuffers] = {
    "q",     "k_cache", "v_cache",   "o",         "lse",
    "cache_seqlens", "block_table", "k_new", "v_new", "k_descale",
    "v_descale", "cache_leftpad", "alibi_slopes", "cache_batch_idx",
    "workspace", "split_arrivals"};

} // namespace
} // namespace flashfuse

// A decode or kv_append launch prepared for one signature (runtime.h).
struct flashfuse_decode_plan {
  const flashfuse::KernelSpec *kernel = nullptr;  // decode or kv_append
  const flashfuse::KernelSpec *combine = nullptr; // the decode's, or null
  flashfuse_context *context = nullptr;
  const char *task = nullptr; // names the launch in messages
  // The arguments with placeholder addresses, for the checks' messages.
  flashfuse_decode_args args{};
  flashfuse::Plan plan; // one split and no workspace for kv_append
  // Why a buffer is not read (a step must pass NULL), or null if it is.
  const char *unread[flashfuse::kDecodeBuffers] = {};
  flashfuse::PreparedLaunch launch, combineLaunch;
};

namespace flashfuse {
namespace {

// Calls fn(buffer, field) for each buffer field of `s`, a
// flashfuse_decode_args or a flashfuse_decode_addresses (the workspace,
// only in the latter, is not one): the one place that pairs the fields
// with DecodeBuffer.
template <typename Struct, typename Fn>
void forEachBufferField(Struct &s, Fn &&fn) {
  fn(kBufferQ, s.q);
  fn(kBufferK, s.k_cache);
  fn(kBufferV, s.v_cache);
  fn(kBufferO, s.o);
  fn(kBufferLse, s.lse);
  fn(kBufferLengths, s.cache_seqlens);
  fn(kBufferTable, s.block_table);
  fn(kBufferKNew, s.k_new);
  fn(kBufferVNew, s.v_new);
  fn(kBufferKDescale, s.k_descale);
  fn(kBufferVDescale, s.v_descale);
  fn(kBufferLeftpad, s.cache_leftpad);
  fn(kBufferAlibi, s.alibi_slopes);
  fn(kBufferBatchIdx, s.cache_batch_idx);
}

// Stores `address` in a buffer field of any pointer type.
template <typename Pointer> void setField(Pointer &field, const void *address) {
  field = static_cast<Pointer>(const_cast<void *>(address));
}

// Puts a placeholder address in each buffer field of `a` the plan reads,
// null in the others (q and o of an append, k_new of a decode...).
void placeholderAddresses(flashfuse_decode_args &a,
                          const char *const unread[kDecodeBuffers]) {
  forEachBufferField(a, [&](DecodeBuffer b, auto &field) {
    setField(field, unread[b] ? nullptr : placeholderAddress(b));
  });
}

// What a plan of `kernel` over `a`'s cache does not read of the cache's
// buffers.
void cacheUnread(const KernelSpec &kernel, const flashfuse_decode_args &a,
                 const char *unread[kDecodeBuffers]) {
  if (!kernel.variant.batch_idx)
    unread[kBufferBatchIdx] = "the kernel was compiled without a pool of "
                              "sequences (variant batch_idx 0)";
  if (a.page_size == 0)
    unread[kBufferTable] = "the cache is contiguous";
  if (a.kv_dtype != FLASHFUSE_DTYPE_E4M3)
    unread[kBufferKDescale] = unread[kBufferVDescale] =
        "the cache is not FP8 (descales are for kv_dtype e4m3 only)";
}

// Checks `args` (all but its addresses, which stand for each step's),
// chooses the split count and binds the decode's (and its combine's)
// params into `out`.
flashfuse_status createDecodePlan(flashfuse_kernel &decode,
                                  flashfuse_kernel *combine,
                                  const flashfuse_decode_args &args,
                                  flashfuse_decode_plan &out) {
  out.kernel = decode.spec;
  out.combine = combine ? combine->spec : nullptr;
  out.context = decode.artifact->context;
  out.task = "attention decode";
  const char **unread = out.unread;
  cacheUnread(*out.kernel, args, unread);
  unread[kBufferKNew] = unread[kBufferVNew] =
      "a decode does not append (a kv_append plan writes the new rows)";
  if (!decode.spec->variant.leftpad)
    unread[kBufferLeftpad] = "the decode kernel was compiled without "
                             "cache_leftpad (variant leftpad 0)";
  if (!decode.spec->variant.alibi)
    unread[kBufferAlibi] = "the decode kernel was compiled without ALiBi "
                           "(variant alibi 0)";
  flashfuse_decode_args &a = out.args;
  a = args;
  placeholderAddresses(a, unread);
  DecodeChecker checker(*out.kernel, out.combine, a, out.task);
  if (auto s = checker.check(); s != FLASHFUSE_SUCCESS)
    return s;
  Plan &plan = out.plan;
  if (auto s = checker.plan(out.context->smCount, decode.blocksPerSm,
                            clusterCapacity(decode), plan);
      s != FLASHFUSE_SUCCESS)
    return s;
  if (plan.bytes == 0)
    unread[kBufferWorkspace] =
        plan.mergeInCluster ? "splits merged in a thread-block cluster need "
                              "no workspace"
                            : "one split needs no workspace";
  std::vector<flashfuse_arg> named = checker.namedArgs(
      plan, plan.bytes ? placeholderAddress(kBufferWorkspace) : nullptr,
      plan.mergeInKernel && plan.countersReset
          ? placeholderAddress(kBufferSplitArrivals)
          : nullptr);
  int n = static_cast<int>(named.size());
  // A cluster merge launches the splits of each row group, adjacent in x
  // (split = blockIdx.x % num_splits), as one cluster.
  if (auto s = out.launch.prepare(decode, named.data(), n, plan.clusterX());
      s != FLASHFUSE_SUCCESS)
    return s;
  if (plan.combined())
    return out.combineLaunch.prepare(*combine, named.data(), n);
  return FLASHFUSE_SUCCESS;
}

// The same for a kv_append kernel: checks and binds what the copy of the
// new rows reads and writes (nothing is launched when seq_new is 0).
flashfuse_status createAppendPlan(flashfuse_kernel &append,
                                  const flashfuse_decode_args &args,
                                  flashfuse_decode_plan &out) {
  out.kernel = append.spec;
  out.context = append.artifact->context;
  out.task = "kv append";
  const char **unread = out.unread;
  cacheUnread(*out.kernel, args, unread);
  unread[kBufferQ] = unread[kBufferO] = unread[kBufferLse] =
      unread[kBufferWorkspace] = unread[kBufferLeftpad] =
          unread[kBufferAlibi] =
          "a kv_append reads the lengths and the new rows and writes the "
          "cache";
  if (args.seq_new == 0)
    unread[kBufferKNew] = unread[kBufferVNew] = "seq_new is 0";
  flashfuse_decode_args &a = out.args;
  a = args;
  placeholderAddresses(a, unread);
  DecodeChecker checker(*out.kernel, nullptr, a, out.task);
  if (auto s = checker.append(); s != FLASHFUSE_SUCCESS)
    return s;
  if (a.seq_new == 0)
    return FLASHFUSE_SUCCESS; // nothing to copy, nothing launched
  std::vector<flashfuse_arg> named = checker.appendArgs();
  return out.launch.prepare(append, named.data(),
                            static_cast<int>(named.size()));
}

// One step of a plan: checks the addresses, finds the split counters (the
// runtime's, or the workspace's cleared on the stream) and launches.
flashfuse_status launchPlan(const flashfuse_decode_plan &p,
                            const flashfuse_decode_addresses &addr,
                            void *stream) {
  DecodeChecker checker(*p.kernel, p.combine, p.args, p.task);
  const void *buffers[kMaxPreparedBuffers] = {};
  forEachBufferField(addr, [&](DecodeBuffer b, const auto &field) {
    buffers[b] = field;
  });
  buffers[kBufferWorkspace] = addr.workspace;
  // The workspace has checks of its own (checkWorkspace).
  for (int i = 0; i < kBufferWorkspace; ++i) {
    auto address = reinterpret_cast<uintptr_t>(buffers[i]);
    const char *name = kDecodeBufferNames[i];
    if (p.unread[i] && address)
      return checker.bad(concat("'", name, "' was given, but ", p.unread[i]));
    if (!p.unread[i] && !address)
      return checker.bad(concat("'", name, "' is a null pointer"));
    // The kernels copy every buffer 16 bytes at a time (bindParams).
    if (address % 16 != 0)
      return checker.bad(concat("'", name, "' at ", hexAddress(address),
                                " is not 16-byte aligned"));
  }
  const Plan &plan = p.plan;
  if (auto s = checker.checkWorkspace(plan, addr.workspace,
                                      addr.workspace_bytes);
      s != FLASHFUSE_SUCCESS)
    return s;
  if (!p.launch.prepared())
    return FLASHFUSE_SUCCESS; // an append of no rows
  if (plan.mergeInKernel) {
    // The counters start at 0. Those of a kernel that puts them back to 0
    // are the runtime's, kept from launch to launch; otherwise they are
    // the workspace's, cleared on the stream before the launch.
    flashfuse_context &c = *p.context;
    ScopedContext scope(c);
    if (auto s = scope.enter(); s != FLASHFUSE_SUCCESS)
      return s;
    auto cuStream = static_cast<cu::CUstream>(stream);
    cu::CUdeviceptr kept = 0;
    if (plan.countersReset)
      if (auto s = c.splitArrivals.counters(*c.api, cuStream,
                                            plan.counterElements, kept);
          s != FLASHFUSE_SUCCESS)
        return s;
    if (kept) {
      buffers[kBufferSplitArrivals] = reinterpret_cast<const void *>(kept);
    } else {
      auto counters = reinterpret_cast<cu::CUdeviceptr>(
          static_cast<char *>(addr.workspace) + plan.countersOffset);
      buffers[kBufferSplitArrivals] = reinterpret_cast<const void *>(counters);
      if (auto s = checkCu(*c.api,
                           c.api->cuMemsetD32Async(counters, 0,
                                                   plan.counterElements,
                                                   cuStream),
                           "clearing the decode's split counters");
          s != FLASHFUSE_SUCCESS)
        return s;
    }
  }
  if (auto s = p.launch.launch(buffers, stream); s != FLASHFUSE_SUCCESS)
    return s;
  // Same stream: the combine starts after every split has written.
  if (p.combineLaunch.prepared())
    return p.combineLaunch.launch(buffers, stream);
  return FLASHFUSE_SUCCESS;
}

// The addresses of `args` that plan `p` reads, and a workspace: the step
// of the unprepared entry points, whose arguments may hold addresses their
// kernel ignores (k_new for the decode, q for the append).
flashfuse_decode_addresses addressesOf(const flashfuse_decode_plan &p,
                                       const flashfuse_decode_args &a,
                                       void *workspace, size_t bytes) {
  const void *given[kDecodeBuffers] = {};
  forEachBufferField(a, [&](DecodeBuffer b, const auto &field) {
    given[b] = field;
  });
  flashfuse_decode_addresses addr{};
  forEachBufferField(addr, [&](DecodeBuffer b, auto &field) {
    setField(field, p.unread[b] ? nullptr : given[b]);
  });
  addr.workspace = workspace;
  addr.workspace_bytes = bytes;
  return addr;
}

// Makes a plan with `create`, which fills a fresh one, into *plan (null
// where it fails).
template <typename Create>
flashfuse_status newPlan(flashfuse_decode_plan **plan, Create &&create) {
  if (!plan)
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                "the plan's output pointer must not be NULL");
  *plan = nullptr;
  auto created = std::make_unique<flashfuse_decode_plan>();
  if (auto s = create(*created); s != FLASHFUSE_SUCCESS)
    return s;
  *plan = created.release();
  return FLASHFUSE_SUCCESS;
}

} // namespace
} // namespace flashfuse

extern "C" {

void flashfuse_decode_args_init(flashfuse_decode_args *args) {
  flashfuse::initAttentionArgs(args);
  // k_new, v_new and their strides: null / 0 (no new rows) from the zeroing.
}

flashfuse_status flashfuse_decode_workspace_bytes(
    const flashfuse_kernel *decode, const flashfuse_kernel *combine,
    const flashfuse_decode_args *args, int32_t *num_splits, size_t *bytes) {
  using namespace flashfuse;
  return guarded([&] {
    if (auto s = checkKernels(decode, combine, args); s != FLASHFUSE_SUCCESS)
      return s;
    Plan plan;
    std::vector<flashfuse_arg> named;
    const flashfuse_context &c = *decode->artifact->context;
    if (auto s = prepareDecode(*decode->spec, combine ? combine->spec : nullptr,
                               *args, c.smCount, decode->blocksPerSm,
                               clusterCapacity(*decode), nullptr, 0,
                               /*workspaceChecked=*/false, plan, named);
        s != FLASHFUSE_SUCCESS)
      return s;
    if (num_splits)
      *num_splits = plan.numSplits;
    if (bytes)
      *bytes = plan.bytes;
    return FLASHFUSE_SUCCESS;
  });
}

flashfuse_status flashfuse_attention_decode(flashfuse_kernel *decode,
                                            flashfuse_kernel *combine,
                                            const flashfuse_decode_args *args,
                                            void *workspace,
                                            size_t workspace_bytes,
                                            void *stream) {
  using namespace flashfuse;
  return guarded([&] {
    if (auto s = checkKernels(decode, combine, args); s != FLASHFUSE_SUCCESS)
      return s;
    // The checks of the addresses too, with the messages of the manifest
    // check (flashfuse_attention_decode_check); then a plan of one step.
    DecodeChecker checker(*decode->spec, combine ? combine->spec : nullptr,
                          *args);
    Plan plan;
    if (auto s = checker.check(); s != FLASHFUSE_SUCCESS)
      return s;
    if (auto s = checker.plan(
            decode->artifact->context->smCount, decode->blocksPerSm,
            clusterCapacity(*decode), plan);
        s != FLASHFUSE_SUCCESS)
      return s;
    if (auto s = checker.checkWorkspace(plan, workspace, workspace_bytes);
        s != FLASHFUSE_SUCCESS)
      return s;
    flashfuse_decode_plan prepared;
    if (auto s = createDecodePlan(*decode, combine, *args, prepared);
        s != FLASHFUSE_SUCCESS)
      return s;
    return launchPlan(
        prepared, addressesOf(prepared, *args, workspace, workspace_bytes),
        stream);
  });
}

flashfuse_status flashfuse_decode_plan_create(flashfuse_kernel *decode,
                                              flashfuse_kernel *combine,
                                              const flashfuse_decode_args *args,
                                              flashfuse_decode_plan **plan) {
  using namespace flashfuse;
  return guarded([&] {
    return newPlan(plan, [&](flashfuse_decode_plan &created) {
      if (auto s = checkKernels(decode, combine, args);
          s != FLASHFUSE_SUCCESS)
        return s;
      return createDecodePlan(*decode, combine, *args, created);
    });
  });
}

flashfuse_status
flashfuse_kvcache_append_plan_create(flashfuse_kernel *append,
                                     const flashfuse_decode_args *args,
                                     flashfuse_decode_plan **plan) {
  using namespace flashfuse;
  return guarded([&] {
    return newPlan(plan, [&](flashfuse_decode_plan &created) {
      if (!append || !args)
        return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                    "kv_append kernel and arguments must not be NULL");
      return createAppendPlan(*append, *args, created);
    });
  });
}

flashfuse_status flashfuse_decode_plan_info(const flashfuse_decode_plan *plan,
                                            int32_t *num_splits,
                                            size_t *workspace_bytes) {
  using namespace flashfuse;
  return guarded([&] {
    if (!plan)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT, "the plan is NULL");
    if (num_splits)
      *num_splits = plan->plan.numSplits;
    if (workspace_bytes)
      *workspace_bytes = plan->plan.bytes;
    return FLASHFUSE_SUCCESS;
  });
}

flashfuse_status
flashfuse_decode_plan_launch(const flashfuse_decode_plan *plan,
                             const flashfuse_decode_addresses *addresses,
                             void *stream) {
  using namespace flashfuse;
  return guarded([&] {
    if (!plan || !addresses)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  "the plan and the addresses must not be NULL");
    // A copy: the caller's bytes need not have the struct's alignment.
    flashfuse_decode_addresses step;
    std::memcpy(&step, addresses, sizeof step);
    return launchPlan(*plan, step, stream);
  });
}

void flashfuse_decode_plan_destroy(flashfuse_decode_plan *plan) {
  delete plan;
}

flashfuse_status flashfuse_attention_decode_check(
    const flashfuse_manifest *manifest, int32_t decode_index,
    int32_t combine_index, const flashfuse_decode_args *args,
    int32_t sm_count, int32_t blocks_per_sm, const void *workspace,
    size_t workspace_bytes, int32_t *num_splits, size_t *required_bytes) {
  using namespace flashfuse;
  return guarded([&] {
    if (!manifest || !args)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  "manifest and arguments must not be NULL");
    int32_t count = static_cast<int32_t>(manifest->data.kernels.size());
    if (decode_index < 0 || decode_index >= count)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  concat("decode kernel index ", decode_index,
                         " out of range [0, ", count, ")"));
    if (combine_index < -1 || combine_index >= count)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  concat("combine kernel index ", combine_index,
                         " out of range [-1, ", count, ")"));
    if (sm_count < 1 || blocks_per_sm < 1)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  concat("sm_count = ", sm_count, " and blocks_per_sm = ",
                         blocks_per_sm, " must be >= 1"));
    const auto &kernels = manifest->data.kernels;
    Plan plan;
    std::vector<flashfuse_arg> named;
    if (auto s = prepareDecode(
            kernels[decode_index],
            combine_index >= 0 ? &kernels[combine_index] : nullptr, *args,
            sm_count, blocks_per_sm,
            // No driver to ask: the layout without clusters, whose
            // workspace also serves a launch that merges in clusters (it
            // needs none), and binds the same params.
            /*clusterCapacity=*/nullptr, workspace, workspace_bytes,
            /*workspaceChecked=*/true, plan, named);
        s != FLASHFUSE_SUCCESS)
      return s;
    if (num_splits)
      *num_splits = plan.numSplits;
    if (required_bytes)
      *required_bytes = plan.bytes;
    return FLASHFUSE_SUCCESS;
  });
}


flashfuse_status flashfuse_kvcache_append(flashfuse_kernel *append,
                                          const flashfuse_decode_args *args,
                                          void *stream) {
  using namespace flashfuse;
  return guarded([&] {
    if (!append || !args)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  "kv_append kernel and arguments must not be NULL");
    // The checks of the addresses too, with the manifest check's messages;
    // then a plan of one step (which binds the params).
    DecodeChecker checker(*append->spec, nullptr, *args, "kv append");
    if (auto s = checker.append(); s != FLASHFUSE_SUCCESS)
      return s;
    flashfuse_decode_plan prepared;
    if (auto s = createAppendPlan(*append, *args, prepared);
        s != FLASHFUSE_SUCCESS)
      return s;
    return launchPlan(prepared, addressesOf(prepared, *args, nullptr, 0),
                      stream);
  });
}

flashfuse_status flashfuse_kvcache_append_check(
    const flashfuse_manifest *manifest, int32_t append_index,
    const flashfuse_decode_args *args) {
  using namespace flashfuse;
  return guarded([&] {
    const KernelSpec *spec = nullptr;
    if (auto s = manifestKernel(manifest, append_index, args, spec);
        s != FLASHFUSE_SUCCESS)
      return s;
    std::vector<flashfuse_arg> named;
    return prepareAppend(*spec, *args, named);
  });
}

flashfuse_status flashfuse_decode_check_on_device(
    flashfuse_kernel *check, const flashfuse_decode_args *args,
    int32_t *status, void *stream) {
  using namespace flashfuse;
  return guarded([&] {
    if (!check || !args)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  "decode_check kernel and arguments must not be NULL");
    std::vector<flashfuse_arg> named;
    if (auto s = prepareDeviceCheck(*check->spec, *args, status, named);
        s != FLASHFUSE_SUCCESS)
      return s;
    if (auto s = launchNamed(*check, named.data(),
                             static_cast<int>(named.size()), stream,
                             /*strict=*/false);
        s != FLASHFUSE_SUCCESS)
      return s;
    // The kernel writes every element of the status, so nothing is cleared
    // before; the copy is ordered after it on the stream.
    flashfuse_context &c = *check->artifact->context;
    ScopedContext scope(c);
    if (auto s = scope.enter(); s != FLASHFUSE_SUCCESS)
      return s;
    int32_t host[kCheckStatusElements] = {0, 0, 0, 0};
    auto cuStream = static_cast<cu::CUstream>(stream);
    if (auto s = checkCu(*c.api,
                         c.api->cuMemcpyDtoHAsync(
                             host, reinterpret_cast<cu::CUdeviceptr>(status),
                             sizeof(host), cuStream),
                         "reading the KV cache check's status back");
        s != FLASHFUSE_SUCCESS)
      return s;
    if (auto s = checkCu(*c.api, c.api->cuStreamSynchronize(cuStream),
                         "waiting for the KV cache check");
        s != FLASHFUSE_SUCCESS)
      return s;
    return checkStatusVerdict(host, *args);
  });
}

flashfuse_status flashfuse_decode_check_on_device_check(
    const flashfuse_manifest *manifest, int32_t check_index,
    const flashfuse_decode_args *args, const int32_t *status) {
  using namespace flashfuse;
  return guarded([&] {
    const KernelSpec *spec = nullptr;
    if (auto s = manifestKernel(manifest, check_index, args, spec);
        s != FLASHFUSE_SUCCESS)
      return s;
    std::vector<flashfuse_arg> named;
    return prepareDeviceCheck(*spec, *args, status, named);
  });
}

flashfuse_status flashfuse_decode_check_status(
    const int32_t *status, const flashfuse_decode_args *args) {
  using namespace flashfuse;
  return guarded([&] {
    if (!status || !args)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  "status and arguments must not be NULL");
    return checkStatusVerdict(status, *args);
  });
}

} // extern "C"
