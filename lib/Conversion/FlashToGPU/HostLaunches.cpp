//===- HostLaunches.cpp - flash ops replaced by their kernels' launches ---===//
//
// See HostLaunches.h. Buffers come from bufferization.to_buffer of the
// operands (flattened to the kernels' 1-D memrefs), results from
// allocations the launches write, scalars from the operands' shapes.
//
//===----------------------------------------------------------------------===//
#include "HostLaunches.h"
#include "ModCaptures.h"

#include "flashfuse/Dialect/Flash/IR/KVCacheKernels.h"
#include "flashfuse/decode_splits.h"
#include "flashfuse/fp8_vt_layout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::flash;

/// Dimension `dim` of a tensor as an index value.
static Value dimOf(ImplicitLocOpBuilder &b, Value tensor, int64_t dim) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(dim))
    return arith::ConstantIndexOp::create(b, type.getDimSize(dim));
  return tensor::DimOp::create(b, tensor, dim);
}

/// Row-major strides of a contiguous rank-4 tensor, as index values.
static SmallVector<Value, 4> contiguousStrides(ImplicitLocOpBuilder &b,
                                               Value tensor) {
  SmallVector<Value, 4> strides(4);
  strides[3] = arith::ConstantIndexOp::create(b, 1);
  for (int64_t d = 2; d >= 0; --d)
    strides[d] = arith::MulIOp::create(b, strides[d + 1], dimOf(b, tensor, d + 1));
  return strides;
}

/// The ABI's sizes batch, heads_q, heads_kv, seq_q, seq_k as i32 arguments.
static void addSizes(ImplicitLocOpBuilder &b, llvm::StringMap<Value> &named,
                     ArrayRef<Value> sizes) {
  const char *names[] = {"batch", "heads_q", "heads_kv", "seq_q", "seq_k"};
  for (auto [name, size] : llvm::zip_equal(names, sizes))
    named[name] = arith::IndexCastOp::create(b, b.getI32Type(), size);
}

/// `name`_stride_b/h/s: the strides of the logical B, H, S dimensions of
/// the contiguous `tensor`, read through `perm`, as i64 arguments.
static void addLogicalStrides(ImplicitLocOpBuilder &b,
                              llvm::StringMap<Value> &named, StringRef name,
                              Value tensor, ArrayRef<int64_t> perm) {
  auto strides = contiguousStrides(b, tensor);
  const char *dims[] = {"b", "h", "s"};
  for (int64_t l = 0; l < 3; ++l)
    named[(name + "_stride_" + dims[l]).str()] =
        arith::IndexCastOp::create(b, b.getI64Type(), strides[perm[l]]);
}

/// `buf` collapsed to the kernels' 1-D memref<?xT>.
static Value flatten(ImplicitLocOpBuilder &b, Value buf) {
  auto type = cast<MemRefType>(buf.getType());
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    all[0].push_back(d);
  Value flat = memref::CollapseShapeOp::create(b, buf, all);
  return memref::CastOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, type.getElementType()), flat);
}

/// The buffer of a tensor, flattened to the kernel's memref<?xT>,
/// converting the element type to `elt` first when it differs.
static Value flatBuffer(ImplicitLocOpBuilder &b, Value tensor, Type elt) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (type.getElementType() != elt) {
    auto converted = type.clone(elt);
    if (isa<FloatType>(elt))
      tensor = arith::ExtFOp::create(b, converted, tensor);
    else
      tensor = arith::ExtUIOp::create(b, converted, tensor);
    type = converted;
  }
  auto memTy = MemRefType::get(type.getShape(), elt);
  Value buf = bufferization::ToBufferOp::create(b, b.getLoc(), memTy, tensor,
                                                /*read_only=*/b.getUnitAttr());
  return flatten(b, buf);
}

/// The arguments of the values a score_mod / mask_mod reads from above its
/// op (ModCaptures.h), by ABI name: a tensor as its contiguous buffer in
/// the element type of the kernel's (i1 as i8, index as i64) and its
/// row-major strides, a scalar widened to its parameter's type.
static void addCaptureArgs(ImplicitLocOpBuilder &b, const KernelSpec &spec,
                           llvm::StringMap<Value> &named) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  for (auto [i, v] : llvm::enumerate(spec.captures)) {
    std::string name = "capture" + std::to_string(i);
    Type t = v.getType();
    if (auto tensor = dyn_cast<RankedTensorType>(t)) {
      Type elt = captureBufferElementType(tensor.getElementType());
      Value converted = v;
      if (isa<IndexType>(tensor.getElementType()))
        converted = arith::IndexCastOp::create(b, tensor.clone(elt), v);
      named[name] = flatBuffer(b, converted, elt);
      Value stride = arith::ConstantIndexOp::create(b, 1);
      for (int64_t k = tensor.getRank() - 2; k >= 0; --k) {
        stride = arith::MulIOp::create(b, stride, dimOf(b, v, k + 1));
        named[name + "_stride_" + std::to_string(k)] =
            arith::IndexCastOp::create(b, i64, stride);
      }
      continue;
    }
    Value arg = v;
    if (isa<IndexType>(t))
      arg = arith::IndexCastOp::create(b, i64, v);
    else if (t.isF16() || t.isBF16())
      arg = arith::ExtFOp::create(b, b.getF32Type(), v);
    else if (t.getIntOrFloatBitWidth() < 32)
      arg = t.isInteger(1) ? Value(arith::ExtUIOp::create(b, i32, v))
                           : Value(arith::ExtSIOp::create(b, i32, v));
    named[name] = arg;
  }
}

/// The buffer of a tensor that a kernel writes in place, in its own
/// shape (the result tensor is made from it).
static Value writableBuffer(ImplicitLocOpBuilder &b, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto memTy = MemRefType::get(type.getShape(), type.getElementType());
  return bufferization::ToBufferOp::create(b, b.getLoc(), memTy, tensor);
}

/// The i64 dropout seed, 0 when the op has none (no dropout).
static Value seedOrZero(ImplicitLocOpBuilder &b, Value seed) {
  return seed ? seed : Value(arith::ConstantIntOp::create(b, b.getI64Type(), 0));
}

/// A new buffer of `shape` (static dims kept, dynamic ones from `sizes`)
/// with elements `elt`.
static Value allocBuffer(ImplicitLocOpBuilder &b, ArrayRef<int64_t> shape,
                         ArrayRef<Value> sizes, Type elt) {
  SmallVector<Value> dyn;
  for (auto [n, v] : llvm::zip(shape, sizes))
    if (ShapedType::isDynamic(n))
      dyn.push_back(v);
  return memref::AllocOp::create(b, MemRefType::get(shape, elt), dyn);
}

