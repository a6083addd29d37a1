// Command line of flashfuse-run.
#ifndef FLASHFUSE_RUN_OPTIONS_H
#define FLASHFUSE_RUN_OPTIONS_H

#include "flashfuse/runtime.h"

#include <cstdint>
#include <optional>
#include <string>

namespace flashfuse::run {

enum class Layout { BHSD, BSHD };

struct Options {
  std::string artifactDir;
  std::string kernelName; // empty with --auto
  bool autoSelect = false;
  int64_t batch = 0, headsQ = 0, headsKv = 0, seqQ = 0, seqK = 0;
  // Variant of --auto; with --kernel these come from the manifest.
  std::optional<flashfuse_dtype> dtype;
  std::optional<int> headDim, headDimV;
  std::optional<flashfuse_causal> causal;
  // Runtime values of the optional features.
  std::optional<std::pair<int, int>> window;
  std::optional<float> softcap;
  bool bias = false, mask = false;
  std::optional<float> dropout;
  std::optional<float> scale; // default 1/sqrt(D)
  Layout layout = Layout::BHSD;
  uint64_t seed = 0;
  bool seedGiven = false;
  int iters = 20;
  int warmup = 5;
  int device = -1;
  bool check = true;
};

// Parses argv; on a usage error returns false with `error` set.
bool parseOptions(int argc, char **argv, Options &out, std::string &error);

const char *usage();

} // namespace flashfuse::run

#endif // FLASHFUSE_RUN_OPTIONS_H
