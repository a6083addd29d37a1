//===- ModCaptures.h - values a score_mod / mask_mod reads from above -----===//
//
// A score_mod or mask_mod region may read values defined above its op: a
// table of ALiBi slopes, the sequence ids of a document mask, a scalar. The
// kernels take each such value as parameters (docs/KERNEL_ABI.md "Values
// captured by score_mod and mask_mod"): capture i is
//
//   - a tensor: `memref:capture<i>`, its elements row-major in a flat
//     buffer (i1 as i8, index as i64), and `i64:capture<i>_stride_<k>` for
//     each dimension k but the last (which is contiguous); the region may
//     read it only through tensor.extract;
//   - a scalar: `i32:capture<i>` (integers of up to 32 bits),
//     `i64:capture<i>` (i64, index) or `f32:capture<i>` (f16, bf16, f32).
//
// Constants defined above the op are not captures: they are cloned into
// the kernel. Captures are numbered by first use, the score_mod's first.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_MODCAPTURES_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_MODCAPTURES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Region.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir::flash {

/// The values `regions` (of `op`) read from above `op`, constants left
/// out, in first-use order; an error on `op` naming the value where one
/// cannot be a kernel parameter (its type, or a tensor read otherwise than
/// by tensor.extract).
FailureOr<SmallVector<Value>> collectModCaptures(Operation *op,
                                                 ArrayRef<Region *> regions);

/// The ABI parameters of `captures`, `kind:name` entries in order.
void appendCaptureParams(ArrayRef<Value> captures,
                         SmallVectorImpl<std::string> &params);

/// The manifest's `captures` tokens: each value's element type as the IR
/// names it, with `/RANK` for a tensor ("f32/1", "index").
SmallVector<std::string> captureManifestTypes(ArrayRef<Value> captures);

/// The element type of capture `name`'s buffer ("capture<i>"), or null
/// where `name` is no captured tensor.
Type captureBufferElementType(ArrayRef<Value> captures, StringRef name);

/// The element type a captured tensor of elements `elt` is passed with.
Type captureBufferElementType(Type elt);

/// Maps into `map`, at `b`'s insertion point in a kernel whose parameters
/// are `params` (by ABI name), every value `region` reads from above its
/// op: captures to their parameters (tensors to placeholders that
/// `lowerCapturedTensorReads` turns into loads), constants to clones.
/// Returns the placeholders.
SmallVector<Operation *>
mapModCaptures(OpBuilder &b, Location loc, Region *region,
               ArrayRef<Value> captures, const llvm::StringMap<Value> &params,
               IRMapping &map);

/// Rewrites each tensor.extract of a placeholder of `mapModCaptures` into
/// a load of the capture's buffer, its offset clamped into the buffer with
/// `clampToBuffer`, and erases the placeholders.
void lowerCapturedTensorReads(ArrayRef<Operation *> placeholders,
                              bool clampToBuffer);

} // namespace mlir::flash

#endif
