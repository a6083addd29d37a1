//===- VarlenReference.cpp - double-precision varlen reference ------------===//
#include "VarlenReference.h"

#include <limits>

using namespace flashfuse::numerics;

namespace {
/// Rows [start, start + len) of the packed [1, H, total, width] operand
/// `packed`, as a [1, H, len, width] tensor in the same layout.
HostTensor sliceRows(HostTensor &packed, const std::array<int64_t, 4> &perm,
                     int64_t heads, int64_t start, int64_t len,
                     int64_t width) {
  HostTensor t(permutedShape({1, heads, len, width}, perm));
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t r = 0; r < len; ++r)
      for (int64_t e = 0; e < width; ++e)
        t.atLogical(perm, {0, h, r, e}) =
            packed.atLogical(perm, {0, h, start + r, e});
  return t;
}

/// Writes the [1, H, len, width] `part` back at rows [start, start + len).
void placeRows(HostTensor &packed, HostTensor &part,
               const std::array<int64_t, 4> &perm, int64_t heads,
               int64_t start, int64_t len, int64_t width) {
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t r = 0; r < len; ++r)
      for (int64_t e = 0; e < width; ++e)
        packed.atLogical(perm, {0, h, start + r, e}) =
            part.atLogical(perm, {0, h, r, e});
}

/// Sequence b of `c` as a dense case of batch 1.
CaseSpec sequenceCase(const CaseSpec &c, size_t b) {
  CaseSpec seq = c;
  seq.op = "attention";
  seq.batch = 1;
  seq.seqQ = c.lensQ[b];
  seq.seqK = c.lensK[b];
  seq.regionBatch = static_cast<int64_t>(b);
  return seq;
}
} // namespace

ForwardOutputs flashfuse::numerics::referenceVarlen(const CaseSpec &c,
                                                    AttentionInputs &in) {
  const auto perm = c.perm();
  const int64_t dv = c.headDimV();
  ForwardOutputs out;
  out.output = HostTensor(permutedShape({1, c.headsQ, c.seqQ, dv}, perm));
  out.lse = HostTensor({1, c.headsQ, c.seqQ});
  // Every row starts unowned (the pad rows stay so): O = 0, LSE = +inf.
  for (double &v : out.lse.data)
    v = std::numeric_limits<double>::infinity();

  int64_t startQ = 0, startK = 0;
  for (size_t b = 0; b < c.lensQ.size(); ++b) {
    const int64_t lenQ = c.lensQ[b], lenK = c.lensK[b];
    CaseSpec seq = sequenceCase(c, b);
    AttentionInputs part;
    part.q = sliceRows(in.q, perm, c.headsQ, startQ, lenQ, c.d);
    part.k = sliceRows(in.k, perm, c.headsKV, startK, lenK, c.d);
    part.v = sliceRows(in.v, perm, c.headsKV, startK, lenK, dv);
    part.slopes = in.slopes; // indexed by regionBatch
    ForwardOutputs ref = referenceForward(seq, part);
    for (int64_t h = 0; h < c.headsQ; ++h)
      for (int64_t r = 0; r < lenQ; ++r) {
        for (int64_t e = 0; e < dv; ++e)
          out.output.atLogical(perm, {0, h, startQ + r, e}) =
              ref.output.atLogical(perm, {0, h, r, e});
        int64_t from[3] = {0, h, r}, to[3] = {0, h, startQ + r};
        out.lse.data[out.lse.offset(to)] = ref.lse.data[ref.lse.offset(from)];
      }
    startQ += lenQ;
    startK += lenK;
  }
  return out;
}

BackwardOutputs
flashfuse::numerics::referenceVarlenBackward(const CaseSpec &c,
                                             AttentionInputs &in) {
  const auto perm = c.perm();
  const int64_t dv = c.headDimV();
  BackwardOutputs out;
  out.gradQuery = HostTensor(in.q.shape);
  out.gradKey = HostTensor(in.k.shape);
  out.gradValue = HostTensor(in.v.shape);
  int64_t startQ = 0, startK = 0;
  for (size_t b = 0; b < c.lensQ.size(); ++b) {
    const int64_t lenQ = c.lensQ[b], lenK = c.lensK[b];
    CaseSpec seq = sequenceCase(c, b);
    AttentionInputs part;
    part.q = sliceRows(in.q, perm, c.headsQ, startQ, lenQ, c.d);
    part.k = sliceRows(in.k, perm, c.headsKV, startK, lenK, c.d);
    part.v = sliceRows(in.v, perm, c.headsKV, startK, lenK, dv);
    part.output = sliceRows(in.output, perm, c.headsQ, startQ, lenQ, dv);
    part.gradOutput =
        sliceRows(in.gradOutput, perm, c.headsQ, startQ, lenQ, dv);
    part.slopes = in.slopes;
    // The reference recomputes P from the scores; the LSE is not read.
    BackwardOutputs ref = referenceBackward(seq, part);
    placeRows(out.gradQuery, ref.gradQuery, perm, c.headsQ, startQ, lenQ, c.d);
    placeRows(out.gradKey, ref.gradKey, perm, c.headsKV, startK, lenK, c.d);
    placeRows(out.gradValue, ref.gradValue, perm, c.headsKV, startK, lenK, dv);
    startQ += lenQ;
    startK += lenK;
  }
  return out;
}
