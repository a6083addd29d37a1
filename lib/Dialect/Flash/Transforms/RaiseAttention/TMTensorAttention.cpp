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
  int64_t batch = q4.getDimSize(0), heads = q4.getDimSize(1);
  Extents ext{{batch, heads, q4.getDimSize(2),
               cast<ShapedType>(ins[1].getType()).getDimSize(2)}};
  auto out4 = RankedTensorType::get(
      {batch, heads, q4.getDimSize(2), v4.getDimSize(3)}, elt);
  double scale = op.getScale()
                     ? op.getScale()->convertToDouble()
                     : 1.0 / std::sqrt(double(q4.getDimSize(3)));

  // K and V as the model had them before torch-mlir's layout changes: a
  // head repeat (enable_gqa, or the model's repeat_kv) is dropped for GQA,
  // transposes become perms, a constant scaling of K folds into `scale`.
  // What does not trace to a rank-4 [B, Hkv, S, D] view is read as is.
  SmallVector<Role> roles = {Role::B, Role::H, Role::S, Role::D};
  SmallVector<int64_t> kPerm = {0, 1, 2, 3}, vPerm = {0, 1, 2, 3};
  Value k = ins[1], v = ins[2];
  {
    Explainer local;
    auto kt = traceOperand(k, roles, /*allowTranspose=*/true,
                           /*allowGqa=*/true, local);
    auto vt = traceOperand(v, roles, /*allowTranspose=*/true,
                           /*allowGqa=*/true, local);
    auto usable = [&](const FailureOr<OperandView> &t) {
      return succeeded(t) && t->bhMerged < 0 && t->headStride == 1 &&
             llvm::all_of(t->perm, [](int64_t d) { return d >= 0; }) &&
             cast<ShapedType>(t->base.getType()).getRank() == 4;
    };
    if (usable(kt) && usable(vt) && kt->kvGroups == vt->kvGroups &&
        vt->scale == 1.0) {
      k = kt->base;
      v = vt->base;
      kPerm.assign(kt->perm, kt->perm + 4);
      vPerm.assign(vt->perm, vt->perm + 4);
      scale *= kt->scale;
    }
  }

  // A mask that is a band of k - q (torch-mlir's is_causal mask, a model's
  // causal or sliding-window mask) becomes attributes, so kernels skip
  // tiles; any other mask is an operand: f32/float additive `bias`, i1
  // `mask`.
  Value bias, mask;
  MaskAttrs band;
  if (maskIn) {
    Value m4 = ins[3];
    ExprBuilder eb(Value(), {}, ext);
    Explainer local;
    auto tree = eb.build(m4, identityIndex(4), local);
    Expr *keep = nullptr;
    if (succeeded(tree) && maskElt.isInteger(1)) {
      keep = *tree;
    } else if (succeeded(tree) && (*tree)->kind == Expr::Op &&
               (*tree)->op == ScalarKind::Select) {
      // select(c, 0, -inf) keeps c; select(c, -inf, 0) keeps !c.
      Expr *c = (*tree)->operands[0];
      const Expr *t = (*tree)->operands[1], *f = (*tree)->operands[2];
      if (isConstant(t, 0.0) && isMaskingConstant(f))
        keep = c;
      else if (isMaskingConstant(t) && isConstant(f, 0.0))
        keep = eb.op(ScalarKind::Not, {c}, c->type);
    }
    if (!keep || failed(analyzeMasks({keep}, ext, band, local)) ||
        !band.rest.empty()) {
      band = MaskAttrs();
      (maskElt.isInteger(1) ? mask : bias) = m4;
    }
  }
  CausalAlignmentAttr causal;
  if (band.causalBottomRight)
    causal = CausalAlignmentAttr::get(
        b.getContext(), *band.causalBottomRight ? CausalAlignment::BottomRight
                                                : CausalAlignment::TopLeft);
  auto i64 = [&](std::optional<int64_t> x) {
    return x ? b.getI64IntegerAttr(*x) : IntegerAttr();
  };
  auto permAttr = [&](ArrayRef<int64_t> p) {
    return llvm::equal(p, ArrayRef<int64_t>{0, 1, 2, 3})
               ? DenseI64ArrayAttr()
               : b.getDenseI64ArrayAttr(p);
  };
  auto flashOp = AttentionOp::create(
      b, loc, out4, /*lse=*/Type(), ins[0], k, v, bias, mask,
      /*seed=*/Value(), /*cu_seqlens_q=*/Value(), /*cu_seqlens_k=*/Value(),
      /*q_descale=*/Value(), /*k_descale=*/Value(), /*v_descale=*/Value(),
      /*kv_num_blocks=*/Value(), /*kv_indices=*/Value(),
      /*full_kv_num_blocks=*/Value(), /*full_kv_indices=*/Value(),
      /*alibi_slopes=*/Value(),
      b.getF32FloatAttr(scale), causal,
      i64(band.windowLeft), i64(band.windowRight), FloatAttr(), FloatAttr(),
      DenseI64ArrayAttr(), permAttr(kPerm), permAttr(vPerm),
      KernelConfigAttr(), /*sparse_block_size=*/DenseI64ArrayAttr(),
      /*descale_block_size=*/DenseI64ArrayAttr());
  Value out = flashOp.getOutput();
  if (out4 != outTy) {
    // torch-mlir expands the result back to [B, H, S, Dv]: that is the op's
    // output as is. Other users get it collapsed.
    SmallVector<ReassociationIndices> bh = {{0, 1}, {2}, {3}};
    for (Operation *user : llvm::make_early_inc_range(op->getUsers())) {
      auto ex = dyn_cast<tensor::ExpandShapeOp>(user);
      if (ex && ex.getResultType() == out4 &&
          ex.getReassociationIndices() == bh) {
        ex.getResult().replaceAllUsesWith(out);
        ex->erase();
      }
    }
    if (!op->use_empty())
      out = tensor::CollapseShapeOp::create(b, loc, outTy, out, bh);
  }
  // The output buffer torch-mlir filled with zeros is dead after the op,
  // as are the collapses it no longer reads.
  SmallVector<Operation *> defs;
  for (Value v : op->getOperands())
    if (Operation *def = v.getDefiningOp())
      defs.push_back(def);
  op->getResult(0).replaceAllUsesWith(out);
  op->erase();
  DenseSet<Operation *> erased;
  for (Operation *def : defs)
    eraseDead(def, erased);
  return flashOp.getOperation();
}
