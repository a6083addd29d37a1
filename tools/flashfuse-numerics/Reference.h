//===- Reference.h - double-precision attention reference ------*- C++ -*-===//
//
// Plain loops that follow flash.attention's contract (FlashOps.td) one
// score at a time, in double precision, written independently of the MLIR
// lowerings so that the two can disagree.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_TOOLS_NUMERICS_REFERENCE_H
#define FLASHFUSE_TOOLS_NUMERICS_REFERENCE_H

#include "CaseSpec.h"
#include "HostTensor.h"

namespace flashfuse::numerics {

/// The op's inputs, values already rounded to the case's dtype. Q, K, V,
/// dO and O are in the case's layout, bias and mask broadcastable
/// [B, Hq, Sq, Sk] (mask: 1 = keep), LSE [B, Hq, Sq].
struct AttentionInputs {
  HostTensor q, k, v, bias, mask;
  /// e4m3 cases: the descale factors, shape [] or [B, H] (q, k, v hold the
  /// e4m3 values themselves).
  HostTensor qDescale, kDescale, vDescale;
  HostTensor gradOutput, output, lse; // backward only
  /// Block-sparse cases: the lists as the op takes them ([B', H', QB] and
  /// [B', H', QB, N]); the full pair empty when there is none.
  HostTensor kvNumBlocks, kvIndices, fullKvNumBlocks, fullKvIndices;
  /// alibi=1|2: ALiBi's slopes, [Hq] or [B, Hq] (B: the sequences of a
  /// varlen case).
  HostTensor slopes;
};

struct ForwardOutputs {
  HostTensor output, lse;
};

struct BackwardOutputs {
  HostTensor gradQuery, gradKey, gradValue, gradBias;
  /// Per dBias entry, the L2 norm of the dS terms it sums: the scale of its
  /// f32 rounding error (about eps * sqrt(N) * norm for N terms). A dBias
  /// summed over keys cancels to ~0 (each row of dS sums to zero), so its
  /// own magnitude says nothing about its error; a missing tile, though,
  /// shifts it by a sizeable fraction of the norm.
  HostTensor gradBiasTermMagnitude;
};

/// Philox4x32-10 keep test of Philox.h, in plain C++.
bool referenceDropoutKeep(uint64_t seed, int64_t b, int64_t h, int64_t i,
                          int64_t j, double p);

ForwardOutputs referenceForward(const CaseSpec &c, AttentionInputs &in);

/// Gradients for the given dO, with D = rowsum(dO ∘ O) taken from the O
/// in `in` (the value the op is given) and P from the exact softmax.
BackwardOutputs referenceBackward(const CaseSpec &c, AttentionInputs &in);

} // namespace flashfuse::numerics

#endif
