#include "launch.h"

#include "bound_lists.h"
#include "tensormap.h"

#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

namespace flashfuse {

namespace {

const char *typeName(flashfuse_param_type t) {
  switch (t) {
  case FLASHFUSE_PARAM_MEMREF:
    return "memref";
  case FLASHFUSE_PARAM_I32:
    return "i32";
  case FLASHFUSE_PARAM_I64:
    return "i64";
  case FLASHFUSE_PARAM_F32:
    return "f32";
  case FLASHFUSE_PARAM_TENSORMAP:
    return "tensormap";
  }
  return "?";
}

flashfuse_status checkGrid(const KernelSpec &spec, const flashfuse_context &c,
                           const int64_t dims[3], const char *const what[3],
                           unsigned grid[3]);

/// The longest key sequence a `grid persistent` kernel is launched with one
/// block per SM for.
constexpr int64_t kPersistentMaxKeys = 8192;

/// A packed batch's static walk needs tiles of about equal cost: its
/// sequences must fill at least this share of the longest one's rows, on
/// average, in queries and in keys; under a causal mask, whose walk pairs
/// each sequence's long and short query blocks, a little less. H200, bf16,
/// D = 64 and 128, 32k tokens (docs/PERF.md run 547), the walk against a
/// block a unit: equal lengths 1.03-1.09x (causal 1.10-1.24x); 89-90%
/// filled 0.94-1.03x (causal 1.02-1.21x); 78% 0.91-0.94x (causal
/// 0.95-1.00x); 62% 0.81-0.89x (causal 0.92-1.01x).
constexpr int64_t kPackedWalkMinFillPercent = 95;
constexpr int64_t kPackedCausalWalkMinFillPercent = 88;

/// Whether `total` rows over `seqs` sequences of at most `longest` fill
/// `percent` of seqs * longest.
bool evenlyFilled(int64_t total, int64_t seqs, int64_t longest,
                  int64_t percent) {
  return 100 * total >= percent * seqs * longest;
}

/// Whether the runtime walks a packed batch statically
/// (flashfuse_packed_batch_walks, runtime.h).
bool packedBatchWalks(int64_t totalQ, int64_t totalK, int64_t numSeqs,
                      int64_t maxSeqQ, int64_t maxSeqK, int32_t causal) {
  int64_t percent = causal == FLASHFUSE_CAUSAL_NONE
                        ? kPackedWalkMinFillPercent
                        : kPackedCausalWalkMinFillPercent;
  return evenlyFilled(totalQ, numSeqs, maxSeqQ, percent) &&
         evenlyFilled(totalK, numSeqs, maxSeqK, percent) &&
         maxSeqK <= kPersistentMaxKeys;
}

/// KERNEL_ABI.md "grid persistent": one block per SM (these kernels take a
/// whole SM's registers), none idle where there are fewer tiles; each walks
/// the tiles blockIdx.x, blockIdx.x + gridDim.x, ... Unless `walk`: past
/// kPersistentMaxKeys keys a tile's prologue is a small share of it and
/// the static walk's last round leaves SMs idle (docs/PERF.md, run 108),
/// and over a packed batch of unequal lengths the static walk gives some
/// SMs many times the work of others (run 546): one block per tile then,
/// which the hardware schedules as SMs free up. `dims` (the tile grid)
/// becomes the launch's.
///
/// `period` (> 1): a walked grid's units repeat their costs with this
/// period (the units of one head and sequence, where they are not all
/// alike), so the grid takes the largest size at most the SMs that shares
/// no factor with it; see walkPeriod.
void persistentDims(const flashfuse_context &c, bool walk, int64_t dims[3],
                    const char *what[3], int64_t period = 1) {
  int64_t tiles = dims[0] * dims[1] * dims[2];
  int64_t slots = c.smCount > 0 && walk ? c.smCount : tiles;
  dims[0] = tiles < slots ? tiles : slots;
  if (period > 1 && dims[0] < tiles)
    while (dims[0] > 1 && std::gcd(dims[0], period) != 1)
      --dims[0];
  dims[1] = dims[2] = 1;
  what[0] = "blocks";
}

/// A walk gives CTA x the units x, x + G, ... (G the grid), numbered
/// query-block-fastest within each (head, sequence): u units
/// each, the query blocks (M of the longest sequence) or under a causal
/// mask their pairs, ceil(M / 2). Where those u units differ in cost and G
/// shares a factor with u, every CTA keeps meeting the same kind of unit:
/// with 132 CTAs and 384 causal queries (M = 3, a pair of 4 key blocks and
/// a single of 2) the even CTAs got every pair and the odd ones every
/// single, the walk 0.76-0.91x the sm90 kernel (docs/PERF.md run 553);
/// on 131 CTAs 1.31-1.37x that (run 555). They differ under a causal mask
/// where M is odd (the single middle block): returns u there, else 1.
/// (Without a mask a last block shorter than the others makes the units
/// differ too, but a coprime grid measured level there, run 555.) The
/// dense walk, whose last rounds are single blocks already, gains less:
/// 1.01-1.04x at D = 64, 0.97-1.01x at D = 128 (run 556).
int64_t walkPeriod(const KernelSpec &spec, int64_t blocks) {
  if (spec.variant.causal != FLASHFUSE_CAUSAL_NONE && blocks % 2)
    return (blocks + 1) / 2;
  return 1;
}

} // namespace

flashfuse_status gridSize(const KernelSpec &spec, const flashfuse_arg *args,
                          int n, const flashfuse_context &c,
                          unsigned grid[3]) {
  auto get = [&](const char *name, int64_t &value) {
    const flashfuse_arg *a = findArg(args, n, name);
    if (!a || a->type != FLASHFUSE_PARAM_I32 || a->i <= 0)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  concat("launching '", spec.name, "': the grid needs a "
                         "positive i32 argument '", name, "'"));
    value = a->i;
    return FLASHFUSE_SUCCESS;
  };
  int64_t batch = 0, heads = 0, seq = 0, seqK = 0;
  flashfuse_kernel_kind kind = spec.variant.kind;
  int64_t dims[3] = {0, 0, 0};
  const char *what[3] = {"query blocks", "heads_q", "batch"};
  if (kind == FLASHFUSE_KIND_KV_APPEND) {
    // One warp per new row (b, h, t) of [B, Hkv, Snew], block_m rows a block.
    int64_t headsKv = 0, seqNew = 0;
    for (auto [name, value] :
         {std::pair<const char *, int64_t *>{"batch", &batch},
          {"heads_kv", &headsKv}, {"seq_new", &seqNew}})
      if (auto s = get(name, *value); s != FLASHFUSE_SUCCESS)
        return s;
    int64_t rows = batch * headsKv * seqNew;
    // A rotating append's warps for the query rows (b, h, i) of
    // [B, Hq, Sq] follow (KERNEL_ABI.md "Decode").
    if (spec.rotaryDim) {
      int64_t headsQ = 0, seqQ = 0;
      for (auto [name, value] :
           {std::pair<const char *, int64_t *>{"heads_q", &headsQ},
            {"seq_q", &seqQ}})
        if (auto s = get(name, *value); s != FLASHFUSE_SUCCESS)
          return s;
      rows += batch * headsQ * seqQ;
    }
    dims[0] = (rows + spec.block_m - 1) / spec.block_m;
    dims[1] = dims[2] = 1;
    what[0] = "new-row blocks";
    return checkGrid(spec, c, dims, what, grid);
  }
  if (kind == FLASHFUSE_KIND_BACKWARD_SPARSE_TRANSPOSE) {
    // KERNEL_ABI.md "Block-sparse backward": one thread per sparse key
    // block, of KB = ceil(seq_k / sparse_block_k), per query head and batch.
    int64_t blocks = 0;
    for (auto [name, value] :
         {std::pair<const char *, int64_t *>{"batch", &batch},
          {"heads_q", &heads}, {"seq_k", &seqK}})
      if (auto s = get(name, *value); s != FLASHFUSE_SUCCESS)
        return s;
    blocks = (seqK + spec.variant.sparse_block_k - 1) /
             spec.variant.sparse_block_k;
    dims[0] = (blocks + spec.threads - 1) / spec.threads;
    dims[1] = heads;
    dims[2] = batch;
    what[0] = "key-block groups";
    return checkGrid(spec, c, dims, what, grid);
  }
  if (kind == FLASHFUSE_KIND_DECODE_CHECK) {
    // One block strides over every sequence's entries.
    dims[0] = dims[1] = dims[2] = 1;
    return checkGrid(spec, c, dims, what, grid);
  }
  if (kind == FLASHFUSE_KIND_DECODE || kind == FLASHFUSE_KIND_DECODE_COMBINE) {
    // KERNEL_ABI.md "Decode": the decode has one block per (m-block of the
    // G * Sq packed rows of a kv head, split) x kv head x batch; the
    // combine one warp per output row, block_m rows a block.
    int64_t splits = 0, headsKv = 0;
    for (auto [name, value] :
         {std::pair<const char *, int64_t *>{"batch", &batch},
          {"heads_q", &heads}, {"seq_q", &seq}, {"num_splits", &splits}})
      if (auto s = get(name, *value); s != FLASHFUSE_SUCCESS)
        return s;
    if (kind == FLASHFUSE_KIND_DECODE) {
      if (auto s = get("heads_kv", headsKv); s != FLASHFUSE_SUCCESS)
        return s;
      if (heads % headsKv != 0)
        return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                    concat("launching '", spec.name, "': heads_q = ", heads,
                           " is not a multiple of heads_kv = ", headsKv));
      int64_t rows = heads / headsKv * seq;
      dims[0] = splits * ((rows + spec.block_m - 1) / spec.block_m);
      dims[1] = headsKv;
      dims[2] = batch;
      what[0] = "splits x packed-row blocks";
      what[1] = "heads_kv";
    } else {
      int64_t rows = batch * heads * seq;
      dims[0] = (rows + spec.block_m - 1) / spec.block_m;
      dims[1] = dims[2] = 1;
      what[0] = "output-row blocks";
    }
    return checkGrid(spec, c, dims, what, grid);
  }
  if (spec.variant.varlen) {
    // KERNEL_ABI.md "Varlen": one block per (query block of the longest
    // query sequence, query head, sequence) for the forward and the dQ
    // kernel, per (key block of the longest key sequence, ...) for the
    // main backward kernel.
    bool keys = kind == FLASHFUSE_KIND_BACKWARD;
    int64_t numSeqs = 0, maxSeq = 0;
    for (auto [name, value] :
         {std::pair<const char *, int64_t *>{"heads_q", &heads},
          {keys ? "max_seqlen_k" : "max_seqlen_q", &maxSeq},
          {"num_seqs", &numSeqs}})
      if (auto s = get(name, *value); s != FLASHFUSE_SUCCESS)
        return s;
    int64_t block = keys ? spec.block_n : spec.block_m;
    dims[0] = (maxSeq + block - 1) / block;
    dims[1] = heads;
    dims[2] = numSeqs;
    what[0] = keys ? "key blocks" : "query blocks";
    what[2] = "num_seqs";
    if (spec.persistent) {
      // The longest key sequence: max_seqlen_k where the caller names it
      // (the forward's own launch does; the kernel takes no such
      // parameter), else the longest query sequence, whose fill alone then
      // decides.
      const flashfuse_arg *named = findArg(args, n, "max_seqlen_k");
      bool keysNamed = named && named->type == FLASHFUSE_PARAM_I32;
      int64_t maxKeys = keysNamed ? named->i : maxSeq;
      // The totals (seq_q, seq_k: the packed rows; 0 where not given).
      auto total = [&](const char *name) -> int64_t {
        const flashfuse_arg *a = findArg(args, n, name);
        return a && a->type == FLASHFUSE_PARAM_I32 ? a->i : 0;
      };
      int64_t totalQ = total("seq_q");
      int64_t totalK = keysNamed ? total("seq_k") : totalQ;
      persistentDims(c,
                     packedBatchWalks(totalQ, totalK, numSeqs, maxSeq,
                                      maxKeys, spec.variant.causal),
                     dims, what, walkPeriod(spec, dims[0]));
    }
    return checkGrid(spec, c, dims, what, grid);
  }
  // KERNEL_ABI.md: `backward` has one block per key block; the postprocess
  // covers both grad_q's query rows and grad_k/grad_v's key rows.
  bool overKeys = kind == FLASHFUSE_KIND_BACKWARD;
  bool overBoth = kind == FLASHFUSE_KIND_BACKWARD_POSTPROCESS;
  if (auto s = get("batch", batch); s != FLASHFUSE_SUCCESS)
    return s;
  if (auto s = get("heads_q", heads); s != FLASHFUSE_SUCCESS)
    return s;
  if (auto s = get(overKeys ? "seq_k" : "seq_q", seq); s != FLASHFUSE_SUCCESS)
    return s;
  if (overBoth) {
    if (auto s = get("seq_k", seqK); s != FLASHFUSE_SUCCESS)
      return s;
    seq = seq > seqK ? seq : seqK;
  }
  int64_t block = overKeys ? spec.block_n : spec.block_m;
  dims[0] = (seq + block - 1) / block;
  dims[1] = heads;
  dims[2] = batch;
  what[0] = overKeys ? "key blocks" : overBoth ? "row blocks" : "query blocks";
  if (spec.persistent) {
    const flashfuse_arg *keys = findArg(args, n, "seq_k");
    persistentDims(c,
                   !keys || keys->type != FLASHFUSE_PARAM_I32 ||
                       keys->i <= kPersistentMaxKeys,
                   dims, what, walkPeriod(spec, dims[0]));
  }
  return checkGrid(spec, c, dims, what, grid);
}

