//===- HostLaunches.h - flash ops replaced by their kernels' launches -----===//
//
// flash-lower-to-gpu's host side: each flash.attention, attention_grad and
// attention_kvcache op is replaced by gpu.launch_func ops of its kernels
// over its operands' buffers, with the scalars and scratch the kernel ABI
// (docs/KERNEL_ABI.md) asks for. The kernels themselves come from the
// pass (LowerToGPU.cpp), which builds each distinct spec once.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_HOSTLAUNCHES_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_HOSTLAUNCHES_H

#include "flashfuse/Conversion/FlashToGPU/KernelSpec.h"
#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::flash {

/// The kernel of a spec in the pass's kernel module, built on first use.
using KernelOf = llvm::function_ref<gpu::GPUFuncOp(const KernelSpec &)>;

/// Fails (with the reason) where `op`'s kernels cannot be launched from the
/// IR: tensor maps, unless the module is compiled for its kernels only.
LogicalResult checkLaunchable(Operation *op, const KernelSpec &spec,
                              bool kernelsOnly);

/// The forward: one launch of `kernel`.
void replaceWithLaunch(AttentionOp op, gpu::GPUFuncOp kernel,
                       const KernelSpec &spec);

/// The backward's sequence (KERNEL_ABI.md "Backward"): preprocess, the
/// main kernel (and the lists' transposition, the dQ kernel where the
/// recipe has them), postprocess.
void replaceGradWithLaunches(AttentionGradOp op, KernelOf kernelOf,
                             const KernelSpec &spec);

/// A decode step: kv_append where the op has new rows, the decode kernel
/// over its `splits`, and the combine where the kernel does not merge
/// them; the append, combine and decode_check kernels are built either
/// way (the runtime serves attention_with_kvcache from the same artifact).
void replaceKVCacheWithLaunches(AttentionKVCacheOp op, KernelOf kernelOf,
                                const KernelSpec &spec, int64_t splits);

} // namespace mlir::flash

#endif
