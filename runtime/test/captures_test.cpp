// Values a kernel's score_mod / mask_mod read from above their op
// (KERNEL_ABI.md "Values captured by score_mod and mask_mod"): the
// manifest's `captures` line, its agreement with the capture<i> params,
// and the C API that reports it. Reaches the runtime's internals, so it
// includes no runtime.hpp (test_support.h).
#include "launch.h"
#include "manifest_edit.h"

#include <string>
#include <vector>

namespace {

using flashfuse_test::dataDir;

#define EXPECT_STATUS(call, status, fragment)                                  \
  flashfuse_test::expectStatus(call, status, fragment, __LINE__)

std::string capturesDir() { return dataDir + "/captures"; }

// The captures manifest's text with `from` replaced by `to`, parsed.
flashfuse_status parseEdited(const std::string &from, const std::string &to) {
  return flashfuse_test::parseEdited("captures", from, to);
}

void testParse() {
  flashfuse::Manifest m;
  EXPECT_STATUS(flashfuse::readManifest(capturesDir(), m), FLASHFUSE_SUCCESS, "");
  if (m.kernels.size() != 1)
    return (void)++flashfuse_test::failures;
  const auto &c = m.kernels[0].captures;
  EXPECT(c.size() == 3);
  if (c.size() != 3)
    return;
  EXPECT(c[0].element == "f32" && c[0].rank == 1);
  EXPECT(c[1].element == "f16" && c[1].rank == -1);
  EXPECT(c[2].element == "i64" && c[2].rank == 2);
  // A manifest without the key: no captures.
  flashfuse::Manifest sample;
  EXPECT_STATUS(flashfuse::readManifest(dataDir + "/sample", sample),
                FLASHFUSE_SUCCESS, "");
  for (const flashfuse::KernelSpec &k : sample.kernels)
    EXPECT(k.captures.empty());
}

void testCApi() {
  flashfuse_manifest *handle = nullptr;
  EXPECT_STATUS(flashfuse_manifest_open(capturesDir().c_str(), &handle),
                FLASHFUSE_SUCCESS, "");
  if (!handle)
    return (void)++flashfuse_test::failures;
  int32_t count = 0, rank = 0;
  const char *element = nullptr;
  EXPECT_STATUS(flashfuse_manifest_kernel_capture_count(handle, 0, &count),
                FLASHFUSE_SUCCESS, "");
  EXPECT(count == 3);
  EXPECT_STATUS(flashfuse_manifest_kernel_capture(handle, 0, 2, &element, &rank),
                FLASHFUSE_SUCCESS, "");
  EXPECT(element && std::string(element) == "i64" && rank == 2);
  EXPECT_STATUS(flashfuse_manifest_kernel_capture(handle, 0, 3, &element, &rank),
                FLASHFUSE_ERROR_INVALID_ARGUMENT,
                "capture index 3 out of range for "
                "'flash_fwd_sm90_bf16_d64_m128n64w8s3_causal_mod0' (3 values)");
  EXPECT_STATUS(flashfuse_manifest_kernel_capture_count(handle, 1, &count),
                FLASHFUSE_ERROR_INVALID_ARGUMENT, "");
  // A kernel of a score_mod / mask_mod is never a variant's kernel: its
  // own variant finds nothing, and the message says why.
  int32_t mods = 0;
  EXPECT_STATUS(flashfuse_manifest_kernel_mods(handle, 0, &mods),
                FLASHFUSE_SUCCESS, "");
  EXPECT(mods == 1);
  flashfuse_kernel_info info{};
  EXPECT_STATUS(flashfuse_manifest_kernel_info(handle, 0, &info),
                FLASHFUSE_SUCCESS, "");
  int32_t index = -1;
  EXPECT_STATUS(flashfuse_manifest_find(handle, &info.variant, &index),
                FLASHFUSE_ERROR_NOT_FOUND,
                "(score_mod/mask_mod: launched by name)");
  flashfuse_manifest_close(handle);
}

void testMalformed() {
  const auto M = FLASHFUSE_ERROR_MANIFEST;
  const std::string line = "  captures f32/1 f16 i64/2\n";
  EXPECT_STATUS(parseEdited(line, "  captures f64 f16 i64/2\n"), M,
                "bad capture 'f64' (expected ELT or ELT/RANK");
  EXPECT_STATUS(parseEdited(line, "  captures f32/x f16 i64/2\n"), M,
                "bad capture 'f32/x'");
  EXPECT_STATUS(parseEdited(line, "  captures\n"), M,
                "'captures' lists no values");
  // Each value is its params, of the kinds its type is passed as.
  EXPECT_STATUS(parseEdited(line, "  captures f32/1 f16 i64/3\n"), M,
                "'captures' names values whose params the kernel does not "
                "list");
  EXPECT_STATUS(parseEdited(line, "  captures f32/1 i32 i64/2\n"), M,
                "param 'capture1' has the wrong kind for its captured value");
  EXPECT_STATUS(parseEdited(line, "  captures f32/1 f16\n"), M,
                "param 'capture2' is no value of 'captures'");
  EXPECT_STATUS(parseEdited(line, ""), M,
                "param 'capture0' is no value of 'captures'");
  EXPECT_STATUS(parseEdited("  mods 1\n", ""), M,
                "'captures' needs 'mods 1'");
  EXPECT_STATUS(parseEdited("  mods 1\n", "  mods 2\n"), M,
                "bad value '2' for 'mods'");
  EXPECT_STATUS(parseEdited("  kind forward\n", "  kind backward_preprocess\n"),
                M, "'captures' is for forward, backward and backward_dq "
                   "kernels only");
}

// The launch's arguments: a captured tensor spans fewer than 2^31
// elements, the kernels computing its offsets in 32 bits.
void testBind() {
  flashfuse::Manifest m;
  EXPECT_STATUS(flashfuse::readManifest(capturesDir(), m), FLASHFUSE_SUCCESS, "");
  if (m.kernels.size() != 1)
    return (void)++flashfuse_test::failures;
  const flashfuse::KernelSpec &k = m.kernels[0];
  auto at = [](uintptr_t address) { return reinterpret_cast<void *>(address); };
  auto argsWith = [&](int64_t idsNumel) {
    std::vector<flashfuse_arg> args;
    for (const auto &p : k.params) {
      if (p.type == FLASHFUSE_PARAM_MEMREF)
        args.push_back(flashfuse::buffer(p.name.c_str(), at(0x10000000),
                                         p.name == "capture2" ? idsNumel : 64));
      else if (p.type == FLASHFUSE_PARAM_F32)
        args.push_back(flashfuse::real(p.name.c_str(), 0.5));
      else
        args.push_back(flashfuse::integer(p.name.c_str(), p.type, 1));
    }
    return args;
  };
  std::vector<flashfuse::ParamSlot> slots;
  std::vector<flashfuse_arg> fits = argsWith(2147483647);
  EXPECT_STATUS(flashfuse::bindParams(k, fits.data(), int(fits.size()), true,
                                      slots),
                FLASHFUSE_SUCCESS, "");
  std::vector<flashfuse_arg> wide = argsWith(int64_t(1) << 31);
  EXPECT_STATUS(flashfuse::bindParams(k, wide.data(), int(wide.size()), true,
                                      slots),
                FLASHFUSE_ERROR_INVALID_ARGUMENT,
                "captured tensor 'capture2' spans 2147483648 elements; the "
                "kernels address one in 32 bits (at most 2147483647)");
}

} // namespace

int main(int argc, char **argv) {
  static const flashfuse_test::Test tests[] = {
      {"captures_parse", testParse},
      {"captures_c_api", testCApi},
      {"captures_malformed", testMalformed},
      {"captures_bind", testBind}};
  return flashfuse_test::runTests(argc, argv, tests);
}
