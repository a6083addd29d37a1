/* FlashFuse runtime: loads the attention kernels that flashfuse-compile
 * writes (docs/KERNEL_ABI.md) and launches them through the CUDA driver.
 *
 * The library has no link-time dependency on CUDA: libcuda.so.1 is opened
 * when the first context is created. Every function returns a status; on
 * failure a message describing what was being done and why it failed is kept
 * per thread and returned by flashfuse_last_error().
 *
 * Thread safety: all functions may be called from several threads at once;
 * a context's caches are protected by a mutex. Handles returned by a context
 * (artifacts, kernels) stay valid until the context is destroyed.
 */
#ifndef FLASHFUSE_RUNTIME_H
#define FLASHFUSE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define FLASHFUSE_API __attribute__((visibility("default")))
#else
#define FLASHFUSE_API
#endif

typedef enum flashfuse_status {
  FLASHFUSE_SUCCESS = 0,
  FLASHFUSE_ERROR_INVALID_ARGUMENT = 1, /* a caller's argument is wrong */
  FLASHFUSE_ERROR_NO_DRIVER = 2,        /* libcuda missing or unusable */
  FLASHFUSE_ERROR_NO_DEVICE = 3,        /* driver present, no usable GPU */
  FLASHFUSE_ERROR_CUDA = 4,             /* a driver call failed */
  FLASHFUSE_ERROR_MANIFEST = 5,         /* artifact unreadable or malformed */
  FLASHFUSE_ERROR_NOT_FOUND = 6,        /* no kernel of that name/variant */
  FLASHFUSE_ERROR_UNSUPPORTED = 7,      /* valid, but beyond this GPU/kernel */
  FLASHFUSE_ERROR_INTERNAL = 8
} flashfuse_status;

typedef enum flashfuse_dtype {
  FLASHFUSE_DTYPE_F16 = 0,
  FLASHFUSE_DTYPE_BF16 = 1,
  /* float8 e4m3 (one byte; torch.float8_e4m3fn): Q, K, V of an FP8 forward,
   * whose O is bf16 or f16 (flashfuse_variant::out_dtype; KERNEL_ABI.md
   * "FP8 forwards"). */
  FLASHFUSE_DTYPE_E4M3 = 2
} flashfuse_dtype;

typedef enum flashfuse_causal {
  FLASHFUSE_CAUSAL_NONE = 0,
  FLASHFUSE_CAUSAL_TOP_LEFT = 1,
  FLASHFUSE_CAUSAL_BOTTOM_RIGHT = 2
} flashfuse_causal;

typedef enum flashfuse_kernel_kind {
  FLASHFUSE_KIND_FORWARD = 0,
  FLASHFUSE_KIND_BACKWARD_PREPROCESS = 1,
  FLASHFUSE_KIND_BACKWARD = 2,
  FLASHFUSE_KIND_BACKWARD_DQ = 3,         /* deterministic artifacts only */
  FLASHFUSE_KIND_BACKWARD_POSTPROCESS = 4,
  FLASHFUSE_KIND_DECODE = 5,         /* split-KV attention over a KV cache */
  FLASHFUSE_KIND_DECODE_COMBINE = 6, /* merges the decode's splits by LSE */
  FLASHFUSE_KIND_KV_APPEND = 7,      /* writes new K/V rows into the cache */
  FLASHFUSE_KIND_DECODE_CHECK = 8,   /* validates lengths/pages on the GPU */
  /* block-sparse backward: the forward's lists transposed to query blocks
   * per key block, before the main kernel (KERNEL_ABI.md) */
  FLASHFUSE_KIND_BACKWARD_SPARSE_TRANSPOSE = 9
} flashfuse_kernel_kind;

typedef enum flashfuse_param_type {
  FLASHFUSE_PARAM_MEMREF = 0, /* 1-D buffer: ptr, ptr, 0, numel, 1 */
  FLASHFUSE_PARAM_I32 = 1,
  FLASHFUSE_PARAM_I64 = 2,
  FLASHFUSE_PARAM_F32 = 3,
  /* A TMA tensor map (CUtensorMap, 128 bytes by value) over the operand the
   * parameter names less its "_map" suffix: the runtime encodes it at launch
   * from that operand's memref argument, sizes and strides
   * (KERNEL_ABI.md "Tensor maps"); callers pass no argument for it. */
  FLASHFUSE_PARAM_TENSORMAP = 4
} flashfuse_param_type;

