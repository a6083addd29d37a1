// Runtime tests that need no GPU: manifest parsing and its error messages,
// variant lookup, argument validation, and the "no CUDA driver" path.
//
// Usage: flashfuse-runtime-test DATA_DIR
// The driver path is forced to a file that does not exist, so the no-driver
// test behaves the same on GPU machines.
#include "flashfuse/runtime.hpp"
#include "decode_args.h"
#include "test_errors.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <regex>
#include <string>
#include <vector>

namespace {

using flashfuse_test::dataDir;
using flashfuse_test::contains;
using flashfuse_test::expectError;
using flashfuse_test::failures;
using flashfuse_test::fakePointer;

flashfuse::Manifest sample() { return flashfuse::Manifest(dataDir + "/sample"); }

void testParseSample() {
  flashfuse::Manifest m = sample();
  EXPECT(m.arch() == 90);
  std::vector<flashfuse_kernel_info> k = m.kernels();
  EXPECT(k.size() == 3);
  EXPECT(std::string(k[0].name) == "flash_fwd_f16_d128");
  EXPECT(k[0].variant.kind == FLASHFUSE_KIND_FORWARD);
  EXPECT(k[0].variant.dtype == FLASHFUSE_DTYPE_F16);
  EXPECT(k[0].variant.head_dim == 128 && k[0].variant.head_dim_v == 128);
  EXPECT(k[0].block_m == 128 && k[0].block_n == 64 && k[0].threads == 128);
  EXPECT(k[0].smem == 49152);
  EXPECT(k[0].num_params == 28);
  EXPECT(k[1].variant.causal == FLASHFUSE_CAUSAL_TOP_LEFT);
  EXPECT(k[1].variant.bias == 1 && k[1].variant.window == 1);
  EXPECT(k[2].variant.kind == FLASHFUSE_KIND_BACKWARD);
  // Flags left out of a kernel entry default to 0.
  EXPECT(k[2].variant.window == 0 && k[2].variant.dropout == 0);

  flashfuse_param_type type;
  const char *name = nullptr;
  flashfuse::check(flashfuse_manifest_kernel_param(m.get(), 0, 0, &type, &name));
  EXPECT(type == FLASHFUSE_PARAM_MEMREF && std::string(name) == "q");
  flashfuse::check(flashfuse_manifest_kernel_param(m.get(), 0, 22, &type, &name));
  EXPECT(type == FLASHFUSE_PARAM_F32 && std::string(name) == "scale");
  EXPECT_ERROR(flashfuse::check(flashfuse_manifest_kernel_param(
                   m.get(), 0, 28, &type, &name)),
               FLASHFUSE_ERROR_INVALID_ARGUMENT, "out of range");
}

flashfuse_variant forwardVariant(flashfuse_dtype dtype, int d,
                                 flashfuse_causal causal) {
  flashfuse_variant v{};
  v.kind = FLASHFUSE_KIND_FORWARD;
  v.dtype = dtype;
  v.head_dim = d;
  v.head_dim_v = d;
  v.causal = causal;
  return v;
}

void testFindVariant() {
  flashfuse::Manifest m = sample();
  EXPECT(m.find(forwardVariant(FLASHFUSE_DTYPE_F16, 128,
                               FLASHFUSE_CAUSAL_NONE)) == 0);
  flashfuse_variant v =
      forwardVariant(FLASHFUSE_DTYPE_BF16, 64, FLASHFUSE_CAUSAL_TOP_LEFT);
  v.window = 1;
  v.bias = 1;
  EXPECT(m.find(v) == 1);
  // A miss names what was asked for and lists what exists.
  EXPECT_ERROR(m.find(forwardVariant(FLASHFUSE_DTYPE_BF16, 128,
                                     FLASHFUSE_CAUSAL_NONE)),
               FLASHFUSE_ERROR_NOT_FOUND, "forward bf16 D=128 Dv=128");
  EXPECT_ERROR(m.find(forwardVariant(FLASHFUSE_DTYPE_BF16, 128,
                                     FLASHFUSE_CAUSAL_NONE)),
               FLASHFUSE_ERROR_NOT_FOUND,
               "flash_fwd_bf16_d64_causal_bias: forward bf16 D=64 Dv=64 "
               "causal=top_left window bias");
  flashfuse_variant broken = v;
  broken.causal = static_cast<flashfuse_causal>(7);
  EXPECT_ERROR(m.find(broken), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "out-of-range");
}

const char *kHeader = "flashfuse-manifest 1\narch 90\nptx k.ptx\n";
const char *kKernelBody =
    "  kind forward\n  dtype f16\n  head_dim 64\n  head_dim_v 64\n"
    "  block_m 64\n  block_n 64\n  threads 128\n  smem 0\n  causal none\n"
    "  params memref:q\n";

void testBackwardKinds() {
  // Every kernel kind flash-lower-to-gpu writes parses to its enum value.
  struct {
    const char *text;
    flashfuse_kernel_kind kind;
  } kinds[] = {{"forward", FLASHFUSE_KIND_FORWARD},
               {"backward_preprocess", FLASHFUSE_KIND_BACKWARD_PREPROCESS},
               {"backward", FLASHFUSE_KIND_BACKWARD},
               {"backward_dq", FLASHFUSE_KIND_BACKWARD_DQ},
               {"backward_postprocess", FLASHFUSE_KIND_BACKWARD_POSTPROCESS}};
  for (const auto &k : kinds) {
    std::string body = kKernelBody;
    body.replace(body.find("forward"), 7, k.text);
    flashfuse::Manifest m = flashfuse::Manifest::fromText(
        std::string(kHeader) + "kernel a\n" + body + "end\n");
    EXPECT(m.kernels().at(0).variant.kind == k.kind);
  }
}

void testMalformedManifests() {
  using flashfuse::Manifest;
  const std::string kernel = std::string("kernel a\n") + kKernelBody + "end\n";
  struct Case {
    std::string text;
    std::string fragment;
  } cases[] = {
      {"", "empty manifest"},
      {"flashfuse-manifest 2\n", "manifest version 2 is not supported"},
      {"arch 90\n", "<manifest text>:1: expected 'flashfuse-manifest 1'"},
      {std::string(kHeader) + "arch sm90\n", ":4: bad arch 'sm90'"},
      {std::string(kHeader) + "colour blue\n", ":4: unknown key 'colour'"},
      {"flashfuse-manifest 1\nptx k.ptx\n" + kernel, "no 'arch' line"},
      {"flashfuse-manifest 1\narch 90\n" + kernel, "neither 'ptx' nor 'cubin'"},
      {kHeader, "no kernels"},
      {std::string(kHeader) + "kernel a\n" + kKernelBody,
       "kernel 'a' (line 4) has no 'end'"},
      {std::string(kHeader) + kernel + kernel, "kernel 'a' defined twice"},
      {std::string(kHeader) + "kernel a\n  kind sideways\n",
       ":5: bad kind 'sideways'"},
      {std::string(kHeader) + "kernel a\n  dtype f32\n", "bad dtype 'f32'"},
      {std::string(kHeader) + "kernel a\n  causal yes\n", "bad causal 'yes'"},
      {std::string(kHeader) + "kernel a\n  head_dim 12x\n",
       "bad value '12x' for 'head_dim'"},
      {std::string(kHeader) + "kernel a\n  window 2\n",
       "bad value '2' for 'window' (expected an integer in [0, 1])"},
      {std::string(kHeader) + "kernel a\n  threads 2048\n",
       "bad value '2048' for 'threads'"},
      {std::string(kHeader) + "kernel a\n  params memref:q f64:x\n",
       "bad param 'f64:x'"},
      {std::string(kHeader) + "kernel a\n  params memref:q i32:q\n",
       "param 'q' listed twice"},
      {std::string(kHeader) + "kernel a\n  params\n", "lists no parameters"},
      {std::string(kHeader) + "kernel a\n  smem 1\n  smem 2\n",
       "key 'smem' given twice"},
      {std::string(kHeader) + "kernel a\n  tile 3\n", "unknown key 'tile'"},
      {std::string(kHeader) + "kernel a\n  kind forward\nend\n",
       "kernel 'a' (line 4) lacks 'dtype'"},
      {std::string(kHeader) + "kernel a\n  grid wide\n",
       "bad grid 'wide' (expected tiles|persistent)"},
      {std::string(kHeader) + "kernel a\n  grid persistent\n" +
           std::regex_replace(kKernelBody, std::regex("forward"),
                              "backward_dq") +
           "end\n",
       "'grid persistent' is for forwards without block-sparse lists only"},
  };
  for (const Case &c : cases)
    EXPECT_ERROR(Manifest::fromText(c.text), FLASHFUSE_ERROR_MANIFEST,
                 c.fragment);
  EXPECT_ERROR(Manifest(dataDir + "/does-not-exist"), FLASHFUSE_ERROR_MANIFEST,
               "does-not-exist/manifest.txt");
  // Comments and blank lines anywhere are fine.
  Manifest ok = Manifest::fromText(std::string("# c\n\n") + kHeader + "\n" +
                                   kernel + "# end\n");
  EXPECT(ok.kernels().size() == 1);
  // `grid` is optional and says how the launch sizes the grid.
  for (const char *grid : {"tiles", "persistent"})
    EXPECT(Manifest::fromText(std::string(kHeader) + "kernel a\n  grid " +
                              grid + "\n" + kKernelBody + "end\n")
               .kernels()
               .size() == 1);
  // A packed batch's forward may walk its tiles too.
  EXPECT(Manifest::fromText(std::string(kHeader) +
                            "kernel a\n  varlen 1\n  grid persistent\n" +
                            kKernelBody + "end\n")
             .kernels()
             .size() == 1);
}

// Arguments for kernel 0 of the sample (f16, D = 128) with plausible,
// 16-byte-aligned fake device addresses: the check never dereferences them.
flashfuse_forward_args goodArgs() {
  flashfuse_forward_args a;
  flashfuse_forward_args_init(&a);
  a.dtype = FLASHFUSE_DTYPE_F16;
  a.q = reinterpret_cast<const void *>(uintptr_t(0x10000000));
  a.k = reinterpret_cast<const void *>(uintptr_t(0x20000000));
  a.v = reinterpret_cast<const void *>(uintptr_t(0x30000000));
  a.o = reinterpret_cast<void *>(uintptr_t(0x40000000));
  a.lse = reinterpret_cast<float *>(uintptr_t(0x50000000));
  a.batch = 2;
  a.heads_q = 8;
  a.heads_kv = 2;
  a.seq_q = 113;
  a.seq_k = 203;
  a.head_dim = a.head_dim_v = 128;
  // BSHD memory seen as BHSD, as in many models: strides need not be
  // row-major for the [B, H, S, D] view.
  const int64_t q[4] = {113 * 8 * 128, 128, 8 * 128, 1};
  const int64_t kv[4] = {203 * 2 * 128, 203 * 128, 128, 1};
  for (int d = 0; d < 4; ++d) {
    a.q_stride[d] = a.o_stride[d] = q[d];
    a.k_stride[d] = a.v_stride[d] = kv[d];
  }
  a.scale = 0.088f;
  return a;
}

void testForwardChecks() {
  flashfuse::Manifest m = sample();
  m.checkForward(0, goodArgs());
  auto expectBad = [&](const std::function<void(flashfuse_forward_args &)> &edit,
                       const std::string &fragment, int line) {
    flashfuse_forward_args a = goodArgs();
    edit(a);
    expectError([&] { m.checkForward(0, a); },
                FLASHFUSE_ERROR_INVALID_ARGUMENT, fragment, line);
  };
#define EXPECT_BAD(edit, fragment)                                             \
  expectBad([](flashfuse_forward_args & a) { edit; }, fragment, __LINE__)
  EXPECT_BAD(a.dtype = FLASHFUSE_DTYPE_BF16,
             "inputs are bf16 but the kernel was compiled for f16");
  EXPECT_BAD(a.head_dim = 64, "head dims D=64 Dv=128");
  EXPECT_BAD(a.heads_kv = 3, "heads_q = 8 is not a multiple of heads_kv = 3");
  EXPECT_BAD(a.seq_k = 0, "seq_k = 0");
  EXPECT_BAD(a.batch = int64_t(1) << 32, "batch = 4294967296");
  EXPECT_BAD(a.q = nullptr, "'q' is a null pointer");
  EXPECT_BAD(a.lse = nullptr, "'lse' is a null pointer");
  EXPECT_BAD(a.v = reinterpret_cast<const void *>(uintptr_t(0x30000008)),
             "buffer 'v' at 0x30000008 is not 16-byte aligned");
  EXPECT_BAD(a.k_stride[3] = 2, "'k' has stride 2 in its last dimension");
  EXPECT_BAD(a.q_stride[2] = 129, "'q' stride 129 in dimension 2");
  EXPECT_BAD(a.o_stride[0] = -8, "'o' has a negative stride");
  EXPECT_BAD(a.window_left = 16, "the kernel has none");
  EXPECT_BAD(a.softcap = 30.0f, "softcap was requested");
  EXPECT_BAD(a.dropout_p = 0.1f, "dropout was requested");
  EXPECT_BAD(a.dropout_p = 1.0f, "dropout_p = 1");
  EXPECT_BAD(a.scale = 1.0f / 0.0f, "scale is not finite");
  EXPECT_BAD(a.bias = reinterpret_cast<const float *>(uintptr_t(0x60000000)),
             "a bias was given but the kernel takes none");
#undef EXPECT_BAD

  // Size-1 dimensions may carry any stride (PyTorch leaves them arbitrary).
  flashfuse_forward_args one = goodArgs();
  one.batch = 1;
  one.q_stride[0] = one.o_stride[0] = 3;
  m.checkForward(0, one);

  // The bias variant needs the bias, and a bf16 D=64 shape.
  flashfuse_forward_args b = goodArgs();
  b.dtype = FLASHFUSE_DTYPE_BF16;
  b.head_dim = b.head_dim_v = 64;
  b.window_left = 32;
  b.window_right = 0;
  expectError([&] { m.checkForward(1, b); }, FLASHFUSE_ERROR_INVALID_ARGUMENT,
              "the kernel takes a bias but it is a null pointer", __LINE__);
  b.bias = reinterpret_cast<const float *>(uintptr_t(0x60000000));
  b.bias_stride[0] = 0; // broadcast over batch
  b.bias_stride[1] = 113 * 203;
  b.bias_stride[2] = 203;
  b.bias_stride[3] = 1;
  m.checkForward(1, b);
  // Backward kernels are launched through the generic entry point.
  expectError([&] { m.checkForward(2, goodArgs()); },
              FLASHFUSE_ERROR_INVALID_ARGUMENT, "not a forward kernel",
              __LINE__);
}

// A D = 128 forward kernel entry with the whole forward parameter list,
// `extraKeys` before it and `extraParams` after it.
std::string forwardKernelText(const char *name, const std::string &extraKeys,
                              const std::string &extraParams) {
  std::string body = kKernelBody;
  body.replace(body.find("  params memref:q\n"), 18,
               extraKeys +
                   "  params memref:q memref:k memref:v memref:o memref:lse "
                   "i32:batch i32:heads_q i32:heads_kv i32:seq_q i32:seq_k "
                   "i64:q_stride_b i64:q_stride_h i64:q_stride_s "
                   "i64:k_stride_b i64:k_stride_h i64:k_stride_s "
                   "i64:v_stride_b i64:v_stride_h i64:v_stride_s "
                   "i64:o_stride_b i64:o_stride_h i64:o_stride_s f32:scale "
                   "i32:window_left i32:window_right f32:softcap "
                   "f32:dropout_p i64:seed" +
                   extraParams + "\n");
  body.replace(body.find("head_dim 64"), 11, "head_dim 128");
  body.replace(body.find("head_dim_v 64"), 13, "head_dim_v 128");
  return std::string("kernel ") + name + "\n" + body + "end\n";
}

// The sm90ws kernels' TMA tensor maps (KERNEL_ABI.md "Tensor maps"): a
// parameter kind of its own, made from the operands' arguments (callers
// pass none for it) and checked before launch.
void testTensorMapParams() {
  using flashfuse::Manifest;
  const std::string maps = " tensormap:q_map tensormap:k_map tensormap:v_map";
  Manifest m = Manifest::fromText(std::string(kHeader) +
                                  forwardKernelText("tma", "", maps));
  flashfuse_param_type type;
  const char *name = nullptr;
  flashfuse::check(
      flashfuse_manifest_kernel_param(m.get(), 0, 28, &type, &name));
  EXPECT(type == FLASHFUSE_PARAM_TENSORMAP && std::string(name) == "q_map");
  // The sample's BSHD-as-BHSD strides are whole 16-byte rows: the maps fit.
  m.checkForward(0, goodArgs());
  // A box is at most 256 rows: block_m = 512 cannot be one.
  std::string tall = forwardKernelText("tall", "", maps);
  tall.replace(tall.find("block_m 64"), 10, "block_m 512");
  Manifest t = Manifest::fromText(std::string(kHeader) + tall);
  EXPECT_ERROR(t.checkForward(0, goodArgs()), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "tensor map 'q_map': the kernel's block_m = 512 is not a TMA "
               "box height (1..256)");
  // Only q, k, v and do have maps.
  Manifest o = Manifest::fromText(std::string(kHeader) +
                                  forwardKernelText("o", "", " tensormap:o_map"));
  EXPECT_ERROR(o.checkForward(0, goodArgs()), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "the runtime makes tensor maps of q, k, v and do only");
}

// Forward kernels that write O in f32 (`out_f32 1`, KERNEL_ABI.md): a key
// of the variant, absent (0) in every manifest written before it.
void testOutF32() {
  using flashfuse::Manifest;
  static_assert(sizeof(flashfuse_forward_args) == 448,
                "flashfuse_forward_args layout");
  for (const flashfuse_kernel_info &k : sample().kernels())
    EXPECT(k.variant.out_f32 == 0);
  // The sample's forward kernel again, once with an f32 O.
  auto forward = [](const char *name, const std::string &extra) {
    return forwardKernelText(name, extra, "");
  };
  Manifest m = Manifest::fromText(std::string(kHeader) + forward("o16", "") +
                                  forward("o32", "  out_f32 1\n"));
  std::vector<flashfuse_kernel_info> k = m.kernels();
  EXPECT(k.at(0).variant.out_f32 == 0 && k.at(1).variant.out_f32 == 1);
  flashfuse_variant v =
      forwardVariant(FLASHFUSE_DTYPE_F16, 128, FLASHFUSE_CAUSAL_NONE);
  EXPECT(m.find(v) == 0);
  v.out_f32 = 1;
  EXPECT(m.find(v) == 1);
  v.causal = FLASHFUSE_CAUSAL_TOP_LEFT;
  EXPECT_ERROR(m.find(v), FLASHFUSE_ERROR_NOT_FOUND,
               "no kernel for variant 'forward f16 D=128 Dv=128 "
               "causal=top_left out=f32'");
  v.out_f32 = 2;
  EXPECT_ERROR(m.find(v), FLASHFUSE_ERROR_INVALID_ARGUMENT, "out_f32");

  // The arguments' O must be the kernel's: f16 into an f32 kernel (or the
  // reverse) would be misread, not rejected, by the GPU.
  flashfuse_forward_args a = goodArgs();
  m.checkForward(0, a);
  EXPECT_ERROR(m.checkForward(1, a), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "'o' is f16 (out_f32 = 0) but the kernel writes O in f32");
  a.out_f32 = 1;
  m.checkForward(1, a);
  EXPECT_ERROR(m.checkForward(0, a), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "'o' is f32 (out_f32 = 1) but the kernel writes O in f16");

  struct Case {
    std::string text;
    std::string fragment;
  } cases[] = {
      {std::string(kHeader) + forward("a", "  out_f32 2\n"),
       "bad value '2' for 'out_f32' (expected an integer in [0, 1])"},
      {std::string(kHeader) + forward("a", "  out_f32 1\n  out_f32 1\n"),
       "key 'out_f32' given twice"},
  };
  for (const Case &c : cases)
    EXPECT_ERROR(Manifest::fromText(c.text), FLASHFUSE_ERROR_MANIFEST,
                 c.fragment);
  std::string backward = forward("b", "  out_f32 1\n");
  backward.replace(backward.find("kind forward"), 12, "kind backward");
  EXPECT_ERROR(Manifest::fromText(std::string(kHeader) + backward),
               FLASHFUSE_ERROR_MANIFEST, "'out_f32' is for kind forward only");
}

void testUnknownParamInManifest() {
  std::string text = std::string(kHeader) + "kernel a\n" + kKernelBody;
  text.replace(text.find("params memref:q"), 15,
               "params memref:q memref:k memref:v memref:o memref:lse "
               "i32:batch i32:heads_q i32:seq_q f32:temperature");
  text += "end\n";
  flashfuse::Manifest m = flashfuse::Manifest::fromText(text);
  flashfuse_forward_args a = goodArgs();
  a.head_dim = a.head_dim_v = 64;
  for (int d = 0; d < 3; ++d) {
    a.q_stride[d] = a.q_stride[d] / 2;
    a.o_stride[d] = a.o_stride[d] / 2;
    a.k_stride[d] = a.k_stride[d] / 2;
    a.v_stride[d] = a.v_stride[d] / 2;
  }
  expectError([&] { m.checkForward(0, a); }, FLASHFUSE_ERROR_INVALID_ARGUMENT,
              "the kernel takes 'f32:temperature' but no argument of that "
              "name was given",
              __LINE__);
}

std::vector<flashfuse_kernel_info> decodeSampleKernels();

// ---- packed variable-length batches (varlen) ------------------------------

flashfuse::Manifest varlenSample() {
  return flashfuse::Manifest(dataDir + "/varlen");
}

void testVarlenManifest() {
  flashfuse::Manifest m = varlenSample();
  std::vector<flashfuse_kernel_info> k = m.kernels();
  EXPECT(k.size() == 2);
  EXPECT(k[0].variant.kind == FLASHFUSE_KIND_FORWARD);
  EXPECT(k[0].variant.varlen == 1);
  EXPECT(k[0].variant.causal == FLASHFUSE_CAUSAL_BOTTOM_RIGHT);
  EXPECT(k[0].num_params == 32);
  EXPECT(k[1].variant.varlen == 0); // no key: a dense forward
  // Manifests written before the key (every kernel of the other samples)
  // read as dense kernels.
  for (const flashfuse_kernel_info &f : sample().kernels())
    EXPECT(f.variant.varlen == 0);
  for (const flashfuse_kernel_info &f : decodeSampleKernels())
    EXPECT(f.variant.varlen == 0);
  // Lookup tells the packed kernel and the dense one apart.
  flashfuse_variant v = forwardVariant(FLASHFUSE_DTYPE_F16, 128,
                                       FLASHFUSE_CAUSAL_BOTTOM_RIGHT);
  EXPECT(m.find(v) == 1);
  v.varlen = 1;
  EXPECT(m.find(v) == 0);
  v.causal = FLASHFUSE_CAUSAL_NONE;
  EXPECT_ERROR(m.find(v), FLASHFUSE_ERROR_NOT_FOUND,
               "no kernel for variant 'forward f16 D=128 Dv=128 causal=none "
               "varlen'");
  EXPECT_ERROR(m.find(v), FLASHFUSE_ERROR_NOT_FOUND,
               "flash_fwd_sm90_f16_d128_m128n128w8s3_causalbr_varlen: "
               "forward f16 D=128 Dv=128 causal=bottom_right varlen");
  v.varlen = 2;
  EXPECT_ERROR(m.find(v), FLASHFUSE_ERROR_INVALID_ARGUMENT, "out-of-range");

  // The key's round trip and its rules.
  using flashfuse::Manifest;
  auto kernel = [](const std::string &extra, const char *kind = "forward") {
    std::string body = kKernelBody;
    body.replace(body.find("forward"), 7, kind);
    return std::string(kHeader) + "kernel a\n" + body + extra + "end\n";
  };
  EXPECT(Manifest::fromText(kernel("  varlen 1\n")).kernels().at(0)
             .variant.varlen == 1);
  EXPECT(Manifest::fromText(kernel("  varlen 0\n")).kernels().at(0)
             .variant.varlen == 0);
  // Dropout draws at the sequence's index and local rows (FlashOps.td).
  EXPECT(Manifest::fromText(kernel("  varlen 1\n  dropout 1\n"))
             .kernels().at(0).variant.dropout == 1);
  // The backward's per-sequence kernels are varlen too; its preprocess and
  // postprocess are the dense ones.
  for (const char *kind : {"backward", "backward_dq"})
    EXPECT(Manifest::fromText(kernel("  varlen 1\n", kind)).kernels().at(0)
               .variant.varlen == 1);
  struct Case {
    std::string text;
    std::string fragment;
  } cases[] = {
      {kernel("  varlen 1\n", "backward_preprocess"),
       "'varlen' is for kinds forward, backward and backward_dq only"},
      {kernel("  varlen 1\n", "backward_postprocess"),
       "'varlen' is for kinds forward, backward and backward_dq only"},
      {kernel("  varlen 1\n", "decode"),
       "'varlen' is for kinds forward, backward and backward_dq only"},
      {kernel("  varlen 1\n  bias 1\n"),
       "varlen kernels take no bias or mask"},
      {kernel("  varlen 1\n  mask 1\n"),
       "varlen kernels take no bias or mask"},
      {kernel("  varlen 2\n"),
       "bad value '2' for 'varlen' (expected an integer in [0, 1])"},
      {kernel("  varlen 1\n  varlen 1\n"), "key 'varlen' given twice"},
  };
  for (const Case &c : cases)
    EXPECT_ERROR(Manifest::fromText(c.text), FLASHFUSE_ERROR_MANIFEST,
                 c.fragment);
}

// ---- block-sparse forwards (KERNEL_ABI.md "Block-sparse") -----------------

void testBlockSparseManifest() {
  using flashfuse::Manifest;
  auto kernel = [](const std::string &extra, const char *kind = "forward") {
    std::string body = kKernelBody;
    body.replace(body.find("forward"), 7, kind);
    return std::string(kHeader) + "kernel a\n" + body + extra + "end\n";
  };
  const std::string keys =
      "  block_sparse 2\n  sparse_block_q 128\n  sparse_block_k 128\n";
  flashfuse_variant v =
      Manifest::fromText(kernel(keys)).kernels().at(0).variant;
  EXPECT(v.block_sparse == 2 && v.sparse_block_q == 128 &&
         v.sparse_block_k == 128);
  // Absent keys: a dense forward, as every manifest written before them.
  v = Manifest::fromText(kernel("")).kernels().at(0).variant;
  EXPECT(v.block_sparse == 0 && v.sparse_block_q == 0);
  // Lookups tell a block-sparse kernel from the dense one and from one of
  // other block sizes.
  Manifest m = Manifest::fromText(kernel(keys));
  flashfuse_variant want = m.kernels().at(0).variant;
  EXPECT(m.find(want) == 0);
  want.sparse_block_k = 64;
  EXPECT_ERROR(m.find(want), FLASHFUSE_ERROR_NOT_FOUND,
               "block_sparse=2 blocks=128x64");
  // The block-sparse backward's kernels that read the lists carry the keys
  // too (KERNEL_ABI.md "Block-sparse backward"); the transposition needs
  // them.
  for (const char *kind :
       {"backward", "backward_dq", "backward_sparse_transpose"}) {
    flashfuse_variant b =
        Manifest::fromText(kernel(keys, kind)).kernels().at(0).variant;
    EXPECT(b.block_sparse == 2 && b.sparse_block_k == 128);
  }
  EXPECT(Manifest::fromText(kernel(keys, "backward_sparse_transpose"))
             .kernels()
             .at(0)
             .variant.kind == FLASHFUSE_KIND_BACKWARD_SPARSE_TRANSPOSE);
  // ... and is found by its variant (the lookup checks the kind's range).
  {
    Manifest t = Manifest::fromText(kernel(keys, "backward_sparse_transpose"));
    EXPECT(t.find(t.kernels().at(0).variant) == 0);
  }
  struct Case {
    std::string text;
    std::string fragment;
  } cases[] = {
      {kernel(keys, "backward_preprocess"),
       "'block_sparse' is for kinds forward, backward, backward_dq and "
       "backward_sparse_transpose only"},
      {kernel(keys, "backward_postprocess"),
       "'block_sparse' is for kinds forward, backward, backward_dq and "
       "backward_sparse_transpose only"},
      {kernel(keys, "decode"),
       "'block_sparse' is for kinds forward, backward, backward_dq and "
       "backward_sparse_transpose only"},
      {kernel("", "backward_sparse_transpose"),
       "a backward_sparse_transpose kernel needs 'block_sparse'"},
      {kernel(keys + "  varlen 1\n"),
       "block-sparse kernels are not varlen kernels"},
      {kernel("  block_sparse 1\n"),
       "'block_sparse' comes with 'sparse_block_q' and 'sparse_block_k'"},
      {kernel("  sparse_block_q 128\n  sparse_block_k 128\n"),
       "'block_sparse' comes with 'sparse_block_q' and 'sparse_block_k'"},
      {kernel("  block_sparse 1\n  sparse_block_q 100\n"
              "  sparse_block_k 128\n"),
       "must be multiples of block_m and block_n"},
      {kernel("  block_sparse 3\n"),
       "bad value '3' for 'block_sparse' (expected an integer in [0, 2])"},
  };
  for (const Case &c : cases)
    EXPECT_ERROR(Manifest::fromText(c.text), FLASHFUSE_ERROR_MANIFEST,
                 c.fragment);
}

// Forward arguments of a packed batch for the varlen sample: 3 sequences,
// 300 query and 500 key rows in all, flash-attn's [total, H, D] layout.
flashfuse_forward_args packedArgs() {
  flashfuse_forward_args a = goodArgs();
  a.batch = 1;
  a.seq_q = 300;
  a.seq_k = 500;
  const int64_t q[4] = {300 * 8 * 128, 128, 8 * 128, 1};
  const int64_t kv[4] = {500 * 2 * 128, 128, 2 * 128, 1};
  for (int d = 0; d < 4; ++d) {
    a.q_stride[d] = a.o_stride[d] = q[d];
    a.k_stride[d] = a.v_stride[d] = kv[d];
  }
  return a;
}

flashfuse_varlen_args packedBatch() {
  flashfuse_varlen_args p;
  flashfuse_varlen_args_init(&p);
  p.cu_seqlens_q = reinterpret_cast<const int32_t *>(uintptr_t(0x70000000));
  p.cu_seqlens_k = reinterpret_cast<const int32_t *>(uintptr_t(0x70001000));
  p.num_seqs = 3;
  p.max_seqlen_q = 150;
  p.max_seqlen_k = 260;
  return p;
}

void testVarlenForwardChecks() {
  flashfuse::Manifest m = varlenSample();
  m.checkForwardVarlen(0, packedArgs(), packedBatch());
  // Each entry point takes its own kind of kernel.
  EXPECT_ERROR(m.checkForward(0, packedArgs()),
               FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "launch it with flashfuse_attention_forward_varlen");
  EXPECT_ERROR(m.checkForwardVarlen(1, packedArgs(), packedBatch()),
               FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "a packed batch (cu_seqlens) was given but the kernel is not "
               "a varlen kernel");
  m.checkForward(1, packedArgs());
  auto expectBad =
      [&](const std::function<void(flashfuse_forward_args &,
                                   flashfuse_varlen_args &)> &edit,
          const std::string &fragment, int line) {
        flashfuse_forward_args a = packedArgs();
        flashfuse_varlen_args p = packedBatch();
        edit(a, p);
        expectError([&] { m.checkForwardVarlen(0, a, p); },
                    FLASHFUSE_ERROR_INVALID_ARGUMENT, fragment, line);
      };
#define EXPECT_BAD_VARLEN(edit, fragment)                                      \
  expectBad([](flashfuse_forward_args & a, flashfuse_varlen_args & p) {        \
    (void)a;                                                                   \
    (void)p;                                                                   \
    edit;                                                                      \
  }, fragment, __LINE__)
  EXPECT_BAD_VARLEN(a.batch = 2, "batch = 2, but a packed batch has batch 1");
  EXPECT_BAD_VARLEN(p.cu_seqlens_k = nullptr,
                    "'cu_seqlens_k' is a null pointer");
  EXPECT_BAD_VARLEN(p.num_seqs = 0, "num_seqs = 0 (must be in [1, 2^31 - 1))");
  EXPECT_BAD_VARLEN(p.max_seqlen_q = 301,
                    "max_seqlen_q = 301 (must be in [1, seq_q = 300]");
  EXPECT_BAD_VARLEN(p.max_seqlen_q = 0, "max_seqlen_q = 0");
  EXPECT_BAD_VARLEN(p.max_seqlen_k = 501,
                    "max_seqlen_k = 501 (must be in [0, seq_k = 500])");
  EXPECT_BAD_VARLEN(
      p.cu_seqlens_q = reinterpret_cast<const int32_t *>(uintptr_t(0x70000004)),
      "buffer 'cu_seqlens_q' at 0x70000004 is not 16-byte aligned");
  EXPECT_BAD_VARLEN(a.window_left = 16, "the kernel has none");
#undef EXPECT_BAD_VARLEN
  EXPECT(flashfuse_attention_forward_varlen(nullptr, nullptr, nullptr,
                                            nullptr) ==
         FLASHFUSE_ERROR_INVALID_ARGUMENT);
  EXPECT(flashfuse_attention_forward_varlen_check(nullptr, 0, nullptr,
                                                  nullptr) ==
         FLASHFUSE_ERROR_INVALID_ARGUMENT);
}

// The backward of the packed batch above (runtime/test/data/varlen-bwd:
// f16, D = 128, bottom-right causal; kernels 0-2 atomic, 3-6
// deterministic), with the scratch as distinct aligned fake pointers.
flashfuse_backward_args packedBackwardArgs() {
  flashfuse_forward_args f = packedArgs();
  flashfuse_backward_args a;
  flashfuse_backward_args_init(&a);
  auto at = [](uintptr_t p) { return reinterpret_cast<void *>(p); };
  a.q = f.q;
  a.k = f.k;
  a.v = f.v;
  a.o = f.o;
  a.dout = at(0x60000000);
  a.lse = static_cast<const float *>(at(0x61000000));
  a.grad_q = at(0x62000000);
  a.grad_k = at(0x63000000);
  a.grad_v = at(0x64000000);
  a.delta = static_cast<float *>(at(0x65000000));
  a.dq_accum = static_cast<float *>(at(0x66000000));
  a.dk = at(0x67000000);
  a.dv = at(0x68000000);
  a.batch = 1;
  a.heads_q = f.heads_q;
  a.heads_kv = f.heads_kv;
  a.seq_q = f.seq_q;
  a.seq_k = f.seq_k;
  a.head_dim = f.head_dim;
  a.head_dim_v = f.head_dim_v;
  for (int d = 0; d < 4; ++d) {
    a.q_stride[d] = a.o_stride[d] = a.do_stride[d] = a.grad_q_stride[d] =
        f.q_stride[d];
    a.k_stride[d] = a.v_stride[d] = a.grad_k_stride[d] =
        a.grad_v_stride[d] = f.k_stride[d];
  }
  a.scale = 0.088f;
  return a;
}

void testVarlenBackwardChecks() {
  flashfuse::Manifest m(dataDir + "/varlen-bwd");
  const int32_t atomic[4] = {0, 1, -1, 2};
  const int32_t deterministic[4] = {3, 4, 5, 6};
  m.checkBackwardVarlen(atomic, packedBackwardArgs(), packedBatch());
  flashfuse_backward_args det = packedBackwardArgs();
  det.dq_accum = nullptr; // the dQ kernel writes grad_q itself
  m.checkBackwardVarlen(deterministic, det, packedBatch());
  auto expectBad =
      [&](const int32_t kernels[4],
          const std::function<void(flashfuse_backward_args &,
                                   flashfuse_varlen_args &)> &edit,
          const std::string &fragment, int line) {
        flashfuse_backward_args a = packedBackwardArgs();
        flashfuse_varlen_args p = packedBatch();
        edit(a, p);
        expectError([&] { m.checkBackwardVarlen(kernels, a, p); },
                    FLASHFUSE_ERROR_INVALID_ARGUMENT, fragment, line);
      };
#define EXPECT_BAD_BWD(kernels, edit, fragment)                                \
  expectBad(kernels,                                                           \
            [](flashfuse_backward_args & a, flashfuse_varlen_args & p) {       \
              (void)a;                                                         \
              (void)p;                                                         \
              edit;                                                            \
            },                                                                 \
            fragment, __LINE__)
  // The varlen bounds, as for the forward (one shared check).
  EXPECT_BAD_BWD(atomic, a.batch = 2,
                 "batch = 2, but a packed batch has batch 1");
  EXPECT_BAD_BWD(atomic, p.cu_seqlens_q = nullptr,
                 "'cu_seqlens_q' is a null pointer");
  EXPECT_BAD_BWD(atomic, p.num_seqs = -1,
                 "num_seqs = -1 (must be in [1, 2^31 - 1))");
  EXPECT_BAD_BWD(atomic, p.max_seqlen_q = 301,
                 "max_seqlen_q = 301 (must be in [1, seq_q = 300]");
  EXPECT_BAD_BWD(atomic, p.max_seqlen_k = 501,
                 "max_seqlen_k = 501 (must be in [0, seq_k = 500])");
  EXPECT_BAD_BWD(atomic, p.max_seqlen_k = 0,
                 "max_seqlen_k = 0: no sequence has a key");
  EXPECT_BAD_BWD(
      atomic,
      p.cu_seqlens_k = reinterpret_cast<const int32_t *>(uintptr_t(0x70001008)),
      "buffer 'cu_seqlens_k' at 0x70001008 is not 16-byte aligned");
  // Shapes, tensors, scratch and options.
  EXPECT_BAD_BWD(atomic, a.head_dim = 64,
                 "head dims D=64 Dv=128 but the kernels were compiled for "
                 "D=128 Dv=128");
  EXPECT_BAD_BWD(atomic, a.heads_kv = 3,
                 "heads_q = 8 is not a multiple of heads_kv = 3");
  EXPECT_BAD_BWD(atomic, a.dtype = FLASHFUSE_DTYPE_BF16,
                 "inputs are bf16 but the kernels were compiled for f16");
  EXPECT_BAD_BWD(atomic, a.grad_k = nullptr, "'grad_k' is a null pointer");
  EXPECT_BAD_BWD(atomic, a.do_stride[2] = 12,
                 "'do' stride 12 in dimension 2 is not a multiple of 8");
  EXPECT_BAD_BWD(atomic, a.delta = nullptr, "'delta' is a null pointer");
  EXPECT_BAD_BWD(atomic, a.dq_accum = nullptr,
                 "'dq_accum' is a null pointer, but the backward kernel "
                 "accumulates dQ there");
  EXPECT_BAD_BWD(atomic, a.window_left = 16, "the kernel has none");
  EXPECT_BAD_BWD(atomic, a.dropout_p = 0.1f,
                 "dropout was requested but the kernels have none");
  EXPECT_BAD_BWD(atomic, a.dropout_p = 1.0f, "dropout_p = 1 (must be in");
  EXPECT_BAD_BWD(atomic, a.scale = 1.0f / 0.0f, "scale is not finite");
  // The kernels: kinds, varlen or dense, one artifact's mode.
  const int32_t swapped[4] = {2, 1, -1, 0};
  EXPECT_BAD_BWD(swapped, (void)0,
                 "the preprocess kernel 'flash_bwd_post_sm90_f16_d128_"
                 "m64n128w8s2_causalbr' is of another kind");
  const int32_t denseMain[4] = {0, 0, -1, 2};
  EXPECT_BAD_BWD(denseMain, (void)0, "is of another kind");
  const int32_t missingDq[4] = {3, 4, -1, 6};
  EXPECT_BAD_BWD(missingDq, (void)0,
                 "leaves dQ to a backward_dq kernel (a deterministic "
                 "artifact), and none was given");
  const int32_t extraDq[4] = {0, 1, 5, 2};
  EXPECT_BAD_BWD(extraDq, (void)0,
                 "a backward_dq kernel was given, but the backward kernel "
                 "adds dQ atomically itself");
  const int32_t outOfRange[4] = {0, 1, -1, 7};
  EXPECT_ERROR(m.checkBackwardVarlen(outOfRange, packedBackwardArgs(),
                                     packedBatch()),
               FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "postprocess kernel index 7 out of range");
#undef EXPECT_BAD_BWD
  EXPECT(flashfuse_attention_backward_varlen(nullptr, nullptr, nullptr,
                                             nullptr) ==
         FLASHFUSE_ERROR_INVALID_ARGUMENT);
  EXPECT(flashfuse_attention_backward_varlen_check(nullptr, nullptr, nullptr,
                                                   nullptr) ==
         FLASHFUSE_ERROR_INVALID_ARGUMENT);
}

// ---- decode (attention over a KV cache) ----------------------------------

flashfuse::Manifest decodeSample() {
  return flashfuse::Manifest(dataDir + "/decode");
}

std::vector<flashfuse_kernel_info> decodeSampleKernels() {
  return decodeSample().kernels();
}

flashfuse_variant decodeVariant(flashfuse_kernel_kind kind,
                                flashfuse_dtype dtype, int d,
                                flashfuse_causal causal, int pageSize) {
  flashfuse_variant v = forwardVariant(dtype, d, causal);
  v.kind = kind;
  v.page_size = pageSize;
  return v;
}

void testDecodeManifest() {
  // python/flashfuse/_runtime.py mirrors these structs field by field; its
  // test checks the same sizes.
  static_assert(sizeof(flashfuse_variant) == 92, "flashfuse_variant layout");
  static_assert(sizeof(flashfuse_varlen_args) == 40,
                "flashfuse_varlen_args layout");
  static_assert(sizeof(flashfuse_decode_args) == 480,
                "flashfuse_decode_args layout");
  // Mirrored by python/flashfuse/_runtime.py's DecodeAddresses.
  static_assert(sizeof(flashfuse_decode_addresses) == 128,
                "flashfuse_decode_addresses layout");
  flashfuse::Manifest m = decodeSample();
  std::vector<flashfuse_kernel_info> k = m.kernels();
  EXPECT(k.size() == 16);
  EXPECT(k[0].variant.kind == FLASHFUSE_KIND_DECODE);
  EXPECT(k[4].variant.kind == FLASHFUSE_KIND_KV_APPEND);
  EXPECT(k[5].variant.page_size == 16 && k[5].block_n == 0);
  EXPECT(k[6].variant.kind == FLASHFUSE_KIND_DECODE_CHECK);
  EXPECT(k[7].variant.page_size == 16 && k[7].threads == 256);
  EXPECT(k[4].num_params == 21 && k[5].num_params == 24);
  EXPECT(k[6].num_params == 5 && k[7].num_params == 8);
  // Found by the decode's variant key with their own kind.
  EXPECT(m.find(decodeVariant(FLASHFUSE_KIND_KV_APPEND, FLASHFUSE_DTYPE_BF16,
                              64, FLASHFUSE_CAUSAL_NONE, 16)) == 5);
  EXPECT(m.find(decodeVariant(FLASHFUSE_KIND_DECODE_CHECK,
                              FLASHFUSE_DTYPE_F16, 128, FLASHFUSE_CAUSAL_NONE,
                              0)) == 6);
  EXPECT(k[0].variant.page_size == 0); // absent: contiguous
  EXPECT(k[0].variant.causal == FLASHFUSE_CAUSAL_BOTTOM_RIGHT);
  EXPECT(k[1].variant.page_size == 16);
  EXPECT(k[1].variant.window == 1 && k[1].variant.softcap == 1);
  EXPECT(k[2].variant.kind == FLASHFUSE_KIND_DECODE_COMBINE);
  EXPECT(k[0].num_params == 31 && k[1].num_params == 34);
  // Kernel 11 is kernel 0 over a left-padded cache: found by its flag.
  EXPECT(k[11].variant.leftpad == 1 && k[0].variant.leftpad == 0 &&
         k[11].num_params == 32);
  flashfuse_variant padded = decodeVariant(
      FLASHFUSE_KIND_DECODE, FLASHFUSE_DTYPE_F16, 128,
      FLASHFUSE_CAUSAL_BOTTOM_RIGHT, 0);
  padded.leftpad = 1;
  EXPECT(m.find(padded) == 11);
  padded.leftpad = 2;
  EXPECT_ERROR(m.find(padded), FLASHFUSE_ERROR_INVALID_ARGUMENT, "leftpad");
  // Kernel 12 is kernel 0 with ALiBi over [B, Hq] slopes: found by its
  // layout, not by the other one's.
  EXPECT(k[12].variant.alibi == 2 && k[0].variant.alibi == 0 &&
         k[12].num_params == 32);
  flashfuse_variant biased = decodeVariant(
      FLASHFUSE_KIND_DECODE, FLASHFUSE_DTYPE_F16, 128,
      FLASHFUSE_CAUSAL_BOTTOM_RIGHT, 0);
  biased.alibi = 2;
  EXPECT(m.find(biased) == 12);
  biased.alibi = 1;
  EXPECT_ERROR(m.find(biased), FLASHFUSE_ERROR_NOT_FOUND,
               "no kernel for variant 'decode f16 D=128 Dv=128 "
               "causal=bottom_right alibi=[Hq]'");
  biased.alibi = 3;
  EXPECT_ERROR(m.find(biased), FLASHFUSE_ERROR_INVALID_ARGUMENT, "alibi");
  // The forward kernels of the other sample are contiguous (page_size 0).
  for (const flashfuse_kernel_info &f : sample().kernels())
    EXPECT(f.variant.page_size == 0);
  // Lookup tells page sizes apart.
  EXPECT(m.find(decodeVariant(FLASHFUSE_KIND_DECODE, FLASHFUSE_DTYPE_F16, 128,
                              FLASHFUSE_CAUSAL_BOTTOM_RIGHT, 0)) == 0);
  flashfuse_variant paged = decodeVariant(
      FLASHFUSE_KIND_DECODE, FLASHFUSE_DTYPE_BF16, 64, FLASHFUSE_CAUSAL_NONE, 16);
  paged.window = paged.softcap = 1;
  EXPECT(m.find(paged) == 1);
  EXPECT(m.find(decodeVariant(FLASHFUSE_KIND_DECODE_COMBINE,
                              FLASHFUSE_DTYPE_BF16, 64, FLASHFUSE_CAUSAL_NONE,
                              0)) == 3);
  paged.page_size = 64;
  EXPECT_ERROR(m.find(paged), FLASHFUSE_ERROR_NOT_FOUND,
               "no kernel for variant 'decode bf16 D=64 Dv=64 causal=none "
               "window softcap page_size=64'");
  EXPECT_ERROR(m.find(paged), FLASHFUSE_ERROR_NOT_FOUND,
               "flash_decode_bf16_d64_m64n64w4s3_window_softcap_page16: decode "
               "bf16 D=64 Dv=64 causal=none window softcap page_size=16");
  paged.page_size = -1;
  EXPECT_ERROR(m.find(paged), FLASHFUSE_ERROR_INVALID_ARGUMENT, "page_size");
}

void testDecodeManifestStrictness() {
  using flashfuse::Manifest;
  auto decodeKernel = [](const std::string &extra, const char *kind = "decode") {
    std::string body = kKernelBody;
    body.replace(body.find("forward"), 7, kind);
    return std::string(kHeader) + "kernel a\n" + body + extra + "end\n";
  };
  // The round trip of every new key and kind.
  Manifest ok = Manifest::fromText(decodeKernel("  page_size 64\n"));
  EXPECT(ok.kernels().at(0).variant.kind == FLASHFUSE_KIND_DECODE);
  EXPECT(ok.kernels().at(0).variant.page_size == 64);
  // block_n 0: how flash-lower-to-gpu writes the combine, which walks no
  // key blocks.
  auto withoutKeyBlocks = [&](const char *kind) {
    std::string text = decodeKernel("", kind);
    return text.replace(text.find("block_n 64"), 10, "block_n 0");
  };
  Manifest combine = Manifest::fromText(withoutKeyBlocks("decode_combine"));
  EXPECT(combine.kernels().at(0).block_n == 0);
  EXPECT(combine.kernels().at(0).variant.kind ==
         FLASHFUSE_KIND_DECODE_COMBINE);
  // The append and the check walk no keys either and take a page size.
  for (const char *kind : {"kv_append", "decode_check"}) {
    std::string text = withoutKeyBlocks(kind);
    text.replace(text.rfind("end\n"), 4, "  page_size 16\nend\n");
    Manifest keyless = Manifest::fromText(text);
    EXPECT(keyless.kernels().at(0).variant.page_size == 16);
  }
  std::string causalAppend = withoutKeyBlocks("kv_append");
  causalAppend.replace(causalAppend.find("causal none"), 11,
                       "causal bottom_right");
  EXPECT_ERROR(Manifest::fromText(causalAppend), FLASHFUSE_ERROR_MANIFEST,
               "kv_append and decode_check kernels are causal none");
  struct Case {
    std::string text;
    std::string fragment;
  } cases[] = {
      {decodeKernel("  page_size 16\n", "forward"),
       "'page_size' is for kinds decode, kv_append and decode_check only"},
      {decodeKernel("  page_size 16\n", "decode_combine"),
       "'page_size' is for kinds decode, kv_append and decode_check only"},
      {decodeKernel("  window 1\n", "kv_append"),
       "kv_append and decode_check kernels are causal none with no window"},
      {decodeKernel("  softcap 1\n", "decode_check"),
       "kv_append and decode_check kernels are causal none with no window "
       "or softcap"},
      {decodeKernel("  page_size -16\n"),
       "bad value '-16' for 'page_size' (expected an integer in [0, 65536])"},
      {decodeKernel("  page_size 16\n  page_size 16\n"),
       "key 'page_size' given twice"},
      {decodeKernel("  bias 1\n"), "decode kernels take no bias"},
      {decodeKernel("  splits 4\n"), "unknown key 'splits'"},
      {decodeKernel("  kv_dtype e4m3\n"),
       "kv_dtype e4m3 needs the params 'k_descale' and 'v_descale'"},
      {decodeKernel("  kv_dtype f16\n"), "bad kv_dtype 'f16' (expected e4m3)"},
      {decodeKernel("  kv_dtype e4m3\n", "decode_combine"),
       "'kv_dtype' is for kinds decode and kv_append only"},
      {decodeKernel("  kv_dtype e4m3\n", "forward"),
       "'kv_dtype' is for kinds decode and kv_append only"},
      {decodeKernel("  kv_dtype e4m3\n", "decode_check"),
       "'kv_dtype' is for kinds decode and kv_append only"},
      {decodeKernel("  kv_dtype e4m3\n", "kv_append"),
       "kv_dtype e4m3 needs the params 'k_descale' and 'v_descale'"},
      {decodeKernel("  leftpad 1\n"),
       "leftpad 1 needs the param 'cache_leftpad'"},
      {decodeKernel("  leftpad 2\n"),
       "bad value '2' for 'leftpad' (expected an integer in [0, 1])"},
      {decodeKernel("  leftpad 1\n", "kv_append"),
       "'leftpad' is for kind decode only"},
      {decodeKernel("  alibi 1\n"), "alibi needs the param 'alibi_slopes'"},
      {decodeKernel("  alibi 3\n"),
       "bad value '3' for 'alibi' (expected an integer in [0, 2])"},
      {decodeKernel("  alibi 2\n", "kv_append"),
       "'alibi' is for kinds forward, backward, backward_dq and decode only"},
      {decodeKernel("", "decoder"), "bad kind 'decoder'"},
      {withoutKeyBlocks("decode"),
       "block_n 0 is for kinds decode_combine, kv_append and decode_check "
       "only"},
      {withoutKeyBlocks("forward"),
       "block_n 0 is for kinds decode_combine, kv_append and decode_check "
       "only"},
  };
  for (const Case &c : cases)
    EXPECT_ERROR(Manifest::fromText(c.text), FLASHFUSE_ERROR_MANIFEST,
                 c.fragment);
  std::string stray = decodeKernel("");
  stray.replace(stray.find("params memref:q"), 15,
                "params memref:q memref:cache_leftpad");
  EXPECT_ERROR(Manifest::fromText(stray), FLASHFUSE_ERROR_MANIFEST,
               "the param 'cache_leftpad' needs 'leftpad 1'");
  std::string straySlopes = decodeKernel("");
  straySlopes.replace(straySlopes.find("params memref:q"), 15,
                      "params memref:q memref:alibi_slopes");
  EXPECT_ERROR(Manifest::fromText(straySlopes), FLASHFUSE_ERROR_MANIFEST,
               "the param 'alibi_slopes' needs 'alibi 1' or 'alibi 2'");
  // A kv_append that rotates (rotary_dim, docs/KVCACHE.md "Rotary"): its
  // keys and params are checked, no variant finds it, and
  // flashfuse_kvcache_append, which has no rotary operands, refuses it.
  auto rotaryAppend = [&](const std::string &keys, const char *params) {
    std::string text = withoutKeyBlocks("kv_append");
    text.replace(text.find("  params memref:q\n"), 18,
                 std::string("  params memref:q") + params + "\n");
    return text.replace(text.rfind("end\n"), 4, keys + "end\n");
  };
  const char *rotaryParams = " memref:q_rot memref:rotary_cos memref:rotary_sin";
  Manifest rotating = Manifest::fromText(rotaryAppend(
      "  rotary_dim 32\n  rotary_interleaved 1\n  rotary_per_row 1\n",
      rotaryParams));
  flashfuse_variant plainAppend = rotating.kernels().at(0).variant;
  EXPECT(plainAppend.kind == FLASHFUSE_KIND_KV_APPEND);
  EXPECT_ERROR(rotating.find(plainAppend), FLASHFUSE_ERROR_NOT_FOUND,
               "(rotary: launched by name)");
  flashfuse_decode_args appendArgs;
  flashfuse_decode_args_init(&appendArgs);
  EXPECT_ERROR(flashfuse::check(flashfuse_kvcache_append_check(
                   rotating.get(), 0, &appendArgs)),
               FLASHFUSE_ERROR_UNSUPPORTED,
               "flashfuse_kvcache_append has no rotary operands");
  Case rotaryCases[] = {
      {rotaryAppend("  rotary_dim 32\n", ""),
       "rotary_dim needs the param 'q_rot'"},
      {rotaryAppend("", rotaryParams), "the param 'q_rot' needs 'rotary_dim'"},
      {rotaryAppend("  rotary_dim 24\n", rotaryParams),
       "'rotary_dim' is for kind kv_append only, a multiple of 16 up to "
       "head_dim"},
      {rotaryAppend("  rotary_dim 128\n", rotaryParams),
       "a multiple of 16 up to head_dim"},
      {rotaryAppend("  rotary_dim 8\n", rotaryParams),
       "bad value '8' for 'rotary_dim' (expected an integer in [16, 1024])"},
      {rotaryAppend("  rotary_per_row 1\n", ""),
       "'rotary_interleaved' and 'rotary_per_row' need 'rotary_dim'"},
      {decodeKernel("  rotary_dim 32\n"),
       "'rotary_dim' is for kind kv_append only"},
  };
  for (const Case &c : rotaryCases)
    EXPECT_ERROR(Manifest::fromText(c.text), FLASHFUSE_ERROR_MANIFEST,
                 c.fragment);
  // A pool of sequences (batch_idx 1, docs/KVCACHE.md): decode, kv_append
  // and decode_check kernels with the params cache_batch_idx and
  // cache_batch, contiguous caches; found for their variant only.
  auto poolKernel = [&](const std::string &keys, const char *kind,
                        const char *params) {
    std::string text = decodeKernel(keys, kind);
    text.replace(text.find("  params memref:q\n"), 18,
                 std::string("  params memref:q") + params + "\n");
    return text;
  };
  const char *poolParams = " memref:cache_batch_idx i32:cache_batch";
  Manifest pool =
      Manifest::fromText(poolKernel("  batch_idx 1\n", "decode", poolParams));
  flashfuse_variant pooled = pool.kernels().at(0).variant;
  EXPECT(pooled.batch_idx == 1);
  EXPECT(pool.find(pooled) == 0);
  pooled.batch_idx = 0;
  EXPECT_ERROR(pool.find(pooled), FLASHFUSE_ERROR_NOT_FOUND, "pool");
  pooled.batch_idx = 2;
  EXPECT_ERROR(pool.find(pooled), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "batch_idx");
  Case poolCases[] = {
      {poolKernel("  batch_idx 1\n", "decode", ""),
       "batch_idx 1 needs the param 'cache_batch_idx'"},
      {poolKernel("  batch_idx 1\n", "decode", " memref:cache_batch_idx"),
       "batch_idx 1 needs the param 'cache_batch'"},
      {poolKernel("", "decode", poolParams),
       "the param 'cache_batch_idx' needs 'batch_idx 1'"},
      {poolKernel("  batch_idx 1\n", "forward", poolParams),
       "'batch_idx' is for kinds decode, kv_append and decode_check only"},
      {poolKernel("  batch_idx 1\n  page_size 16\n", "decode", poolParams),
       "'batch_idx' is for a contiguous cache (page_size 0)"},
      {poolKernel("  batch_idx 2\n", "decode", poolParams),
       "bad value '2' for 'batch_idx' (expected an integer in [0, 1])"},
  };
  for (const Case &c : poolCases)
    EXPECT_ERROR(Manifest::fromText(c.text), FLASHFUSE_ERROR_MANIFEST,
                 c.fragment);
  // cluster_merge (KERNEL_ABI.md "Decode"): a decode kernel's, on sm_90 and
  // later, that merges its splits itself where it launches no clusters.
  auto clusterKernel = [&](const std::string &extra,
                           const char *kind = "decode",
                           const char *header = kHeader) {
    std::string text = decodeKernel(extra, kind);
    text.replace(text.find("  params memref:q\n"), 18,
                 "  params memref:q memref:split_arrivals i32:merge_splits\n");
    return text.replace(0, std::strlen(kHeader), header);
  };
  Manifest cluster = Manifest::fromText(clusterKernel("  cluster_merge 8\n"));
  EXPECT(cluster.kernels().at(0).variant.kind == FLASHFUSE_KIND_DECODE);
  // 0: as absent.
  Manifest noCluster = Manifest::fromText(clusterKernel("  cluster_merge 0\n"));
  EXPECT(noCluster.kernels().size() == 1);
  const char *sm80 = "flashfuse-manifest 1\narch 80\nptx k.ptx\n";
  Case clusterCases[] = {
      {clusterKernel("  cluster_merge -1\n"),
       "bad value '-1' for 'cluster_merge' (expected an integer in [0, "
       "1024])"},
      {clusterKernel("  cluster_merge eight\n"),
       "bad value 'eight' for 'cluster_merge'"},
      {clusterKernel("  cluster_merge 8\n  cluster_merge 8\n"),
       "key 'cluster_merge' given twice"},
      {clusterKernel("  cluster_merge 8\n", "forward"),
       "'cluster_merge' is for kind decode only"},
      {decodeKernel("  cluster_merge 8\n"),
       "'cluster_merge' needs a decode kernel that merges its splits itself "
       "(the params 'merge_splits' and 'split_arrivals' or "
       "'split_counters')"},
      {clusterKernel("  cluster_merge 8\n", "decode", sm80),
       "kernel 'a' has 'cluster_merge 8' but the artifact is for sm_80 "
       "(thread-block clusters need sm_90 or later)"},
  };
  for (const Case &c : clusterCases)
    EXPECT_ERROR(Manifest::fromText(c.text), FLASHFUSE_ERROR_MANIFEST,
                 c.fragment);
  std::string topLeft = decodeKernel("");
  topLeft.replace(topLeft.find("causal none"), 11, "causal top_left");
  EXPECT_ERROR(Manifest::fromText(topLeft), FLASHFUSE_ERROR_MANIFEST,
               "not top_left");
}

// decode_args.h's steps at fake addresses.
flashfuse_decode_args goodDecodeArgs() {
  flashfuse_decode_args a = flashfuse_test::decodeStepArgs();
  a.q = fakePointer(0x10000000);
  a.k_cache = fakePointer(0x20000000);
  a.v_cache = fakePointer(0x30000000);
  a.o = const_cast<void *>(fakePointer(0x40000000));
  a.lse = static_cast<float *>(const_cast<void *>(fakePointer(0x50000000)));
  a.cache_seqlens = static_cast<const int32_t *>(fakePointer(0x60000000));
  return a;
}

flashfuse_decode_args goodPagedArgs() {
  flashfuse_decode_args a = flashfuse_test::pagedStepArgs();
  flashfuse_decode_args addresses = goodDecodeArgs();
  a.q = addresses.q;
  a.k_cache = addresses.k_cache;
  a.v_cache = addresses.v_cache;
  a.o = addresses.o;
  a.lse = addresses.lse;
  a.cache_seqlens = addresses.cache_seqlens;
  a.block_table = static_cast<const int32_t *>(fakePointer(0x70000000));
  return a;
}

void testDecodeSplitsAndWorkspace() {
  flashfuse::Manifest m = decodeSample();
  flashfuse_decode_args a = goodDecodeArgs();
  // B * Hkv = 24 blocks of 264 slots: floor(264 / 24) = 11 splits (at
  // most 64 / 4 = 16, each walking at least 4 key blocks).
  size_t bytes = 0;
  EXPECT(m.checkDecode(0, 2, a, 132, 2, fakePointer(0x80000000), 1 << 30,
                       &bytes) == 11);
  // o_partial f32 [11, 3, 32, 1, 128], then lse_partial at a 256-byte
  // boundary: [11, 3, 32, 1].
  size_t oBytes = size_t(11) * 3 * 32 * 128 * 4;
  EXPECT(bytes == oBytes + size_t(11) * 3 * 32 * 4);
  // The issue shapes through the runtime's own launch planning: the four
  // shapes of decode_splits_c99.c, with 132 SMs and two blocks each.
  struct {
    int64_t batch, capacity;
    int splits;
  } shapes[] = {{16, 8192, 2}, {4, 65536, 8}, {64, 2048, 1}, {1, 131072, 33}};
  for (const auto &shape : shapes) {
    flashfuse_decode_args s = goodDecodeArgs();
    s.batch = shape.batch;
    s.cache_len = shape.capacity;
    s.k_stride[0] = s.v_stride[0] = shape.capacity * 8 * 128;
    size_t need = 0;
    int got = m.checkDecode(0, 2, s, 132, 2, fakePointer(0x80000000),
                            size_t(1) << 40, &need);
    EXPECT(got == shape.splits);
    EXPECT((need == 0) == (shape.splits == 1));
  }
  // Forced splits; one split needs no workspace and no combine.
  a.num_splits = 3;
  EXPECT(m.checkDecode(0, 2, a, 132, 2, fakePointer(0x80000000), 1 << 30) == 3);
  a.num_splits = 1;
  EXPECT(m.checkDecode(0, -1, a, 132, 2, nullptr, 0, &bytes) == 1);
  EXPECT(bytes == 0);
  // Without a combine kernel the automatic choice is one split.
  a.num_splits = 0;
  EXPECT(m.checkDecode(0, -1, a, 132, 2) == 1);
  // Sq = 4 rows of 4 query heads: 16 packed rows, still one m-block, so
  // 3 * 8 = 24 blocks unsplit and one wave of 264 slots takes 11 splits.
  a.seq_q = 4;
  EXPECT(m.checkDecode(0, 2, a, 132, 2, fakePointer(0x80000000), 1 << 30) == 11);
  // The paged kernel: capacity 300 * 16 = 4800 rows, 75 key blocks, which
  // would allow 18 splits of 4 blocks; the wave allows 11.
  flashfuse_decode_args p = goodPagedArgs();
  EXPECT(m.checkDecode(1, 3, p, 132, 2, fakePointer(0x80000000), 1 << 30) ==
         11);
  // Fewer key blocks than the wave wants: 4 key blocks per split at least.
  p.max_pages = 40; // 640 rows, 10 key blocks: 2 splits
  EXPECT(m.checkDecode(1, 3, p, 132, 2, fakePointer(0x80000000), 1 << 30) ==
         2);
}

// A decode kernel that takes split_counters merges its own splits: it
// splits without a combine kernel, and its workspace ends with one int32
// counter per row group, at a 256-byte boundary (KERNEL_ABI.md "Decode").
void testDecodeInKernelMerge() {
  flashfuse::Manifest m = decodeSample();
  flashfuse_decode_args a = goodDecodeArgs();
  // 3 * 8 row groups of one m-block (4 packed rows of 16): 264 slots allow
  // 11 splits, 4096 / 128 = 32 key blocks allow 8.
  size_t bytes = 0;
  EXPECT(m.checkDecode(8, -1, a, 132, 2, fakePointer(0x80000000), 1 << 30,
                       &bytes) == 8);
  size_t oBytes = size_t(8) * 3 * 32 * 128 * 4;    // o_partial
  size_t lseEnd = oBytes + size_t(8) * 3 * 32 * 4; // lse_partial
  size_t counters = (lseEnd + 255) / 256 * 256;
  EXPECT(bytes == counters + size_t(3) * 8 * 4);
  // A kernel that puts its counters back to 0 (split_arrivals) uses the
  // runtime's, but the workspace keeps room for them: a CUDA graph capture
  // that finds none of the runtime's left clears them there.
  size_t arrivalsBytes = 0;
  EXPECT(m.checkDecode(9, -1, a, 132, 2, fakePointer(0x80000000), 1 << 30,
                       &arrivalsBytes) == 8);
  EXPECT(arrivalsBytes == bytes);
  // One that can also merge in a thread-block cluster (cluster_merge 8):
  // the manifest check has no driver to ask whether clusters can be
  // launched, so it reports the counters' layout, a workspace that serves
  // a cluster launch too (decode_plan_test.cpp checks the cluster plans).
  size_t clusterBytes = 0;
  EXPECT(m.checkDecode(10, -1, a, 132, 2, fakePointer(0x80000000), 1 << 30,
                       &clusterBytes) == 8);
  EXPECT(clusterBytes == bytes);
  a.num_splits = 2;
  EXPECT(m.checkDecode(8, -1, a, 132, 2, fakePointer(0x80000000), 1 << 30) ==
         2);
  a.num_splits = 1;
  EXPECT(m.checkDecode(8, -1, a, 132, 2, nullptr, 0, &bytes) == 1);
  EXPECT(bytes == 0);
}

// The C++ wrapper's decode plans reach the C API, whose own NULL checks
// answer (decode_plan_test.cpp checks the launches of plans).
void testDecodePlanWrapper() {
  flashfuse_decode_args a = goodDecodeArgs();
  flashfuse::Kernel none(nullptr);
  EXPECT_ERROR(none.decodePlan(nullptr, a), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "decode kernel and arguments must not be NULL");
  EXPECT_ERROR(none.appendPlan(a), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "kv_append kernel and arguments must not be NULL");
  flashfuse::DecodePlan empty(nullptr); // destroying NULL is a no-op
  EXPECT_ERROR(empty.info(), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "the plan is NULL");
}

void testDecodeChecks() {
  flashfuse::Manifest m = decodeSample();
  auto expectBad = [&](int decode, int combine,
                       const std::function<void(flashfuse_decode_args &)> &edit,
                       const std::string &fragment, int line) {
    flashfuse_decode_args a = decode == 1 ? goodPagedArgs() : goodDecodeArgs();
    edit(a);
    expectError(
        [&] {
          m.checkDecode(decode, combine, a, 132, 2, fakePointer(0x80000000),
                        1 << 30);
        },
        FLASHFUSE_ERROR_INVALID_ARGUMENT, fragment, line);
  };
#define EXPECT_BAD_DECODE(edit, fragment)                                      \
  expectBad(0, 2, [](flashfuse_decode_args & a) { edit; }, fragment, __LINE__)
#define EXPECT_BAD_PAGED(edit, fragment)                                       \
  expectBad(1, 3, [](flashfuse_decode_args & a) { edit; }, fragment, __LINE__)
  EXPECT_BAD_DECODE(a.dtype = FLASHFUSE_DTYPE_BF16,
                    "inputs are bf16 but the kernel was compiled for f16");
  EXPECT_BAD_DECODE(a.head_dim = 64, "head dims D=64 Dv=128");
  EXPECT_BAD_DECODE(a.heads_kv = 5,
                    "heads_q = 32 is not a multiple of heads_kv = 5");
  EXPECT_BAD_DECODE(a.seq_q = 0, "seq_q = 0 (must be in [1, 2^31))");
  EXPECT_BAD_DECODE(a.seq_new = -1, "seq_new = -1");
  EXPECT_BAD_DECODE(a.seq_q = 4097,
                    "seq_q = 4097 query rows exceed the cache's capacity 4096");
  EXPECT_BAD_DECODE(a.seq_new = 5000,
                    "seq_new = 5000 new rows exceed the cache's capacity 4096");
  EXPECT_BAD_DECODE(a.cache_len = 0, "cache_len = 0");
  EXPECT_BAD_DECODE(a.q = nullptr, "'q' is a null pointer");
  EXPECT_BAD_DECODE(a.lse = nullptr, "'lse' is a null pointer");
  EXPECT_BAD_DECODE(a.cache_seqlens = nullptr,
                    "'cache_seqlens' is a null pointer");
  EXPECT_BAD_DECODE(
      a.cache_leftpad = static_cast<const int32_t *>(fakePointer(0x90000000)),
      "'cache_leftpad' was given, but the kernel was compiled without it");
  EXPECT_BAD_DECODE(
      a.alibi_slopes = static_cast<const float *>(fakePointer(0x90000000)),
      "'alibi_slopes' was given, but the kernel was compiled without ALiBi");
  // A kernel that reads an optional buffer (11: a left-padded cache's
  // first rows, 12: ALiBi's slopes) needs it, 16-byte aligned, and splits
  // as kernel 0 does.
  auto expectOptionalBuffer = [&](int kernel, const char *name,
                                  const char *missing,
                                  void (*set)(flashfuse_decode_args &,
                                              uintptr_t)) {
    expectBad(kernel, 2, [](flashfuse_decode_args &) {}, missing, __LINE__);
    expectBad(kernel, 2, [&](flashfuse_decode_args &a) { set(a, 0x90000004); },
              std::string("buffer '") + name +
                  "' at 0x90000004 is not 16-byte aligned",
              __LINE__);
    flashfuse_decode_args a = goodDecodeArgs();
    int plain = m.checkDecode(0, 2, a, 132, 2, fakePointer(0x80000000), 1 << 30);
    set(a, 0x90000000);
    EXPECT(m.checkDecode(kernel, 2, a, 132, 2, fakePointer(0x80000000),
                         1 << 30) == plain);
  };
  expectOptionalBuffer(
      11, "cache_leftpad",
      "the kernel reads a left-padded cache, and 'cache_leftpad' is a null "
      "pointer",
      [](flashfuse_decode_args &a, uintptr_t at) {
        a.cache_leftpad = static_cast<const int32_t *>(fakePointer(at));
      });
  expectOptionalBuffer(
      12, "alibi_slopes",
      "the kernel adds ALiBi, and 'alibi_slopes' is a null pointer",
      [](flashfuse_decode_args &a, uintptr_t at) {
        a.alibi_slopes = static_cast<const float *>(fakePointer(at));
      });
  // 13: kernel 0 over a pool of 5 sequences (cache_batch_idx, cache_batch).
  expectOptionalBuffer(
      13, "cache_batch_idx",
      "the kernel reads a pool of sequences, and 'cache_batch_idx' is a "
      "null pointer",
      [](flashfuse_decode_args &a, uintptr_t at) {
        a.cache_batch_idx = static_cast<const int32_t *>(fakePointer(at));
        a.cache_batch = 5;
      });
  expectBad(
      13, 2,
      [](flashfuse_decode_args &a) {
        a.cache_batch_idx =
            static_cast<const int32_t *>(fakePointer(0x90000000));
      },
      "cache_batch = 0 (the sequences the pool holds, must be in [1, 2^31))",
      __LINE__);
  EXPECT_BAD_DECODE(
      a.cache_batch_idx = static_cast<const int32_t *>(fakePointer(0x90000000)),
      "'cache_batch_idx' or cache_batch was given, but the kernel was "
      "compiled without a pool of sequences");
  EXPECT_BAD_DECODE(a.cache_batch = 5,
                    "'cache_batch_idx' or cache_batch was given");
  EXPECT_BAD_PAGED(
      a.cache_batch_idx = static_cast<const int32_t *>(fakePointer(0x90000000)),
      "'cache_batch_idx' or cache_batch was given");
  EXPECT_BAD_DECODE(
      a.cache_seqlens = static_cast<const int32_t *>(fakePointer(0x60000004)),
      "buffer 'cache_seqlens' at 0x60000004 is not 16-byte aligned");
  EXPECT_BAD_DECODE(a.k_stride[3] = 2,
                    "'k_cache' has stride 2 in its last dimension");
  EXPECT_BAD_DECODE(a.v_stride[2] = 1028,
                    "'v_cache' stride 1028 in dimension 2 is not a multiple "
                    "of 8");
  EXPECT_BAD_DECODE(a.o_stride[1] = -128, "'o' has a negative stride");
  EXPECT_BAD_DECODE(a.window_left = 16,
                    "a window (16, -1) was requested but the kernel has none");
  EXPECT_BAD_DECODE(a.softcap = 30.0f, "softcap was requested");
  EXPECT_BAD_DECODE(a.scale = 1.0f / 0.0f, "scale is not finite");
  EXPECT_BAD_DECODE(a.num_splits = -2, "num_splits = -2");
  EXPECT_BAD_DECODE(
      a.block_table = static_cast<const int32_t *>(fakePointer(0x70000000)),
      "a block_table was given for a contiguous cache");
  EXPECT_BAD_DECODE(a.page_size = 16,
                    "the arguments describe a paged cache with page_size 16 "
                    "but the kernel was compiled for a contiguous cache");
  EXPECT_BAD_PAGED(a.page_size = 64,
                   "a paged cache with page_size 64 but the kernel was "
                   "compiled for a paged cache with page_size 16");
  EXPECT_BAD_PAGED(a.block_table = nullptr,
                   "a paged cache needs a block_table");
  EXPECT_BAD_PAGED(a.num_pages = 0, "num_pages = 0");
  EXPECT_BAD_PAGED(a.max_pages = 0, "max_pages = 0");
  EXPECT_BAD_PAGED(a.block_table_stride = 299,
                   "block_table_stride = 299 is less than max_pages = 300");
  EXPECT_BAD_PAGED(a.seq_q = 4801,
                   "seq_q = 4801 query rows exceed the cache's capacity 4800");
  EXPECT_BAD_PAGED(a.softcap = -1.0f, "softcap = -1 (must be > 0)");
  EXPECT_BAD_PAGED(a.window_left = -3, "window sizes must be >= 0");
  EXPECT_BAD_PAGED(a.k_stride[2] = 65, "'k_cache' stride 65 in dimension 2");
#undef EXPECT_BAD_DECODE
#undef EXPECT_BAD_PAGED

  // The kernels must be a decode and a combine that agree with it.
  flashfuse_decode_args a = goodDecodeArgs();
  EXPECT_ERROR(m.checkDecode(2, 2, a, 132, 2), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "not a decode kernel");
  EXPECT_ERROR(m.checkDecode(0, 1, a, 132, 2), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "'flash_decode_bf16_d64_m64n64w4s3_window_softcap_page16' is "
               "not a decode_combine kernel");
  EXPECT_ERROR(m.checkDecode(0, 3, a, 132, 2), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "is for bf16 Dv=64 but the decode kernel is f16 Dv=128");
  EXPECT_ERROR(m.checkDecode(0, 16, a, 132, 2),
               FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "combine kernel index 16 out of range");
  EXPECT_ERROR(m.checkDecode(0, 4, a, 132, 2), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "'flash_kv_append_f16_d128_m4n0w4s0' is not a decode_combine "
               "kernel");
  EXPECT_ERROR(m.checkDecode(0, 2, a, 0, 2), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "sm_count = 0");
  // Splits need a combine kernel and a large enough, aligned workspace.
  a.num_splits = 2;
  EXPECT_ERROR(m.checkDecode(0, -1, a, 132, 2),
               FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "num_splits = 2 needs a decode_combine kernel");
  EXPECT_ERROR(m.checkDecode(0, 2, a, 132, 2),
               FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "2 splits need a workspace of 99072 bytes");
  EXPECT_ERROR(m.checkDecode(0, 2, a, 132, 2, fakePointer(0x80000000), 99071),
               FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "the workspace has 99071 bytes but 2 splits need 99072");
  EXPECT_ERROR(m.checkDecode(0, 2, a, 132, 2, fakePointer(0x80000008), 99072),
               FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "the workspace at 0x80000008 is not 16-byte aligned");
  EXPECT(m.checkDecode(0, 2, a, 132, 2, fakePointer(0x80000000), 99072) == 2);
}

// goodDecodeArgs / goodPagedArgs with this step's `rows` new rows in
// flash-attn's layout [B, Snew, Hkv, D] (seen through [b, h, t, d]).
flashfuse_decode_args withNewRows(flashfuse_decode_args a, int64_t rows) {
  a.seq_new = rows;
  a.k_new = fakePointer(0x90000000);
  a.v_new = fakePointer(0xa0000000);
  int64_t d = a.head_dim;
  const int64_t s[4] = {rows * a.heads_kv * d, d, a.heads_kv * d, 1};
  for (int i = 0; i < 4; ++i)
    a.k_new_stride[i] = a.v_new_stride[i] = s[i];
  return a;
}

void testKVAppendChecks() {
  flashfuse::Manifest m = decodeSample();
  // Kernels 4 (contiguous, f16 D = 128) and 5 (paged 16, bf16 D = 64).
  m.checkAppend(4, withNewRows(goodDecodeArgs(), 1));
  m.checkAppend(4, withNewRows(goodDecodeArgs(), 4));
  m.checkAppend(5, withNewRows(goodPagedArgs(), 3));
  // No new rows: nothing to check of k_new/v_new (nothing is launched).
  flashfuse_decode_args none = goodDecodeArgs();
  m.checkAppend(4, none);
  // flashfuse_decode_args_init leaves the new rows off.
  flashfuse_decode_args init;
  flashfuse_decode_args_init(&init);
  EXPECT(init.k_new == nullptr && init.v_new == nullptr);
  EXPECT(init.k_new_stride[0] == 0 && init.v_new_stride[3] == 0);
  auto expectBad = [&](int index,
                       const std::function<void(flashfuse_decode_args &)> &edit,
                       const std::string &fragment, int line) {
    flashfuse_decode_args a = withNewRows(
        index == 5 ? goodPagedArgs() : goodDecodeArgs(), 2);
    edit(a);
    expectError([&] { m.checkAppend(index, a); },
                FLASHFUSE_ERROR_INVALID_ARGUMENT, fragment, line);
  };
#define EXPECT_BAD_APPEND(index, edit, fragment)                               \
  expectBad(index, [](flashfuse_decode_args & a) { edit; }, fragment, __LINE__)
  EXPECT_BAD_APPEND(4, a.k_new = nullptr, "'k_new' is a null pointer");
  EXPECT_BAD_APPEND(4, a.v_new = nullptr, "'v_new' is a null pointer");
  EXPECT_BAD_APPEND(4, a.k_new_stride[3] = 2,
                    "'k_new' has stride 2 in its last dimension");
  EXPECT_BAD_APPEND(4, a.v_new_stride[2] = 12,
                    "'v_new' stride 12 in dimension 2 is not a multiple of 8");
  EXPECT_BAD_APPEND(4, a.k_new_stride[0] = -8, "'k_new' has a negative stride");
  EXPECT_BAD_APPEND(
      4, a.k_new = fakePointer(0x90000008),
      "buffer 'k_new' at 0x90000008 is not 16-byte aligned");
  EXPECT_BAD_APPEND(4, a.seq_new = 4097,
                    "seq_new = 4097 new rows exceed the cache's capacity 4096");
  EXPECT_BAD_APPEND(4, a.seq_new = -1, "seq_new = -1");
  EXPECT_BAD_APPEND(4, a.batch = 0, "batch = 0");
  EXPECT_BAD_APPEND(4, a.heads_kv = 0, "heads_kv = 0");
  EXPECT_BAD_APPEND(4, a.cache_seqlens = nullptr,
                    "'cache_seqlens' is a null pointer");
  EXPECT_BAD_APPEND(4, a.dtype = FLASHFUSE_DTYPE_BF16,
                    "inputs are bf16 but the kernel was compiled for f16");
  EXPECT_BAD_APPEND(4, a.head_dim_v = 64, "head dims D=128 Dv=64");
  EXPECT_BAD_APPEND(4, a.k_stride[2] = 100,
                    "'k_cache' stride 100 in dimension 2");
  EXPECT_BAD_APPEND(4, a.page_size = 16,
                    "the arguments describe a paged cache with page_size 16 "
                    "but the kernel was compiled for a contiguous cache");
  EXPECT_BAD_APPEND(5, a.block_table = nullptr,
                    "a paged cache needs a block_table");
  EXPECT_BAD_APPEND(5, a.seq_new = 4801,
                    "seq_new = 4801 new rows exceed the cache's capacity 4800");
  EXPECT_BAD_APPEND(0, (void)a, "kv append with kernel "
                                "'flash_decode_f16_d128_m64n64w4s3_causal': not "
                                "a kv_append kernel");
  // Kernel 14 (4 over a pool of sequences) takes the pool's indices and
  // size; no other append does.
  EXPECT_BAD_APPEND(14, (void)a,
                    "the kernel reads a pool of sequences, and "
                    "'cache_batch_idx' is a null pointer");
  EXPECT_BAD_APPEND(4, a.cache_batch = 2,
                    "'cache_batch_idx' or cache_batch was given");
  flashfuse_decode_args pooled = withNewRows(goodDecodeArgs(), 2);
  pooled.cache_batch_idx =
      static_cast<const int32_t *>(fakePointer(0xe0000000));
  pooled.cache_batch = 7;
  m.checkAppend(14, pooled);
  pooled.cache_batch_idx =
      static_cast<const int32_t *>(fakePointer(0xe0000004));
  EXPECT_ERROR(m.checkAppend(14, pooled), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "buffer 'cache_batch_idx' at 0xe0000004 is not 16-byte "
               "aligned");
#undef EXPECT_BAD_APPEND
  EXPECT_ERROR(m.checkAppend(16, goodDecodeArgs()),
               FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "kernel index 16 out of range [0, 16)");
}

void testDeviceCheckChecks() {
  flashfuse::Manifest m = decodeSample();
  const int32_t *status =
      static_cast<const int32_t *>(fakePointer(0xb0000000));
  m.checkDeviceCheck(6, goodDecodeArgs(), status);
  m.checkDeviceCheck(7, withNewRows(goodPagedArgs(), 2), status);
  EXPECT_ERROR(m.checkDeviceCheck(6, goodDecodeArgs(), nullptr),
               FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "the status buffer is a null pointer");
  EXPECT_ERROR(
      m.checkDeviceCheck(6, goodDecodeArgs(),
                         static_cast<const int32_t *>(fakePointer(0xb0000004))),
      FLASHFUSE_ERROR_INVALID_ARGUMENT,
      "buffer 'check_status' at 0xb0000004 is not 16-byte aligned");
  EXPECT_ERROR(m.checkDeviceCheck(0, goodDecodeArgs(), status),
               FLASHFUSE_ERROR_INVALID_ARGUMENT, "not a decode_check kernel");
  EXPECT_ERROR(m.checkDeviceCheck(7, goodDecodeArgs(), status),
               FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "KV cache check with kernel "
               "'flash_decode_check_bf16_d64_m256n0w8s0_page16': the arguments "
               "describe a contiguous cache");
  flashfuse_decode_args paged = goodPagedArgs();
  paged.num_pages = 0;
  EXPECT_ERROR(m.checkDeviceCheck(7, paged, status),
               FLASHFUSE_ERROR_INVALID_ARGUMENT, "num_pages = 0");
  flashfuse_decode_args noLengths = goodDecodeArgs();
  noLengths.cache_seqlens = nullptr;
  EXPECT_ERROR(m.checkDeviceCheck(6, noLengths, status),
               FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "'cache_seqlens' is a null pointer");
  // Kernel 15 checks a pool's indices as well.
  flashfuse_decode_args pooled = goodDecodeArgs();
  EXPECT_ERROR(m.checkDeviceCheck(15, pooled, status),
               FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "'cache_batch_idx' is a null pointer");
  pooled.cache_batch_idx =
      static_cast<const int32_t *>(fakePointer(0xe0000000));
  pooled.cache_batch = 2;
  m.checkDeviceCheck(15, pooled, status);
  EXPECT_ERROR(m.checkDeviceCheck(6, pooled, status),
               FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "'cache_batch_idx' or cache_batch was given");
}

void testDeviceCheckVerdicts() {
  // What flashfuse_decode_check_on_device reports for each status the
  // decode_check kernel writes (KERNEL_ABI.md "Decode").
  flashfuse_decode_args a = withNewRows(goodDecodeArgs(), 1);
  auto verdict = [&](std::initializer_list<int32_t> fields,
                     const flashfuse_decode_args &args) {
    std::vector<int32_t> status(fields);
    flashfuse::check(flashfuse_decode_check_status(status.data(), &args));
  };
  verdict({0, 0, 0, 0}, a);
  EXPECT_ERROR(verdict({1, 3, -2, 0}, a), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "KV cache check on the device: cache_seqlens[3] = -2 is "
               "negative");
  EXPECT_ERROR(verdict({2, 3, 5000, 0}, a), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "cache_seqlens[3] = 5000 plus 1 new rows exceeds the cache "
               "capacity 4096");
  flashfuse_decode_args p = goodPagedArgs();
  EXPECT_ERROR(verdict({2, 0, 4800, 0}, p), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "cache_seqlens[0] = 4800 plus 0 new rows exceeds the cache "
               "capacity 4800");
  EXPECT_ERROR(verdict({3, 1, 9000, 7}, p), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "block_table[1][7] = 9000 is outside [0, 700) (page 7 holds "
               "rows [112, 128) of sequence 1)");
  EXPECT_ERROR(verdict({3, 2, -1, 0}, p), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "block_table[2][0] = -1 is outside [0, 700)");
  flashfuse_decode_args pooled = a;
  pooled.cache_batch = 8;
  EXPECT_ERROR(verdict({4, 2, 9, 0}, pooled), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "KV cache check on the device: cache_batch_idx[2] = 9 is "
               "outside the pool [0, 8)");
  EXPECT_ERROR(verdict({5, 3, 6, 1}, pooled), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "cache_batch_idx[3] = 6 is also cache_batch_idx[1]: sequences "
               "1 and 3 would both append their 1 new rows to pool row 6");
  EXPECT_ERROR(verdict({9, 0, 0, 0}, a), FLASHFUSE_ERROR_INTERNAL,
               "status code 9");
  EXPECT(flashfuse_decode_check_status(nullptr, &a) ==
         FLASHFUSE_ERROR_INVALID_ARGUMENT);
}

void testDecodeParamsMismatch() {
  // A decode kernel listing a param this runtime does not provide fails at
  // the check, before any launch.
  std::string text = std::string(kHeader) + "kernel a\n" + kKernelBody;
  text.replace(text.find("kind forward"), 12, "kind decode");
  text.replace(text.find("params memref:q"), 15,
               "params memref:q memref:cache_seqlens i32:seq_new "
               "i32:num_splits memref:page_index");
  text += "end\n";
  flashfuse::Manifest m = flashfuse::Manifest::fromText(text);
  flashfuse_decode_args a = goodDecodeArgs();
  a.head_dim = a.head_dim_v = 64;
  EXPECT_ERROR(m.checkDecode(0, -1, a, 132, 2), FLASHFUSE_ERROR_INVALID_ARGUMENT,
               "the kernel takes 'memref:page_index' but no argument of that "
               "name was given");
}

void testNoDriver() {
  // FLASHFUSE_CUDA_DRIVER points at a missing file (set in main), so this is
  // the path of every machine without an NVIDIA driver.
  for (int attempt = 0; attempt < 2; ++attempt)
    EXPECT_ERROR(flashfuse::Context(), FLASHFUSE_ERROR_NO_DRIVER,
                 "no CUDA driver: could not load");
  flashfuse_context *c = nullptr;
  EXPECT(flashfuse_context_create(0, &c) == FLASHFUSE_ERROR_NO_DRIVER);
  EXPECT(c == nullptr);
  EXPECT(contains(flashfuse_last_error(), "no CUDA driver"));
  // A later successful call clears the message.
  flashfuse::Manifest m = sample();
  EXPECT(std::string(flashfuse_last_error()).empty());
}

void testNullArguments() {
  EXPECT(flashfuse_manifest_open(nullptr, nullptr) ==
         FLASHFUSE_ERROR_INVALID_ARGUMENT);
  EXPECT(flashfuse_attention_forward(nullptr, nullptr, nullptr) ==
         FLASHFUSE_ERROR_INVALID_ARGUMENT);
  EXPECT(flashfuse_kernel_launch(nullptr, nullptr, 0, 0, nullptr) ==
         FLASHFUSE_ERROR_INVALID_ARGUMENT);
  EXPECT(flashfuse_attention_decode(nullptr, nullptr, nullptr, nullptr, 0,
                                    nullptr) == FLASHFUSE_ERROR_INVALID_ARGUMENT);
  EXPECT(flashfuse_decode_workspace_bytes(nullptr, nullptr, nullptr, nullptr,
                                          nullptr) ==
         FLASHFUSE_ERROR_INVALID_ARGUMENT);
  EXPECT(flashfuse_attention_decode_check(nullptr, 0, -1, nullptr, 1, 1,
                                          nullptr, 0, nullptr, nullptr) ==
         FLASHFUSE_ERROR_INVALID_ARGUMENT);
  EXPECT(flashfuse_kvcache_append(nullptr, nullptr, nullptr) ==
         FLASHFUSE_ERROR_INVALID_ARGUMENT);
  EXPECT(flashfuse_kvcache_append_check(nullptr, 0, nullptr) ==
         FLASHFUSE_ERROR_INVALID_ARGUMENT);
  EXPECT(flashfuse_decode_check_on_device(nullptr, nullptr, nullptr,
                                          nullptr) ==
         FLASHFUSE_ERROR_INVALID_ARGUMENT);
  EXPECT(flashfuse_decode_check_on_device_check(nullptr, 0, nullptr,
                                                nullptr) ==
         FLASHFUSE_ERROR_INVALID_ARGUMENT);
  flashfuse_manifest_close(nullptr);
  flashfuse_context_destroy(nullptr);
  EXPECT(std::string(flashfuse_status_name(FLASHFUSE_ERROR_CUDA)) ==
         "FLASHFUSE_ERROR_CUDA");
}

} // namespace