/// Replaces the uses of `result` (grad_bias, the bias' type) by the
/// full-size f32 dBias in `full`, summed over the dimensions the bias
/// broadcasts (size 1 in the bias, larger in [B, Hq, Sq, Sk]) and converted
/// to the bias' element type.
static void replaceGradBias(ImplicitLocOpBuilder &b, Value full, Value result) {
  auto fullTy = cast<MemRefType>(full.getType());
  auto type = cast<RankedTensorType>(result.getType());
  Type f32 = b.getF32Type();
  Value t = bufferization::ToTensorOp::create(
      b, b.getLoc(), memref::getTensorTypeFromMemRefType(fullTy), full,
      /*restrict=*/true, /*writable=*/true);
  SmallVector<int64_t> reduced, kept;
  for (int64_t d = 0; d < 4; ++d) {
    if (type.getDimSize(d) == 1 && fullTy.getDimSize(d) != 1)
      reduced.push_back(d);
    else
      kept.push_back(fullTy.getDimSize(d));
  }
  if (!reduced.empty()) {
    Value zero = arith::ConstantOp::create(b, b.getF32FloatAttr(0.0f));
    Value init = linalg::FillOp::create(
                     b, ValueRange{zero},
                     ValueRange{tensor::EmptyOp::create(b, kept, f32)})
                     .getResult(0);
    t = linalg::ReduceOp::create(
            b, ValueRange{t}, ValueRange{init}, reduced,
            [](OpBuilder &nb, Location loc, ValueRange args) {
              Value sum = arith::AddFOp::create(nb, loc, args[0], args[1]);
              linalg::YieldOp::create(nb, loc, sum);
            })
            .getResult(0);
    // Back to rank 4: each reduced dimension joins the group of the kept
    // dimension before it (leading ones that of the first kept one).
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices leading;
    for (int64_t d = 0; d < 4; ++d) {
      if (!llvm::is_contained(reduced, d)) {
        groups.push_back(leading);
        groups.back().push_back(d);
        leading.clear();
      } else if (groups.empty()) {
        leading.push_back(d);
      } else {
        groups.back().push_back(d);
      }
    }
    t = tensor::ExpandShapeOp::create(
        b, RankedTensorType::get(type.getShape(), f32), t, groups);
  }
  if (t.getType() != result.getType())
    t = arith::TruncFOp::create(b, result.getType(), t);
  result.replaceAllUsesWith(t);
}

/// One block-sparse list pair's kernel arguments (KERNEL_ABI.md
/// "Block-sparse"), in params() order: the counts and indices as flat i32
/// buffers, their batch and head strides (0 where a list broadcasts) and
/// the slots per row. `num` and `indices` are tensors, [B', H', R] and
/// [B', H', R, slots], contiguous.
static SmallVector<Value, 7> sparseListArgs(ImplicitLocOpBuilder &b, Value num,
                                            Value indices) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto toI32 = [&](Value v) { return Value(arith::IndexCastOp::create(b, i32, v)); };
  auto toI64 = [&](Value v) { return Value(arith::IndexCastOp::create(b, i64, v)); };
  SmallVector<Value, 7> args = {flatBuffer(b, num, i32),
                                flatBuffer(b, indices, i32)};
  for (Value list : {num, indices}) {
    // Contiguous [B', H', R(, N)]: B' and H' strides, 0 where size 1.
    auto type = cast<RankedTensorType>(list.getType());
    Value inner = arith::ConstantIndexOp::create(b, 1);
    for (int64_t d = type.getRank() - 1; d >= 2; --d)
      inner = arith::MulIOp::create(b, inner, dimOf(b, list, d));
    Value strideH = inner;
    Value strideB = arith::MulIOp::create(b, inner, dimOf(b, list, 1));
    Value strides[] = {strideB, strideH};
    for (int64_t d = 0; d < 2; ++d)
      args.push_back(type.getDimSize(d) == 1
                         ? Value(arith::ConstantIntOp::create(b, i64, 0))
                         : toI64(strides[d]));
  }
  args.push_back(toI32(dimOf(b, indices, 3)));
  return args;
}

/// The forward's trailing arguments: scale, window, softcap, dropout, seed,
/// the block-sparse lists, and (kernels-only) null placeholders where the
/// runtime puts the tensor maps.
static void appendScalarsAndMaps(ImplicitLocOpBuilder &b,
                                 AttentionVariantInterface iface,
                                 const KernelSpec &spec,
                                 SmallVectorImpl<Value> &args) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto cf = [&](double x) {
    return Value(arith::ConstantFloatOp::create(b, cast<FloatType>(f32), APFloat(float(x))));
  };
  auto ci = [&](int64_t x) { return Value(arith::ConstantIntOp::create(b, i32, x)); };
  args.push_back(cf(iface.getEffectiveScale()));
  args.push_back(ci(iface.getWindowLeftSize().value_or(-1)));
  args.push_back(ci(iface.getWindowRightSize().value_or(-1)));
  args.push_back(cf(iface.getSoftcapValue().value_or(0.0)));
  args.push_back(cf(iface.getDropoutProbability()));
  args.push_back(seedOrZero(b, iface.getSeedOperand()));
  // Block-sparse (KERNEL_ABI.md "Block-sparse"): each list pair, its batch
  // and head strides (0 where a list broadcasts) and its slots per row.
  if (spec.blockSparse) {
    BlockSparseOperands lists = iface.getBlockSparse();
    args.append(sparseListArgs(b, lists.numBlocks, lists.indices));
    if (spec.fullBlocks)
      args.append(sparseListArgs(b, lists.fullNumBlocks, lists.fullIndices));
  }
  // No tile order: the grid's own (the runtime's callers pass one).
  if (spec.takesTileOrder())
    args.push_back(arith::ConstantIntOp::create(b, b.getI64Type(), 0));
  if (spec.usesTensorMaps())
    for (int64_t i = 0; i < spec.tensorMapCount(); ++i)
      args.push_back(LLVM::ZeroOp::create(b, LLVM::LLVMPointerType::get(b.getContext())));
}

