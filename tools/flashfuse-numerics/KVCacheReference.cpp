//===- KVCacheReference.cpp - double-precision KV-cache reference ---------===//
#include "KVCacheReference.h"

#include "ElementCodec.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace flashfuse::numerics;

namespace {
struct KVCacheProblem {
  const CaseSpec &c;
  KVCacheInputs &in;
  std::array<int64_t, 4> perm = c.perm();

  /// Row `row` of sequence b's cache, element (h, e): through the block
  /// table when paged, in row batch_idx[b] of a pool.
  double &at(HostTensor &cache, int64_t b, int64_t h, int64_t row,
             int64_t e) const {
    if (!c.pageSize)
      return cache.atLogical(
          perm, {in.batchIdx.data.empty() ? b : int64_t(in.batchIdx.data[b]),
                 h, row, e});
    int64_t slot[2] = {b, row / c.pageSize};
    int64_t page = int64_t(in.blockTable.data[in.blockTable.offset(slot)]);
    int64_t idx[4] = {page, row % c.pageSize, h, e};
    return cache.data[cache.offset(idx)];
  }

  int64_t seqlen(int64_t b) const { return int64_t(in.seqlens.data[b]); }

  /// An FP8 cache's factor for (b, kv head h); 1 for a 16-bit cache.
  double descale(HostTensor &d, int64_t b, int64_t h) const {
    if (!c.hasFp8Cache())
      return 1.0;
    if (d.shape.empty() || c.referenceFirstDescale)
      return d.data[0];
    return d.data[b * c.headsKV + h];
  }

  /// A new row's element as the cache stores it. FP8 (docs/KVCACHE.md):
  /// e4m3(clamp(x * (1 / d), -448, 448)) with the reciprocal and the
  /// product rounded to f32, as the op computes them.
  double stored(double x, HostTensor &d, int64_t b, int64_t h) const {
    if (!c.hasFp8Cache() || !c.referenceQuantizesNewRows)
      return x;
    float inv = 1.0f / float(descale(d, b, h));
    float scaled = float(x) * inv;
    scaled = std::clamp(scaled, -448.0f, 448.0f);
    return roundTo(c.cacheType(), double(scaled));
  }

  /// `x` (Q or key_new, in the case's layout) rotated as docs/KVCACHE.md
  /// says: row s of sequence b at position cache_seqlens[b] + s (or
  /// cache_seqlens[b] for every query row when they do not sit apart),
  /// clamped into [0, R); each pair's products and their sum in f32,
  /// rounded to the dtype.
  HostTensor rotated(HostTensor &x, int64_t heads, int64_t rows,
                     bool ownRow) const {
    HostTensor out = x;
    const int64_t pairs = c.effectiveRotaryDim() / 2;
    const int64_t last = in.rotaryCos.shape[0] - 1;
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t s = 0; s < rows; ++s) {
          int64_t p = std::clamp<int64_t>(seqlen(b) + (ownRow ? s : 0), 0,
                                          last);
          for (int64_t e = 0; e < pairs; ++e) {
            int64_t e0 = c.rotary == "interleaved" ? 2 * e : e;
            int64_t e1 = c.rotary == "interleaved" ? 2 * e + 1 : e + pairs;
            float x0 = float(x.atLogical(perm, {b, h, s, e0}));
            float x1 = float(x.atLogical(perm, {b, h, s, e1}));
            float cs = float(in.rotaryCos.data[p * pairs + e]);
            float sn = float(in.rotarySin.data[p * pairs + e]);
            float y0 = x0 * cs - x1 * sn;
            float y1 = x1 * cs + x0 * sn;
            out.atLogical(perm, {b, h, s, e0}) = roundTo(c.dtype, y0);
            out.atLogical(perm, {b, h, s, e1}) = roundTo(c.dtype, y1);
          }
        }
    return out;
  }
};
} // namespace

