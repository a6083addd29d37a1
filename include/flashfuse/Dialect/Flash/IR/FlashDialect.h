//===- FlashDialect.h - the flash dialect -----------------------*- C++ -*-===//
//
// One header for users of the dialect: the dialect, its attributes, the
// variant interface and the ops.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_DIALECT_FLASH_IR_FLASHDIALECT_H
#define FLASHFUSE_DIALECT_FLASH_IR_FLASHDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <array>
#include <cmath>

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h.inc"
#include "flashfuse/Dialect/Flash/IR/FlashEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "flashfuse/Dialect/Flash/IR/FlashAttrs.h.inc"

namespace mlir::flash {

/// Logical sizes of an attention problem; ShapedType::kDynamic where unknown.
struct AttentionSizes {
  int64_t batch, headsQ, headsKV, seqQ, seqK, d, dv;
};

/// Identity permutation [0, 1, 2, 3] when `perm` is null.
llvm::SmallVector<int64_t, 4> permOrIdentity(DenseI64ArrayAttr perm);

/// Reads the logical [B, H, S, D] sizes of Q, K and V through their perms.
AttentionSizes getAttentionSizes(Type q, Type k, Type v,
                                 llvm::ArrayRef<int64_t> qPerm,
                                 llvm::ArrayRef<int64_t> kPerm,
                                 llvm::ArrayRef<int64_t> vPerm);

/// The operand shape holding logical sizes `logical` ([B, H, S, D]) under
/// `perm`.
llvm::SmallVector<int64_t, 4> applyPerm(llvm::ArrayRef<int64_t> logical,
                                        llvm::ArrayRef<int64_t> perm);

/// FlexAttention's default block size, along the queries and the keys, of
/// the block-sparse lists when `sparse_block_size` is not given.
inline constexpr int64_t kDefaultSparseBlock = 128;

/// The block-sparse operands of flash.attention / flash.attention_grad
/// (FlashOps.td, "Block-sparse"): the partial lists, the optional full
/// lists (null where absent) and the block sizes [BQ, BK]. False when the
/// op is dense.
struct BlockSparseOperands {
  Value numBlocks, indices, fullNumBlocks, fullIndices;
  int64_t blockQ = kDefaultSparseBlock, blockK = kDefaultSparseBlock;
  explicit operator bool() const { return static_cast<bool>(numBlocks); }
};

} // namespace mlir::flash

#include "flashfuse/Dialect/Flash/IR/FlashInterfaces.h.inc"

#define GET_OP_CLASSES
#include "flashfuse/Dialect/Flash/IR/FlashOps.h.inc"

#endif // FLASHFUSE_DIALECT_FLASH_IR_FLASHDIALECT_H
