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

/// An f8E4M3FN cache on a chip without e4m3 conversions: the decode kernel
/// converts the codes with cvt.rn.f16x2.e4m3x2, kv_append quantises new
/// rows with cvt.rn.satfinite.e4m3x2.f32 (both sm_89+). docs/KVCACHE.md
/// "FP8 cache" says why the sm_80 bit trick is not used.
inline constexpr const char *kFp8CacheNeedsSm89 =
    "no GPU kernel for an f8E4M3FN KV cache on this target: the decode "
    "kernel converts e4m3 with cvt.rn.f16x2.e4m3x2 and kv_append with "
    "cvt.rn.satfinite.e4m3x2.f32, which need sm_89 or later (the CPU "
    "lowerings flash-lower-naive and flash-lower-to-loops serve the FP8 "
    "cache on any target; docs/KVCACHE.md)";

/// What the FP8-cache kernels do not serve, "" where they do (an sm_89+
/// target assumed; kFp8CacheNeedsSm89 otherwise): D and Dv multiples of
/// 32 from 64 to 256, because the decode's K/V tiles are the
/// 128-byte-swizzled ones and one ldmatrix.x4 of a tile reads 16 16-bit
/// units (32 codes) of a row. New rows are served: kv_append quantises
/// them (KVAppend.cpp).
inline std::string fp8CacheKernelGap(int64_t d, int64_t dv) {
  auto served = [](int64_t x) { return x >= 64 && x <= 256 && x % 32 == 0; };
  if (!served(d) || !served(dv))
    return "no GPU kernel for an f8E4M3FN KV cache at D = " +
           std::to_string(d) + ", Dv = " + std::to_string(dv) +
           ": the FP8-cache decode kernel serves D and Dv multiples of 32 "
           "from 64 to 256 (the CPU lowerings serve the others; "
           "docs/KVCACHE.md)";
  return "";
}

/// What kv_append's rotary stage does not serve, "" where it does:
/// rotary_dim a multiple of 16 (flash-attn's rule too), because a lane
/// rotates whole 8-element (16-byte) pieces and in GPT-NeoX halves a piece
/// of the first half pairs with one of the second, rotary_dim / 2 apart.
inline std::string rotaryKernelGap(int64_t rotaryDim) {
  if (rotaryDim % 16 != 0)
    return "no GPU kernel for rotary_dim = " + std::to_string(rotaryDim) +
           ": kv_append rotates 16-byte pieces and serves rotary_dim "
           "multiples of 16 (the CPU lowerings serve the others; "
           "docs/KVCACHE.md)";
  return "";
}

} // namespace mlir::flash

#endif // FLASHFUSE_DIALECT_FLASH_IR_KVCACHEKERNELS_H
