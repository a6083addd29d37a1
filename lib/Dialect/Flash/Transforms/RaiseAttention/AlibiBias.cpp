//===- AlibiBias.cpp - a model's ALiBi bias as the op's alibi operand -----===//
//
// Models add ALiBi as slope[h] times a position: BLOOM slope * j under a
// causal mask, MPT -slope * |j + 1 - Sk|, FlexAttention's example
// slope * (j - i), symmetric encoders -slope * |i - j|. flash.attention's
// `alibi(...)` computes -slope * |i + Sk - Sq - j| natively, which the GPU
// kernels do in two instructions a score where a score_mod region costs a
// general transform.
//
// The model's term is read as factor * slope * P with P linear in (i, j),
// or its absolute value:
//  - |P|: equal to the op's bias when P weighs i and j alike and is
//    measured from the op's diagonal i + Sk - Sq = j;
//  - P, or a |P| whose P keeps its sign over the keys a row may see (MPT's
//    |j + 1 - Sk| under a causal mask): where no visible key lies past the
//    diagonal (causal masks), the op's bias is slope * (j - diagonal), so a
//    term linear in j differs from it only by a function of the row, which
//    the softmax cancels (P may add any value of the row, a cache position
//    read at run time too). O is the same; the LSE would differ, and the
//    raised ops return none.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::flash::raise;

namespace {
/// q * i + k * j + c, positions as the model computes them.
struct Position {
  double q = 0, k = 0, c = 0;
  /// Plus a value of the row known only at run time (a cache position
  /// read from a tensor): fine where the softmax cancels it (linear forms).
  bool row = false;
};
/// factor * slope * pos (or * |pos|); slope and pos may be absent.
struct Product {
  double factor = 1.0;
  const Expr *slope = nullptr;
  std::optional<Position> pos;
  bool abs = false;
};
} // namespace

/// The position a slope-free product stands for (a constant when it has
/// none).
static Position asPosition(const Product &p) {
  Position r = p.pos.value_or(Position{0, 0, 1});
  return {r.q * p.factor, r.k * p.factor, r.c * p.factor, r.row};
}

/// Whether the tree reads a tensor or an index (is no constant formula).
static bool readsAnything(const Expr *e) {
  return e->kind == Expr::Read || e->kind == Expr::Index ||
         llvm::any_of(e->operands, readsAnything);
}

/// A float function of (b, h) alone: a slope (a tensor of slopes read at h,
/// BLOOM's repeated ones at b * H + h, a formula of h).
static bool isSlope(const Expr *e) {
  return isa<FloatType>(e->type) && !e->hasScore && readsAnything(e) &&
         !exprUsesDim(e, kQ) && !exprUsesDim(e, kK);
}

/// A constant arange read at a position: v[n] = v[0] + n * step along its
/// one dimension of more than one element, as TOSA exports materialise
/// iota (and torch-mlir folds arange). The position read, or nullopt.
static std::optional<Position> arangePosition(const Expr *read) {
  auto values = llvm::dyn_cast_if_present<DenseElementsAttr>(
      denseConstant(read->tensor).value_or(Attribute()));
  if (!values || values.isSplat())
    return std::nullopt;
  ArrayRef<int64_t> shape = values.getType().getShape();
  std::optional<unsigned> along;
  for (auto [d, size] : llvm::enumerate(shape)) {
    if (size == 1 && read->at[d] == LinExpr::constant(0))
      continue;
    if (along)
      return std::nullopt;
    along = d;
  }
  if (!along || read->at[*along].uses(kB) || read->at[*along].uses(kH))
    return std::nullopt;
  const LinExpr &at = read->at[*along];
  SmallVector<double> v;
  if (isa<IntegerType>(values.getElementType())) {
    for (const APInt &x : values.getValues<APInt>())
      v.push_back(double(x.getSExtValue()));
  } else if (isa<FloatType>(values.getElementType())) {
    for (const APFloat &x : values.getValues<APFloat>())
      v.push_back(x.convertToDouble());
  } else {
    return std::nullopt;
  }
  double step = v[1] - v[0];
  for (auto [n, x] : llvm::enumerate(v))
    if (x != v[0] + double(n) * step)
      return std::nullopt;
  return Position{step * double(at.c[kQ]), step * double(at.c[kK]),
                  step * double(at.cst) + v[0]};
}

