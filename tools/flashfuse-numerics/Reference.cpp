//===- Reference.cpp - double-precision attention reference ---------------===//
#include "Reference.h"

#include "ElementCodec.h"

#include <cmath>
#include <limits>

using namespace flashfuse::numerics;

static constexpr double kNegInf = -std::numeric_limits<double>::infinity();

bool flashfuse::numerics::referenceDropoutKeep(uint64_t seed, int64_t b,
                                               int64_t h, int64_t i, int64_t j,
                                               double p) {
  // One draw per octet {i, i + 8} x {j, j + 1, j + 8, j + 9} (Philox.h).
  uint32_t c[4] = {uint32_t(j) & ~9u, uint32_t(i) & ~8u, uint32_t(h),
                   uint32_t(b)};
  uint32_t k[2] = {uint32_t(seed), uint32_t(seed >> 32)};
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += 0x9E3779B9u;
      k[1] += 0xBB67AE85u;
    }
    uint64_t p0 = uint64_t(0xD2511F53u) * c[0];
    uint64_t p1 = uint64_t(0xCD9E8D57u) * c[2];
    uint32_t n0 = uint32_t(p1 >> 32) ^ c[1] ^ k[0];
    uint32_t n2 = uint32_t(p0 >> 32) ^ c[3] ^ k[1];
    c[0] = n0;
    c[1] = uint32_t(p1);
    c[2] = n2;
    c[3] = uint32_t(p0);
  }
  uint32_t threshold = uint32_t(double(float(p)) * 65536.0);
  uint32_t word = c[2 * ((i >> 3) & 1) + (j & 1)];
  return ((j & 8) ? word >> 16 : word & 0xFFFFu) >= threshold;
}

namespace {
/// One (b, h) row of scores with everything the contract applies.
struct ScoreRow {
  std::vector<double> score;     // final score, -inf where masked
  std::vector<double> scaledDot; // scale * dot, for softcap's derivative
};

struct Problem {
  const CaseSpec &c;
  AttentionInputs &in;
  std::array<int64_t, 4> perm;
  int64_t group, off;
  double scale;

  Problem(const CaseSpec &c, AttentionInputs &in)
      : c(c), in(in), perm(c.perm()), group(c.headsQ / c.headsKV),
        off(c.causal == "br" ? c.seqK - c.seqQ : 0),
        scale(c.effectiveScale()) {}

  /// A descale factor of an e4m3 case at (b, head) and sequence row `row`
  /// (blocks of `blockRows` rows when per block); 1 otherwise.
  double descale(const HostTensor &t, int64_t b, int64_t head, int64_t row,
                 int64_t blockRows) {
    if (!c.isFp8())
      return 1.0;
    if (t.shape.empty() || c.referenceFirstDescale)
      return t.data[0];
    if (t.shape.size() == 2)
      return t.data[b * t.shape[1] + head];
    return t.data[(b * t.shape[1] + head) * t.shape[2] + row / blockRows];
  }

  /// Whether key block kb is among the first `count` slots of the lists'
  /// row for (b, h, qb): the contract read literally, one slot at a time.
  bool listed(const HostTensor &num, const HostTensor &idx, int64_t b,
              int64_t h, int64_t qb, int64_t kb) {
    if (num.empty())
      return false;
    int64_t bl = num.shape[0] == 1 ? 0 : b, hl = num.shape[1] == 1 ? 0 : h;
    int64_t at[3] = {bl, hl, qb};
    int64_t count = int64_t(num.data[num.offset(at)]);
    for (int64_t s = 0; s < count && s < idx.shape[3]; ++s) {
      int64_t slot[4] = {bl, hl, qb, s};
      if (int64_t(idx.data[idx.offset(slot)]) == kb)
        return true;
    }
    return false;
  }

