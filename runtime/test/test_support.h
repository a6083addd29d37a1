// What the runtime's no-GPU test programs share: EXPECT, which counts
// failures instead of stopping at the first, and the loop that runs a table
// of tests with the driver path forced to a missing file (so that they
// behave the same on GPU machines). Only the C API: the runtime's internal
// headers, which tests of its internals include, declare a
// flashfuse::Manifest of their own (test_errors.h has the C++ wrapper's).
#ifndef FLASHFUSE_RUNTIME_TEST_SUPPORT_H
#define FLASHFUSE_RUNTIME_TEST_SUPPORT_H

#include "flashfuse/runtime.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>

namespace flashfuse_test {

inline int failures = 0;
inline std::string dataDir;

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "  %s:%d: expected %s\n", __FILE__, __LINE__,       \
                   #cond);                                                     \
      ++flashfuse_test::failures;                                              \
    }                                                                          \
  } while (0)

inline bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

// Expects `status` to be `expected` with the thread's last error message
// containing `fragment` (for code below the C++ wrapper: test_errors.h's
// EXPECT_ERROR is the form for calls through it).
inline void expectStatus(flashfuse_status status, flashfuse_status expected,
                         const std::string &fragment, int line) {
  std::string message = status == FLASHFUSE_SUCCESS ? "" : flashfuse_last_error();
  if (status != expected || !contains(message, fragment)) {
    std::fprintf(stderr, "  line %d: expected %s containing '%s', got %s: %s\n",
                 line, flashfuse_status_name(expected), fragment.c_str(),
                 flashfuse_status_name(status), message.c_str());
    ++failures;
  }
}

// A plausible device address for argument checks, which never
// dereference it.
inline const void *fakePointer(std::uintptr_t address) {
  return reinterpret_cast<const void *>(address);
}

struct Test {
  const char *name;
  void (*run)();
};

// `PROGRAM DATA_DIR`: runs every test, printing PASS/FAIL per test; the
// exit status is 0 when all pass.
template <std::size_t N>
int runTests(int argc, char **argv, const Test (&tests)[N]) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
    return 2;
  }
  dataDir = argv[1];
  setenv("FLASHFUSE_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  int passed = 0, failed = 0;
  for (const Test &t : tests) {
    int before = failures;
    try {
      t.run();
    } catch (const std::exception &e) {
      std::fprintf(stderr, "  unexpected exception: %s\n", e.what());
      ++failures;
    }
    bool ok = failures == before;
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", t.name);
    (ok ? passed : failed)++;
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

} // namespace flashfuse_test

#endif // FLASHFUSE_RUNTIME_TEST_SUPPORT_H
