//===- GridConstantParams.cpp - tensor maps as by-value parameters ---------===//
//
// flash-grid-constant-params (Passes.td): the trailing pointer parameters of
// a TMA kernel become by-value, grid-constant 128-byte parameters.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Conversion/FlashToGPU/KernelSpec.h"
#include "flashfuse/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::flash {
#define GEN_PASS_DEF_FLASHGRIDCONSTANTPARAMS
#include "flashfuse/Conversion/Passes.h.inc"
} // namespace mlir::flash

using namespace mlir;
using namespace mlir::flash;

namespace {

/// Bytes and alignment of a CUtensorMap (cuda.h: 64 u64, aligned to 64).
constexpr int64_t kTensorMapBytes = 128, kTensorMapAlign = 64;

struct FlashGridConstantParams
    : flash::impl::FlashGridConstantParamsBase<FlashGridConstantParams> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation().walk([&](LLVM::LLVMFuncOp func) {
      auto count =
          func->getAttrOfType<IntegerAttr>(kGridConstantParamsAttrName);
      if (!count)
        return;
      func->removeAttr(kGridConstantParamsAttrName);
      int64_t n = count.getInt();
      int64_t numArgs = func.getNumArguments();
      if (n < 0 || n > numArgs) {
        func.emitError() << "'" << kGridConstantParamsAttrName << "' = " << n
                         << " but the kernel has " << numArgs
                         << " parameters";
        failedAny = true;
        return;
      }
      MLIRContext *ctx = func.getContext();
      Builder b(ctx);
      auto map = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8),
                                          kTensorMapBytes);
      for (int64_t i = numArgs - n; i < numArgs; ++i) {
        if (!isa<LLVM::LLVMPointerType>(func.getArgument(i).getType())) {
          func.emitError() << "parameter " << i
                           << " is to be a by-value tensor map but is not a "
                              "pointer: "
                           << func.getArgument(i).getType();
          failedAny = true;
          return;
        }
        func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(map));
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(kTensorMapAlign));
        func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                        b.getUnitAttr());
      }
    });
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
