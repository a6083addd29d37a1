// Run-time binding to the CUDA driver (libcuda.so.1).
//
// The library never links libcuda: it is opened with dlopen the first time a
// context is created, and every entry point is resolved once through
// cuGetProcAddress (or dlsym of the versioned name on drivers that lack it).
// On a machine without a driver every call below reports
// FLASHFUSE_ERROR_NO_DRIVER instead of failing to load or crashing.
#ifndef FLASHFUSE_RUNTIME_DRIVER_H
#define FLASHFUSE_RUNTIME_DRIVER_H

#include "cuda_driver_types.h"
#include "flashfuse/runtime.h"

#include <cstddef>
#include <string>

namespace flashfuse {

// Function-pointer table of the driver entry points the runtime uses.
struct DriverApi {
  cu::CUresult (*cuInit)(unsigned flags);
  cu::CUresult (*cuDriverGetVersion)(int *version);
  cu::CUresult (*cuDeviceGetCount)(int *count);
  cu::CUresult (*cuDeviceGet)(cu::CUdevice *device, int ordinal);
  cu::CUresult (*cuDeviceGetAttribute)(int *value, int attribute,
                                       cu::CUdevice device);
  cu::CUresult (*cuDeviceGetName)(char *name, int length, cu::CUdevice device);
  cu::CUresult (*cuDevicePrimaryCtxRetain)(cu::CUcontext *ctx,
                                           cu::CUdevice device);
  cu::CUresult (*cuDevicePrimaryCtxRelease)(cu::CUdevice device);
  cu::CUresult (*cuCtxGetCurrent)(cu::CUcontext *ctx);
  cu::CUresult (*cuCtxGetDevice)(cu::CUdevice *device);
  cu::CUresult (*cuCtxPushCurrent)(cu::CUcontext ctx);
  cu::CUresult (*cuCtxPopCurrent)(cu::CUcontext *ctx);
  cu::CUresult (*cuModuleLoadData)(cu::CUmodule *module, const void *image);
  cu::CUresult (*cuModuleLoadDataEx)(cu::CUmodule *module, const void *image,
                                     unsigned num_options, int *options,
                                     void **option_values);
  cu::CUresult (*cuModuleUnload)(cu::CUmodule module);
  cu::CUresult (*cuModuleGetFunction)(cu::CUfunction *function,
                                      cu::CUmodule module, const char *name);
  cu::CUresult (*cuFuncGetAttribute)(int *value, int attribute,
                                     cu::CUfunction function);
  cu::CUresult (*cuFuncSetAttribute)(cu::CUfunction function, int attribute,
                                     int value);
  cu::CUresult (*cuLaunchKernel)(cu::CUfunction function, unsigned grid_x,
                                 unsigned grid_y, unsigned grid_z,
                                 unsigned block_x, unsigned block_y,
                                 unsigned block_z, unsigned shared_bytes,
                                 cu::CUstream stream, void **params,
                                 void **extra);
  cu::CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(
      int *num_blocks, cu::CUfunction function, int block_size,
      size_t dynamic_smem_bytes);
  // The device-side check's status read-back (flashfuse_decode_check_on_device).
  cu::CUresult (*cuMemcpyDtoHAsync)(void *dst, cu::CUdeviceptr src,
                                    size_t bytes, cu::CUstream stream);
  cu::CUresult (*cuStreamSynchronize)(cu::CUstream stream);
  // Clears the decode's split counters: once, for those the runtime keeps
  // (split_arrivals.h), or before each launch, in the caller's workspace.
  cu::CUresult (*cuMemsetD32Async)(cu::CUdeviceptr dst, unsigned value,
                                   size_t count, cu::CUstream stream);
  // Whether a stream is capturing a CUDA graph, and which capture
  // (split_arrivals.h); the API-12.0 signature (cuStreamGetCaptureInfo_v2),
  // the graph and its dependencies not asked for.
  cu::CUresult (*cuStreamGetCaptureInfo)(cu::CUstream stream, int *status,
                                         std::uint64_t *id, void **graph,
                                         const void ***dependencies,
                                         size_t *numDependencies);
  // The block-sparse lists an artifact carries (bound_lists.h): copied to
  // the GPU once when the artifact is loaded, freed with its context.
  cu::CUresult (*cuMemAlloc)(cu::CUdeviceptr *ptr, size_t bytes);
  cu::CUresult (*cuMemFree)(cu::CUdeviceptr ptr);
  cu::CUresult (*cuMemcpyHtoD)(cu::CUdeviceptr dst, const void *src,
                               size_t bytes);
  cu::CUresult (*cuGetErrorName)(cu::CUresult error, const char **name);
  cu::CUresult (*cuGetErrorString)(cu::CUresult error, const char **text);
  // Optional (CUDA 12 drivers have it; null otherwise): the TMA kernels'
  // tensor maps (tensormap.cpp).
  cu::CUresult (*cuTensorMapEncodeTiled)(
      cu::CUtensorMap *map, int dataType, std::uint32_t rank, void *address,
      const std::uint64_t *dims, const std::uint64_t *strides,
      const std::uint32_t *box, const std::uint32_t *elementStrides,
      int interleave, int swizzle, int l2Promotion, int oobFill);
  // Optional (CUDA 11.8 and later drivers; null otherwise): launches with
  // attributes, here thread-block clusters (launchBound's clusterX > 1: the
  // decode kernels that merge their splits in a cluster, KERNEL_ABI.md
  // "Decode"). Where it is null the decode plans never ask for clusters.
  cu::CUresult (*cuLaunchKernelEx)(const cu::CUlaunchConfig *config,
                                   cu::CUfunction function, void **params,
                                   void **extra);
  // How many clusters of a launch configuration the GPU holds at once
  // (optional, CUDA 12): the decode plans merge in clusters only where one
  // wave of them fits (handles.h, clusterCapacity).
  cu::CUresult (*cuOccupancyMaxActiveClusters)(
      int *clusters, cu::CUfunction function, const cu::CUlaunchConfig *config);
};

// Opens the driver and calls cuInit(0) once per process. On success *api
// points at the resolved table (valid for the life of the process); on
// failure the thread's last error says why (no libcuda, missing entry point,
// no device, cuInit failure) and the same status is returned on every call.
flashfuse_status loadDriver(const DriverApi **api);

// "CUDA_ERROR_X (text)" for a driver result, usable even if the error
// functions could not be resolved.
std::string describeCuResult(const DriverApi &api, cu::CUresult result);

// Records "<what>: CUDA_ERROR_X (text)" as the last error when result is not
// CUDA_SUCCESS. Returns FLASHFUSE_SUCCESS or FLASHFUSE_ERROR_CUDA.
flashfuse_status checkCu(const DriverApi &api, cu::CUresult result,
                         const std::string &what);
// The same for a literal `what`: no string is made unless the call failed
// (ScopedContext checks the current context at every launch).
flashfuse_status checkCu(const DriverApi &api, cu::CUresult result,
                         const char *what);

} // namespace flashfuse

#endif // FLASHFUSE_RUNTIME_DRIVER_H
