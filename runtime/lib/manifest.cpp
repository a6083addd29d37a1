#include "manifest.h"
#include "flashfuse/fp8_vt_layout.h"

#include "bound_lists.h"
#include "error.h"

#include <charconv>
#include <set>

namespace flashfuse {

namespace {

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

std::vector<std::string> tokenize(const std::string &line) {
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && isSpace(line[i]))
      ++i;
    size_t start = i;
    while (i < line.size() && !isSpace(line[i]))
      ++i;
    if (i > start)
      tokens.push_back(line.substr(start, i - start));
  }
  return tokens;
}

bool parseInt(const std::string &text, long long lo, long long hi, int &out) {
  long long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
    return false;
  out = static_cast<int>(v);
  return true;
}

bool parseEnum(const std::string &text,
               std::initializer_list<std::pair<const char *, int>> choices,
               int &out) {
  for (const auto &[name, value] : choices)
    if (text == name) {
      out = value;
      return true;
    }
  return false;
}

bool parseParamType(const std::string &kind, flashfuse_param_type &out) {
  int v = 0;
  if (!parseEnum(kind,
                 {{"memref", FLASHFUSE_PARAM_MEMREF},
                  {"i32", FLASHFUSE_PARAM_I32},
                  {"i64", FLASHFUSE_PARAM_I64},
                  {"f32", FLASHFUSE_PARAM_F32},
                  {"tensormap", FLASHFUSE_PARAM_TENSORMAP}},
                 v))
    return false;
  out = static_cast<flashfuse_param_type>(v);
  return true;
}

// Where a kernel's `captures` and its capture<i> params disagree
// (KERNEL_ABI.md "Values captured by score_mod and mask_mod"): each value
// is its params, of the kinds its type is passed as, and no other param
// is named like one. Empty when they agree.
std::string captureProblem(const KernelSpec &k) {
  std::map<std::string, flashfuse_param_type> expected;
  for (size_t i = 0; i < k.captures.size(); ++i) {
    const CaptureSpec &c = k.captures[i];
    std::string name = concat("capture", i);
    if (c.rank >= 0) {
      expected[name] = FLASHFUSE_PARAM_MEMREF;
      for (int d = 0; d + 1 < c.rank; ++d)
        expected[concat(name, "_stride_", d)] = FLASHFUSE_PARAM_I64;
    } else if (c.element == "f16" || c.element == "bf16" ||
               c.element == "f32") {
      expected[name] = FLASHFUSE_PARAM_F32;
    } else {
      expected[name] = c.element == "i64" || c.element == "index"
                           ? FLASHFUSE_PARAM_I64
                           : FLASHFUSE_PARAM_I32;
    }
  }
  if (!k.captures.empty() && !k.mods)
    return "'captures' needs 'mods 1' (values a score_mod / mask_mod reads)";
  if (!k.captures.empty() && k.variant.kind != FLASHFUSE_KIND_FORWARD &&
      k.variant.kind != FLASHFUSE_KIND_BACKWARD &&
      k.variant.kind != FLASHFUSE_KIND_BACKWARD_DQ)
    return "'captures' is for forward, backward and backward_dq kernels only "
           "(the ones that inline score_mod / mask_mod)";
  size_t matched = 0;
  for (const ParamSpec &p : k.params) {
    auto it = expected.find(p.name);
    if (it == expected.end()) {
      if (p.name.rfind("capture", 0) == 0)
        return concat("param '", p.name, "' is no value of 'captures'");
      continue;
    }
    if (it->second != p.type)
      return concat("param '", p.name, "' has the wrong kind for its "
                    "captured value (see 'captures')");
    ++matched;
  }
  if (matched != expected.size())
    return "'captures' names values whose params the kernel does not list";
  return "";
}

// Parsing state kept together so each helper can report "file:line: ...".
class Parser {
public:
  Parser(const std::string &source, Manifest &out) : source_(source), m_(out) {}