/// An FP8 op's V as its kernel's Vᵀ (fp8_vt_layout.h): the logical
/// [B, Hkv, Dv, Sk_pad], contiguous, the keys zero-padded to a whole group
/// of 32 and permuted within each group. Key 32 G + 16 h + 8 j + 2 t + e
/// goes to position 32 G + 16 h + 4 t + 2 j + e: the keys expanded to
/// [G, h, j, t, e], one transpose swaps j and t as it moves Dv ahead, and
/// the positions collapse back.
static Value transposedValue(ImplicitLocOpBuilder &b, AttentionOp op) {
  constexpr int64_t group = FLASHFUSE_FP8_VT_KEY_GROUP;
  static_assert(group == 32, "the expansion below spells out 32 keys");
  auto iface = cast<AttentionVariantInterface>(op.getOperation());
  auto vPerm = iface.getValuePerm();
  Value v = op.getValue();
  auto vType = cast<RankedTensorType>(v.getType());
  Type elt = vType.getElementType();
  int64_t keyDim = vPerm[2];
  auto size = [&](Value t, int64_t d) {
    auto type = cast<RankedTensorType>(t.getType());
    return type.isDynamicDim(d) ? OpFoldResult(dimOf(b, t, d))
                                : OpFoldResult(b.getIndexAttr(type.getDimSize(d)));
  };
  // Pad the keys up to a whole group with zeros (finite codes for P = 0).
  SmallVector<OpFoldResult> low(4, b.getIndexAttr(0)), high = low;
  if (vType.isDynamicDim(keyDim)) {
    Value keys = dimOf(b, v, keyDim);
    Value padded = arith::MulIOp::create(
        b,
        arith::CeilDivUIOp::create(b, keys,
                                   arith::ConstantIndexOp::create(b, group)),
        arith::ConstantIndexOp::create(b, group));
    high[keyDim] = OpFoldResult(arith::SubIOp::create(b, padded, keys));
  } else {
    int64_t keys = vType.getDimSize(keyDim);
    high[keyDim] = b.getIndexAttr((keys + group - 1) / group * group - keys);
  }
  Value zero = arith::ConstantOp::create(b, elt, b.getFloatAttr(elt, 0.0));
  Value padded = tensor::PadOp::create(b, Type(), v, low, high, zero);
  // [.., Sk_pad, ..] -> [.., G, h, j, t, e, ..] at the key dimension.
  SmallVector<ReassociationIndices> expand;
  SmallVector<OpFoldResult> expandedSizes;
  SmallVector<int64_t> expandedShape;
  auto expandedDim = [&](int64_t d) { return d > keyDim ? d + 4 : d; };
  for (int64_t d = 0; d < 4; ++d) {
    int64_t first = expandedDim(d);
    if (d != keyDim) {
      expand.push_back({first});
      expandedSizes.push_back(size(padded, d));
      expandedShape.push_back(cast<RankedTensorType>(padded.getType())
                                  .getDimSize(d));
      continue;
    }
    expand.push_back({first, first + 1, first + 2, first + 3, first + 4});
    int64_t keysPadded =
        cast<RankedTensorType>(padded.getType()).getDimSize(d);
    OpFoldResult groups =
        ShapedType::isDynamic(keysPadded)
            ? OpFoldResult(arith::DivUIOp::create(
                  b, dimOf(b, padded, d),
                  arith::ConstantIndexOp::create(b, group)))
            : OpFoldResult(b.getIndexAttr(keysPadded / group));
    expandedSizes.append({groups, b.getIndexAttr(2), b.getIndexAttr(2),
                          b.getIndexAttr(4), b.getIndexAttr(2)});
    expandedShape.append({ShapedType::isDynamic(keysPadded)
                              ? ShapedType::kDynamic
                              : keysPadded / group,
                          2, 2, 4, 2});
  }
  Value expanded = tensor::ExpandShapeOp::create(
      b, RankedTensorType::get(expandedShape, elt), padded, expand,
      expandedSizes);
  // -> [B, Hkv, Dv, G, h, t, j, e].
  int64_t g = expandedDim(keyDim);
  SmallVector<int64_t> toVt = {expandedDim(vPerm[0]), expandedDim(vPerm[1]),
                               expandedDim(vPerm[3]), g, g + 1, g + 3, g + 2,
                               g + 4};
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : toVt)
    sizes.push_back(size(expanded, d));
  Value init = tensor::EmptyOp::create(b, sizes, elt);
  Value vt = linalg::TransposeOp::create(b, expanded, init, toVt).getResult()[0];
  return tensor::CollapseShapeOp::create(
      b, vt, ArrayRef<ReassociationIndices>{{0}, {1}, {2}, {3, 4, 5, 6, 7}});
}

/// A descale operand as the kernel's memref<?xf32>; one per tensor ([])
/// is read as [1].
static Value descaleBuffer(ImplicitLocOpBuilder &b, Value d) {
  auto type = cast<RankedTensorType>(d.getType());
  if (type.getRank() == 0)
    d = tensor::ExpandShapeOp::create(
        b, RankedTensorType::get({1}, type.getElementType()), d,
        ArrayRef<ReassociationIndices>{});
  return flatBuffer(b, d, b.getF32Type());
}

LogicalResult mlir::flash::checkLaunchable(Operation *op,
                                           const KernelSpec &spec,
                                           bool kernelsOnly) {
  // The tensor maps are by-value parameters the runtime encodes at launch
  // (docs/KERNEL_ABI.md "Tensor maps"); a gpu.launch_func has no way to pass
  // one, so only a module whose host side is not run may hold such kernels.
  if (spec.usesTensorMaps() && !kernelsOnly)
    return op->emitOpError()
           << "recipe '" << stringifyRecipe(spec.recipe)
           << "' takes TMA tensor maps by value, which only the FlashFuse "
              "runtime makes: compile it with flashfuse-compile (or "
              "kernels-only=true) and launch it through the runtime";
  return success();
}

