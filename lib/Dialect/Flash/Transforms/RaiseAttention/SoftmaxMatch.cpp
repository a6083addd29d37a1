//===- SoftmaxMatch.cpp - the softmax every attention is anchored on ------===//
//
// Anchors: linalg.softmax, or a max reduction (linalg or TOSA) that starts
// the decomposed form exp(x - max(x)) / sum(exp(x - max(x))). The division
// may be a divide, or a multiply by a reciprocal (TOSA); the whole chain may
// run in f32 on an up-cast input. torch's SDPA decomposition adds a guard
// that zeroes fully masked rows; flash.attention already gives 0 there, so
// the guard belongs to the softmax.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::flash::raise;

static constexpr StringLiteral kStep = "softmax";

/// A builder over X's own dimensions: X is the "score", read at identity.
static ExprBuilder localBuilder(Value x) {
  auto shape = cast<ShapedType>(x.getType()).getShape();
  return ExprBuilder(x, identityIndex(shape.size()), extentsOf(shape));
}

/// The position a reduction's result is read at for element `id` of its
/// input: the axis dropped, or 0 when the result keeps it.
static LinIndex reducedIndex(const ReductionView &r, unsigned rank) {
  LinIndex at;
  for (unsigned d = 0; d < rank; ++d) {
    if (d != r.axis)
      at.push_back(LinExpr::dim(d));
    else if (r.keepDim)
      at.push_back(LinExpr::constant(0));
  }
  return at;
}

static bool isReadOf(const Expr *e, Value t, const LinIndex &at) {
  e = stripFloatCasts(e);
  return e->kind == Expr::Read && e->tensor == t && e->at == at;
}

/// Values reachable from `v` through users that are elementwise or reshapes,
/// nearest first, at most `depth` ops away.
static SmallVector<Value> nearbyUsers(Value v, unsigned depth) {
  SmallVector<Value> out, frontier = {v};
  DenseSet<Value> seen;
  for (unsigned i = 0; i < depth; ++i) {
    SmallVector<Value> next;
    for (Value f : frontier)
      for (Operation *user : f.getUsers()) {
        if (user->getNumResults() != 1 ||
            !(matchElementwise(user) || matchReshape(user)))
          continue;
        Value r = user->getResult(0);
        if (seen.insert(r).second) {
          out.push_back(r);
          next.push_back(r);
        }
      }
    frontier = std::move(next);
  }
  return out;
}

