//===- AlignDynamicSharedMemory.cpp - the dynamic region, extern and aligned ===//
//
// flash-align-dynamic-shared-memory (Passes.td): the kernels marked by
// flash-lower-to-gpu address their dynamic shared memory through PTX's
// `.extern .shared` array, aligned for their swizzled tiles.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Conversion/FlashToGPU/KernelSpec.h"
#include "flashfuse/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::flash {
#define GEN_PASS_DEF_FLASHALIGNDYNAMICSHAREDMEMORY
#include "flashfuse/Conversion/Passes.h.inc"
} // namespace mlir::flash

using namespace mlir;
using namespace mlir::flash;

namespace {

/// NVVM's shared address space.
constexpr unsigned kSharedAddressSpace = 3;

/// Whether `global` is a dynamic shared memory symbol: a zero-length array
/// in shared memory without an initializer (what convert-gpu-to-nvvm
/// makes of gpu.dynamic_shared_memory).
bool isDynamicSharedMemory(LLVM::GlobalOp global) {
  auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
  return global.getAddrSpace() == kSharedAddressSpace && array &&
         array.getNumElements() == 0 && !global.getValueOrNull() &&
         global.getInitializerRegion().empty();
}

struct FlashAlignDynamicSharedMemory
    : flash::impl::FlashAlignDynamicSharedMemoryBase<
          FlashAlignDynamicSharedMemory> {
  using Base::Base;

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    int64_t bytes = alignment;
    if (bytes <= 0 || !llvm::isPowerOf2_64(bytes)) {
      module.emitError() << "flash-align-dynamic-shared-memory: alignment "
                         << bytes << " is not a power of two";
      return signalPassFailure();
    }
    // One external declaration serves every marked kernel (each kernel's
    // dynamic region is its own); made on first use.
    LLVM::GlobalOp aligned;
    auto alignedGlobal = [&](LLVM::GlobalOp like) {
      if (aligned)
        return aligned;
      OpBuilder b(like);
      b.setInsertionPointAfter(like);
      aligned = LLVM::GlobalOp::create(
          b, like.getLoc(), like.getGlobalType(), /*isConstant=*/false,
          LLVM::Linkage::External,
          "__dynamic_shmem_align" + std::to_string(bytes), Attribute(),
          /*alignment=*/bytes, kSharedAddressSpace);
      SymbolTable(module).insert(aligned);
      return aligned;
    };
    for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
      if (!func->removeAttr(kAlignedDynamicSharedAttrName))
        continue;
      func.walk([&](LLVM::AddressOfOp address) {
        auto global = dyn_cast_or_null<LLVM::GlobalOp>(
            SymbolTable::lookupSymbolIn(module, address.getGlobalNameAttr()));
        if (!global || !isDynamicSharedMemory(global) || global == aligned)
          return;
        address.setGlobalName(alignedGlobal(global).getSymName());
      });
    }
  }
};

} // namespace