/* What a kernel computes; the key kernels are looked up by. Flags are 0/1. */
typedef struct flashfuse_variant {
  flashfuse_kernel_kind kind;
  flashfuse_dtype dtype;
  int32_t head_dim;   /* D */
  int32_t head_dim_v; /* Dv */
  flashfuse_causal causal;
  int32_t window;
  int32_t softcap;
  int32_t bias;
  int32_t mask;
  int32_t dropout;
  /* decode: rows per page of a paged KV cache, 0 for a contiguous cache;
   * 0 for every other kind. Last, so that code written before it that
   * zero-initialises a variant still describes the same kernel. */
  int32_t page_size;
  /* forward: 1 when O is written in f32 (the unrounded partial results that
   * split-sequence attention merges by their LSE), 0 when O has `dtype`;
   * 0 for every other kind. Appended after page_size for the same reason. */
  int32_t out_f32;
  /* forward: 1 for a kernel of packed variable-length sequences
   * (flashfuse_attention_forward_varlen, KERNEL_ABI.md "Varlen"); 0 for
   * every other kernel, and for manifests written before the key existed.
   * Last (after out_f32) for the same reason as page_size. */
  int32_t varlen;
  /* forward with dtype e4m3 only: O's dtype (F16 or BF16); 0 for every other
   * kernel, whose O has `dtype` (or is f32 with out_f32). F16 is 0 too, so
   * an e4m3 kernel with f16 O and a 16-bit kernel differ by `dtype`, never
   * by this field alone. Last (after varlen) for the same reason as
   * page_size. */
  flashfuse_dtype out_dtype;
  /* forward, backward, backward_dq, backward_sparse_transpose: 1 for a
   * kernel of block-sparse attention (lists of key blocks), 2 when it takes
   * full-block lists too, with the lists' block sizes (KERNEL_ABI.md
   * "Block-sparse"); 0 for every other kernel and for manifests written
   * before the keys existed. Appended after out_dtype
   * for the same reason as page_size. */
  int32_t block_sparse;
  int32_t sparse_block_q;
  int32_t sparse_block_k;
  /* decode, kv_append: FLASHFUSE_DTYPE_E4M3 for a kernel over an FP8 KV
   * cache (manifest `kv_dtype e4m3`, docs/KVCACHE.md "FP8 cache"), whose
   * params take k_descale/v_descale (kv_append quantises the new rows with
   * them); 0 for a cache of `dtype` and for every other kind. Appended after sparse_block_k for the same reason as page_size. */
  flashfuse_dtype kv_dtype;
  /* forward with dtype e4m3 only: the rows of Q and of K/V that one
   * per-block descale covers (flash.attention's descale_block_size;
   * KERNEL_ABI.md "FP8 forwards"), whose params take each descale's block
   * stride too; 0 for kernels of per-tensor or per-head descales and every
   * other kernel. Appended after kv_dtype for the same reason as
   * page_size. */
  int32_t descale_block_q;
  int32_t descale_block_k;
  /* decode: 1 for a kernel over a left-padded cache (manifest `leftpad 1`),
   * whose params take cache_leftpad (flashfuse_decode_args); 0 for every
   * other kernel. Appended after descale_block_k for the same reason as
   * page_size. */
  int32_t leftpad;
  /* decode: ALiBi (manifest `alibi N`): 1 for slopes f32 [Hq], 2 for
   * [B, Hq], whose params take alibi_slopes (flashfuse_decode_args); 0 for
   * every other kernel. Appended after leftpad for the same reason as
   * page_size. */
  int32_t alibi;
  /* decode, kv_append and decode_check: 1 where the contiguous cache is a
   * pool of sequences (flash-attn's cache_batch_idx; docs/KVCACHE.md "A
   * pool of sequences"): the kernel's params take cache_batch_idx and
   * cache_batch (flashfuse_decode_args); 0 for every other kernel.
   * Appended after alibi for the same reason as page_size. */
  int32_t batch_idx;
} flashfuse_variant;

/* One `kernel` entry of manifest.txt. `name` lives as long as the manifest. */
typedef struct flashfuse_kernel_info {
  const char *name;
  flashfuse_variant variant;
  int32_t block_m;
  int32_t block_n;
  int32_t threads;
  int32_t smem; /* dynamic shared memory, bytes */
  int32_t num_params;
} flashfuse_kernel_info;

typedef struct flashfuse_manifest flashfuse_manifest;
typedef struct flashfuse_context flashfuse_context;
typedef struct flashfuse_artifact flashfuse_artifact;
typedef struct flashfuse_kernel flashfuse_kernel;

/* ---- errors --------------------------------------------------------- */

/* Message of the last failed call on this thread ("" if none). The pointer
 * is valid until the next runtime call on the same thread. */
FLASHFUSE_API const char *flashfuse_last_error(void);
/* Constant name of a status, e.g. "FLASHFUSE_ERROR_NO_DRIVER". */
FLASHFUSE_API const char *flashfuse_status_name(flashfuse_status status);

/* ---- manifests (no GPU needed) -------------------------------------- */

/* Parses DIR/manifest.txt. Close with flashfuse_manifest_close. */
FLASHFUSE_API flashfuse_status
flashfuse_manifest_open(const char *artifact_dir, flashfuse_manifest **out);
/* Parses manifest text held in memory; `base_dir` resolves the ptx/cubin
 * file names (may be NULL). */
FLASHFUSE_API flashfuse_status flashfuse_manifest_parse(
    const char *text, const char *base_dir, flashfuse_manifest **out);
FLASHFUSE_API void flashfuse_manifest_close(flashfuse_manifest *manifest);
/* SM version the cubin was built for (e.g. 90). */
FLASHFUSE_API flashfuse_status
flashfuse_manifest_arch(const flashfuse_manifest *manifest, int32_t *arch);
FLASHFUSE_API flashfuse_status
flashfuse_manifest_kernel_count(const flashfuse_manifest *manifest,
                                int32_t *count);
FLASHFUSE_API flashfuse_status
flashfuse_manifest_kernel_info(const flashfuse_manifest *manifest,
                               int32_t index, flashfuse_kernel_info *out);
/* Type and name (valid while the manifest lives) of a kernel's param. */
FLASHFUSE_API flashfuse_status flashfuse_manifest_kernel_param(
    const flashfuse_manifest *manifest, int32_t kernel_index,
    int32_t param_index, flashfuse_param_type *type, const char **name);
/* How many params of a kernel the artifact binds (`bound` lines,
 * KERNEL_ABI.md "Block-sparse") and how many launch sizes they hold for
 * (`bound_for`); both 0 for a kernel that binds nothing. */
FLASHFUSE_API flashfuse_status flashfuse_manifest_kernel_bound_count(
    const flashfuse_manifest *manifest, int32_t kernel_index,
    int32_t *num_bound, int32_t *num_bound_for);
/* The name (valid while the manifest lives) and value of a kernel's
 * `bound_for` size number `index`. */
FLASHFUSE_API flashfuse_status flashfuse_manifest_kernel_bound_for(
    const flashfuse_manifest *manifest, int32_t kernel_index, int32_t index,
    const char **name, int64_t *value);
/* 1 where a kernel inlines its op's score_mod / mask_mod (the manifest's
 * `mods 1`): it computes what those regions say, which its variant does
 * not, so flashfuse_manifest_find and the variant entry points never pick
 * it; it is launched by name (flashfuse_kernel_launch). 0 otherwise. */
