//===- FlashDialect.cpp - dialect registration and attributes -------------===//
#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::flash;

#include "flashfuse/Dialect/Flash/IR/FlashDialect.cpp.inc"
#include "flashfuse/Dialect/Flash/IR/FlashEnums.cpp.inc"
#include "flashfuse/Dialect/Flash/IR/FlashInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "flashfuse/Dialect/Flash/IR/FlashAttrs.cpp.inc"

void FlashDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "flashfuse/Dialect/Flash/IR/FlashOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "flashfuse/Dialect/Flash/IR/FlashAttrs.cpp.inc"
      >();
}

LogicalResult
TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                   StringRef name, int64_t arch, int64_t sms,
                   int64_t smemPerBlock, int64_t regsPerSm) {
  // The name is what diagnostics and artifact manifests call the target.
  if (name.empty())
    return emitError() << "target name must not be empty";
  // A description of an older GPU is well-formed (it is a fact about a
  // chip); flash-select-config is where a recipe refuses it. Below sm_70
  // there are no tensor cores at all, so such a target is surely a typo.
  if (arch < 70)
    return emitError() << "target '" << name << "': arch " << arch
                       << " is below 70 (sm_70, the first GPU with tensor "
                          "cores)";
  for (auto [field, value] : {std::pair<StringRef, int64_t>{"sms", sms},
                              {"smem_per_block", smemPerBlock},
                              {"regs_per_sm", regsPerSm}})
    if (value <= 0)
      return emitError() << "target '" << name << "': " << field
                         << " must be positive, got " << value;
  return success();
}

LogicalResult
KernelConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         Recipe recipe, int64_t blockM, int64_t blockN,
                         int64_t warps, int64_t stages, int64_t splits) {
  // Decode alone takes 8: its rows are then the products' n.
  if ((blockM <= 0 || blockM % 16 != 0) &&
      !(blockM == 8 && recipe == Recipe::Decode))
    return emitError() << "block_m must be a positive multiple of 16 (or 8 "
                          "with the decode recipe), got "
                       << blockM;
  if (blockN <= 0 || blockN % 16 != 0)
    return emitError() << "block_n must be a positive multiple of 16, got "
                       << blockN;
  if (!llvm::is_contained({1, 2, 4, 8, 12, 16}, warps))
    return emitError() << "warps must be one of 1, 2, 4, 8, 12, 16, got "
                       << warps;
  if (stages < 1 || stages > 8)
    return emitError() << "stages must be in [1, 8], got " << stages;
  if (splits < 1)
    return emitError() << "splits must be at least 1, got " << splits;
  if (splits > 1 && recipe != Recipe::Decode)
    return emitError() << "only the decode recipe splits the keys, got splits = "
                       << splits << " with recipe '" << stringifyRecipe(recipe)
                       << "'";
  return success();
}
