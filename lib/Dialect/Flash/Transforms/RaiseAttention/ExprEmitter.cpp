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
      term = b.create<arith::MulIOp>(
          loc, term, b.create<arith::ConstantIndexOp>(loc, l.c[d]));
    acc = acc ? b.create<arith::AddIOp>(loc, acc, term).getResult() : term;
  }
  if (l.cst != 0 || !acc) {
    Value c = b.create<arith::ConstantIndexOp>(loc, l.cst);
    acc = acc ? b.create<arith::AddIOp>(loc, acc, c).getResult() : c;
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
    v = isUnsigned ? b.create<arith::IndexCastUIOp>(loc, i64, v).getResult()
                   : b.create<arith::IndexCastOp>(loc, i64, v).getResult();
    return convert(b, loc, v, to, isUnsigned);
  }
  if (isa<IndexType>(to)) {
    if (isa<FloatType>(from))
      v = b.create<arith::FPToSIOp>(loc, b.getI64Type(), v);
    return isUnsigned ? b.create<arith::IndexCastUIOp>(loc, to, v).getResult()
                      : b.create<arith::IndexCastOp>(loc, to, v).getResult();
  }
  if (isa<FloatType>(from) && isa<FloatType>(to))
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? b.create<arith::ExtFOp>(loc, to, v).getResult()
               : b.create<arith::TruncFOp>(loc, to, v).getResult();
  if (isa<FloatType>(to))
    return isUnsigned || from.isInteger(1)
               ? b.create<arith::UIToFPOp>(loc, to, v).getResult()
               : b.create<arith::SIToFPOp>(loc, to, v).getResult();
  if (isa<FloatType>(from))
    return b.create<arith::FPToSIOp>(loc, to, v);
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw > tw)
    return b.create<arith::TruncIOp>(loc, to, v);
  return isUnsigned || fw == 1 ? b.create<arith::ExtUIOp>(loc, to, v).getResult()
                               : b.create<arith::ExtSIOp>(loc, to, v).getResult();
}

/// The float or the integer form of a binary arith op.
template <typename FloatOp, typename IntOp>
static Value binary(OpBuilder &b, Location loc, bool isFloat,
                    ArrayRef<Value> a) {
  if (isFloat)
    return b.create<FloatOp>(loc, a[0], a[1]);
  return b.create<IntOp>(loc, a[0], a[1]);
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
      result = b.create<arith::ConstantOp>(loc, b.getFloatAttr(ty, e->fval));
    else if (isa<IndexType>(ty))
      result = b.create<arith::ConstantIndexOp>(loc, int64_t(e->fval));
    else
      result = b.create<arith::ConstantOp>(
          loc, b.getIntegerAttr(ty, int64_t(e->fval)));
    break;
  case Expr::Index:
    result = convert(b, loc, emitLin(b, loc, e->index, idx), ty, false);
    break;
  case Expr::Read: {
    SmallVector<Value> at;
    for (const LinExpr &l : e->at)
      at.push_back(emitLin(b, loc, l, idx));
    result = b.create<tensor::ExtractOp>(loc, e->tensor, at);
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
      result = b.create<arith::DivFOp>(
          loc, b.create<arith::ConstantOp>(loc, b.getFloatAttr(ty, 1.0)), a[0]);
      break;
    case ScalarKind::Neg:
      result = f ? b.create<arith::NegFOp>(loc, a[0]).getResult()
                 : b.create<arith::SubIOp>(
                        loc, b.create<arith::ConstantOp>(loc, b.getZeroAttr(ty)),
                        a[0]).getResult();
      break;
    case ScalarKind::Exp:
      result = b.create<math::ExpOp>(loc, a[0]);
      break;
    case ScalarKind::Tanh:
      result = b.create<math::TanhOp>(loc, a[0]);
      break;
    case ScalarKind::Abs:
      result = f ? b.create<math::AbsFOp>(loc, a[0]).getResult()
                 : b.create<math::AbsIOp>(loc, a[0]).getResult();
      break;
    case ScalarKind::Log:
      result = b.create<math::LogOp>(loc, a[0]);
      break;
    case ScalarKind::Sqrt:
      result = b.create<math::SqrtOp>(loc, a[0]);
      break;
    case ScalarKind::Rsqrt:
      result = b.create<math::RsqrtOp>(loc, a[0]);
      break;
    case ScalarKind::Select:
      result = b.create<arith::SelectOp>(loc, a[0], a[1], a[2]);
      break;
    case ScalarKind::CmpF:
      result = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate(e->predicate),
                                       a[0], a[1]);
      break;
    case ScalarKind::CmpI:
      result = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate(e->predicate),
                                       a[0], a[1]);
      break;
    case ScalarKind::And:
      result = b.create<arith::AndIOp>(loc, a[0], a[1]);
      break;
    case ScalarKind::Or:
      result = b.create<arith::OrIOp>(loc, a[0], a[1]);
      break;
    case ScalarKind::Xor:
      result = b.create<arith::XOrIOp>(loc, a[0], a[1]);
      break;
    case ScalarKind::Not:
      result = b.create<arith::XOrIOp>(
          loc, a[0],
          b.create<arith::ConstantOp>(loc, b.getIntegerAttr(a[0].getType(), 1)));
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
