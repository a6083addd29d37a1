// FP8 forwards (KERNEL_ABI.md "FP8 forwards"), without a GPU: the manifest
// keys `dtype e4m3` and `out_dtype`, lookup by out_dtype, the checks of the
// arguments before a launch, and the tensor maps the runtime would encode
// (q, k over bytes, a box of one 128-byte swizzle row; Vt with the keys
// innermost).
//
// Usage: flashfuse-runtime-fp8-test DATA_DIR (data/fp8/manifest.txt: two
// e4m3 kernels of D = 128, bf16 and f16 O, a bf16 sm90ws kernel of D = 128
// and an e4m3 one of D = 256 with block_n 80).
#include "test_errors.h"

#include <cstdint>
#include <string>
#include <vector>

void testFp8TensorMaps(const std::string &artifactDir,
                       const flashfuse_forward_args &a);

namespace {

using flashfuse_test::dataDir;
using flashfuse_test::expectError;
using flashfuse_test::fakePointer;

flashfuse::Manifest fp8Sample() {
  return flashfuse::Manifest(dataDir + "/fp8");
}

flashfuse_variant fp8Variant(flashfuse_dtype out, int d,
                             flashfuse_causal causal) {
  flashfuse_variant v{};
  v.kind = FLASHFUSE_KIND_FORWARD;
  v.dtype = FLASHFUSE_DTYPE_E4M3;
  v.head_dim = v.head_dim_v = d;
  v.causal = causal;
  v.out_dtype = out;
  return v;
}

void testParse() {
  flashfuse::Manifest m = fp8Sample();
  std::vector<flashfuse_kernel_info> k = m.kernels();
  EXPECT(k.size() == 4);
  EXPECT(k[0].variant.dtype == FLASHFUSE_DTYPE_E4M3);
  EXPECT(k[0].variant.out_dtype == FLASHFUSE_DTYPE_BF16);
  EXPECT(k[1].variant.out_dtype == FLASHFUSE_DTYPE_F16);
  EXPECT(k[1].variant.causal == FLASHFUSE_CAUSAL_BOTTOM_RIGHT);
  // A 16-bit kernel carries 0: its O has `dtype`.
  EXPECT(k[2].variant.dtype == FLASHFUSE_DTYPE_BF16 &&
         k[2].variant.out_dtype == 0);
  EXPECT(k[0].num_params == 38);
  flashfuse_param_type type;
  const char *name = nullptr;
  flashfuse::check(
      flashfuse_manifest_kernel_param(m.get(), 0, 2, &type, &name));
  EXPECT(type == FLASHFUSE_PARAM_MEMREF && std::string(name) == "vt");
  flashfuse::check(
      flashfuse_manifest_kernel_param(m.get(), 0, 37, &type, &name));
  EXPECT(type == FLASHFUSE_PARAM_TENSORMAP && std::string(name) == "vt_map");
}

void testLookup() {
  flashfuse::Manifest m = fp8Sample();
  EXPECT(m.find(fp8Variant(FLASHFUSE_DTYPE_BF16, 128,
                           FLASHFUSE_CAUSAL_NONE)) == 0);
  EXPECT(m.find(fp8Variant(FLASHFUSE_DTYPE_F16, 128,
                           FLASHFUSE_CAUSAL_BOTTOM_RIGHT)) == 1);
  EXPECT(m.find(fp8Variant(FLASHFUSE_DTYPE_BF16, 256,
                           FLASHFUSE_CAUSAL_NONE)) == 3);
  // out_dtype is part of the key: the f16 O of kernel 0's variant is
  // another kernel, and the miss prints both O dtypes.
  EXPECT_ERROR(m.find(fp8Variant(FLASHFUSE_DTYPE_F16, 128,
                                 FLASHFUSE_CAUSAL_NONE)),
               FLASHFUSE_ERROR_NOT_FOUND,
               "no kernel for variant 'forward e4m3 D=128 Dv=128 "
               "causal=none out=f16'");
  EXPECT_ERROR(m.find(fp8Variant(FLASHFUSE_DTYPE_F16, 128,
                                 FLASHFUSE_CAUSAL_NONE)),
               FLASHFUSE_ERROR_NOT_FOUND,
               "flash_fwd_sm90ws_e4m3_bf16_d128: forward e4m3 D=128 Dv=128 "
               "causal=none out=bf16");
  // The 16-bit kernel is found by its own key (out_dtype 0) only.
  flashfuse_variant bf16{};
  bf16.kind = FLASHFUSE_KIND_FORWARD;
  bf16.dtype = FLASHFUSE_DTYPE_BF16;
  bf16.head_dim = bf16.head_dim_v = 128;
  EXPECT(m.find(bf16) == 2);
  bf16.out_dtype = FLASHFUSE_DTYPE_BF16;
  EXPECT_ERROR(m.find(bf16), FLASHFUSE_ERROR_NOT_FOUND,
               "forward bf16 D=128 Dv=128 causal=none");
  flashfuse_variant e4m3Out =
      fp8Variant(FLASHFUSE_DTYPE_E4M3, 128, FLASHFUSE_CAUSAL_NONE);
  EXPECT_ERROR(m.find(e4m3Out), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "out_dtype");
}

const char *kHeader = "flashfuse-manifest 1\narch 90\nptx k.ptx\n";

// A forward kernel entry with `keys` in place of its dtype line.
std::string kernelText(const std::string &keys,
                       const char *kind = "forward") {
  return std::string("kernel a\n  kind ") + kind + "\n" + keys +
         "  head_dim 128\n  head_dim_v 128\n  block_m 128\n  block_n 128\n"
         "  threads 384\n  smem 0\n  causal none\n  params memref:q\nend\n";
}

void testMalformed() {
  using flashfuse::Manifest;
  // The good forms parse.
  Manifest ok = Manifest::fromText(
      std::string(kHeader) +
      kernelText("  dtype e4m3\n  out_dtype f16\n  vt_key_group 32\n"));
  EXPECT(ok.kernels().at(0).variant.out_dtype == FLASHFUSE_DTYPE_F16);
  struct Case {
    std::string keys;
    std::string fragment;
    const char *kind = "forward";
  } cases[] = {
      {"  dtype e5m2\n", ":6: bad dtype 'e5m2' (expected f16|bf16|e4m3)"},
      {"  dtype e4m3\n", "kernel 'a' (line 4): dtype e4m3 needs 'out_dtype'"},
      {"  dtype bf16\n  out_dtype bf16\n",
       "'out_dtype' is for dtype e4m3 only"},
      {"  dtype e4m3\n  out_dtype f32\n",
       ":7: bad out_dtype 'f32' (expected bf16|f16)"},
      {"  dtype e4m3\n  out_dtype e4m3\n", ":7: bad out_dtype 'e4m3'"},
      {"  dtype e4m3\n  out_dtype bf16\n  out_dtype bf16\n",
       ":8: key 'out_dtype' given twice"},
      {"  dtype e4m3\n  out_dtype bf16\n",
       "dtype e4m3 is for kind forward only", "backward"},
      {"  dtype e4m3\n  out_dtype bf16\n  out_f32 1\n",
       "e4m3 kernels write no f32 O and take no varlen or dropout"},
      // Vt's key order: a kernel compiled before it (no key) or for another
      // group is refused, and a 16-bit kernel has no Vt.
      {"  dtype e4m3\n  out_dtype bf16\n",
       "an e4m3 forward needs 'vt_key_group 32' (Vt's keys permuted within "
       "groups, fp8_vt_layout.h); a kernel without it was compiled for Vt "
       "in natural key order: recompile the artifact"},
      {"  dtype e4m3\n  out_dtype bf16\n  vt_key_group 16\n",
       "vt_key_group 16 is not this runtime's Vt key group (32"},
      {"  dtype bf16\n  vt_key_group 32\n",
       "'vt_key_group' is for e4m3 forwards only"},
      {"  dtype e4m3\n  out_dtype bf16\n  varlen 1\n",
       "e4m3 kernels write no f32 O and take no varlen or dropout"},
  };
  for (const Case &c : cases)
    EXPECT_ERROR(
        Manifest::fromText(std::string(kHeader) + kernelText(c.keys, c.kind)),
        FLASHFUSE_ERROR_MANIFEST, c.fragment);
}

// Arguments for kernel 0 (e4m3, D = 128, bf16 O): Q seen in BSHD memory, K
// contiguous, Vt [B, Hkv, Dv, 224] (Sk = 203 padded to a group of 32
// keys), q and v
// descales per head, k's per tensor. The addresses are never dereferenced.
flashfuse_forward_args fp8Args() {
  flashfuse_forward_args a;
  flashfuse_forward_args_init(&a);
  a.dtype = FLASHFUSE_DTYPE_E4M3;
  a.out_dtype = FLASHFUSE_DTYPE_BF16;
  a.q = fakePointer(0x10000000);
  a.k = fakePointer(0x20000000);
  a.v = fakePointer(0x30000000);
  a.o = const_cast<void *>(fakePointer(0x40000000));
  a.lse = static_cast<float *>(const_cast<void *>(fakePointer(0x50000000)));
  a.q_descale = static_cast<const float *>(fakePointer(0x60000000));
  a.k_descale = static_cast<const float *>(fakePointer(0x60000100));
  a.v_descale = static_cast<const float *>(fakePointer(0x60000200));
  a.batch = 2;
  a.heads_q = 8;
  a.heads_kv = 2;
  a.seq_q = 113;
  a.seq_k = 203;
  a.head_dim = a.head_dim_v = 128;
  const int64_t q[4] = {113 * 8 * 128, 128, 8 * 128, 1};
  const int64_t k[4] = {2 * 203 * 128, 203 * 128, 128, 1};
  const int64_t vt[4] = {2 * 128 * 224, 128 * 224, 224, 1};
  for (int d = 0; d < 4; ++d) {
    a.q_stride[d] = a.o_stride[d] = q[d];
    a.k_stride[d] = k[d];
    a.v_stride[d] = vt[d];
  }
  a.q_descale_stride[0] = 8;
  a.q_descale_stride[1] = 1;
  a.v_descale_stride[0] = 2;
  a.v_descale_stride[1] = 1;
  a.scale = 0.088f;
  return a;
}

void testForwardChecks() {
  static_assert(sizeof(flashfuse_forward_args) == 448,
                "flashfuse_forward_args layout (python/flashfuse/_runtime.py "
                "mirrors it)");
  flashfuse::Manifest m = fp8Sample();
  m.checkForward(0, fp8Args());
  // The defaults are those of a 16-bit caller: no descales, out_dtype 0.
  flashfuse_forward_args init;
  flashfuse_forward_args_init(&init);
  EXPECT(init.out_dtype == 0 && !init.q_descale && !init.k_descale &&
         !init.v_descale && init.q_descale_stride[0] == 0 &&
         init.v_descale_stride[1] == 0);
  auto expectBad = [&](int kernel,
                       const std::function<void(flashfuse_forward_args &)> &edit,
                       const std::string &fragment, int line) {
    flashfuse_forward_args a = fp8Args();
    edit(a);
    expectError([&] { m.checkForward(kernel, a); },
                FLASHFUSE_ERROR_INVALID_ARGUMENT, fragment, line);
  };
#define EXPECT_BAD(kernel, edit, fragment)                                     \
  expectBad(kernel, [](flashfuse_forward_args & a) { edit; }, fragment,        \
            __LINE__)
  // e4m3 arguments for a 16-bit kernel, and the reverse.
  EXPECT_BAD(2, (void)a, "inputs are e4m3 but the kernel was compiled for bf16");
  EXPECT_BAD(0, a.dtype = FLASHFUSE_DTYPE_BF16,
             "inputs are bf16 but the kernel was compiled for e4m3");
  EXPECT_BAD(0, a.out_dtype = FLASHFUSE_DTYPE_F16,
             "out_dtype is f16 but the kernel writes O in bf16");
  EXPECT_BAD(0, a.out_f32 = 1,
             "'o' is f32 (out_f32 = 1) but the kernel writes O in bf16");
  EXPECT_BAD(0, a.q_descale = nullptr,
             "'q_descale' is a null pointer (e4m3 kernels need");
  EXPECT_BAD(0, a.v_descale = nullptr, "'v_descale' is a null pointer");
  EXPECT_BAD(0, a.k_descale_stride[1] = -1, "'k_descale' has a negative stride");
  EXPECT_BAD(0, a.k_descale = static_cast<const float *>(fakePointer(0x60000104)),
             "buffer 'k_descale' at 0x60000104 is not 16-byte aligned");
  // Vt: the keys contiguous, 16-byte rows of bytes.
  EXPECT_BAD(0, a.v_stride[3] = 2, "'vt' has stride 2 in its last dimension");
  EXPECT_BAD(0, a.v_stride[2] = 232,
             "'vt' stride 232 in dimension 2 is not a multiple of 16 "
             "elements (16 bytes)");
  // Rows that end before Sk_pad: 208 holds Sk = 203, not its group.
  EXPECT_BAD(0, a.v_stride[2] = 208,
             "'vt' rows are 208 elements apart but span 224 keys: Sk = 203 "
             "rounded up to a group of 32");
  // Q, K rows: multiples of 16 one-byte elements (8 would do for 16 bits).
  EXPECT_BAD(0, a.q_stride[2] = 8 * 128 + 8,
             "'q' stride 1032 in dimension 2 is not a multiple of 16");
  EXPECT_BAD(0, a.head_dim = 64, "head dims D=64 Dv=128");
  EXPECT_BAD(0, a.v = nullptr, "'vt' is a null pointer");
  // Descales or an out_dtype given to a 16-bit kernel.
  auto to16 = [](flashfuse_forward_args &a) {
    a.dtype = FLASHFUSE_DTYPE_BF16;
    a.out_dtype = FLASHFUSE_DTYPE_F16;
    a.q_descale = a.k_descale = a.v_descale = nullptr;
    const int64_t v[4] = {2 * 203 * 128, 203 * 128, 128, 1};
    for (int d = 0; d < 4; ++d)
      a.v_stride[d] = v[d];
  };
  flashfuse_forward_args b = fp8Args();
  to16(b);
  m.checkForward(2, b);
  b.k_descale = static_cast<const float *>(fakePointer(0x60000100));
  EXPECT_ERROR(m.checkForward(2, b), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "'k_descale' was given but the kernel is a bf16 kernel");
  b.k_descale = nullptr;
  b.out_dtype = FLASHFUSE_DTYPE_BF16;
  EXPECT_ERROR(m.checkForward(2, b), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "out_dtype is bf16; it is for e4m3 kernels only");
#undef EXPECT_BAD
}

// Per-block descales (flash.attention's descale_block_size): the manifest
// keys descale_block_q / descale_block_k, lookup by them, their malformed
// forms, and the block strides a launch gives.
void testBlockDescales() {
  using flashfuse::Manifest;
  std::string params;
  for (const char *p :
       {"memref:q", "memref:k", "memref:vt", "memref:o", "memref:lse",
        "memref:q_descale", "memref:k_descale", "memref:v_descale",
        "i32:batch", "i32:heads_q", "i32:heads_kv", "i32:seq_q", "i32:seq_k",
        "i64:q_stride_b", "i64:q_stride_h", "i64:q_stride_s", "i64:k_stride_b",
        "i64:k_stride_h", "i64:k_stride_s", "i64:vt_stride_b",
        "i64:vt_stride_h", "i64:vt_stride_d", "i64:o_stride_b",
        "i64:o_stride_h", "i64:o_stride_s", "i64:q_descale_stride_b",
        "i64:q_descale_stride_h", "i64:q_descale_stride_n",
        "i64:k_descale_stride_b", "i64:k_descale_stride_h",
        "i64:k_descale_stride_n", "i64:v_descale_stride_b",
        "i64:v_descale_stride_h", "i64:v_descale_stride_n", "f32:scale",
        "i32:window_left", "i32:window_right", "f32:softcap",
        "tensormap:q_map", "tensormap:k_map", "tensormap:vt_map"})
    params += std::string(" ") + p;
  auto kernel = [&](const std::string &dtype, const std::string &keys,
                    const std::string &ps) {
    return std::string(kHeader) + "kernel flash_fwd_ds\n  kind forward\n" +
           dtype + keys +
           "  head_dim 128\n  head_dim_v 128\n  block_m 128\n  block_n 128\n"
           "  threads 384\n  smem 0\n  causal none\n  params" +
           ps + "\nend\n";
  };
  const std::string e4m3 = "  dtype e4m3\n  out_dtype bf16\n  vt_key_group 32\n";
  const std::string blocks = "  descale_block_q 64\n  descale_block_k 128\n";
  Manifest m = Manifest::fromText(kernel(e4m3, blocks, params));
  flashfuse_variant v =
      fp8Variant(FLASHFUSE_DTYPE_BF16, 128, FLASHFUSE_CAUSAL_NONE);
  // The per-head kernel's key is another variant.
  EXPECT_ERROR(m.find(v), FLASHFUSE_ERROR_NOT_FOUND,
               "forward e4m3 D=128 Dv=128 causal=none out=bf16 "
               "descale_blocks=64x128");
  v.descale_block_q = 64;
  v.descale_block_k = 128;
  EXPECT(m.find(v) == 0);
  // q and v per block ([B, H, N] contiguous), k per tensor.
  flashfuse_forward_args a = fp8Args();
  a.q_descale_stride[0] = 8 * 2;
  a.q_descale_stride[1] = 2;
  a.q_descale_stride_block = 1;
  a.v_descale_stride[0] = 2 * 2;
  a.v_descale_stride[1] = 2;
  a.v_descale_stride_block = 1;
  m.checkForward(0, a);
  a.v_descale_stride_block = -1;
  EXPECT_ERROR(m.checkForward(0, a), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "'v_descale' has a negative stride");
  // A block stride for a kernel of per-head descales.
  flashfuse_forward_args b = fp8Args();
  b.k_descale_stride_block = 1;
  EXPECT_ERROR(fp8Sample().checkForward(0, b),
               FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "'k_descale' has a block stride (1, per-block descales) but "
               "the kernel takes per-tensor or per-head descales");
  struct Case {
    std::string dtype, keys, params, fragment;
  } cases[] = {
      {e4m3, "  descale_block_q 64\n", params,
       "'descale_block_q' and 'descale_block_k' come together"},
      {e4m3, "  descale_block_q 64\n  descale_block_k 64\n", params,
       "'descale_block_k' of block_n"},
      {e4m3, "  descale_block_q 8\n  descale_block_k 128\n", params,
       "'descale_block_q' must be a multiple of 16"},
      {e4m3, blocks, " memref:q",
       "per-block descales need the param 'q_descale_stride_n'"},
      {e4m3, "", params,
       "the param 'q_descale_stride_n' needs 'descale_block_q'"},
      {"  dtype bf16\n", blocks, params, "are for e4m3 forwards only"},
  };
  for (const Case &c : cases)
    EXPECT_ERROR(Manifest::fromText(kernel(c.dtype, c.keys, c.params)),
                 FLASHFUSE_ERROR_MANIFEST, c.fragment);
}

// The tensor maps of kernels of the fp8 sample for arguments of kernel 0's
// shape (fp8_tensormap_test.cpp, which reaches the runtime's internals).
void testTensorMaps() { testFp8TensorMaps(dataDir + "/fp8", fp8Args()); }

} // namespace

int main(int argc, char **argv) {
  static const flashfuse_test::Test tests[] = {
      {"fp8_parse", testParse},
      {"fp8_lookup", testLookup},
      {"fp8_malformed", testMalformed},
      {"fp8_forward_checks", testForwardChecks},
      {"fp8_block_descales", testBlockDescales},
      {"fp8_tensor_maps", testTensorMaps}};
  return flashfuse_test::runTests(argc, argv, tests);
}
