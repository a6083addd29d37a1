//===- flashfuse-numerics.cpp - CPU numerics of the flash lowerings --------===//
//
// For each case on the command line: build the case's module, lower it with
// flash-lower-naive or flash-lower-to-loops and the CPU pipeline, JIT it,
// feed random inputs, and compare every output with the double-precision
// reference of Reference.cpp. Prints the error of each output and PASS or
// FAIL per case; exits 1 when any case fails. Several cases per process
// amortise the start-up; each case is compiled on its own. op=kvcache cases
// run flash.attention_kvcache against KVCacheReference.cpp instead, and
// op=varlen cases a packed flash.attention against VarlenReference.cpp.
//
//===----------------------------------------------------------------------===//
#include "CaseModule.h"
#include "CaseSpec.h"
#include "ElementCodec.h"
#include "Jit.h"
#include "KVCacheReference.h"
#include "Reference.h"
#include "VarlenReference.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

using namespace flashfuse::numerics;

namespace {
/// splitmix64: a small, well-mixed generator, so inputs are reproducible
/// from the case's seed alone.
class Random {
public:
  explicit Random(uint64_t seed) : state(seed) {}
  double uniform(double lo, double hi) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return lo + (hi - lo) * double(z >> 11) * 0x1.0p-53;
  }

private:
  uint64_t state;
};

HostTensor randomTensor(Random &rng, std::vector<int64_t> shape,
                        const std::string &type, double magnitude) {
  HostTensor t(std::move(shape));
  for (double &v : t.data)
    v = roundTo(type, magnitude * rng.uniform(-1.0, 1.0));
  return t;
}

/// An e4m3 case's descale: one factor (descale=tensor), one per (batch,
/// head), or one per (batch, head, block of `blockRows` of `seq` rows)
/// (descale=block), each `base` times a random factor in [0.5, 2).
HostTensor randomDescale(Random &rng, const CaseSpec &c, int64_t heads,
                         int64_t seq, int64_t blockRows, double base) {
  HostTensor t(c.descaleShape(heads, seq, blockRows));
  for (double &v : t.data)
    v = double(float(base * rng.uniform(0.5, 2.0)));
  return t;
}

/// ALiBi's slopes, [Hq] (alibi=1) or [B, Hq] (alibi=2; B the sequences of
/// a varlen case): positive, f32-exact, and different per (b, h) so that a
/// kernel reading the wrong entry fails.
HostTensor randomSlopes(Random &rng, const CaseSpec &c) {
  int64_t batch = c.isVarlen() ? int64_t(c.lensQ.size()) : c.batch;
  HostTensor slopes(c.alibi == 2 ? std::vector<int64_t>{batch, c.headsQ}
                                 : std::vector<int64_t>{c.headsQ});
  for (double &v : slopes.data)
    v = double(float(rng.uniform(0.02, 0.5)));
  return slopes;
}

/// e4m3 inputs as quantisers leave them: codes spread over e4m3's range
/// (|x| up to 448) with descales that bring the dequantised Q and K to
/// about `inputScale` and V to about 1.
AttentionInputs makeFp8Inputs(const CaseSpec &c) {
  Random rng(c.seed);
  auto perm = c.perm();
  AttentionInputs in;
  const std::string &e4m3 = c.dtype;
  in.q = randomTensor(rng, permutedShape({c.batch, c.headsQ, c.seqQ, c.d}, perm),
                      e4m3, 448.0);
  in.k = randomTensor(rng, permutedShape({c.batch, c.headsKV, c.seqK, c.d}, perm),
                      e4m3, 448.0);
  in.v = randomTensor(
      rng, permutedShape({c.batch, c.headsKV, c.seqK, c.headDimV()}, perm),
      e4m3, 448.0);
  in.qDescale = randomDescale(rng, c, c.headsQ, c.seqQ, c.descaleBlockQ,
                              c.inputScale / 448.0);
  in.kDescale = randomDescale(rng, c, c.headsKV, c.seqK, c.descaleBlockK,
                              c.inputScale / 448.0);
  in.vDescale = randomDescale(rng, c, c.headsKV, c.seqK, c.descaleBlockK,
                              1.0 / 448.0);
  if (!c.bias.empty())
    in.bias = randomTensor(rng, c.broadcastShape(c.bias), "f32", 1.0);
  if (!c.mask.empty()) {
    in.mask = HostTensor(c.broadcastShape(c.mask));
    int64_t rowLen = in.mask.shape[3];
    for (size_t n = 0; n < in.mask.data.size(); ++n) {
      int64_t row = int64_t(n) / rowLen % in.mask.shape[2];
      in.mask.data[n] = row == c.maskedRow ? 0.0 : rng.uniform(0, 1) < 0.75;
    }
  }
  if (c.alibi)
    in.slopes = randomSlopes(rng, c);
  return in;
}