FLASHFUSE_API flashfuse_status flashfuse_manifest_kernel_mods(
    const flashfuse_manifest *manifest, int32_t kernel_index, int32_t *mods);
/* How many values a kernel's score_mod / mask_mod read from above their op
 * (the manifest's `captures`, KERNEL_ABI.md "Values captured by score_mod
 * and mask_mod"); the caller passes each as the params capture<i>. */
FLASHFUSE_API flashfuse_status flashfuse_manifest_kernel_capture_count(
    const flashfuse_manifest *manifest, int32_t kernel_index, int32_t *count);
/* Captured value `index`: its element type as the IR names it ("f32",
 * "i64", "index", ...; valid while the manifest lives) and its rank, -1
 * for a scalar. */
FLASHFUSE_API flashfuse_status flashfuse_manifest_kernel_capture(
    const flashfuse_manifest *manifest, int32_t kernel_index, int32_t index,
    const char **element_type, int32_t *rank);
/* Index of the first kernel whose variant equals *variant, or
 * FLASHFUSE_ERROR_NOT_FOUND with the available variants in the message. */
FLASHFUSE_API flashfuse_status
flashfuse_manifest_find(const flashfuse_manifest *manifest,
                        const flashfuse_variant *variant, int32_t *index);

/* ---- contexts ------------------------------------------------------- */

/* Binds to a GPU. If a CUDA context is current on the calling thread and
 * `device` is -1 or that context's device, it is used (PyTorch's primary
 * context, for example) and left alone on destruction; otherwise the primary
 * context of `device` (-1 means 0) is retained, and released on destruction.
 * Fails with FLASHFUSE_ERROR_NO_DRIVER / _NO_DEVICE on machines without. */
FLASHFUSE_API flashfuse_status flashfuse_context_create(int32_t device,
                                                        flashfuse_context **out);
/* Unloads every module the context loaded. */
FLASHFUSE_API void flashfuse_context_destroy(flashfuse_context *context);
FLASHFUSE_API flashfuse_status flashfuse_context_device(
    const flashfuse_context *context, int32_t *device, int32_t *cc_major,
    int32_t *cc_minor, int32_t *sm_count);

/* ---- artifacts and kernels ------------------------------------------ */

/* Loads (once per path; later calls return the cached artifact) an artifact
 * directory: the cubin when its arch equals the device's compute capability,
 * else the PTX, JIT-compiled by the driver (its log is in the error). The
 * list files of its bound params are checked (size, CRC-32) and copied to
 * the GPU, and freed with the context. */
FLASHFUSE_API flashfuse_status flashfuse_artifact_load(
    flashfuse_context *context, const char *artifact_dir,
    flashfuse_artifact **out);
FLASHFUSE_API const flashfuse_manifest *
flashfuse_artifact_manifest(const flashfuse_artifact *artifact);
/* 1 if the module came from the cubin, 0 if from JIT-compiled PTX. */
FLASHFUSE_API int32_t
flashfuse_artifact_uses_cubin(const flashfuse_artifact *artifact);
FLASHFUSE_API flashfuse_status
flashfuse_artifact_kernel(flashfuse_artifact *artifact, const char *name,
                          flashfuse_kernel **out);
FLASHFUSE_API flashfuse_status
flashfuse_artifact_find_kernel(flashfuse_artifact *artifact,
                               const flashfuse_variant *variant,
                               flashfuse_kernel **out);
FLASHFUSE_API flashfuse_status
flashfuse_kernel_get_info(const flashfuse_kernel *kernel,
                          flashfuse_kernel_info *out);

/* ---- launching ------------------------------------------------------ */

/* Arguments of a forward attention. Pointers are device pointers; strides
 * are in elements, indexed [b, h, s, d] for q/k/v/o and [b, h, q, k] for
 * bias and mask (0 = broadcast). Initialise with
 * flashfuse_forward_args_init, which sets the optional fields to "off". */
typedef struct flashfuse_forward_args {
  flashfuse_dtype dtype; /* of q, k, v, and of o unless out_f32 */
  const void *q;         /* [B, Hq, Sq, D] */
  const void *k;         /* [B, Hkv, Sk, D] */
  const void *v;         /* [B, Hkv, Sk, Dv] */
  void *o;               /* [B, Hq, Sq, Dv]; f32 with out_f32 */
  float *lse;            /* [B, Hq, Sq] f32, contiguous */
  const float *bias;     /* bias kernels only */
  const int8_t *mask;    /* mask kernels only; nonzero = keep */
  int64_t batch, heads_q, heads_kv, seq_q, seq_k, head_dim, head_dim_v;
  int64_t q_stride[4], k_stride[4], v_stride[4], o_stride[4];
  int64_t bias_stride[4], mask_stride[4];
  /* Logical extent of bias/mask per dim ([B or 1, Hq or 1, Sq, Sk]) is
   * implied by the sizes above; strides say how they are broadcast. */
  float scale;                      /* softmax scale */
  int32_t window_left, window_right; /* -1 = unbounded */
  float softcap;                    /* 0 = off */
  float dropout_p;                  /* 0 = off */
  uint64_t seed;
  /* 1: `o` is f32 (a kernel whose variant has out_f32), not `dtype`. Last,
   * so that callers written before it that zero or init the struct keep
   * 16-bit O. */
  int32_t out_f32;
  /* FP8 forwards (dtype FLASHFUSE_DTYPE_E4M3; KERNEL_ABI.md "FP8 forwards").
   * Appended after out_f32, so that zeroed or init'ed callers of 16-bit
   * kernels are unchanged. For an e4m3 kernel, `v` is Vt, e4m3
   * [B, Hkv, Dv, Sk_pad] (the keys contiguous, Sk_pad = Sk rounded up to
   * 32, the keys of each group of 32 in the order of fp8_vt_layout.h and
   * finite codes past Sk), with v_stride its four strides (the last 1; the
   * others multiples of 16 bytes, v_stride[2] >= Sk_pad), and q, k are
   * e4m3 with strides that are multiples of 16 elements (= bytes).
   * out_dtype: O's dtype, F16 or BF16, equal to the kernel's.
   * *_descale: f32 device buffers of dequantisation factors, read at
   * [b * stride[0] + h * stride[1]] (h the query head for q_descale, the kv
   * head for k/v): strides {0, 0} for one factor per tensor, {H, 1} for a
   * contiguous [B, H]. Required (non-null) for e4m3 kernels, refused for
   * the others. */
  flashfuse_dtype out_dtype;
  const float *q_descale, *k_descale, *v_descale;
  int64_t q_descale_stride[2], k_descale_stride[2], v_descale_stride[2];
  /* Per-block descales (a kernel whose variant has descale_block_q/k): the
   * stride between blocks, factor (b, h, n) of rows [n * block, (n + 1) *
   * block) at [b * stride[0] + h * stride[1] + n * stride_block]; {H * N,
   * N} and 1 for a contiguous [B, H, N] with N = ceil(seq / block). 0 for
   * a descale that is per tensor or per head (any kernel). Appended last,
   * so that callers that zero or init the struct keep per-head descales. */
  int64_t q_descale_stride_block, k_descale_stride_block,
      v_descale_stride_block;
} flashfuse_forward_args;

