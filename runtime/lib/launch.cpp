#include "launch.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace flashfuse {

namespace {

const char *typeName(flashfuse_param_type t) {
  switch (t) {
  case FLASHFUSE_PARAM_MEMREF:
    return "memref";
  case FLASHFUSE_PARAM_I32:
    return "i32";
  case FLASHFUSE_PARAM_I64:
    return "i64";
  case FLASHFUSE_PARAM_F32:
    return "f32";
  }
  return "?";
}

const flashfuse_arg *findArg(const flashfuse_arg *args, int n,
                             const std::string &name) {
  for (int i = 0; i < n; ++i)
    if (args[i].name && name == args[i].name)
      return &args[i];
  return nullptr;
}

flashfuse_status gridSize(const KernelSpec &spec, const flashfuse_arg *args,
                          int n, const flashfuse_context &c,
                          unsigned grid[3]) {
  auto get = [&](const char *name, int64_t &value) {
    const flashfuse_arg *a = findArg(args, n, name);
    if (!a || a->type != FLASHFUSE_PARAM_I32 || a->i <= 0)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  concat("launching '", spec.name, "': the grid needs a "
                         "positive i32 argument '", name, "'"));
    value = a->i;
    return FLASHFUSE_SUCCESS;
  };
  int64_t batch = 0, heads = 0, seq = 0, seqK = 0;
  // KERNEL_ABI.md: `backward` has one block per key block; the postprocess
  // covers both grad_q's query rows and grad_k/grad_v's key rows.
  flashfuse_kernel_kind kind = spec.variant.kind;
  bool overKeys = kind == FLASHFUSE_KIND_BACKWARD;
  bool overBoth = kind == FLASHFUSE_KIND_BACKWARD_POSTPROCESS;
  if (auto s = get("batch", batch); s != FLASHFUSE_SUCCESS)
    return s;
  if (auto s = get("heads_q", heads); s != FLASHFUSE_SUCCESS)
    return s;
  if (auto s = get(overKeys ? "seq_k" : "seq_q", seq); s != FLASHFUSE_SUCCESS)
    return s;
  if (overBoth) {
    if (auto s = get("seq_k", seqK); s != FLASHFUSE_SUCCESS)
      return s;
    seq = seq > seqK ? seq : seqK;
  }
  int64_t block = overKeys ? spec.block_n : spec.block_m;
  int64_t dims[3] = {(seq + block - 1) / block, heads, batch};
  const char *what[3] = {overKeys   ? "key blocks"
                         : overBoth ? "row blocks"
                                    : "query blocks",
                         "heads_q", "batch"};
  for (int i = 0; i < 3; ++i) {
    if (dims[i] > c.maxGrid[i])
      return fail(FLASHFUSE_ERROR_UNSUPPORTED,
                  concat("launching '", spec.name, "': ", what[i], " = ",
                         dims[i], " exceeds this GPU's grid limit ",
                         c.maxGrid[i], " in dimension ", "xyz"[i]));
    grid[i] = static_cast<unsigned>(dims[i]);
  }
  return FLASHFUSE_SUCCESS;
}

} // namespace

