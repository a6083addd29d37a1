#include "driver.h"

#include "error.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace flashfuse {

namespace {

using GetProcAddressFn = cu::CUresult (*)(const char *symbol, void **pfn,
                                          int cuda_version,
                                          std::uint64_t flags, int *status);

// The outcome of the one-time load, replayed to every later caller so that
// each failing call carries the full explanation, not just the first.
struct LoadState {
  DriverApi api{};
  flashfuse_status status = FLASHFUSE_SUCCESS;
  std::string message;
};

// Name understood by cuGetProcAddress, and the versioned export that dlsym
// needs on drivers older than CUDA 12 (where the _v2 ABI is what we call).
struct Entry {
  const char *base;
  const char *exported;
  void **slot;
};

// The library name can be overridden so that the no-driver path can be
// exercised on GPU machines too (tests set it to a path that does not exist).
const char *driverLibraryName() {
  const char *name = std::getenv("FLASHFUSE_CUDA_DRIVER");
  return (name && *name) ? name : "libcuda.so.1";
}

void resolveAll(void *handle, LoadState &state) {
  DriverApi &a = state.api;
  const Entry entries[] = {
      {"cuInit", "cuInit", reinterpret_cast<void **>(&a.cuInit)},
      {"cuDriverGetVersion", "cuDriverGetVersion",
       reinterpret_cast<void **>(&a.cuDriverGetVersion)},
      {"cuDeviceGetCount", "cuDeviceGetCount",
       reinterpret_cast<void **>(&a.cuDeviceGetCount)},
      {"cuDeviceGet", "cuDeviceGet", reinterpret_cast<void **>(&a.cuDeviceGet)},
      {"cuDeviceGetAttribute", "cuDeviceGetAttribute",
       reinterpret_cast<void **>(&a.cuDeviceGetAttribute)},
      {"cuDeviceGetName", "cuDeviceGetName",
       reinterpret_cast<void **>(&a.cuDeviceGetName)},
      {"cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain",
       reinterpret_cast<void **>(&a.cuDevicePrimaryCtxRetain)},
      {"cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2",
       reinterpret_cast<void **>(&a.cuDevicePrimaryCtxRelease)},
      {"cuCtxGetCurrent", "cuCtxGetCurrent",
       reinterpret_cast<void **>(&a.cuCtxGetCurrent)},
      {"cuCtxGetDevice", "cuCtxGetDevice",
       reinterpret_cast<void **>(&a.cuCtxGetDevice)},
      {"cuCtxPushCurrent", "cuCtxPushCurrent_v2",
       reinterpret_cast<void **>(&a.cuCtxPushCurrent)},
      {"cuCtxPopCurrent", "cuCtxPopCurrent_v2",
       reinterpret_cast<void **>(&a.cuCtxPopCurrent)},
      {"cuModuleLoadData", "cuModuleLoadData",
       reinterpret_cast<void **>(&a.cuModuleLoadData)},
      {"cuModuleLoadDataEx", "cuModuleLoadDataEx",
       reinterpret_cast<void **>(&a.cuModuleLoadDataEx)},
      {"cuModuleUnload", "cuModuleUnload",
       reinterpret_cast<void **>(&a.cuModuleUnload)},
      {"cuModuleGetFunction", "cuModuleGetFunction",
       reinterpret_cast<void **>(&a.cuModuleGetFunction)},
      {"cuFuncGetAttribute", "cuFuncGetAttribute",
       reinterpret_cast<void **>(&a.cuFuncGetAttribute)},
      {"cuFuncSetAttribute", "cuFuncSetAttribute",
       reinterpret_cast<void **>(&a.cuFuncSetAttribute)},
      {"cuLaunchKernel", "cuLaunchKernel",
       reinterpret_cast<void **>(&a.cuLaunchKernel)},
      {"cuOccupancyMaxActiveBlocksPerMultiprocessor",
       "cuOccupancyMaxActiveBlocksPerMultiprocessor",
       reinterpret_cast<void **>(&a.cuOccupancyMaxActiveBlocksPerMultiprocessor)},
      {"cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2",
       reinterpret_cast<void **>(&a.cuMemcpyDtoHAsync)},
      {"cuStreamSynchronize", "cuStreamSynchronize",
       reinterpret_cast<void **>(&a.cuStreamSynchronize)},
      {"cuMemsetD32Async", "cuMemsetD32Async",
       reinterpret_cast<void **>(&a.cuMemsetD32Async)},
      {"cuStreamGetCaptureInfo", "cuStreamGetCaptureInfo_v2",
       reinterpret_cast<void **>(&a.cuStreamGetCaptureInfo)},
      {"cuMemAlloc", "cuMemAlloc_v2", reinterpret_cast<void **>(&a.cuMemAlloc)},
      {"cuMemFree", "cuMemFree_v2", reinterpret_cast<void **>(&a.cuMemFree)},
      {"cuMemcpyHtoD", "cuMemcpyHtoD_v2",
       reinterpret_cast<void **>(&a.cuMemcpyHtoD)},
      {"cuGetErrorName", "cuGetErrorName",
       reinterpret_cast<void **>(&a.cuGetErrorName)},
      {"cuGetErrorString", "cuGetErrorString",
       reinterpret_cast<void **>(&a.cuGetErrorString)},
  };

  // Entry points only some kernels need: left null where missing, and
  // reported by the launch that needs one.
  const Entry optional[] = {
      {"cuTensorMapEncodeTiled", "cuTensorMapEncodeTiled",
       reinterpret_cast<void **>(&a.cuTensorMapEncodeTiled)},
      {"cuLaunchKernelEx", "cuLaunchKernelEx",
       reinterpret_cast<void **>(&a.cuLaunchKernelEx)},
      {"cuOccupancyMaxActiveClusters", "cuOccupancyMaxActiveClusters",
       reinterpret_cast<void **>(&a.cuOccupancyMaxActiveClusters)},
  };

  // cuGetProcAddress_v2 (CUDA 12+) hands out the entry point matching the
  // API version we were written against, whatever the driver's own version.
  auto getProc = reinterpret_cast<GetProcAddressFn>(
      dlsym(handle, "cuGetProcAddress_v2"));
  auto resolve = [&](const Entry &e) {
    *e.slot = nullptr;
    if (getProc) {
      int found = -1;
      if (getProc(e.base, e.slot, cu::kDriverApiVersion,
                  cu::CU_GET_PROC_ADDRESS_DEFAULT, &found) != cu::CUDA_SUCCESS ||
          found != cu::CU_GET_PROC_ADDRESS_SUCCESS)
        *e.slot = nullptr;
    }
    if (!*e.slot)
      *e.slot = dlsym(handle, e.exported);
  };
  for (const Entry &e : optional)
    resolve(e);
  for (const Entry &e : entries) {
    resolve(e);
    if (!*e.slot) {
      state.status = FLASHFUSE_ERROR_NO_DRIVER;
      state.message = concat("no usable CUDA driver: ", driverLibraryName(),
                             " has no entry point '", e.exported,
                             "' (driver too old?)");
      return;
    }
  }
}

void initialise(LoadState &state) {
  const char *name = driverLibraryName();
  // RTLD_LOCAL keeps the driver's symbols out of the global namespace so a
  // process that also links libcuda (PyTorch) sees no clash.
  void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    state.status = FLASHFUSE_ERROR_NO_DRIVER;
    state.message =
        concat("no CUDA driver: could not load ", name, " (",
               why ? why : "unknown reason",
               "); an NVIDIA GPU with its driver is needed to run kernels");
    return;
  }
  resolveAll(handle, state);
  if (state.status != FLASHFUSE_SUCCESS)
    return;
  cu::CUresult r = state.api.cuInit(0);
  if (r == cu::CUDA_ERROR_NO_DEVICE) {
    state.status = FLASHFUSE_ERROR_NO_DEVICE;
    state.message = concat("no CUDA device: cuInit(0) failed with ",
                           describeCuResult(state.api, r));
  } else if (r != cu::CUDA_SUCCESS) {
    state.status = FLASHFUSE_ERROR_NO_DRIVER;
    state.message = concat("CUDA driver unusable: cuInit(0) failed with ",
                           describeCuResult(state.api, r));
  }
  // The handle is deliberately never closed: function pointers into the
  // driver are handed out for the life of the process.
}

} // namespace

flashfuse_status loadDriver(const DriverApi **api) {
  static LoadState state;
  static std::once_flag once;
  std::call_once(once, [] { initialise(state); });
  if (state.status != FLASHFUSE_SUCCESS)
    return fail(state.status, state.message);
  *api = &state.api;
  return FLASHFUSE_SUCCESS;
}

std::string describeCuResult(const DriverApi &api, cu::CUresult result) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (api.cuGetErrorName)
    api.cuGetErrorName(result, &name);
  if (api.cuGetErrorString)
    api.cuGetErrorString(result, &text);
  return concat(name ? name : "CUDA error", " ", result, " (",
                text ? text : "no description", ")");
}

flashfuse_status checkCu(const DriverApi &api, cu::CUresult result,
                         const std::string &what) {
  if (result == cu::CUDA_SUCCESS)
    return FLASHFUSE_SUCCESS;
  return fail(FLASHFUSE_ERROR_CUDA,
              concat(what, ": ", describeCuResult(api, result)));
}

flashfuse_status checkCu(const DriverApi &api, cu::CUresult result,
                         const char *what) {
  if (result == cu::CUDA_SUCCESS)
    return FLASHFUSE_SUCCESS;
  return checkCu(api, result, std::string(what));
}

} // namespace flashfuse