void mlir::flash::replaceWithLaunch(AttentionOp op, gpu::GPUFuncOp kernel,
                                    const KernelSpec &spec) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  auto iface = cast<AttentionVariantInterface>(op.getOperation());
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), f32 = b.getF32Type();
  auto toI32 = [&](Value v) { return Value(arith::IndexCastOp::create(b, i32, v)); };
  auto toI64 = [&](Value v) { return Value(arith::IndexCastOp::create(b, i64, v)); };

  auto qPerm = iface.getQueryPerm(), kPerm = iface.getKeyPerm(),
       vPerm = iface.getValuePerm();
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  Value batch = dimOf(b, q, qPerm[0]), headsQ = dimOf(b, q, qPerm[1]),
        seqQ = dimOf(b, q, qPerm[2]), headsKV = dimOf(b, k, kPerm[1]),
        seqK = dimOf(b, k, kPerm[2]);

  // Outputs: O in the layout of Q, LSE [B, Hq, Sq]; LSE is always written.
  auto outTy = cast<RankedTensorType>(op.getOutput().getType());
  SmallVector<Value> outDyn;
  for (int64_t d = 0; d < 4; ++d)
    if (outTy.isDynamicDim(d))
      outDyn.push_back(dimOf(b, q, d));
  auto outMem = MemRefType::get(outTy.getShape(), outTy.getElementType());
  Value oBuf = memref::AllocOp::create(b, outMem, outDyn);
  auto lseTy = op.getLse() ? cast<RankedTensorType>(op.getLse().getType())
                           : RankedTensorType::get({outTy.getDimSize(qPerm[0]),
                                                    outTy.getDimSize(qPerm[1]),
                                                    outTy.getDimSize(qPerm[2])},
                                                   f32);
  SmallVector<Value> lseDyn;
  Value lseSizes[3] = {batch, headsQ, seqQ};
  for (int64_t d = 0; d < 3; ++d)
    if (lseTy.isDynamicDim(d))
      lseDyn.push_back(lseSizes[d]);
  Value lseBuf = memref::AllocOp::create(b, MemRefType::get(lseTy.getShape(), f32), lseDyn);


  // FP8 (KERNEL_ABI.md "FP8 forwards"): V goes in as Vᵀ, [B, Hkv, Dv,
  // Sk_pad] contiguous in the kernels' key order, and the descales follow
  // LSE.
  Value vt = spec.isFp8() ? transposedValue(b, op) : Value();
  SmallVector<Value> args = {flatBuffer(b, q, spec.elementType),
                             flatBuffer(b, k, spec.elementType),
                             flatBuffer(b, vt ? vt : v, spec.elementType),
                             flatten(b, oBuf),
                             flatten(b, lseBuf)};
  if (spec.isFp8())
    for (Value d : {op.getQDescale(), op.getKDescale(), op.getVDescale()})
      args.push_back(descaleBuffer(b, d));
  if (spec.bias)
    args.push_back(flatBuffer(b, op.getBias(), f32));
  if (spec.mask)
    args.push_back(flatBuffer(b, op.getMask(), b.getI8Type()));
  if (spec.alibi)
    args.push_back(flatBuffer(b, op.getAlibiSlopes(), f32));
  // A packed batch (KERNEL_ABI.md "Varlen"): the offsets, B = size - 1
  // sequences, and the total as the bound of every query length.
  Value numSeqs;
  if (spec.varlen) {
    args.push_back(flatBuffer(b, op.getCuSeqlensQ(), i32));
    args.push_back(flatBuffer(b, op.getCuSeqlensK(), i32));
    numSeqs = arith::SubIOp::create(b, dimOf(b, op.getCuSeqlensQ(), 0),
                                    arith::ConstantIndexOp::create(b, 1));
  }
  for (Value size : {batch, headsQ, headsKV, seqQ, seqK})
    args.push_back(toI32(size));
  if (spec.varlen) {
    args.push_back(toI32(numSeqs));
    args.push_back(toI32(seqQ));
  }
  // Logical B, H, S strides of each operand, read through its perm.
  auto pushStrides = [&](Value tensor, ArrayRef<int64_t> perm) {
    auto strides = contiguousStrides(b, tensor);
    for (int64_t l = 0; l < 3; ++l)
      args.push_back(toI64(strides[perm[l]]));
  };
  pushStrides(q, qPerm);
  pushStrides(k, kPerm);
  if (vt)
    pushStrides(vt, {0, 1, 2}); // its B, H, Dv strides
  else
    pushStrides(v, vPerm);
  pushStrides(q, qPerm); // O has the layout and sizes of Q (D == Dv here)
  // [B, H] descales: stride H over the batch, 1 over the heads; [] ones 0.
  // With per-block descales every one takes a block stride too: [B, H, N]
  // contiguous (H N, N, 1), the others 0 over the blocks.
  if (spec.isFp8())
    for (Value d : {op.getQDescale(), op.getKDescale(), op.getVDescale()}) {
      int64_t rank = cast<RankedTensorType>(d.getType()).getRank();
      auto zero = [&] { return Value(arith::ConstantIntOp::create(b, i64, 0)); };
      if (rank == 3) {
        Value n = dimOf(b, d, 2);
        args.push_back(toI64(arith::MulIOp::create(b, dimOf(b, d, 1), n)));
        args.push_back(toI64(n));
        args.push_back(arith::ConstantIntOp::create(b, i64, 1));
        continue;
      }
      bool perHead = rank == 2;
      args.push_back(perHead ? toI64(dimOf(b, d, 1)) : zero());
      args.push_back(arith::ConstantIntOp::create(b, i64, perHead ? 1 : 0));
      if (spec.blockDescales())
        args.push_back(zero());
    }
  // Bias and mask: [B, Hq, Sq, Sk]; a size-1 dimension broadcasts (stride 0).
  auto pushBroadcastStrides = [&](Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    auto strides = contiguousStrides(b, tensor);
    for (int64_t d = 0; d < 4; ++d)
      args.push_back(type.getDimSize(d) == 1
                         ? Value(arith::ConstantIntOp::create(b, i64, 0))
                         : toI64(strides[d]));
  };
  if (spec.bias)
    pushBroadcastStrides(op.getBias());
  if (spec.mask)
    pushBroadcastStrides(op.getMask());
  // The regions' captured values, in the order params() lists them.
  llvm::StringMap<Value> captured;
  addCaptureArgs(b, spec, captured);
  SmallVector<std::string> captureParams;
  appendCaptureParams(spec.captures, captureParams);
  for (StringRef p : captureParams)
    args.push_back(captured.lookup(p.split(':').second));
  appendScalarsAndMaps(b, iface, spec, args);

  Value one = arith::ConstantIndexOp::create(b, 1);
  Value gridX = arith::CeilDivUIOp::create(
      b, seqQ, arith::ConstantIndexOp::create(b, spec.blockM));
  // Varlen: one z per sequence, and one more for the rows past
  // cu_seqlens_q[B] that no sequence owns (O = 0, LSE = +inf).
  gpu::KernelDim3 grid{gridX, headsQ,
                       spec.varlen ? Value(arith::AddIOp::create(b, numSeqs, one))
                                   : batch};
  gpu::KernelDim3 block{arith::ConstantIndexOp::create(b, spec.threads()), one, one};
  Value smem = arith::ConstantIntOp::create(b, i32, spec.smemBytes());
  gpu::LaunchFuncOp::create(b, b.getLoc(), kernel, grid, block, smem, args);

  Value out = bufferization::ToTensorOp::create(b, b.getLoc(), outTy, oBuf,
                                                /*restrict=*/true, /*writable=*/true);
  op.getOutput().replaceAllUsesWith(out);
  if (op.getLse()) {
    Value lse = bufferization::ToTensorOp::create(b, b.getLoc(), lseTy, lseBuf,
                                                  true, true);
    op.getLse().replaceAllUsesWith(lse);
  }
  op.erase();
}

