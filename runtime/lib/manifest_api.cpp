// C entry points over the manifest parser.
#include "handles.h"

using namespace flashfuse;

namespace {

flashfuse_status checkManifestAndIndex(const flashfuse_manifest *m,
                                       int32_t index) {
  if (!m)
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT, "manifest is NULL");
  if (index < 0 || static_cast<size_t>(index) >= m->data.kernels.size())
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                concat("kernel index ", index, " out of range [0, ",
                       m->data.kernels.size(), ")"));
  return FLASHFUSE_SUCCESS;
}

} // namespace

namespace flashfuse {

void fillKernelInfo(const KernelSpec &k, flashfuse_kernel_info &out) {
  out.name = k.name.c_str();
  out.variant = k.variant;
  out.block_m = k.block_m;
  out.block_n = k.block_n;
  out.threads = k.threads;
  out.smem = k.smem;
  out.num_params = static_cast<int32_t>(k.params.size());
}

flashfuse_status validateVariant(const flashfuse_variant &v) {
  auto flag = [](int32_t f) { return f == 0 || f == 1; };
  if (v.kind < FLASHFUSE_KIND_FORWARD || v.kind > FLASHFUSE_KIND_BACKWARD_SPARSE_TRANSPOSE ||
      (v.dtype != FLASHFUSE_DTYPE_F16 && v.dtype != FLASHFUSE_DTYPE_BF16 &&
       v.dtype != FLASHFUSE_DTYPE_E4M3) ||
      (v.out_dtype != FLASHFUSE_DTYPE_F16 &&
       v.out_dtype != FLASHFUSE_DTYPE_BF16) ||
      v.causal < FLASHFUSE_CAUSAL_NONE ||
      v.causal > FLASHFUSE_CAUSAL_BOTTOM_RIGHT || !flag(v.window) ||
      !flag(v.softcap) || !flag(v.bias) || !flag(v.mask) || !flag(v.dropout) ||
      v.page_size < 0 || !flag(v.out_f32) || !flag(v.varlen) ||
      (v.kv_dtype != 0 && v.kv_dtype != FLASHFUSE_DTYPE_E4M3) ||
      !flag(v.leftpad) || v.alibi < 0 || v.alibi > 2 || !flag(v.batch_idx))
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                "variant has an out-of-range kind, dtype, causal, flag, "
                "page_size, out_f32, out_dtype, kv_dtype, leftpad, alibi or "
                "batch_idx");
  return FLASHFUSE_SUCCESS;
}

flashfuse_status findOrExplain(const Manifest &m, const flashfuse_variant &v,
                               int32_t &index) {
  if (auto s = validateVariant(v); s != FLASHFUSE_SUCCESS)
    return s;
  index = findKernel(m, v);
  if (index >= 0)
    return FLASHFUSE_SUCCESS;
  std::string available;
  for (const KernelSpec &k : m.kernels)
    available += concat("\n  ", k.name, ": ", describeVariant(k.variant),
                        k.mods ? " (score_mod/mask_mod: launched by name)"
                        : k.rotaryDim ? " (rotary: launched by name)"
                                      : "");
  return fail(FLASHFUSE_ERROR_NOT_FOUND,
              concat("no kernel for variant '", describeVariant(v), "' in ",
                     m.dir.empty() ? "the manifest" : m.dir,
                     "; it has:", available));
}

} // namespace flashfuse

extern "C" {

flashfuse_status flashfuse_manifest_open(const char *dir,
                                         flashfuse_manifest **out) {
  return guarded([&] {
    if (!dir || !out)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  "artifact directory and output must not be NULL");
    auto m = std::make_unique<flashfuse_manifest>();
    if (auto s = readManifest(dir, m->data); s != FLASHFUSE_SUCCESS)
      return s;
    *out = m.release();
    return FLASHFUSE_SUCCESS;
  });
}

flashfuse_status flashfuse_manifest_parse(const char *text,
                                          const char *base_dir,
                                          flashfuse_manifest **out) {
  return guarded([&] {
    if (!text || !out)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  "manifest text and output must not be NULL");
    auto m = std::make_unique<flashfuse_manifest>();
    m->data.dir = base_dir ? base_dir : "";
    if (auto s = parseManifest(text, "<manifest text>", m->data);
        s != FLASHFUSE_SUCCESS)
      return s;
    *out = m.release();
    return FLASHFUSE_SUCCESS;
  });
}

void flashfuse_manifest_close(flashfuse_manifest *manifest) { delete manifest; }

flashfuse_status flashfuse_manifest_arch(const flashfuse_manifest *m,
                                         int32_t *arch) {
  return guarded([&] {
    if (!m || !arch)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT, "NULL argument");
    *arch = m->data.arch;
    return FLASHFUSE_SUCCESS;
  });
}

flashfuse_status flashfuse_manifest_kernel_count(const flashfuse_manifest *m,
                                                 int32_t *count) {
  return guarded([&] {
    if (!m || !count)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT, "NULL argument");
    *count = static_cast<int32_t>(m->data.kernels.size());
    return FLASHFUSE_SUCCESS;
  });
}

