// EXPECT_ERROR for calls through the C++ wrapper (runtime.hpp), which
// throws flashfuse::Error.
#ifndef FLASHFUSE_RUNTIME_TEST_ERRORS_H
#define FLASHFUSE_RUNTIME_TEST_ERRORS_H

#include "flashfuse/runtime.hpp"
#include "test_support.h"

namespace flashfuse_test {

// Runs `body`, expecting a flashfuse::Error with `status` whose message
// contains `fragment`.
inline void expectError(const std::function<void()> &body,
                        flashfuse_status status, const std::string &fragment,
                        int line) {
  try {
    body();
    std::fprintf(stderr, "  line %d: expected an error containing '%s'\n",
                 line, fragment.c_str());
    ++failures;
  } catch (const flashfuse::Error &e) {
    if (e.status() != status || !contains(e.what(), fragment)) {
      std::fprintf(stderr,
                   "  line %d: expected %s containing '%s', got: %s\n", line,
                   flashfuse_status_name(status), fragment.c_str(), e.what());
      ++failures;
    }
  }
}
#define EXPECT_ERROR(body, status, fragment)                                   \
  flashfuse_test::expectError([&] { body; }, status, fragment, __LINE__)

} // namespace flashfuse_test

#endif // FLASHFUSE_RUNTIME_TEST_ERRORS_H
