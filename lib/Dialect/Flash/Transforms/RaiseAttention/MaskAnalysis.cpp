//===- MaskAnalysis.cpp - causal and sliding-window masks as attributes ---===//
//
// Kernels skip whole tiles only when the mask is an attribute, so every keep
// condition that is a band lo <= k - q <= hi becomes causal / window_left /
// window_right. Conditions are recognised symbolically (compares of linear
// index expressions, as iota/compare lowers) or, for constant tensors such
// as a materialised lower-triangular matrix, by evaluating them over the
// (q, k) grid. What is not a band is returned for a mask_mod or mask operand.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::flash::raise;

static constexpr StringLiteral kStep = "mask";

namespace {
/// Bounds on d = k - q under which a key is kept.
struct Band {
  int64_t lo = std::numeric_limits<int64_t>::min();
  int64_t hi = std::numeric_limits<int64_t>::max();
};
} // namespace

/// An integer/index tree as a linear form, through casts.
static std::optional<LinExpr> linearize(const Expr *e) {
  switch (e->kind) {
  case Expr::Index:
    return e->index;
  case Expr::Const:
    if (e->isFloat)
      return std::nullopt;
    return LinExpr::constant(int64_t(e->fval));
  case Expr::Op: {
    if (e->op == ScalarKind::Cast && !isa<FloatType>(e->type) &&
        !isa<FloatType>(e->operands[0]->type))
      return linearize(e->operands[0]);
    if (e->op != ScalarKind::Add && e->op != ScalarKind::Sub &&
        e->op != ScalarKind::Mul)
      return std::nullopt;
    auto a = linearize(e->operands[0]), b = linearize(e->operands[1]);
    if (!a || !b)
      return std::nullopt;
    if (e->op == ScalarKind::Add)
      return *a + *b;
    if (e->op == ScalarKind::Sub)
      return *a - *b;
    if (b->isConstant())
      return *a * b->cst;
    if (a->isConstant())
      return *b * a->cst;
    return std::nullopt;
  }
  default:
    return std::nullopt;
  }
}

/// `cmp(pred, A, B)` with A - B = s * (k - q) + c as a band; nullopt when
/// the compare is not of that form.
static std::optional<Band> linearBand(const Expr *e, bool negate) {
  if (e->kind == Expr::Op && e->op == ScalarKind::Not)
    return linearBand(e->operands[0], !negate);
  if (e->kind != Expr::Op || e->op != ScalarKind::CmpI)
    return std::nullopt;
  auto a = linearize(e->operands[0]), b = linearize(e->operands[1]);
  if (!a || !b)
    return std::nullopt;
  LinExpr d = *a - *b;
  if (d.uses(kB) || d.uses(kH) || d.c[kK] != -d.c[kQ] ||
      (d.c[kK] != 1 && d.c[kK] != -1))
    return std::nullopt;
  // Normalise to s*(k - q) + c PRED 0 with s = +1: flip when s = -1.
  auto pred = arith::CmpIPredicate(e->predicate);
  int64_t c = d.cst;
  if (d.c[kK] == -1) {
    c = -c;
    switch (pred) {
    case arith::CmpIPredicate::slt: pred = arith::CmpIPredicate::sgt; break;
    case arith::CmpIPredicate::sle: pred = arith::CmpIPredicate::sge; break;
    case arith::CmpIPredicate::sgt: pred = arith::CmpIPredicate::slt; break;
    case arith::CmpIPredicate::sge: pred = arith::CmpIPredicate::sle; break;
    default: return std::nullopt;
    }
  }
  if (negate)
    pred = arith::invertPredicate(pred);
  // (k - q) + c PRED 0  <=>  (k - q) PRED -c.
  Band band;
  switch (pred) {
  case arith::CmpIPredicate::sle:
    band.hi = -c;
    break;
  case arith::CmpIPredicate::slt:
    band.hi = -c - 1;
    break;
  case arith::CmpIPredicate::sge:
    band.lo = -c;
    break;
  case arith::CmpIPredicate::sgt:
    band.lo = -c + 1;
    break;
  default:
    return std::nullopt;
  }
  return band;
}

namespace {
/// Evaluates index-only trees over the (q, k) grid; constant tensors are
/// read from their attribute.
struct GridEval {
  DenseMap<Value, SmallVector<double>> constants;
  bool ok = true;

  bool evaluable(const Expr *e) {
    if (e->hasScore)
      return false;
    switch (e->kind) {
    case Expr::Score:
      return false;
    case Expr::Index:
      return true;
    case Expr::Read: {
      auto c = denseConstant(e->tensor);
      auto dense = c ? dyn_cast<DenseElementsAttr>(*c) : nullptr;
      if (!dense)
        return false;
      auto &vals = constants[e->tensor];
      if (vals.empty()) {
        if (auto fp = dyn_cast<DenseFPElementsAttr>(dense)) {
          for (APFloat v : fp.getValues<APFloat>()) {
            bool ignored;
            v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                      &ignored);
            vals.push_back(v.convertToDouble());
          }
        } else if (auto in = dyn_cast<DenseIntElementsAttr>(dense)) {
          for (APInt v : in.getValues<APInt>())
            vals.push_back(v.getBitWidth() == 1 ? double(v.getBoolValue())
                                                : double(v.getSExtValue()));
        } else {
          return false;
        }
      }
      return true;
    }
    case Expr::Const:
      return true;
    case Expr::Op:
      return llvm::all_of(e->operands,
                          [&](const Expr *o) { return evaluable(o); });
    }
    return false;
  }

