// Thin C++ RAII layer over runtime.h: owning handles close themselves, and a
// failed call throws flashfuse::Error carrying the status and the message.
#ifndef FLASHFUSE_RUNTIME_HPP
#define FLASHFUSE_RUNTIME_HPP

#include "flashfuse/runtime.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace flashfuse {

class Error : public std::runtime_error {
public:
  Error(flashfuse_status status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  flashfuse_status status() const { return status_; }

private:
  flashfuse_status status_;
};

inline void check(flashfuse_status status) {
  if (status != FLASHFUSE_SUCCESS)
    throw Error(status, std::string(flashfuse_status_name(status)) + ": " +
                            flashfuse_last_error());
}

// A parsed manifest.txt, usable without a GPU.
class Manifest {
public:
  explicit Manifest(const std::string &artifactDir) {
    check(flashfuse_manifest_open(artifactDir.c_str(), &m_));
  }
  static Manifest fromText(const std::string &text,
                           const std::string &baseDir = "") {
    flashfuse_manifest *m = nullptr;
    check(flashfuse_manifest_parse(text.c_str(), baseDir.c_str(), &m));
    return Manifest(m);
  }
  Manifest(Manifest &&o) noexcept : m_(std::exchange(o.m_, nullptr)) {}
  Manifest &operator=(Manifest &&o) noexcept {
    std::swap(m_, o.m_);
    return *this;
  }
  Manifest(const Manifest &) = delete;
  Manifest &operator=(const Manifest &) = delete;
  ~Manifest() { flashfuse_manifest_close(m_); }

