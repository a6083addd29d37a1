// Definitions of the opaque handle types of runtime.h, shared by the files
// that implement contexts, artifacts and launches.
#ifndef FLASHFUSE_RUNTIME_HANDLES_H
#define FLASHFUSE_RUNTIME_HANDLES_H

#include "driver.h"
#include "error.h"
#include "manifest.h"
#include "split_arrivals.h"

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>

struct flashfuse_manifest {
  flashfuse::Manifest data;
};

struct flashfuse_context;
struct flashfuse_artifact;

struct flashfuse_kernel {
  flashfuse_artifact *artifact = nullptr;
  const flashfuse::KernelSpec *spec = nullptr; // points into artifact->manifest
  flashfuse::cu::CUfunction function = nullptr;
  // Blocks of this kernel one SM holds at once with the manifest's block
  // size and shared memory (the driver's occupancy calculator, which also
  // counts registers): the decode launch sizes its split count by it.
  int blocksPerSm = 1;
  // A decode kernel that merges its splits in a cluster (cluster_merge):
  // clusterCapacity[n] clusters of n blocks run at once on this GPU (the
  // driver's cuOccupancyMaxActiveClusters; clusters must fit a GPC, so
  // this is not SMs / n), for n up to 8; 0 where unknown. A decode plan
  // merges in clusters only where one wave of them fits.
  std::array<int32_t, 9> clusterCapacity{};
};

struct flashfuse_artifact {
  flashfuse_context *context = nullptr;
  flashfuse_manifest manifest;
  flashfuse::cu::CUmodule module = nullptr;
  bool fromCubin = false;
  // The list files of bound params on the GPU, by file name (uploaded at
  // load, freed with the context).
  std::map<std::string, flashfuse::cu::CUdeviceptr> listBuffers;
  // Resolved functions by kernel name; guarded by the context's mutex.
  std::map<std::string, std::unique_ptr<flashfuse_kernel>> kernels;
};

struct flashfuse_context {
  const flashfuse::DriverApi *api = nullptr;
  flashfuse::cu::CUcontext ctx = nullptr;
  flashfuse::cu::CUdevice device = 0;
  int ordinal = 0;
  bool ownsPrimary = false; // retained by us, so released on destroy
  int ccMajor = 0, ccMinor = 0, smCount = 0;
  int maxThreadsPerBlock = 0;
  int maxSmemDefault = 0; // per block without opting in (48 KiB)
  int maxSmemOptin = 0;   // per block after cuFuncSetAttribute
  int maxGrid[3] = {0, 0, 0};
  // Guards `artifacts` and every artifact's `kernels`: loads and lookups from
  // several threads must not load a module twice or race on the maps.
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<flashfuse_artifact>> artifacts;
  // The decode kernels' split counters (guarded by their own mutex).
  flashfuse::SplitArrivals splitArrivals;
};

namespace flashfuse {

// Shared by the manifest and artifact entry points (manifest_api.cpp).
void fillKernelInfo(const KernelSpec &k, flashfuse_kernel_info &out);
flashfuse_status validateVariant(const flashfuse_variant &v);
// Finds the kernel of a variant or fails listing the ones the manifest has.
flashfuse_status findOrExplain(const Manifest &m, const flashfuse_variant &v,
                               int32_t &index);

// Makes a context current for the scope when it is not already, restoring
// the caller's on exit: the runtime may be called from threads where another
// context (or none) is current.
class ScopedContext {
public:
  explicit ScopedContext(const flashfuse_context &c) : c_(c) {}
  flashfuse_status enter() {
    cu::CUcontext current = nullptr;
    if (auto s = checkCu(*c_.api, c_.api->cuCtxGetCurrent(&current),
                         "querying the current CUDA context");
        s != FLASHFUSE_SUCCESS)
      return s;
    if (current == c_.ctx)
      return FLASHFUSE_SUCCESS;
    if (auto s = checkCu(*c_.api, c_.api->cuCtxPushCurrent(c_.ctx),
                         "making the runtime's CUDA context current");
        s != FLASHFUSE_SUCCESS)
      return s;
    pushed_ = true;
    return FLASHFUSE_SUCCESS;
  }
  ~ScopedContext() {
    if (pushed_) {
      cu::CUcontext popped = nullptr;
      c_.api->cuCtxPopCurrent(&popped);
    }
  }
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;

private:
  const flashfuse_context &c_;
  bool pushed_ = false;
};

// Runs a public entry point's body, turning C++ exceptions (allocation
// failure) into a status so none crosses the C boundary.
template <typename Body> flashfuse_status guarded(Body &&body) {
  clearError();
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(FLASHFUSE_ERROR_INTERNAL, "out of host memory");
  } catch (const std::exception &e) {
    return fail(FLASHFUSE_ERROR_INTERNAL, concat("internal error: ", e.what()));
  } catch (...) {
    return fail(FLASHFUSE_ERROR_INTERNAL, "internal error: unknown exception");
  }
}

} // namespace flashfuse

#endif // FLASHFUSE_RUNTIME_HANDLES_H
