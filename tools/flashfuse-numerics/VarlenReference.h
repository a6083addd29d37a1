//===- VarlenReference.h - double-precision varlen reference ----*- C++ -*-===//
//
// flash.attention over a packed batch (varlen) as the contract states it:
// each sequence's slices of Q, K and V are cut out and given to the dense
// reference (Reference.cpp) as a batch of one with that sequence's own
// lengths, so the per-sequence masks and the bottom-right offset
// Lk_b - Lq_b come from the dense rules, not from any packed-index
// arithmetic the MLIR decomposition might share. Rows no sequence owns get
// O = 0, LSE = +inf.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_TOOLS_NUMERICS_VARLENREFERENCE_H
#define FLASHFUSE_TOOLS_NUMERICS_VARLENREFERENCE_H

#include "Reference.h"

namespace flashfuse::numerics {

/// `c` is an op=varlen case (batch 1, Sq / Sk the packed totals); Q, K, V
/// in `in` are the packed tensors in the case's layout. Outputs: O in that
/// layout and LSE [1, Hq, total_q].
ForwardOutputs referenceVarlen(const CaseSpec &c, AttentionInputs &in);

/// Gradients of the packed op for the dO, O and LSE in `in` (packed, as the
/// op is given them), each sequence's by the dense reference on its slices;
/// rows no sequence owns (the pad) get zero gradients.
BackwardOutputs referenceVarlenBackward(const CaseSpec &c, AttentionInputs &in);

} // namespace flashfuse::numerics

#endif