void mlir::flash::replaceGradWithLaunches(AttentionGradOp op,
                                          KernelOf kernelOf,
                                          const KernelSpec &spec) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  auto iface = cast<AttentionVariantInterface>(op.getOperation());
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), f32 = b.getF32Type();
  Type elt = spec.elementType;
  auto toI64 = [&](Value v) { return Value(arith::IndexCastOp::create(b, i64, v)); };
  auto qPerm = iface.getQueryPerm(), kPerm = iface.getKeyPerm(),
       vPerm = iface.getValuePerm();
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  Value batch = dimOf(b, q, qPerm[0]), headsQ = dimOf(b, q, qPerm[1]),
        seqQ = dimOf(b, q, qPerm[2]), headsKV = dimOf(b, k, kPerm[1]),
        seqK = dimOf(b, k, kPerm[2]);
  AttentionSizes sz = iface.getSizes();

  // Every kernel argument by its ABI name; each kernel takes its subset.
  llvm::StringMap<Value> named;
  named["q"] = flatBuffer(b, q, elt);
  named["k"] = flatBuffer(b, k, elt);
  named["v"] = flatBuffer(b, v, elt);
  named["o"] = flatBuffer(b, op.getOutput(), elt);
  named["do"] = flatBuffer(b, op.getGradOutput(), elt);
  named["lse"] = flatBuffer(b, op.getLse(), f32);
  if (spec.bias)
    named["bias"] = flatBuffer(b, op.getBias(), f32);
  if (spec.mask)
    named["mask"] = flatBuffer(b, op.getMask(), b.getI8Type());
  if (spec.alibi)
    named["alibi_slopes"] = flatBuffer(b, op.getAlibiSlopes(), f32);
  addCaptureArgs(b, spec, named);
  // Scratch: Dsum, the f32 dQ accumulator, dK/dV per query head.
  Value qRows[] = {batch, headsQ, seqQ}, kRowsD[] = {batch, headsQ, seqK, nullptr};
  named["delta"] = flatten(b, allocBuffer(b, {sz.batch, sz.headsQ, sz.seqQ}, qRows, f32));
  if (!spec.deterministic) {
    // Sq rounded up to 128 rows (KERNEL_ABI.md: room for the dQ tiles of
    // the sm90 recipe's query blocks, rows past Sq included).
    int64_t multiple = KernelSpec::kDqAccumRowMultiple, rows;
    Value dynRows;
    if (ShapedType::isDynamic(sz.seqQ)) {
      rows = ShapedType::kDynamic;
      Value m = arith::ConstantIndexOp::create(b, multiple);
      dynRows = arith::MulIOp::create(b, arith::CeilDivUIOp::create(b, seqQ, m), m);
    } else {
      rows = llvm::alignTo(sz.seqQ, multiple);
    }
    Value dqSizes[] = {batch, headsQ, dynRows, nullptr};
    named["dq_accum"] = flatten(
        b, allocBuffer(b, {sz.batch, sz.headsQ, rows, sz.d}, dqSizes, f32));
  }
  named["dk"] = flatten(b, allocBuffer(b, {sz.batch, sz.headsQ, sz.seqK, sz.d}, kRowsD, elt));
  named["dv"] = flatten(b, allocBuffer(b, {sz.batch, sz.headsQ, sz.seqK, sz.dv}, kRowsD, elt));
  // Results, in the layouts of Q, K, V (and the bias).
  auto resultBuffer = [&](Value like, Value result) {
    auto type = cast<RankedTensorType>(result.getType());
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      sizes.push_back(dimOf(b, like, d));
    return allocBuffer(b, type.getShape(), sizes, type.getElementType());
  };
  Value gradQ = resultBuffer(q, op.getGradQuery()),
        gradK = resultBuffer(k, op.getGradKey()),
        gradV = resultBuffer(v, op.getGradValue());
  named["grad_q"] = flatten(b, gradQ);
  named["grad_k"] = flatten(b, gradK);
  named["grad_v"] = flatten(b, gradV);
  // dBias as the kernel writes it: f32, full-size [B, Hq, Sq, Sk].
  Value gradBias;
  if (spec.gradBias) {
    gradBias = memref::AllocOp::create(
        b, MemRefType::get({sz.batch, sz.headsQ, sz.seqQ, sz.seqK}, f32));
    named["dbias"] = flatten(b, gradBias);
  }
  addSizes(b, named, {batch, headsQ, headsKV, seqQ, seqK});
  // The sm90ws backward's tensor maps: placeholders of a kernels-only
  // module (checkLaunchable), whose launches are never run.
  if (spec.usesTensorMaps())
    for (const char *m : {"q_map", "k_map", "v_map", "do_map"})
      named[m] = LLVM::ZeroOp::create(b, LLVM::LLVMPointerType::get(b.getContext()));
  // A packed batch (KERNEL_ABI.md "Varlen"): the offsets and B = size - 1
  // sequences; the totals bound every length. The scratch above is sized
  // by the totals: each sequence's rows sit in it where they sit in Q / K.
  Value numSeqs;
  if (spec.varlen) {
    named["cu_seqlens_q"] = flatBuffer(b, op.getCuSeqlensQ(), i32);
    named["cu_seqlens_k"] = flatBuffer(b, op.getCuSeqlensK(), i32);
    numSeqs = arith::SubIOp::create(b, dimOf(b, op.getCuSeqlensQ(), 0),
                                    arith::ConstantIndexOp::create(b, 1));
    named["num_seqs"] = arith::IndexCastOp::create(b, i32, numSeqs);
    named["max_seqlen_q"] = named["seq_q"];
    named["max_seqlen_k"] = named["seq_k"];
  }
  auto addStrides = [&](StringRef name, Value tensor, ArrayRef<int64_t> perm) {
    addLogicalStrides(b, named, name, tensor, perm);
  };
  addStrides("q", q, qPerm);
  addStrides("k", k, kPerm);
  addStrides("v", v, vPerm);
  addStrides("o", op.getOutput(), qPerm);
  addStrides("do", op.getGradOutput(), qPerm);
  addStrides("grad_q", q, qPerm);
  addStrides("grad_k", k, kPerm);
  addStrides("grad_v", v, vPerm);
  auto addBroadcastStrides = [&](StringRef name, Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    auto strides = contiguousStrides(b, tensor);
    const char *dims[] = {"b", "h", "q", "k"};
    for (int64_t d = 0; d < 4; ++d)
      named[(name + "_stride_" + dims[d]).str()] =
          type.getDimSize(d) == 1 ? Value(arith::ConstantIntOp::create(b, i64, 0))
                                  : toI64(strides[d]);
  };
  if (spec.bias)
    addBroadcastStrides("bias", op.getBias());
  if (spec.mask)
    addBroadcastStrides("mask", op.getMask());
  auto cf = [&](double x) {
    return Value(arith::ConstantFloatOp::create(b, cast<FloatType>(f32), APFloat(float(x))));
  };
  named["scale"] = cf(iface.getEffectiveScale());
  named["window_left"] = arith::ConstantIntOp::create(b, i32, iface.getWindowLeftSize().value_or(-1));
  named["window_right"] = arith::ConstantIntOp::create(b, i32, iface.getWindowRightSize().value_or(-1));
  named["softcap"] = cf(iface.getSoftcapValue().value_or(0.0));
  named["dropout_p"] = cf(iface.getDropoutProbability());
  named["seed"] = seedOrZero(b, iface.getSeedOperand());
  // No tile order: the grid's own (the runtime's callers pass one).
  if (getBackwardStepSpec(spec, KernelSpec::Kind::Backward).takesTileOrder())
    named["kv_tile_order"] = arith::ConstantIntOp::create(b, i64, 0);

  // Block-sparse (KERNEL_ABI.md "Block-sparse backward"): the forward's
  // lists, which the transpose and dQ kernels read, and the transposed
  // lists the transpose kernel writes into a workspace for the main
  // kernel: per forward pair, counts [B', H', KB] and indices [B', H', KB,
  // QB] (the forward pair's B' and H', so a broadcast pair is transposed
  // once), contiguous.
  Value keyBlocks;
  if (spec.blockSparse) {
    BlockSparseOperands lists = iface.getBlockSparse();
    keyBlocks = arith::CeilDivUIOp::create(
        b, seqK, arith::ConstantIndexOp::create(b, spec.sparseBlockK));
    Value queryBlocks = arith::CeilDivUIOp::create(
        b, seqQ, arith::ConstantIndexOp::create(b, spec.sparseBlockQ));
    auto addPair = [&](StringRef prefix, Value num, Value indices) {
      const char *fields[] = {"num_blocks",          "indices",
                              "num_blocks_stride_b", "num_blocks_stride_h",
                              "indices_stride_b",    "indices_stride_h",
                              "slots"};
      for (auto [field, value] :
           llvm::zip_equal(fields, sparseListArgs(b, num, indices)))
        named[(prefix + "kv_" + field).str()] = value;
      auto type = cast<RankedTensorType>(num.getType());
      int64_t kDyn = ShapedType::kDynamic;
      Value outer[] = {dimOf(b, num, 0), dimOf(b, num, 1)};
      Value tNum = allocBuffer(
          b, {type.getDimSize(0), type.getDimSize(1), kDyn},
          {outer[0], outer[1], keyBlocks}, i32);
      Value tIdx = allocBuffer(
          b, {type.getDimSize(0), type.getDimSize(1), kDyn, kDyn},
          {outer[0], outer[1], keyBlocks, queryBlocks}, i32);
      std::string t = (prefix + "q_").str();
      named[t + "num_blocks"] = flatten(b, tNum);
      named[t + "indices"] = flatten(b, tIdx);
      Value rowLen[] = {keyBlocks,
                        arith::MulIOp::create(b, keyBlocks, queryBlocks)};
      const char *lists[] = {"num_blocks", "indices"};
      for (int64_t l = 0; l < 2; ++l) {
        Value strideH = rowLen[l];
        Value strideB = arith::MulIOp::create(b, strideH, outer[1]);
        named[t + lists[l] + "_stride_b"] =
            type.getDimSize(0) == 1
                ? Value(arith::ConstantIntOp::create(b, i64, 0))
                : toI64(strideB);
        named[t + lists[l] + "_stride_h"] =
            type.getDimSize(1) == 1
                ? Value(arith::ConstantIntOp::create(b, i64, 0))
                : toI64(strideH);
      }
      named[t + "slots"] = arith::IndexCastOp::create(b, i32, queryBlocks);
    };
    addPair("", lists.numBlocks, lists.indices);
    if (spec.fullBlocks)
      addPair("full_", lists.fullNumBlocks, lists.fullIndices);
  }

  Value one = arith::ConstantIndexOp::create(b, 1);
  auto launch = [&](KernelSpec::Kind kind, Value rows, int64_t rowsPerBlock) {
    KernelSpec ks = getBackwardStepSpec(spec, kind);
    // The preprocess and the postprocess are row by row: over the packed
    // [1, H, total, D] tensors the dense kernels do the same work, and
    // ops of equal dtype and dims share them.
    bool perSequence = kind == KernelSpec::Kind::Backward ||
                       kind == KernelSpec::Kind::BackwardDQ;
    ks.varlen = spec.varlen && perSequence;
    gpu::GPUFuncOp kernel = kernelOf(ks);
    SmallVector<Value> args;
    for (const std::string &p : ks.params())
      args.push_back(named.lookup(StringRef(p).split(':').second));
    Value gridX = arith::CeilDivUIOp::create(
        b, rows, arith::ConstantIndexOp::create(b, rowsPerBlock));
    // Varlen: one z per sequence, and one more for the rows past the last
    // offset (dK = dV = 0 for such keys, dQ = 0 for such queries), so that
    // every row of the results is written, as the op's contract asks.
    gpu::KernelDim3 grid{gridX, headsQ,
                         ks.varlen ? Value(arith::AddIOp::create(b, numSeqs, one))
                                   : batch};
    gpu::KernelDim3 block{arith::ConstantIndexOp::create(b, ks.threads()), one, one};
    Value smem = arith::ConstantIntOp::create(b, i32, ks.smemBytes());
    gpu::LaunchFuncOp::create(b, b.getLoc(), kernel, grid, block, smem, args);
  };
  using Kind = KernelSpec::Kind;
  launch(Kind::BackwardPreprocess, seqQ, spec.blockM);
  // One thread per (key block, batch, head) of the transposed lists.
  if (spec.blockSparse)
    launch(Kind::BackwardSparseTranspose, keyBlocks,
           getBackwardStepSpec(spec, Kind::BackwardSparseTranspose).threads());
  launch(Kind::Backward, seqK, spec.blockN);
  if (spec.deterministic)
    launch(Kind::BackwardDQ, seqQ, spec.blockM);
  launch(Kind::BackwardPostprocess, arith::MaxUIOp::create(b, seqQ, seqK),
         spec.blockM);

  auto toTensor = [&](Value buf, Value result) {
    Value t = bufferization::ToTensorOp::create(
        b, b.getLoc(), memref::getTensorTypeFromMemRefType(buf.getType()), buf,
        /*restrict=*/true, /*writable=*/true);
    if (t.getType() != result.getType())
      t = arith::TruncFOp::create(b, result.getType(), t);
    result.replaceAllUsesWith(t);
  };
  toTensor(gradQ, op.getGradQuery());
  toTensor(gradK, op.getGradKey());
  toTensor(gradV, op.getGradValue());
  if (gradBias)
    replaceGradBias(b, gradBias, op.getGradBias());
  op.erase();
}

