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
  int64_t diagonal = p.causal == 1 ? i : i + p.a.seq_k - p.a.seq_q;
  if (p.causal != 0 && j > diagonal)
    return false;
  if (p.a.window_left >= 0 && j < diagonal - p.a.window_left)
    return false;
  if (p.a.window_right >= 0 && j > diagonal + p.a.window_right)
    return false;
  if (p.a.mask && p.a.mask[((b * p.a.heads_q + h) * p.a.seq_q + i) * p.a.seq_k + j] == 0)
    return false;
  return true;
}

template <typename T, bool Low>
__device__ float score(const Problem &p, const float *qRow, const T *kRow,
                       int64_t b, int64_t h, int64_t i, int64_t j) {
  float s = 0.f;
  for (int64_t d = 0; d < p.a.head_dim; ++d)
    s += qRow[d] * toFloat(kRow[d]);
  // In low precision q was pre-scaled and rounded, as `(q * scale) @ k^T`
  // in the kernel's dtype would be.
  s = Low ? roundTo<T>(s) : s * p.a.scale;
  if (p.a.softcap > 0.f) {
    s = p.a.softcap * tanhf(s / p.a.softcap);
    if (Low)
      s = roundTo<T>(s);
  }
  if (p.a.bias) {
    s += p.a.bias[((b * p.a.heads_q + h) * p.a.seq_q + i) * p.a.seq_k + j];
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
  const int64_t hk = h / (p.a.heads_q / p.a.heads_kv);
  const T *qPtr = q + b * p.a.q_stride[0] + h * p.a.q_stride[1] + i * p.a.q_stride[2];
  for (int64_t d = threadIdx.x; d < p.a.head_dim; d += kThreads) {
    float x = toFloat(qPtr[d]);
    qRow[d] = Low ? roundTo<T>(x * p.a.scale) : x;
  }
  __syncthreads();
  const T *kBase = k + b * p.a.k_stride[0] + hk * p.a.k_stride[1];
  const T *vBase = v + b * p.a.v_stride[0] + hk * p.a.v_stride[1];
  const int64_t row = (b * p.a.heads_q + h) * p.a.seq_q + i;

  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < p.a.seq_k; j += kThreads)
    if (keyAllowed(p, b, h, i, j))
      m = fmaxf(m, score<T, Low>(p, qRow, kBase + j * p.a.k_stride[2], b, h, i, j));
  m = blockReduce<true>(m, scratch);
  if (m == -INFINITY) {
    for (int64_t d = threadIdx.x; d < p.a.head_dim_v; d += kThreads)
      out[row * p.a.head_dim_v + d] = 0.f;
    if (threadIdx.x == 0)
      lse[row] = -INFINITY;
    return;
  }

  float l = 0.f;
  for (int64_t j = threadIdx.x; j < p.a.seq_k; j += kThreads)
    if (keyAllowed(p, b, h, i, j))
      l += expf(score<T, Low>(p, qRow, kBase + j * p.a.k_stride[2], b, h, i, j) - m);
  l = blockReduce<false>(l, scratch);

  float acc[kMaxColumnsPerThread] = {};
  for (int64_t j0 = 0; j0 < p.a.seq_k; j0 += kThreads) {
    int64_t j = j0 + threadIdx.x;
    float pj = 0.f;
    if (j < p.a.seq_k && keyAllowed(p, b, h, i, j)) {
      pj = expf(score<T, Low>(p, qRow, kBase + j * p.a.k_stride[2], b, h, i, j) - m) / l;
      if (Low)
        pj = roundTo<T>(pj);
    }
    __syncthreads(); // previous chunk's probabilities are consumed
    probs[threadIdx.x] = pj;
    __syncthreads();
    int64_t chunk = p.a.seq_k - j0 < kThreads ? p.a.seq_k - j0 : kThreads;
    for (int c = 0; c < kMaxColumnsPerThread; ++c) {
      int64_t d = threadIdx.x + c * kThreads;
      if (d >= p.a.head_dim_v)
        break;
      for (int64_t jj = 0; jj < chunk; ++jj)
        acc[c] += probs[jj] * toFloat(vBase[(j0 + jj) * p.a.v_stride[2] + d]);
    }
  }
  for (int c = 0; c < kMaxColumnsPerThread; ++c) {
    int64_t d = threadIdx.x + c * kThreads;
    if (d < p.a.head_dim_v)
      out[row * p.a.head_dim_v + d] = Low ? roundTo<T>(acc[c]) : acc[c];
  }
  if (threadIdx.x == 0)
    lse[row] = m + logf(l);
}

template <typename T>
const char *launch(const Problem &p, const void *q, const void *k,
                   const void *v, float *out, float *lse, bool low) {
  if (p.a.head_dim_v > kThreads * kMaxColumnsPerThread)
    return "reference: head_dim_v too large";
  dim3 grid(static_cast<unsigned>(p.a.seq_q), static_cast<unsigned>(p.a.heads_q),
            static_cast<unsigned>(p.a.batch));
  size_t smem = p.a.head_dim * sizeof(float);
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
  if (p.a.heads_q > 65535 || p.a.batch > 65535)
    return "reference: heads or batch beyond the grid limit";
  return p.type == ElementType::F16
             ? launch<__half>(p, q, k, v, out, lse, lowPrecision)
             : launch<__nv_bfloat16>(p, q, k, v, out, lse, lowPrecision);
}

} // namespace flashfuse::run
