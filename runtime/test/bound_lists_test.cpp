// Params an artifact binds (KERNEL_ABI.md "Block-sparse": lists
// flashfuse-compile derived at compile time): the `bound` and `bound_for`
// lines, the list file's checks at load, and the arguments a launch gets
// (bound_lists.h). Reaches the runtime's internals, so it includes no
// runtime.hpp (test_support.h).
#include "manifest_edit.h"

#include "bound_lists.h"
#include "launch.h"
#include "manifest.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using flashfuse_test::contains;
using flashfuse_test::dataDir;
using flashfuse_test::failures;
using flashfuse_test::readFile;

#define EXPECT_STATUS(call, status, fragment)                                  \
  flashfuse_test::expectStatus(call, status, fragment, __LINE__)

std::string derivedDir() { return dataDir + "/derived"; }

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A scratch copy of data/derived whose files a test may change.
std::string scratchCopy() {
  char dir[] = "/tmp/flashfuse-bound-XXXXXX";
  if (!mkdtemp(dir))
    return "";
  for (const char *f : {"manifest.txt", "lists.bin"})
    writeFile(std::string(dir) + "/" + f, readFile(derivedDir() + "/" + f));
  return dir;
}

void testParseDerived() {
  flashfuse::Manifest m;
  EXPECT_STATUS(flashfuse::readManifest(derivedDir(), m), FLASHFUSE_SUCCESS, "");
  if (m.kernels.size() != 1)
    return (void)++failures;
  const flashfuse::KernelSpec &k = m.kernels[0];
  EXPECT(k.variant.block_sparse == 2);
  EXPECT(k.bound.size() == 14);
  EXPECT(k.boundFor.size() == 4);
  EXPECT(k.boundFor[0].name == "seq_q" && k.boundFor[0].value == 1024);
  EXPECT(k.boundFor[3].name == "heads_q" && k.boundFor[3].value == 4);
  EXPECT(k.bound[1].name == "kv_indices" && k.bound[1].buffer &&
         k.bound[1].offset == 32 && k.bound[1].count == 16 &&
         k.bound[1].crc32 == 0x5451b670u);
  EXPECT(k.bound[8].name == "kv_slots" && !k.bound[8].buffer &&
         k.bound[8].value == 2);
  EXPECT(m.listFiles.size() == 1 && m.listFiles.count("lists.bin") &&
         m.listFiles["lists.bin"].size() == 160);
  // zlib's CRC-32 of "123456789", the standard check value.
  const char *check = "123456789";
  EXPECT(flashfuse::crc32(reinterpret_cast<const unsigned char *>(check), 9) ==
         0xcbf43926u);

  // Through the C API.
  flashfuse_manifest *handle = nullptr;
  EXPECT_STATUS(flashfuse_manifest_open(derivedDir().c_str(), &handle),
                FLASHFUSE_SUCCESS, "");
  int32_t numBound = -1, numFor = -1;
  EXPECT_STATUS(flashfuse_manifest_kernel_bound_count(handle, 0, &numBound, &numFor),
                FLASHFUSE_SUCCESS, "");
  EXPECT(numBound == 14 && numFor == 4);
  const char *name = nullptr;
  int64_t value = 0;
  EXPECT_STATUS(flashfuse_manifest_kernel_bound_for(handle, 0, 1, &name, &value),
                FLASHFUSE_SUCCESS, "");
  EXPECT(name && std::string(name) == "seq_k" && value == 1024);
  EXPECT_STATUS(flashfuse_manifest_kernel_bound_for(handle, 0, 4, &name, &value),
                FLASHFUSE_ERROR_INVALID_ARGUMENT, "bound_for index 4 out of range");
  flashfuse_manifest_close(handle);

  // A manifest without bound lines reads as before: nothing bound, no file.
  flashfuse::Manifest sample;
  EXPECT_STATUS(flashfuse::readManifest(dataDir + "/sample", sample),
                FLASHFUSE_SUCCESS, "");
  for (const flashfuse::KernelSpec &s : sample.kernels)
    EXPECT(s.bound.empty() && s.boundFor.empty());
  EXPECT(sample.listFiles.empty());
}