  bool visible(int64_t b, int64_t h, int64_t i, int64_t j) {
    // Block-sparse (FlashOps.td): a full block skips mask_mod, a partial
    // one applies it, an unlisted one is masked; the band holds in all.
    bool fullBlock = false;
    if (c.isBlockSparse()) {
      int64_t qb = i / c.sparseBlockQ, kb = j / c.sparseBlockK;
      fullBlock = listed(in.fullKvNumBlocks, in.fullKvIndices, b, h, qb, kb);
      if (!fullBlock && !listed(in.kvNumBlocks, in.kvIndices, b, h, qb, kb))
        return false;
    }
    if (!in.mask.empty() && in.mask.atBroadcast({b, h, i, j}) == 0.0)
      return false;
    if (!fullBlock && c.maskMod == "document" && i / 8 != j / 8)
      return false;
    if (!fullBlock && c.maskMod == "drop_row3" && i == 3)
      return false;
    if (!c.causal.empty() && j > i + off)
      return false;
    if (c.windowLeft && j < i + off - *c.windowLeft)
      return false;
    if (c.windowRight && j > i + off + *c.windowRight)
      return false;
    return true;
  }

  ScoreRow row(int64_t b, int64_t h, int64_t i) {
    ScoreRow r;
    for (int64_t j = 0; j < c.seqK; ++j) {
      double dot = 0;
      for (int64_t e = 0; e < c.d; ++e)
        dot += in.q.atLogical(perm, {b, h, i, e}) *
               in.k.atLogical(perm, {b, h / group, j, e});
      // FP8: the dots of the e4m3 values, dequantised (FlashOps.td).
      dot *= descale(in.qDescale, b, h, i, c.descaleBlockQ) *
             descale(in.kDescale, b, h / group, j, c.descaleBlockK);
      double s = scale * dot;
      r.scaledDot.push_back(s);
      if (c.softcap)
        s = *c.softcap * std::tanh(s / *c.softcap);
      if (!in.bias.empty())
        s += in.bias.atBroadcast({b, h, i, j});
      if (c.scoreMod == "alibi")
        s += 0.5 / double(h + 1) * double(j - i);
      if (c.scoreMod == "batch_slope")
        s += 0.5 / double(b + c.regionBatch + h + 1) * double(j - i);
      // ALiBi (FlashOps.td): after score_mod, from the bottom-right
      // diagonal whatever the causal alignment; a varlen sequence's own
      // lengths and index.
      if (c.alibi)
        s -= in.slopes.data[(c.alibi == 2 ? (b + c.regionBatch) * c.headsQ
                                          : 0) +
                            h] *
             std::fabs(double(i + c.seqK - c.seqQ - j));
      r.score.push_back(visible(b, h, i, j) ? s : kNegInf);
    }
    return r;
  }

  /// Softmax of a score row; all zeros (and lse = +inf) when fully masked.
  std::vector<double> softmax(const std::vector<double> &s, double &lse) {
    double m = kNegInf;
    for (double v : s)
      m = std::max(m, v);
    std::vector<double> p(s.size(), 0.0);
    if (m == kNegInf) {
      lse = std::numeric_limits<double>::infinity();
      return p;
    }
    double l = 0;
    for (size_t j = 0; j < s.size(); ++j)
      l += (p[j] = std::exp(s[j] - m));
    for (double &v : p)
      v /= l;
    lse = m + std::log(l);
    return p;
  }

  double dropoutFactor(int64_t b, int64_t h, int64_t i, int64_t j) {
    if (c.dropout <= 0)
      return 1.0;
    // A packed sequence draws at its own index (FlashOps.td, varlen).
    if (!referenceDropoutKeep(c.dropoutSeed, b + c.regionBatch, h, i, j,
                              c.dropout))
      return 0.0;
    return 1.0 / (1.0 - double(float(c.dropout)));
  }
};
} // namespace

