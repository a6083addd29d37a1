//===- TosaForm.cpp - TOSA ops as neutral views ---------------------------===//
//
// torch-mlir's TOSA output: elementwise ops on tensors of equal rank with
// size-1 broadcasting, reduce_max / reduce_sum keeping the axis, 3-D
// tosa.matmul, tosa.reshape with a !tosa.shape, tosa.transpose, and
// tosa.tile of a unit dimension for head broadcasts.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::flash::raise;

/// Broadcast maps of TOSA's implicit broadcasting: a size-1 input dim is read
/// at 0 where the result is larger.
static AffineMap broadcastMap(MLIRContext *ctx, ShapedType in,
                              ShapedType out) {
  SmallVector<AffineExpr> res;
  for (int64_t d = 0; d < out.getRank(); ++d)
    res.push_back(in.getDimSize(d) == 1 && out.getDimSize(d) != 1
                      ? getAffineConstantExpr(0, ctx)
                      : getAffineDimExpr(d, ctx));
  return AffineMap::get(out.getRank(), 0, res, ctx);
}

/// Zero shift / zero points: the op is the plain float operation.
static bool isZeroConst(Value v) {
  auto c = denseConstant(v);
  if (!c)
    return false;
  auto dense = dyn_cast<DenseElementsAttr>(*c);
  if (!dense || !dense.isSplat())
    return false;
  Attribute a = dense.getSplatValue<Attribute>();
  if (auto i = dyn_cast<IntegerAttr>(a))
    return i.getValue().isZero();
  if (auto f = dyn_cast<FloatAttr>(a))
    return f.getValue().isZero();
  return false;
}

std::optional<ElementwiseView>
mlir::flash::raise::tosaElementwise(Operation *op) {
  if (op->getNumResults() != 1)
    return std::nullopt;
  auto outTy = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!outTy)
    return std::nullopt;
  ElementwiseView v;
  v.op = op;
  v.outputMap = AffineMap::getMultiDimIdentityMap(outTy.getRank(),
                                                  op->getContext());
  auto setInputs = [&](ValueRange ins) {
    for (Value in : ins) {
      auto inTy = dyn_cast<RankedTensorType>(in.getType());
      if (!inTy || inTy.getRank() != outTy.getRank())
        return false;
      v.inputs.push_back(in);
      v.inputMaps.push_back(broadcastMap(op->getContext(), inTy, outTy));
    }
    return true;
  };
  auto binary = [&](ScalarKind k) {
    v.kind = k;
    return setInputs({op->getOperand(0), op->getOperand(1)});
  };
  auto unary = [&](ScalarKind k) {
    v.kind = k;
    return setInputs({op->getOperand(0)});
  };
  using namespace tosa;
  bool ok =
      llvm::TypeSwitch<Operation *, bool>(op)
          .Case<AddOp>([&](auto) { return binary(ScalarKind::Add); })
          .Case<SubOp>([&](auto) { return binary(ScalarKind::Sub); })
          .Case<MulOp>([&](MulOp m) {
            return isZeroConst(m.getShift()) && binary(ScalarKind::Mul);
          })
          .Case<MaximumOp>([&](auto) { return binary(ScalarKind::Max); })
          .Case<MinimumOp>([&](auto) { return binary(ScalarKind::Min); })
          .Case<LogicalAndOp>([&](auto) { return binary(ScalarKind::And); })
          .Case<LogicalOrOp>([&](auto) { return binary(ScalarKind::Or); })
          .Case<LogicalXorOp>([&](auto) { return binary(ScalarKind::Xor); })
          .Case<GreaterOp, GreaterEqualOp, EqualOp>([&](Operation *o) {
            bool isFloat = isa<FloatType>(
                getElementTypeOrSelf(o->getOperand(0).getType()));
            v.kind = isFloat ? ScalarKind::CmpF : ScalarKind::CmpI;
            if (isFloat)
              v.predicate = int64_t(isa<GreaterOp>(o) ? arith::CmpFPredicate::OGT
                                    : isa<GreaterEqualOp>(o)
                                        ? arith::CmpFPredicate::OGE
                                        : arith::CmpFPredicate::OEQ);
            else
              v.predicate = int64_t(isa<GreaterOp>(o) ? arith::CmpIPredicate::sgt
                                    : isa<GreaterEqualOp>(o)
                                        ? arith::CmpIPredicate::sge
                                        : arith::CmpIPredicate::eq);
            return setInputs({o->getOperand(0), o->getOperand(1)});
          })
          .Case<SelectOp>([&](SelectOp s) {
            v.kind = ScalarKind::Select;
            return setInputs(s->getOperands());
          })
          .Case<NegateOp>([&](NegateOp n) {
            return isZeroConst(n.getInput1Zp()) &&
                   isZeroConst(n.getOutputZp()) && unary(ScalarKind::Neg);
          })
          .Case<ExpOp>([&](auto) { return unary(ScalarKind::Exp); })
          .Case<TanhOp>([&](auto) { return unary(ScalarKind::Tanh); })
          .Case<AbsOp>([&](auto) { return unary(ScalarKind::Abs); })
          .Case<LogOp>([&](auto) { return unary(ScalarKind::Log); })
          .Case<RsqrtOp>([&](auto) { return unary(ScalarKind::Rsqrt); })
          .Case<ReciprocalOp>([&](auto) { return unary(ScalarKind::Recip); })
          .Case<LogicalNotOp>([&](auto) { return unary(ScalarKind::Not); })
          .Case<CastOp>([&](CastOp c) {
            v.castUnsigned =
                getElementTypeOrSelf(c.getInput().getType()).isInteger(1);
            return unary(ScalarKind::Cast);
          })
          .Case<TransposeOp>([&](TransposeOp t) {
            // Result dim i reads input dim perms[i].
            SmallVector<AffineExpr> res(outTy.getRank());
            for (auto [i, p] : llvm::enumerate(t.getPerms()))
              res[p] = getAffineDimExpr(i, op->getContext());
            v.kind = ScalarKind::Copy;
            v.inputs.push_back(t.getInput1());
            v.inputMaps.push_back(
                AffineMap::get(outTy.getRank(), 0, res, op->getContext()));
            return true;
          })
          .Case<TileOp>([&](TileOp t) {
            // Tiling a unit dimension is a broadcast; other tilings repeat
            // blocks and are not elementwise reads.
            auto inTy = cast<RankedTensorType>(t.getInput1().getType());
            for (int64_t d = 0; d < outTy.getRank(); ++d)
              if (inTy.getDimSize(d) != outTy.getDimSize(d) &&
                  inTy.getDimSize(d) != 1)
                return false;
            return unary(ScalarKind::Copy);
          })
          .Case<IdentityOp>([&](auto) { return unary(ScalarKind::Copy); })
          .Default([](Operation *) { return false; });
  if (!ok)
    return std::nullopt;
  return v;
}