// ---- decode over an FP8 (e4m3) cache -------------------------------------

flashfuse::Manifest decodeFp8Sample() {
  return flashfuse::Manifest(dataDir + "/decode-fp8");
}

void testDecodeFp8Manifest() {
  flashfuse::Manifest m = decodeFp8Sample();
  std::vector<flashfuse_kernel_info> k = m.kernels();
  EXPECT(k.size() == 5);
  EXPECT(k[0].variant.kv_dtype == FLASHFUSE_DTYPE_E4M3);
  EXPECT(k[3].variant.kind == FLASHFUSE_KIND_KV_APPEND &&
         k[3].variant.kv_dtype == FLASHFUSE_DTYPE_E4M3);
  EXPECT(k[4].variant.kind == FLASHFUSE_KIND_KV_APPEND &&
         k[4].variant.kv_dtype == 0);
  EXPECT(k[1].variant.kv_dtype == FLASHFUSE_DTYPE_E4M3);
  EXPECT(k[1].variant.page_size == 16);
  EXPECT(k[2].variant.kv_dtype == 0); // absent: a cache of `dtype`
  for (const flashfuse_kernel_info &d : decodeSampleKernels())
    EXPECT(d.variant.kv_dtype == 0);
  // Lookup tells the cache's dtype apart: kernels 0 and 2 differ by it only
  // (and their names).
  flashfuse_variant v = decodeVariant(FLASHFUSE_KIND_DECODE,
                                      FLASHFUSE_DTYPE_BF16, 128,
                                      FLASHFUSE_CAUSAL_BOTTOM_RIGHT, 0);
  EXPECT(m.find(v) == 2);
  v.kv_dtype = FLASHFUSE_DTYPE_E4M3;
  EXPECT(m.find(v) == 0);
  flashfuse_variant paged = decodeVariant(
      FLASHFUSE_KIND_DECODE, FLASHFUSE_DTYPE_F16, 64, FLASHFUSE_CAUSAL_NONE, 16);
  EXPECT_ERROR(m.find(paged), FLASHFUSE_ERROR_NOT_FOUND,
               "no kernel for variant 'decode f16 D=64 Dv=64 causal=none "
               "page_size=16'");
  paged.kv_dtype = FLASHFUSE_DTYPE_E4M3;
  EXPECT(m.find(paged) == 1);
  paged.kv_dtype = FLASHFUSE_DTYPE_BF16; // 0 (the cache has dtype) or e4m3
  EXPECT_ERROR(m.find(paged), FLASHFUSE_ERROR_INVALID_ARGUMENT, "kv_dtype");
  // So are the appends: kernel 3 quantises into an e4m3 cache, 4 copies.
  flashfuse_variant append = decodeVariant(
      FLASHFUSE_KIND_KV_APPEND, FLASHFUSE_DTYPE_BF16, 128,
      FLASHFUSE_CAUSAL_NONE, 0);
  EXPECT(m.find(append) == 4);
  append.kv_dtype = FLASHFUSE_DTYPE_E4M3;
  EXPECT(m.find(append) == 3);
  // A decode kernel of a 16-bit cache takes no descales.
  std::string text = std::string(kHeader) + "kernel a\n" + kKernelBody;
  text.replace(text.find("forward"), 7, "decode");
  text.replace(text.find("memref:q"), 8, "memref:q memref:k_descale");
  EXPECT_ERROR(flashfuse::Manifest::fromText(text + "end\n"),
               FLASHFUSE_ERROR_MANIFEST,
               "'k_descale'/'v_descale' are for kv_dtype e4m3 only");
  EXPECT(flashfuse::Manifest::fromText(
             text.replace(text.find("memref:k_descale"), 16,
                          "memref:k_descale memref:v_descale") +
             "  kv_dtype e4m3\nend\n")
             .kernels()
             .at(0)
             .variant.kv_dtype == FLASHFUSE_DTYPE_E4M3);
}

