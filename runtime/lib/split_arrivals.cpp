#include "split_arrivals.h"

namespace flashfuse {

flashfuse_status SplitArrivals::counters(const DriverApi &api,
                                         cu::CUstream stream, int64_t count,
                                         cu::CUdeviceptr &out) {
  out = 0;
  int status = cu::CU_STREAM_CAPTURE_STATUS_NONE;
  std::uint64_t id = 0;
  if (auto s = checkCu(api,
                       api.cuStreamGetCaptureInfo(stream, &status, &id,
                                                  nullptr, nullptr, nullptr),
                       "asking whether the decode's stream is capturing");
      s != FLASHFUSE_SUCCESS)
    return s;
  if (status == cu::CU_STREAM_CAPTURE_STATUS_INVALIDATED)
    return fail(FLASHFUSE_ERROR_CUDA,
                "the decode's stream is capturing a CUDA graph whose capture "
                "was invalidated by an earlier call");
  bool capturing = status == cu::CU_STREAM_CAPTURE_STATUS_ACTIVE;
  std::lock_guard<std::mutex> lock(mutex_);
  std::thread::id thread =
      stream == cu::kStreamPerThread ? std::this_thread::get_id()
                                     : std::thread::id();
  Slice &slice = slices_[Key{capturing, capturing ? id : 0, stream, thread}];
  if (slice.count < count) {
    // A larger launch takes new counters; the old ones (zero once the
    // stream's earlier launches end) are not reused.
    if (freeCount_ < count) {
      if (capturing)
        return FLASHFUSE_SUCCESS; // no room, and no allocation in a capture
      if (auto s = refill(api, count); s != FLASHFUSE_SUCCESS)
        return s;
    }
    slice = Slice{free_, count};
    free_ += static_cast<cu::CUdeviceptr>(count) * sizeof(std::int32_t);
    freeCount_ -= count;
  }
  // Outside captures, keep the reserve for the captures to come.
  if (!capturing && freeCount_ < kReserve)
    if (auto s = refill(api, 0); s != FLASHFUSE_SUCCESS)
      return s;
  out = slice.address;
  return FLASHFUSE_SUCCESS;
}

flashfuse_status SplitArrivals::refill(const DriverApi &api, int64_t count) {
  int64_t chunk = count + 2 * kReserve;
  size_t bytes = static_cast<size_t>(chunk) * sizeof(std::int32_t);
  cu::CUdeviceptr ptr = 0;
  if (auto s = checkCu(api, api.cuMemAlloc(&ptr, bytes),
                       concat("allocating ", bytes,
                              " bytes for the decode's split counters"));
      s != FLASHFUSE_SUCCESS)
    return s;
  chunks_.push_back(ptr);
  // Zeroed before any stream can use them: the legacy stream's memset,
  // waited for (cheap; once per chunk).
  if (auto s = checkCu(api,
                       api.cuMemsetD32Async(ptr, 0, chunk, nullptr),
                       "clearing the decode's split counters");
      s != FLASHFUSE_SUCCESS)
    return s;
  if (auto s = checkCu(api, api.cuStreamSynchronize(nullptr),
                       "clearing the decode's split counters");
      s != FLASHFUSE_SUCCESS)
    return s;
  free_ = ptr;
  freeCount_ = chunk;
  return FLASHFUSE_SUCCESS;
}

void SplitArrivals::release(const DriverApi &api) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (cu::CUdeviceptr chunk : chunks_)
    api.cuMemFree(chunk);
  chunks_.clear();
  slices_.clear();
  free_ = 0;
  freeCount_ = 0;
}

} // namespace flashfuse