void mlir::flash::replaceKVCacheWithLaunches(AttentionKVCacheOp op,
                                             KernelOf kernelOf,
                                             const KernelSpec &spec,
                                             int64_t splits) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), f32 = b.getF32Type();
  Type elt = spec.elementType;
  auto toI32 = [&](Value v) { return Value(arith::IndexCastOp::create(b, i32, v)); };
  auto toI64 = [&](Value v) { return Value(arith::IndexCastOp::create(b, i64, v)); };
  auto c = [&](int64_t v) { return Value(arith::ConstantIndexOp::create(b, v)); };
  SmallVector<int64_t, 4> qPerm = op.getQueryPerm();
  Value q = op.getQuery(), kc = op.getKeyCache(), vc = op.getValueCache();
  Value batch = dimOf(b, q, qPerm[0]), headsQ = dimOf(b, q, qPerm[1]),
        seqQ = dimOf(b, q, qPerm[2]);
  bool paged = spec.pageSize != 0;
  // Logical [b, h, s] strides of the caches: a contiguous cache through its
  // perm; a paged one [pages, page_size, Hkv, D] has (page, head, row).
  SmallVector<int64_t, 4> kPerm = paged ? SmallVector<int64_t, 4>{0, 2, 1, 3}
                                        : op.getKeyPerm();
  SmallVector<int64_t, 4> vPerm = paged ? SmallVector<int64_t, 4>{0, 2, 1, 3}
                                        : op.getValuePerm();
  Value headsKV = dimOf(b, kc, kPerm[1]);
  Value capacity =
      paged ? arith::MulIOp::create(b, dimOf(b, op.getBlockTable(), 1),
                                    c(spec.pageSize))
            : dimOf(b, kc, kPerm[2]);

  llvm::StringMap<Value> named;
  named["q"] = flatBuffer(b, q, elt);
  // With new_kv the caches are written in place: the updated caches are
  // the cache operands' buffers (destination style; bufferization copies an
  // operand first where it is still read after the op).
  bool appends = op.hasNewKV();
  Value kBuf, vBuf;
  if (appends) {
    kBuf = writableBuffer(b, kc);
    vBuf = writableBuffer(b, vc);
    named["k"] = flatten(b, kBuf);
    named["v"] = flatten(b, vBuf);
  } else {
    // An FP8 cache stays e4m3: the kernel reads its codes.
    Type cacheElt = spec.fp8Cache ? getElementTypeOrSelf(kc.getType()) : elt;
    named["k"] = flatBuffer(b, kc, cacheElt);
    named["v"] = flatBuffer(b, vc, cacheElt);
  }
  named["cache_seqlens"] = flatBuffer(b, op.getCacheSeqlens(), i32);
  if (paged)
    named["block_table"] = flatBuffer(b, op.getBlockTable(), i32);
  if (spec.leftPad)
    named["cache_leftpad"] = flatBuffer(b, op.getCacheLeftpad(), i32);
  if (spec.cacheBatchIdx) {
    // A pool of sequences: dim B of the (contiguous) cache is Bc.
    named["cache_batch_idx"] = flatBuffer(b, op.getCacheBatchIdx(), i32);
    named["cache_batch"] = toI32(dimOf(b, kc, kPerm[0]));
  }
  if (spec.alibi)
    named["alibi_slopes"] = flatBuffer(b, op.getAlibiSlopes(), f32);
  // O in the layout of Q; LSE [B, Hq, Sq] (always written).
  auto outTy = cast<RankedTensorType>(op.getOutput().getType());
  SmallVector<Value> outDyn;
  for (int64_t d = 0; d < 4; ++d)
    if (outTy.isDynamicDim(d))
      outDyn.push_back(dimOf(b, q, d));
  Value oBuf = memref::AllocOp::create(
      b, MemRefType::get(outTy.getShape(), outTy.getElementType()), outDyn);
  Value lseSizes[] = {batch, headsQ, seqQ};
  auto lseTy = op.getLse() ? cast<RankedTensorType>(op.getLse().getType())
                           : RankedTensorType::get({op.getBatch(), op.getHeadsQ(),
                                                    op.getSeqQ()},
                                                   f32);
  Value lseBuf = allocBuffer(b, lseTy.getShape(), lseSizes, f32);
  named["o"] = flatten(b, oBuf);
  named["lse"] = flatten(b, lseBuf);
  // The splits' partial results, [splits][B * Hq * Sq] rows.
  Value rows = arith::MulIOp::create(
      b, arith::MulIOp::create(b, batch, headsQ), seqQ);
  Value partialRows = arith::MulIOp::create(b, rows, c(splits));
  named["lse_partial"] = memref::AllocOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, f32), ValueRange{partialRows});
  named["o_partial"] = memref::AllocOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, f32),
      ValueRange{arith::MulIOp::create(b, partialRows, c(spec.headDimV))});

  addSizes(b, named, {batch, headsQ, headsKV, seqQ, capacity});
  // new_kv's rows, [B, Hkv, Snew, D] in the layout of Q: kv_append writes
  // them, and the decode counts them in each sequence's length.
  Value seqNew;
  if (appends) {
    Value kn = op.getKeyNew(), vn = op.getValueNew();
    named["k_new"] = flatBuffer(b, kn, elt);
    named["v_new"] = flatBuffer(b, vn, elt);
    addLogicalStrides(b, named, "k_new", kn, qPerm);
    addLogicalStrides(b, named, "v_new", vn, qPerm);
    seqNew = dimOf(b, kn, qPerm[2]);
    named["seq_new"] = toI32(seqNew);
  } else {
    named["seq_new"] = arith::ConstantIntOp::create(b, i32, 0);
  }
  addLogicalStrides(b, named, "q", q, qPerm);
  // Rotary: kv_append rotates the query into q_rot (Q's shape and layout,
  // so Q's strides), which the decode then reads as its q.
  KernelSpec append = getKVAppendSpec(spec, op);
  if (append.rotaryDim) {
    auto qTy = cast<RankedTensorType>(q.getType());
    SmallVector<Value> qDyn;
    for (int64_t d = 0; d < 4; ++d)
      if (qTy.isDynamicDim(d))
        qDyn.push_back(dimOf(b, q, d));
    named["q_rot"] = flatten(
        b, memref::AllocOp::create(b, MemRefType::get(qTy.getShape(), elt),
                                   qDyn));
    addLogicalStrides(b, named, "q_rot", q, qPerm);
    named["rotary_cos"] = flatBuffer(b, op.getRotaryCos(), elt);
    named["rotary_sin"] = flatBuffer(b, op.getRotarySin(), elt);
    named["seq_rotary"] = toI32(dimOf(b, op.getRotaryCos(), 0));
  }
  addLogicalStrides(b, named, "k", kc, kPerm);
  addLogicalStrides(b, named, "v", vc, vPerm);
  // O has the layout and sizes of Q (D == Dv).
  addLogicalStrides(b, named, "o", q, qPerm);
  if (paged) {
    named["num_pages"] = toI32(dimOf(b, kc, 0));
    named["block_table_stride"] = toI64(dimOf(b, op.getBlockTable(), 1));
  }
  named["num_splits"] = arith::ConstantIntOp::create(b, i32, splits);
  // merge_splits 0: the decode kernel leaves its splits to the combine
  // launched below and never touches the counters (one i32 binds the param).
  named["split_arrivals"] = memref::AllocOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, i32), ValueRange{c(1)});
  named["merge_splits"] = arith::ConstantIntOp::create(b, i32, 0);
  named["scale"] = arith::ConstantFloatOp::create(
      b, cast<FloatType>(f32), APFloat(float(op.getEffectiveScale())));
  named["window_left"] = arith::ConstantIntOp::create(
      b, i32, op.getWindowLeft().value_or(-1));
  named["window_right"] = arith::ConstantIntOp::create(
      b, i32, op.getWindowRight().value_or(-1));
  named["softcap"] = arith::ConstantFloatOp::create(
      b, cast<FloatType>(f32), APFloat(float(op.getSoftcap() ? op.getSoftcap()->convertToDouble() : 0.0)));
  // An FP8 cache's descales: [B, Hkv] with strides (Hkv, 1), [] read as
  // [1] with strides 0 (flash.attention's FP8 forward passes them alike);
  // its decode and its kv_append take them by the same names.
  if (spec.fp8Cache)
    for (auto [name, d] : {std::pair<StringRef, Value>{"k", op.getKDescale()},
                           {"v", op.getVDescale()}}) {
      bool perHead = cast<RankedTensorType>(d.getType()).getRank() == 2;
      named[(name + "_descale").str()] = descaleBuffer(b, d);
      named[(name + "_descale_stride_b").str()] =
          perHead ? toI64(dimOf(b, d, 1))
                  : Value(arith::ConstantIntOp::create(b, i64, 0));
      named[(name + "_descale_stride_h").str()] =
          arith::ConstantIntOp::create(b, i64, perHead ? 1 : 0);
    }

  Value one = c(1);
  auto launch = [&](const KernelSpec &ks, gpu::KernelDim3 grid) {
    gpu::GPUFuncOp kernel = kernelOf(ks);
    SmallVector<Value> args;
    for (const std::string &p : ks.params())
      args.push_back(named.lookup(StringRef(p).split(':').second));
    gpu::KernelDim3 block{c(ks.threads()), one, one};
    Value smem = arith::ConstantIntOp::create(b, i32, ks.smemBytes());
    gpu::LaunchFuncOp::create(b, b.getLoc(), kernel, grid, block, smem, args);
  };
  // The new rows first, on the same stream: one warp per row of
  // [B, Hkv, Snew] (docs/KERNEL_ABI.md "Decode"), then, with rotary, one
  // per query row of [B, Hq, Sq]; the decode reads the rotated query.
  if (appends) {
    Value newRows = arith::MulIOp::create(
        b, arith::MulIOp::create(b, batch, headsKV), seqNew);
    if (append.rotaryDim)
      newRows = arith::AddIOp::create(b, newRows, rows);
    launch(append,
           {arith::CeilDivUIOp::create(b, newRows, c(append.blockM)), one, one});
    if (append.rotaryDim)
      named["q"] = named.lookup("q_rot");
  }
  // Grid of docs/KERNEL_ABI.md "Decode": (splits x m-blocks of the packed
  // G * Sq rows, Hkv, B); then one warp per output row merges the splits.
  Value packed = arith::MulIOp::create(
      b, arith::DivUIOp::create(b, headsQ, headsKV), seqQ);
  Value mBlocks = arith::CeilDivUIOp::create(b, packed, c(spec.blockM));
  launch(spec, {arith::MulIOp::create(b, mBlocks, c(splits)), headsKV, batch});
  // The combine kernel is built even when this launch needs none: a
  // runtime launching the artifact's kernels at other sizes may split.
  KernelSpec combine = getDecodeCombineSpec(spec);
  if (splits > 1)
    launch(combine,
           {arith::CeilDivUIOp::create(b, rows, c(combine.blockM)), one, one});
  else
    kernelOf(combine);
  // The append and the device-side check of the cache are built with every
  // decode kernel, launched or not: the runtime serves attention_with_kvcache
  // (new rows, check_inputs) from the same artifact. An FP8 cache's
  // append quantises the rows with the descales (variant kv_dtype e4m3).
  kernelOf(append);
  kernelOf(getDecodeCheckSpec(spec));

  Value out = bufferization::ToTensorOp::create(b, b.getLoc(), outTy, oBuf,
                                                /*restrict=*/true, /*writable=*/true);
  op.getOutput().replaceAllUsesWith(out);
  if (op.getLse())
    op.getLse().replaceAllUsesWith(bufferization::ToTensorOp::create(
        b, b.getLoc(), lseTy, lseBuf, true, true));
  if (appends) {
    op.getKeyCacheOut().replaceAllUsesWith(bufferization::ToTensorOp::create(
        b, b.getLoc(), kc.getType(), kBuf, true, true));
    op.getValueCacheOut().replaceAllUsesWith(bufferization::ToTensorOp::create(
        b, b.getLoc(), vc.getType(), vBuf, true, true));
  }
  op.erase();
}