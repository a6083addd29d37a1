#include "reference.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>

namespace flashfuse::run {

namespace {

constexpr int kThreads = 128;
constexpr int kMaxColumnsPerThread = 8; // Dv <= 1024

template <typename T> __device__ float toFloat(T x);
template <> __device__ float toFloat<__half>(__half x) { return __half2float(x); }
template <> __device__ float toFloat<__nv_bfloat16>(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
template <typename T> __device__ float roundTo(float x);
template <> __device__ float roundTo<__half>(float x) {
  return __half2float(__float2half_rn(x));
}
template <> __device__ float roundTo<__nv_bfloat16>(float x) {
  return __bfloat162float(__float2bfloat16_rn(x));
}

// Which keys query row i may attend to. Causal and window bounds are both
// measured from the diagonal: the top-left one (j = i) for top_left
// causality, otherwise the bottom-right one (j = i + Sk - Sq), as in
// FlashAttention.
__device__ bool keyAllowed(const Problem &p, int64_t b, int64_t h, int64_t i,
                           int64_t j) {
  int64_t diagonal = p.causal == 1 ? i : i + p.seqK - p.seqQ;
  if (p.causal != 0 && j > diagonal)
    return false;
  if (p.windowLeft >= 0 && j < diagonal - p.windowLeft)
    return false;
  if (p.windowRight >= 0 && j > diagonal + p.windowRight)
    return false;
  if (p.mask && p.mask[((b * p.headsQ + h) * p.seqQ + i) * p.seqK + j] == 0)
    return false;
  return true;
}

template <typename T, bool Low>
__device__ float score(const Problem &p, const float *qRow, const T *kRow,
                       int64_t b, int64_t h, int64_t i, int64_t j) {
  float s = 0.f;
  for (int64_t d = 0; d < p.headDim; ++d)
    s += qRow[d] * toFloat(kRow[d]);
  // In low precision q was pre-scaled and rounded, as `(q * scale) @ k^T`
  // in the kernel's dtype would be.
  s = Low ? roundTo<T>(s) : s * p.scale;
  if (p.softcap > 0.f) {
    s = p.softcap * tanhf(s / p.softcap);
    if (Low)
      s = roundTo<T>(s);
  }
  if (p.bias) {
    s += p.bias[((b * p.headsQ + h) * p.seqQ + i) * p.seqK + j];
    if (Low)
      s = roundTo<T>(s);
  }
  return s;
}

template <bool IsMax> __device__ float blockReduce(float x, float *scratch) {
  for (int offset = 16; offset > 0; offset /= 2) {
    float y = __shfl_xor_sync(0xffffffffu, x, offset);
    x = IsMax ? fmaxf(x, y) : x + y;
  }
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads(); // scratch may still be read from the previous reduction
  if (lane == 0)
    scratch[warp] = x;
  __syncthreads();
  float r = scratch[0];
  for (int w = 1; w < kThreads / 32; ++w)
    r = IsMax ? fmaxf(r, scratch[w]) : r + scratch[w];
  return r;
}

template <typename T, bool Low>
__global__ void __launch_bounds__(kThreads)
    attentionRow(Problem p, const T *q, const T *k, const T *v, float *out,
                 float *lse) {
  extern __shared__ float qRow[]; // headDim floats
  __shared__ float probs[kThreads];
  __shared__ float scratch[kThreads / 32];
  const int64_t i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int64_t hk = h / (p.headsQ / p.headsKv);
  const T *qPtr = q + b * p.qStride[0] + h * p.qStride[1] + i * p.qStride[2];
  for (int64_t d = threadIdx.x; d < p.headDim; d += kThreads) {
    float x = toFloat(qPtr[d]);
    qRow[d] = Low ? roundTo<T>(x * p.scale) : x;
  }
  __syncthreads();
  const T *kBase = k + b * p.kStride[0] + hk * p.kStride[1];
  const T *vBase = v + b * p.vStride[0] + hk * p.vStride[1];
  const int64_t row = (b * p.headsQ + h) * p.seqQ + i;

  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < p.seqK; j += kThreads)
    if (keyAllowed(p, b, h, i, j))
      m = fmaxf(m, score<T, Low>(p, qRow, kBase + j * p.kStride[2], b, h, i, j));
  m = blockReduce<true>(m, scratch);
  if (m == -INFINITY) {
    for (int64_t d = threadIdx.x; d < p.headDimV; d += kThreads)
      out[row * p.headDimV + d] = 0.f;
    if (threadIdx.x == 0)
      lse[row] = -INFINITY;
    return;
  }

  float l = 0.f;
  for (int64_t j = threadIdx.x; j < p.seqK; j += kThreads)
    if (keyAllowed(p, b, h, i, j))
      l += expf(score<T, Low>(p, qRow, kBase + j * p.kStride[2], b, h, i, j) - m);
  l = blockReduce<false>(l, scratch);

  float acc[kMaxColumnsPerThread] = {};
  for (int64_t j0 = 0; j0 < p.seqK; j0 += kThreads) {
    int64_t j = j0 + threadIdx.x;
    float pj = 0.f;
    if (j < p.seqK && keyAllowed(p, b, h, i, j)) {
      pj = expf(score<T, Low>(p, qRow, kBase + j * p.kStride[2], b, h, i, j) - m) / l;
      if (Low)
        pj = roundTo<T>(pj);
    }
    __syncthreads(); // previous chunk's probabilities are consumed
    probs[threadIdx.x] = pj;
    __syncthreads();
    int64_t chunk = p.seqK - j0 < kThreads ? p.seqK - j0 : kThreads;
    for (int c = 0; c < kMaxColumnsPerThread; ++c) {
      int64_t d = threadIdx.x + c * kThreads;
      if (d >= p.headDimV)
        break;
      for (int64_t jj = 0; jj < chunk; ++jj)
        acc[c] += probs[jj] * toFloat(vBase[(j0 + jj) * p.vStride[2] + d]);
    }
  }
  for (int c = 0; c < kMaxColumnsPerThread; ++c) {
    int64_t d = threadIdx.x + c * kThreads;
    if (d < p.headDimV)
      out[row * p.headDimV + d] = Low ? roundTo<T>(acc[c]) : acc[c];
  }
  if (threadIdx.x == 0)
    lse[row] = m + logf(l);
}

template <typename T>
const char *launch(const Problem &p, const void *q, const void *k,
                   const void *v, float *out, float *lse, bool low) {
  if (p.headDimV > kThreads * kMaxColumnsPerThread)
    return "reference: head_dim_v too large";
  dim3 grid(static_cast<unsigned>(p.seqQ), static_cast<unsigned>(p.headsQ),
            static_cast<unsigned>(p.batch));
  size_t smem = p.headDim * sizeof(float);
  auto qt = static_cast<const T *>(q);
  auto kt = static_cast<const T *>(k);
  auto vt = static_cast<const T *>(v);
  if (low)
    attentionRow<T, true><<<grid, kThreads, smem>>>(p, qt, kt, vt, out, lse);
  else
    attentionRow<T, false><<<grid, kThreads, smem>>>(p, qt, kt, vt, out, lse);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

} // namespace

const char *referenceAttention(const Problem &p, const void *q, const void *k,
                               const void *v, float *out, float *lse,
                               bool lowPrecision) {
  if (p.headsQ > 65535 || p.batch > 65535)
    return "reference: heads or batch beyond the grid limit";
  return p.type == ElementType::F16
             ? launch<__half>(p, q, k, v, out, lse, lowPrecision)
             : launch<__nv_bfloat16>(p, q, k, v, out, lse, lowPrecision);
}

} // namespace flashfuse::run