FLASHFUSE_API void flashfuse_forward_args_init(flashfuse_forward_args *args);

/* Validates `args` against the kernel's variant and the device, then
 * launches it on `stream` (a CUstream / cudaStream_t of the context's device;
 * NULL = legacy default stream). Asynchronous: errors inside the kernel
 * surface at the next synchronisation. */
FLASHFUSE_API flashfuse_status
flashfuse_attention_forward(flashfuse_kernel *kernel,
                            const flashfuse_forward_args *args, void *stream);

/* Every check of flashfuse_attention_forward that needs no GPU (shapes,
 * variant, pointers, strides, options, the manifest's params list), against
 * kernel `kernel_index` of a manifest. */
FLASHFUSE_API flashfuse_status flashfuse_attention_forward_check(
    const flashfuse_manifest *manifest, int32_t kernel_index,
    const flashfuse_forward_args *args);

/* A packed batch of variable-length sequences (flash-attn's varlen
 * layout; KERNEL_ABI.md "Varlen"), for kernels whose variant has varlen 1.
 * The flashfuse_forward_args then describe the packed tensors: batch = 1,
 * seq_q = total_q, seq_k = total_k, q [1, Hq, total_q, D] (flash-attn's
 * [total_q, Hq, D] is strides {any, D, Hq * D, 1}), k, v [1, Hkv,
 * total_k, D/Dv], o like q, lse [1, Hq, total_q]. Sequence i owns query
 * rows [cu_seqlens_q[i], cu_seqlens_q[i + 1]) and key rows
 * [cu_seqlens_k[i], cu_seqlens_k[i + 1]); masks apply within it. The
 * offsets stay on the GPU and are not read by the host: offsets outside
 * [0, total] are clamped by the kernel (a wrong answer, never an
 * out-of-bounds access), and query rows of a sequence longer than
 * max_seqlen_q, or past cu_seqlens_q[num_seqs], are not written.
 * Initialise with flashfuse_varlen_args_init (all zero). */
typedef struct flashfuse_varlen_args {
  const int32_t *cu_seqlens_q; /* [num_seqs + 1] i32, device, 16-byte aligned */
  const int32_t *cu_seqlens_k; /* [num_seqs + 1] i32, device, 16-byte aligned */
  int64_t num_seqs;            /* >= 1 */
  int64_t max_seqlen_q; /* in [1, total_q], >= every query length: grid.x */
  int64_t max_seqlen_k; /* in [0, total_k], >= every key length (checked
                           against seq_k only; the kernel does not need it) */
} flashfuse_varlen_args;

FLASHFUSE_API void flashfuse_varlen_args_init(flashfuse_varlen_args *args);

/* flashfuse_attention_forward for a varlen kernel: validates `args` and
 * `varlen` against the kernel and launches it on `stream` with grid
 * (ceil(max_seqlen_q / block_m), heads_q, num_seqs). A varlen kernel given
 * to flashfuse_attention_forward, or a dense one given here, is
 * FLASHFUSE_ERROR_INVALID_ARGUMENT. */
FLASHFUSE_API flashfuse_status flashfuse_attention_forward_varlen(
    flashfuse_kernel *kernel, const flashfuse_forward_args *args,
    const flashfuse_varlen_args *varlen, void *stream);

/* Every check of flashfuse_attention_forward_varlen that needs no GPU. */
FLASHFUSE_API flashfuse_status flashfuse_attention_forward_varlen_check(
    const flashfuse_manifest *manifest, int32_t kernel_index,
    const flashfuse_forward_args *args, const flashfuse_varlen_args *varlen);

/* How a persistent (`grid persistent`) varlen forward kernel is launched
 * over a packed batch: 1 where it walks the batch's tiles statically, one
 * block per SM, 0 where it runs one block per tile. It walks where the
 * sequences fill, on average, at least 95% of the longest one's rows in
 * queries and in keys (88% under a causal mask) and the longest has at most
 * 8192 keys (docs/KERNEL_ABI.md "grid persistent"). total_q and total_k are
 * the packed rows, causal a flashfuse_causal value. The rule
 * flashfuse_attention_forward_varlen launches by, for callers that choose
 * between kernels by the form the persistent one will take. */
FLASHFUSE_API int32_t flashfuse_packed_batch_walks(int64_t total_q,
                                                   int64_t total_k,
                                                   int64_t num_seqs,
                                                   int64_t max_seqlen_q,
                                                   int64_t max_seqlen_k,
                                                   int32_t causal);

