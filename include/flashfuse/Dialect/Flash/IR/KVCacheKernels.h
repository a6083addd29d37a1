//===- KVCacheKernels.h - what the decode kernels do not serve --*- C++ -*-===//
//
// flash-select-config (which picks the decode recipe) and flash-lower-to-gpu
// (which builds it, also for a config written by hand) refuse the same
// flash.attention_kvcache forms with the same words.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_DIALECT_FLASH_IR_KVCACHEKERNELS_H
#define FLASHFUSE_DIALECT_FLASH_IR_KVCACHEKERNELS_H

#include <cstdint>
#include <string>

namespace mlir::flash {

/// An f8E4M3FN cache without flash-lower-to-gpu's experimental-fp8-kvcache:
/// the kernel is built only on request until new rows can be appended to
/// such a cache on the GPU (docs/KVCACHE.md "FP8 cache").
inline constexpr const char *kFp8CacheKernelExperimental =
    "the GPU decode kernel of an f8E4M3FN KV cache is experimental (checked "
    "on a GPU, but no kernel quantises new rows into the cache yet): pass "
    "experimental-fp8-kvcache=true to flash-lower-to-gpu "
    "(flashfuse-compile --experimental-fp8-kvcache) to build it, or use the "
    "CPU lowerings flash-lower-naive and flash-lower-to-loops "
    "(docs/KVCACHE.md)";

/// An f8E4M3FN cache on a chip without e4m3 conversions: the decode kernel
/// converts the codes with cvt.rn.f16x2.e4m3x2 (sm_89+). docs/KVCACHE.md
/// "FP8 cache" says why the sm_80 bit trick is not used.
inline constexpr const char *kFp8CacheNeedsSm89 =
    "no GPU kernel for an f8E4M3FN KV cache on this target: the decode "
    "kernel converts e4m3 with cvt.rn.f16x2.e4m3x2, which needs sm_89 or "
    "later (the CPU lowerings flash-lower-naive and flash-lower-to-loops "
    "serve the FP8 cache on any target; docs/KVCACHE.md)";

/// What the FP8-cache decode kernel does not serve yet, "" where it does
/// (an sm_89+ target assumed; kFp8CacheNeedsSm89 otherwise):
///   - D and Dv multiples of 32 from 64 to 256: the K/V tiles are the
///     128-byte-swizzled ones, and one ldmatrix.x4 of a tile reads 16
///     16-bit units (32 codes) of a row;
///   - no new rows: the kv_append kernel does not quantise into an FP8
///     cache yet.
inline std::string fp8CacheKernelGap(int64_t d, int64_t dv, bool appends) {
  auto served = [](int64_t x) { return x >= 64 && x <= 256 && x % 32 == 0; };
  if (!served(d) || !served(dv))
    return "no GPU kernel for an f8E4M3FN KV cache at D = " +
           std::to_string(d) + ", Dv = " + std::to_string(dv) +
           ": the FP8-cache decode kernel serves D and Dv multiples of 32 "
           "from 64 to 256 (the CPU lowerings serve the others; "
           "docs/KVCACHE.md)";
  if (appends)
    return "no GPU kernel appends new_kv rows to an f8E4M3FN KV cache yet: "
           "kv_append copies 16-bit rows and does not quantise them (the CPU "
           "lowerings serve it; docs/KVCACHE.md)";
  return "";
}

} // namespace mlir::flash

#endif // FLASHFUSE_DIALECT_FLASH_IR_KVCACHEKERNELS_H
