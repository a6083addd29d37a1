#include "random_fill.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace flashfuse::run {

namespace {

// splitmix64: a good 64-bit mix of (seed, index), enough for test data.
__device__ uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in (0, 1], never 0, so log() below is finite.
__device__ float uniform(uint64_t bits) {
  return (static_cast<float>(bits >> 40) + 1.0f) * (1.0f / 16777216.0f);
}

__device__ float normal(uint64_t seed, size_t i) {
  uint64_t r = mix(seed ^ mix(i));
  float u1 = uniform(r), u2 = uniform(mix(r));
  return sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
}

template <typename T> __device__ T fromFloat(float x);
template <> __device__ __half fromFloat<__half>(float x) {
  return __float2half_rn(x);
}
template <> __device__ __nv_bfloat16 fromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <> __device__ float fromFloat<float>(float x) { return x; }

template <typename T>
__global__ void normalKernel(T *data, size_t count, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x)
    data[i] = fromFloat<T>(normal(seed, i));
}

__global__ void maskKernel(int8_t *data, size_t count, float keep,
                           uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x)
    data[i] = uniform(mix(seed ^ mix(i))) <= keep ? 1 : 0;
}

const char *finish() {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

constexpr int kBlocks = 1024, kThreads = 256;

} // namespace

const char *fillNormal(ElementType type, void *data, size_t count,
                       uint64_t seed) {
  if (type == ElementType::F16)
    normalKernel<<<kBlocks, kThreads>>>(static_cast<__half *>(data), count, seed);
  else
    normalKernel<<<kBlocks, kThreads>>>(static_cast<__nv_bfloat16 *>(data),
                                        count, seed);
  return finish();
}

const char *fillNormalF32(float *data, size_t count, uint64_t seed) {
  normalKernel<<<kBlocks, kThreads>>>(data, count, seed);
  return finish();
}

const char *fillMask(int8_t *data, size_t count, float keep, uint64_t seed) {
  maskKernel<<<kBlocks, kThreads>>>(data, count, keep, seed);
  return finish();
}

} // namespace flashfuse::run
