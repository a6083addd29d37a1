// Forward attention: checks a flashfuse_forward_args against the kernel's
// compiled variant and turns it into the named arguments of KERNEL_ABI.md.
#include "launch.h"
#include "flashfuse/fp8_vt_layout.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace flashfuse {

namespace {

class ForwardChecker {
public:
  // `varlen`: the packed batch of a varlen kernel (null for the others).
  ForwardChecker(const KernelSpec &spec, const flashfuse_forward_args &a,
                 const flashfuse_varlen_args *varlen)
      : spec_(spec), a_(a), varlen_(varlen) {}

  flashfuse_status bad(const std::string &what) {
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                concat("attention forward with kernel '", spec_.name,
                       "': ", what));
  }

  flashfuse_status check() {
    const flashfuse_variant &v = spec_.variant;
    if (v.kind != FLASHFUSE_KIND_FORWARD)
      return bad("not a forward kernel");
    if (v.varlen && !varlen_)
      return bad("it is a kernel of packed variable-length sequences "
                 "(varlen); launch it with flashfuse_attention_forward_varlen");
    if (!v.varlen && varlen_)
      return bad("a packed batch (cu_seqlens) was given but the kernel is "
                 "not a varlen kernel");
    // Its lists are parameters the dense arguments do not carry.
    if (v.block_sparse)
      return bad("it walks block-sparse lists; launch it with "
                 "flashfuse_kernel_launch and the lists' named arguments "
                 "(KERNEL_ABI.md \"Block-sparse\")");
    if (a_.dtype != v.dtype)
      return bad(concat("inputs are ", dtypeName(a_.dtype),
                        " but the kernel was compiled for ",
                        dtypeName(v.dtype)));
    // The kernel writes O in one type: 2-byte elements into an f32 buffer
    // (or 4-byte ones into a 16-bit buffer) would be garbage, not an error.
    if ((a_.out_f32 != 0) != (v.out_f32 != 0))
      return bad(concat("'o' is ", a_.out_f32 ? "f32" : dtypeName(a_.dtype),
                        " (out_f32 = ", a_.out_f32,
                        ") but the kernel writes O in ", outDtypeName(v)));
    if (auto s = checkFp8(); s != FLASHFUSE_SUCCESS)
      return s;
    if (std::string why = attentionShapeProblem(a_, v); !why.empty())
      return bad(why);
    if (varlen_)
      if (auto s = checkVarlen(); s != FLASHFUSE_SUCCESS)
        return s;
    if (auto s = checkOptions(); s != FLASHFUSE_SUCCESS)
      return s;
    for (const Operand &op : tensors())
      if (auto s = checkTensor(op); s != FLASHFUSE_SUCCESS)
        return s;
    // Vt's rows span Sk_pad keys (fp8_vt_layout.h): the kernels read every
    // position of the last group, so shorter rows would read the next row.
    const int64_t keysPadded = flashfuse_fp8_vt_keys(a_.seq_k);
    if (fp8() && a_.head_dim_v > 1 && a_.v_stride[2] < keysPadded)
      return bad(concat("'vt' rows are ", a_.v_stride[2],
                        " elements apart but span ", keysPadded,
                        " keys: Sk = ", a_.seq_k, " rounded up to a group of ",
                        FLASHFUSE_FP8_VT_KEY_GROUP,
                        " (KERNEL_ABI.md \"FP8 forwards\")"));
    if (!a_.lse)
      return bad("'lse' is a null pointer");
    for (const Descale &d : descales())
      if (auto s = checkDescale(d); s != FLASHFUSE_SUCCESS)
        return s;
    if (v.bias)
      if (auto s = checkScoreOperand("bias", a_.bias, a_.bias_stride);
          s != FLASHFUSE_SUCCESS)
        return s;
    if (v.mask)
      if (auto s = checkScoreOperand("mask", a_.mask, a_.mask_stride);
          s != FLASHFUSE_SUCCESS)
        return s;
    return FLASHFUSE_SUCCESS;
  }

