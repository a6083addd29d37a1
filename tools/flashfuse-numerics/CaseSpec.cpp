//===- CaseSpec.cpp - parsing numerics cases ------------------------------===//
#include "CaseSpec.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

using namespace flashfuse::numerics;

double CaseSpec::effectiveTolerance() const {
  if (tolerance)
    return *tolerance;
  // Everything is accumulated in f32, so the error of an f32 case is a few
  // hundred f32 ulps of the largest value at most (sums over <= a few hundred
  // keys); f16 / bf16 cases also round their inputs' products into f32 and
  // their outputs to 11 / 8 significant bits. An f32 O (out=f32) keeps
  // the f32 result unrounded: the f32 bound holds whatever the inputs (a
  // 16-bit product is exact in f32), and it is below what rounding O to
  // f16 or bf16 costs, so such a case fails if O went through 16 bits.
  const std::string &stored = outputType();
  if (stored == "f16")
    return 4e-3;
  if (stored == "bf16")
    return 2e-2;
  return 1e-4;
}

double CaseSpec::effectiveScale() const {
  double s = scale ? *scale : 1.0 / std::sqrt(double(d));
  return double(float(s));
}

std::array<int64_t, 4> CaseSpec::perm() const {
  if (layout == "bshd")
    return {0, 2, 1, 3};
  if (layout == "bhds")
    return {0, 1, 3, 2};
  return {0, 1, 2, 3};
}

std::vector<int64_t> CaseSpec::cumulative(const std::vector<int64_t> &lens) {
  std::vector<int64_t> cu = {0};
  for (int64_t len : lens)
    cu.push_back(cu.back() + len);
  return cu;
}

std::vector<int64_t> CaseSpec::broadcastShape(const std::string &pattern) const {
  int64_t full[4] = {batch, headsQ, seqQ, seqK};
  std::vector<int64_t> s;
  for (int k = 0; k < 4; ++k)
    s.push_back(pattern[k] == 'x' ? full[k] : 1);
  return s;
}

std::vector<int64_t> CaseSpec::descaleShape(int64_t heads, int64_t seq,
                                            int64_t blockRows) const {
  if (descale == "tensor")
    return {};
  if (descale == "block")
    return {batch, heads, (seq + blockRows - 1) / blockRows};
  return {batch, heads};
}

std::vector<int64_t> CaseSpec::blockCountShape() const {
  return {sparseBcast[0] == 'x' ? batch : 1, sparseBcast[1] == 'x' ? headsQ : 1,
          queryBlocks()};
}

std::vector<int64_t> CaseSpec::blockIndexShape() const {
  std::vector<int64_t> s = blockCountShape();
  s.push_back(keyBlocks());
  return s;
}

static bool validPattern(const std::string &p) {
  if (p.size() != 4)
    return false;
  for (char c : p)
    if (c != 'x' && c != '1')
      return false;
  return true;
}

