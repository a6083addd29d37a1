//===- ScoreExpr.cpp - scalar expression trees of elementwise chains ------===//
//
// Between Q·Kᵀ and the softmax, models spell the score modification as a
// chain of elementwise ops (one per torch op, or fused), in either input
// form. Reading that chain as one scalar tree over (b, h, q, k) lets a single
// analysis find scale, softcap, bias and masks no matter how the ops were
// split, broadcast or reshaped.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::flash::raise;

Expr *ExprBuilder::make(Expr::Kind k, Type t) {
  Expr *e = new (alloc.Allocate()) Expr();
  e->kind = k;
  e->type = t;
  return e;
}

Expr *ExprBuilder::constant(double v, Type t) {
  Expr *e = make(Expr::Const, t);
  e->fval = v;
  e->isFloat = isa<FloatType>(t);
  return e;
}

Expr *ExprBuilder::op(ScalarKind k, ArrayRef<Expr *> ops, Type t) {
  // not(not x) = x and not(x xor true) = x on i1. A model's
  // masked_fill(~keep, -inf) negates its keep condition twice (the `~` and
  // the fill); folding the pair leaves keep itself in the mask_mod, in the
  // form its readers recognise (the band analysis here, the document compare
  // of flash-derive-block-sparsity) rather than under two xori.
  if (k == ScalarKind::Not && ops.size() == 1 && t.isInteger(1)) {
    Expr *x = ops[0];
    if (x->kind == Expr::Op && x->op == ScalarKind::Not)
      return x->operands[0];
    if (x->kind == Expr::Op && x->op == ScalarKind::Xor &&
        x->type.isInteger(1)) {
      if (isConstant(x->operands[1], 1.0))
        return x->operands[0];
      if (isConstant(x->operands[0], 1.0))
        return x->operands[1];
    }
  }
  Expr *e = make(Expr::Op, t);
  e->op = k;
  e->operands.assign(ops.begin(), ops.end());
  e->hasScore = llvm::any_of(ops, [](Expr *o) { return o->hasScore; });
  return e;
}

static std::optional<double> scalarValue(Attribute a) {
  if (auto f = dyn_cast<FloatAttr>(a))
    return f.getValueAsDouble();
  if (auto i = dyn_cast<IntegerAttr>(a))
    return i.getType().isInteger(1) ? double(i.getValue().getBoolValue())
                                    : double(i.getValue().getSExtValue());
  return std::nullopt;
}

/// Whether `v` is computed from `score`. Within one block a value defined
/// before the score op cannot depend on it, which bounds the search to the
/// few ops between the matmul and the softmax.
static bool dependsOn(Value v, Value score, unsigned &budget) {
  if (v == score)
    return true;
  Operation *def = v.getDefiningOp();
  Operation *sdef = score.getDefiningOp();
  if (!def || !sdef)
    return false;
  if (def->getBlock() == sdef->getBlock() && def->isBeforeInBlock(sdef))
    return false;
  if (budget == 0)
    return true; // unknown: assume the worst
  --budget;
  for (Value o : def->getOperands())
    if (dependsOn(o, score, budget))
      return true;
  return false;
}