namespace {

flashfuse_status checkGrid(const KernelSpec &spec, const flashfuse_context &c,
                           const int64_t dims[3], const char *const what[3],
                           unsigned grid[3]) {
  for (int i = 0; i < 3; ++i) {
    if (dims[i] > c.maxGrid[i])
      return fail(FLASHFUSE_ERROR_UNSUPPORTED,
                  concat("launching '", spec.name, "': ", what[i], " = ",
                         dims[i], " exceeds this GPU's grid limit ",
                         c.maxGrid[i], " in dimension ", "xyz"[i]));
    grid[i] = static_cast<unsigned>(dims[i]);
  }
  return FLASHFUSE_SUCCESS;
}

} // namespace

const flashfuse_arg *findArg(const flashfuse_arg *args, int n,
                             const std::string &name) {
  int hint = 0;
  return findArgFrom(args, n, name, hint);
}

const flashfuse_arg *findArgFrom(const flashfuse_arg *args, int n,
                                 const std::string &name, int &hint) {
  int start = hint >= 0 && hint < n ? hint : 0;
  for (int k = 0; k < n; ++k) {
    int i = start + k < n ? start + k : start + k - n;
    if (args[i].name && std::strcmp(args[i].name, name.c_str()) == 0) {
      hint = i + 1;
      return &args[i];
    }
  }
  return nullptr;
}