AttentionInputs makeInputs(const CaseSpec &c) {
  if (c.isFp8())
    return makeFp8Inputs(c);
  Random rng(c.seed);
  auto perm = c.perm();
  AttentionInputs in;
  in.q = randomTensor(rng, permutedShape({c.batch, c.headsQ, c.seqQ, c.d}, perm),
                      c.dtype, c.inputScale);
  in.k = randomTensor(rng, permutedShape({c.batch, c.headsKV, c.seqK, c.d}, perm),
                      c.dtype, c.inputScale);
  in.v = randomTensor(
      rng, permutedShape({c.batch, c.headsKV, c.seqK, c.headDimV()}, perm),
      c.dtype, 1.0);
  if (!c.bias.empty())
    in.bias = randomTensor(rng, c.broadcastShape(c.bias), c.dtype, 1.0);
  if (!c.mask.empty()) {
    in.mask = HostTensor(c.broadcastShape(c.mask));
    int64_t rowLen = in.mask.shape[3];
    for (size_t n = 0; n < in.mask.data.size(); ++n) {
      int64_t row = int64_t(n) / rowLen % in.mask.shape[2];
      in.mask.data[n] = row == c.maskedRow ? 0.0 : rng.uniform(0, 1) < 0.75;
    }
  }
  if (c.alibi)
    in.slopes = randomSlopes(rng, c);
  return in;
}

/// Random block-sparse lists of case `c`: per row (b', h', qb) each key
/// block is listed with probability density, as full with probability
/// full (else partial), in increasing order; a row is empty with
/// probability empty_rows. Slots past a row's count hold junk (an index
/// past the last block, -1, or a repeat of a listed block), so that a
/// lowering that reads past the count fails.
void makeBlockLists(const CaseSpec &c, AttentionInputs &in) {
  Random rng(c.seed ^ 0xB10C5ull);
  in.kvNumBlocks = HostTensor(c.blockCountShape());
  in.kvIndices = HostTensor(c.blockIndexShape());
  bool full = c.fullFraction > 0;
  if (full) {
    in.fullKvNumBlocks = HostTensor(c.blockCountShape());
    in.fullKvIndices = HostTensor(c.blockIndexShape());
  }
  int64_t kBlocks = c.keyBlocks();
  for (size_t row = 0; row < in.kvNumBlocks.data.size(); ++row) {
    std::vector<int64_t> partial, fullBlocks;
    bool empty = rng.uniform(0, 1) < c.emptyRows;
    for (int64_t kb = 0; kb < kBlocks; ++kb) {
      if (empty || rng.uniform(0, 1) >= c.density)
        continue;
      (full && rng.uniform(0, 1) < c.fullFraction ? fullBlocks : partial)
          .push_back(kb);
    }
    auto store = [&](HostTensor &num, HostTensor &idx,
                     const std::vector<int64_t> &blocks) {
      num.data[row] = double(blocks.size());
      for (int64_t s = 0; s < kBlocks; ++s) {
        double junk = s % 3 == 0   ? double(kBlocks + s)
                      : s % 3 == 1 ? -1.0
                                   : double(blocks.empty() ? 0 : blocks[0]);
        idx.data[row * kBlocks + s] =
            s < int64_t(blocks.size()) ? double(blocks[s]) : junk;
      }
    };
    store(in.kvNumBlocks, in.kvIndices, partial);
    if (full)
      store(in.fullKvNumBlocks, in.fullKvIndices, fullBlocks);
  }
}

Buffer toBuffer(const HostTensor &t, const std::string &type);