FailureOr<SoftmaxMatch> mlir::flash::raise::matchSoftmax(Operation *anchor,
                                                         Explainer &why) {
  if (auto sm = dyn_cast<linalg::SoftmaxOp>(anchor))
    return SoftmaxMatch{sm.getInput(), sm.getResult()[0],
                        unsigned(sm.getDimension()), anchor};

  auto max = matchReduction(anchor);
  if (!max || max->kind != ReductionKind::Max)
    return why.fail(kStep, "not a max reduction", anchor);
  Value x = max->input;
  unsigned rank = cast<ShapedType>(x.getType()).getRank();
  if (rank > 4)
    return why.fail(kStep, "softmax input has rank > 4", anchor);
  Value maxResult = anchor->getResult(0);
  LinIndex id = identityIndex(rank);
  LinIndex redAt = reducedIndex(*max, rank);

  // e = exp(x - max): the tree every later step must agree on.
  ExprBuilder b = localBuilder(x);
  b.stops.insert(maxResult);
  auto isExpOfShifted = [&](const Expr *e) {
    e = stripFloatCasts(e);
    if (e->kind != Expr::Op || e->op != ScalarKind::Exp)
      return false;
    const Expr *sub = stripFloatCasts(e->operands[0]);
    return sub->kind == Expr::Op && sub->op == ScalarKind::Sub &&
           stripFloatCasts(sub->operands[0])->kind == Expr::Score &&
           isReadOf(sub->operands[1], maxResult, redAt);
  };

  // The sum over the same axis of exp(x - max).
  std::optional<ReductionView> sum;
  Expr *expTree = nullptr;
  for (Value u : nearbyUsers(maxResult, 4)) {
    for (Operation *user : u.getUsers()) {
      auto r = matchReduction(user);
      if (!r || r->kind != ReductionKind::Sum || r->axis != max->axis ||
          cast<ShapedType>(r->input.getType()).getRank() != rank)
        continue;
      Explainer local;
      auto t = b.build(r->input, id, local);
      if (succeeded(t) && isExpOfShifted(*t)) {
        sum = r;
        expTree = *t;
        break;
      }
    }
    if (sum)
      break;
  }
  if (!sum)
    return why.fail(kStep,
                    "found a max reduction but no sum of exp(x - max) over "
                    "the same axis",
                    anchor);
  Value sumResult = sum->op->getResult(0);
  LinIndex sumAt = reducedIndex(*sum, rank);
  b.stops.insert(sumResult);

  // P = e / sum, or e * (1 / sum).
  auto isNormalised = [&](const Expr *p) {
    p = stripFloatCasts(p);
    if (p->kind != Expr::Op)
      return false;
    if (p->op == ScalarKind::Div)
      return sameExpr(stripFloatCasts(p->operands[0]), stripFloatCasts(expTree)) &&
             isReadOf(p->operands[1], sumResult, sumAt);
    if (p->op != ScalarKind::Mul)
      return false;
    for (unsigned i = 0; i < 2; ++i) {
      const Expr *e = stripFloatCasts(p->operands[i]);
      const Expr *r = stripFloatCasts(p->operands[1 - i]);
      if (sameExpr(e, stripFloatCasts(expTree)) && r->kind == Expr::Op &&
          r->op == ScalarKind::Div && isConstant(r->operands[0], 1.0) &&
          isReadOf(r->operands[1], sumResult, sumAt))
        return true;
    }
    return false;
  };
  Value p;
  for (Value u : nearbyUsers(sumResult, 4)) {
    if (cast<ShapedType>(u.getType()).getRank() != rank)
      continue;
    Explainer local;
    auto t = b.build(u, id, local);
    if (succeeded(t) && isNormalised(*t)) {
      p = u;
      break;
    }
  }
  if (!p)
    return why.fail(kStep,
                    "found max and sum reductions but no division of "
                    "exp(x - max) by the sum",
                    anchor);

  SoftmaxMatch m{x, p, max->axis, anchor};
  // The fully-masked-row guard: select(all(x == -inf along axis), 0, P).
  for (Operation *user : p.getUsers()) {
    if (user->getNumResults() != 1 || !matchElementwise(user))
      continue;
    ExprBuilder g = localBuilder(x);
    g.stops.insert(p);
    Explainer local;
    auto t = g.build(user->getResult(0), id, local);
    if (failed(t))
      continue;
    const Expr *sel = *t;
    if (sel->kind != Expr::Op || sel->op != ScalarKind::Select ||
        !isConstant(sel->operands[1], 0.0) ||
        !isReadOf(sel->operands[2], p, id))
      continue;
    const Expr *cond = sel->operands[0];
    if (cond->kind != Expr::Read)
      continue;
    auto all = cond->tensor.getDefiningOp()
                   ? matchReduction(cond->tensor.getDefiningOp())
                   : std::nullopt;
    if (!all || all->kind != ReductionKind::And || all->axis != max->axis)
      continue;
    Explainer l2;
    auto c = g.build(all->input, id, l2);
    if (failed(c))
      continue;
    const Expr *cmp = *c;
    if (cmp->kind == Expr::Op && cmp->op == ScalarKind::CmpF &&
        cmp->predicate == int64_t(arith::CmpFPredicate::OEQ) &&
        stripFloatCasts(cmp->operands[0])->kind == Expr::Score &&
        isConstant(cmp->operands[1], -INFINITY)) {
      m.output = user->getResult(0);
      break;
    }
  }
  return m;
}
