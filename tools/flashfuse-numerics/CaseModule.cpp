//===- CaseModule.cpp - MLIR source of a numerics case ---------------------===//
//
// The case is written as MLIR text: it is the form users write, it is
// parsed and verified like theirs, and a failing case can be printed and
// replayed with flashfuse-opt.
//
//===----------------------------------------------------------------------===//
#include "CaseModule.h"

#include "HostTensor.h"

#include <cstring>
#include <sstream>

using namespace flashfuse::numerics;

namespace {
struct Operand {
  std::string name, type;
};

std::string shapeType(const std::vector<int64_t> &shape, const std::string &elt,
                      const char *kind) {
  std::ostringstream os;
  os << kind << "<";
  for (int64_t d : shape)
    os << d << "x";
  os << elt << ">";
  return os.str();
}

/// An f32 attribute written as its bit pattern, so that it round-trips
/// exactly.
std::string f32Attr(double v) {
  float f = float(v);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  std::ostringstream os;
  os << "0x" << std::hex << std::uppercase << bits << " : f32";
  return os.str();
}

std::string attributes(const CaseSpec &c) {
  std::vector<std::string> attrs;
  if (c.scale)
    attrs.push_back("scale = " + f32Attr(*c.scale));
  if (c.causal == "tl")
    attrs.push_back("causal = #flash.causal<top_left>");
  if (c.causal == "br")
    attrs.push_back("causal = #flash.causal<bottom_right>");
  if (c.windowLeft)
    attrs.push_back("window_left = " + std::to_string(*c.windowLeft) + " : i64");
  if (c.windowRight)
    attrs.push_back("window_right = " + std::to_string(*c.windowRight) + " : i64");
  if (c.softcap)
    attrs.push_back("softcap = " + f32Attr(*c.softcap));
  if (c.dropout > 0)
    attrs.push_back("dropout_p = " + f32Attr(c.dropout));
  if (c.rotary == "interleaved")
    attrs.push_back("rotary_interleaved");
  if (c.isFp8() && c.descale == "block")
    attrs.push_back("descale_block_size = array<i64: " +
                    std::to_string(c.descaleBlockQ) + ", " +
                    std::to_string(c.descaleBlockK) + ">");
  if (c.isBlockSparse())
    attrs.push_back("sparse_block_size = array<i64: " +
                    std::to_string(c.sparseBlockQ) + ", " +
                    std::to_string(c.sparseBlockK) + ">");
  if (c.layout != "bhsd") {
    auto perm = c.perm();
    std::string value = "array<i64: " + std::to_string(perm[0]) + ", " +
                        std::to_string(perm[1]) + ", " + std::to_string(perm[2]) +
                        ", " + std::to_string(perm[3]) + ">";
    // A paged cache has its own fixed layout: only Q (and new_kv) follow
    // the case's.
    for (const char *p : {"q_perm", "k_perm", "v_perm"})
      if (!c.pageSize || std::strcmp(p, "q_perm") == 0)
        attrs.push_back(std::string(p) + " = " + value);
  }
  std::string s = "{";
  for (size_t i = 0; i < attrs.size(); ++i)
    s += (i ? ", " : "") + attrs[i];
  return s + "}";
}

/// A score_mod adding 0.5 / (n + 1) * (j - i), n = h, or with `withBatch`
/// n = b + h (a bias that also depends on b: over a packed batch, the
/// sequence). SSA names carry a `mod_` prefix because the regions are not
/// isolated from above and share the function's names.
std::string linearBiasScoreMod(bool withBatch) {
  std::string n = withBatch ? "    %mod_n = arith.addi %mod_b, %mod_h : index\n"
                            : "    %mod_n = arith.addi %mod_h, %mod_c0 : index\n";
  return R"( score_mod {
  ^bb0(%mod_s: f32, %mod_b: index, %mod_h: index, %mod_i: index, %mod_j: index):
    %mod_c0 = arith.constant 0 : index
    %mod_c1 = arith.constant 1 : index
)" + n + R"(    %mod_h1 = arith.addi %mod_n, %mod_c1 : index
    %mod_hi = arith.index_cast %mod_h1 : index to i64
    %mod_hf = arith.sitofp %mod_hi : i64 to f32
    %mod_half = arith.constant 0.5 : f32
    %mod_slope = arith.divf %mod_half, %mod_hf : f32
    %mod_dist = arith.subi %mod_j, %mod_i : index
    %mod_di = arith.index_cast %mod_dist : index to i64
    %mod_df = arith.sitofp %mod_di : i64 to f32
    %mod_bias = arith.mulf %mod_slope, %mod_df : f32
    %mod_r = arith.addf %mod_s, %mod_bias : f32
    flash.yield %mod_r : f32
  })";
}