/// The lists as arguments, in the order of buildCaseModule.
void appendBlockLists(const AttentionInputs &in, std::vector<Buffer> &args) {
  if (in.kvNumBlocks.empty())
    return;
  args.push_back(toBuffer(in.kvNumBlocks, "i32"));
  args.push_back(toBuffer(in.kvIndices, "i32"));
  if (!in.fullKvNumBlocks.empty()) {
    args.push_back(toBuffer(in.fullKvNumBlocks, "i32"));
    args.push_back(toBuffer(in.fullKvIndices, "i32"));
  }
}

struct Comparison {
  double maxAbsErr = 0, maxRef = 0;
  bool nonFiniteMismatch = false;
  double relative() const {
    if (nonFiniteMismatch)
      return std::numeric_limits<double>::infinity();
    // Outputs that cancel to nearly zero (a dBias summed over keys, say)
    // are compared against 1e-2 instead of their own tiny magnitude: the
    // absolute tolerance of FlashAttention's rule.
    return maxAbsErr / std::max(maxRef, 1e-2);
  }
};

/// Infinities must agree exactly (LSE of a fully masked row); NaN never
/// passes (outputs are poisoned with NaN before the run). `magnitude`, when
/// given, is a per-element scale of the summed terms that replaces |ref| as
/// the measure errors are relative to.
Comparison compare(const std::vector<double> &got, const std::vector<double> &ref,
                   const HostTensor *magnitude) {
  Comparison cmp;
  if (magnitude)
    for (double m : magnitude->data)
      cmp.maxRef = std::max(cmp.maxRef, m);
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(ref[i]) || !std::isfinite(got[i])) {
      if (!(got[i] == ref[i]))
        cmp.nonFiniteMismatch = true;
      continue;
    }
    cmp.maxAbsErr = std::max(cmp.maxAbsErr, std::fabs(got[i] - ref[i]));
    cmp.maxRef = std::max(cmp.maxRef, std::fabs(ref[i]));
  }
  return cmp;
}

Buffer toBuffer(const HostTensor &t, const std::string &type) {
  return Buffer{t.shape, encode(type, t.data)};
}

Buffer poisoned(const std::vector<int64_t> &shape, const std::string &type) {
  HostTensor t(shape);
  for (double &v : t.data)
    v = std::numeric_limits<double>::quiet_NaN();
  return toBuffer(t, type);
}

struct NamedOutput {
  const char *name;
  std::string type;
  const HostTensor *reference;
  const HostTensor *magnitude = nullptr;
  /// Replaces the case's tolerance for this output.
  std::optional<double> tolerance = std::nullopt;
};

bool runAndCompare(CaseJit &jit, const CaseSpec &c, std::vector<Buffer> &args,
                   const std::vector<NamedOutput> &outputs);