/* ---- backward of a packed batch (KERNEL_ABI.md "Backward", "Varlen") -- */

/* The kernels of one backward launch sequence, all from one artifact (they
 * share scratch whose meaning depends on how it was compiled): the dense
 * backward_preprocess and backward_postprocess of the dtype and head dims,
 * the varlen backward, and the varlen backward_dq of a deterministic
 * artifact (NULL with an atomic one, whose backward adds dQ into
 * dq_accum). */
typedef struct flashfuse_backward_kernels {
  flashfuse_kernel *preprocess;
  flashfuse_kernel *backward;
  flashfuse_kernel *backward_dq; /* deterministic artifacts only, else NULL */
  flashfuse_kernel *postprocess;
} flashfuse_backward_kernels;

/* The tensors of a backward (device pointers; strides in elements, indexed
 * [b, h, s, d] with the last dim contiguous and 16-byte rows, as for the
 * forward). For a packed batch they describe the packed tensors, as
 * flashfuse_varlen_args says: batch 1, seq_q = total_q, seq_k = total_k.
 * The scratch is the caller's: delta f32 [B, Hq, Sq], dq_accum f32
 * [B, Hq, Sq, D] (atomic artifacts; zeroed by the preprocess), dk / dv in
 * the dtype [B, Hq, Sk, D] / [B, Hq, Sk, Dv] (one slice per query head,
 * summed over each GQA group by the postprocess), all contiguous and
 * 16-byte aligned. Initialise with flashfuse_backward_args_init. */
typedef struct flashfuse_backward_args {
  flashfuse_dtype dtype;
  const void *q, *k, *v;   /* the forward's inputs */
  const void *o;           /* the forward's O [B, Hq, Sq, Dv] */
  const void *dout;        /* dO, O's shape */
  const float *lse;        /* the forward's LSE [B, Hq, Sq], contiguous */
  void *grad_q, *grad_k, *grad_v; /* results, the shapes of q, k, v */
  float *delta;
  float *dq_accum;         /* NULL with a backward_dq kernel */
  void *dk, *dv;
  int64_t batch, heads_q, heads_kv, seq_q, seq_k, head_dim, head_dim_v;
  int64_t q_stride[4], k_stride[4], v_stride[4], o_stride[4], do_stride[4];
  int64_t grad_q_stride[4], grad_k_stride[4], grad_v_stride[4];
  float scale;
  int32_t window_left, window_right; /* -1 = unbounded */
  float softcap;                     /* 0 = off */
  /* The forward's dropout (a dropout artifact's kernels only): the same p
   * and seed, from which the backward draws the forward's mask again.
   * Appended last, so that callers that zero or init the struct keep it
   * off. */
  float dropout_p; /* 0 = off */
  uint64_t seed;
} flashfuse_backward_args;

FLASHFUSE_API void flashfuse_backward_args_init(flashfuse_backward_args *args);

/* The gradients of a packed batch's attention: validates `kernels`, `args`
 * and `varlen` (as flashfuse_attention_forward_varlen does; max_seqlen_k
 * must be >= 1 too: a batch without keys has zero gradients and nothing
 * to launch) and launches, in order on `stream`, the preprocess (grid
 * ceil(seq_q / block_m), Hq, 1), the backward (ceil(max_seqlen_k /
 * block_n), Hq, num_seqs), the backward_dq if given (ceil(max_seqlen_q /
 * block_m), Hq, num_seqs) and the postprocess (ceil(max(seq_q, seq_k) /
 * block_m), Hq, 1). Gradient rows of key rows past cu_seqlens_k[num_seqs]
 * (or of a sequence longer than its max_seqlen) are not defined, as the
 * forward leaves such rows of O; query rows past cu_seqlens_q[num_seqs]
 * get dQ = 0 from an atomic artifact. */
FLASHFUSE_API flashfuse_status flashfuse_attention_backward_varlen(
    const flashfuse_backward_kernels *kernels,
    const flashfuse_backward_args *args, const flashfuse_varlen_args *varlen,
    void *stream);

/* Every check of flashfuse_attention_backward_varlen that needs no GPU,
 * against kernels kernel_index[0..3] (preprocess, backward, backward_dq or
 * -1, postprocess) of a manifest. */
FLASHFUSE_API flashfuse_status flashfuse_attention_backward_varlen_check(
    const flashfuse_manifest *manifest, const int32_t kernel_index[4],
    const flashfuse_backward_args *args, const flashfuse_varlen_args *varlen);

/* A named argument for flashfuse_kernel_launch. For MEMREF, `ptr` and
 * `numel` (elements the kernel may touch from ptr) are used; for I32/I64
 * `i`; for F32 `f`. */
typedef struct flashfuse_arg {
  const char *name;
  flashfuse_param_type type;
  const void *ptr;
  int64_t numel;
  int64_t i;
  double f;
} flashfuse_arg;

/* Launches any kernel of the artifact (every kind) by binding each entry of
 * the manifest's `params` list to the argument of the same name. The grid
 * follows KERNEL_ABI.md from the i32 arguments batch, heads_q and seq_q
 * (max_seqlen_q, heads_q and num_seqs for a varlen forward and
 * backward_dq, max_seqlen_k, heads_q and num_seqs for a varlen backward;
 * seq_k for `backward`, max(seq_q, seq_k) for `backward_postprocess`;
 * heads_kv and num_splits too for `decode`; batch, heads_kv and seq_new for
 * `kv_append`; one block for `decode_check`; a `grid persistent` kernel's
 * walk by seq_k, or for a varlen forward by max_seqlen_k where given (with
 * allow_unused: the kernel takes no such param) and else max_seqlen_q,
 * KERNEL_ABI.md "Grids"). Checks
 * that every param is given with the right type, pointers are non-null and
 * 16-byte aligned, and values fit their types; the shape checks of
 * flashfuse_attention_forward are the caller's job here. An argument the
 * kernel does not take is an error (a misspelt name) unless allow_unused is
 * nonzero, which lets a caller pass every name a family of variants may
 * take. Params the manifest binds (`bound` lines: block-sparse lists
 * flashfuse-compile derived at compile time, KERNEL_ABI.md "Block-sparse")
 * are filled from the artifact when the caller passes none of them, after
 * checking the launch's sizes against their `bound_for` (a mismatch is
 * FLASHFUSE_ERROR_INVALID_ARGUMENT); a caller passing all of them launches
 * with its own, and passing some but not all is an error. */
