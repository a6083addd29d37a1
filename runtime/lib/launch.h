// Binding named arguments to a kernel's manifest `params` list and launching.
#ifndef FLASHFUSE_RUNTIME_LAUNCH_H
#define FLASHFUSE_RUNTIME_LAUNCH_H

#include "handles.h"
#include "tensormap.h"

#include "error.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace flashfuse {

// One 8-byte kernel-parameter value; cuLaunchKernel reads as many bytes from
// each slot as the kernel's parameter has.
union ParamSlot {
  const void *ptr;
  int64_t i64;
  int32_t i32;
  float f32;
};

constexpr int64_t kMaxI32 = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxElements = int64_t(1) << 60;

// A 4-D operand of an attention launch: sizes and element strides indexed
// [b, h, s, d] (for a paged cache [page, h, row of the page, d]).
struct Operand {
  const char *name;
  const void *ptr;
  const int64_t *stride;
  int64_t size[4];
  // Bytes per element, which the 16-byte row rule is counted in: 1 for
  // e4m3, 2 otherwise. An f32 O keeps 2: KERNEL_ABI.md asks multiples of 8
  // elements of every 16-bit kernel's operands, its f32 O included.
  int elementBytes = 2;
};

// Elements reachable from the base pointer: 1 + sum (size-1) * stride. A
// dimension of size 1 contributes nothing, whatever its stride.
int64_t span(const int64_t size[4], const int64_t stride[4]);

// What keeps the kernels from reading `op` in place (KERNEL_ABI.md
// "Parameters": non-null, non-negative strides, a contiguous last dim,
// 16-byte rows, counted in op.elementBytes), or "" when nothing does.
std::string operandProblem(const Operand &op);

// What is wrong with the window and softcap options for a kernel of
// variant `v` (an option the kernel was not compiled with must be off), or
// "".
std::string windowSoftcapProblem(const flashfuse_variant &v,
                                 int32_t windowLeft, int32_t windowRight,
                                 float softcap);

// What is wrong with a packed batch's `p` for tensors of `batch` (must be
// 1), `seqQ` and `seqK` rows (the totals), or "" (KERNEL_ABI.md
// "Varlen"); shared by the varlen forward and backward.
std::string varlenProblem(const flashfuse_varlen_args &p, int64_t batch,
                          int64_t seqQ, int64_t seqK);

// What is wrong with an attention launch's sizes for kernels of variant
// `v` (batch, heads and lengths in [1, 2^31), the head dims compiled in,
// whole GQA groups, a finite scale), or "". `Args` is a forward or
// backward argument struct (their fields share these names).
template <typename Args>
std::string attentionShapeProblem(const Args &a, const flashfuse_variant &v) {
  const int64_t sizes[] = {a.batch, a.heads_q, a.heads_kv, a.seq_q, a.seq_k};
  const char *names[] = {"batch", "heads_q", "heads_kv", "seq_q", "seq_k"};
  for (int i = 0; i < 5; ++i)
    if (sizes[i] <= 0 || sizes[i] > kMaxI32)
      return concat(names[i], " = ", sizes[i], " (must be in [1, 2^31))");
  if (a.head_dim != v.head_dim || a.head_dim_v != v.head_dim_v)
    return concat("head dims D=", a.head_dim, " Dv=", a.head_dim_v,
                  " but the kernels were compiled for D=", v.head_dim,
                  " Dv=", v.head_dim_v);
  if (a.heads_q % a.heads_kv != 0)
    return concat("heads_q = ", a.heads_q, " is not a multiple of heads_kv = ",
                  a.heads_kv);
  if (!std::isfinite(a.scale))
    return "scale is not finite";
  return "";
}

// The defaults every attention argument struct starts from (its _init
// entry point): zeroed, f16, scale 1, no window. A null `args` is ignored.
template <typename Args> void initAttentionArgs(Args *args) {
  if (!args)
    return;
  *args = Args{};
  args->dtype = FLASHFUSE_DTYPE_F16;
  args->scale = 1.0f;
  args->window_left = -1;
  args->window_right = -1;
}

// The argument named `name` among args[0..n), or null.
const flashfuse_arg *findArg(const flashfuse_arg *args, int n,
                             const std::string &name);
// The same, searched from args[hint] on and then from the start; `hint`
// becomes the index after the match. A kernel's params are bound in their
// order from arguments listed in much the same order (namedArgs), so most
// lookups end at the first name compared: a decode step binds some 40
// params among 60 arguments, host time that small steps feel.
const flashfuse_arg *findArgFrom(const flashfuse_arg *args, int n,
                                 const std::string &name, int &hint);

// Named arguments for launchNamed / bindParams.
flashfuse_arg buffer(const char *name, const void *ptr, int64_t numel);
flashfuse_arg integer(const char *name, flashfuse_param_type type,
                      int64_t value);
flashfuse_arg real(const char *name, double value);

// Builds the parameter values from `args` in the order of the kernel's
// `params` list (a memref becomes its five fields) and validates them:
// presence, types, pointer alignment, value ranges. Needs no GPU. With
// `strict`, an argument the kernel does not take is an error.
// A tensor-map parameter is described (and checked) from its operand's
// arguments into `maps`, where given, and takes a placeholder slot.
flashfuse_status bindParams(const KernelSpec &spec, const flashfuse_arg *args,
                            int numArgs, bool strict,
                            std::vector<ParamSlot> &slots,
                            std::vector<TensorMapRequest> *maps = nullptr);

// The grid of a launch of `spec` with `args` (KERNEL_ABI.md), checked against the limits of the context's GPU.
flashfuse_status gridSize(const KernelSpec &spec, const flashfuse_arg *args,
                          int n, const flashfuse_context &c, unsigned grid[3]);

// A launch of `grid` blocks of `spec`'s threads and shared memory in
// thread-block clusters of (clusterX, 1, 1), for cuLaunchKernelEx and
// cuOccupancyMaxActiveClusters; `cluster` receives the cluster dimension
// attribute the config points at (it must outlive the config).
cu::CUlaunchConfig clusterLaunchConfig(const KernelSpec &spec,
                                       const unsigned grid[3],
                                       unsigned clusterX, cu::CUstream stream,
                                       cu::CUlaunchAttribute &cluster);

// Launches `kernel` on `stream` with its bound parameter values (one
// pointer per kernel parameter), in the runtime's context. With
// `clusterX` > 1 the blocks are launched as thread-block clusters of
// (clusterX, 1, 1) through cuLaunchKernelEx (which must divide grid[0]):
// the decode kernels that merge their splits in a cluster (KERNEL_ABI.md
// "Decode", merge_splits 2). A driver without cuLaunchKernelEx is an error
// then; the decode plans ask for clusters only where it has one.
flashfuse_status launchBound(const flashfuse_kernel &kernel,
                             const unsigned grid[3], void **params,
                             void *stream, unsigned clusterX = 1);

// Binds the parameters, checks the grid against the device's limits and
// launches. The public generic launch is strict unless asked (an unknown name is most
// likely misspelt); the forward entry point passes every name any forward
// variant may take, so it is not.
flashfuse_status launchNamed(flashfuse_kernel &kernel,
                             const flashfuse_arg *args, int numArgs,
                             void *stream, bool strict);

} // namespace flashfuse

#endif // FLASHFUSE_RUNTIME_LAUNCH_H