ForwardOutputs flashfuse::numerics::referenceForward(const CaseSpec &c,
                                                     AttentionInputs &in) {
  Problem pb(c, in);
  ForwardOutputs out;
  out.output = HostTensor(
      permutedShape({c.batch, c.headsQ, c.seqQ, c.headDimV()}, pb.perm));
  out.lse = HostTensor({c.batch, c.headsQ, c.seqQ});
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.headsQ; ++h)
      for (int64_t i = 0; i < c.seqQ; ++i) {
        double lse;
        std::vector<double> p = pb.softmax(pb.row(b, h, i).score, lse);
        // FP8 weights V with P8 = e4m3(min(256 p, 448)) for p = exp(s - m)
        // unnormalised, and divides by 256 l after the product; O then
        // carries v_descale (FlashOps.td).
        std::vector<double> weights = p;
        double outFactor = 1.0;
        if (c.isFp8() && std::isfinite(lse)) {
          std::vector<double> score = pb.row(b, h, i).score;
          double m = kNegInf, l = 0.0;
          for (double v : score)
            m = std::max(m, v);
          for (size_t j = 0; j < score.size(); ++j) {
            double pj = std::exp(score[j] - m);
            l += pj;
            double scaled = std::min(pj * 256.0, 448.0);
            weights[j] = c.referenceQuantizesP ? roundTo("f8E4M3FN", scaled)
                                               : scaled;
            // V's factor of key j (FlashOps.td: dv_j · P8_j).
            weights[j] *= pb.descale(in.vDescale, b, h / pb.group, j,
                                     c.descaleBlockK);
          }
          outFactor = 1.0 / (256.0 * l);
        }
        int64_t lseIdx[3] = {b, h, i};
        out.lse.data[out.lse.offset(lseIdx)] = lse;
        for (int64_t e = 0; e < c.headDimV(); ++e) {
          double acc = 0;
          for (int64_t j = 0; j < c.seqK; ++j)
            acc += weights[j] * pb.dropoutFactor(b, h, i, j) *
                   in.v.atLogical(pb.perm, {b, h / pb.group, j, e});
          out.output.atLogical(pb.perm, {b, h, i, e}) = acc * outFactor;
        }
      }
  return out;
}

BackwardOutputs flashfuse::numerics::referenceBackward(const CaseSpec &c,
                                                       AttentionInputs &in) {
  Problem pb(c, in);
  BackwardOutputs out;
  out.gradQuery = HostTensor(in.q.shape);
  out.gradKey = HostTensor(in.k.shape);
  out.gradValue = HostTensor(in.v.shape);
  if (!in.bias.empty()) {
    out.gradBias = HostTensor(in.bias.shape);
    out.gradBiasTermMagnitude = HostTensor(in.bias.shape);
  }
  const int64_t dv = c.headDimV(), g = pb.group;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.headsQ; ++h)
      for (int64_t i = 0; i < c.seqQ; ++i) {
        ScoreRow row = pb.row(b, h, i);
        double lse;
        std::vector<double> p = pb.softmax(row.score, lse);
        double delta = 0; // rowsum(dO ∘ O)
        for (int64_t e = 0; e < dv; ++e)
          delta += in.gradOutput.atLogical(pb.perm, {b, h, i, e}) *
                   in.output.atLogical(pb.perm, {b, h, i, e});
        for (int64_t j = 0; j < c.seqK; ++j) {
          double z = pb.dropoutFactor(b, h, i, j);
          double dp = 0; // dO · V_j, the gradient of the dropped probability
          for (int64_t e = 0; e < dv; ++e) {
            double go = in.gradOutput.atLogical(pb.perm, {b, h, i, e});
            dp += go * in.v.atLogical(pb.perm, {b, h / g, j, e});
            out.gradValue.atLogical(pb.perm, {b, h / g, j, e}) += p[j] * z * go;
          }
          double dS = p[j] * (dp * z - delta);
          if (!out.gradBias.empty()) {
            out.gradBias.atBroadcast({b, h, i, j}) += dS;
            out.gradBiasTermMagnitude.atBroadcast({b, h, i, j}) += dS * dS;
          }
          double dX = dS; // with respect to scale * dot
          if (c.softcap) {
            double t = std::tanh(row.scaledDot[j] / *c.softcap);
            dX *= 1.0 - t * t;
          }
          for (int64_t e = 0; e < c.d; ++e) {
            out.gradQuery.atLogical(pb.perm, {b, h, i, e}) +=
                pb.scale * dX * in.k.atLogical(pb.perm, {b, h / g, j, e});
            out.gradKey.atLogical(pb.perm, {b, h / g, j, e}) +=
                pb.scale * dX * in.q.atLogical(pb.perm, {b, h, i, e});
          }
        }
      }
  for (double &m : out.gradBiasTermMagnitude.data)
    m = std::sqrt(m);
  return out;
}