  int arch() const {
    int32_t a = 0;
    check(flashfuse_manifest_arch(m_, &a));
    return a;
  }
  std::vector<flashfuse_kernel_info> kernels() const {
    int32_t n = 0;
    check(flashfuse_manifest_kernel_count(m_, &n));
    std::vector<flashfuse_kernel_info> out(n);
    for (int32_t i = 0; i < n; ++i)
      check(flashfuse_manifest_kernel_info(m_, i, &out[i]));
    return out;
  }
  int find(const flashfuse_variant &v) const {
    int32_t index = -1;
    check(flashfuse_manifest_find(m_, &v, &index));
    return index;
  }
  void checkForward(int kernelIndex, const flashfuse_forward_args &args) const {
    check(flashfuse_attention_forward_check(m_, kernelIndex, &args));
  }
  // flashfuse_attention_forward_varlen_check (a packed batch).
  void checkForwardVarlen(int kernelIndex, const flashfuse_forward_args &args,
                          const flashfuse_varlen_args &varlen) const {
    check(flashfuse_attention_forward_varlen_check(m_, kernelIndex, &args,
                                                   &varlen));
  }
  // flashfuse_attention_backward_varlen_check (the backward of a packed
  // batch): kernel indices of the preprocess, backward, backward_dq (-1
  // for none) and postprocess.
  void checkBackwardVarlen(const int32_t kernelIndex[4],
                           const flashfuse_backward_args &args,
                           const flashfuse_varlen_args &varlen) const {
    check(flashfuse_attention_backward_varlen_check(m_, kernelIndex, &args,
                                                    &varlen));
  }
  // flashfuse_attention_decode_check: returns the split count and fills
  // `bytes` (if given) with the workspace the launch needs.
  int checkDecode(int decodeIndex, int combineIndex,
                  const flashfuse_decode_args &args, int smCount,
                  int blocksPerSm, const void *workspace = nullptr,
                  size_t workspaceBytes = 0, size_t *bytes = nullptr) const {
    int32_t splits = 0;
    check(flashfuse_attention_decode_check(m_, decodeIndex, combineIndex,
                                           &args, smCount, blocksPerSm,
                                           workspace, workspaceBytes, &splits,
                                           bytes));
    return splits;
  }
  // flashfuse_kvcache_append_check and flashfuse_decode_check_on_device_check.
  void checkAppend(int appendIndex, const flashfuse_decode_args &args) const {
    check(flashfuse_kvcache_append_check(m_, appendIndex, &args));
  }
  void checkDeviceCheck(int checkIndex, const flashfuse_decode_args &args,
                        const int32_t *status) const {
    check(flashfuse_decode_check_on_device_check(m_, checkIndex, &args,
                                                 status));
  }
  const flashfuse_manifest *get() const { return m_; }

private:
  explicit Manifest(flashfuse_manifest *m) : m_(m) {}
  flashfuse_manifest *m_ = nullptr;
};

// A launch over a KV cache prepared for every step of one signature
// (flashfuse_decode_plan): made by Kernel::decodePlan or
// Kernel::appendPlan; each step passes its addresses.
class DecodePlan {
public:
  explicit DecodePlan(flashfuse_decode_plan *p) : p_(p) {}
  DecodePlan(DecodePlan &&o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  DecodePlan &operator=(DecodePlan &&o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  DecodePlan(const DecodePlan &) = delete;
  DecodePlan &operator=(const DecodePlan &) = delete;
  ~DecodePlan() { flashfuse_decode_plan_destroy(p_); }

  // The split count and the workspace bytes each step needs.
  std::pair<int, size_t> info() const {
    int32_t splits = 0;
    size_t bytes = 0;
    check(flashfuse_decode_plan_info(p_, &splits, &bytes));
    return {splits, bytes};
  }
  void launch(const flashfuse_decode_addresses &addresses,
              void *stream) const {
    check(flashfuse_decode_plan_launch(p_, &addresses, stream));
  }
  flashfuse_decode_plan *get() const { return p_; }

private:
  flashfuse_decode_plan *p_ = nullptr;
};

// A loaded kernel; owned by the Context it came from.
class Kernel {
public:
  explicit Kernel(flashfuse_kernel *k) : k_(k) {}
  flashfuse_kernel_info info() const {
    flashfuse_kernel_info i{};
    check(flashfuse_kernel_get_info(k_, &i));
    return i;
  }
  void forward(const flashfuse_forward_args &args, void *stream) const {
    check(flashfuse_attention_forward(k_, &args, stream));
  }
  // A packed batch with this varlen kernel.
  void forwardVarlen(const flashfuse_forward_args &args,
                     const flashfuse_varlen_args &varlen, void *stream) const {
    check(flashfuse_attention_forward_varlen(k_, &args, &varlen, stream));
  }
  // Attention over a KV cache with this decode kernel and `combine` (may
  // be null when one split is used).
  void decode(const Kernel *combine, const flashfuse_decode_args &args,
              void *workspace, size_t workspaceBytes, void *stream) const {
    check(flashfuse_attention_decode(k_, combine ? combine->k_ : nullptr,
                                     &args, workspace, workspaceBytes,
                                     stream));
  }
  // The split count and workspace bytes of that launch on this GPU.
  std::pair<int, size_t> decodeWorkspace(const Kernel *combine,
                                         const flashfuse_decode_args &args) const {
    int32_t splits = 0;
    size_t bytes = 0;
    check(flashfuse_decode_workspace_bytes(
        k_, combine ? combine->k_ : nullptr, &args, &splits, &bytes));
    return {splits, bytes};
  }
  // The plan of decode() for every step of args' signature.
  DecodePlan decodePlan(const Kernel *combine,
                        const flashfuse_decode_args &args) const {
    flashfuse_decode_plan *p = nullptr;
    check(flashfuse_decode_plan_create(k_, combine ? combine->k_ : nullptr,
                                       &args, &p));
    return DecodePlan(p);
  }
  // The plan of append() (this kv_append kernel) for args' signature.
  DecodePlan appendPlan(const flashfuse_decode_args &args) const {
    flashfuse_decode_plan *p = nullptr;
    check(flashfuse_kvcache_append_plan_create(k_, &args, &p));
    return DecodePlan(p);
  }
  // This kv_append kernel writes args.k_new/v_new into the caches.
  void append(const flashfuse_decode_args &args, void *stream) const {
    check(flashfuse_kvcache_append(k_, &args, stream));
  }
  // This decode_check kernel validates the lengths and the page table on
  // the GPU (status: 4 int32 of device memory); throws the verdict.
  void checkOnDevice(const flashfuse_decode_args &args, int32_t *status,
                     void *stream) const {
    check(flashfuse_decode_check_on_device(k_, &args, status, stream));
  }
  void launch(const std::vector<flashfuse_arg> &args, void *stream,
              bool allowUnused = false) const {
    check(flashfuse_kernel_launch(k_, args.data(),
                                  static_cast<int32_t>(args.size()),
                                  allowUnused ? 1 : 0, stream));
  }
  flashfuse_kernel *get() const { return k_; }

private:
  flashfuse_kernel *k_;
};

// A loaded artifact; owned (and cached) by the Context it came from.
class Artifact {
public:
  explicit Artifact(flashfuse_artifact *a) : a_(a) {}
  Kernel kernel(const std::string &name) const {
    flashfuse_kernel *k = nullptr;
    check(flashfuse_artifact_kernel(a_, name.c_str(), &k));
    return Kernel(k);
  }
  Kernel find(const flashfuse_variant &v) const {
    flashfuse_kernel *k = nullptr;
    check(flashfuse_artifact_find_kernel(a_, &v, &k));
    return Kernel(k);
  }
  bool usesCubin() const { return flashfuse_artifact_uses_cubin(a_) != 0; }
  const flashfuse_manifest *manifest() const {
    return flashfuse_artifact_manifest(a_);
  }

private:
  flashfuse_artifact *a_;
};

class Context {
public:
  explicit Context(int device = -1) {
    check(flashfuse_context_create(device, &c_));
  }
  Context(Context &&o) noexcept : c_(std::exchange(o.c_, nullptr)) {}
  Context &operator=(Context &&o) noexcept {
    std::swap(c_, o.c_);
    return *this;
  }
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;
  ~Context() { flashfuse_context_destroy(c_); }

  Artifact load(const std::string &artifactDir) {
    flashfuse_artifact *a = nullptr;
    check(flashfuse_artifact_load(c_, artifactDir.c_str(), &a));
    return Artifact(a);
  }
  // Compute capability as major * 10 + minor, e.g. 90.
  int arch() const {
    int32_t major = 0, minor = 0;
    check(flashfuse_context_device(c_, nullptr, &major, &minor, nullptr));
    return major * 10 + minor;
  }
  flashfuse_context *get() const { return c_; }

private:
  flashfuse_context *c_ = nullptr;
};

} // namespace flashfuse

#endif // FLASHFUSE_RUNTIME_HPP