/// Region bodies (see linearBiasScoreMod for their names).
std::string regions(const CaseSpec &c) {
  std::string s;
  if (c.scoreMod == "alibi" || c.scoreMod == "batch_slope")
    s += linearBiasScoreMod(c.scoreMod == "batch_slope");
  if (c.maskMod == "document")
    // Documents of 8 tokens: query i sees key j iff i / 8 == j / 8.
    s += R"( mask_mod {
  ^bb0(%mod_b: index, %mod_h: index, %mod_i: index, %mod_j: index):
    %mod_c8 = arith.constant 8 : index
    %mod_qd = arith.divui %mod_i, %mod_c8 : index
    %mod_kd = arith.divui %mod_j, %mod_c8 : index
    %mod_same = arith.cmpi eq, %mod_qd, %mod_kd : index
    flash.yield %mod_same : i1
  })";
  if (c.maskMod == "drop_row3")
    s += R"( mask_mod {
  ^bb0(%mod_b: index, %mod_h: index, %mod_i: index, %mod_j: index):
    %mod_c3 = arith.constant 3 : index
    %mod_keep = arith.cmpi ne, %mod_i, %mod_c3 : index
    flash.yield %mod_keep : i1
  })";
  return s;
}
} // namespace

/// flash.attention_kvcache; arguments Q, key_cache, value_cache,
/// cache_seqlens, [block_table], [cache_leftpad], [cache_batch_idx],
/// [key_new, value_new], [k_descale,
/// v_descale] (cache=e4m3), [alibi_slopes] (alibi=1|2), [rotary_cos,
/// rotary_sin] (rotary=..), then the results O, LSE, [key_cache_out,
/// value_cache_out].
static std::string buildKVCacheModule(const CaseSpec &c) {
  const std::string &elt = c.dtype, &cacheElt = c.cacheType();
  auto perm = c.perm();
  int64_t dv = c.headDimV();
  std::string qT = shapeType(permutedShape({c.batch, c.headsQ, c.seqQ, c.d}, perm), elt, "tensor");
  std::string kT, vT;
  if (c.pageSize) {
    kT = shapeType({c.numPages(), c.pageSize, c.headsKV, c.d}, cacheElt, "tensor");
    vT = shapeType({c.numPages(), c.pageSize, c.headsKV, dv}, cacheElt, "tensor");
  } else {
    kT = shapeType(permutedShape({c.cacheRows(), c.headsKV, c.seqK, c.d}, perm), cacheElt, "tensor");
    vT = shapeType(permutedShape({c.cacheRows(), c.headsKV, c.seqK, dv}, perm), cacheElt, "tensor");
  }
  std::string descaleT = c.descale == "tensor"
                             ? "tensor<f32>"
                             : shapeType({c.batch, c.headsKV}, "f32", "tensor");
  std::string lensT = shapeType({c.batch}, "i32", "tensor");
  std::string tableT = shapeType({c.batch, c.maxPages()}, "i32", "tensor");
  std::string knT = shapeType(permutedShape({c.batch, c.headsKV, c.newRows, c.d}, perm), elt, "tensor");
  std::string vnT = shapeType(permutedShape({c.batch, c.headsKV, c.newRows, dv}, perm), elt, "tensor");
  std::string oT = shapeType(permutedShape({c.batch, c.headsQ, c.seqQ, dv}, perm), elt, "tensor");
  std::string lseT = shapeType({c.batch, c.headsQ, c.seqQ}, "f32", "tensor");

  std::vector<Operand> ins = {{"q", qT}, {"kc", kT}, {"vc", vT}, {"lens", lensT}};
  if (c.pageSize)
    ins.push_back({"table", tableT});
  if (!c.leftpad.empty())
    ins.push_back({"leftpad", lensT});
  if (!c.batchIdx.empty())
    ins.push_back({"bidx", lensT});
  if (c.newRows) {
    ins.push_back({"kn", knT});
    ins.push_back({"vn", vnT});
  }
  if (c.hasFp8Cache()) {
    ins.push_back({"kd", descaleT});
    ins.push_back({"vd", descaleT});
  }
  std::string slopesT =
      c.alibi == 2 ? shapeType({c.batch, c.headsQ}, "f32", "tensor")
                   : shapeType({c.headsQ}, "f32", "tensor");
  if (c.alibi)
    ins.push_back({"slopes", slopesT});
  std::string rotaryT = shapeType(
      {c.effectiveRotaryRows(), c.effectiveRotaryDim() / 2}, elt, "tensor");
  if (!c.rotary.empty()) {
    ins.push_back({"rcos", rotaryT});
    ins.push_back({"rsin", rotaryT});
  }
  std::vector<Operand> outs = {{"o", oT}, {"lse", lseT}};
  if (c.newRows) {
    outs.push_back({"kc", kT});
    outs.push_back({"vc", vT});
  }
  auto memrefOf = [](const std::string &tensorType) {
    return "memref" + tensorType.substr(std::strlen("tensor"));
  };

  std::ostringstream os;
  os << "func.func @" << kCaseFunction << "(";
  for (size_t i = 0; i < ins.size(); ++i)
    os << (i ? ", " : "") << "%" << ins[i].name << "_m: " << memrefOf(ins[i].type);
  for (auto &o : outs)
    os << ", %" << o.name << "_out: " << memrefOf(o.type);
  os << ") attributes {llvm.emit_c_interface} {\n";
  for (auto &o : ins)
    os << "  %" << o.name << " = bufferization.to_tensor %" << o.name
       << "_m restrict : " << memrefOf(o.type) << " to " << o.type << "\n";
  os << "  ";
  for (size_t i = 0; i < outs.size(); ++i)
    os << (i ? ", " : "") << "%r" << i;
  os << " = flash.attention_kvcache %q, %kc, %vc, %lens";
  if (c.pageSize)
    os << " block_table(%table : " << tableT << ")";
  if (!c.leftpad.empty())
    os << " cache_leftpad(%leftpad : " << lensT << ")";
  if (!c.batchIdx.empty())
    os << " cache_batch_idx(%bidx : " << lensT << ")";
  if (c.newRows)
    os << " new_kv(%kn, %vn : " << knT << ", " << vnT << ")";
  if (c.hasFp8Cache())
    os << " descale(%kd, %vd : " << descaleT << ", " << descaleT << ")";
  if (c.alibi)
    os << " alibi(%slopes : " << slopesT << ")";
  if (!c.rotary.empty())
    os << " rotary(%rcos, %rsin : " << rotaryT << ", " << rotaryT << ")";
  os << " " << attributes(c) << " : " << qT << ", " << kT << ", " << vT << ", "
     << lensT << " -> ";
  for (size_t i = 0; i < outs.size(); ++i)
    os << (i ? ", " : "") << outs[i].type;
  os << "\n";
  for (size_t i = 0; i < outs.size(); ++i)
    os << "  bufferization.materialize_in_destination %r" << i
       << " in restrict writable %" << outs[i].name << "_out : ("
       << outs[i].type << ", " << memrefOf(outs[i].type) << ") -> ()\n";
  os << "  return\n}\n";
  return os.str();
}

