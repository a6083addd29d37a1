// Reference attention on the GPU, written for obviousness rather than speed:
// one block per query row, three passes over the keys (max, sum, output).
#ifndef FLASHFUSE_RUN_REFERENCE_H
#define FLASHFUSE_RUN_REFERENCE_H

#include "problem.h"

namespace flashfuse::run {

// Computes O [B, Hq, Sq, Dv] and LSE [B, Hq, Sq] (contiguous, f32) from q, k,
// v of p.type. With `lowPrecision`, every intermediate that PyTorch's
// attention in the kernel's dtype would round (scaled q, scores, normalised
// probabilities, output) is rounded to that dtype: FlashAttention's out_pt.
// Rows with no key left by the masks get O = 0 and LSE = -inf.
// Returns a CUDA error string or nullptr.
const char *referenceAttention(const Problem &p, const void *q, const void *k,
                               const void *v, float *out, float *lse,
                               bool lowPrecision);

} // namespace flashfuse::run

#endif // FLASHFUSE_RUN_REFERENCE_H