FLASHFUSE_API flashfuse_status
flashfuse_kernel_launch(flashfuse_kernel *kernel, const flashfuse_arg *args,
                        int32_t num_args, int32_t allow_unused, void *stream);

/* ---- attention over a KV cache (decode; docs/KVCACHE.md) ------------ */

/* Arguments of attention over a KV cache. Pointers are device pointers;
 * strides are in elements, indexed [b, h, s, d] for q, o, k_new and v_new,
 * and for the caches [b, h, s, d] when contiguous and [page, h, row of the
 * page, d] when paged (KERNEL_ABI.md "Decode"). Initialise with
 * flashfuse_decode_args_init, which sets the optional fields to "off" (no
 * k_new/v_new) and num_splits to 0 (automatic).
 *
 * A decode step with new rows is two calls on one stream:
 * flashfuse_kvcache_append writes k_new/v_new (seq_new rows of every
 * sequence b) into the caches at rows [cache_seqlens[b], cache_seqlens[b] +
 * seq_new), then flashfuse_attention_decode lets sequence b attend to its
 * first L_b = cache_seqlens[b] + seq_new keys (it does not append; it
 * ignores k_new/v_new). Lengths and page indices live on the GPU and are
 * not read by the host: out-of-range values give a wrong answer, never an
 * out-of-bounds access (the decode clamps them, the append skips rows that
 * would land outside the cache). flashfuse_decode_check_on_device checks
 * them on the GPU (a debug option; it synchronises the stream). */
typedef struct flashfuse_decode_args {
  flashfuse_dtype dtype;        /* of q, o, k_new/v_new and a 16-bit cache */
  const void *q;                /* [B, Hq, Sq, D] */
  const void *k_cache;          /* [B, Hkv, C, D] or [num_pages, P, Hkv, D] */
  const void *v_cache;          /* the same with Dv */
  void *o;                      /* [B, Hq, Sq, Dv] */
  float *lse;                   /* [B, Hq, Sq] f32, contiguous */
  const int32_t *cache_seqlens; /* [B]: rows before this step's new ones */
  const int32_t *block_table;   /* paged only: i32 [B, max_pages], row b at
                                   block_table + b * block_table_stride */
  int64_t batch, heads_q, heads_kv, seq_q, head_dim, head_dim_v;
  int64_t seq_new;    /* rows appended this step (already in the cache) */
  int64_t cache_len;  /* contiguous: the capacity C (rows per sequence) */
  int64_t page_size;  /* 0: contiguous; else rows per page (the kernel's) */
  int64_t num_pages;  /* paged: pages in the cache; capacity is */
  int64_t max_pages;  /*   max_pages * page_size                 */
  int64_t block_table_stride; /* paged: elements between rows of the table */
  int64_t q_stride[4], k_stride[4], v_stride[4], o_stride[4];
  float scale;                       /* softmax scale */
  int32_t window_left, window_right; /* -1 = unbounded */
  float softcap;                     /* 0 = off */
  /* 0: chosen by flashfuse_decode_num_splits (decode_splits.h) from the
   * grid, the capacity and the GPU; else forced (>= 1). */
  int32_t num_splits;
  /* flashfuse_kvcache_append only: the new rows, K_new [B, Hkv, seq_new, D]
   * and V_new [B, Hkv, seq_new, Dv], any strides with a contiguous last
   * dimension and 16-byte rows (like q). Last, so that code written before
   * them that zero-initialises the struct still describes the same call. */
  const void *k_new;
  const void *v_new;
  int64_t k_new_stride[4], v_new_stride[4];
  /* An FP8 cache (docs/KVCACHE.md "FP8 cache"; decode and kv_append
   * kernels of kv_dtype e4m3, which takes k_new/v_new in `dtype`):
   * kv_dtype FLASHFUSE_DTYPE_E4M3, k_cache/v_cache hold one
   * byte an element (strides count bytes, multiples of 16; 16-byte aligned
   * addresses), and k_descale/v_descale are f32 device buffers, element
   * (b, hkv) at b * stride[0] + hkv * stride[1] ((Hkv, 1) for [B, Hkv],
   * (0, 0) for one factor per tensor). 0 and null (the init's values): the
   * caches have `dtype`, and the descales must be null. Last, after k_new. */
  flashfuse_dtype kv_dtype;
  const float *k_descale;
  const float *v_descale;
  int64_t k_descale_stride[2], v_descale_stride[2];
  /* A left-padded cache (a decode kernel of variant leftpad 1; flash-attn's
   * cache_leftpad): i32 [B] device buffer, the first row of each
   * sequence's cache; sequence b sees its keys [cache_leftpad[b], L_b).
   * Any value is valid (a negative one hides nothing). NULL (the init's
   * value) for every other kernel. Last, after the descales. */
  const int32_t *cache_leftpad;
  /* ALiBi (a decode kernel of variant alibi 1 or 2; flash-attn's
   * alibi_slopes): f32 device buffer, contiguous [Hq] (alibi 1) or
   * [B, Hq] (alibi 2); query row i of head h in sequence b gets
   * -slope * |i + L_b - Sq - j| on key j's score. NULL (the init's value)
   * for every other kernel. Last, after cache_leftpad. */
  const float *alibi_slopes;
  /* A pool of sequences (kernels of variant batch_idx 1; flash-attn's
   * cache_batch_idx): the contiguous caches are [cache_batch, Hkv, C, D]
   * (k_cache/v_cache's dim 0 is cache_batch, not batch) and sequence b
   * reads and appends row cache_batch_idx[b], an i32 [B] device buffer;
   * everything else of sequence b (its length, first row, slopes,
   * descales) is still indexed by b. Indices outside [0, cache_batch), and
   * one row named twice where new rows are appended, are outside the
   * contract: the decode clamps an index, the append skips it
   * (flashfuse_decode_check_on_device reports both). NULL and 0 (the
   * init's values) for every other kernel. Last, after alibi_slopes. */
  const int32_t *cache_batch_idx;
  int64_t cache_batch;
} flashfuse_decode_args;