/// Random caches (every row, used or not, and the spare pages too, so that
/// a key read past a sequence's length or from a foreign page changes the
/// answer), the case's lengths, and a block table that hands out the pool's
/// pages in a random order.
KVCacheInputs makeKVCacheInputs(const CaseSpec &c) {
  Random rng(c.seed);
  auto perm = c.perm();
  int64_t dv = c.headDimV();
  KVCacheInputs in;
  in.q = randomTensor(rng, permutedShape({c.batch, c.headsQ, c.seqQ, c.d}, perm),
                      c.dtype, c.inputScale);
  // An FP8 cache holds codes spread over e4m3's range (|x| up to 448), its
  // descales bring K to about `inputScale` and V to about 1 (as
  // makeFp8Inputs); the new rows stay in dtype at those magnitudes, so that
  // some of them saturate when quantised (the descales vary by [0.5, 2)).
  const std::string &cacheT = c.cacheType();
  const bool fp8 = c.hasFp8Cache();
  const double kMag = fp8 ? 448.0 : c.inputScale, vMag = fp8 ? 448.0 : 1.0;
  if (fp8) {
    in.kDescale = randomDescale(rng, c, c.headsKV, c.seqK, c.descaleBlockK,
                                c.inputScale / 448.0);
    in.vDescale = randomDescale(rng, c, c.headsKV, c.seqK, c.descaleBlockK,
                                1.0 / 448.0);
  }
  if (c.pageSize) {
    in.keyCache = randomTensor(rng, {c.numPages(), c.pageSize, c.headsKV, c.d},
                               cacheT, kMag);
    in.valueCache = randomTensor(rng, {c.numPages(), c.pageSize, c.headsKV, dv},
                                 cacheT, vMag);
    std::vector<int64_t> pages(c.numPages());
    for (int64_t p = 0; p < c.numPages(); ++p)
      pages[p] = p;
    for (int64_t p = c.numPages() - 1; p > 0; --p) // Fisher-Yates
      std::swap(pages[p], pages[int64_t(rng.uniform(0, double(p + 1)))]);
    in.blockTable = HostTensor({c.batch, c.maxPages()});
    for (int64_t n = 0; n < c.batch * c.maxPages(); ++n)
      in.blockTable.data[n] = double(pages[n]);
  } else {
    in.keyCache = randomTensor(
        rng, permutedShape({c.cacheRows(), c.headsKV, c.seqK, c.d}, perm),
        cacheT, kMag);
    in.valueCache = randomTensor(
        rng, permutedShape({c.cacheRows(), c.headsKV, c.seqK, dv}, perm),
        cacheT, vMag);
  }
  if (c.newRows) {
    in.keyNew = randomTensor(
        rng, permutedShape({c.batch, c.headsKV, c.newRows, c.d}, perm),
        c.dtype, c.inputScale);
    in.valueNew = randomTensor(
        rng, permutedShape({c.batch, c.headsKV, c.newRows, dv}, perm),
        c.dtype, 1.0);
  }
  in.seqlens = HostTensor({c.batch});
  for (int64_t b = 0; b < c.batch; ++b)
    in.seqlens.data[b] = double(c.seqlens[b]);
  if (!c.leftpad.empty()) {
    in.leftpad = HostTensor({c.batch});
    for (int64_t b = 0; b < c.batch; ++b)
      in.leftpad.data[b] = double(c.leftpad[b]);
  }
  if (!c.batchIdx.empty()) {
    in.batchIdx = HostTensor({c.batch});
    for (int64_t b = 0; b < c.batch; ++b)
      in.batchIdx.data[b] = double(c.batchIdx[b]);
  }
  if (c.alibi)
    in.slopes = randomSlopes(rng, c);
  if (!c.rotary.empty()) {
    // RoPE's own tables, cos / sin(p * 10000^(-2e / rotary_dim)), rounded
    // to the dtype as a model stores them, with a random phase per pair so
    // that a kernel reading the wrong position or pair fails.
    const int64_t rows = c.effectiveRotaryRows(),
                  pairs = c.effectiveRotaryDim() / 2;
    in.rotaryCos = HostTensor({rows, pairs});
    in.rotarySin = HostTensor({rows, pairs});
    std::vector<double> phase(pairs);
    for (double &ph : phase)
      ph = rng.uniform(0.0, 6.283185307179586);
    for (int64_t p = 0; p < rows; ++p)
      for (int64_t e = 0; e < pairs; ++e) {
        double angle =
            double(p) * std::pow(10000.0, -2.0 * double(e) /
                                              double(c.effectiveRotaryDim())) +
            phase[e];
        in.rotaryCos.data[p * pairs + e] = roundTo(c.dtype, std::cos(angle));
        in.rotarySin.data[p * pairs + e] = roundTo(c.dtype, std::sin(angle));
      }
  }
  return in;
}

/// A backward case's extra inputs: O and LSE as the forward pass would
/// store them (the reference's, rounded to the dtype and f32), and a random
/// dO of O's shape.
void setBackwardInputs(const CaseSpec &c, const ForwardOutputs &fwd,
                       AttentionInputs &in) {
  in.output = fwd.output;
  for (double &v : in.output.data)
    v = roundTo(c.dtype, v);
  in.lse = fwd.lse;
  for (double &v : in.lse.data)
    v = roundTo("f32", v);
  Random gradRng(c.seed ^ 0x5EEDull);
  in.gradOutput = randomTensor(gradRng, in.output.shape, c.dtype, 1.0);
}

