// manifest.txt of a kernel artifact (docs/KERNEL_ABI.md), parsed into plain
// data. Needs no GPU, so it is unit-tested on any machine.
#ifndef FLASHFUSE_RUNTIME_MANIFEST_H
#define FLASHFUSE_RUNTIME_MANIFEST_H

#include "flashfuse/runtime.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace flashfuse {

struct ParamSpec {
  flashfuse_param_type type;
  std::string name;
};

// A `bound` line (KERNEL_ABI.md "Block-sparse"): a param whose value the
// artifact carries, an i32 buffer in one of its files or a scalar.
struct BoundParam {
  std::string name;
  bool buffer = false;
  long long value = 0; // scalar
  std::string file;    // buffer: file name in the artifact directory,
  long long offset = 0; // byte offset (a multiple of 16),
  long long count = 0;  // i32 elements,
  uint32_t crc32 = 0;   // and the CRC-32 of those bytes
};

// A `bound_for` entry: an i32 param whose launch value the bound values
// hold for.
struct BoundSize {
  std::string name;
  long long value = 0;
};

// A `captures` entry (KERNEL_ABI.md "Values captured by score_mod and
// mask_mod"): the type of a value a kernel's score_mod / mask_mod reads
// from above its op, param capture<i>: an element type of the IR (i1, i8,
// i16, i32, i64, index, f16, bf16, f32) and, for a tensor, its rank.
struct CaptureSpec {
  std::string element;
  int rank = -1; // -1: a scalar
};

struct KernelSpec {
  std::string name;
  flashfuse_variant variant{};
  int block_m = 0;
  int block_n = 0;
  int threads = 0;
  // An e4m3 forward's `vt_key_group`: the group of keys its Vt is permuted
  // within (fp8_vt_layout.h); 0 for every other kernel.
  int vt_key_group = 0;
  int smem = 0;
  // `grid persistent`: about one block per SM walks the tiles (launch.cpp).
  bool persistent = false;
  // A decode's `cluster_merge N` (sm_90 and later): the most splits it can
  // merge inside a thread-block cluster, launched as clusters of num_splits
  // blocks with merge_splits 2 and no workspace (KERNEL_ABI.md "Decode");
  // 0 (absent): it cannot.
  int clusterMerge = 0;
  // `mods 1`: the kernel inlines its op's score_mod / mask_mod, which no
  // variant says: launched by name only, never found for a variant.
  bool mods = false;
  // A kv_append's `rotary_dim N` (and `rotary_interleaved`,
  // `rotary_per_row`): it rotates the new keys and the query into q_rot
  // (docs/KVCACHE.md "Rotary"). Launched by the compiled host code of
  // flash-lower-to-gpu, by name; never found for a variant, and refused by
  // flashfuse_kvcache_append, which has no rotary operands. 0: none.
  int rotaryDim = 0;
  int rotaryInterleaved = 0;
  int rotaryPerRow = 0;
  std::vector<ParamSpec> params;
  std::vector<CaptureSpec> captures;
  std::vector<BoundParam> bound;
  std::vector<BoundSize> boundFor;
};

struct Manifest {
  std::string dir;   // artifact directory; ptx/cubin names are relative to it
  int arch = 0;      // e.g. 90 for sm_90
  std::string ptx;   // file name, empty if absent
  std::string cubin; // file name, empty if absent
  std::vector<KernelSpec> kernels;
  // The list files `bound` lines name, by file name: their bytes, read and
  // checked by readManifest (bound_lists.h), uploaded by artifact loads.
  std::map<std::string, std::string> listFiles;
};

// Parses manifest text. `source` names it in messages ("DIR/manifest.txt").
// On failure records "SOURCE:LINE: what is wrong" and returns
// FLASHFUSE_ERROR_MANIFEST.
flashfuse_status parseManifest(const std::string &text,
                               const std::string &source, Manifest &out);

// Reads and parses DIR/manifest.txt.
flashfuse_status readManifest(const std::string &dir, Manifest &out);

// Index of the kernel with exactly this variant, or -1.
int findKernel(const Manifest &manifest, const flashfuse_variant &variant);
int findKernel(const Manifest &manifest, const std::string &name);

// Human-readable variant, e.g. "forward bf16 D=128 Dv=128 causal=top_left".
std::string describeVariant(const flashfuse_variant &variant);

const char *dtypeName(flashfuse_dtype dtype);

// Bytes per element of Q/K/V (and of O unless out_f32 or e4m3): 1 for
// e4m3, 2 for f16 and bf16.
int dtypeBytes(flashfuse_dtype dtype);

// The dtype the kernel of `v` writes O in: f32 with out_f32, out_dtype for
// e4m3, else dtype.
const char *outDtypeName(const flashfuse_variant &v);

} // namespace flashfuse

#endif // FLASHFUSE_RUNTIME_MANIFEST_H