/// The term as factor * slope * position, when it is one.
static std::optional<Product> productOf(const Expr *e) {
  if (isSlope(e)) {
    Product p;
    p.slope = e;
    return p;
  }
  switch (e->kind) {
  case Expr::Score:
    return std::nullopt;
  case Expr::Const:
    return Product{e->fval};
  case Expr::Index: {
    if (e->index.uses(kB) || e->index.uses(kH))
      return std::nullopt;
    Product p;
    p.pos = Position{double(e->index.c[kQ]), double(e->index.c[kK]),
                     double(e->index.cst)};
    return p;
  }
  case Expr::Read: {
    std::optional<Position> pos = arangePosition(e);
    if (!pos)
      return std::nullopt;
    Product p;
    p.pos = pos;
    return p;
  }
  case Expr::Op:
    break;
  }
  auto operand = [&](unsigned i) { return productOf(e->operands[i]); };
  switch (e->op) {
  case ScalarKind::Cast:
    // A float truncated to an integer may round; an unsigned cast of a
    // negative distance wraps: neither is the position any more.
    if (e->castUnsigned || (isa<FloatType>(e->operands[0]->type) &&
                            !isa<FloatType>(e->type)))
      return std::nullopt;
    return operand(0);
  case ScalarKind::Copy:
    return operand(0);
  case ScalarKind::Neg: {
    auto p = operand(0);
    if (p)
      p->factor = -p->factor;
    return p;
  }
  case ScalarKind::Mul: {
    auto a = operand(0), b = operand(1);
    if (!a || !b || (a->slope && b->slope) || (a->pos && b->pos))
      return std::nullopt;
    Product p;
    p.factor = a->factor * b->factor;
    p.slope = a->slope ? a->slope : b->slope;
    const Product &withPos = a->pos ? *a : *b;
    p.pos = withPos.pos;
    p.abs = withPos.abs;
    return p;
  }
  case ScalarKind::Div: {
    auto a = operand(0);
    const Expr *d = stripFloatCasts(e->operands[1]);
    if (!a || d->kind != Expr::Const || d->fval == 0)
      return std::nullopt;
    a->factor /= d->fval;
    return a;
  }
  case ScalarKind::Add:
  case ScalarKind::Sub: {
    // Only positions add up: slope * P1 + slope * P2 is two terms. A
    // summand that reads neither the key nor the score but is no position
    // (a cache position read from a tensor) is a value of the row.
    Position sum[2];
    for (unsigned n = 0; n < 2; ++n) {
      const Expr *o = e->operands[n];
      auto x = productOf(o);
      if (x && !x->slope && !x->abs) {
        sum[n] = asPosition(*x);
      } else if (!o->hasScore && !exprUsesDim(o, kK)) {
        sum[n].row = true;
      } else {
        return std::nullopt;
      }
    }
    double sign = e->op == ScalarKind::Sub ? -1.0 : 1.0;
    const Position &x = sum[0], &y = sum[1];
    Product p;
    p.pos = Position{x.q + sign * y.q, x.k + sign * y.k, x.c + sign * y.c,
                     x.row || y.row};
    return p;
  }
  case ScalarKind::Abs: {
    auto a = operand(0);
    if (!a || a->slope || a->abs)
      return std::nullopt;
    Product p;
    p.pos = asPosition(*a);
    p.abs = true;
    return p;
  }
  default:
    return std::nullopt;
  }
}

AlibiDiagonal mlir::flash::raise::denseAlibiDiagonal(const AttentionMatch &m) {
  AlibiDiagonal d;
  d.offset = m.seqK - m.seqQ;
  // Keys a row sees end at i + off (causal bottom-right), at i (top-left),
  // or at i + window_right (a window without causal, top-left aligned).
  if (m.masks.causalBottomRight)
    d.keysEnd = *m.masks.causalBottomRight ? *d.offset : 0;
  else if (m.masks.windowRight)
    d.keysEnd = *m.masks.windowRight;
  d.keysUpToDiagonal = d.keysEnd && *d.keysEnd <= *d.offset;
  return d;
}