  bool fp8() const { return spec_.variant.dtype == FLASHFUSE_DTYPE_E4M3; }

  // Q, K, V (Vt, [B, Hkv, Dv, Sk_pad], for an e4m3 kernel: KERNEL_ABI.md
  // "FP8 forwards", fp8_vt_layout.h) and O, named as the kernel's params
  // name them.
  std::vector<Operand> tensors() const {
    const int in = dtypeBytes(a_.dtype);
    return {
        {"q", a_.q, a_.q_stride, {a_.batch, a_.heads_q, a_.seq_q, a_.head_dim},
         in},
        {"k", a_.k, a_.k_stride, {a_.batch, a_.heads_kv, a_.seq_k, a_.head_dim},
         in},
        fp8() ? Operand{"vt", a_.v, a_.v_stride,
                        {a_.batch, a_.heads_kv, a_.head_dim_v,
                         flashfuse_fp8_vt_keys(a_.seq_k)},
                        in}
              : Operand{"v", a_.v, a_.v_stride,
                        {a_.batch, a_.heads_kv, a_.seq_k, a_.head_dim_v}, in},
        {"o", a_.o, a_.o_stride,
         {a_.batch, a_.heads_q, a_.seq_q, a_.head_dim_v}},
    };
  }

  // The dequantisation factors of an FP8 forward: [B, H] read through two
  // strides (0, 0 for one factor per tensor).
  struct Descale {
    const char *name;
    const float *ptr;
    const int64_t *stride;
    int64_t heads; // Hq for q_descale, Hkv for k and v
    int64_t strideBlock;
    int64_t blocks; // ceil(seq / block) of a per-block kernel, else 1
  };
  std::vector<Descale> descales() const {
    const flashfuse_variant &v = spec_.variant;
    auto blocks = [&](int64_t seq, int32_t block) {
      return block > 0 ? (seq + block - 1) / block : int64_t(1);
    };
    return {{"q_descale", a_.q_descale, a_.q_descale_stride, a_.heads_q,
             a_.q_descale_stride_block, blocks(a_.seq_q, v.descale_block_q)},
            {"k_descale", a_.k_descale, a_.k_descale_stride, a_.heads_kv,
             a_.k_descale_stride_block, blocks(a_.seq_k, v.descale_block_k)},
            {"v_descale", a_.v_descale, a_.v_descale_stride, a_.heads_kv,
             a_.v_descale_stride_block, blocks(a_.seq_k, v.descale_block_k)}};
  }

  const flashfuse_varlen_args *varlen() const { return varlen_; }

private:
  // KERNEL_ABI.md "Varlen": the forward args describe the packed tensors
  // (batch 1, seq_q / seq_k the totals).
  flashfuse_status checkVarlen() {
    if (std::string why = varlenProblem(*varlen_, a_.batch, a_.seq_q, a_.seq_k);
        !why.empty())
      return bad(why);
    return FLASHFUSE_SUCCESS;
  }

  // Options the variant was not compiled with must be left "off": silently
  // ignoring a requested window or softcap would compute something else.
  flashfuse_status checkOptions() {
    const flashfuse_variant &v = spec_.variant;
    if (std::string why = windowSoftcapProblem(v, a_.window_left,
                                               a_.window_right, a_.softcap);
        !why.empty())
      return bad(why);
    if (!(a_.dropout_p >= 0.0f && a_.dropout_p < 1.0f))
      return bad(concat("dropout_p = ", a_.dropout_p, " (must be in [0, 1))"));
    if (!v.dropout && a_.dropout_p != 0.0f)
      return bad("dropout was requested but the kernel has none");
    if (!v.bias && a_.bias)
      return bad("a bias was given but the kernel takes none");
    if (!v.mask && a_.mask)
      return bad("a mask was given but the kernel takes none");
    return FLASHFUSE_SUCCESS;
  }

