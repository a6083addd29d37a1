//===- KVCacheKernels.h - what the decode kernels do not serve --*- C++ -*-===//
//
// flash-select-config (which picks the decode recipe) and flash-lower-to-gpu
// (which builds it, also for a config written by hand) refuse the same
// flash.attention_kvcache forms with the same words.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_DIALECT_FLASH_IR_KVCACHEKERNELS_H
#define FLASHFUSE_DIALECT_FLASH_IR_KVCACHEKERNELS_H

namespace mlir::flash {

/// An f8E4M3FN cache: the op, the CPU lowerings and the numerics harness
/// serve it, the GPU decode, kv_append and decode_check kernels do not yet
/// (docs/KVCACHE.md "FP8 cache" says what the kernel still needs).
inline constexpr const char *kNoFp8CacheKernel =
    "no GPU kernel for an f8E4M3FN KV cache yet: the decode recipe reads "
    "16-bit caches only (the CPU lowerings flash-lower-naive and "
    "flash-lower-to-loops serve the FP8 cache; docs/KVCACHE.md)";

} // namespace mlir::flash

#endif // FLASHFUSE_DIALECT_FLASH_IR_KVCACHEKERNELS_H