std::string flashfuse::numerics::buildCaseModule(const CaseSpec &c) {
  if (c.isKVCache())
    return buildKVCacheModule(c);
  const std::string &elt = c.dtype;
  std::string qT = shapeType(permutedShape({c.batch, c.headsQ, c.seqQ, c.d}, c.perm()), elt, "tensor");
  std::string kT = shapeType(permutedShape({c.batch, c.headsKV, c.seqK, c.d}, c.perm()), elt, "tensor");
  std::string vT = shapeType(permutedShape({c.batch, c.headsKV, c.seqK, c.headDimV()}, c.perm()), elt, "tensor");
  // O (and dO, of O's type): the inputs' type but for out=f32 forwards.
  std::string oT = shapeType(permutedShape({c.batch, c.headsQ, c.seqQ, c.headDimV()}, c.perm()), c.outputType(), "tensor");
  std::string lseT = shapeType({c.batch, c.headsQ, c.seqQ}, "f32", "tensor");
  std::string biasT = c.bias.empty() ? "" : shapeType(c.broadcastShape(c.bias), c.biasType(), "tensor");
  std::string maskT = c.mask.empty() ? "" : shapeType(c.broadcastShape(c.mask), "i1", "tensor");
  std::string cuT = c.isVarlen() ? shapeType({int64_t(c.lensQ.size()) + 1}, "i32", "tensor") : "";
  std::string numT, idxT;
  bool fullLists = c.isBlockSparse() && c.fullFraction > 0;
  if (c.isBlockSparse()) {
    numT = shapeType(c.blockCountShape(), "i32", "tensor");
    idxT = shapeType(c.blockIndexShape(), "i32", "tensor");
  }

  std::vector<Operand> ins;
  if (c.backward)
    ins.push_back({"do", oT});
  ins.push_back({"q", qT});
  ins.push_back({"k", kT});
  ins.push_back({"v", vT});
  if (c.backward) {
    ins.push_back({"o", oT});
    ins.push_back({"lse", lseT});
  }
  if (!biasT.empty())
    ins.push_back({"bias", biasT});
  if (!maskT.empty())
    ins.push_back({"mask", maskT});
  if (c.isVarlen()) {
    ins.push_back({"cu_q", cuT});
    ins.push_back({"cu_k", cuT});
  }
  if (c.isBlockSparse()) {
    ins.push_back({"kvn", numT});
    ins.push_back({"kvi", idxT});
    if (fullLists) {
      ins.push_back({"fkvn", numT});
      ins.push_back({"fkvi", idxT});
    }
  }
  // FP8: [], [B, H] or [B, H, N] f32 descales (Hq for Q, Hkv for K and V).
  std::string qdT, kdT;
  if (c.isFp8()) {
    qdT = shapeType(c.descaleShape(c.headsQ, c.seqQ, c.descaleBlockQ), "f32",
                    "tensor");
    kdT = shapeType(c.descaleShape(c.headsKV, c.seqK, c.descaleBlockK), "f32",
                    "tensor");
    ins.push_back({"qd", qdT});
    ins.push_back({"kd", kdT});
    ins.push_back({"vd", kdT});
  }
  // ALiBi's slopes: [Hq] or [B, Hq] (B the sequences of a varlen case).
  std::string slopesT;
  if (c.alibi) {
    int64_t batch = c.isVarlen() ? int64_t(c.lensQ.size()) : c.batch;
    slopesT = c.alibi == 2 ? shapeType({batch, c.headsQ}, "f32", "tensor")
                           : shapeType({c.headsQ}, "f32", "tensor");
    ins.insert(c.isFp8() ? ins.end() - 3 : ins.end(), {"slopes", slopesT});
  }
  std::vector<Operand> outs;
  if (c.backward) {
    outs = {{"dq", qT}, {"dk", kT}, {"dv", vT}};
    if (!biasT.empty() && c.gradBias)
      outs.push_back({"dbias", biasT});
  } else {
    outs = {{"o", oT}, {"lse", lseT}};
  }
  auto memrefOf = [](const std::string &tensorType) {
    return "memref" + tensorType.substr(std::strlen("tensor"));
  };

  std::ostringstream os;
  os << "func.func @" << kCaseFunction << "(";
  bool first = true;
  for (auto &o : ins) {
    os << (first ? "" : ", ") << "%" << o.name << "_m: " << memrefOf(o.type);
    first = false;
  }
  for (auto &o : outs)
    os << ", %" << o.name << "_out: " << memrefOf(o.type);
  os << ") attributes {llvm.emit_c_interface} {\n";
  for (auto &o : ins)
    os << "  %" << o.name << " = bufferization.to_tensor %" << o.name
       << "_m restrict : " << memrefOf(o.type) << " to " << o.type << "\n";
  if (c.dropout > 0)
    os << "  %seed = arith.constant " << int64_t(c.dropoutSeed) << " : i64\n";

  os << "  ";
  for (size_t i = 0; i < outs.size(); ++i)
    os << (i ? ", " : "") << "%r" << i;
  if (c.backward)
    os << " = flash.attention_grad %do, %q, %k, %v, %o, %lse";
  else
    os << " = flash.attention %q, %k, %v";
  if (!biasT.empty())
    os << " bias(%bias : " << biasT << ")";
  if (!maskT.empty())
    os << " mask(%mask : " << maskT << ")";
  if (c.dropout > 0)
    os << " seed(%seed)";
  if (c.isVarlen())
    os << " varlen(%cu_q, %cu_k : " << cuT << ", " << cuT << ")";
  if (c.isBlockSparse())
    os << " block_sparse(%kvn, %kvi : " << numT << ", " << idxT << ")";
  if (fullLists)
    os << " full_blocks(%fkvn, %fkvi : " << numT << ", " << idxT << ")";
  if (c.alibi)
    os << " alibi(%slopes : " << slopesT << ")";
  if (c.isFp8())
    os << " descale(%qd, %kd, %vd : " << qdT << ", " << kdT << ", " << kdT
       << ")";
  os << " " << attributes(c) << " : ";
  if (c.backward)
    os << oT << ", " << qT << ", " << kT << ", " << vT << ", " << oT << ", "
       << lseT;
  else
    os << qT << ", " << kT << ", " << vT;
  os << " -> ";
  for (size_t i = 0; i < outs.size(); ++i)
    os << (i ? ", " : "") << outs[i].type;
  os << regions(c) << "\n";
  for (size_t i = 0; i < outs.size(); ++i)
    os << "  bufferization.materialize_in_destination %r" << i
       << " in restrict writable %" << outs[i].name << "_out : ("
       << outs[i].type << ", " << memrefOf(outs[i].type) << ") -> ()\n";
  os << "  return\n}\n";
  return os.str();
}