int64_t span(const int64_t size[4], const int64_t stride[4]) {
  int64_t n = 1;
  for (int d = 0; d < 4; ++d)
    if (size[d] > 1)
      n += (size[d] - 1) * stride[d];
  return n;
}

std::string operandProblem(const Operand &op) {
  if (!op.ptr)
    return concat("'", op.name, "' is a null pointer");
  for (int d = 0; d < 4; ++d)
    if (op.stride[d] < 0)
      return concat("'", op.name, "' has a negative stride");
  if (op.size[3] > 1 && op.stride[3] != 1)
    return concat("'", op.name, "' has stride ", op.stride[3],
                  " in its last dimension; it must be contiguous (1)");
  // Each row is moved in 16-byte pieces, so every row must start on a
  // 16-byte boundary: strides of dims that are walked are multiples of 16
  // bytes (8 2-byte elements, 16 e4m3 ones).
  const int64_t quantum = 16 / op.elementBytes;
  for (int d = 0; d < 3; ++d)
    if (op.size[d] > 1 && op.stride[d] % quantum != 0)
      return concat("'", op.name, "' stride ", op.stride[d], " in dimension ",
                    d, " is not a multiple of ", quantum,
                    " elements (16 bytes)");
  for (int d = 0; d < 4; ++d)
    if (op.size[d] > 1 && op.stride[d] > kMaxElements / op.size[d])
      return concat("'", op.name, "' is too large");
  return "";
}