std::optional<CaseSpec> flashfuse::numerics::parseCase(const std::string &text,
                                                       std::string &error) {
  CaseSpec c;
  std::string normalized = text;
  for (char &ch : normalized)
    if (ch == ',')
      ch = ' ';
  std::istringstream in(normalized);
  std::string item;
  while (in >> item) {
    auto eq = item.find('=');
    if (eq == std::string::npos) {
      error = "expected key=value, got '" + item + "'";
      return std::nullopt;
    }
    std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    auto i64 = [&] { return std::strtoll(val.c_str(), nullptr, 0); };
    auto f64 = [&] { return std::strtod(val.c_str(), nullptr); };
    if (key == "lowering" && (val == "naive" || val == "loops"))
      c.lowering = val;
    else if (key == "op" &&
             (val == "attention" || val == "kvcache" || val == "varlen"))
      c.op = val;
    else if (key == "lens" || key == "lens_q" || key == "lens_k" ||
             key == "leftpad" || key == "batch_idx") {
      // Colon-separated: commas already separate the pairs.
      std::istringstream lens(val);
      std::string len;
      std::vector<int64_t> &list = key == "lens"      ? c.seqlens
                                   : key == "lens_q"  ? c.lensQ
                                   : key == "leftpad" ? c.leftpad
                                   : key == "batch_idx" ? c.batchIdx
                                                      : c.lensK;
      list.clear();
      while (std::getline(lens, len, ':'))
        list.push_back(std::strtoll(len.c_str(), nullptr, 0));
    } else if (key == "pad")
      c.pad = i64();
    else if (key == "cache_batch")
      c.cacheBatch = i64();
    else if (key == "Snew")
      c.newRows = i64();
    else if (key == "page")
      c.pageSize = i64();
    else if (key == "spare_pages")
      c.sparePages = i64();
    else if (key == "dir" && (val == "fwd" || val == "bwd"))
      c.backward = val == "bwd";
    else if (key == "B")
      c.batch = i64();
    else if (key == "Hq")
      c.headsQ = i64();
    else if (key == "Hkv")
      c.headsKV = i64();
    else if (key == "Sq")
      c.seqQ = i64();
    else if (key == "Sk")
      c.seqK = i64();
    else if (key == "D")
      c.d = i64();
    else if (key == "Dv")
      c.dv = i64();
    else if (key == "dtype" && (val == "f32" || val == "f16" || val == "bf16"))
      c.dtype = val;
    else if (key == "dtype" && val == "e4m3")
      c.dtype = "f8E4M3FN";
    else if (key == "out" && (val == "f32" || val == "bf16" || val == "f16"))
      c.outDtype = val;
    else if (key == "cache" && val == "e4m3")
      c.cacheDtype = "f8E4M3FN";
    else if (key == "ref_descale" && val == "first")
      c.referenceFirstDescale = true;
    else if (key == "ref_quantize" && (val == "0" || val == "1"))
      c.referenceQuantizesNewRows = val == "1";
    else if (key == "descale" &&
             (val == "head" || val == "tensor" || val == "block"))
      c.descale = val;
    else if (key == "descale_block") {
      // BQxBK
      auto x = val.find('x');
      c.descaleBlockQ = std::strtoll(val.substr(0, x).c_str(), nullptr, 0);
      c.descaleBlockK = x == std::string::npos
                            ? 0
                            : std::strtoll(val.substr(x + 1).c_str(), nullptr, 0);
      if (c.descaleBlockQ <= 0 || c.descaleBlockK <= 0) {
        error = "descale_block= takes BQxBK (both positive), got '" + val + "'";
        return std::nullopt;
      }
    }
    else if (key == "ref_p8" && (val == "0" || val == "1"))
      c.referenceQuantizesP = val == "1";
    else if (key == "layout" && (val == "bhsd" || val == "bshd" || val == "bhds"))
      c.layout = val;
    else if (key == "scale")
      c.scale = f64();
    else if (key == "causal" && (val == "tl" || val == "br"))
      c.causal = val;
    else if (key == "wl")
      c.windowLeft = i64();
    else if (key == "wr")
      c.windowRight = i64();
    else if (key == "softcap")
      c.softcap = f64();
    else if (key == "alibi" && (val == "1" || val == "2"))
      c.alibi = val == "1" ? 1 : 2;
    else if (key == "rotary" && (val == "half" || val == "interleaved"))
      c.rotary = val;
    else if (key == "rotary_dim")
      c.rotaryDim = i64();
    else if (key == "rotary_rows")
      c.rotaryRows = i64();
    else if (key == "dropout")
      c.dropout = f64();
    else if (key == "dropout_seed")
      c.dropoutSeed = std::strtoull(val.c_str(), nullptr, 0);
    else if (key == "bias" && validPattern(val))
      c.bias = val;
    else if (key == "dbias")
      c.gradBias = i64() != 0;
    else if (key == "mask" && validPattern(val))
      c.mask = val;
    else if (key == "masked_row")
      c.maskedRow = i64();
    else if (key == "score_mod" && (val == "alibi" || val == "batch_slope"))
      c.scoreMod = val;
    else if (key == "mask_mod" && (val == "document" || val == "drop_row3"))
      c.maskMod = val;
    else if (key == "seed")
      c.seed = std::strtoull(val.c_str(), nullptr, 0);
    else if (key == "input_scale")
      c.inputScale = f64();
    else if (key == "block_m")
      c.blockM = i64();
    else if (key == "block_n")
      c.blockN = i64();
    else if (key == "tol")
      c.tolerance = f64();
    else if (key == "sparse") {
      // BQxBK
      auto x = val.find('x');
      if (x == std::string::npos) {
        error = "sparse= takes BQxBK, got '" + val + "'";
        return std::nullopt;
      }
      c.sparseBlockQ = std::strtoll(val.substr(0, x).c_str(), nullptr, 0);
      c.sparseBlockK = std::strtoll(val.substr(x + 1).c_str(), nullptr, 0);
    } else if (key == "density")
      c.density = f64();
    else if (key == "full")
      c.fullFraction = f64();
    else if (key == "empty_rows")
      c.emptyRows = f64();
    else if (key == "sparse_bcast" && val.size() == 2 &&
             (val[0] == 'x' || val[0] == '1') &&
             (val[1] == 'x' || val[1] == '1'))
      c.sparseBcast = val;
    else {
      error = "unknown key or value '" + item + "'";
      return std::nullopt;
    }
  }
  if (c.maskedRow >= 0 && c.mask.empty())
    c.mask = "xxxx";
  if (c.maskedRow >= 0 && c.mask[2] != 'x') {
    error = "masked_row needs a mask with a full Sq dimension";
    return std::nullopt;
  }
  if (c.headsKV <= 0 || c.headsQ % c.headsKV != 0) {
    error = "Hq must be a multiple of Hkv";
    return std::nullopt;
  }
  if (c.isFp8()) {
    // The verifier's FP8 refusals are tested by lit; the harness runs the
    // op inside its contract.
    if (c.outDtype.empty())
      c.outDtype = "bf16";
    if (c.outDtype == "f32" || c.backward || c.op != "attention" ||
        c.dropout > 0 || !c.referenceQuantizesNewRows) {
      error = "dtype=e4m3 is flash.attention's forward (op=attention, "
              "dir=fwd, no dropout or ref_quantize) with out=bf16 or "
              "out=f16";
      return std::nullopt;
    }
  } else if (c.outDtype == "bf16" || c.outDtype == "f16") {
    error = "out=bf16 and out=f16 are for dtype=e4m3 (other O types follow "
            "dtype, or out=f32)";
    return std::nullopt;
  }
  if (!c.isFp8() && !c.isKVCache() && c.referenceFirstDescale) {
    error = "ref_descale=first is for dtype=e4m3 and cache=e4m3";
    return std::nullopt;
  }
  if (c.outDtype == "f32" && (c.backward || c.isKVCache())) {
    error = "out=f32 is flash.attention's (op=attention or varlen, dir=fwd): "
            "flash.attention_grad and flash.attention_kvcache write O in the "
            "inputs' type";
    return std::nullopt;
  }
  if (c.isKVCache()) {
    // The harness checks the op inside its contract (docs/KVCACHE.md);
    // the verifier's refusals are tested by lit, not here.
    if (c.seqlens.empty()) {
      error = "op=kvcache needs lens=L0:L1:... (one length per sequence)";
      return std::nullopt;
    }
    c.batch = int64_t(c.seqlens.size());
    for (int64_t len : c.seqlens)
      if (len < 0 || len + c.newRows > c.seqK) {
        error = "each length plus Snew must lie in [0, Sk] (the capacity)";
        return std::nullopt;
      }
    if (!c.leftpad.empty() && c.leftpad.size() != c.seqlens.size()) {
      error = "leftpad=P0:P1:... needs one entry per length";
      return std::nullopt;
    }
    if (!c.batchIdx.empty()) {
      // In range, and distinct where rows are appended (the op's contract).
      std::vector<int64_t> seen;
      bool ok = c.batchIdx.size() == c.seqlens.size() && !c.pageSize;
      for (int64_t i : c.batchIdx) {
        ok = ok && i >= 0 && i < c.cacheRows();
        ok = ok && !(c.newRows &&
                     std::find(seen.begin(), seen.end(), i) != seen.end());
        seen.push_back(i);
      }
      if (!ok) {
        error = "batch_idx=I0:I1:.. needs one index per length, each in "
                "[0, cache_batch), distinct with Snew > 0, and a contiguous "
                "cache";
        return std::nullopt;
      }
    } else if (c.cacheBatch) {
      error = "cache_batch needs batch_idx";
      return std::nullopt;
    }
    if (!c.rotary.empty() &&
        (c.newRows == 0 || c.effectiveRotaryDim() % 2 != 0 ||
         c.effectiveRotaryDim() <= 0 || c.effectiveRotaryDim() > c.d ||
         c.effectiveRotaryRows() < c.seqK)) {
      error = "rotary needs Snew > 0, an even rotary_dim in (0, D] and "
              "rotary_rows >= Sk (the op's rules)";
      return std::nullopt;
    }
    if (c.pageSize < 0 || (c.pageSize && c.seqK % c.pageSize != 0) ||
        c.sparePages < 0) {
      error = "page must divide Sk (the capacity); spare_pages >= 0";
      return std::nullopt;
    }
    if (c.backward || c.causal == "tl" || !c.bias.empty() || !c.mask.empty() ||
        c.dropout > 0 || !c.scoreMod.empty() || !c.maskMod.empty()) {
      error = "op=kvcache is forward only, with causal=br and no bias, "
              "mask, dropout or regions";
      return std::nullopt;
    }
    if (c.hasFp8Cache() && c.dtype != "f16" && c.dtype != "bf16") {
      error = "cache=e4m3 takes dtype=f16 or bf16 (Q, the new rows and O; "
              "the verifier refuses the others)";
      return std::nullopt;
    }
    if (c.descale == "block") {
      error = "descale=block is flash.attention's (op=attention, "
              "dtype=e4m3); an FP8 cache takes descale=head or tensor";
      return std::nullopt;
    }
    if (!c.hasFp8Cache() &&
        (c.referenceFirstDescale || !c.referenceQuantizesNewRows)) {
      error = "ref_descale and ref_quantize are for cache=e4m3";
      return std::nullopt;
    }
  } else if (!c.seqlens.empty() || c.newRows || c.pageSize ||
             c.hasFp8Cache() || !c.leftpad.empty() ||
             !c.rotary.empty() || !c.batchIdx.empty()) {
    error = "lens, leftpad, rotary, batch_idx, Snew, page and "
            "cache=e4m3 need op=kvcache";
    return std::nullopt;
  }
  if (c.isVarlen()) {
    if (c.lensQ.empty() || c.lensQ.size() != c.lensK.size()) {
      error = "op=varlen needs lens_q=.. and lens_k=.. with one length per "
              "sequence each";
      return std::nullopt;
    }
    for (size_t b = 0; b < c.lensQ.size(); ++b)
      if (c.lensQ[b] < 0 || c.lensK[b] < 0) {
        error = "varlen lengths must be non-negative";
        return std::nullopt;
      }
    if (c.pad < 0) {
      error = "pad must be non-negative";
      return std::nullopt;
    }
    // The verifier refuses these with varlen; lit tests those refusals.
    if (!c.bias.empty() || !c.mask.empty()) {
      error = "op=varlen takes no bias or mask";
      return std::nullopt;
    }
    c.batch = 1;
    c.seqQ = CaseSpec::cumulative(c.lensQ).back() + c.pad;
    c.seqK = CaseSpec::cumulative(c.lensK).back() + c.pad;
  } else if (!c.lensQ.empty() || !c.lensK.empty() || c.pad) {
    error = "lens_q, lens_k and pad need op=varlen";
    return std::nullopt;
  }
  if (c.isBlockSparse() || c.sparseBlockK) {
    // The verifier refuses these with the lists; lit tests those refusals.
    if (c.sparseBlockQ <= 0 || c.sparseBlockK <= 0 || c.op != "attention" ||
        c.isFp8() || !c.mask.empty()) {
      error = "sparse=BQxBK (both positive) is for op=attention without FP8 "
              "or a mask operand";
      return std::nullopt;
    }
  }
  return c;
}

