// The decode kernels' split counters (docs/KERNEL_ABI.md "Decode",
// split_arrivals), kept by the runtime from launch to launch.
//
// A decode kernel that merges its own splits counts each row group's
// blocks in on one i32, which must be 0 at launch; the block that completes
// the group puts it back to 0. So counters that were zeroed once stay
// usable for the next launch, provided no two launches use them at the
// same time. Clearing them in the caller's workspace before every launch
// cost a memset node and its dependency gap, 2.3-2.8 us of a 9-14 us split
// step on an H200 (docs/PERF.md run 240).
//
// Two launches never share counters at the same time when each stream has
// its own (CU_STREAM_PER_THREAD, one handle for every thread's own default
// stream, one per thread), and each CUDA graph being captured its own on
// each of its streams: launches on one stream run in order, and one
// graph's replays never overlap each other. Memory is never allocated during a capture
// (cuMemAlloc would invalidate it): the counters are cut from chunks that
// were allocated and zeroed beforehand, and a launch being captured that
// finds no room left gets none (the caller then clears counters in its
// workspace, as for kernels that do not reset their own).
#ifndef FLASHFUSE_RUNTIME_SPLIT_ARRIVALS_H
#define FLASHFUSE_RUNTIME_SPLIT_ARRIVALS_H

#include "driver.h"
#include "error.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

namespace flashfuse {

class SplitArrivals {
public:
  // Counters not captured launches leave in reserve for captured ones: a
  // new chunk is allocated before the free room falls below this. 64K
  // counters (256 KiB) are the row groups of some 32 captured B = 256,
  // Hkv = 8 decode launches, each on a stream of its own.
  static constexpr int64_t kReserve = 64 * 1024;

  // `count` zeroed counters for a launch on `stream` (the context `api`
  // drives is current): the same ones for every launch on that stream
  // outside a capture, and for every launch of one capture on it. `out` is
  // 0 where a capturing stream finds no room.
  flashfuse_status counters(const DriverApi &api, cu::CUstream stream,
                            int64_t count, cu::CUdeviceptr &out);
  // Frees the chunks (context destruction; the context is current).
  void release(const DriverApi &api);

private:
  struct Slice {
    cu::CUdeviceptr address = 0;
    int64_t count = 0;
  };
  // (whether capturing, the capture's id, the stream, the thread where the
  // stream is CU_STREAM_PER_THREAD)
  using Key =
      std::tuple<bool, std::uint64_t, cu::CUstream, std::thread::id>;
  // A new chunk (outside captures only) of `count` counters and twice the
  // reserve, zeroed; the rest of the previous one is left unused.
  flashfuse_status refill(const DriverApi &api, int64_t count);

  std::mutex mutex_;
  std::map<Key, Slice> slices_;
  std::vector<cu::CUdeviceptr> chunks_;
  cu::CUdeviceptr free_ = 0; // the newest chunk's first uncut counter
  int64_t freeCount_ = 0;
};

} // namespace flashfuse

#endif // FLASHFUSE_RUNTIME_SPLIT_ARRIVALS_H