  // e4m3 arguments for a 16-bit kernel, or the reverse, would have the GPU
  // read bytes as the wrong type; O's dtype is the kernel's choice too.
  flashfuse_status checkFp8() {
    const flashfuse_variant &v = spec_.variant;
    if (a_.out_dtype != v.out_dtype)
      return bad(fp8() ? concat("out_dtype is ", dtypeName(a_.out_dtype),
                                " but the kernel writes O in ",
                                dtypeName(v.out_dtype))
                       : concat("out_dtype is ", dtypeName(a_.out_dtype),
                                "; it is for e4m3 kernels only (leave it 0 "
                                "for this ", dtypeName(v.dtype),
                                " kernel, whose O has its dtype)"));
    if (!fp8())
      for (const Descale &d : descales())
        if (d.ptr)
          return bad(concat("'", d.name, "' was given but the kernel is a ",
                            dtypeName(v.dtype), " kernel (descales are for "
                            "e4m3 inputs)"));
    return FLASHFUSE_SUCCESS;
  }

  flashfuse_status checkDescale(const Descale &d) {
    if (!fp8())
      return FLASHFUSE_SUCCESS;
    if (!d.ptr)
      return bad(concat("'", d.name, "' is a null pointer (e4m3 kernels need "
                        "q_descale, k_descale and v_descale)"));
    if (d.stride[0] < 0 || d.stride[1] < 0 || d.strideBlock < 0)
      return bad(concat("'", d.name, "' has a negative stride"));
    // Far beyond any [B, H, N] buffer: the span below must not overflow.
    for (int64_t stride : {d.stride[0], d.stride[1], d.strideBlock})
      if (stride > kMaxI32)
        return bad(concat("'", d.name, "' stride ", stride, " is too large"));
    if (d.strideBlock && !spec_.variant.descale_block_k)
      return bad(concat("'", d.name, "' has a block stride (",
                        d.strideBlock, ", per-block descales) but the kernel "
                        "takes per-tensor or per-head descales; compile it "
                        "with descale_block_size"));
    return FLASHFUSE_SUCCESS;
  }

  flashfuse_status checkTensor(const Operand &op) {
    if (std::string why = operandProblem(op); !why.empty())
      return bad(why);
    return FLASHFUSE_SUCCESS;
  }

  flashfuse_status checkScoreOperand(const char *name, const void *ptr,
                                     const int64_t stride[4]) {
    if (!ptr)
      return bad(concat("the kernel takes a ", name,
                        " but it is a null pointer"));
    for (int d = 0; d < 4; ++d)
      if (stride[d] < 0)
        return bad(concat("'", name, "' has a negative stride"));
    return FLASHFUSE_SUCCESS;
  }

  const KernelSpec &spec_;
  const flashfuse_forward_args &a_;
  const flashfuse_varlen_args *varlen_;
};