// Kernel 0 of decode-fp8 (bf16 queries, e4m3 cache, D = 128): B = 3, GQA
// 32/8, a contiguous cache of 4096 rows in flash-attn's layout [B, C, Hkv,
// D] (strides in bytes = elements), descales [B, Hkv].
flashfuse_decode_args goodFp8Args() {
  flashfuse_decode_args a = goodDecodeArgs();
  a.dtype = FLASHFUSE_DTYPE_BF16;
  a.kv_dtype = FLASHFUSE_DTYPE_E4M3;
  a.k_descale = static_cast<const float *>(fakePointer(0x90000000));
  a.v_descale = static_cast<const float *>(fakePointer(0x90001000));
  a.k_descale_stride[0] = a.v_descale_stride[0] = 8;
  a.k_descale_stride[1] = a.v_descale_stride[1] = 1;
  return a;
}

void testDecodeFp8Checks() {
  flashfuse::Manifest m = decodeFp8Sample();
  flashfuse_decode_args a = goodFp8Args();
  // Binds by name (the dry run of checkDecode fails on a param it cannot
  // provide): contiguous, per-tensor descales, and paged.
  EXPECT(m.checkDecode(0, -1, a, 132, 2, fakePointer(0x80000000), 1 << 30) >=
         1);
  a.num_splits = 1;
  EXPECT(m.checkDecode(0, -1, a, 132, 2, nullptr, 0) == 1);
  a.num_splits = 3;
  EXPECT(m.checkDecode(0, -1, a, 132, 2, fakePointer(0x80000000), 1 << 30) ==
         3);
  a = goodFp8Args();
  a.k_descale_stride[0] = a.k_descale_stride[1] = 0;
  a.v_descale_stride[0] = a.v_descale_stride[1] = 0;
  m.checkDecode(0, -1, a, 132, 2, fakePointer(0x80000000), 1 << 30);
  flashfuse_decode_args paged = goodPagedArgs();
  paged.dtype = FLASHFUSE_DTYPE_F16;
  paged.window_left = paged.window_right = -1;
  paged.softcap = 0;
  paged.kv_dtype = FLASHFUSE_DTYPE_E4M3;
  paged.k_descale = a.k_descale;
  paged.v_descale = a.v_descale;
  m.checkDecode(1, -1, paged, 132, 2, fakePointer(0x80000000), 1 << 30);
  // A 16-bit cache through the 16-bit kernel of the same variant.
  flashfuse_decode_args plain = goodDecodeArgs();
  plain.dtype = FLASHFUSE_DTYPE_BF16;
  m.checkDecode(2, -1, plain, 132, 2, fakePointer(0x80000000), 1 << 30);
  auto expectBad = [&](int index,
                       const std::function<void(flashfuse_decode_args &)> &edit,
                       const std::string &fragment, int line) {
    flashfuse_decode_args b = index == 2 ? plain : goodFp8Args();
    edit(b);
    expectError(
        [&] {
          m.checkDecode(index, -1, b, 132, 2, fakePointer(0x80000000),
                        1 << 30);
        },
        FLASHFUSE_ERROR_INVALID_ARGUMENT, fragment, line);
  };
#define EXPECT_BAD_FP8(index, edit, fragment)                                  \
  expectBad(index, [](flashfuse_decode_args & a) { edit; }, fragment, __LINE__)
  // Cache dtype against the kernel's, descales iff e4m3.
  EXPECT_BAD_FP8(0, a.kv_dtype = FLASHFUSE_DTYPE_F16,
                 "the arguments describe a bf16 cache but the kernel was "
                 "compiled for an e4m3 (FP8) cache");
  EXPECT_BAD_FP8(2, a.kv_dtype = FLASHFUSE_DTYPE_E4M3,
                 "the arguments describe an e4m3 (FP8) cache but the kernel "
                 "was compiled for a bf16 cache");
  EXPECT_BAD_FP8(0, a.k_descale = nullptr,
                 "an FP8 cache needs k_descale and v_descale, and "
                 "'k_descale' is a null pointer");
  EXPECT_BAD_FP8(0, a.v_descale = nullptr, "'v_descale' is a null pointer");
  EXPECT_BAD_FP8(2, a.k_descale = static_cast<const float *>(
                        fakePointer(0x90000000)),
                 "k_descale/v_descale were given for a 16-bit cache");
  EXPECT_BAD_FP8(0, a.kv_dtype = static_cast<flashfuse_dtype>(7),
                 "kv_dtype = 7");
  // One byte an element: strides in multiples of 16 of them.
  EXPECT_BAD_FP8(0, a.k_stride[2] = 8 * 128 + 8,
                 "'k_cache' stride 1032 in dimension 2 is not a multiple of "
                 "16 elements (16 bytes)");
  EXPECT_BAD_FP8(0, a.v_stride[1] = 136,
                 "'v_cache' stride 136 in dimension 1 is not a multiple of "
                 "16");
  EXPECT_BAD_FP8(0, a.v_stride[3] = 2,
                 "'v_cache' has stride 2 in its last dimension");
  // ... and 16-byte aligned caches.
  EXPECT_BAD_FP8(0, a.k_cache = fakePointer(0x20000008),
                 "the FP8 cache 'k_cache' at 0x20000008 is not 16-byte "
                 "aligned");
  EXPECT_BAD_FP8(0, a.v_cache = fakePointer(0x30000001),
                 "the FP8 cache 'v_cache' at 0x30000001 is not 16-byte "
                 "aligned");
  EXPECT_BAD_FP8(0, a.k_descale_stride[1] = -1,
                 "'k_descale' has a negative stride");
  EXPECT_BAD_FP8(0, a.v_descale = static_cast<const float *>(
                        fakePointer(0x90000002)),
                 "'v_descale' is not 4-byte aligned");
  // The 16-bit checks are unchanged for the FP8 kernel.
  EXPECT_BAD_FP8(0, a.dtype = FLASHFUSE_DTYPE_F16,
                 "inputs are f16 but the kernel was compiled for bf16");
  EXPECT_BAD_FP8(0, a.q_stride[1] = 12, "'q' stride 12 in dimension 1");
#undef EXPECT_BAD_FP8
  // kv_append into an FP8 cache (kernel 3): binds the descales by name
  // (the dry run fails on a param it cannot provide), per head and per
  // tensor; the decode's dtype and descale checks apply.
  m.checkAppend(3, withNewRows(goodFp8Args(), 1));
  flashfuse_decode_args perTensor = withNewRows(goodFp8Args(), 4);
  perTensor.k_descale_stride[0] = perTensor.k_descale_stride[1] = 0;
  perTensor.v_descale_stride[0] = perTensor.v_descale_stride[1] = 0;
  m.checkAppend(3, perTensor);
  auto expectBadAppend =
      [&](int index, const std::function<void(flashfuse_decode_args &)> &edit,
          const std::string &fragment, int line) {
        flashfuse_decode_args b = withNewRows(goodFp8Args(), 2);
        if (index == 4) { // the 16-bit append
          b.kv_dtype = static_cast<flashfuse_dtype>(0);
          b.k_descale = b.v_descale = nullptr;
        }
        edit(b);
        expectError([&] { m.checkAppend(index, b); },
                    FLASHFUSE_ERROR_INVALID_ARGUMENT, fragment, line);
      };
#define EXPECT_BAD_APPEND(index, edit, fragment)                               \
  expectBadAppend(index, [](flashfuse_decode_args & a) { edit; }, fragment,    \
                  __LINE__)
  EXPECT_BAD_APPEND(3, a.kv_dtype = static_cast<flashfuse_dtype>(0),
                    "the arguments describe a bf16 cache but the kernel was "
                    "compiled for an e4m3 (FP8) cache");
  EXPECT_BAD_APPEND(4, a.kv_dtype = FLASHFUSE_DTYPE_E4M3,
                    "the arguments describe an e4m3 (FP8) cache but the "
                    "kernel was compiled for a bf16 cache");
  EXPECT_BAD_APPEND(3, a.v_descale = nullptr,
                    "an FP8 cache needs k_descale and v_descale, and "
                    "'v_descale' is a null pointer");
  EXPECT_BAD_APPEND(3, a.k_descale_stride[0] = -8,
                    "'k_descale' has a negative stride");
  EXPECT_BAD_APPEND(3, a.k_cache = fakePointer(0x20000008),
                    "the FP8 cache 'k_cache' at 0x20000008 is not 16-byte "
                    "aligned");
  EXPECT_BAD_APPEND(3, a.k_stride[2] = 8 * 128 + 8,
                    "'k_cache' stride 1032 in dimension 2 is not a multiple "
                    "of 16 elements (16 bytes)");
  EXPECT_BAD_APPEND(3, a.dtype = FLASHFUSE_DTYPE_F16,
                    "inputs are f16 but the kernel was compiled for bf16");
#undef EXPECT_BAD_APPEND
  // flashfuse_decode_args_init leaves the cache 16-bit.
  flashfuse_decode_args init;
  flashfuse_decode_args_init(&init);
  EXPECT(init.kv_dtype == 0 && !init.k_descale && !init.v_descale);
}