std::optional<ReductionView> mlir::flash::raise::tosaReduction(Operation *op) {
  ReductionView v;
  v.op = op;
  v.keepDim = true;
  if (auto m = dyn_cast<tosa::ReduceMaxOp>(op)) {
    v.kind = ReductionKind::Max;
    v.input = m.getInput();
    v.axis = m.getAxis();
  } else if (auto s = dyn_cast<tosa::ReduceSumOp>(op)) {
    v.kind = ReductionKind::Sum;
    v.input = s.getInput();
    v.axis = s.getAxis();
  } else if (auto a = dyn_cast<tosa::ReduceAllOp>(op)) {
    v.kind = ReductionKind::And;
    v.input = a.getInput();
    v.axis = a.getAxis();
  } else {
    return std::nullopt;
  }
  return v;
}

std::optional<ContractionView>
mlir::flash::raise::tosaContraction(Operation *op) {
  auto mm = dyn_cast<tosa::MatMulOp>(op);
  if (!mm || !isZeroConst(mm.getAZp()) || !isZeroConst(mm.getBZp()))
    return std::nullopt;
  MLIRContext *ctx = op->getContext();
  AffineExpr b, m, n, r;
  bindDims(ctx, b, m, n, r);
  ContractionView v;
  v.op = op;
  v.lhs = mm.getA();
  v.rhs = mm.getB();
  v.result = mm.getResult();
  v.maps = {AffineMap::get(4, 0, {b, m, r}, ctx),
            AffineMap::get(4, 0, {b, r, n}, ctx),
            AffineMap::get(4, 0, {b, m, n}, ctx)};
  v.batchDims = {0};
  v.mDim = 1;
  v.nDim = 2;
  v.rDim = 3;
  return v;
}

std::optional<ReshapeView> mlir::flash::raise::tosaReshape(Operation *op) {
  auto r = dyn_cast<tosa::ReshapeOp>(op);
  if (!r)
    return std::nullopt;
  auto src = dyn_cast<RankedTensorType>(r.getInput1().getType());
  auto res = dyn_cast<RankedTensorType>(r.getResult().getType());
  if (!src || !res || !src.hasStaticShape() || !res.hasStaticShape() ||
      src.getRank() == res.getRank())
    return std::nullopt;
  bool expand = src.getRank() < res.getRank();
  // The utility takes the expanded type first.
  auto reassoc = expand ? getReassociationIndicesForReshape(res, src)
                        : getReassociationIndicesForReshape(src, res);
  if (!reassoc)
    return std::nullopt;
  return ReshapeView{r.getInput1(), *reassoc, expand};
}