// The derived manifest's text with `from` replaced by `to`, parsed.
flashfuse_status parseEdited(const std::string &from, const std::string &to) {
  return flashfuse_test::parseEdited("derived", from, to);
}

void testMalformedBoundLines() {
  const auto M = FLASHFUSE_ERROR_MANIFEST;
  EXPECT_STATUS(parseEdited("  bound kv_slots 2\n", "  bound kv_slots\n"), M,
                "expected 'bound NAME VALUE' or 'bound NAME file FILE offset");
  EXPECT_STATUS(parseEdited("  bound kv_slots 2\n", "  bound kv_slots two\n"), M,
                "bad value 'two' for bound 'kv_slots'");
  EXPECT_STATUS(parseEdited("  bound kv_slots 2\n", "  bound kv_slots 2\n  bound kv_slots 2\n"),
                M, "param 'kv_slots' is bound twice");
  EXPECT_STATUS(parseEdited("  bound kv_slots 2\n", "  bound kv_slotz 2\n"), M,
                "bound 'kv_slotz' is not one of its params");
  EXPECT_STATUS(parseEdited("  bound kv_slots 2\n", "  bound kv_slots 4294967296\n"),
                M, "bound 'kv_slots' = 4294967296 does not fit in i32");
  EXPECT_STATUS(parseEdited("  bound kv_slots 2\n",
                            "  bound kv_slots file lists.bin "
                            "offset 0 i32 8 crc32 79276393\n"),
                M, "bound 'kv_slots' is a buffer but the param is not a memref or i64");
  EXPECT_STATUS(parseEdited("file lists.bin offset 0 i32 8 crc32 79276393", "0"),
                M, "bound 'kv_num_blocks' is a value but the param is not a i32 or i64");
  EXPECT_STATUS(parseEdited("offset 32 i32 16", "offset 24 i32 16"), M,
                "bad offset '24' (a multiple of 16 bytes");
  EXPECT_STATUS(parseEdited("offset 32 i32 16", "offset 32 f32 16"), M,
                "dtype 'f32' is not supported");
  EXPECT_STATUS(parseEdited("offset 32 i32 16", "offset 32 i32 0"), M,
                "bad element count '0'");
  EXPECT_STATUS(parseEdited("crc32 5451b670", "crc32 5451b67"), M,
                "bad crc32 '5451b67' (expected 8 hex digits)");
  EXPECT_STATUS(parseEdited("crc32 5451b670", "crc32 5451b67g"), M,
                "bad crc32 '5451b67g'");
  EXPECT_STATUS(parseEdited("file lists.bin offset 32", "file ../lists.bin offset 32"),
                M, "file '../lists.bin' must be a file name in the artifact directory");
  EXPECT_STATUS(parseEdited("file lists.bin offset 32", "lists.bin offset 32"), M,
                "expected 'bound NAME VALUE' or");
  EXPECT_STATUS(parseEdited("  bound_for seq_q 1024 seq_k 1024 batch 2 heads_q 4\n", ""),
                M, "'bound' and 'bound_for' come together");
  EXPECT_STATUS(parseEdited(" seq_k 1024 batch", " batch"), M,
                "bound_for lacks 'seq_k'");
  EXPECT_STATUS(parseEdited("heads_q 4\n", "heads_q\n"), M,
                "expected 'bound_for NAME VALUE [NAME VALUE ...]'");
  EXPECT_STATUS(parseEdited("heads_q 4\n", "heads_q 4 q_stride_b 8\n"), M,
                "bound_for 'q_stride_b' is not an i32 param");
  EXPECT_STATUS(parseEdited("heads_q 4\n", "heads_q 4 seq_q 1024\n"), M,
                "'seq_q' given twice in bound_for");
  EXPECT_STATUS(parseEdited("heads_q 4\n", "heads_q 4 kv_slots 2\n"), M,
                "bound_for 'kv_slots' is itself bound");
  EXPECT_STATUS(parseEdited("  bound_for seq_q", "  bound_for seq_q 1 seq_k 1\n  bound_for seq_q"),
                M, "key 'bound_for' given twice");
  // The line is named in the message.
  EXPECT_STATUS(parseEdited("  bound kv_slots 2\n", "  bound kv_slots\n"), M,
                "derived/manifest.txt:36:");
}

