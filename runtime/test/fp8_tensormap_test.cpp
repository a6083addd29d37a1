// The TMA tensor maps of FP8 forwards (KERNEL_ABI.md "FP8 forwards",
// "Tensor maps") as describeTensorMap computes them for cuTensorMapEncodeTiled:
// data type, sizes, byte strides and box, and the launches it refuses. Part
// of flashfuse-runtime-fp8-test (fp8_test.cpp gives the arguments); it
// reaches the runtime's internals, so it includes no runtime.hpp, whose
// flashfuse::Manifest would clash with manifest.h's.
#include "test_support.h"

#include "launch.h"
#include "manifest.h"
#include "tensormap.h"

#include <cstdint>
#include <string>
#include <vector>

namespace {

// The named arguments a forward launch of kernel 0's shape binds, as
// forward.cpp builds them (the maps need only these).
std::vector<flashfuse_arg> mapArgs(const flashfuse_forward_args &a,
                                   const char *v, const char *rowStride) {
  using flashfuse::integer;
  std::vector<flashfuse_arg> out = {
      flashfuse::buffer("q", a.q, 1), flashfuse::buffer("k", a.k, 1),
      flashfuse::buffer(v, a.v, 1),
      integer("batch", FLASHFUSE_PARAM_I32, a.batch),
      integer("heads_q", FLASHFUSE_PARAM_I32, a.heads_q),
      integer("heads_kv", FLASHFUSE_PARAM_I32, a.heads_kv),
      integer("seq_q", FLASHFUSE_PARAM_I32, a.seq_q),
      integer("seq_k", FLASHFUSE_PARAM_I32, a.seq_k)};
  // Kept alive: flashfuse_arg holds the name's pointer.
  static std::vector<std::string> names;
  const int64_t *strides[3] = {a.q_stride, a.k_stride, a.v_stride};
  const std::string ops[3] = {"q", "k", v};
  for (int i = 0; i < 3; ++i) {
    const char *dims[3] = {"b", "h", i == 2 ? rowStride : "s"};
    for (int d = 0; d < 3; ++d) {
      names.push_back(ops[i] + "_stride_" + dims[d]);
      out.push_back(integer(nullptr, FLASHFUSE_PARAM_I64, strides[i][d]));
    }
  }
  // Set the names after the vector stopped growing.
  for (size_t i = 0; i < 9; ++i)
    out[8 + i].name = names[names.size() - 9 + i].c_str();
  return out;
}

struct MapCase {
  const char *param;
  int dataType;
  std::uint64_t dims[4], strides[3];
  std::uint32_t box[2];
  int swizzle = 3; // CU_TENSOR_MAP_SWIZZLE_128B
};

void expectMap(const flashfuse::KernelSpec &spec,
               const std::vector<flashfuse_arg> &args, const MapCase &c,
               int line) {
  flashfuse::TensorMapRequest r;
  if (flashfuse::describeTensorMap(spec, c.param, args.data(),
                                   static_cast<int>(args.size()), r) !=
      FLASHFUSE_SUCCESS) {
    std::fprintf(stderr, "  line %d: %s: %s\n", line, c.param,
                 flashfuse_last_error());
    ++flashfuse_test::failures;
    return;
  }
  bool same = r.dataType == c.dataType && r.box[0] == c.box[0] &&
              r.box[1] == c.box[1] && r.box[2] == 1 && r.box[3] == 1 &&
              r.swizzle == c.swizzle;
  for (int d = 0; d < 4; ++d)
    same = same && r.dims[d] == c.dims[d];
  for (int d = 0; d < 3; ++d)
    same = same && r.strides[d] == c.strides[d];
  if (!same) {
    std::fprintf(stderr,
                 "  line %d: %s: type %d dims %llu %llu %llu %llu strides "
                 "%llu %llu %llu box %u %u swizzle %d\n",
                 line, c.param, r.dataType, (unsigned long long)r.dims[0],
                 (unsigned long long)r.dims[1], (unsigned long long)r.dims[2],
                 (unsigned long long)r.dims[3], (unsigned long long)r.strides[0],
                 (unsigned long long)r.strides[1],
                 (unsigned long long)r.strides[2], r.box[0], r.box[1],
                 r.swizzle);
    ++flashfuse_test::failures;
  }
}

} // namespace

