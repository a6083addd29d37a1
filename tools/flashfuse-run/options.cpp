#include "options.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace flashfuse::run {

namespace {

bool toInt(const std::string &s, int64_t &out) {
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0)
    return false;
  out = v;
  return true;
}

bool toFloat(const std::string &s, float &out) {
  errno = 0;
  char *end = nullptr;
  out = std::strtof(s.c_str(), &end);
  return !s.empty() && *end == '\0' && errno == 0;
}

std::vector<std::string> splitCommas(const std::string &s) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');)
    parts.push_back(part);
  return parts;
}

} // namespace

const char *usage() {
  return "usage: flashfuse-run ARTIFACT_DIR (--kernel NAME | --auto)\n"
         "         --shape B,Hq,Hkv,Sq,Sk\n"
         "         [--dtype f16|bf16] [--head-dim D] [--head-dim-v Dv]\n"
         "         [--causal [none|top_left|bottom_right]] [--window L,R]\n"
         "         [--softcap X] [--bias] [--mask] [--dropout P]\n"
         "         [--scale S] [--layout bhsd|bshd] [--seed N]\n"
         "         [--iters N] [--warmup N] [--device N] [--no-check]\n"
         "Runs a kernel of the artifact on random data, checks it against an\n"
         "f32 reference computed on the GPU (FlashAttention's rule) and\n"
         "times it. --auto picks the kernel of the variant given by --dtype\n"
         "(f16), --head-dim (128), --causal (none; bare --causal means\n"
         "top_left), --window, --softcap, --bias, --mask, --dropout.\n"
         "Exit status: 0 pass, 1 numerical mismatch, 2 error.\n";
}

bool parseOptions(int argc, char **argv, Options &o, std::string &error) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto value = [&](size_t &i, std::string &out) {
    if (i + 1 >= args.size()) {
      error = args[i] + " needs a value";
      return false;
    }
    out = args[++i];
    return true;
  };
  bool shapeGiven = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    std::string v;
    int64_t n = 0;
    float f = 0;
    if (a == "-h" || a == "--help") {
      error = "";
      return false;
    } else if (a == "--kernel") {
      if (!value(i, o.kernelName))
        return false;
    } else if (a == "--auto") {
      o.autoSelect = true;
    } else if (a == "--shape") {
      if (!value(i, v))
        return false;
      std::vector<std::string> p = splitCommas(v);
      int64_t *dims[] = {&o.batch, &o.headsQ, &o.headsKv, &o.seqQ, &o.seqK};
      if (p.size() != 5) {
        error = "--shape takes B,Hq,Hkv,Sq,Sk";
        return false;
      }
      for (int d = 0; d < 5; ++d)
        if (!toInt(p[d], *dims[d]) || *dims[d] <= 0) {
          error = "--shape: '" + p[d] + "' is not a positive integer";
          return false;
        }
      shapeGiven = true;
    } else if (a == "--dtype") {
      if (!value(i, v))
        return false;
      if (v == "f16" || v == "fp16" || v == "float16")
        o.dtype = FLASHFUSE_DTYPE_F16;
      else if (v == "bf16" || v == "bfloat16")
        o.dtype = FLASHFUSE_DTYPE_BF16;
      else {
        error = "--dtype takes f16 or bf16";
        return false;
      }
    } else if (a == "--head-dim" || a == "--head-dim-v") {
      if (!value(i, v))
        return false;
      if (!toInt(v, n) || n <= 0 || n > 1024) {
        error = a + " takes a positive integer";
        return false;
      }
      (a == "--head-dim" ? o.headDim : o.headDimV) = static_cast<int>(n);
    } else if (a == "--causal") {
      // A bare --causal means PyTorch's is_causal (top-left aligned).
      std::string mode = "top_left";
      if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0)
        mode = args[++i];
      if (mode == "none")
        o.causal = FLASHFUSE_CAUSAL_NONE;
      else if (mode == "top_left")
        o.causal = FLASHFUSE_CAUSAL_TOP_LEFT;
      else if (mode == "bottom_right")
        o.causal = FLASHFUSE_CAUSAL_BOTTOM_RIGHT;
      else {
        error = "--causal takes none, top_left or bottom_right";
        return false;
      }
    } else if (a == "--window") {
      if (!value(i, v))
        return false;
      std::vector<std::string> p = splitCommas(v);
      int64_t l = 0, r = 0;
      if (p.size() != 2 || !toInt(p[0], l) || !toInt(p[1], r) || l < -1 ||
          r < -1) {
        error = "--window takes L,R (each >= 0, or -1 for unbounded)";
        return false;
      }
      o.window = {static_cast<int>(l), static_cast<int>(r)};
    } else if (a == "--softcap" || a == "--dropout" || a == "--scale") {
      if (!value(i, v))
        return false;
      if (!toFloat(v, f)) {
        error = a + " takes a number";
        return false;
      }
      (a == "--softcap" ? o.softcap : a == "--dropout" ? o.dropout : o.scale) = f;
    } else if (a == "--bias") {
      o.bias = true;
    } else if (a == "--mask") {
      o.mask = true;
    } else if (a == "--layout") {
      if (!value(i, v))
        return false;
      if (v != "bhsd" && v != "bshd") {
        error = "--layout takes bhsd or bshd";
        return false;
      }
      o.layout = v == "bhsd" ? Layout::BHSD : Layout::BSHD;
    } else if (a == "--seed" || a == "--iters" || a == "--warmup" ||
               a == "--device") {
      if (!value(i, v))
        return false;
      if (!toInt(v, n) || n < 0 || (a == "--iters" && n == 0)) {
        error = a + " takes a non-negative integer";
        return false;
      }
      if (a == "--seed") {
        o.seed = static_cast<uint64_t>(n);
        o.seedGiven = true;
      } else if (a == "--iters") {
        o.iters = static_cast<int>(n);
      } else if (a == "--warmup") {
        o.warmup = static_cast<int>(n);
      } else {
        o.device = static_cast<int>(n);
      }
    } else if (a == "--no-check") {
      o.check = false;
    } else if (a.rfind("--", 0) == 0) {
      error = "unknown option " + a;
      return false;
    } else if (o.artifactDir.empty()) {
      o.artifactDir = a;
    } else {
      error = "unexpected argument " + a;
      return false;
    }
  }
  if (o.artifactDir.empty()) {
    error = "no ARTIFACT_DIR given";
    return false;
  }
  if (o.autoSelect == !o.kernelName.empty()) {
    error = "give exactly one of --kernel NAME and --auto";
    return false;
  }
  if (!o.kernelName.empty() && (o.dtype || o.headDim || o.headDimV || o.causal)) {
    error = "--kernel takes its dtype, head dims and causality from the "
            "manifest; --dtype/--head-dim/--causal go with --auto";
    return false;
  }
  if (!shapeGiven) {
    error = "--shape B,Hq,Hkv,Sq,Sk is required";
    return false;
  }
  if (o.headsQ % o.headsKv != 0) {
    std::ostringstream m;
    m << "heads_q = " << o.headsQ << " is not a multiple of heads_kv = "
      << o.headsKv;
    error = m.str();
    return false;
  }
  return true;
}

} // namespace flashfuse::run