FailureOr<Expr *> ExprBuilder::build(Value v, ArrayRef<LinExpr> at,
                                     Explainer &why) {
  if (budget == 0)
    return why.fail("score expression", "more than 2048 scalar operations");
  --budget;
  Type elt = getElementTypeOrSelf(v.getType());
  if (v == score) {
    if (LinIndex(at.begin(), at.end()) != scoreAt)
      return why.fail("score expression",
                      "the scores are read at a position other than their "
                      "own (a transpose or shift of the score matrix)",
                      v.getDefiningOp());
    Expr *e = make(Expr::Score, elt);
    e->hasScore = true;
    return e;
  }
  auto leaf = [&]() {
    Expr *e = make(Expr::Read, elt);
    e->tensor = v;
    e->at.assign(at.begin(), at.end());
    unsigned depBudget = 256;
    e->hasScore = score && dependsOn(v, score, depBudget);
    return e;
  };
  if (stops.contains(v))
    return leaf();
  if (auto s = splatConstant(v))
    if (auto d = scalarValue(*s))
      return constant(*d, elt);
  Operation *def = v.getDefiningOp();
  if (!def)
    return leaf();
  if (auto rs = matchReshape(def)) {
    auto srcShape = cast<ShapedType>(rs->source.getType()).getShape();
    auto resShape = cast<ShapedType>(v.getType()).getShape();
    if (auto src = reshapeSourceIndex(rs->reassoc, rs->expand, srcShape,
                                      resShape, at, ext))
      return build(rs->source, *src, why);
    return leaf();
  }
  auto ew = matchElementwise(def);
  if (!ew)
    return leaf();
  auto loops = invertPermutation(ew->outputMap, at);
  if (!loops)
    return leaf();
  if (ew->body) {
    // A side input (bias, mask) may use ops the tree does not model; it is
    // then read as a tensor instead. Only the score's own path must be
    // understood op by op.
    DenseMap<Value, Expr *> memo;
    Explainer local;
    unsigned saved = budget;
    auto e = buildBody(*ew, ew->body->getTerminator()->getOperand(0), *loops,
                       memo, local);
    if (succeeded(e))
      return e;
    unsigned depBudget = 256;
    if (!score || !dependsOn(v, score, depBudget)) {
      budget = saved;
      return leaf();
    }
    return why.fail(local.why->step, local.why->reason, local.why->at);
  }
  SmallVector<Expr *> ops;
  for (auto [in, map] : llvm::zip(ew->inputs, ew->inputMaps)) {
    auto idx = applyMap(map, *loops, ext);
    if (!idx)
      return why.fail("score expression", "non-linear index map", def);
    auto e = build(in, *idx, why);
    if (failed(e))
      return failure();
    ops.push_back(*e);
  }
  switch (ew->kind) {
  case ScalarKind::Copy:
    return ops[0];
  case ScalarKind::Recip:
    return op(ScalarKind::Div, {constant(1.0, elt), ops[0]}, elt);
  default: {
    Expr *e = op(ew->kind, ops, elt);
    e->predicate = ew->predicate;
    e->castUnsigned = ew->castUnsigned;
    return e;
  }
  }
}

/// Kind of a scalar op of a linalg body; nullopt when unsupported.
static std::optional<ScalarKind> kindOf(Operation *op, Expr &proto) {
  using namespace arith;
  return llvm::TypeSwitch<Operation *, std::optional<ScalarKind>>(op)
      .Case<AddFOp, AddIOp>([](auto) { return ScalarKind::Add; })
      .Case<SubFOp, SubIOp>([](auto) { return ScalarKind::Sub; })
      .Case<MulFOp, MulIOp>([](auto) { return ScalarKind::Mul; })
      .Case<DivFOp, DivSIOp>([](auto) { return ScalarKind::Div; })
      .Case<NegFOp>([](auto) { return ScalarKind::Neg; })
      .Case<MaximumFOp, MaxNumFOp, MaxSIOp>([](auto) { return ScalarKind::Max; })
      .Case<MinimumFOp, MinNumFOp, MinSIOp>([](auto) { return ScalarKind::Min; })
      .Case<math::ExpOp>([](auto) { return ScalarKind::Exp; })
      .Case<math::TanhOp>([](auto) { return ScalarKind::Tanh; })
      .Case<math::AbsFOp, math::AbsIOp>([](auto) { return ScalarKind::Abs; })
      .Case<math::LogOp>([](auto) { return ScalarKind::Log; })
      .Case<math::SqrtOp>([](auto) { return ScalarKind::Sqrt; })
      .Case<math::RsqrtOp>([](auto) { return ScalarKind::Rsqrt; })
      .Case<SelectOp>([](auto) { return ScalarKind::Select; })
      .Case<CmpFOp>([&](CmpFOp c) {
        proto.predicate = int64_t(c.getPredicate());
        return ScalarKind::CmpF;
      })
      .Case<CmpIOp>([&](CmpIOp c) {
        proto.predicate = int64_t(c.getPredicate());
        return ScalarKind::CmpI;
      })
      .Case<AndIOp>([](auto) { return ScalarKind::And; })
      .Case<OrIOp>([](auto) { return ScalarKind::Or; })
      .Case<XOrIOp>([](auto) { return ScalarKind::Xor; })
      .Case<ExtFOp, TruncFOp, SIToFPOp, FPToSIOp, ExtSIOp, TruncIOp,
            IndexCastOp>([](auto) { return ScalarKind::Cast; })
      .Case<UIToFPOp, ExtUIOp, IndexCastUIOp>([&](auto) {
        proto.castUnsigned = true;
        return ScalarKind::Cast;
      })
      .Default([](Operation *) { return std::nullopt; });
}

