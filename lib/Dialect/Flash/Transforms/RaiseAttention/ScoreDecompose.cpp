//===- ScoreDecompose.cpp - scale, softcap, bias, masks, score_mod --------===//
//
// The softmax input is m * f(S) + sum(bias) with masks selecting -inf
// somewhere along the way. flash.attention applies, in order: scale,
// softcap, bias, score_mod, masks. This file peels the tree from the top in
// that order's reverse, keeping a running multiplier so that a division
// after the bias add (`(S + B) / sqrt(d)`) still becomes a scale and a
// scaled bias. What cannot be peeled stays as a residual score_mod.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::flash::raise;

static constexpr StringLiteral kStep = "score modification";

static bool isOp(const Expr *e, ScalarKind k) {
  return e->kind == Expr::Op && e->op == k;
}

/// Flattens sums and differences into signed terms.
static void flattenSum(Expr *e, double sign,
                       SmallVectorImpl<std::pair<Expr *, double>> &terms) {
  if (isOp(e, ScalarKind::Add)) {
    flattenSum(e->operands[0], sign, terms);
    flattenSum(e->operands[1], sign, terms);
    return;
  }
  if (isOp(e, ScalarKind::Sub)) {
    flattenSum(e->operands[0], sign, terms);
    flattenSum(e->operands[1], -sign, terms);
    return;
  }
  terms.push_back({e, sign});
}

/// A constant tensor whose values are all 0 or masking: an additive mask.
static bool isAdditiveMaskConstant(const Expr *e) {
  e = stripFloatCasts(e);
  if (e->kind != Expr::Read)
    return false;
  auto c = denseConstant(e->tensor);
  auto dense = c ? dyn_cast<DenseFPElementsAttr>(*c) : nullptr;
  if (!dense)
    return false;
  bool anyMasked = false;
  for (APFloat v : dense.getValues<APFloat>()) {
    bool ignored;
    v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &ignored);
    double d = v.convertToDouble();
    if (d == 0.0)
      continue;
    if (d > -6.0e4)
      return false;
    anyMasked = true;
  }
  return anyMasked;
}

/// Keep-condition of a term of the sum, when it is a mask.
static Expr *maskTermCondition(Expr *t, ExprBuilder &b) {
  Expr *s = const_cast<Expr *>(stripFloatCasts(t));
  if (isOp(s, ScalarKind::Select)) {
    if (isConstant(s->operands[1], 0.0) && isMaskingConstant(s->operands[2]))
      return s->operands[0];
    if (isMaskingConstant(s->operands[1]) && isConstant(s->operands[2], 0.0))
      return b.op(ScalarKind::Not, {s->operands[0]},
                  s->operands[0]->type);
  }
  if (isAdditiveMaskConstant(s)) {
    Expr *cmp = b.op(ScalarKind::CmpF, {s, b.constant(0.0, s->type)},
                     IntegerType::get(s->type.getContext(), 1));
    cmp->predicate = int64_t(arith::CmpFPredicate::OEQ);
    return cmp;
  }
  return nullptr;
}

/// Peels `m * x` off a tree that must reduce to the bare score.
static std::optional<double> pureScale(const Expr *e) {
  double m = 1.0;
  while (true) {
    e = stripFloatCasts(e);
    if (e->kind == Expr::Score)
      return m;
    if (isOp(e, ScalarKind::Mul)) {
      const Expr *a = stripFloatCasts(e->operands[0]);
      const Expr *c = stripFloatCasts(e->operands[1]);
      if (a->kind == Expr::Const)
        std::swap(a, c);
      if (c->kind != Expr::Const)
        return std::nullopt;
      m *= c->fval;
      e = a;
      continue;
    }
    if (isOp(e, ScalarKind::Div) &&
        stripFloatCasts(e->operands[1])->kind == Expr::Const &&
        stripFloatCasts(e->operands[1])->fval != 0.0) {
      m /= stripFloatCasts(e->operands[1])->fval;
      e = e->operands[0];
      continue;
    }
    return std::nullopt;
  }
}