  double eval(const Expr *e, const int64_t idx[kNumLogical]) {
    switch (e->kind) {
    case Expr::Const:
      return e->fval;
    case Expr::Index:
      return double(e->index.eval(idx));
    case Expr::Read: {
      auto shape = cast<ShapedType>(e->tensor.getType()).getShape();
      const auto &vals = constants[e->tensor];
      if (vals.size() == 1)
        return vals[0];
      int64_t flat = 0;
      for (auto [i, l] : llvm::enumerate(e->at)) {
        int64_t v = l.eval(idx);
        if (v < 0 || v >= shape[i]) {
          ok = false;
          return 0;
        }
        flat = flat * shape[i] + v;
      }
      return vals[flat];
    }
    case Expr::Score:
      ok = false;
      return 0;
    case Expr::Op:
      break;
    }
    SmallVector<double, 3> a;
    for (const Expr *o : e->operands)
      a.push_back(eval(o, idx));
    bool isFloat = isa<FloatType>(e->type);
    switch (e->op) {
    case ScalarKind::Add: return a[0] + a[1];
    case ScalarKind::Sub: return a[0] - a[1];
    case ScalarKind::Mul: return a[0] * a[1];
    case ScalarKind::Div:
      return isFloat ? a[0] / a[1] : std::trunc(a[0] / a[1]);
    case ScalarKind::Neg: return -a[0];
    case ScalarKind::Max: return std::max(a[0], a[1]);
    case ScalarKind::Min: return std::min(a[0], a[1]);
    case ScalarKind::Abs: return std::fabs(a[0]);
    case ScalarKind::Exp: return std::exp(a[0]);
    case ScalarKind::Tanh: return std::tanh(a[0]);
    case ScalarKind::Log: return std::log(a[0]);
    case ScalarKind::Sqrt: return std::sqrt(a[0]);
    case ScalarKind::Rsqrt: return 1.0 / std::sqrt(a[0]);
    case ScalarKind::Select: return a[0] != 0 ? a[1] : a[2];
    case ScalarKind::And: return double(int64_t(a[0]) & int64_t(a[1]));
    case ScalarKind::Or: return double(int64_t(a[0]) | int64_t(a[1]));
    case ScalarKind::Xor: return double(int64_t(a[0]) ^ int64_t(a[1]));
    case ScalarKind::Not: return a[0] == 0 ? 1 : 0;
    case ScalarKind::Cast:
      if (e->type.isInteger(1))
        return a[0] != 0;
      return isFloat ? a[0] : std::trunc(a[0]);
    case ScalarKind::CmpF:
      switch (arith::CmpFPredicate(e->predicate)) {
      case arith::CmpFPredicate::OEQ: case arith::CmpFPredicate::UEQ: return a[0] == a[1];
      case arith::CmpFPredicate::ONE: case arith::CmpFPredicate::UNE: return a[0] != a[1];
      case arith::CmpFPredicate::OLT: case arith::CmpFPredicate::ULT: return a[0] < a[1];
      case arith::CmpFPredicate::OLE: case arith::CmpFPredicate::ULE: return a[0] <= a[1];
      case arith::CmpFPredicate::OGT: case arith::CmpFPredicate::UGT: return a[0] > a[1];
      case arith::CmpFPredicate::OGE: case arith::CmpFPredicate::UGE: return a[0] >= a[1];
      default: ok = false; return 0;
      }
    case ScalarKind::CmpI:
      switch (arith::CmpIPredicate(e->predicate)) {
      case arith::CmpIPredicate::eq: return a[0] == a[1];
      case arith::CmpIPredicate::ne: return a[0] != a[1];
      case arith::CmpIPredicate::slt: case arith::CmpIPredicate::ult: return a[0] < a[1];
      case arith::CmpIPredicate::sle: case arith::CmpIPredicate::ule: return a[0] <= a[1];
      case arith::CmpIPredicate::sgt: case arith::CmpIPredicate::ugt: return a[0] > a[1];
      case arith::CmpIPredicate::sge: case arith::CmpIPredicate::uge: return a[0] >= a[1];
      }
      return 0;
    case ScalarKind::Copy:
      return a[0];
    case ScalarKind::Recip:
      return 1.0 / a[0];
    }
    return 0;
  }
};
} // namespace

bool mlir::flash::raise::exprUsesDim(const Expr *e, unsigned d) {
  if (e->kind == Expr::Index)
    return e->index.uses(d);
  if (e->kind == Expr::Read)
    return llvm::any_of(e->at, [&](const LinExpr &l) { return l.uses(d); });
  return llvm::any_of(e->operands,
                      [&](const Expr *o) { return exprUsesDim(o, d); });
}

