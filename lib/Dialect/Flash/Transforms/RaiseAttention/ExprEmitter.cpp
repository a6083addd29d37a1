//===- ExprEmitter.cpp - score_mod / mask_mod bodies from trees -----------===//
//
// Regions compute in f32 (the op's softmax precision), whatever float type
// the model's elementwise ops used; integer and index arithmetic keeps its
// types. Tensors the tree reads are captured from above the op and read
// with tensor.extract at the emitted index arithmetic.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::flash::raise;

static Type normalise(Type t) {
  return isa<FloatType>(t) ? Float32Type::get(t.getContext()) : t;
}

static Value emitLin(OpBuilder &b, Location loc, const LinExpr &l,
                     ArrayRef<Value> idx) {
  Value acc;
  for (unsigned d = 0; d < kNumLogical; ++d) {
    if (!l.c[d])
      continue;
    Value term = idx[d];
    if (l.c[d] != 1)
      term = arith::MulIOp::create(
          b, loc, term, arith::ConstantIndexOp::create(b, loc, l.c[d]));
    acc = acc ? arith::AddIOp::create(b, loc, acc, term).getResult() : term;
  }
  if (l.cst != 0 || !acc) {
    Value c = arith::ConstantIndexOp::create(b, loc, l.cst);
    acc = acc ? arith::AddIOp::create(b, loc, acc, c).getResult() : c;
  }
  return acc;
}

/// Converts `v` to `to` (float <-> int <-> index) as the source cast did.
static Value convert(OpBuilder &b, Location loc, Value v, Type to,
                     bool isUnsigned) {
  Type from = v.getType();
  if (from == to)
    return v;
  if (isa<IndexType>(from)) {
    Type i64 = b.getI64Type();
    v = isUnsigned ? arith::IndexCastUIOp::create(b, loc, i64, v).getResult()
                   : arith::IndexCastOp::create(b, loc, i64, v).getResult();
    return convert(b, loc, v, to, isUnsigned);
  }
  if (isa<IndexType>(to)) {
    if (isa<FloatType>(from))
      v = arith::FPToSIOp::create(b, loc, b.getI64Type(), v);
    return isUnsigned ? arith::IndexCastUIOp::create(b, loc, to, v).getResult()
                      : arith::IndexCastOp::create(b, loc, to, v).getResult();
  }
  if (isa<FloatType>(from) && isa<FloatType>(to))
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? arith::ExtFOp::create(b, loc, to, v).getResult()
               : arith::TruncFOp::create(b, loc, to, v).getResult();
  if (isa<FloatType>(to))
    return isUnsigned || from.isInteger(1)
               ? arith::UIToFPOp::create(b, loc, to, v).getResult()
               : arith::SIToFPOp::create(b, loc, to, v).getResult();
  if (isa<FloatType>(from))
    return arith::FPToSIOp::create(b, loc, to, v);
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw > tw)
    return arith::TruncIOp::create(b, loc, to, v);
  return isUnsigned || fw == 1
             ? arith::ExtUIOp::create(b, loc, to, v).getResult()
             : arith::ExtSIOp::create(b, loc, to, v).getResult();
}

/// The float or the integer form of a binary arith op.
template <typename FloatOp, typename IntOp>
static Value binary(OpBuilder &b, Location loc, bool isFloat,
                    ArrayRef<Value> a) {
  if (isFloat)
    return FloatOp::create(b, loc, a[0], a[1]);
  return IntOp::create(b, loc, a[0], a[1]);
}

