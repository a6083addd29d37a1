// Per-thread error reporting shared by every part of the runtime.
#ifndef FLASHFUSE_RUNTIME_ERROR_H
#define FLASHFUSE_RUNTIME_ERROR_H

#include "flashfuse/runtime.h"

#include <sstream>
#include <string>

namespace flashfuse {

// Records `message` as this thread's last error and returns `status`, so
// failure paths read `return fail(STATUS, "...")`.
flashfuse_status fail(flashfuse_status status, std::string message);

// Clears the last error at the start of each public call, so a success never
// leaves a stale message behind.
void clearError();

const char *lastError();

// Builds a message from streamable parts: fail(S, concat("x=", x)).
template <typename... Parts> std::string concat(const Parts &...parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

} // namespace flashfuse

#endif // FLASHFUSE_RUNTIME_ERROR_H