void testListFileErrors() {
  const auto M = FLASHFUSE_ERROR_MANIFEST;
  std::string dir = scratchCopy();
  EXPECT(!dir.empty());
  flashfuse::Manifest m;
  EXPECT_STATUS(flashfuse::readManifest(dir, m), FLASHFUSE_SUCCESS, "");

  std::string bytes = readFile(dir + "/lists.bin");
  writeFile(dir + "/lists.bin", bytes.substr(0, 150));
  EXPECT_STATUS(flashfuse::readManifest(dir, m), M,
                "bound 'full_kv_indices': " + dir +
                    "/lists.bin holds 150 bytes, but the list is bytes [128, 160)");
  std::string corrupt = bytes;
  corrupt[40] ^= 1; // kv_indices[2]
  writeFile(dir + "/lists.bin", corrupt);
  EXPECT_STATUS(flashfuse::readManifest(dir, m), M,
                "kernel 'flash_fwd_sm90_bf16_d64_m128n64w8s3_bs128x128f_mod0': "
                "bound 'kv_indices': the bytes [32, 96) of " + dir +
                    "/lists.bin do not match the manifest's crc32");
  std::remove((dir + "/lists.bin").c_str());
  EXPECT_STATUS(flashfuse::readManifest(dir, m), M,
                "bound 'kv_num_blocks': cannot read its list file " + dir +
                    "/lists.bin");
  // Through the C API, which the Python package opens manifests with.
  flashfuse_manifest *handle = nullptr;
  EXPECT_STATUS(flashfuse_manifest_open(dir.c_str(), &handle), M,
                "cannot read its list file");
  writeFile(dir + "/lists.bin", bytes);
  EXPECT_STATUS(flashfuse_manifest_open(dir.c_str(), &handle),
                FLASHFUSE_SUCCESS, "");
  flashfuse_manifest_close(handle);
  std::remove((dir + "/lists.bin").c_str());
  std::remove((dir + "/manifest.txt").c_str());
  std::remove(dir.c_str());
}

// Every param of the derived kernel but the bound ones, as a caller of
// flashfuse_kernel_launch passes them, with seq_q = seqQ.
std::vector<flashfuse_arg> unboundArgs(int64_t seqQ) {
  using flashfuse::buffer;
  using flashfuse::integer;
  using flashfuse::real;
  const auto I32 = FLASHFUSE_PARAM_I32, I64 = FLASHFUSE_PARAM_I64;
  std::vector<flashfuse_arg> a = {
      buffer("q", flashfuse_test::fakePointer(0x10000), 1),
      buffer("k", flashfuse_test::fakePointer(0x20000), 1),
      buffer("v", flashfuse_test::fakePointer(0x30000), 1),
      buffer("o", flashfuse_test::fakePointer(0x40000), 1),
      buffer("lse", flashfuse_test::fakePointer(0x50000), 1),
      integer("batch", I32, 2), integer("heads_q", I32, 4),
      integer("heads_kv", I32, 4), integer("seq_q", I32, seqQ),
      integer("seq_k", I32, 1024),
      real("scale", 0.125), integer("window_left", I32, -1),
      integer("window_right", I32, -1), real("softcap", 0),
      real("dropout_p", 0), integer("seed", I64, 0)};
  for (const char *s :
       {"q_stride_b", "q_stride_h", "q_stride_s", "k_stride_b", "k_stride_h",
        "k_stride_s", "v_stride_b", "v_stride_h", "v_stride_s", "o_stride_b",
        "o_stride_h", "o_stride_s"})
    a.push_back(integer(s, I64, 64));
  return a;
}