// Every name a forward kernel may take (KERNEL_ABI.md, "Parameters").
std::vector<flashfuse_arg> namedArgs(const ForwardChecker &checker,
                                     const flashfuse_forward_args &a) {
  std::vector<flashfuse_arg> out;
  // Vt's third dimension is Dv, not the sequence (KERNEL_ABI.md "FP8
  // forwards").
  static const char *strideNames[5][3] = {
      {"q_stride_b", "q_stride_h", "q_stride_s"},
      {"k_stride_b", "k_stride_h", "k_stride_s"},
      {"v_stride_b", "v_stride_h", "v_stride_s"},
      {"o_stride_b", "o_stride_h", "o_stride_s"},
      {"vt_stride_b", "vt_stride_h", "vt_stride_d"}};
  std::vector<Operand> ops = checker.tensors();
  for (size_t i = 0; i < ops.size(); ++i) {
    out.push_back(buffer(ops[i].name, ops[i].ptr, span(ops[i].size, ops[i].stride)));
    const char *const *names =
        std::string(ops[i].name) == "vt" ? strideNames[4] : strideNames[i];
    for (int d = 0; d < 3; ++d)
      out.push_back(integer(names[d], FLASHFUSE_PARAM_I64, ops[i].stride[d]));
  }
  out.push_back(buffer("lse", a.lse, a.batch * a.heads_q * a.seq_q));
  if (checker.fp8()) {
    static const char *descaleStrideNames[3][3] = {
        {"q_descale_stride_b", "q_descale_stride_h", "q_descale_stride_n"},
        {"k_descale_stride_b", "k_descale_stride_h", "k_descale_stride_n"},
        {"v_descale_stride_b", "v_descale_stride_h", "v_descale_stride_n"}};
    std::vector<ForwardChecker::Descale> ds = checker.descales();
    for (size_t i = 0; i < ds.size(); ++i) {
      const int64_t size[4] = {a.batch, ds[i].heads, ds[i].blocks, 1};
      const int64_t stride[4] = {ds[i].stride[0], ds[i].stride[1],
                                 ds[i].strideBlock, 0};
      out.push_back(buffer(ds[i].name, ds[i].ptr, span(size, stride)));
      const int64_t strides[3] = {ds[i].stride[0], ds[i].stride[1],
                                  ds[i].strideBlock};
      for (int d = 0; d < 3; ++d)
        out.push_back(integer(descaleStrideNames[i][d], FLASHFUSE_PARAM_I64,
                              strides[d]));
    }
  }
  const int64_t scoreSize[4] = {a.batch, a.heads_q, a.seq_q, a.seq_k};
  static const char *biasNames[4] = {"bias_stride_b", "bias_stride_h",
                                     "bias_stride_q", "bias_stride_k"};
  static const char *maskNames[4] = {"mask_stride_b", "mask_stride_h",
                                     "mask_stride_q", "mask_stride_k"};
  if (a.bias)
    out.push_back(buffer("bias", a.bias, span(scoreSize, a.bias_stride)));
  if (a.mask)
    out.push_back(buffer("mask", a.mask, span(scoreSize, a.mask_stride)));
  for (int d = 0; d < 4; ++d) {
    out.push_back(integer(biasNames[d], FLASHFUSE_PARAM_I64, a.bias_stride[d]));
    out.push_back(integer(maskNames[d], FLASHFUSE_PARAM_I64, a.mask_stride[d]));
  }
  out.push_back(integer("batch", FLASHFUSE_PARAM_I32, a.batch));
  out.push_back(integer("heads_q", FLASHFUSE_PARAM_I32, a.heads_q));
  out.push_back(integer("heads_kv", FLASHFUSE_PARAM_I32, a.heads_kv));
  out.push_back(integer("seq_q", FLASHFUSE_PARAM_I32, a.seq_q));
  out.push_back(integer("seq_k", FLASHFUSE_PARAM_I32, a.seq_k));
  out.push_back(real("scale", a.scale));
  out.push_back(integer("window_left", FLASHFUSE_PARAM_I32, a.window_left));
  out.push_back(integer("window_right", FLASHFUSE_PARAM_I32, a.window_right));
  out.push_back(real("softcap", a.softcap));
  out.push_back(real("dropout_p", a.dropout_p));
  // The seed is an opaque 64-bit pattern; i64 carries its bits unchanged.
  out.push_back(integer("seed", FLASHFUSE_PARAM_I64,
                        static_cast<int64_t>(a.seed)));
  if (const flashfuse_varlen_args *p = checker.varlen()) {
    out.push_back(buffer("cu_seqlens_q", p->cu_seqlens_q, p->num_seqs + 1));
    out.push_back(buffer("cu_seqlens_k", p->cu_seqlens_k, p->num_seqs + 1));
    out.push_back(integer("num_seqs", FLASHFUSE_PARAM_I32, p->num_seqs));
    out.push_back(integer("max_seqlen_q", FLASHFUSE_PARAM_I32,
                          p->max_seqlen_q));
    // No kernel parameter: a `grid persistent` kernel's grid reads it.
    out.push_back(integer("max_seqlen_k", FLASHFUSE_PARAM_I32,
                          p->max_seqlen_k));
  }
  return out;
}

