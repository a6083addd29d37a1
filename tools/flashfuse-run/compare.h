// FlashAttention's acceptance rule on host copies of the results.
#ifndef FLASHFUSE_RUN_COMPARE_H
#define FLASHFUSE_RUN_COMPARE_H

#include <string>
#include <vector>

namespace flashfuse::run {

struct Verdict {
  bool pass = false;
  double maxError = 0;    // max |out - ref|
  double maxLowError = 0; // max |out_lowprec - ref|
  double atol = 0;        // f32 rounding noise of the reference
  size_t nonFinite = 0;   // NaN/Inf in out (unwritten poison, overflow)
  std::string summary;
};

// Passes when out is finite everywhere and
//   max|out - ref| <= 2 * max|out_lowprec - ref| + atol,
// atol being the reference's own f32 rounding noise (FlashAttention's
// 2 * max|(ref + 0.3 - 0.3) - ref|). Entries where ref is -inf on both
// sides (LSE of fully masked rows) are skipped.
Verdict compareWithReference(const std::string &what,
                             const std::vector<float> &out,
                             const std::vector<float> &ref,
                             const std::vector<float> &low);

} // namespace flashfuse::run

#endif // FLASHFUSE_RUN_COMPARE_H
