#include "compare.h"

#include <cmath>
#include <cstdio>

namespace flashfuse::run {

Verdict compareWithReference(const std::string &what,
                             const std::vector<float> &out,
                             const std::vector<float> &ref,
                             const std::vector<float> &low) {
  Verdict v;
  size_t worst = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (std::isinf(ref[i]) && ref[i] < 0)
      continue;
    if (!std::isfinite(out[i])) {
      if (v.nonFinite++ == 0)
        worst = i;
      continue;
    }
    double e = std::fabs(double(out[i]) - ref[i]);
    if (e > v.maxError) {
      v.maxError = e;
      if (v.nonFinite == 0)
        worst = i;
    }
    v.maxLowError = std::fmax(v.maxLowError, std::fabs(double(low[i]) - ref[i]));
    // Computed in float on purpose: it measures float's rounding at ref's
    // magnitude.
    float shifted = (ref[i] + 0.3f) - 0.3f;
    v.atol = std::fmax(v.atol, 2.0 * std::fabs(double(shifted) - ref[i]));
  }
  double bound = 2 * v.maxLowError + v.atol;
  v.pass = v.nonFinite == 0 && v.maxError <= bound;
  char line[512];
  std::snprintf(line, sizeof line,
                "%-4s %s  max|out-ref| %.3e  bound %.3e (2 x max|lowprec-ref| "
                "%.3e + atol %.1e)%s",
                what.c_str(), v.pass ? "PASS" : "FAIL", v.maxError, bound,
                v.maxLowError, v.atol, "");
  v.summary = line;
  if (v.nonFinite)
    v.summary += "  " + std::to_string(v.nonFinite) +
                 " non-finite values (first at flat index " +
                 std::to_string(worst) + ")";
  else if (!v.pass)
    v.summary += "  worst at flat index " + std::to_string(worst) + ": out " +
                 std::to_string(out[worst]) + " ref " +
                 std::to_string(ref[worst]);
  return v;
}

} // namespace flashfuse::run