  flashfuse_status run(const std::string &text) {
    bool sawHeader = false;
    KernelSpec *open = nullptr;
    std::set<std::string> seenKeys;
    for (size_t pos = 0; pos < text.size();) {
      size_t eol = text.find('\n', pos);
      if (eol == std::string::npos)
        eol = text.size();
      std::string line = text.substr(pos, eol - pos);
      pos = eol + 1;
      ++lineNo_;
      if (auto hash = line.find('#'); hash != std::string::npos)
        line.erase(hash);
      std::vector<std::string> t = tokenize(line);
      if (t.empty())
        continue;
      if (!sawHeader) {
        if (t.size() != 2 || t[0] != "flashfuse-manifest")
          return error("expected 'flashfuse-manifest 1' as the first line");
        if (t[1] != "1")
          return error(concat("manifest version ", t[1],
                              " is not supported by this runtime (knows 1)"));
        sawHeader = true;
        continue;
      }
      if (open) {
        if (t[0] == "end") {
          if (t.size() != 1)
            return error("'end' takes no value");
          if (auto s = finishKernel(*open, seenKeys); s != FLASHFUSE_SUCCESS)
            return s;
          open = nullptr;
          continue;
        }
        // One line per bound param (KERNEL_ABI.md "Block-sparse"): the
        // only key that repeats.
        if (t[0] == "bound") {
          BoundParam b;
          if (std::string why = parseBoundLine(t, b); !why.empty())
            return error(why);
          open->bound.push_back(std::move(b));
          continue;
        }
        if (!seenKeys.insert(t[0]).second)
          return error(concat("key '", t[0], "' given twice in kernel '",
                              open->name, "'"));
        if (auto s = kernelKey(*open, t); s != FLASHFUSE_SUCCESS)
          return s;
        continue;
      }
      if (t[0] == "kernel") {
        if (t.size() != 2)
          return error("expected 'kernel <name>'");
        if (findKernel(m_, t[1]) >= 0)
          return error(concat("kernel '", t[1], "' defined twice"));
        m_.kernels.emplace_back();
        open = &m_.kernels.back();
        open->name = t[1];
        seenKeys.clear();
        kernelLine_ = lineNo_;
        continue;
      }
      if (auto s = topKey(t); s != FLASHFUSE_SUCCESS)
        return s;
    }
    if (!sawHeader)
      return error("empty manifest (expected 'flashfuse-manifest 1')");
    if (open)
      return error(concat("kernel '", open->name, "' (line ", kernelLine_,
                          ") has no 'end'"));
    if (m_.arch == 0)
      return error("no 'arch' line");
    if (m_.ptx.empty() && m_.cubin.empty())
      return error("neither 'ptx' nor 'cubin' is given");
    if (m_.kernels.empty())
      return error("no kernels");
    // Thread-block clusters exist from sm_90 on (the arch may follow the
    // kernels, so this is checked last).
    for (const KernelSpec &k : m_.kernels)
      if (k.clusterMerge && m_.arch < 90)
        return error(concat("kernel '", k.name, "' has 'cluster_merge ",
                            k.clusterMerge, "' but the artifact is for sm_",
                            m_.arch, " (thread-block clusters need sm_90 or "
                            "later)"));
    return FLASHFUSE_SUCCESS;
  }

private:
  flashfuse_status error(const std::string &what) {
    return fail(FLASHFUSE_ERROR_MANIFEST,
                concat(source_, ":", lineNo_, ": ", what));
  }

  flashfuse_status topKey(const std::vector<std::string> &t) {
    if (t.size() != 2)
      return error(concat("expected '", t[0], " <value>'"));
    if (t[0] == "arch") {
      if (!parseInt(t[1], 10, 1000, m_.arch))
        return error(concat("bad arch '", t[1], "' (expected e.g. 90)"));
    } else if (t[0] == "ptx") {
      m_.ptx = t[1];
    } else if (t[0] == "cubin") {
      m_.cubin = t[1];
    } else {
      return error(concat("unknown key '", t[0], "'"));
    }
    return FLASHFUSE_SUCCESS;
  }