std::string varlenProblem(const flashfuse_varlen_args &p, int64_t batch,
                          int64_t seqQ, int64_t seqK) {
  // The offsets stay on the GPU, so only their bounds are checked here.
  if (batch != 1)
    return concat("batch = ", batch, ", but a packed batch has batch 1 (the "
                  "sequences lie along seq_q / seq_k)");
  if (!p.cu_seqlens_q || !p.cu_seqlens_k)
    return concat("'", p.cu_seqlens_q ? "cu_seqlens_k" : "cu_seqlens_q",
                  "' is a null pointer");
  if (p.num_seqs <= 0 || p.num_seqs >= kMaxI32)
    return concat("num_seqs = ", p.num_seqs, " (must be in [1, 2^31 - 1))");
  if (p.max_seqlen_q <= 0 || p.max_seqlen_q > seqQ)
    return concat("max_seqlen_q = ", p.max_seqlen_q, " (must be in [1, seq_q = ",
                  seqQ, "]: the longest query sequence)");
  if (p.max_seqlen_k < 0 || p.max_seqlen_k > seqK)
    return concat("max_seqlen_k = ", p.max_seqlen_k, " (must be in [0, seq_k = ",
                  seqK, "])");
  return "";
}

std::string windowSoftcapProblem(const flashfuse_variant &v,
                                 int32_t windowLeft, int32_t windowRight,
                                 float softcap) {
  if (!v.window && (windowLeft != -1 || windowRight != -1))
    return concat("a window (", windowLeft, ", ", windowRight,
                  ") was requested but the kernel has none");
  if (v.window && (windowLeft < -1 || windowRight < -1))
    return "window sizes must be >= 0, or -1 for unbounded";
  if (!v.softcap && softcap != 0.0f)
    return "softcap was requested but the kernel has none";
  if (v.softcap && !(softcap > 0.0f && std::isfinite(softcap)))
    return concat("softcap = ", softcap, " (must be > 0)");
  return "";
}