FLASHFUSE_API void flashfuse_decode_args_init(flashfuse_decode_args *args);

/* The split count a launch of `decode` with `args` uses on the kernel's GPU
 * and the workspace it needs: o_partial (f32 [splits, B, Hq, Sq, Dv]) then,
 * at the next multiple of 256 bytes, lse_partial (f32 [splits, B, Hq, Sq])
 * and, for a decode kernel that merges its splits itself (its params name
 * split_arrivals or split_counters, docs/KERNEL_ABI.md "Decode"), at the
 * next multiple of 256 bytes one int32 counter per (batch, kv head,
 * m-block). The launch clears those before a split_counters kernel; a
 * split_arrivals kernel leaves its counters at 0, so the runtime keeps its
 * own per stream and uses the workspace's (cleared) only in a CUDA graph
 * capture that finds none of its own left. 0 bytes when the split count is
 * 1, and when the splits merge inside thread-block clusters (a decode
 * kernel whose manifest has `cluster_merge N`, N >= the split count, at
 * most 8, on a driver with cuLaunchKernelEx: docs/KERNEL_ABI.md "Decode",
 * merge_splits 2). Validates `args` as
 * flashfuse_attention_decode does, except the workspace. `combine` may be
 * NULL: then the automatic choice is one split, unless the decode kernel
 * merges its splits itself. Either output may be NULL. */
FLASHFUSE_API flashfuse_status flashfuse_decode_workspace_bytes(
    const flashfuse_kernel *decode, const flashfuse_kernel *combine,
    const flashfuse_decode_args *args, int32_t *num_splits, size_t *bytes);

/* Validates `args` against the kernels (kind decode, and kind
 * decode_combine of the same dtype and Dv, from the same artifact: they
 * share the partial buffers' layout) and the device, then launches the
 * decode kernel and, with more than one split, the combine on `stream`
 * (a decode kernel that merges its splits itself needs no combine: the
 * launch finds its counters, see flashfuse_decode_workspace_bytes, then
 * runs the decode, or launches it as thread-block clusters of num_splits
 * blocks that merge in the cluster).
 * The workspace (16-byte aligned, at least flashfuse_decode_workspace_bytes)
 * may be NULL when that is 0. Asynchronous, like
 * flashfuse_attention_forward: the workspace must stay allocated until the
 * launches finish (stream-ordered allocators need nothing more). */
FLASHFUSE_API flashfuse_status flashfuse_attention_decode(
    flashfuse_kernel *decode, flashfuse_kernel *combine,
    const flashfuse_decode_args *args, void *workspace,
    size_t workspace_bytes, void *stream);

/* A launch over a KV cache prepared once for every step of one signature:
 * all of flashfuse_decode_args but its addresses (sizes, strides, dtypes,
 * scalars and num_splits). A step at a small batch is host-bound (its
 * kernels take some 8 us), so a decoding loop creates a plan per signature
 * (one for the decode, flashfuse_decode_plan_create, and one for the
 * append of new rows, flashfuse_kvcache_append_plan_create) and launches
 * them with each step's addresses: the checks, the split count and the
 * binding of the kernels' parameters are done at creation; a launch checks
 * the addresses, finds the split counters and launches. */
typedef struct flashfuse_decode_plan flashfuse_decode_plan;

/* The addresses of one step of a plan (device pointers, as in
 * flashfuse_decode_args). Those the plan does not read must be NULL: a
 * decode reads q, the caches, o, lse, the lengths, block_table (paged), the
 * descales (FP8 cache) and the workspace (splits); a kv_append the caches,
 * the lengths, block_table (paged), k_new/v_new (seq_new > 0) and the
 * descales (FP8 cache). */
typedef struct flashfuse_decode_addresses {
  const void *q;
  const void *k_cache;
  const void *v_cache;
  void *o;
  float *lse;
  const int32_t *cache_seqlens;
  const int32_t *block_table;
  const void *k_new;
  const void *v_new;
  const float *k_descale;
  const float *v_descale;
  void *workspace;
  size_t workspace_bytes;
  /* A left-padded cache's first rows (a decode of variant leftpad 1);
   * NULL otherwise. Last, after the workspace. */
  const int32_t *cache_leftpad;
  /* ALiBi's slopes (a decode of variant alibi 1 or 2); NULL otherwise. */
  const float *alibi_slopes;
  /* A pool's row indices (a decode or kv_append of variant batch_idx 1);
   * NULL otherwise. */
  const int32_t *cache_batch_idx;
} flashfuse_decode_addresses;

/* Validates `args` against the kernels as flashfuse_attention_decode does
 * (its addresses are not read), chooses the split count and binds the
 * kernels' parameters. The kernels' artifact must outlive the plan; free
 * it with flashfuse_decode_plan_destroy. */
FLASHFUSE_API flashfuse_status flashfuse_decode_plan_create(
    flashfuse_kernel *decode, flashfuse_kernel *combine,
    const flashfuse_decode_args *args, flashfuse_decode_plan **plan);

/* The same for flashfuse_kvcache_append (a kv_append kernel; seq_new = 0
 * gives a plan that launches nothing). */
FLASHFUSE_API flashfuse_status flashfuse_kvcache_append_plan_create(
    flashfuse_kernel *append, const flashfuse_decode_args *args,
    flashfuse_decode_plan **plan);