  flashfuse_status kernelKey(KernelSpec &k, const std::vector<std::string> &t) {
    const std::string &key = t[0];
    if (key == "params") {
      std::set<std::string> names;
      for (size_t i = 1; i < t.size(); ++i) {
        auto colon = t[i].find(':');
        ParamSpec p;
        if (colon == std::string::npos || colon + 1 == t[i].size() ||
            !parseParamType(t[i].substr(0, colon), p.type))
          return error(concat("bad param '", t[i],
                              "' (expected memref|i32|i64|f32:NAME)"));
        p.name = t[i].substr(colon + 1);
        if (!names.insert(p.name).second)
          return error(concat("param '", p.name, "' listed twice"));
        k.params.push_back(std::move(p));
      }
      if (k.params.empty())
        return error("'params' lists no parameters");
      return FLASHFUSE_SUCCESS;
    }
    if (key == "captures") {
      // One token per captured value: ELT for a scalar, ELT/RANK for a
      // tensor; finishKernel matches them against the params.
      for (size_t i = 1; i < t.size(); ++i) {
        CaptureSpec c;
        auto slash = t[i].find('/');
        c.element = t[i].substr(0, slash);
        bool known = false;
        for (const char *e : {"i1", "i8", "i16", "i32", "i64", "index", "f16",
                              "bf16", "f32"})
          known |= c.element == e;
        if (!known || (slash != std::string::npos &&
                       !parseInt(t[i].substr(slash + 1), 0, 8, c.rank)))
          return error(concat("bad capture '", t[i],
                              "' (expected ELT or ELT/RANK, ELT one of i1 i8 "
                              "i16 i32 i64 index f16 bf16 f32, RANK 0..8)"));
        k.captures.push_back(std::move(c));
      }
      if (k.captures.empty())
        return error("'captures' lists no values");
      return FLASHFUSE_SUCCESS;
    }
    if (key == "bound_for") {
      if (std::string why = parseBoundForLine(t, k.boundFor); !why.empty())
        return error(why);
      return FLASHFUSE_SUCCESS;
    }
    if (t.size() != 2)
      return error(concat("expected '", key, " <value>'"));
    const std::string &value = t[1];
    flashfuse_variant &v = k.variant;
    int n = 0;
    auto number = [&](long long lo, long long hi, int &field) {
      if (!parseInt(value, lo, hi, field))
        return error(concat("bad value '", value, "' for '", key,
                            "' (expected an integer in [", lo, ", ", hi, "])"));
      return FLASHFUSE_SUCCESS;
    };
    if (key == "kind") {
      if (!parseEnum(value,
                     {{"forward", FLASHFUSE_KIND_FORWARD},
                      {"backward_preprocess", FLASHFUSE_KIND_BACKWARD_PREPROCESS},
                      {"backward", FLASHFUSE_KIND_BACKWARD},
                      {"backward_dq", FLASHFUSE_KIND_BACKWARD_DQ},
                      {"backward_postprocess",
                       FLASHFUSE_KIND_BACKWARD_POSTPROCESS},
                      {"decode", FLASHFUSE_KIND_DECODE},
                      {"decode_combine", FLASHFUSE_KIND_DECODE_COMBINE},
                      {"kv_append", FLASHFUSE_KIND_KV_APPEND},
                      {"decode_check", FLASHFUSE_KIND_DECODE_CHECK},
                      {"backward_sparse_transpose",
                       FLASHFUSE_KIND_BACKWARD_SPARSE_TRANSPOSE}},
                     n))
        return error(concat("bad kind '", value,
                            "' (expected forward|backward_preprocess|backward|"
                            "backward_dq|backward_postprocess|decode|"
                            "decode_combine|kv_append|decode_check|"
                            "backward_sparse_transpose)"));
      v.kind = static_cast<flashfuse_kernel_kind>(n);
    } else if (key == "dtype") {
      if (!parseEnum(value,
                     {{"f16", FLASHFUSE_DTYPE_F16},
                      {"bf16", FLASHFUSE_DTYPE_BF16},
                      {"e4m3", FLASHFUSE_DTYPE_E4M3}},
                     n))
        return error(concat("bad dtype '", value,
                            "' (expected f16|bf16|e4m3)"));
      v.dtype = static_cast<flashfuse_dtype>(n);
    } else if (key == "out_dtype") {
      // O's dtype of an FP8 forward (KERNEL_ABI.md "FP8 forwards"); whether
      // the kernel may state it is finishKernel's check.
      if (!parseEnum(value,
                     {{"f16", FLASHFUSE_DTYPE_F16},
                      {"bf16", FLASHFUSE_DTYPE_BF16}},
                     n))
        return error(concat("bad out_dtype '", value,
                            "' (expected bf16|f16)"));
      v.out_dtype = static_cast<flashfuse_dtype>(n);
    } else if (key == "causal") {
      if (!parseEnum(value,
                     {{"none", FLASHFUSE_CAUSAL_NONE},
                      {"top_left", FLASHFUSE_CAUSAL_TOP_LEFT},
                      {"bottom_right", FLASHFUSE_CAUSAL_BOTTOM_RIGHT}},
                     n))
        return error(concat("bad causal '", value,
                            "' (expected none|top_left|bottom_right)"));
      v.causal = static_cast<flashfuse_causal>(n);
    } else if (key == "head_dim") {
      return number(1, 1024, v.head_dim);
    } else if (key == "head_dim_v") {
      return number(1, 1024, v.head_dim_v);
    } else if (key == "block_m") {
      return number(1, 1 << 16, k.block_m);
    } else if (key == "block_n") {
      // 0 only where no key blocks exist (decode_combine; finishKernel).
      return number(0, 1 << 16, k.block_n);
    } else if (key == "threads") {
      return number(1, 1024, k.threads);
    } else if (key == "smem") {
      return number(0, 1 << 30, k.smem);
    } else if (key == "window") {
      return number(0, 1, v.window);
    } else if (key == "softcap") {
      return number(0, 1, v.softcap);
    } else if (key == "bias") {
      return number(0, 1, v.bias);
    } else if (key == "mask") {
      return number(0, 1, v.mask);
    } else if (key == "dropout") {
      return number(0, 1, v.dropout);
    } else if (key == "page_size") {
      return number(0, 1 << 16, v.page_size);
    } else if (key == "cluster_merge") {
      // A decode's largest split count merged in a cluster (KERNEL_ABI.md
      // "Decode"); finishKernel checks the kind and the params, run() the
      // arch.
      return number(0, 1 << 10, k.clusterMerge);
    } else if (key == "kv_dtype") {
      // The cache's dtype of a decode or kv_append kernel over an FP8
      // cache (docs/KVCACHE.md "FP8 cache"). Absent: the cache has `dtype`
      // (kv_dtype 0).
      if (!parseEnum(value, {{"e4m3", FLASHFUSE_DTYPE_E4M3}}, n))
        return error(concat("bad kv_dtype '", value, "' (expected e4m3)"));
      v.kv_dtype = static_cast<flashfuse_dtype>(n);
    } else if (key == "out_f32") {
      // Absent (every manifest written before it): 0, O in `dtype`.
      return number(0, 1, v.out_f32);
    } else if (key == "varlen") {
      return number(0, 1, v.varlen);
    } else if (key == "block_sparse") {
      return number(0, 2, v.block_sparse);
    } else if (key == "sparse_block_q") {
      return number(1, 1 << 16, v.sparse_block_q);
    } else if (key == "sparse_block_k") {
      return number(1, 1 << 16, v.sparse_block_k);
    } else if (key == "descale_block_q") {
      return number(1, 1 << 16, v.descale_block_q);
    } else if (key == "descale_block_k") {
      return number(1, 1 << 16, v.descale_block_k);
    } else if (key == "leftpad") {
      // A decode over a left-padded cache. Absent: 0.
      return number(0, 1, v.leftpad);
    } else if (key == "alibi") {
      // ALiBi (flash.attention's or a decode's `alibi`): slopes [Hq] (1)
      // or [B, Hq] (2). Absent: 0.
      return number(0, 2, v.alibi);
    } else if (key == "batch_idx") {
      // A decode, kv_append or decode_check over a pool of sequences
      // (cache_batch_idx). Absent: 0.
      return number(0, 1, v.batch_idx);
    } else if (key == "rotary_dim") {
      // kv_append's rotary stage (KVCacheKernels.h: multiples of 16).
      return number(16, 1 << 10, k.rotaryDim);
    } else if (key == "rotary_interleaved") {
      return number(0, 1, k.rotaryInterleaved);
    } else if (key == "rotary_per_row") {
      return number(0, 1, k.rotaryPerRow);
    } else if (key == "vt_key_group") {
      // e4m3 forwards: Vt's key order (fp8_vt_layout.h); finishKernel
      // requires this runtime's group of them and refuses it elsewhere.
      return number(1, 1 << 10, k.vt_key_group);
    } else if (key == "mods") {
      int mods = 0;
      if (auto st = number(0, 1, mods); st != FLASHFUSE_SUCCESS)
        return st;
      k.mods = mods != 0;
    } else if (key == "grid") {
      // How the launch sizes the grid; absent: one block per tile.
      if (value != "tiles" && value != "persistent")
        return error(concat("bad grid '", value,
                            "' (expected tiles|persistent)"));
      k.persistent = value == "persistent";
    } else {
      return error(concat("unknown key '", key, "' in kernel '", k.name, "'"));
    }
    return FLASHFUSE_SUCCESS;
  }

