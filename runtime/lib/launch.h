// Binding named arguments to a kernel's manifest `params` list and launching.
#ifndef FLASHFUSE_RUNTIME_LAUNCH_H
#define FLASHFUSE_RUNTIME_LAUNCH_H

#include "handles.h"

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

// Builds the parameter values from `args` in the order of the kernel's
// `params` list (a memref becomes its five fields) and validates them:
// presence, types, pointer alignment, value ranges. Needs no GPU. With
// `strict`, an argument the kernel does not take is an error.
flashfuse_status bindParams(const KernelSpec &spec, const flashfuse_arg *args,
                            int numArgs, bool strict,
                            std::vector<ParamSlot> &slots);

// Binds the parameters, checks the grid against the device's limits and
// launches. The public generic launch is strict unless asked (an unknown name is most
// likely misspelt); the forward entry point passes every name any forward
// variant may take, so it is not.
flashfuse_status launchNamed(flashfuse_kernel &kernel,
                             const flashfuse_arg *args, int numArgs,
                             void *stream, bool strict);

} // namespace flashfuse

#endif // FLASHFUSE_RUNTIME_LAUNCH_H