/* The plan's split count and workspace bytes (as
 * flashfuse_decode_workspace_bytes; 1 and 0 for an append); either output
 * may be NULL. */
FLASHFUSE_API flashfuse_status flashfuse_decode_plan_info(
    const flashfuse_decode_plan *plan, int32_t *num_splits,
    size_t *workspace_bytes);

/* One step: checks the addresses (those the plan reads non-null and
 * 16-byte aligned, the others NULL; the workspace at least the plan's
 * bytes) and launches as flashfuse_attention_decode or
 * flashfuse_kvcache_append does, on `stream`. A plan may be launched from
 * several threads at once. `addresses` is read byte-wise: it need not be
 * aligned (the Python package passes the bytes of one struct.pack). */
FLASHFUSE_API flashfuse_status flashfuse_decode_plan_launch(
    const flashfuse_decode_plan *plan,
    const flashfuse_decode_addresses *addresses, void *stream);

/* Frees a plan (NULL is ignored). */
FLASHFUSE_API void flashfuse_decode_plan_destroy(flashfuse_decode_plan *plan);

/* Every check of flashfuse_attention_decode that needs no GPU, against
 * kernels `decode_index` and `combine_index` (-1: none) of a manifest, on a
 * GPU described by sm_count and blocks_per_sm (the decode kernel's
 * occupancy); reports the split count and workspace the launch would use
 * (either may be NULL). Without a driver to ask whether clusters can be
 * launched, it reports the workspace of a merge without clusters, which
 * also serves a launch that merges in clusters (that needs none). */
FLASHFUSE_API flashfuse_status flashfuse_attention_decode_check(
    const flashfuse_manifest *manifest, int32_t decode_index,
    int32_t combine_index, const flashfuse_decode_args *args,
    int32_t sm_count, int32_t blocks_per_sm, const void *workspace,
    size_t workspace_bytes, int32_t *num_splits, size_t *required_bytes);

/* Writes this step's new rows into the caches with a kernel of kind
 * kv_append (same dtype, head dims and page size as the decode kernel; from
 * the decode's artifact): row t of args->k_new/v_new [b, h] goes to cache
 * row cache_seqlens[b] + t of sequence b, through the page table when paged.
 * A row whose destination is outside the cache (negative length, beyond the
 * capacity, a page index outside [0, num_pages)) is skipped, never clamped
 * onto another sequence's rows. Validates the arguments as
 * flashfuse_attention_decode does (those of the caches, the lengths, the
 * table and k_new/v_new; q, o, lse and the options are not used). For an
 * FP8 cache (kv_dtype FLASHFUSE_DTYPE_E4M3, a kv_append of kv_dtype e4m3)
 * k_new/v_new are in `dtype` and are stored as e4m3(clamp(x * (1 /
 * descale[b, h]), -448, 448)), rounded to nearest even, with the decode's
 * descale arguments and checks. New rows go to cache_seqlens[b] whatever
 * cache_leftpad says (which a kv_append does not read). seq_new = 0
 * launches nothing.
 * Asynchronous; launch the decode after it on the same stream. */
FLASHFUSE_API flashfuse_status flashfuse_kvcache_append(
    flashfuse_kernel *append, const flashfuse_decode_args *args,
    void *stream);

/* Every check of flashfuse_kvcache_append that needs no GPU, against kernel
 * `append_index` of a manifest. */
FLASHFUSE_API flashfuse_status flashfuse_kvcache_append_check(
    const flashfuse_manifest *manifest, int32_t append_index,
    const flashfuse_decode_args *args);

/* The debug check of the lengths and the page table, on the GPU: launches a
 * kernel of kind decode_check (same page size as the decode kernel) on
 * `stream`, writing its 4-element status (KERNEL_ABI.md "Decode") to
 * `status`, a 16-byte-aligned device buffer of at least 4 int32, reads that
 * back (synchronising the stream) and returns FLASHFUSE_ERROR_INVALID_ARGUMENT
 * for the lowest offending sequence b, with a message such as
 * "cache_seqlens[3] = 5000 plus 1 new rows exceeds the cache capacity 4096"
 * or "block_table[1][7] = 9000 is outside [0, 1024)". Checks: 0 <=
 * cache_seqlens[b], cache_seqlens[b] + seq_new <= capacity and, when paged,
 * every page the sequence uses (pages [0, ceil(L_b / page_size))) in
 * [0, num_pages); over a pool (a kernel of variant batch_idx 1), every
 * cache_batch_idx[b] in [0, cache_batch) ("cache_batch_idx[2] = 9 is
 * outside the pool [0, 8)") and, when seq_new > 0, named by no other
 * sequence. Uses the lengths, the table, the pool's
 * indices and the cache sizes of args. */
FLASHFUSE_API flashfuse_status flashfuse_decode_check_on_device(
    flashfuse_kernel *check, const flashfuse_decode_args *args,
    int32_t *status, void *stream);

/* Every check of flashfuse_decode_check_on_device that needs no GPU,
 * against kernel `check_index` of a manifest. */
FLASHFUSE_API flashfuse_status flashfuse_decode_check_on_device_check(
    const flashfuse_manifest *manifest, int32_t check_index,
    const flashfuse_decode_args *args, const int32_t *status);

/* The verdict of a decode_check status read back to the host (4 int32):
 * FLASHFUSE_SUCCESS, or FLASHFUSE_ERROR_INVALID_ARGUMENT with the message
 * of flashfuse_decode_check_on_device (args gives the capacity and the
 * number of pages it names); FLASHFUSE_ERROR_INTERNAL for a status no
 * kernel writes. For callers that launch the check themselves. */
FLASHFUSE_API flashfuse_status flashfuse_decode_check_status(
    const int32_t *status, const flashfuse_decode_args *args);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FLASHFUSE_RUNTIME_H */
