// The backward of a packed batch: checks a flashfuse_backward_args and its
// kernels against KERNEL_ABI.md ("Backward", "Varlen") and launches the
// sequence through launchNamed, the path every kernel launch takes (it
// binds the named arguments to each kernel's params and derives its grid).
#include "launch.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace flashfuse {

namespace {

// The four steps of the sequence, in launch order.
constexpr int kSteps = 4;
const char *const kStepNames[kSteps] = {"preprocess", "backward",
                                        "backward_dq", "postprocess"};
const flashfuse_kernel_kind kStepKinds[kSteps] = {
    FLASHFUSE_KIND_BACKWARD_PREPROCESS, FLASHFUSE_KIND_BACKWARD,
    FLASHFUSE_KIND_BACKWARD_DQ, FLASHFUSE_KIND_BACKWARD_POSTPROCESS};

bool takesParam(const KernelSpec &spec, const char *name) {
  for (const ParamSpec &p : spec.params)
    if (p.name == name)
      return true;
  return false;
}

class BackwardChecker {
public:
  // specs[i]: step i's kernel (null for an absent backward_dq).
  BackwardChecker(const KernelSpec *const specs[kSteps],
                  const flashfuse_backward_args &a,
                  const flashfuse_varlen_args &varlen)
      : a_(a), varlen_(varlen) {
    for (int i = 0; i < kSteps; ++i)
      specs_[i] = specs[i];
  }

  flashfuse_status bad(const std::string &what) {
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                concat("varlen attention backward",
                       specs_[1] ? concat(" with kernel '", specs_[1]->name, "'")
                                 : std::string(),
                       ": ", what));
  }

  flashfuse_status check() {
    if (auto s = checkKernels(); s != FLASHFUSE_SUCCESS)
      return s;
    const flashfuse_variant &v = specs_[1]->variant;
    if (a_.dtype != v.dtype)
      return bad(concat("inputs are ", dtypeName(a_.dtype),
                        " but the kernels were compiled for ",
                        dtypeName(v.dtype)));
    if (std::string why = attentionShapeProblem(a_, v); !why.empty())
      return bad(why);
    if (std::string why = varlenProblem(varlen_, a_.batch, a_.seq_q, a_.seq_k);
        !why.empty())
      return bad(why);
    // The main kernel's grid walks the longest key sequence.
    if (varlen_.max_seqlen_k == 0)
      return bad("max_seqlen_k = 0: no sequence has a key, so every "
                 "gradient is 0 and there is nothing to launch");
    if (std::string why = windowSoftcapProblem(v, a_.window_left,
                                               a_.window_right, a_.softcap);
        !why.empty())
      return bad(why);
    if (!(a_.dropout_p >= 0.0f && a_.dropout_p < 1.0f))
      return bad(concat("dropout_p = ", a_.dropout_p, " (must be in [0, 1))"));
    if (!v.dropout && a_.dropout_p != 0.0f)
      return bad("dropout was requested but the kernels have none");
    for (const Operand &op : tensors())
      if (std::string why = operandProblem(op); !why.empty())
        return bad(why);
    const std::pair<const char *, const void *> buffers[] = {
        {"lse", a_.lse}, {"delta", a_.delta}, {"dk", a_.dk}, {"dv", a_.dv}};
    for (auto [name, ptr] : buffers)
      if (!ptr)
        return bad(concat("'", name, "' is a null pointer"));
    if (needsDqAccum() && !a_.dq_accum)
      return bad("'dq_accum' is a null pointer, but the backward kernel "
                 "accumulates dQ there (an atomic artifact)");
    return FLASHFUSE_SUCCESS;
  }

  std::vector<Operand> tensors() const {
    const int64_t b = a_.batch, hq = a_.heads_q, hkv = a_.heads_kv;
    const int64_t sq = a_.seq_q, sk = a_.seq_k, d = a_.head_dim,
                  dv = a_.head_dim_v;
    return {
        {"q", a_.q, a_.q_stride, {b, hq, sq, d}},
        {"k", a_.k, a_.k_stride, {b, hkv, sk, d}},
        {"v", a_.v, a_.v_stride, {b, hkv, sk, dv}},
        {"o", a_.o, a_.o_stride, {b, hq, sq, dv}},
        {"do", a_.dout, a_.do_stride, {b, hq, sq, dv}},
        {"grad_q", a_.grad_q, a_.grad_q_stride, {b, hq, sq, d}},
        {"grad_k", a_.grad_k, a_.grad_k_stride, {b, hkv, sk, d}},
        {"grad_v", a_.grad_v, a_.grad_v_stride, {b, hkv, sk, dv}},
    };
  }