LogicalResult mlir::flash::raise::decomposeScore(Expr *x, ExprBuilder &b,
                                                 ScoreParts &parts,
                                                 Explainer &why) {
  if (!x->hasScore)
    return why.fail(kStep, "the softmax input does not depend on Q·Kᵀ");
  double m = 1.0;
  Expr *e = x;
  Type f32 = Float32Type::get(x->type.getContext());
  while (true) {
    // Float casts (f16 -> f32 up-casts) do not change the function.
    if (isOp(e, ScalarKind::Cast) && isa<FloatType>(e->type) &&
        isa<FloatType>(e->operands[0]->type)) {
      e = e->operands[0];
      continue;
    }
    if (isOp(e, ScalarKind::Select)) {
      Expr *c = e->operands[0], *t = e->operands[1], *f = e->operands[2];
      bool keepIfTrue = isMaskingConstant(f) && t->hasScore;
      bool keepIfFalse = isMaskingConstant(t) && f->hasScore;
      if (keepIfTrue || keepIfFalse) {
        if (m <= 0)
          return why.fail(kStep, "a mask is scaled by a non-positive factor");
        parts.keep.push_back(keepIfTrue ? c
                                        : b.op(ScalarKind::Not, {c}, c->type));
        e = keepIfTrue ? t : f;
        continue;
      }
    }
    if (isOp(e, ScalarKind::Add) || isOp(e, ScalarKind::Sub)) {
      SmallVector<std::pair<Expr *, double>> terms;
      flattenSum(e, 1.0, terms);
      Expr *scoreTerm = nullptr;
      double scoreSign = 1.0;
      for (auto [term, sign] : terms) {
        Expr *t = term;
        if (t->hasScore) {
          if (scoreTerm)
            return why.fail(kStep, "the scores appear in two added terms");
          scoreTerm = t;
          scoreSign = sign;
          continue;
        }
        if (Expr *cond = maskTermCondition(t, b); cond && sign > 0 && m > 0) {
          parts.keep.push_back(cond);
          continue;
        }
        // A bias masked in place, select(c, bias, -inf): mask c, bias.
        if (isOp(t, ScalarKind::Select) && sign > 0 && m > 0) {
          Expr *c = t->operands[0], *x = t->operands[1], *y = t->operands[2];
          if (isMaskingConstant(y) && !isMaskingConstant(x)) {
            parts.keep.push_back(c);
            t = x;
          } else if (isMaskingConstant(x) && !isMaskingConstant(y)) {
            parts.keep.push_back(b.op(ScalarKind::Not, {c}, c->type));
            t = y;
          }
        }
        double f = sign * m;
        parts.biasTerms.push_back(
            f == 1.0 ? t : b.op(ScalarKind::Mul, {t, b.constant(f, f32)}, f32));
      }
      m *= scoreSign;
      e = scoreTerm;
      continue;
    }
    if (isOp(e, ScalarKind::Mul) || isOp(e, ScalarKind::Div)) {
      Expr *a = e->operands[0], *c = e->operands[1];
      if (isOp(e, ScalarKind::Mul) && stripFloatCasts(a)->kind == Expr::Const)
        std::swap(a, c);
      const Expr *cc = stripFloatCasts(c);
      if (cc->kind == Expr::Const && cc->fval != 0.0 && a->hasScore) {
        m = isOp(e, ScalarKind::Mul) ? m * cc->fval : m / cc->fval;
        e = a;
        continue;
      }
    }
    if (isOp(e, ScalarKind::Neg)) {
      m = -m;
      e = e->operands[0];
      continue;
    }
    // softcap: m * tanh(a * S) is softcap = m with scale a * m.
    if (isOp(e, ScalarKind::Tanh) && m > 0) {
      if (auto a = pureScale(e->operands[0])) {
        parts.softcap = m;
        parts.scale = *a * m;
        return success();
      }
    }
    if (e->kind == Expr::Score) {
      parts.scale = m;
      return success();
    }
    // Anything else is a function of the raw score: keep it as score_mod,
    // with the scale left at 1 so the region sees Q·Kᵀ itself.
    parts.scale = 1.0;
    parts.residual =
        m == 1.0 ? e : b.op(ScalarKind::Mul, {e, b.constant(m, f32)}, f32);
    return success();
  }
}