bool runKVCacheCase(CaseJit &jit, const CaseSpec &c) {
  KVCacheInputs in = makeKVCacheInputs(c);
  KVCacheOutputs ref = referenceKVCache(c, in);
  const std::string &cacheT = c.cacheType();
  std::vector<Buffer> args = {toBuffer(in.q, c.dtype),
                              toBuffer(in.keyCache, cacheT),
                              toBuffer(in.valueCache, cacheT),
                              toBuffer(in.seqlens, "i32")};
  if (c.pageSize)
    args.push_back(toBuffer(in.blockTable, "i32"));
  if (!c.leftpad.empty())
    args.push_back(toBuffer(in.leftpad, "i32"));
  if (!c.batchIdx.empty())
    args.push_back(toBuffer(in.batchIdx, "i32"));
  if (c.newRows) {
    args.push_back(toBuffer(in.keyNew, c.dtype));
    args.push_back(toBuffer(in.valueNew, c.dtype));
  }
  if (c.hasFp8Cache()) {
    args.push_back(toBuffer(in.kDescale, "f32"));
    args.push_back(toBuffer(in.vDescale, "f32"));
  }
  if (c.alibi)
    args.push_back(toBuffer(in.slopes, "f32"));
  if (!c.rotary.empty()) {
    args.push_back(toBuffer(in.rotaryCos, c.dtype));
    args.push_back(toBuffer(in.rotarySin, c.dtype));
  }
  std::vector<NamedOutput> outputs = {{"O", c.dtype, &ref.output},
                                      {"LSE", "f32", &ref.lse}};
  // The whole updated caches, so that a row written to the wrong place (or
  // a row clobbered) fails as well as a missing one. An FP8 cache must
  // match exactly: the op and the reference quantise the new rows with the
  // same f32 steps, and one e4m3 step off on a small code would hide under
  // a relative tolerance.
  if (c.newRows) {
    std::optional<double> exact;
    if (c.hasFp8Cache())
      exact = 0.0;
    outputs.push_back({"Kc", cacheT, &ref.keyCacheOut, nullptr, exact});
    outputs.push_back({"Vc", cacheT, &ref.valueCacheOut, nullptr, exact});
  }
  return runAndCompare(jit, c, args, outputs);
}

/// Packed Q, K, V (random everywhere, pad rows too, so that a key read
/// across a sequence boundary changes the answer) and the offsets of the
/// case's lengths.
bool runVarlenCase(CaseJit &jit, const CaseSpec &c) {
  AttentionInputs in = makeInputs(c);
  ForwardOutputs ref = referenceVarlen(c, in);
  BackwardOutputs bwd;
  std::vector<Buffer> args;
  if (c.backward) {
    setBackwardInputs(c, ref, in);
    bwd = referenceVarlenBackward(c, in);
    args.push_back(toBuffer(in.gradOutput, c.dtype));
  }
  auto offsets = [](const std::vector<int64_t> &lens) {
    std::vector<int64_t> cu = CaseSpec::cumulative(lens);
    HostTensor t({int64_t(cu.size())});
    for (size_t n = 0; n < cu.size(); ++n)
      t.data[n] = double(cu[n]);
    return t;
  };
  args.push_back(toBuffer(in.q, c.dtype));
  args.push_back(toBuffer(in.k, c.dtype));
  args.push_back(toBuffer(in.v, c.dtype));
  if (c.backward) {
    args.push_back(toBuffer(in.output, c.dtype));
    args.push_back(toBuffer(in.lse, "f32"));
  }
  args.push_back(toBuffer(offsets(c.lensQ), "i32"));
  args.push_back(toBuffer(offsets(c.lensK), "i32"));
  if (c.alibi)
    args.push_back(toBuffer(in.slopes, "f32"));
  std::vector<NamedOutput> outputs = {{"O", c.outputType(), &ref.output},
                                      {"LSE", "f32", &ref.lse}};
  if (c.backward)
    outputs = {{"dQ", c.dtype, &bwd.gradQuery},
               {"dK", c.dtype, &bwd.gradKey},
               {"dV", c.dtype, &bwd.gradValue}};
  return runAndCompare(jit, c, args, outputs);
}

