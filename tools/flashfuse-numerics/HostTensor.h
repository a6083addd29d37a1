//===- HostTensor.h - row-major host tensors of doubles --------*- C++ -*-===//
#ifndef FLASHFUSE_TOOLS_NUMERICS_HOSTTENSOR_H
#define FLASHFUSE_TOOLS_NUMERICS_HOSTTENSOR_H

#include <array>
#include <cstdint>
#include <vector>

namespace flashfuse::numerics {

/// A dense row-major tensor of doubles in an operand's own dimension order.
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<double> data;

  HostTensor() = default;
  explicit HostTensor(std::vector<int64_t> s) : shape(std::move(s)) {
    data.assign(numel(), 0.0);
  }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  bool empty() const { return shape.empty(); }
  int64_t offset(const int64_t *idx) const {
    int64_t off = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      off = off * shape[d] + idx[d];
    return off;
  }
  /// Element at logical [B, H, S, D] position `l` of an operand whose
  /// logical dimension k sits at operand dimension perm[k].
  double &atLogical(const std::array<int64_t, 4> &perm,
                    const std::array<int64_t, 4> &l) {
    int64_t idx[4];
    for (int k = 0; k < 4; ++k)
      idx[perm[k]] = l[k];
    return data[offset(idx)];
  }
  /// Element of a [B, Hq, Sq, Sk]-broadcastable tensor (size-1 dims read 0).
  double &atBroadcast(const std::array<int64_t, 4> &l) {
    int64_t idx[4];
    for (int k = 0; k < 4; ++k)
      idx[k] = shape[k] == 1 ? 0 : l[k];
    return data[offset(idx)];
  }
};

/// Operand shape of logical sizes `logical` under `perm`.
inline std::vector<int64_t> permutedShape(const std::array<int64_t, 4> &logical,
                                          const std::array<int64_t, 4> &perm) {
  std::vector<int64_t> s(4);
  for (int k = 0; k < 4; ++k)
    s[perm[k]] = logical[k];
  return s;
}

} // namespace flashfuse::numerics

#endif