flashfuse_arg buffer(const char *name, const void *ptr, int64_t numel) {
  flashfuse_arg a{};
  a.name = name;
  a.type = FLASHFUSE_PARAM_MEMREF;
  a.ptr = ptr;
  a.numel = numel;
  return a;
}

flashfuse_arg integer(const char *name, flashfuse_param_type type,
                      int64_t value) {
  flashfuse_arg a{};
  a.name = name;
  a.type = type;
  a.i = value;
  return a;
}

flashfuse_arg real(const char *name, double value) {
  flashfuse_arg a{};
  a.name = name;
  a.type = FLASHFUSE_PARAM_F32;
  a.f = value;
  return a;
}

flashfuse_status bindParams(const KernelSpec &spec, const flashfuse_arg *args,
                            int numArgs, bool strict,
                            std::vector<ParamSlot> &slots,
                            std::vector<TensorMapRequest> *maps) {
  if (numArgs < 0 || (numArgs > 0 && !args))
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT, "bad argument array");
  auto bad = [&](const std::string &what) {
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                concat("launching '", spec.name, "': ", what));
  };

  slots.clear();
  slots.reserve(spec.params.size() * 5);
  if (maps)
    maps->clear();
  int hint = 0;
  for (const ParamSpec &p : spec.params) {
    if (p.type == FLASHFUSE_PARAM_TENSORMAP) {
      // Made from the operand's own arguments; its 128 bytes live outside
      // the 8-byte slots (launchNamed).
      TensorMapRequest r;
      if (auto s = describeTensorMap(spec, p.name, args, numArgs, r);
          s != FLASHFUSE_SUCCESS)
        return s;
      r.slot = slots.size();
      if (maps)
        maps->push_back(r);
      slots.push_back(ParamSlot{});
      continue;
    }
    const flashfuse_arg *a = findArgFrom(args, numArgs, p.name, hint);
    if (!a)
      return bad(concat("the kernel takes '", typeName(p.type), ":", p.name,
                        "' but no argument of that name was given"));
    if (a->type != p.type)
      return bad(concat("argument '", p.name, "' is ", typeName(a->type),
                        " but the kernel takes ", typeName(p.type)));
    ParamSlot s{};
    switch (p.type) {
    case FLASHFUSE_PARAM_MEMREF: {
      auto address = reinterpret_cast<uintptr_t>(a->ptr);
      if (!a->ptr)
        return bad(concat("buffer '", p.name, "' is a null pointer"));
      if (address % 16 != 0)
        return bad(concat("buffer '", p.name, "' at ", hexAddress(address),
                          " is not 16-byte aligned (the kernels copy 16 "
                          "bytes at a time)"));
      if (a->numel <= 0)
        return bad(concat("buffer '", p.name, "' has ", a->numel,
                          " elements"));
      // A captured tensor is addressed in 32 bits (KERNEL_ABI.md "Values
      // captured by score_mod and mask_mod").
      if (a->numel > std::numeric_limits<int32_t>::max() &&
          p.name.rfind("capture", 0) == 0)
        return bad(concat("captured tensor '", p.name, "' spans ", a->numel,
                          " elements; the kernels address one in 32 bits "
                          "(at most 2147483647)"));
      // MLIR's memref calling convention: allocated, aligned, offset, size,
      // stride (docs/KERNEL_ABI.md).
      ParamSlot f[5];
      f[0].ptr = a->ptr;
      f[1].ptr = a->ptr;
      f[2].i64 = 0;
      f[3].i64 = a->numel;
      f[4].i64 = 1;
      slots.insert(slots.end(), f, f + 5);
      continue;
    }
    case FLASHFUSE_PARAM_I32:
      if (a->i < std::numeric_limits<int32_t>::min() ||
          a->i > std::numeric_limits<int32_t>::max())
        return bad(concat("'", p.name, "' = ", a->i, " does not fit in i32"));
      s.i64 = 0;
      s.i32 = static_cast<int32_t>(a->i);
      break;
    case FLASHFUSE_PARAM_I64:
      s.i64 = a->i;
      break;
    case FLASHFUSE_PARAM_TENSORMAP: // handled above
      break;
    case FLASHFUSE_PARAM_F32:
      if (!std::isfinite(a->f))
        return bad(concat("'", p.name, "' = ", a->f, " is not finite"));
      s.i64 = 0;
      s.f32 = static_cast<float>(a->f);
      break;
    }
    slots.push_back(s);
  }
  if (strict)
    for (int i = 0; i < numArgs; ++i) {
      bool used = false;
      for (const ParamSpec &p : spec.params)
        used = used || (args[i].name && p.name == args[i].name);
      if (!used)
        return bad(concat("the kernel takes no parameter named '",
                          args[i].name ? args[i].name : "(null)", "'"));
    }
  return FLASHFUSE_SUCCESS;
}