/// +1 or -1 when q * i + k * j + c keeps that sign (or is 0) wherever a
/// row may see a key: 0 <= i < Sq, 0 <= j < Sk and j <= i + keysEnd, a
/// convex polygon, so its vertices decide. Nullopt where it changes sign.
static std::optional<double> signOverVisibleKeys(const Position &x,
                                                 const AttentionMatch &m,
                                                 const AlibiDiagonal &d) {
  int64_t sq = m.seqQ, sk = m.seqK;
  if (sq <= 0 || sk <= 0)
    return std::nullopt;
  // Rows of the vertices: the first and last, where the band j <= i + e
  // meets j = Sk - 1, and where it meets j = 0.
  SmallVector<int64_t, 4> rows = {0, sq - 1};
  if (d.keysEnd)
    for (int64_t r : {sk - 1 - *d.keysEnd, -*d.keysEnd})
      rows.push_back(std::clamp<int64_t>(r, 0, sq - 1));
  bool positive = false, negative = false;
  for (int64_t i : rows) {
    int64_t last = d.keysEnd ? std::min(sk - 1, i + *d.keysEnd) : sk - 1;
    for (int64_t j : {int64_t(0), last}) {
      if (j < 0 || j > last)
        continue;
      double u = x.q * double(i) + x.k * double(j) + x.c;
      positive |= u > 0;
      negative |= u < 0;
    }
  }
  if (positive && negative)
    return std::nullopt;
  return negative ? -1.0 : 1.0;
}

FailureOr<AlibiBias>
mlir::flash::raise::matchAlibiBias(const Expr *term, const AttentionMatch &m,
                                   const AlibiDiagonal &diag,
                                   std::string &why) {
  why.clear();
  auto p = productOf(term);
  if (!p || !p->slope || !p->pos || p->pos->k == 0 || p->factor == 0)
    return failure();
  Position x = *p->pos;
  AlibiBias a;
  a.slopes = p->slope;
  if (p->abs && x.row) {
    why = "the distance reads a value of the row known only at run time";
    return failure();
  }
  if (p->abs) {
    // |x.q * i + x.k * j + x.c| = |x.q| * |i + x.c / x.q - j|: the op's
    // distance when x.k = -x.q and x.c / x.q = Sk - Sq.
    if (x.q == -x.k && diag.offset && x.c == x.q * double(*diag.offset)) {
      a.factor = -p->factor * std::abs(x.q);
      return a;
    }
    // |P| of a P that keeps its sign over the visible keys is +-P, linear:
    // MPT's -slope * |j + 1 - Sk| under a causal mask.
    std::optional<double> sign;
    if (diag.keysUpToDiagonal)
      sign = signOverVisibleKeys(x, m, diag);
    if (!sign) {
      why = x.q != -x.k
                ? "the distance |a*i + b*j + c| does not weigh i and j alike"
                : "the distance is not measured from the diagonal j = i + "
                  "Sk - Sq, where flash.attention's ALiBi measures it";
      return failure();
    }
    x = Position{*sign * x.q, *sign * x.k, *sign * x.c, false};
  } else if (!diag.keysUpToDiagonal) {
    why = "a bias linear in the key position without a causal mask: "
          "ALiBi's -slope * |distance| differs from it past the diagonal";
    return failure();
  }
  a.factor = p->factor * x.k;
  return a;
}

Value mlir::flash::raise::buildAlibiSlopes(OpBuilder &b, Location loc,
                                           const AlibiBias &a,
                                           const AttentionMatch &m) {
  bool perBatch = m.batch > 1 && exprUsesDim(a.slopes, kB);
  SmallVector<int64_t, 2> shape;
  if (perBatch)
    shape.push_back(m.batch);
  shape.push_back(m.headsQ);
  Type f32 = b.getF32Type();
  auto resTy = RankedTensorType::get(shape, f32);
  // The model's f32 [Hq] (or [B, Hq]) slope tensor itself where the term
  // reads it as the op does.
  const Expr *s = a.slopes;
  LinIndex asOp = perBatch ? LinIndex{LinExpr::dim(kB), LinExpr::dim(kH)}
                           : LinIndex{LinExpr::dim(kH)};
  if (a.factor == 1.0 && s->kind == Expr::Read &&
      s->tensor.getType() == resTy && s->at == asOp)
    return s->tensor;
  // Otherwise gathered (and computed) in f32 and scaled: [Hq] or [B, Hq]
  // values, nothing to fuse.
  auto gen = tensor::GenerateOp::create(
      b, loc, resTy, ValueRange(),
      [&](OpBuilder &nb, Location l, ValueRange ivs) {
        Value zero = arith::ConstantIndexOp::create(nb, l, 0);
        SmallVector<Value, 4> ids = {perBatch ? ivs[0] : zero, ivs.back(),
                                     zero, zero};
        DenseMap<const Expr *, Value> memo;
        Value v = emitExpr(nb, l, s, Value(), ids, memo);
        if (a.factor != 1.0) {
          Value f = arith::ConstantOp::create(
              nb, l, nb.getF32FloatAttr(float(a.factor)));
          v = arith::MulFOp::create(nb, l, v, f);
        }
        tensor::YieldOp::create(nb, l, v);
      });
  return gen.getResult();
}
