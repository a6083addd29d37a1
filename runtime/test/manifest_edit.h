// What the tests of the manifest parser share: a data file's bytes, and a
// sample manifest parsed with one edit (the malformed-manifest cases).
// Reaches the runtime's internals (manifest.h), so only their tests
// include it.
#ifndef FLASHFUSE_RUNTIME_TEST_MANIFEST_EDIT_H
#define FLASHFUSE_RUNTIME_TEST_MANIFEST_EDIT_H

#include "test_support.h"

#include "manifest.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace flashfuse_test {

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// data/`sample`/manifest.txt with its first `from` replaced by `to`,
// parsed (messages name it "`sample`/manifest.txt"). A `from` the text
// lacks is a failure of the test itself.
inline flashfuse_status parseEdited(const std::string &sample,
                                    const std::string &from,
                                    const std::string &to) {
  std::string text = readFile(dataDir + "/" + sample + "/manifest.txt");
  size_t at = text.find(from);
  if (at == std::string::npos) {
    std::fprintf(stderr, "  test bug: '%s' not in %s/manifest.txt\n",
                 from.c_str(), sample.c_str());
    ++failures;
    return FLASHFUSE_SUCCESS;
  }
  text.replace(at, from.size(), to);
  flashfuse::Manifest m;
  return flashfuse::parseManifest(text, sample + "/manifest.txt", m);
}

} // namespace flashfuse_test

#endif