  flashfuse_status finishKernel(const KernelSpec &k,
                                const std::set<std::string> &keys) {
    // The variant flags (window ... dropout, varlen) default to 0;
    // everything that shapes the launch must be stated.
    for (const char *required : {"kind", "dtype", "head_dim", "head_dim_v",
                                 "block_m", "block_n", "threads", "smem",
                                 "causal", "params"})
      if (!keys.count(required))
        return error(concat("kernel '", k.name, "' (line ", kernelLine_,
                            ") lacks '", required, "'"));
    // Combinations no kernel of KERNEL_ABI.md has: a manifest stating one
    // was written against another contract, and guessing which of its keys
    // to believe would launch the wrong computation.
    const flashfuse_variant &v = k.variant;
    auto bad = [&](const std::string &what) {
      return error(concat("kernel '", k.name, "' (line ", kernelLine_, "): ",
                          what));
    };
    // The kernels of a KV cache that are not the attention itself: they
    // merge rows, copy rows or check indices, and walk no keys.
    bool keyless = v.kind == FLASHFUSE_KIND_DECODE_COMBINE ||
                   v.kind == FLASHFUSE_KIND_KV_APPEND ||
                   v.kind == FLASHFUSE_KIND_DECODE_CHECK;
    bool decode = v.kind == FLASHFUSE_KIND_DECODE || keyless;
    // flash-lower-to-gpu writes their block_n as 0. Every other kind tiles
    // keys by it.
    if (k.block_n == 0 && !keyless)
      return bad("block_n 0 is for kinds decode_combine, kv_append and "
                 "decode_check only (they walk no keys)");
    if (v.page_size != 0 && v.kind != FLASHFUSE_KIND_DECODE &&
        v.kind != FLASHFUSE_KIND_KV_APPEND &&
        v.kind != FLASHFUSE_KIND_DECODE_CHECK)
      return bad("'page_size' is for kinds decode, kv_append and "
                 "decode_check only");
    // FP8 forwards: O's dtype is not the inputs', so it must be stated, and
    // nothing else has an FP8 kernel (FP8.md: the backward, the decode,
    // varlen and dropout refuse FP8, and O is bf16 or f16).
    bool e4m3 = v.dtype == FLASHFUSE_DTYPE_E4M3;
    if (e4m3 && !keys.count("out_dtype"))
      return bad("dtype e4m3 needs 'out_dtype' (bf16 or f16: O's dtype)");
    if (!e4m3 && keys.count("out_dtype"))
      return bad(concat("'out_dtype' is for dtype e4m3 only (the O of a ",
                        dtypeName(v.dtype), " kernel has its dtype, or f32 "
                        "with out_f32)"));
    if (e4m3 && v.kind != FLASHFUSE_KIND_FORWARD)
      return bad("dtype e4m3 is for kind forward only (no FP8 backward or "
                 "decode kernel exists)");
    if (e4m3 && (v.out_f32 || v.varlen || v.dropout))
      return bad("e4m3 kernels write no f32 O and take no varlen or dropout");
    // Vt's key order is part of the kernel's contract: a kernel compiled
    // before the keys were permuted (no key) would read this runtime's and
    // flashfuse.attention's Vt in another order and give wrong O silently.
    if (e4m3 && k.vt_key_group == 0)
      return bad(concat("an e4m3 forward needs 'vt_key_group ",
                        FLASHFUSE_FP8_VT_KEY_GROUP,
                        "' (Vt's keys permuted within groups, "
                        "fp8_vt_layout.h); a kernel without it was compiled "
                        "for Vt in natural key order: recompile the artifact "
                        "with this flashfuse-compile"));
    if (e4m3 && k.vt_key_group != FLASHFUSE_FP8_VT_KEY_GROUP)
      return bad(concat("vt_key_group ", k.vt_key_group,
                        " is not this runtime's Vt key group (",
                        FLASHFUSE_FP8_VT_KEY_GROUP, ", fp8_vt_layout.h)"));
    if (!e4m3 && k.vt_key_group != 0)
      return bad("'vt_key_group' is for e4m3 forwards only");
    if ((v.descale_block_q != 0) != (v.descale_block_k != 0))
      return bad("'descale_block_q' and 'descale_block_k' come together");
    if (v.descale_block_k && !e4m3)
      return bad("'descale_block_q'/'descale_block_k' are for e4m3 forwards "
                 "only (per-block descales)");
    if (v.descale_block_k && (v.descale_block_q % 16 != 0 ||
                              v.descale_block_k % k.block_n != 0))
      return bad("'descale_block_q' must be a multiple of 16 and "
                 "'descale_block_k' of block_n");
    if (e4m3) {
      // The block strides are params exactly when the blocks are stated.
      bool blockStrides = false;
      for (const ParamSpec &p : k.params)
        blockStrides |= p.name == "q_descale_stride_n";
      if (blockStrides != (v.descale_block_k != 0))
        return bad(v.descale_block_k
                       ? "per-block descales need the param "
                         "'q_descale_stride_n' (and k_, v_)"
                       : "the param 'q_descale_stride_n' needs "
                         "'descale_block_q' and 'descale_block_k'");
    }
    // An FP8 cache: the decode reads one and kv_append quantises new rows
    // into it; their queries, O and new rows are 16-bit, and both take the
    // descales by name (KERNEL_ABI.md "Decode").
    bool cacheKernel = v.kind == FLASHFUSE_KIND_DECODE ||
                       v.kind == FLASHFUSE_KIND_KV_APPEND;
    if (v.kv_dtype && !cacheKernel)
      return bad("'kv_dtype' is for kinds decode and kv_append only (no "
                 "other kernel reads or writes an FP8 cache)");
    if (v.kv_dtype && e4m3)
      return bad("kv_dtype e4m3 needs a 16-bit dtype (the queries' and O's)");
    {
      bool kd = false, vd = false;
      for (const ParamSpec &p : k.params) {
        kd |= p.name == "k_descale";
        vd |= p.name == "v_descale";
      }
      if (v.kv_dtype && !(kd && vd))
        return bad("kv_dtype e4m3 needs the params 'k_descale' and "
                   "'v_descale'");
      if (!v.kv_dtype && (kd || vd) && cacheKernel)
        return bad("the params 'k_descale'/'v_descale' are for kv_dtype "
                   "e4m3 only");
    }
    // The decode-only keys and the param each brings: one given without
    // the other would bind a buffer the kernel does not read, or leave one
    // it reads unbound.
    auto hasParam = [&](const char *name) {
      for (const ParamSpec &p : k.params)
        if (p.name == name)
          return true;
      return false;
    };
    if (v.leftpad && v.kind != FLASHFUSE_KIND_DECODE)
      return bad("'leftpad' is for kind decode only (no other kernel "
                 "reads a sequence's first row)");
    if (hasParam("cache_leftpad") != (v.leftpad != 0))
      return bad(v.leftpad ? "leftpad 1 needs the param 'cache_leftpad'"
                           : "the param 'cache_leftpad' needs 'leftpad 1'");
    if (v.alibi && v.kind != FLASHFUSE_KIND_DECODE &&
        v.kind != FLASHFUSE_KIND_FORWARD && v.kind != FLASHFUSE_KIND_BACKWARD &&
        v.kind != FLASHFUSE_KIND_BACKWARD_DQ)
      return bad("'alibi' is for kinds forward, backward, backward_dq and "
                 "decode only (the kernels that score)");
    if (hasParam("alibi_slopes") != (v.alibi != 0))
      return bad(v.alibi ? "alibi needs the param 'alibi_slopes'"
                         : "the param 'alibi_slopes' needs 'alibi 1' or "
                           "'alibi 2'");
    if (k.rotaryDim && (v.kind != FLASHFUSE_KIND_KV_APPEND ||
                        k.rotaryDim % 16 != 0 || k.rotaryDim > v.head_dim))
      return bad("'rotary_dim' is for kind kv_append only, a multiple of 16 "
                 "up to head_dim");
    if (v.batch_idx && v.kind != FLASHFUSE_KIND_DECODE &&
        v.kind != FLASHFUSE_KIND_KV_APPEND &&
        v.kind != FLASHFUSE_KIND_DECODE_CHECK)
      return bad("'batch_idx' is for kinds decode, kv_append and "
                 "decode_check only");
    if (v.batch_idx && v.page_size)
      return bad("'batch_idx' is for a contiguous cache (page_size 0)");
    for (const char *p : {"cache_batch_idx", "cache_batch"})
      if (hasParam(p) != (v.batch_idx != 0))
        return bad(v.batch_idx
                       ? concat("batch_idx 1 needs the param '", p, "'")
                       : concat("the param '", p, "' needs 'batch_idx 1'"));
    if ((k.rotaryInterleaved || k.rotaryPerRow) && !k.rotaryDim)
      return bad("'rotary_interleaved' and 'rotary_per_row' need "
                 "'rotary_dim'");
    for (const char *p : {"q_rot", "rotary_cos", "rotary_sin"})
      if (hasParam(p) != (k.rotaryDim != 0))
        return bad(k.rotaryDim ? concat("rotary_dim needs the param '", p, "'")
                               : concat("the param '", p,
                                        "' needs 'rotary_dim'"));
    if (v.out_f32 && v.kind != FLASHFUSE_KIND_FORWARD)
      return bad("'out_f32' is for kind forward only (the backward and "
                 "decode kernels write their outputs in 'dtype')");
    // The preprocess and postprocess of a packed batch are the dense
    // kernels over the packed rows: only these kinds place blocks in
    // sequences.
    if (v.varlen && v.kind != FLASHFUSE_KIND_FORWARD &&
        v.kind != FLASHFUSE_KIND_BACKWARD &&
        v.kind != FLASHFUSE_KIND_BACKWARD_DQ)
      return bad("'varlen' is for kinds forward, backward and backward_dq "
                 "only (no other kind has a packed-batch kernel)");
    if (v.varlen && (v.bias || v.mask))
      return bad("varlen kernels take no bias or mask");
    // Block-sparse: the kernels that read the lists (the forward, and the
    // backward's main, dQ and transpose kernels), never packed, and their
    // block sizes stated with them (they decide which lists a kernel can
    // walk).
    bool readsLists = v.kind == FLASHFUSE_KIND_FORWARD ||
                      v.kind == FLASHFUSE_KIND_BACKWARD ||
                      v.kind == FLASHFUSE_KIND_BACKWARD_DQ ||
                      v.kind == FLASHFUSE_KIND_BACKWARD_SPARSE_TRANSPOSE;
    if (v.block_sparse && !readsLists)
      return bad("'block_sparse' is for kinds forward, backward, backward_dq "
                 "and backward_sparse_transpose only");
    if (v.kind == FLASHFUSE_KIND_BACKWARD_SPARSE_TRANSPOSE && !v.block_sparse)
      return bad("a backward_sparse_transpose kernel needs 'block_sparse'");
    if (v.block_sparse && v.varlen)
      return bad("block-sparse kernels are not varlen kernels");
    if ((v.block_sparse != 0) !=
        (v.sparse_block_q != 0 && v.sparse_block_k != 0))
      return bad("'block_sparse' comes with 'sparse_block_q' and "
                 "'sparse_block_k', and they only with it");
    if (v.block_sparse && (v.sparse_block_q % k.block_m != 0 ||
                           v.sparse_block_k % k.block_n != 0))
      return bad("'sparse_block_q' and 'sparse_block_k' must be multiples "
                 "of block_m and block_n");
    // The cluster merge is a third way a decode kernel merges its splits
    // (merge_splits 2), told through the same param as the counters' way,
    // which the runtime falls back to where it cannot launch clusters (a
    // driver without cuLaunchKernelEx, more splits than N).
    if (k.clusterMerge && v.kind != FLASHFUSE_KIND_DECODE)
      return bad("'cluster_merge' is for kind decode only");
    if (k.clusterMerge) {
      bool mergeParam = false, counters = false;
      for (const ParamSpec &p : k.params) {
        mergeParam |= p.name == "merge_splits";
        counters |= p.name == "split_arrivals" || p.name == "split_counters";
      }
      if (!mergeParam || !counters)
        return bad("'cluster_merge' needs a decode kernel that merges its "
                   "splits itself (the params 'merge_splits' and "
                   "'split_arrivals' or 'split_counters'), the merge the "
                   "runtime falls back to where it launches no clusters");
    }
    if (k.persistent && (v.kind != FLASHFUSE_KIND_FORWARD || v.block_sparse))
      return bad("'grid persistent' is for forwards without block-sparse "
                 "lists only (their tile walk is over query blocks x heads "
                 "x batch or sequences)");
    if (std::string why = boundProblem(k); !why.empty())
      return bad(why);
    if (std::string why = captureProblem(k); !why.empty())
      return bad(why);
    if (decode && (v.bias || v.mask || v.dropout))
      return bad("decode kernels take no bias, mask or dropout");
    if (decode && v.causal == FLASHFUSE_CAUSAL_TOP_LEFT)
      return bad("decode kernels are causal none or bottom_right, not "
                 "top_left");
    if ((v.kind == FLASHFUSE_KIND_KV_APPEND ||
         v.kind == FLASHFUSE_KIND_DECODE_CHECK) &&
        (v.causal != FLASHFUSE_CAUSAL_NONE || v.window || v.softcap))
      return bad("kv_append and decode_check kernels are causal none with no "
                 "window or softcap (they compute no attention)");
    return FLASHFUSE_SUCCESS;
  }