const char *flashfuse::numerics::caseKeysHelp() {
  return "  lowering=naive|loops   dir=fwd|bwd   dtype=f32|f16|bf16|e4m3\n"
         "  out=f32 (forward: O in f32, not in dtype)\n"
         "  e4m3 (forward): out=bf16|f16   descale=head|tensor|block   "
         "descale_block=BQxBK   ref_p8=0|1\n"
         "  B= Hq= Hkv= Sq= Sk= D= Dv=   layout=bhsd|bshd|bhds   scale=\n"
         "  causal=tl|br   wl= wr= (window)   softcap=   dropout= dropout_seed=\n"
         "  bias=PPPP mask=PPPP (P: x full, 1 broadcast; over [B,Hq,Sq,Sk])\n"
         "  dbias=0|1   masked_row=I (mask hides row I)\n"
         "  score_mod=alibi|batch_slope   mask_mod=document|drop_row3\n"
         "  alibi=1|2 (the op's ALiBi slopes [Hq] | [B, Hq]; every op)\n"
         "  seed= input_scale= block_m= block_n= tol=\n"
         "  op=attention|kvcache; kvcache: lens=L0:L1:.. (B) Snew= page=\n"
         "    spare_pages= (Sk is the capacity; page=0 contiguous)\n"
         "    leftpad=P0:P1:.. (B)\n"
         "    rotary=half|interleaved rotary_dim= (0: D) rotary_rows= (0: Sk)\n"
         "    batch_idx=I0:I1:.. (B) cache_batch= (sequences the caches hold)\n"
         "    cache=e4m3 (f8E4M3FN caches, descale=head|tensor; dtype=f16|bf16)\n"
         "    ref_descale=first ref_quantize=0|1 (cache=e4m3 counter-cases)\n"
         "  op=varlen (dir=fwd|bwd): lens_q=L0:L1:.. lens_k=L0:L1:.. (one each\n"
         "    per sequence)\n"
         "    pad= (unowned rows after the last sequence; B, Sq, Sk are set)\n"
         "  sparse=BQxBK (block-sparse lists, op=attention): density= full=\n"
         "    (fraction of listed blocks that are full; 0: no full_blocks)\n"
         "    empty_rows= sparse_bcast=xx|1x|x1|11 (lists' B and H)\n";
}
