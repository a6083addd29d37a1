//===- Recipes.h - kernel recipes of flash-lower-to-gpu ---------*- C++ -*-===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_RECIPES_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_RECIPES_H

#include "flashfuse/Conversion/FlashToGPU/KernelSpec.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::flash {

/// The kernel's argument types, in the order of KernelSpec::params(): each
/// `memref:` a 1-D dynamic memref, scalars as named.
SmallVector<Type> getKernelArgumentTypes(MLIRContext *ctx,
                                         const KernelSpec &spec);

/// Fills the empty body of `func` with the FlashAttention-2 forward schedule
/// (mma.sync m16n8k16, ldmatrix, cp.async pipeline). See Sm80Forward.cpp.
void buildSm80ForwardKernel(gpu::GPUFuncOp func, const KernelSpec &spec);

/// The same schedule on wgmma (sm_90a), with 128-byte-swizzled tiles. See
/// Sm90Forward.cpp.
void buildSm90ForwardKernel(gpu::GPUFuncOp func, const KernelSpec &spec);
/// The warp-specialised Hopper forward: a producer warpgroup loads the tiles
/// with TMA, two consumer warpgroups run the sm90 schedule on them. See
/// Sm90WsForward.cpp.
void buildSm90WsForwardKernel(gpu::GPUFuncOp func, const KernelSpec &spec);
/// The FP8 (e4m3) forward on the warp-specialised schedule. See
/// Sm90Fp8Forward.cpp.
void buildSm90Fp8ForwardKernel(gpu::GPUFuncOp func, const KernelSpec &spec);
/// The FP8 (e4m3) forward on mma.sync m16n8k32 (sm_89, where wgmma is
/// absent). See Sm80Fp8Forward.cpp.
void buildSm80Fp8ForwardKernel(gpu::GPUFuncOp func, const KernelSpec &spec);
/// The backward kernels (docs/KERNEL_ABI.md, "Backward"): Dsum and the
/// zeroed dQ accumulator; the main dK/dV (and atomic dQ) kernel; the
/// deterministic mode's dQ kernel; the conversion of the gradients to the
/// operands' dtype and layouts with the GQA reduction.
void buildSm80BackwardPreprocessKernel(gpu::GPUFuncOp func,
                                       const KernelSpec &spec);
void buildSm80BackwardKernel(gpu::GPUFuncOp func, const KernelSpec &spec);
/// The main backward kernel on wgmma (sm_90a). See Sm90Backward.cpp.
void buildSm90BackwardKernel(gpu::GPUFuncOp func, const KernelSpec &spec);
/// The same fed by a TMA producer warpgroup. See Sm90WsBackward.cpp.
void buildSm90WsBackwardKernel(gpu::GPUFuncOp func, const KernelSpec &spec);
void buildSm80BackwardDQKernel(gpu::GPUFuncOp func, const KernelSpec &spec);
void buildSm80BackwardPostprocessKernel(gpu::GPUFuncOp func,
                                        const KernelSpec &spec);
/// The block-sparse backward's transposition of the forward's lists into
/// query blocks per key block, before the main kernel (BlockSparseTranspose.cpp).
void buildBlockSparseTransposeKernel(gpu::GPUFuncOp func,
                                     const KernelSpec &spec);
/// Attention over a KV cache (docs/KVCACHE.md): the split-KV decode kernel
/// on the sm80 forward's engine (Sm80Decode.cpp) and the combine of its
/// partial results (DecodeCombine.cpp).
void buildSm80DecodeKernel(gpu::GPUFuncOp func, const KernelSpec &spec);
void buildDecodeCombineKernel(gpu::GPUFuncOp func, const KernelSpec &spec);
/// new_kv's rows copied into the cache (KVAppend.cpp) and the device-side
/// check of the lengths and the page table (DecodeCheck.cpp).
void buildKVAppendKernel(gpu::GPUFuncOp func, const KernelSpec &spec);
void buildDecodeCheckKernel(gpu::GPUFuncOp func, const KernelSpec &spec);

} // namespace mlir::flash

#endif
