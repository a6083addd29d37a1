// Random inputs generated on the GPU from a seed (counter-based, so the same
// seed gives the same data whatever the launch configuration).
#ifndef FLASHFUSE_RUN_RANDOM_FILL_H
#define FLASHFUSE_RUN_RANDOM_FILL_H

#include "problem.h"

#include <cstddef>
#include <cstdint>

namespace flashfuse::run {

// Each returns a CUDA error string or nullptr.
const char *fillNormal(ElementType type, void *data, size_t count,
                       uint64_t seed);
const char *fillNormalF32(float *data, size_t count, uint64_t seed);
// 1 with probability keep, else 0.
const char *fillMask(int8_t *data, size_t count, float keep, uint64_t seed);

} // namespace flashfuse::run

#endif // FLASHFUSE_RUN_RANDOM_FILL_H