  const std::string &source_;
  Manifest &m_;
  int lineNo_ = 0;
  int kernelLine_ = 0;
};

} // namespace

flashfuse_status parseManifest(const std::string &text,
                               const std::string &source, Manifest &out) {
  Manifest parsed;
  parsed.dir = out.dir;
  if (auto s = Parser(source, parsed).run(text); s != FLASHFUSE_SUCCESS)
    return s;
  out = std::move(parsed);
  return FLASHFUSE_SUCCESS;
}

flashfuse_status readManifest(const std::string &dir, Manifest &out) {
  std::string path = dir + "/manifest.txt";
  std::string text;
  if (!readWholeFile(path, text))
    return fail(FLASHFUSE_ERROR_MANIFEST,
                concat("cannot read ", path,
                       " (is this a flashfuse-compile artifact directory?)"));
  out.dir = dir;
  if (auto s = parseManifest(text, path, out); s != FLASHFUSE_SUCCESS)
    return s;
  return readBoundLists(out, path);
}

int findKernel(const Manifest &manifest, const flashfuse_variant &v) {
  for (size_t i = 0; i < manifest.kernels.size(); ++i) {
    const flashfuse_variant &k = manifest.kernels[i].variant;
    if (manifest.kernels[i].mods || manifest.kernels[i].rotaryDim)
      continue; // its regions or rotary tables are in no variant
    if (k.kind == v.kind && k.dtype == v.dtype && k.head_dim == v.head_dim &&
        k.head_dim_v == v.head_dim_v && k.causal == v.causal &&
        k.window == v.window && k.softcap == v.softcap && k.bias == v.bias &&
        k.mask == v.mask && k.dropout == v.dropout &&
        k.page_size == v.page_size && k.out_f32 == v.out_f32 &&
        k.varlen == v.varlen && k.out_dtype == v.out_dtype &&
        k.block_sparse == v.block_sparse &&
        k.sparse_block_q == v.sparse_block_q &&
        k.sparse_block_k == v.sparse_block_k && k.kv_dtype == v.kv_dtype &&
        k.descale_block_q == v.descale_block_q &&
        k.descale_block_k == v.descale_block_k && k.leftpad == v.leftpad &&
        k.alibi == v.alibi && k.batch_idx == v.batch_idx)
      return static_cast<int>(i);
  }
  return -1;
}

