//===- VerifierUtils.h - diagnostics shared by the flash verifiers -*- C++ -*-//
//
// Private to lib/Dialect/Flash/IR: how the verifiers of every flash op print
// shapes and numbers and compare sizes, so that all of them word their
// messages the same way.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_DIALECT_FLASH_IR_VERIFIERUTILS_H
#define FLASHFUSE_LIB_DIALECT_FLASH_IR_VERIFIERUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::flash::detail {

/// `[2, ?, 64]`: a shape with `?` for dynamic sizes.
std::string shapeStr(llvm::ArrayRef<int64_t> shape);

/// A float as a person writes it (0.5, -3, inf, nan): diagnostics otherwise
/// print doubles in scientific notation.
std::string num(double d);

/// Sizes agree when either is dynamic or both are equal.
inline bool compatible(int64_t a, int64_t b) {
  return a == ShapedType::kDynamic || b == ShapedType::kDynamic || a == b;
}

/// Same rank and every size compatible.
bool compatibleShape(llvm::ArrayRef<int64_t> got, llvm::ArrayRef<int64_t> want);

/// The first static size of `sizes`, else kDynamic.
int64_t firstStatic(std::initializer_list<int64_t> sizes);

/// Rejects an attribute that is neither one of the op's own nor
/// dialect-prefixed: a misspelling (`window` for window_left/window_right,
/// say) would otherwise be kept as a discardable attribute and the kernel
/// would silently be another variant.
LogicalResult verifyAttributeNames(Operation *op);

/// `perm` (when present) must be a permutation of [0, 1, 2, 3].
LogicalResult verifyPerm(Operation *op, llvm::StringRef name,
                         DenseI64ArrayAttr perm);

/// FP8 (Fp8Verify.cpp). Refuses an 8-bit float element type on any of
/// `operands` of an op that has no FP8 form, saying why (`why`).
LogicalResult refuseFp8(Operation *op, llvm::ArrayRef<std::pair<llvm::StringRef, Value>> operands,
                        llvm::StringRef why);

} // namespace mlir::flash::detail

namespace mlir::flash {
class AttentionOp;
class AttentionKVCacheOp;
struct AttentionSizes;
namespace detail {
/// flash.attention's FP8 rules: f8E4M3FN only, all three descales, their
/// shapes and constant values, a bf16 or f16 O, no varlen or dropout.
LogicalResult verifyAttentionFp8(AttentionOp op, const AttentionSizes &sz);
/// flash.attention_kvcache's FP8 element-type rules (they need no shapes,
/// so they run first and give the specific reason): f8E4M3FN caches, both
/// or neither, with both descales and only then; an f16 or bf16 query and
/// new rows in its type.
LogicalResult verifyKVCacheFp8Types(AttentionKVCacheOp op);
/// The descales' shapes ([] or [B, Hkv]) and constant values, once the
/// sizes are known to agree.
LogicalResult verifyKVCacheFp8Descales(AttentionKVCacheOp op);
} // namespace detail
} // namespace mlir::flash

#endif // FLASHFUSE_LIB_DIALECT_FLASH_IR_VERIFIERUTILS_H
