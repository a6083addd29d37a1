/* The key order of an FP8 forward's Vt (docs/KERNEL_ABI.md "FP8
 * forwards"). One definition, plain C99 and header-only, for the kernels
 * (flash-lower-to-gpu), the runtime's tensor map of Vt, and the callers
 * that lay Vt out (python/flashfuse/_transpose.py mirrors it).
 *
 * Vt is e4m3 [B, Hkv, Dv, Sk_pad]: the keys of one value column
 * contiguous, because the second product (O += P V, k32 steps) reads its B
 * operand K-major. Within every group of 32 keys the keys are permuted:
 * position p of a group holds key
 *
 *   16 * p[4] + 8 * p[1] + 2 * p[3:2] + p[0]
 *
 * (p[i] the bits of p). That is the order in which the k32 A operand of P
 * finds the probabilities in a thread's own accumulator registers: thread
 * t of a quad holds keys 2t, 2t+1 of each 8-key tile of S, and the operand
 * wants positions 4t..4t+3 (and 16+4t..16+4t+3) in one register each. With
 * keys in their natural order, each 32-key step cost the consumer warps
 * two quad shuffles and about a dozen selects and byte moves per row half.
 *
 * Sk_pad = Sk rounded up to a multiple of the group: the last group's
 * positions are spread over all 32, so every position up to Sk_pad is read
 * and those of keys >= Sk must hold finite codes (zeros: P is 0 there, but
 * 0 * NaN is not). */
#ifndef FLASHFUSE_FP8_VT_LAYOUT_H
#define FLASHFUSE_FP8_VT_LAYOUT_H

#include <stdint.h>

#define FLASHFUSE_FP8_VT_KEY_GROUP 32

/* The key (within its group of 32) that position `position` holds. */
static inline int32_t flashfuse_fp8_vt_key_at(int32_t position) {
  return (position & 0x11) | ((position & 2) << 2) | ((position >> 1) & 6);
}

/* Sk_pad: the keys a Vt of `seq_k` keys spans. */
static inline int64_t flashfuse_fp8_vt_keys(int64_t seq_k) {
  return (seq_k + FLASHFUSE_FP8_VT_KEY_GROUP - 1) /
         FLASHFUSE_FP8_VT_KEY_GROUP * FLASHFUSE_FP8_VT_KEY_GROUP;
}

#endif