  bool needsDqAccum() const { return takesParam(*specs_[1], "dq_accum"); }

private:
  // The kernels of one sequence: each of its kind, the two per-sequence
  // ones varlen, the row-by-row ones dense, all of one variant otherwise,
  // and backward_dq present exactly when the backward leaves dQ to it.
  flashfuse_status checkKernels() {
    if (!specs_[1])
      return bad("the backward kernel is missing");
    const flashfuse_variant &v = specs_[1]->variant;
    for (int i = 0; i < kSteps; ++i) {
      const KernelSpec *k = specs_[i];
      if (!k)
        continue;
      if (k->variant.kind != kStepKinds[i])
        return bad(concat("the ", kStepNames[i], " kernel '", k->name,
                          "' is of another kind"));
      bool perSequence = i == 1 || i == 2;
      if ((k->variant.varlen != 0) != perSequence)
        return bad(concat("the ", kStepNames[i], " kernel '", k->name, "' is ",
                          perSequence ? "not a varlen kernel"
                                      : "a varlen kernel (the preprocess and "
                                        "postprocess are the dense ones)"));
      const flashfuse_variant &w = k->variant;
      if (w.dtype != v.dtype || w.head_dim != v.head_dim ||
          w.head_dim_v != v.head_dim_v || w.causal != v.causal ||
          w.window != v.window || w.softcap != v.softcap)
        return bad(concat("the ", kStepNames[i], " kernel '", k->name,
                          "' is of another variant than the backward"));
    }
    for (int i : {0, 3})
      if (!specs_[i])
        return bad(concat("the ", kStepNames[i], " kernel is missing"));
    if (needsDqAccum() == (specs_[2] != nullptr))
      return bad(specs_[2] ? "a backward_dq kernel was given, but the "
                             "backward kernel adds dQ atomically itself"
                           : "the backward kernel leaves dQ to a backward_dq "
                             "kernel (a deterministic artifact), and none "
                             "was given");
    return FLASHFUSE_SUCCESS;
  }

  const KernelSpec *specs_[kSteps];
  const flashfuse_backward_args &a_;
  const flashfuse_varlen_args &varlen_;
};

// Every name a kernel of the sequence may take (KERNEL_ABI.md, "Backward").
std::vector<flashfuse_arg> namedArgs(const BackwardChecker &checker,
                                     const flashfuse_backward_args &a,
                                     const flashfuse_varlen_args &p) {
  std::vector<flashfuse_arg> out;
  static const char *strideNames[8][3] = {
      {"q_stride_b", "q_stride_h", "q_stride_s"},
      {"k_stride_b", "k_stride_h", "k_stride_s"},
      {"v_stride_b", "v_stride_h", "v_stride_s"},
      {"o_stride_b", "o_stride_h", "o_stride_s"},
      {"do_stride_b", "do_stride_h", "do_stride_s"},
      {"grad_q_stride_b", "grad_q_stride_h", "grad_q_stride_s"},
      {"grad_k_stride_b", "grad_k_stride_h", "grad_k_stride_s"},
      {"grad_v_stride_b", "grad_v_stride_h", "grad_v_stride_s"}};
  std::vector<Operand> ops = checker.tensors();
  for (size_t i = 0; i < ops.size(); ++i) {
    out.push_back(
        buffer(ops[i].name, ops[i].ptr, span(ops[i].size, ops[i].stride)));
    for (int d = 0; d < 3; ++d)
      out.push_back(integer(strideNames[i][d], FLASHFUSE_PARAM_I64,
                            ops[i].stride[d]));
  }
  const int64_t rowsQ = a.batch * a.heads_q * a.seq_q;
  const int64_t rowsK = a.batch * a.heads_q * a.seq_k;
  out.push_back(buffer("lse", a.lse, rowsQ));
  out.push_back(buffer("delta", a.delta, rowsQ));
  if (a.dq_accum)
    out.push_back(buffer("dq_accum", a.dq_accum, rowsQ * a.head_dim));
  out.push_back(buffer("dk", a.dk, rowsK * a.head_dim));
  out.push_back(buffer("dv", a.dv, rowsK * a.head_dim_v));
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
  out.push_back(buffer("cu_seqlens_q", p.cu_seqlens_q, p.num_seqs + 1));
  out.push_back(buffer("cu_seqlens_k", p.cu_seqlens_k, p.num_seqs + 1));
  out.push_back(integer("num_seqs", FLASHFUSE_PARAM_I32, p.num_seqs));
  out.push_back(integer("max_seqlen_q", FLASHFUSE_PARAM_I32, p.max_seqlen_q));
  out.push_back(integer("max_seqlen_k", FLASHFUSE_PARAM_I32, p.max_seqlen_k));
  return out;
}