Value mlir::flash::raise::emitExpr(OpBuilder &b, Location loc, const Expr *e,
                                   Value scoreArg, ArrayRef<Value> idx,
                                   DenseMap<const Expr *, Value> &memo) {
  if (Value v = memo.lookup(e))
    return v;
  Type ty = normalise(e->type);
  Value result;
  switch (e->kind) {
  case Expr::Score:
    result = scoreArg;
    break;
  case Expr::Const:
    if (isa<FloatType>(ty))
      result = arith::ConstantOp::create(b, loc, b.getFloatAttr(ty, e->fval));
    else if (isa<IndexType>(ty))
      result = arith::ConstantIndexOp::create(b, loc, int64_t(e->fval));
    else
      result = arith::ConstantOp::create(
          b, loc, b.getIntegerAttr(ty, int64_t(e->fval)));
    break;
  case Expr::Index:
    result = convert(b, loc, emitLin(b, loc, e->index, idx), ty, false);
    break;
  case Expr::Read: {
    SmallVector<Value> at;
    for (const LinExpr &l : e->at)
      at.push_back(emitLin(b, loc, l, idx));
    result = tensor::ExtractOp::create(b, loc, e->tensor, at);
    result = convert(b, loc, result, ty, false);
    break;
  }
  case Expr::Op: {
    SmallVector<Value, 3> a;
    for (const Expr *o : e->operands)
      a.push_back(emitExpr(b, loc, o, scoreArg, idx, memo));
    bool f = isa<FloatType>(ty);
    switch (e->op) {
    case ScalarKind::Add:
      result = binary<arith::AddFOp, arith::AddIOp>(b, loc, f, a);
      break;
    case ScalarKind::Sub:
      result = binary<arith::SubFOp, arith::SubIOp>(b, loc, f, a);
      break;
    case ScalarKind::Mul:
      result = binary<arith::MulFOp, arith::MulIOp>(b, loc, f, a);
      break;
    case ScalarKind::Div:
      result = binary<arith::DivFOp, arith::DivSIOp>(b, loc, f, a);
      break;
    case ScalarKind::Max:
      result = binary<arith::MaximumFOp, arith::MaxSIOp>(b, loc, f, a);
      break;
    case ScalarKind::Min:
      result = binary<arith::MinimumFOp, arith::MinSIOp>(b, loc, f, a);
      break;
    case ScalarKind::Recip:
      result = arith::DivFOp::create(
          b, loc, arith::ConstantOp::create(b, loc, b.getFloatAttr(ty, 1.0)),
          a[0]);
      break;
    case ScalarKind::Neg:
      result =
          f ? arith::NegFOp::create(b, loc, a[0]).getResult()
            : arith::SubIOp::create(
                  b, loc, arith::ConstantOp::create(b, loc, b.getZeroAttr(ty)),
                  a[0])
                  .getResult();
      break;
    case ScalarKind::Exp:
      result = math::ExpOp::create(b, loc, a[0]);
      break;
    case ScalarKind::Tanh:
      result = math::TanhOp::create(b, loc, a[0]);
      break;
    case ScalarKind::Abs:
      result = f ? math::AbsFOp::create(b, loc, a[0]).getResult()
                 : math::AbsIOp::create(b, loc, a[0]).getResult();
      break;
    case ScalarKind::Log:
      result = math::LogOp::create(b, loc, a[0]);
      break;
    case ScalarKind::Sqrt:
      result = math::SqrtOp::create(b, loc, a[0]);
      break;
    case ScalarKind::Rsqrt:
      result = math::RsqrtOp::create(b, loc, a[0]);
      break;
    case ScalarKind::Select:
      result = arith::SelectOp::create(b, loc, a[0], a[1], a[2]);
      break;
    case ScalarKind::CmpF:
      result = arith::CmpFOp::create(b, loc, arith::CmpFPredicate(e->predicate),
                                     a[0], a[1]);
      break;
    case ScalarKind::CmpI:
      result = arith::CmpIOp::create(b, loc, arith::CmpIPredicate(e->predicate),
                                     a[0], a[1]);
      break;
    case ScalarKind::And:
      result = arith::AndIOp::create(b, loc, a[0], a[1]);
      break;
    case ScalarKind::Or:
      result = arith::OrIOp::create(b, loc, a[0], a[1]);
      break;
    case ScalarKind::Xor:
      result = arith::XOrIOp::create(b, loc, a[0], a[1]);
      break;
    case ScalarKind::Not:
      result = arith::XOrIOp::create(
          b, loc, a[0],
          arith::ConstantOp::create(b, loc,
                                    b.getIntegerAttr(a[0].getType(), 1)));
      break;
    case ScalarKind::Cast:
    case ScalarKind::Copy:
      result = convert(b, loc, a[0], ty, e->castUnsigned);
      break;
    }
    break;
  }
  }
  memo[e] = result;
  return result;
}