KVCacheOutputs flashfuse::numerics::referenceKVCache(const CaseSpec &c,
                                                     KVCacheInputs &in) {
  KVCacheProblem pb{c, in};
  const int64_t dv = c.headDimV(), group = c.headsQ / c.headsKV;
  const double scale = c.effectiveScale();
  KVCacheOutputs out;
  out.keyCacheOut = in.keyCache;
  out.valueCacheOut = in.valueCache;
  HostTensor q = in.q, keyNew = in.keyNew;
  if (!c.rotary.empty()) {
    bool queryRowsApart = c.causal == "br" || c.windowLeft || c.windowRight;
    q = pb.rotated(in.q, c.headsQ, c.seqQ, queryRowsApart);
    keyNew = pb.rotated(in.keyNew, c.headsKV, c.newRows, /*ownRow=*/true);
  }

  // Cache rows [cache_seqlens[b], cache_seqlens[b] + Snew) := the new rows.
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t t = 0; t < c.newRows; ++t)
      for (int64_t h = 0; h < c.headsKV; ++h) {
        int64_t row = pb.seqlen(b) + t;
        for (int64_t e = 0; e < c.d; ++e)
          pb.at(out.keyCacheOut, b, h, row, e) = pb.stored(
              keyNew.atLogical(pb.perm, {b, h, t, e}), in.kDescale, b, h);
        for (int64_t e = 0; e < dv; ++e)
          pb.at(out.valueCacheOut, b, h, row, e) = pb.stored(
              in.valueNew.atLogical(pb.perm, {b, h, t, e}), in.vDescale, b, h);
      }

  out.output =
      HostTensor(permutedShape({c.batch, c.headsQ, c.seqQ, dv}, pb.perm));
  out.lse = HostTensor({c.batch, c.headsQ, c.seqQ});
  for (int64_t b = 0; b < c.batch; ++b) {
    const int64_t len = pb.seqlen(b) + c.newRows;
    // Keys before the sequence's first row are padding.
    const int64_t first =
        in.leftpad.data.empty() ? 0 : int64_t(in.leftpad.data[b]);
    for (int64_t h = 0; h < c.headsQ; ++h)
      for (int64_t i = 0; i < c.seqQ; ++i) {
        // Bottom-right alignment per sequence: the last query row sits at
        // the sequence's last key.
        const int64_t diag = i + len - c.seqQ;
        // The dequantised cache: K = kd * K8, V = vd * V8 (1 for 16 bits).
        const double kd = pb.descale(in.kDescale, b, h / group),
                     vd = pb.descale(in.vDescale, b, h / group);
        std::vector<double> s(len, -std::numeric_limits<double>::infinity());
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < len; ++j) {
          if (j < first || (c.causal == "br" && j > diag) ||
              (c.windowLeft && j < diag - *c.windowLeft) ||
              (c.windowRight && j > diag + *c.windowRight))
            continue;
          double dot = 0;
          for (int64_t e = 0; e < c.d; ++e)
            dot += q.atLogical(pb.perm, {b, h, i, e}) *
                   pb.at(out.keyCacheOut, b, h / group, j, e);
          s[j] = scale * (kd * dot);
          if (c.softcap)
            s[j] = *c.softcap * std::tanh(s[j] / *c.softcap);
          // ALiBi: the distance from the sequence's own diagonal.
          if (c.alibi)
            s[j] -= in.slopes.data[(c.alibi == 2 ? b * c.headsQ : 0) + h] *
                    double(std::llabs(diag - j));
          m = std::max(m, s[j]);
        }
        int64_t lseIdx[3] = {b, h, i};
        double &lse = out.lse.data[out.lse.offset(lseIdx)];
        if (m == -std::numeric_limits<double>::infinity()) {
          // No visible key (an empty sequence, or a row before the window):
          // O = 0 (already), LSE = +inf.
          lse = std::numeric_limits<double>::infinity();
          continue;
        }
        double l = 0;
        for (double &x : s)
          l += (x = std::exp(x - m));
        lse = m + std::log(l);
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < len; ++j)
            acc += s[j] / l * pb.at(out.valueCacheOut, b, h / group, j, e);
          out.output.atLogical(pb.perm, {b, h, i, e}) = vd * acc;
        }
      }
  }
  return out;
}
