// The small part of the CUDA driver API's types and constants that the runtime
// uses. The runtime opens libcuda at run time, so it needs the driver's ABI
// (handle types, enum values, signatures) but not cuda.h: declaring the subset
// here lets the library build on machines without the CUDA toolkit. The values
// are part of the driver's stable ABI and do not change between releases.
#ifndef FLASHFUSE_RUNTIME_CUDA_DRIVER_TYPES_H
#define FLASHFUSE_RUNTIME_CUDA_DRIVER_TYPES_H

#include <cstddef>
#include <cstdint>

namespace flashfuse::cu {

using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUdeviceptr = std::uint64_t;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;

// CUdevice_attribute
constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

// CUfunction_attribute
constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

// CUjit_option
constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr int CU_JIT_LOG_VERBOSE = 12;

// CUdriverProcAddress_flags / CUdriverProcAddressQueryResult
constexpr std::uint64_t CU_GET_PROC_ADDRESS_DEFAULT = 0;
constexpr int CU_GET_PROC_ADDRESS_SUCCESS = 0;

// CUtensorMap (cuda.h): 128 opaque bytes, 64-byte aligned, filled by
// cuTensorMapEncodeTiled and passed to TMA kernels by value.
struct alignas(64) CUtensorMap {
  std::uint64_t opaque[16];
};
// CUtensorMapDataType, CUtensorMapInterleave, CUtensorMapSwizzle,
// CUtensorMapL2promotion, CUtensorMapFloatOOBfill
constexpr int CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0; // e4m3 bytes
constexpr int CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6;
constexpr int CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9;
constexpr int CU_TENSOR_MAP_INTERLEAVE_NONE = 0;
constexpr int CU_TENSOR_MAP_SWIZZLE_32B = 1;
constexpr int CU_TENSOR_MAP_SWIZZLE_64B = 2;
constexpr int CU_TENSOR_MAP_SWIZZLE_128B = 3;
constexpr int CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2;
constexpr int CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0;
// CU_STREAM_PER_THREAD: the calling thread's default stream.
inline CUstream const kStreamPerThread = reinterpret_cast<CUstream>(0x2);
// CUstreamCaptureStatus (cuStreamGetCaptureInfo).
constexpr int CU_STREAM_CAPTURE_STATUS_NONE = 0;
constexpr int CU_STREAM_CAPTURE_STATUS_ACTIVE = 1;
constexpr int CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2;

// cuLaunchKernelEx's launch configuration (cuda.h), for the decode kernels
// launched as thread-block clusters (KERNEL_ABI.md "Decode": merge_splits
// 2). Only the cluster dimension is ever set; the other members of the
// value union are not declared, its 64 bytes and 8-byte alignment (it
// holds pointers in cuda.h) are. The sizes are checked below: these
// structs are passed to the driver by pointer, so a wrong layout would be
// read silently.
constexpr int CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4; // CUlaunchAttributeID
union alignas(8) CUlaunchAttributeValue {
  char pad[64];
  struct {
    unsigned x, y, z;
  } clusterDim; // in blocks; each must divide the grid's dimension
};
struct CUlaunchAttribute {
  int id; // CUlaunchAttributeID
  char pad[8 - sizeof(int)];
  CUlaunchAttributeValue value;
};
struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes; // dynamic shared memory per block
  CUstream hStream;
  CUlaunchAttribute *attrs; // null when numAttrs is 0
  unsigned numAttrs;
};
static_assert(sizeof(CUlaunchAttributeValue) == 64 &&
                  alignof(CUlaunchAttributeValue) == 8,
              "CUlaunchAttributeValue is 64 bytes, 8-aligned in cuda.h");
static_assert(sizeof(CUlaunchAttribute) == 72 &&
                  offsetof(CUlaunchAttribute, value) == 8,
              "CUlaunchAttribute is an id padded to 8 bytes, then the value");
static_assert(sizeof(CUlaunchConfig) == 56 &&
                  offsetof(CUlaunchConfig, hStream) == 32 &&
                  offsetof(CUlaunchConfig, attrs) == 40 &&
                  offsetof(CUlaunchConfig, numAttrs) == 48,
              "CUlaunchConfig's layout is cuda.h's (64-bit ABI)");

// The driver API version whose entry-point signatures the table in driver.h
// is written against; cuGetProcAddress returns the variant of each symbol
// that matches it (for example cuCtxPushCurrent_v2).
constexpr int kDriverApiVersion = 12000;

} // namespace flashfuse::cu

#endif // FLASHFUSE_RUNTIME_CUDA_DRIVER_TYPES_H