flashfuse_status launchNamed(flashfuse_kernel &kernel,
                             const flashfuse_arg *args, int numArgs,
                             void *stream, bool strict) {
  const KernelSpec &spec = *kernel.spec;
  flashfuse_context &c = *kernel.artifact->context;
  if (numArgs < 0 || (numArgs > 0 && !args))
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT, "bad argument array");
  // The params the artifact binds, where the caller passes none of them
  // (only such kernels pay for the copy: the decode launches are
  // host-bound).
  std::vector<flashfuse_arg> all;
  if (!spec.bound.empty()) {
    if (auto s = withBoundArgs(spec, args, numArgs,
                               kernel.artifact->listBuffers, all);
        s != FLASHFUSE_SUCCESS)
      return s;
    args = all.data();
    numArgs = static_cast<int>(all.size());
  }
  std::vector<ParamSlot> slots;
  std::vector<TensorMapRequest> mapRequests;
  if (auto s = bindParams(spec, args, numArgs, strict, slots, &mapRequests);
      s != FLASHFUSE_SUCCESS)
    return s;
  unsigned grid[3];
  if (auto s = gridSize(spec, args, numArgs, c, grid); s != FLASHFUSE_SUCCESS)
    return s;
  std::vector<void *> params(slots.size());
  for (size_t i = 0; i < slots.size(); ++i)
    params[i] = &slots[i];
  // cuTensorMapEncodeTiled needs a current context: a thread the caller's
  // CUDA runtime has not made one current on (PyTorch's autograd threads
  // before their first CUDA call) failed with CUDA_ERROR_INVALID_CONTEXT.
  // launchBound enters it again, a no-op then.
  ScopedContext scope(c);
  if (!mapRequests.empty())
    if (auto s = scope.enter(); s != FLASHFUSE_SUCCESS)
      return s;
  // cuLaunchKernel copies the parameters at the call: the maps need only
  // outlive it.
  std::vector<cu::CUtensorMap> maps(mapRequests.size());
  for (size_t i = 0; i < mapRequests.size(); ++i) {
    if (auto s = encodeTensorMap(*c.api, spec, mapRequests[i], maps[i]);
        s != FLASHFUSE_SUCCESS)
      return s;
    params[mapRequests[i].slot] = &maps[i];
  }

  return launchBound(kernel, grid, params.data(), stream);
}

