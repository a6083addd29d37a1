//===- TMTensorAttention.cpp - tm_tensor.attention as flash.attention -----===//
//
// torch-mlir lowers a legal aten.scaled_dot_product_attention to
// tm_tensor.attention: Q [BH, M, D], K [BH, N, D], V [BH, N, Dv] and an
// optional mask [BH, M, N], the batch and head dims collapsed into one (any
// leading dims are batch dims; causal masks, mask broadcasts and enable_gqa
// repeats are materialised by torch-mlir before the op). Its semantics
// (TMTensorOps.td): scores times `scale`, or 1/sqrt(D) without it; a float
// mask is added, an i1 mask keeps the scores where true and sets the rest to
// -inf; a fully masked row gives 0. That is flash.attention with the mask as
// `bias` (float) or `mask` (i1) and the scale as an attribute.
//
// The operands are [1, BH, S, D] views, or the rank-4 tensors torch-mlir
// collapsed when all of Q, K, V and the mask were collapsed alike, so that
// B and H are the model's.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"
#include "flashfuse/Dialect/TMTensor/IR/TMTensorDialect.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::raise;

static constexpr StringLiteral kStep = "tm_tensor.attention";

/// The rank-4 tensor `v` collapses with [[0, 1], [2], [3]], if it does.
static Value collapsedFrom4(Value v) {
  auto c = v.getDefiningOp<tensor::CollapseShapeOp>();
  if (!c || c.getSrcType().getRank() != 4)
    return Value();
  SmallVector<ReassociationIndices> want = {{0, 1}, {2}, {3}};
  return c.getReassociationIndices() == want ? c.getSrc() : Value();
}

FailureOr<Operation *>
mlir::flash::raise::raiseTMTensorAttention(Operation *operation,
                                           Explainer &why) {
  auto op = cast<tm_tensor::AttentionOp>(operation);
  if (op->getNumResults() != 1)
    return why.fail(kStep, "the op writes a memref, not a tensor", op);
  SmallVector<Value> ins(op.getInputs());
  for (Value v : ins)
    if (!cast<ShapedType>(v.getType()).hasStaticShape())
      return why.fail(kStep, "dynamic shapes are not supported", op);
  auto qTy = cast<RankedTensorType>(op.getQuery().getType());
  auto outTy = cast<RankedTensorType>(op->getResult(0).getType());
  Type elt = qTy.getElementType();
  if (!isa<Float16Type, BFloat16Type, Float32Type>(elt))
    return why.fail(kStep, "element type is not f16, bf16 or f32", op);
  for (Value v : {op.getKey(), op.getValue(), Value(op->getResult(0))})
    if (getElementTypeOrSelf(v.getType()) != elt)
      return why.fail(kStep,
                      "Q, K, V and the output do not share one element type",
                      op);
  Value maskIn = op.getMask();
  Type maskElt = maskIn ? getElementTypeOrSelf(maskIn.getType()) : Type();
  if (maskIn && !maskElt.isInteger(1) && maskElt != elt && !maskElt.isF32())
    return why.fail(kStep,
                    "the mask's element type is neither i1, f32 nor the "
                    "operands' type",
                    op);
  int64_t rank = qTy.getRank();
  if (rank != 3 && rank != 4)
    return why.fail(kStep,
                    "rank-" + Twine(rank) +
                        " operands: only one or two batch dims ([BH, S, D] or "
                        "[B, H, S, D]) are raised",
                    op);

  OpBuilder b(op);
  Location loc = op.getLoc();
  if (rank == 3) {
    // Undo torch-mlir's collapse of (B, H) when every operand had one; else
    // view [BH, S, D] as [1, BH, S, D].
    SmallVector<Value> src;
    for (Value v : ins)
      src.push_back(collapsedFrom4(v));
    bool undo = llvm::all_of(src, [&](Value s) {
      return s && cast<ShapedType>(s.getType()).getDimSize(0) ==
                      cast<ShapedType>(src[0].getType()).getDimSize(0);
    });
    for (size_t i = 0; i < ins.size(); ++i) {
      if (undo) {
        ins[i] = src[i];
        continue;
      }
      auto ty = cast<RankedTensorType>(ins[i].getType());
      SmallVector<int64_t> shape = {1};
      llvm::append_range(shape, ty.getShape());
      ins[i] = tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get(shape, ty.getElementType()), ins[i],
          SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
    }
  }
  auto q4 = cast<RankedTensorType>(ins[0].getType());
  auto v4 = cast<RankedTensorType>(ins[2].getType());
  auto out4 = RankedTensorType::get(
      {q4.getDimSize(0), q4.getDimSize(1), q4.getDimSize(2), v4.getDimSize(3)},
      elt);
  double scale = op.getScale()
                     ? op.getScale()->convertToDouble()
                     : 1.0 / std::sqrt(double(q4.getDimSize(3)));
  Value bias, mask;
  if (maskIn)
    (maskElt.isInteger(1) ? mask : bias) = ins[3];
  auto flashOp = AttentionOp::create(
      b, loc, out4, /*lse=*/Type(), ins[0], ins[1], ins[2], bias, mask,
      /*seed=*/Value(), b.getF32FloatAttr(scale), CausalAlignmentAttr(),
      IntegerAttr(), IntegerAttr(), FloatAttr(), FloatAttr(),
      DenseI64ArrayAttr(), DenseI64ArrayAttr(), DenseI64ArrayAttr(),
      KernelConfigAttr());
  Value out = flashOp.getOutput();
  if (out4 != outTy)
    out = tensor::CollapseShapeOp::create(
        b, loc, outTy, out, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
  // The output buffer torch-mlir filled with zeros is dead after the op,
  // as are the collapses it no longer reads.
  SmallVector<Operation *> work;
  for (Value v : op->getOperands())
    if (Operation *def = v.getDefiningOp())
      work.push_back(def);
  op->getResult(0).replaceAllUsesWith(out);
  op->erase();
  DenseSet<Operation *> erased;
  while (!work.empty()) {
    Operation *d = work.pop_back_val();
    if (erased.contains(d) || !isOpTriviallyDead(d))
      continue;
    for (Value o : d->getOperands())
      if (Operation *p = o.getDefiningOp())
        work.push_back(p);
    erased.insert(d);
    d->erase();
  }
  return flashOp.getOperation();
}