FailureOr<Expr *> ExprBuilder::buildBody(const ElementwiseView &ew,
                                         Value scalar, ArrayRef<LinExpr> loops,
                                         DenseMap<Value, Expr *> &memo,
                                         Explainer &why) {
  if (Expr *e = memo.lookup(scalar))
    return e;
  Expr *result = nullptr;
  if (auto arg = dyn_cast<BlockArgument>(scalar);
      arg && arg.getOwner() == ew.body) {
    unsigned n = arg.getArgNumber();
    if (n >= ew.inputs.size())
      return why.fail("score expression", "an elementwise body reads its init",
                      ew.op);
    auto idx = applyMap(ew.inputMaps[n], loops, ext);
    if (!idx)
      return why.fail("score expression", "non-linear index map", ew.op);
    auto e = build(ew.inputs[n], *idx, why);
    if (failed(e))
      return failure();
    result = *e;
  } else {
    Attribute cst;
    if (matchPattern(scalar, m_Constant(&cst))) {
      auto d = scalarValue(cst);
      if (!d)
        return why.fail("score expression", "unsupported constant", ew.op);
      result = constant(*d, scalar.getType());
    } else {
      Operation *def = scalar.getDefiningOp();
      if (!def || def->getBlock() != ew.body) {
        // A scalar captured from outside: only constants (seen through
        // casts, like torch-mlir's f64 scale truncated to f32) are known.
        return why.fail("score expression",
                        "an elementwise body reads a non-constant value "
                        "defined outside it",
                        ew.op);
      }
      if (auto idx = dyn_cast<linalg::IndexOp>(def)) {
        result = make(Expr::Index, scalar.getType());
        result->index = loops[idx.getDim()];
      } else {
        Expr proto;
        auto kind = kindOf(def, proto);
        if (!kind)
          return why.fail("score expression",
                          "unsupported scalar op '" +
                              def->getName().getStringRef() +
                              "' in an elementwise body",
                          ew.op);
        SmallVector<Expr *> ops;
        for (Value o : def->getOperands()) {
          auto e = buildBody(ew, o, loops, memo, why);
          if (failed(e))
            return failure();
          ops.push_back(*e);
        }
        // Casts of constants fold: torch-mlir truncates f64 literals.
        if (*kind == ScalarKind::Cast && ops[0]->kind == Expr::Const) {
          result = constant(ops[0]->fval, scalar.getType());
        } else {
          result = op(*kind, ops, scalar.getType());
          result->predicate = proto.predicate;
          result->castUnsigned = proto.castUnsigned;
        }
      }
    }
  }
  memo[scalar] = result;
  return result;
}

bool mlir::flash::raise::sameExpr(const Expr *a, const Expr *b) {
  if (a == b)
    return true;
  if (a->kind != b->kind || a->operands.size() != b->operands.size())
    return false;
  switch (a->kind) {
  case Expr::Score:
    break;
  case Expr::Const:
    if (a->fval != b->fval)
      return false;
    break;
  case Expr::Index:
    if (a->index != b->index)
      return false;
    break;
  case Expr::Read:
    if (a->tensor != b->tensor || a->at != b->at)
      return false;
    break;
  case Expr::Op:
    if (a->op != b->op || a->predicate != b->predicate)
      return false;
    break;
  }
  for (auto [x, y] : llvm::zip(a->operands, b->operands))
    if (!sameExpr(x, y))
      return false;
  return true;
}

const Expr *mlir::flash::raise::stripFloatCasts(const Expr *e) {
  while (e->kind == Expr::Op && e->op == ScalarKind::Cast &&
         isa<FloatType>(e->type) && isa<FloatType>(e->operands[0]->type))
    e = e->operands[0];
  return e;
}

bool mlir::flash::raise::isMaskingConstant(const Expr *e) {
  e = stripFloatCasts(e);
  return e->kind == Expr::Const && e->isFloat && e->fval <= -6.0e4;
}

bool mlir::flash::raise::isConstant(const Expr *e, double v) {
  e = stripFloatCasts(e);
  return e->kind == Expr::Const && e->fval == v;
}