void testLaunchArguments() {
  flashfuse::Manifest m;
  EXPECT_STATUS(flashfuse::readManifest(derivedDir(), m), FLASHFUSE_SUCCESS, "");
  if (m.kernels.empty())
    return (void)++failures;
  const flashfuse::KernelSpec &k = m.kernels[0];
  const std::map<std::string, flashfuse::cu::CUdeviceptr> base = {
      {"lists.bin", 0x7000000}};
  const auto E = FLASHFUSE_ERROR_INVALID_ARGUMENT;

  // Nothing bound given: the artifact's values fill in, and the whole set
  // binds strictly (every param named once, nothing unknown).
  std::vector<flashfuse_arg> args = unboundArgs(1024), all;
  EXPECT_STATUS(flashfuse::withBoundArgs(k, args.data(), int(args.size()), base, all),
                FLASHFUSE_SUCCESS, "");
  EXPECT(all.size() == args.size() + 14);
  const flashfuse_arg *idx = flashfuse::findArg(all.data(), int(all.size()), "kv_indices");
  EXPECT(idx && idx->type == FLASHFUSE_PARAM_MEMREF &&
         reinterpret_cast<uintptr_t>(idx->ptr) == 0x7000000 + 32 &&
         idx->numel == 16);
  const flashfuse_arg *slots = flashfuse::findArg(all.data(), int(all.size()), "full_kv_slots");
  EXPECT(slots && slots->type == FLASHFUSE_PARAM_I32 && slots->i == 1);
  const flashfuse_arg *stride =
      flashfuse::findArg(all.data(), int(all.size()), "kv_indices_stride_h");
  EXPECT(stride && stride->type == FLASHFUSE_PARAM_I64 && stride->i == 0);
  std::vector<flashfuse::ParamSlot> slotValues;
  EXPECT_STATUS(flashfuse::bindParams(k, all.data(), int(all.size()), true, slotValues),
                FLASHFUSE_SUCCESS, "");
  // The arguments' order does not matter (each name is searched from the
  // previous match on, then from the start): reversed, they fill the same
  // slots.
  std::vector<flashfuse_arg> reversed(all.rbegin(), all.rend());
  std::vector<flashfuse::ParamSlot> reversedSlots;
  EXPECT_STATUS(flashfuse::bindParams(k, reversed.data(), int(reversed.size()), true,
                                      reversedSlots),
                FLASHFUSE_SUCCESS, "");
  EXPECT(reversedSlots.size() == slotValues.size() &&
         std::memcmp(reversedSlots.data(), slotValues.data(),
                     slotValues.size() * sizeof(flashfuse::ParamSlot)) == 0);
  // Without the bound values, the caller's arguments alone are short.
  EXPECT_STATUS(flashfuse::bindParams(k, args.data(), int(args.size()), true, slotValues),
                E, "the kernel takes 'memref:kv_num_blocks' but no argument");

  // Sizes other than the lists were derived for.
  std::vector<flashfuse_arg> shorter = unboundArgs(512);
  EXPECT_STATUS(flashfuse::withBoundArgs(k, shorter.data(), int(shorter.size()), base, all),
                E, "seq_q = 512, but the block-sparse lists the artifact carries "
                   "were derived for seq_q = 1024, seq_k = 1024, batch = 2, heads_q = 4");
  std::vector<flashfuse_arg> noBatch = unboundArgs(1024);
  noBatch.erase(noBatch.begin() + 5);
  EXPECT_STATUS(flashfuse::withBoundArgs(k, noBatch.data(), int(noBatch.size()), base, all),
                E, "the artifact's lists hold for batch = 2; pass it as an i32");

  // The caller's own lists, all of them: used as given, sizes unchecked.
  std::vector<flashfuse_arg> own = unboundArgs(512);
  for (const flashfuse::ParamSpec &p : k.params) {
    bool listParam = false;
    for (const flashfuse::BoundParam &b : k.bound)
      listParam = listParam || b.name == p.name;
    if (!listParam)
      continue;
    own.push_back(p.type == FLASHFUSE_PARAM_MEMREF
                      ? flashfuse::buffer(p.name.c_str(),
                                          flashfuse_test::fakePointer(0x90000), 4)
                      : flashfuse::integer(p.name.c_str(), p.type, 1));
  }
  EXPECT_STATUS(flashfuse::withBoundArgs(k, own.data(), int(own.size()), base, all),
                FLASHFUSE_SUCCESS, "");
  EXPECT(all.size() == own.size());
  idx = flashfuse::findArg(all.data(), int(all.size()), "kv_indices");
  EXPECT(idx && reinterpret_cast<uintptr_t>(idx->ptr) == 0x90000);

  // Some of them: refused, naming both sides.
  std::vector<flashfuse_arg> some = unboundArgs(1024);
  some.push_back(flashfuse::buffer("kv_indices", flashfuse_test::fakePointer(0x90000), 4));
  EXPECT_STATUS(flashfuse::withBoundArgs(k, some.data(), int(some.size()), base, all),
                E, "binds its block-sparse list params as a set: pass all of them "
                   "or none; given: kv_indices; not given: kv_num_blocks");

  // A buffer bound to an i64 param (a tile order, KERNEL_ABI.md "The tile
  // order") passes the buffer's device address as that i64.
  std::string text = readFile(derivedDir() + "/manifest.txt");
  const std::string lastParam = "i32:full_kv_slots\n";
  const std::string firstBound = "  bound kv_num_blocks file";
  size_t p = text.find(lastParam), q = text.find(firstBound);
  EXPECT(p != std::string::npos && q != std::string::npos && p < q);
  if (p != std::string::npos && q != std::string::npos && p < q) {
    text.insert(q, "  bound kv_tile_order file lists.bin offset 0 i32 8 "
                   "crc32 79276393\n");
    text.insert(p + lastParam.size() - 1, " i64:kv_tile_order");
    flashfuse::Manifest ordered;
    EXPECT_STATUS(flashfuse::parseManifest(text, "derived/manifest.txt", ordered),
                  FLASHFUSE_SUCCESS, "");
    if (!ordered.kernels.empty()) {
      EXPECT_STATUS(flashfuse::withBoundArgs(ordered.kernels[0], args.data(),
                                             int(args.size()), base, all),
                    FLASHFUSE_SUCCESS, "");
      const flashfuse_arg *order =
          flashfuse::findArg(all.data(), int(all.size()), "kv_tile_order");
      EXPECT(order && order->type == FLASHFUSE_PARAM_I64 &&
             order->i == 0x7000000);
      EXPECT_STATUS(flashfuse::bindParams(ordered.kernels[0], all.data(),
                                          int(all.size()), true, slotValues),
                    FLASHFUSE_SUCCESS, "");
    }
  }

  // A kernel that binds nothing passes the arguments through untouched.
  flashfuse::Manifest sample;
  EXPECT_STATUS(flashfuse::readManifest(dataDir + "/sample", sample), FLASHFUSE_SUCCESS, "");
  EXPECT_STATUS(flashfuse::withBoundArgs(sample.kernels[0], args.data(), int(args.size()), {}, all),
                FLASHFUSE_SUCCESS, "");
  EXPECT(all.size() == args.size());
}

} // namespace

int main(int argc, char **argv) {
  static const flashfuse_test::Test tests[] = {
      {"bound_parse", testParseDerived},
      {"bound_malformed", testMalformedBoundLines},
      {"bound_list_files", testListFileErrors},
      {"bound_launch_arguments", testLaunchArguments}};
  return flashfuse_test::runTests(argc, argv, tests);
}