int main(int argc, char **argv) {
  static const flashfuse_test::Test tests[] = {{"parse_sample", testParseSample},
               {"find_variant", testFindVariant},
               {"malformed_manifests", testMalformedManifests},
               {"backward_kinds", testBackwardKinds},
               {"forward_checks", testForwardChecks},
               {"tensor_map_params", testTensorMapParams},
               {"out_f32", testOutF32},
               {"unknown_param_in_manifest", testUnknownParamInManifest},
               {"varlen_manifest", testVarlenManifest},
               {"block_sparse_manifest", testBlockSparseManifest},
               {"varlen_forward_checks", testVarlenForwardChecks},
               {"varlen_backward_checks", testVarlenBackwardChecks},
               {"decode_manifest", testDecodeManifest},
               {"decode_manifest_strictness", testDecodeManifestStrictness},
               {"decode_splits_and_workspace", testDecodeSplitsAndWorkspace},
               {"decode_in_kernel_merge", testDecodeInKernelMerge},
               {"decode_checks", testDecodeChecks},
               {"decode_plan_wrapper", testDecodePlanWrapper},
               {"kv_append_checks", testKVAppendChecks},
               {"decode_fp8_manifest", testDecodeFp8Manifest},
               {"decode_fp8_checks", testDecodeFp8Checks},
               {"device_check_checks", testDeviceCheckChecks},
               {"device_check_verdicts", testDeviceCheckVerdicts},
               {"decode_params_mismatch", testDecodeParamsMismatch},
               {"no_driver", testNoDriver},
               {"null_arguments", testNullArguments}};
  return flashfuse_test::runTests(argc, argv, tests);
}