/// Runs one case; returns whether it passed.
bool runCase(CaseJit &jit, const CaseSpec &c) {
  if (c.isKVCache())
    return runKVCacheCase(jit, c);
  if (c.isVarlen())
    return runVarlenCase(jit, c);
  AttentionInputs in = makeInputs(c);
  if (c.isBlockSparse())
    makeBlockLists(c, in);
  std::vector<Buffer> args;
  std::vector<NamedOutput> outputs;
  ForwardOutputs fwd = referenceForward(c, in);
  BackwardOutputs bwd;
  if (c.backward) {
    setBackwardInputs(c, fwd, in);
    bwd = referenceBackward(c, in);
    args.push_back(toBuffer(in.gradOutput, c.dtype));
  }
  args.push_back(toBuffer(in.q, c.dtype));
  args.push_back(toBuffer(in.k, c.dtype));
  args.push_back(toBuffer(in.v, c.dtype));
  if (c.backward) {
    args.push_back(toBuffer(in.output, c.dtype));
    args.push_back(toBuffer(in.lse, "f32"));
  }
  if (!in.bias.empty())
    args.push_back(toBuffer(in.bias, c.biasType()));
  if (!in.mask.empty())
    args.push_back(toBuffer(in.mask, "i1"));
  appendBlockLists(in, args);
  if (c.alibi)
    args.push_back(toBuffer(in.slopes, "f32"));
  if (c.isFp8()) {
    args.push_back(toBuffer(in.qDescale, "f32"));
    args.push_back(toBuffer(in.kDescale, "f32"));
    args.push_back(toBuffer(in.vDescale, "f32"));
  }
  if (c.backward) {
    outputs = {{"dQ", c.dtype, &bwd.gradQuery},
               {"dK", c.dtype, &bwd.gradKey},
               {"dV", c.dtype, &bwd.gradValue}};
    if (!in.bias.empty() && c.gradBias)
      outputs.push_back(
          {"dBias", c.dtype, &bwd.gradBias, &bwd.gradBiasTermMagnitude});
  } else {
    outputs = {{"O", c.outputType(), &fwd.output}, {"LSE", "f32", &fwd.lse}};
  }
  return runAndCompare(jit, c, args, outputs);
}

/// Appends poisoned output buffers to `args`, runs the case's module and
/// compares each output with its reference; returns whether all passed.
bool runAndCompare(CaseJit &jit, const CaseSpec &c, std::vector<Buffer> &args,
                   const std::vector<NamedOutput> &outputs) {
  size_t firstOutput = args.size();
  for (auto &o : outputs)
    args.push_back(poisoned(o.reference->shape, o.type));

  std::string source = buildCaseModule(c);
  if (llvm::Error err =
          jit.run(source, cpuLoweringPipeline(c.lowering, c.blockM, c.blockN),
                  kCaseFunction, args)) {
    std::printf("  error: %s\n  module:\n%s", llvm::toString(std::move(err)).c_str(),
                source.c_str());
    return false;
  }
  bool pass = true;
  double tol = c.effectiveTolerance();
  for (size_t n = 0; n < outputs.size(); ++n) {
    std::vector<double> got = decode(outputs[n].type, args[firstOutput + n].bytes);
    Comparison cmp =
        compare(got, outputs[n].reference->data, outputs[n].magnitude);
    bool ok = cmp.relative() <= outputs[n].tolerance.value_or(tol);
    pass &= ok;
    std::printf("  %-5s max_abs_err %.3e  scale %.3e  rel %.3e%s%s\n",
                outputs[n].name, cmp.maxAbsErr, cmp.maxRef, cmp.relative(),
                cmp.nonFiniteMismatch ? "  (inf/nan mismatch)" : "",
                ok ? "" : "  <-- over tolerance");
  }
  std::printf("  tolerance %.1e\n", tol);
  return pass;
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help")) {
    std::printf("usage: flashfuse-numerics 'CASE' ['CASE' ...]\n"
                "each CASE is a list of key=value pairs:\n%s",
                caseKeysHelp());
    return argc < 2 ? 2 : 0;
  }
  CaseJit jit;
  int passed = 0, total = argc - 1;
  for (int n = 1; n < argc; ++n) {
    std::string error;
    auto spec = parseCase(argv[n], error);
    std::printf("case %d: %s\n", n, argv[n]);
    bool ok = false;
    if (!spec)
      std::printf("  error: %s\n", error.c_str());
    else
      ok = runCase(jit, *spec);
    std::printf("%s: case %d\n", ok ? "PASS" : "FAIL", n);
    std::fflush(stdout);
    passed += ok;
  }
  std::printf("%d of %d cases passed\n", passed, total);
  return passed == total ? 0 : 1;
}
