// Per-thread error reporting shared by every part of the runtime.
#ifndef FLASHFUSE_RUNTIME_ERROR_H
#define FLASHFUSE_RUNTIME_ERROR_H

#include "flashfuse/runtime.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>

namespace flashfuse {

// Records `message` as this thread's last error and returns `status`, so
// failure paths read `return fail(STATUS, "...")`.
flashfuse_status fail(flashfuse_status status, std::string message);

// Clears the last error at the start of each public call, so a success never
// leaves a stale message behind.
void clearError();

const char *lastError();

// Message building deliberately avoids iostreams: a host process (Python
// with PyTorch and other extensions loaded) may carry a global C++ locale
// created by another copy of libstdc++, and formatting through it crashes.
namespace detail {
inline void append(std::string &s, const std::string &x) { s += x; }
inline void append(std::string &s, const char *x) { s += x ? x : "(null)"; }
inline void append(std::string &s, char c) { s += c; }
template <typename T>
std::enable_if_t<std::is_integral_v<T>> append(std::string &s, T x) {
  s += std::to_string(x);
}
inline void append(std::string &s, double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", x);
  s += buffer;
}
inline void append(std::string &s, float x) { append(s, double(x)); }
} // namespace detail

// Builds a message from parts: fail(S, concat("x=", x)).
template <typename... Parts> std::string concat(const Parts &...parts) {
  std::string s;
  (detail::append(s, parts), ...);
  return s;
}

// "0x1234abcd"
inline std::string hexAddress(std::uintptr_t address) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx",
                static_cast<unsigned long long>(address));
  return buffer;
}

// Reads a whole file; false if it cannot be opened or read.
bool readWholeFile(const std::string &path, std::string &out);

} // namespace flashfuse

#endif // FLASHFUSE_RUNTIME_ERROR_H