/// The band a grid-evaluated keep set forms, if it is one. Conditions that
/// read b or h (a padding mask indexed by b * Sq + q, say) are evaluated for
/// every (b, h) and must give the same band for each.
static std::optional<Band> gridBand(const Expr *cond, GridEval &g,
                                    Extents ext) {
  // Batch and head loops only matter when the condition reads them.
  for (unsigned d : {kB, kH})
    if (!exprUsesDim(cond, d))
      ext.e[d] = 1;
  int64_t total = 1;
  for (int64_t e : ext.e) {
    if (e == ShapedType::kDynamic)
      return std::nullopt;
    total *= e;
  }
  if (total > (int64_t(1) << 22) || !g.evaluable(cond))
    return std::nullopt;
  int64_t sq = ext.e[kQ], sk = ext.e[kK];
  // Per diagonal d = k - q, the keep value must be the same everywhere,
  // and the kept diagonals contiguous.
  SmallVector<int8_t> diag(sq + sk - 1, -1);
  int64_t idx[kNumLogical];
  for (idx[kB] = 0; idx[kB] < ext.e[kB]; ++idx[kB])
    for (idx[kH] = 0; idx[kH] < ext.e[kH]; ++idx[kH])
      for (idx[kQ] = 0; idx[kQ] < sq; ++idx[kQ])
        for (idx[kK] = 0; idx[kK] < sk; ++idx[kK]) {
          int8_t keep = g.eval(cond, idx) != 0;
          if (!g.ok)
            return std::nullopt;
          int8_t &d = diag[idx[kK] - idx[kQ] + sq - 1];
          if (d >= 0 && d != keep)
            return std::nullopt;
          d = keep;
        }
  Band band;
  int64_t first = -1, last = -1;
  for (int64_t i = 0; i < int64_t(diag.size()); ++i)
    if (diag[i] == 1) {
      if (first < 0)
        first = i;
      else if (last != i - 1)
        return std::nullopt; // two separate bands
      last = i;
    }
  if (first < 0)
    return std::nullopt; // keeps nothing: not a band worth an attribute
  if (first > 0)
    band.lo = first - (sq - 1);
  if (last < int64_t(diag.size()) - 1)
    band.hi = last - (sq - 1);
  return band;
}

static void conjuncts(Expr *e, SmallVectorImpl<Expr *> &out) {
  if (e->kind == Expr::Op && e->op == ScalarKind::And &&
      e->type.isInteger(1)) {
    conjuncts(e->operands[0], out);
    conjuncts(e->operands[1], out);
    return;
  }
  out.push_back(e);
}

LogicalResult mlir::flash::raise::analyzeMasks(ArrayRef<Expr *> keep,
                                               const Extents &ext,
                                               MaskAttrs &out,
                                               Explainer &why) {
  SmallVector<Expr *> parts;
  for (Expr *k : keep)
    conjuncts(k, parts);
  Band band;
  bool anyBand = false;
  SmallVector<Expr *> bandConds;
  GridEval grid;
  for (Expr *c : parts) {
    if (c->hasScore)
      return why.fail(kStep, "the mask depends on the scores, which neither "
                             "mask_mod nor a mask operand can express");
    if (c->kind == Expr::Const) {
      if (c->fval != 0)
        continue; // always kept
      return why.fail(kStep, "the mask removes every key");
    }
    std::optional<Band> b = linearBand(c, false);
    if (!b)
      b = gridBand(c, grid, ext);
    if (!b) {
      out.rest.push_back(c);
      continue;
    }
    // An unbounded band keeps everything (e.g. a padding mask of ones).
    if (b->lo == Band().lo && b->hi == Band().hi)
      continue;
    band.lo = std::max(band.lo, b->lo);
    band.hi = std::min(band.hi, b->hi);
    anyBand = true;
    bandConds.push_back(c);
  }
  if (!anyBand)
    return success();
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  int64_t sq = ext.e[kQ], sk = ext.e[kK];
  int64_t off = 0;
  // A band the attributes cannot place (e.g. strictly below the diagonal,
  // j < i) still is a valid mask: it goes to mask_mod instead.
  auto asMaskMod = [&]() {
    out.causalBottomRight.reset();
    out.windowLeft.reset();
    out.windowRight.reset();
    out.rest.append(bandConds.begin(), bandConds.end());
    return success();
  };
  if (band.hi == 0) {
    out.causalBottomRight = false;
  } else if (band.hi != kNone && sq != ShapedType::kDynamic &&
             sk != ShapedType::kDynamic && band.hi == sk - sq) {
    out.causalBottomRight = true;
    off = sk - sq;
  } else if (band.hi != kNone) {
    if (band.hi < 0)
      return asMaskMod();
    out.windowRight = band.hi;
  }
  if (band.lo != std::numeric_limits<int64_t>::min()) {
    if (off - band.lo < 0)
      return asMaskMod();
    out.windowLeft = off - band.lo;
  }
  return success();
}