cu::CUlaunchConfig clusterLaunchConfig(const KernelSpec &spec,
                                       const unsigned grid[3],
                                       unsigned clusterX, cu::CUstream stream,
                                       cu::CUlaunchAttribute &cluster) {
  cluster = cu::CUlaunchAttribute{};
  cluster.id = cu::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = clusterX;
  cluster.value.clusterDim.y = 1;
  cluster.value.clusterDim.z = 1;
  cu::CUlaunchConfig config{};
  config.gridDimX = grid[0];
  config.gridDimY = grid[1];
  config.gridDimZ = grid[2];
  config.blockDimX = static_cast<unsigned>(spec.threads);
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = static_cast<unsigned>(spec.smem);
  config.hStream = stream;
  config.attrs = &cluster;
  config.numAttrs = 1;
  return config;
}

flashfuse_status launchBound(const flashfuse_kernel &kernel,
                             const unsigned grid[3], void **params,
                             void *stream, unsigned clusterX) {
  const KernelSpec &spec = *kernel.spec;
  flashfuse_context &c = *kernel.artifact->context;
  if (clusterX > 1 && !c.api->cuLaunchKernelEx)
    return fail(FLASHFUSE_ERROR_UNSUPPORTED,
                concat("launching kernel '", spec.name, "' in clusters of ",
                       clusterX, " blocks needs cuLaunchKernelEx, which this "
                       "CUDA driver does not have (CUDA 11.8 or later)"));
  if (clusterX > 1 && grid[0] % clusterX != 0)
    return fail(FLASHFUSE_ERROR_INTERNAL,
                concat("launching kernel '", spec.name, "': clusters of ",
                       clusterX, " blocks do not divide grid.x = ", grid[0]));
  ScopedContext scope(c);
  if (auto s = scope.enter(); s != FLASHFUSE_SUCCESS)
    return s;
  auto cuStream = static_cast<cu::CUstream>(stream);
  auto threads = static_cast<unsigned>(spec.threads);
  auto smem = static_cast<unsigned>(spec.smem);
  cu::CUresult result;
  if (clusterX <= 1) {
    result = c.api->cuLaunchKernel(kernel.function, grid[0], grid[1], grid[2],
                                   threads, 1, 1, smem, cuStream, params,
                                   nullptr);
  } else {
    cu::CUlaunchAttribute cluster;
    cu::CUlaunchConfig config =
        clusterLaunchConfig(spec, grid, clusterX, cuStream, cluster);
    result = c.api->cuLaunchKernelEx(&config, kernel.function, params, nullptr);
  }
  // The message is built on failure only: a decode step's launches are
  // host-bound.
  if (result == cu::CUDA_SUCCESS)
    return FLASHFUSE_SUCCESS;
  return checkCu(*c.api, result,
                 concat("launching kernel '", spec.name, "' with grid (",
                        grid[0], ", ", grid[1], ", ", grid[2], "), block ",
                        spec.threads, ", ", spec.smem,
                        " bytes of shared memory",
                        clusterX > 1 ? concat(", in clusters of ", clusterX,
                                              " blocks")
                                     : std::string()));
}

} // namespace flashfuse

extern "C" flashfuse_status flashfuse_kernel_launch(flashfuse_kernel *kernel,
                                                    const flashfuse_arg *args,
                                                    int32_t num_args,
                                                    int32_t allow_unused,
                                                    void *stream) {
  return flashfuse::guarded([&] {
    if (!kernel)
      return flashfuse::fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                             "kernel is NULL");
    return flashfuse::launchNamed(*kernel, args, num_args, stream,
                                  /*strict=*/allow_unused == 0);
  });
}

extern "C" int32_t flashfuse_packed_batch_walks(int64_t total_q,
                                                int64_t total_k,
                                                int64_t num_seqs,
                                                int64_t max_seqlen_q,
                                                int64_t max_seqlen_k,
                                                int32_t causal) {
  return flashfuse::packedBatchWalks(total_q, total_k, num_seqs, max_seqlen_q,
                                     max_seqlen_k, causal);
}