int findKernel(const Manifest &manifest, const std::string &name) {
  for (size_t i = 0; i < manifest.kernels.size(); ++i)
    if (manifest.kernels[i].name == name)
      return static_cast<int>(i);
  return -1;
}

const char *dtypeName(flashfuse_dtype dtype) {
  switch (dtype) {
  case FLASHFUSE_DTYPE_F16:
    return "f16";
  case FLASHFUSE_DTYPE_BF16:
    return "bf16";
  case FLASHFUSE_DTYPE_E4M3:
    return "e4m3";
  }
  return "?";
}

int dtypeBytes(flashfuse_dtype dtype) {
  return dtype == FLASHFUSE_DTYPE_E4M3 ? 1 : 2;
}

const char *outDtypeName(const flashfuse_variant &v) {
  if (v.out_f32)
    return "f32";
  return dtypeName(v.dtype == FLASHFUSE_DTYPE_E4M3 ? v.out_dtype : v.dtype);
}

std::string describeVariant(const flashfuse_variant &v) {
  static const char *kinds[] = {"forward",     "backward_preprocess",
                                "backward",    "backward_dq",
                                "backward_postprocess", "decode",
                                "decode_combine", "kv_append",
                                "decode_check", "backward_sparse_transpose"};
  static const char *causal[] = {"none", "top_left", "bottom_right"};
  std::string s = concat(kinds[v.kind], " ", dtypeName(v.dtype),
                         " D=", v.head_dim, " Dv=", v.head_dim_v,
                         " causal=", causal[v.causal]);
  if (v.window)
    s += " window";
  if (v.softcap)
    s += " softcap";
  if (v.bias)
    s += " bias";
  if (v.mask)
    s += " mask";
  if (v.dropout)
    s += " dropout";
  if (v.page_size)
    s += concat(" page_size=", v.page_size);
  if (v.kv_dtype)
    s += concat(" kv=", dtypeName(v.kv_dtype));
  if (v.leftpad)
    s += " leftpad";
  if (v.alibi)
    s += v.alibi == 2 ? " alibi=[B,Hq]" : " alibi=[Hq]";
  if (v.batch_idx)
    s += " pool";
  if (v.out_f32)
    s += " out=f32";
  if (v.varlen)
    s += " varlen";
  // An FP8 forward's O; 16-bit kernels carry 0 here, not a second dtype.
  if (v.dtype == FLASHFUSE_DTYPE_E4M3)
    s += concat(" out=", dtypeName(v.out_dtype));
  if (v.block_sparse)
    s += concat(" block_sparse=", v.block_sparse, " blocks=", v.sparse_block_q,
                "x", v.sparse_block_k);
  if (v.descale_block_k)
    s += concat(" descale_blocks=", v.descale_block_q, "x", v.descale_block_k);
  return s;
}

} // namespace flashfuse
