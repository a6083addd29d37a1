// flashfuse-run: run one kernel of an artifact on random data, check it
// against a GPU reference with FlashAttention's rule, and time it.
#include "compare.h"
#include "flashfuse/runtime.hpp"
#include "options.h"
#include "problem.h"
#include "random_fill.h"
#include "reference.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

using namespace flashfuse;
using namespace flashfuse::run;

namespace {

constexpr int kExitMismatch = 1;
constexpr int kExitError = 2;

void cudaCheck(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void cudaCheck(const char *error, const char *what) {
  if (error)
    throw std::runtime_error(std::string(what) + ": " + error);
}

// Device memory owned for the life of the run.
class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes)
      cudaCheck(cudaMalloc(&ptr_, bytes), "allocating device memory");
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  template <typename T = void> T *get() const { return static_cast<T *>(ptr_); }
  size_t bytes() const { return bytes_; }
  // 0xff bytes are NaN in f16, bf16 and f32: any element the kernel fails to
  // write stays NaN and fails the comparison.
  void poison() { cudaCheck(cudaMemset(ptr_, 0xff, bytes_), "poisoning"); }

private:
  void *ptr_ = nullptr;
  size_t bytes_;
};

struct Layout4 {
  int64_t size[4];
  int64_t stride[4];
  size_t elements() const {
    return size_t(size[0]) * size[1] * size[2] * size[3];
  }
};

// [B, H, S, D] sizes and strides for the chosen memory layout.
Layout4 layoutOf(int64_t b, int64_t h, int64_t s, int64_t d, Layout layout) {
  Layout4 l{{b, h, s, d}, {}};
  if (layout == Layout::BHSD) {
    l.stride[0] = h * s * d;
    l.stride[1] = s * d;
    l.stride[2] = d;
  } else {
    l.stride[0] = s * h * d;
    l.stride[1] = d;
    l.stride[2] = h * d;
  }
  l.stride[3] = 1;
  return l;
}

// Device O in the kernel's dtype and layout -> host f32, contiguous BHSD.
std::vector<float> gatherOutput(const DeviceBuffer &o, const Layout4 &l,
                                flashfuse_dtype dtype) {
  std::vector<uint16_t> raw(l.elements());
  cudaCheck(cudaMemcpy(raw.data(), o.get(), o.bytes(), cudaMemcpyDeviceToHost),
            "copying the output back");
  std::vector<float> out(l.elements());
  size_t n = 0;
  for (int64_t b = 0; b < l.size[0]; ++b)
    for (int64_t h = 0; h < l.size[1]; ++h)
      for (int64_t s = 0; s < l.size[2]; ++s)
        for (int64_t d = 0; d < l.size[3]; ++d) {
          uint16_t bits = raw[b * l.stride[0] + h * l.stride[1] +
                              s * l.stride[2] + d];
          if (dtype == FLASHFUSE_DTYPE_F16) {
            __half x;
            std::memcpy(&x, &bits, 2);
            out[n++] = __half2float(x);
          } else {
            __nv_bfloat16 x;
            std::memcpy(&x, &bits, 2);
            out[n++] = __bfloat162float(x);
          }
        }
  return out;
}

std::vector<float> toHost(const DeviceBuffer &buffer) {
  std::vector<float> out(buffer.bytes() / sizeof(float));
  cudaCheck(cudaMemcpy(out.data(), buffer.get(), buffer.bytes(),
                       cudaMemcpyDeviceToHost),
            "copying results back");
  return out;
}

// Picks the kernel (no GPU needed) and prints which.
int selectKernel(const Manifest &manifest, const Options &o) {
  std::vector<flashfuse_kernel_info> kernels = manifest.kernels();
  if (!o.kernelName.empty()) {
    for (size_t i = 0; i < kernels.size(); ++i)
      if (o.kernelName == kernels[i].name)
        return static_cast<int>(i);
    std::string names;
    for (const auto &k : kernels)
      names += std::string(" ") + k.name;
    throw Error(FLASHFUSE_ERROR_NOT_FOUND,
                "no kernel named '" + o.kernelName + "'; the artifact has:" +
                    names);
  }
  flashfuse_variant v{};
  v.kind = FLASHFUSE_KIND_FORWARD;
  v.dtype = o.dtype.value_or(FLASHFUSE_DTYPE_F16);
  v.head_dim = o.headDim.value_or(128);
  v.head_dim_v = o.headDimV.value_or(v.head_dim);
  v.causal = o.causal.value_or(FLASHFUSE_CAUSAL_NONE);
  v.window = o.window.has_value();
  v.softcap = o.softcap.has_value();
  v.bias = o.bias;
  v.mask = o.mask;
  v.dropout = o.dropout.has_value();
  return manifest.find(v);
}

