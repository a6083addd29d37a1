#include "error.h"

namespace flashfuse {

namespace {
// One message per thread: concurrent callers (several PyTorch threads, for
// example) must each see the error of their own call.
thread_local std::string tlsLastError;
} // namespace

flashfuse_status fail(flashfuse_status status, std::string message) {
  tlsLastError = std::move(message);
  return status;
}

void clearError() { tlsLastError.clear(); }

const char *lastError() { return tlsLastError.c_str(); }

bool readWholeFile(const std::string &path, std::string &out) {
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return false;
  out.clear();
  char buffer[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0)
    out.append(buffer, n);
  bool ok = !std::ferror(f);
  std::fclose(f);
  return ok;
}

} // namespace flashfuse

extern "C" const char *flashfuse_last_error(void) {
  return flashfuse::lastError();
}

extern "C" const char *flashfuse_status_name(flashfuse_status status) {
  switch (status) {
  case FLASHFUSE_SUCCESS:
    return "FLASHFUSE_SUCCESS";
  case FLASHFUSE_ERROR_INVALID_ARGUMENT:
    return "FLASHFUSE_ERROR_INVALID_ARGUMENT";
  case FLASHFUSE_ERROR_NO_DRIVER:
    return "FLASHFUSE_ERROR_NO_DRIVER";
  case FLASHFUSE_ERROR_NO_DEVICE:
    return "FLASHFUSE_ERROR_NO_DEVICE";
  case FLASHFUSE_ERROR_CUDA:
    return "FLASHFUSE_ERROR_CUDA";
  case FLASHFUSE_ERROR_MANIFEST:
    return "FLASHFUSE_ERROR_MANIFEST";
  case FLASHFUSE_ERROR_NOT_FOUND:
    return "FLASHFUSE_ERROR_NOT_FOUND";
  case FLASHFUSE_ERROR_UNSUPPORTED:
    return "FLASHFUSE_ERROR_UNSUPPORTED";
  case FLASHFUSE_ERROR_INTERNAL:
    return "FLASHFUSE_ERROR_INTERNAL";
  }
  return "FLASHFUSE_ERROR_UNKNOWN";
}