// Everything that can be checked without a GPU, leaving the named
// arguments ready for launchNamed.
flashfuse_status prepareForward(const KernelSpec &spec,
                                const flashfuse_forward_args &args,
                                const flashfuse_varlen_args *varlen,
                                std::vector<flashfuse_arg> &named) {
  ForwardChecker checker(spec, args, varlen);
  if (auto s = checker.check(); s != FLASHFUSE_SUCCESS)
    return s;
  named = namedArgs(checker, args);
  // A dry run of the binding catches a manifest whose params list names
  // something this runtime does not provide, before any launch is tried.
  std::vector<ParamSlot> slots;
  return bindParams(spec, named.data(), static_cast<int>(named.size()),
                    /*strict=*/false, slots);
}

} // namespace

} // namespace flashfuse

extern "C" {

void flashfuse_forward_args_init(flashfuse_forward_args *args) {
  flashfuse::initAttentionArgs(args);
}

namespace {
// The dense and the varlen entry points differ only in the varlen args
// (null for a dense launch; prepareForward refuses a kernel of the other
// kind either way).
flashfuse_status launchForward(flashfuse_kernel *kernel,
                               const flashfuse_forward_args *args,
                               const flashfuse_varlen_args *varlen,
                               bool needsVarlen, void *stream) {
  using namespace flashfuse;
  return guarded([&] {
    if (!kernel || !args || (needsVarlen && !varlen))
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  "kernel and arguments must not be NULL");
    std::vector<flashfuse_arg> named;
    if (auto s = prepareForward(*kernel->spec, *args, varlen, named);
        s != FLASHFUSE_SUCCESS)
      return s;
    return launchNamed(*kernel, named.data(), static_cast<int>(named.size()),
                       stream, /*strict=*/false);
  });
}
} // namespace

flashfuse_status flashfuse_attention_forward(flashfuse_kernel *kernel,
                                             const flashfuse_forward_args *args,
                                             void *stream) {
  return launchForward(kernel, args, nullptr, /*needsVarlen=*/false, stream);
}

flashfuse_status
flashfuse_attention_forward_varlen(flashfuse_kernel *kernel,
                                   const flashfuse_forward_args *args,
                                   const flashfuse_varlen_args *varlen,
                                   void *stream) {
  return launchForward(kernel, args, varlen, /*needsVarlen=*/true, stream);
}

namespace {
// The no-GPU checks of the dense and the varlen forward, as launchForward.
flashfuse_status checkForward(const flashfuse_manifest *manifest,
                              int32_t kernel_index,
                              const flashfuse_forward_args *args,
                              const flashfuse_varlen_args *varlen,
                              bool needsVarlen) {
  using namespace flashfuse;
  return guarded([&] {
    if (!manifest || !args || (needsVarlen && !varlen))
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  "manifest and arguments must not be NULL");
    if (kernel_index < 0 ||
        static_cast<size_t>(kernel_index) >= manifest->data.kernels.size())
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  concat("kernel index ", kernel_index, " out of range"));
    std::vector<flashfuse_arg> named;
    return prepareForward(manifest->data.kernels[kernel_index], *args, varlen,
                          named);
  });
}
} // namespace

flashfuse_status
flashfuse_attention_forward_check(const flashfuse_manifest *manifest,
                                  int32_t kernel_index,
                                  const flashfuse_forward_args *args) {
  return checkForward(manifest, kernel_index, args, nullptr,
                      /*needsVarlen=*/false);
}

flashfuse_status flashfuse_attention_forward_varlen_check(
    const flashfuse_manifest *manifest, int32_t kernel_index,
    const flashfuse_forward_args *args, const flashfuse_varlen_args *varlen) {
  return checkForward(manifest, kernel_index, args, varlen,
                      /*needsVarlen=*/true);
}

void flashfuse_varlen_args_init(flashfuse_varlen_args *args) {
  if (args)
    *args = flashfuse_varlen_args{};
}

} // extern "C"