flashfuse_forward_args makeArgs(const Options &o,
                                const flashfuse_kernel_info &info,
                                const Layout4 &q, const Layout4 &k,
                                const Layout4 &v, const Layout4 &out) {
  const flashfuse_variant &var = info.variant;
  flashfuse_forward_args a;
  flashfuse_forward_args_init(&a);
  a.dtype = var.dtype;
  a.batch = o.batch;
  a.heads_q = o.headsQ;
  a.heads_kv = o.headsKv;
  a.seq_q = o.seqQ;
  a.seq_k = o.seqK;
  a.head_dim = var.head_dim;
  a.head_dim_v = var.head_dim_v;
  std::copy(q.stride, q.stride + 4, a.q_stride);
  std::copy(k.stride, k.stride + 4, a.k_stride);
  std::copy(v.stride, v.stride + 4, a.v_stride);
  std::copy(out.stride, out.stride + 4, a.o_stride);
  const int64_t score[4] = {o.headsQ * o.seqQ * o.seqK, o.seqQ * o.seqK,
                            o.seqK, 1};
  std::copy(score, score + 4, a.bias_stride);
  std::copy(score, score + 4, a.mask_stride);
  a.scale = o.scale.value_or(1.0f / std::sqrt(float(var.head_dim)));
  if (var.window) {
    a.window_left = o.window ? o.window->first : -1;
    a.window_right = o.window ? o.window->second : -1;
  }
  if (var.softcap)
    a.softcap = o.softcap.value_or(30.0f);
  if (var.dropout)
    a.dropout_p = o.dropout.value_or(0.0f);
  a.seed = o.seed;
  return a;
}

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int runKernel(const Options &o) {
  Manifest manifest(o.artifactDir);
  int index = selectKernel(manifest, o);
  flashfuse_kernel_info info = manifest.kernels()[index];
  const flashfuse_variant &var = info.variant;
  Layout4 lq = layoutOf(o.batch, o.headsQ, o.seqQ, var.head_dim, o.layout);
  Layout4 lk = layoutOf(o.batch, o.headsKv, o.seqK, var.head_dim, o.layout);
  Layout4 lv = layoutOf(o.batch, o.headsKv, o.seqK, var.head_dim_v, o.layout);
  Layout4 lo = layoutOf(o.batch, o.headsQ, o.seqQ, var.head_dim_v, o.layout);
  flashfuse_forward_args args = makeArgs(o, info, lq, lk, lv, lo);
  std::printf("kernel %s: %s %s D=%d Dv=%d causal=%d window=%d softcap=%d "
              "bias=%d mask=%d dropout=%d\n",
              info.name, var.kind == FLASHFUSE_KIND_FORWARD ? "forward" : "?",
              var.dtype == FLASHFUSE_DTYPE_F16 ? "f16" : "bf16", var.head_dim,
              var.head_dim_v, var.causal, var.window, var.softcap, var.bias,
              var.mask, var.dropout);
  std::printf("shape B=%lld Hq=%lld Hkv=%lld Sq=%lld Sk=%lld layout=%s\n",
              (long long)o.batch, (long long)o.headsQ, (long long)o.headsKv,
              (long long)o.seqQ, (long long)o.seqK,
              o.layout == Layout::BHSD ? "bhsd" : "bshd");

  // The runtime is asked first: on a machine without a driver it gives the
  // clearest message. The CUDA runtime then works in the same (primary)
  // context.
  Context context(o.device);
  int32_t ordinal = 0;
  check(flashfuse_context_device(context.get(), &ordinal, nullptr, nullptr,
                                 nullptr));
  cudaCheck(cudaSetDevice(ordinal), "selecting the device");
  Artifact artifact = context.load(o.artifactDir);
  Kernel kernel = artifact.kernel(info.name);
  std::printf("device %d sm_%d, module from %s\n", ordinal, context.arch(),
              artifact.usesCubin() ? "cubin" : "PTX (JIT)");

  const size_t elem = 2;
  DeviceBuffer q(lq.elements() * elem), k(lk.elements() * elem),
      v(lv.elements() * elem), out(lo.elements() * elem);
  const size_t rows = size_t(o.batch) * o.headsQ * o.seqQ;
  const size_t scores = rows * o.seqK;
  DeviceBuffer lse(rows * sizeof(float));
  DeviceBuffer bias(var.bias ? scores * sizeof(float) : 0);
  DeviceBuffer mask(var.mask ? scores : 0);
  uint64_t seed = o.seedGiven
                      ? o.seed
                      : uint64_t(std::chrono::steady_clock::now()
                                     .time_since_epoch()
                                     .count());
  std::printf("data seed %llu\n", (unsigned long long)seed);
  ElementType type =
      var.dtype == FLASHFUSE_DTYPE_F16 ? ElementType::F16 : ElementType::BF16;
  cudaCheck(fillNormal(type, q.get(), lq.elements(), seed * 4 + 0), "filling q");
  cudaCheck(fillNormal(type, k.get(), lk.elements(), seed * 4 + 1), "filling k");
  cudaCheck(fillNormal(type, v.get(), lv.elements(), seed * 4 + 2), "filling v");
  if (var.bias)
    cudaCheck(fillNormalF32(bias.get<float>(), scores, seed * 4 + 3),
              "filling bias");
  if (var.mask)
    cudaCheck(fillMask(mask.get<int8_t>(), scores, 0.9f, seed * 4 + 3),
              "filling mask");
  args.q = q.get();
  args.k = k.get();
  args.v = v.get();
  args.o = out.get();
  args.lse = lse.get<float>();
  args.bias = var.bias ? bias.get<const float>() : nullptr;
  args.mask = var.mask ? mask.get<const int8_t>() : nullptr;

  cudaStream_t stream;
  cudaCheck(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
            "creating a stream");
  out.poison();
  lse.poison();
  // cudaMemset runs on the legacy default stream, which a non-blocking
  // stream does not wait for: without this the poison could land after the
  // kernel's writes (seen on an H200 as a flaky LSE at 8x16x2048x256).
  cudaCheck(cudaDeviceSynchronize(), "poisoning the outputs");
  kernel.forward(args, stream);
  cudaCheck(cudaStreamSynchronize(stream), "running the kernel");

  int status = 0;
  if (!o.check) {
    std::printf("numerics not checked (--no-check)\n");
  } else if (args.dropout_p > 0) {
    std::printf("numerics not checked: dropout_p > 0 draws random numbers "
                "the reference cannot reproduce (run with --dropout 0)\n");
  } else {
    Problem p{type, var.causal, args};
    DeviceBuffer refOut(lo.elements() * sizeof(float)),
        lowOut(lo.elements() * sizeof(float));
    DeviceBuffer refLse(rows * sizeof(float)), lowLse(rows * sizeof(float));
    cudaCheck(referenceAttention(p, q.get(), k.get(), v.get(),
                                 refOut.get<float>(), refLse.get<float>(),
                                 false),
              "f32 reference");
    cudaCheck(referenceAttention(p, q.get(), k.get(), v.get(),
                                 lowOut.get<float>(), lowLse.get<float>(),
                                 true),
              "low-precision reference");
    Verdict vo = compareWithReference("O", gatherOutput(out, lo, var.dtype),
                                      toHost(refOut), toHost(lowOut));
    Verdict vl =
        compareWithReference("LSE", toHost(lse), toHost(refLse), toHost(lowLse));
    std::printf("%s\n%s\n", vo.summary.c_str(), vl.summary.c_str());
    if (!vo.pass || !vl.pass)
      status = kExitMismatch;
  }

  // Timing: warm-up, then one event pair per launch; the median is robust
  // to the occasional preempted run.
  for (int i = 0; i < o.warmup; ++i)
    kernel.forward(args, stream);
  std::vector<cudaEvent_t> events(2 * o.iters);
  for (cudaEvent_t &e : events)
    cudaCheck(cudaEventCreate(&e), "creating events");
  for (int i = 0; i < o.iters; ++i) {
    cudaCheck(cudaEventRecord(events[2 * i], stream), "recording an event");
    kernel.forward(args, stream);
    cudaCheck(cudaEventRecord(events[2 * i + 1], stream), "recording an event");
  }
  cudaCheck(cudaStreamSynchronize(stream), "running the timed launches");
  std::vector<float> ms(o.iters);
  for (int i = 0; i < o.iters; ++i)
    cudaCheck(cudaEventElapsedTime(&ms[i], events[2 * i], events[2 * i + 1]),
              "reading events");
  for (cudaEvent_t e : events)
    cudaEventDestroy(e);
  cudaStreamDestroy(stream);
  double t = median(ms);
  double flops = 4.0 * o.batch * o.headsQ * double(o.seqQ) * o.seqK *
                 var.head_dim * (var.causal ? 0.5 : 1.0);
  std::printf("time %.4f ms (median of %d, %d warm-up)  %.1f TFLOP/s\n", t,
              o.iters, o.warmup, flops / (t * 1e-3) / 1e12);
  std::printf("%s\n", status == 0 ? "RESULT PASS" : "RESULT FAIL");
  return status;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  std::string error;
  if (!parseOptions(argc, argv, options, error)) {
    if (error.empty()) {
      std::fputs(usage(), stdout);
      return 0;
    }
    std::fprintf(stderr, "flashfuse-run: %s\n%s", error.c_str(), usage());
    return kExitError;
  }
  try {
    return runKernel(options);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "flashfuse-run: error: %s\n", e.what());
    return kExitError;
  }
}
