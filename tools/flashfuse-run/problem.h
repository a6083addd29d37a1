// One attention problem as the reference kernels see it (plain data, shared
// between host code and CUDA code).
#ifndef FLASHFUSE_RUN_PROBLEM_H
#define FLASHFUSE_RUN_PROBLEM_H

#include <cstdint>

namespace flashfuse::run {

enum class ElementType { F16, BF16 };

struct Problem {
  ElementType type;
  int64_t batch, headsQ, headsKv, seqQ, seqK, headDim, headDimV;
  // Element strides [b, h, s, d] of q/k/v (d is contiguous).
  int64_t qStride[4], kStride[4], vStride[4];
  float scale;
  int causal;                   // 0 none, 1 top_left, 2 bottom_right
  int windowLeft, windowRight;  // -1 = unbounded
  float softcap;                // 0 = off
  const float *bias;            // [B, Hq, Sq, Sk] contiguous or null
  const int8_t *mask;           // [B, Hq, Sq, Sk] contiguous or null
};

} // namespace flashfuse::run

#endif // FLASHFUSE_RUN_PROBLEM_H