// Everything that can be checked without a GPU, leaving the named
// arguments ready for launchNamed.
flashfuse_status prepareBackward(const KernelSpec *const specs[kSteps],
                                 const flashfuse_backward_args &args,
                                 const flashfuse_varlen_args &varlen,
                                 std::vector<flashfuse_arg> &named) {
  BackwardChecker checker(specs, args, varlen);
  if (auto s = checker.check(); s != FLASHFUSE_SUCCESS)
    return s;
  named = namedArgs(checker, args, varlen);
  // A dry run of each binding catches a params list naming something this
  // runtime does not provide before anything is launched.
  for (int i = 0; i < kSteps; ++i) {
    if (!specs[i])
      continue;
    std::vector<ParamSlot> slots;
    if (auto s = bindParams(*specs[i], named.data(),
                            static_cast<int>(named.size()), /*strict=*/false,
                            slots);
        s != FLASHFUSE_SUCCESS)
      return s;
  }
  return FLASHFUSE_SUCCESS;
}

} // namespace

} // namespace flashfuse

extern "C" {

void flashfuse_backward_args_init(flashfuse_backward_args *args) {
  flashfuse::initAttentionArgs(args);
}

flashfuse_status
flashfuse_attention_backward_varlen(const flashfuse_backward_kernels *kernels,
                                    const flashfuse_backward_args *args,
                                    const flashfuse_varlen_args *varlen,
                                    void *stream) {
  using namespace flashfuse;
  return guarded([&] {
    if (!kernels || !args || !varlen)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  "kernels and arguments must not be NULL");
    flashfuse_kernel *steps[kSteps] = {kernels->preprocess, kernels->backward,
                                       kernels->backward_dq,
                                       kernels->postprocess};
    const KernelSpec *specs[kSteps];
    for (int i = 0; i < kSteps; ++i)
      specs[i] = steps[i] ? steps[i]->spec : nullptr;
    std::vector<flashfuse_arg> named;
    if (auto s = prepareBackward(specs, *args, *varlen, named);
        s != FLASHFUSE_SUCCESS)
      return s;
    for (flashfuse_kernel *k : steps)
      if (k)
        if (auto s = launchNamed(*k, named.data(),
                                 static_cast<int>(named.size()), stream,
                                 /*strict=*/false);
            s != FLASHFUSE_SUCCESS)
          return s;
    return FLASHFUSE_SUCCESS;
  });
}

flashfuse_status flashfuse_attention_backward_varlen_check(
    const flashfuse_manifest *manifest, const int32_t kernel_index[4],
    const flashfuse_backward_args *args, const flashfuse_varlen_args *varlen) {
  using namespace flashfuse;
  return guarded([&] {
    if (!manifest || !kernel_index || !args || !varlen)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  "manifest, kernel indices and arguments must not be NULL");
    const auto &kernels = manifest->data.kernels;
    const KernelSpec *specs[kSteps];
    for (int i = 0; i < kSteps; ++i) {
      int32_t index = kernel_index[i];
      // Only backward_dq may be absent (-1).
      if (i == 2 && index == -1) {
        specs[i] = nullptr;
        continue;
      }
      if (index < 0 || static_cast<size_t>(index) >= kernels.size())
        return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                    concat(kStepNames[i], " kernel index ", index,
                           " out of range"));
      specs[i] = &kernels[index];
    }
    std::vector<flashfuse_arg> named;
    return prepareBackward(specs, *args, *varlen, named);
  });
}

} // extern "C"