void testFp8TensorMaps(const std::string &artifactDir,
                       const flashfuse_forward_args &a) {
  flashfuse::Manifest parsed;
  if (flashfuse::readManifest(artifactDir, parsed) != FLASHFUSE_SUCCESS) {
    std::fprintf(stderr, "  %s\n", flashfuse_last_error());
    ++flashfuse_test::failures;
    return;
  }
  const flashfuse::KernelSpec &e4m3 = parsed.kernels.at(0);
  const flashfuse::KernelSpec &bf16 = parsed.kernels.at(2);
  const flashfuse::KernelSpec &d256 = parsed.kernels.at(3);
  std::vector<flashfuse_arg> args = mapArgs(a, "vt", "d");
  const int u8 = 0, bf = 9; // CU_TENSOR_MAP_DATA_TYPE_UINT8 / BFLOAT16
  // Bytes: Q rows 8 heads x 128 apart (BSHD), a box of 128 one-byte
  // columns (one 128-byte swizzle row) by block_m rows.
  expectMap(e4m3, args,
            {"q_map", u8, {128, 113, 8, 2}, {1024, 128, 115712}, {128, 128}},
            __LINE__);
  expectMap(e4m3, args,
            {"k_map", u8, {128, 203, 2, 2}, {128, 25984, 51968}, {128, 128}},
            __LINE__);
  // Vt: the keys innermost, Sk_pad = 224 of them (the last group's keys
  // lie anywhere in its 32 positions; fp8_vt_layout.h), Dv rows of 224
  // bytes, a box of block_n keys by all Dv rows.
  expectMap(e4m3, args,
            {"vt_map", u8, {224, 128, 2, 2}, {224, 28672, 57344}, {128, 128}},
            __LINE__);
  expectMap(d256, args,
            {"vt_map", u8, {224, 256, 2, 2}, {224, 28672, 57344}, {128, 256}},
            __LINE__);
  expectMap(d256, args,
            {"q_map", u8, {256, 113, 8, 2}, {1024, 128, 115712}, {128, 128}},
            __LINE__);
  // D = 64: Q and K rows of 64 bytes are one box of the 64-byte swizzle
  // (KernelSpec::tmaSwizzleBytes); Vt rows of block_n keys keep the
  // 128-byte one.
  flashfuse::KernelSpec d64 = e4m3;
  d64.variant.head_dim = d64.variant.head_dim_v = 64;
  const int swizzle64 = 2; // CU_TENSOR_MAP_SWIZZLE_64B
  expectMap(d64, args,
            {"q_map", u8, {64, 113, 8, 2}, {1024, 128, 115712}, {64, 128},
             swizzle64},
            __LINE__);
  expectMap(d64, args,
            {"k_map", u8, {64, 203, 2, 2}, {128, 25984, 51968}, {64, 128},
             swizzle64},
            __LINE__);
  expectMap(d64, args,
            {"vt_map", u8, {224, 64, 2, 2}, {224, 28672, 57344}, {128, 64}},
            __LINE__);
  // The 16-bit maps are unchanged: 64 two-byte columns, byte strides.
  flashfuse_forward_args h = a;
  const int64_t v[4] = {2 * 203 * 128, 203 * 128, 128, 1};
  for (int d = 0; d < 4; ++d)
    h.v_stride[d] = v[d];
  std::vector<flashfuse_arg> args16 = mapArgs(h, "v", "s");
  expectMap(bf16, args16,
            {"q_map", bf, {128, 113, 8, 2}, {2048, 256, 231424}, {64, 128}},
            __LINE__);
  expectMap(bf16, args16,
            {"v_map", bf, {128, 203, 2, 2}, {256, 51968, 103936}, {64, 128}},
            __LINE__);

  auto expectRefused = [&](const flashfuse::KernelSpec &spec,
                           const std::vector<flashfuse_arg> &with,
                           const char *param, const std::string &fragment,
                           int line) {
    flashfuse::TensorMapRequest r;
    flashfuse_test::expectStatus(
        flashfuse::describeTensorMap(spec, param, with.data(),
                                     static_cast<int>(with.size()), r),
        FLASHFUSE_ERROR_INVALID_ARGUMENT, fragment, line);
  };
  // An e4m3 kernel has no V map (its V is Vt), a 16-bit one no Vt map.
  expectRefused(e4m3, args, "v_map",
                "the runtime makes tensor maps of q, k and vt only for e4m3 "
                "kernels",
                __LINE__);
  expectRefused(bf16, args16, "vt_map",
                "the runtime makes tensor maps of q, k, v and do only", __LINE__);
  // Vt rows (Dv apart... of 200 keys) that are not 16 bytes apart.
  flashfuse_forward_args odd = a;
  odd.v_stride[2] = 200;
  expectRefused(e4m3, mapArgs(odd, "vt", "d"), "vt_map",
                "'vt_stride_d' = 200 elements is not a multiple of 16 bytes",
                __LINE__);
  // Vt tiles of 176 keys are not whole swizzle rows, not even of the
  // narrowest (32-byte) one; Dv = 512 rows are taller than a box.
  flashfuse::KernelSpec wide = e4m3;
  wide.block_n = 176;
  expectRefused(wide, args, "vt_map",
                "the kernel's block_n = 176 columns of 1 byte(s) are not "
                "whole 32-byte swizzle rows",
                __LINE__);
  // block_n = 192: three boxes of 64 keys a stage, the 64-byte swizzle;
  // 160 and 224: five and seven boxes of 32 keys, the 32-byte swizzle;
  // 256: two of 128.
  flashfuse::KernelSpec n160 = e4m3, n192 = e4m3, n224 = e4m3, n256 = e4m3;
  n160.block_n = 160;
  n192.block_n = 192;
  n224.block_n = 224;
  n256.block_n = 256;
  const int swizzle32 = 1; // CU_TENSOR_MAP_SWIZZLE_32B
  expectMap(n192, args,
            {"vt_map", u8, {224, 128, 2, 2}, {224, 28672, 57344}, {64, 128},
             swizzle64},
            __LINE__);
  expectMap(n160, args,
            {"vt_map", u8, {224, 128, 2, 2}, {224, 28672, 57344}, {32, 128},
             swizzle32},
            __LINE__);
  expectMap(n224, args,
            {"vt_map", u8, {224, 128, 2, 2}, {224, 28672, 57344}, {32, 128},
             swizzle32},
            __LINE__);
  expectMap(n256, args,
            {"vt_map", u8, {224, 128, 2, 2}, {224, 28672, 57344}, {128, 128}},
            __LINE__);
  flashfuse::KernelSpec tall = e4m3;
  tall.variant.head_dim_v = 512;
  expectRefused(tall, args, "vt_map",
                "the kernel's head_dim_v = 512 is not a TMA box height",
                __LINE__);
}