flashfuse_status bindParams(const KernelSpec &spec, const flashfuse_arg *args,
                            int numArgs, bool strict,
                            std::vector<ParamSlot> &slots) {
  if (numArgs < 0 || (numArgs > 0 && !args))
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT, "bad argument array");
  auto bad = [&](const std::string &what) {
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                concat("launching '", spec.name, "': ", what));
  };

  slots.clear();
  slots.reserve(spec.params.size() * 5);
  for (const ParamSpec &p : spec.params) {
    const flashfuse_arg *a = findArg(args, numArgs, p.name);
    if (!a)
      return bad(concat("the kernel takes '", typeName(p.type), ":", p.name,
                        "' but no argument of that name was given"));
    if (a->type != p.type)
      return bad(concat("argument '", p.name, "' is ", typeName(a->type),
                        " but the kernel takes ", typeName(p.type)));
    ParamSlot s{};
    switch (p.type) {
    case FLASHFUSE_PARAM_MEMREF: {
      auto address = reinterpret_cast<uintptr_t>(a->ptr);
      if (!a->ptr)
        return bad(concat("buffer '", p.name, "' is a null pointer"));
      if (address % 16 != 0)
        return bad(concat("buffer '", p.name, "' at ", hexAddress(address),
                          " is not 16-byte aligned (the kernels copy 16 "
                          "bytes at a time)"));
      if (a->numel <= 0)
        return bad(concat("buffer '", p.name, "' has ", a->numel,
                          " elements"));
      // MLIR's memref calling convention: allocated, aligned, offset, size,
      // stride (docs/KERNEL_ABI.md).
      ParamSlot f[5];
      f[0].ptr = a->ptr;
      f[1].ptr = a->ptr;
      f[2].i64 = 0;
      f[3].i64 = a->numel;
      f[4].i64 = 1;
      slots.insert(slots.end(), f, f + 5);
      continue;
    }
    case FLASHFUSE_PARAM_I32:
      if (a->i < std::numeric_limits<int32_t>::min() ||
          a->i > std::numeric_limits<int32_t>::max())
        return bad(concat("'", p.name, "' = ", a->i, " does not fit in i32"));
      s.i64 = 0;
      s.i32 = static_cast<int32_t>(a->i);
      break;
    case FLASHFUSE_PARAM_I64:
      s.i64 = a->i;
      break;
    case FLASHFUSE_PARAM_F32:
      if (!std::isfinite(a->f))
        return bad(concat("'", p.name, "' = ", a->f, " is not finite"));
      s.i64 = 0;
      s.f32 = static_cast<float>(a->f);
      break;
    }
    slots.push_back(s);
  }
  if (strict)
    for (int i = 0; i < numArgs; ++i) {
      bool used = false;
      for (const ParamSpec &p : spec.params)
        used = used || (args[i].name && p.name == args[i].name);
      if (!used)
        return bad(concat("the kernel takes no parameter named '",
                          args[i].name ? args[i].name : "(null)", "'"));
    }
  return FLASHFUSE_SUCCESS;
}

flashfuse_status launchNamed(flashfuse_kernel &kernel,
                             const flashfuse_arg *args, int numArgs,
                             void *stream, bool strict) {
  const KernelSpec &spec = *kernel.spec;
  flashfuse_context &c = *kernel.artifact->context;
  std::vector<ParamSlot> slots;
  if (auto s = bindParams(spec, args, numArgs, strict, slots);
      s != FLASHFUSE_SUCCESS)
    return s;
  unsigned grid[3];
  if (auto s = gridSize(spec, args, numArgs, c, grid); s != FLASHFUSE_SUCCESS)
    return s;
  std::vector<void *> params(slots.size());
  for (size_t i = 0; i < slots.size(); ++i)
    params[i] = &slots[i];

  ScopedContext scope(c);
  if (auto s = scope.enter(); s != FLASHFUSE_SUCCESS)
    return s;
  return checkCu(
      *c.api,
      c.api->cuLaunchKernel(kernel.function, grid[0], grid[1], grid[2],
                            static_cast<unsigned>(spec.threads), 1, 1,
                            static_cast<unsigned>(spec.smem),
                            static_cast<cu::CUstream>(stream), params.data(),
                            nullptr),
      concat("launching kernel '", spec.name, "' with grid (", grid[0], ", ",
             grid[1], ", ", grid[2], "), block ", spec.threads, ", ",
             spec.smem, " bytes of shared memory"));
}

} // namespace flashfuse

extern "C" flashfuse_status flashfuse_kernel_launch(flashfuse_kernel *kernel,
                                                    const flashfuse_arg *args,
                                                    int32_t num_args,
                                                    int32_t allow_unused,
                                                    void *stream) {
  return flashfuse::guarded([&] {
    if (!kernel)
      return flashfuse::fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                             "kernel is NULL");
    return flashfuse::launchNamed(*kernel, args, num_args, stream,
                                  /*strict=*/allow_unused == 0);
  });
}