flashfuse_status flashfuse_manifest_kernel_info(const flashfuse_manifest *m,
                                                int32_t index,
                                                flashfuse_kernel_info *out) {
  return guarded([&] {
    if (auto s = checkManifestAndIndex(m, index); s != FLASHFUSE_SUCCESS)
      return s;
    if (!out)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT, "output is NULL");
    fillKernelInfo(m->data.kernels[index], *out);
    return FLASHFUSE_SUCCESS;
  });
}

flashfuse_status flashfuse_manifest_kernel_param(const flashfuse_manifest *m,
                                                 int32_t kernel_index,
                                                 int32_t param_index,
                                                 flashfuse_param_type *type,
                                                 const char **name) {
  return guarded([&] {
    if (auto s = checkManifestAndIndex(m, kernel_index); s != FLASHFUSE_SUCCESS)
      return s;
    const KernelSpec &k = m->data.kernels[kernel_index];
    if (param_index < 0 || static_cast<size_t>(param_index) >= k.params.size())
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  concat("param index ", param_index, " out of range for '",
                         k.name, "' (", k.params.size(), " params)"));
    if (type)
      *type = k.params[param_index].type;
    if (name)
      *name = k.params[param_index].name.c_str();
    return FLASHFUSE_SUCCESS;
  });
}

flashfuse_status flashfuse_manifest_kernel_bound_count(
    const flashfuse_manifest *m, int32_t kernel_index, int32_t *num_bound,
    int32_t *num_bound_for) {
  return guarded([&] {
    if (auto s = checkManifestAndIndex(m, kernel_index); s != FLASHFUSE_SUCCESS)
      return s;
    const KernelSpec &k = m->data.kernels[kernel_index];
    if (num_bound)
      *num_bound = static_cast<int32_t>(k.bound.size());
    if (num_bound_for)
      *num_bound_for = static_cast<int32_t>(k.boundFor.size());
    return FLASHFUSE_SUCCESS;
  });
}

flashfuse_status flashfuse_manifest_kernel_bound_for(
    const flashfuse_manifest *m, int32_t kernel_index, int32_t index,
    const char **name, int64_t *value) {
  return guarded([&] {
    if (auto s = checkManifestAndIndex(m, kernel_index); s != FLASHFUSE_SUCCESS)
      return s;
    const KernelSpec &k = m->data.kernels[kernel_index];
    if (index < 0 || static_cast<size_t>(index) >= k.boundFor.size())
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  concat("bound_for index ", index, " out of range for '",
                         k.name, "' (", k.boundFor.size(), " sizes)"));
    if (name)
      *name = k.boundFor[index].name.c_str();
    if (value)
      *value = k.boundFor[index].value;
    return FLASHFUSE_SUCCESS;
  });
}

flashfuse_status flashfuse_manifest_kernel_mods(const flashfuse_manifest *m,
                                                int32_t kernel_index,
                                                int32_t *mods) {
  return guarded([&] {
    if (auto s = checkManifestAndIndex(m, kernel_index); s != FLASHFUSE_SUCCESS)
      return s;
    if (!mods)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT, "NULL argument");
    *mods = m->data.kernels[kernel_index].mods ? 1 : 0;
    return FLASHFUSE_SUCCESS;
  });
}

flashfuse_status flashfuse_manifest_kernel_capture_count(
    const flashfuse_manifest *m, int32_t kernel_index, int32_t *count) {
  return guarded([&] {
    if (auto s = checkManifestAndIndex(m, kernel_index); s != FLASHFUSE_SUCCESS)
      return s;
    if (!count)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT, "NULL argument");
    *count = static_cast<int32_t>(m->data.kernels[kernel_index].captures.size());
    return FLASHFUSE_SUCCESS;
  });
}

flashfuse_status flashfuse_manifest_kernel_capture(
    const flashfuse_manifest *m, int32_t kernel_index, int32_t index,
    const char **element_type, int32_t *rank) {
  return guarded([&] {
    if (auto s = checkManifestAndIndex(m, kernel_index); s != FLASHFUSE_SUCCESS)
      return s;
    const KernelSpec &k = m->data.kernels[kernel_index];
    if (index < 0 || static_cast<size_t>(index) >= k.captures.size())
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  concat("capture index ", index, " out of range for '",
                         k.name, "' (", k.captures.size(), " values)"));
    if (element_type)
      *element_type = k.captures[index].element.c_str();
    if (rank)
      *rank = k.captures[index].rank;
    return FLASHFUSE_SUCCESS;
  });
}

flashfuse_status flashfuse_manifest_find(const flashfuse_manifest *m,
                                         const flashfuse_variant *variant,
                                         int32_t *index) {
  return guarded([&] {
    if (!m || !variant || !index)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT, "NULL argument");
    return findOrExplain(m->data, *variant, *index);
  });
}

} // extern "C"
