//===- Philox.h - counter-based dropout generator from arith ops -*- C++ -*-===//
//
// Dropout must drop the same entries in the forward pass, in the backward
// pass and in every lowering (naive, loops, GPU), without storing a mask.
// It is therefore a pure function of (seed, b, h, q_idx, kv_idx), computed
// with Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC'11) from plain arith ops, so that a GPU lowering emits the
// very same function.
//
// THE KEEP TEST (every implementation must reproduce it bit for bit):
//   One Philox call draws eight 16-bit uniforms for an octet of elements,
//   {q_idx, q_idx + 8} x {kv_idx, kv_idx + 1, kv_idx + 8, kv_idx + 9}: a
//   thread of an mma.sync or wgmma product holds such an octet of its S
//   fragment (rows lane / 4 and lane / 4 + 8, columns 2 (lane % 4) + {0, 1}
//   of two neighbouring 8-column tiles), so a forward draws once for eight
//   scores, where a call per score made dropout 3-7x slower than the
//   kernel without it (docs/PERF.md, run 369).
//   key     = (k0, k1) = (low 32 bits of seed, high 32 bits of seed)
//   counter = (c0, c1, c2, c3) = (kv_idx & ~9, q_idx & ~8, h, b), each
//             truncated to 32 bits; h is the query head, all indices
//             logical (after the q/k/v permutations), q_idx and kv_idx
//             absolute in [0, Sq) and [0, Sk).
//   (r0, r1, r2, r3) = Philox4x32-10(counter, key), with the round
//     (c0, c1, c2, c3) <- (hi(M1*c2) ^ c1 ^ k0, lo(M1*c2),
//                          hi(M0*c0) ^ c3 ^ k1, lo(M0*c0))
//     M0 = 0xD2511F53, M1 = 0xCD9E8D57, and the key bumped by
//     (W0, W1) = (0x9E3779B9, 0xBB67AE85) between rounds (10 rounds,
//     9 bumps; products are full 64-bit products of two u32).
//   word    = r[2 * ((q_idx >> 3) & 1) + (kv_idx & 1)]
//   u       = kv_idx & 8 ? word >> 16 : word & 0xFFFF
//   threshold = (uint32_t)(p * 2^16), with p the f32 value of dropout_p;
//     the product is exact in f32 (a power-of-two scaling) and below 2^16
//     because p < 1.
//   keep      = u >= threshold  (unsigned compare).
//   A kept probability is multiplied by 1 / (1 - p), computed in f32. An
//   element is dropped with probability threshold / 2^16: p rounded down to
//   a multiple of 2^-16 (FlashAttention-2 rounds it to 2^-8).
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_CONVERSION_COMMON_PHILOX_H
#define FLASHFUSE_CONVERSION_COMMON_PHILOX_H

#include "mlir/IR/Builders.h"

#include <array>
#include <cstdint>

namespace mlir::flash {

/// Emits Philox4x32-10 on four i32 counter words and two i32 key words and
/// returns the four i32 output words.
std::array<Value, 4> buildPhilox4x32x10(OpBuilder &b, Location loc,
                                        std::array<Value, 4> counter,
                                        std::array<Value, 2> key);

/// The 16-bit threshold of the keep test for dropout probability `p`.
uint32_t dropoutThreshold(double p);

/// The octet's counter words (kv_idx & ~9, q_idx & ~8, h, b) from i32 index
/// words.
std::array<Value, 4> dropoutCounter(OpBuilder &b, Location loc, Value kvIdx,
                                    Value qIdx, Value head, Value batch);

/// The octet's four Philox words (i32 counter words as dropoutCounter gives
/// them): word 2 i + j holds elements (q_idx + 8 i, kv_idx + j) in its low
/// half and (q_idx + 8 i, kv_idx + 8 + j) in its high half.
std::array<Value, 4> buildDropoutOctetWords(OpBuilder &b, Location loc,
                                            Value seed,
                                            std::array<Value, 4> counter);

/// The threshold the keep tests compare with, in the high half of an i32:
/// `threshold16` (the i32 (uint32_t)(p * 2^16); a GPU kernel computes it
/// from its runtime p) shifted up by 16.
Value dropoutThresholdHigh(OpBuilder &b, Location loc, Value threshold16);

/// The keep test of one half of an octet word: the high half compared as
/// it is, the low half shifted up, one unsigned compare each.
Value buildDropoutHalfKeep(OpBuilder &b, Location loc, Value word, bool high,
                           Value thresholdHigh);

/// Emits the keep tests of an octet: keep[e] is element (q_idx + 8 i,
/// kv_idx + 8 h + j)'s for e = 4 h + 2 i + j (of the octet's first row and
/// column).
std::array<Value, 8> buildDropoutOctetKeep(OpBuilder &b, Location loc,
                                           Value seed,
                                           std::array<Value, 4> counter,
                                           Value threshold16);

/// Emits the keep test above: an i1 that is true when the probability at
/// (b, h, qIdx, kvIdx) (index values) survives dropout with probability `p`
/// under `seed` (i64).
Value buildDropoutKeep(OpBuilder &b, Location loc, Value seed, Value batch,
                       Value head, Value qIdx, Value kvIdx, double p);

/// Emits the f32 factor dropout applies to a probability: 1 / (1 - p) when
/// kept, 0 when dropped.
Value buildDropoutFactor(OpBuilder &b, Location loc, Value seed, Value batch,
                         Value head, Value qIdx, Value kvIdx, double p);

} // namespace mlir::flash

#endif // FLASHFUSE_CONVERSION_COMMON_PHILOX_H
