// One attention problem as the reference kernels see it (plain data, shared
// between host code and CUDA code).
#ifndef FLASHFUSE_RUN_PROBLEM_H
#define FLASHFUSE_RUN_PROBLEM_H

#include "flashfuse/runtime.h"

#include <cstdint>

namespace flashfuse::run {

enum class ElementType { F16, BF16 };

// The launch's own arguments (sizes, strides, options, bias/mask pointers)
// plus what the kernel's variant fixes, so the reference computes exactly
// what was launched.
struct Problem {
  ElementType type;
  int causal; // 0 none, 1 top_left, 2 bottom_right
  flashfuse_forward_args a;
};

} // namespace flashfuse::run

#endif // FLASHFUSE_RUN_PROBLEM_H
