// A kernel launch bound once and replayed with new buffer addresses: the
// decode plans (flashfuse_decode_plan) of a decoding loop, whose small
// steps are host-bound, pay for the checks, the binding of some 40 named
// parameters and the grid once per signature instead of once per step.
#ifndef FLASHFUSE_RUNTIME_PREPARED_LAUNCH_H
#define FLASHFUSE_RUNTIME_PREPARED_LAUNCH_H

#include "launch.h"

#include <cstdint>
#include <vector>

namespace flashfuse {

// The buffers of a prepared launch are numbered; at preparation buffer i is
// represented by placeholderAddress(i), and each memref argument points into
// one of them (at an offset: a workspace holds several parts). The
// placeholders are 16-byte aligned and 2^40 bytes apart, so every check of
// bindParams passes and each bound address tells its buffer and offset.
constexpr int kMaxPreparedBuffers = 16;
const void *placeholderAddress(int buffer);

class PreparedLaunch {
public:
  // Binds `args`, whose memref addresses lie in placeholder buffers, to
  // `kernel`'s params and sizes its grid, as launchNamed does. Kernels
  // whose params the artifact binds or that take tensor maps (made from
  // addresses) are refused. With `clusterX` > 1 every launch is of
  // thread-block clusters of (clusterX, 1, 1) (launchBound): it must divide
  // the grid's x, and the driver must have cuLaunchKernelEx.
  flashfuse_status prepare(flashfuse_kernel &kernel, const flashfuse_arg *args,
                           int numArgs, unsigned clusterX = 1);

  // Launches on `stream` with buffer i at addresses[i] (of
  // kMaxPreparedBuffers; the caller checked those the launch uses).
  flashfuse_status launch(const void *const *addresses, void *stream) const;

  bool prepared() const { return kernel_ != nullptr; }

private:
  // slots_[slot] is the address of `buffer` plus `offset`.
  struct Relocation {
    size_t slot;
    int buffer;
    int64_t offset;
  };
  flashfuse_kernel *kernel_ = nullptr;
  std::vector<ParamSlot> slots_;
  std::vector<Relocation> relocations_;
  unsigned grid_[3] = {0, 0, 0};
  unsigned clusterX_ = 1;
};

} // namespace flashfuse

#endif // FLASHFUSE_RUNTIME_PREPARED_LAUNCH_H
