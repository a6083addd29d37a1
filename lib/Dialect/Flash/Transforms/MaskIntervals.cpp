//===- MaskIntervals.cpp - a mask_mod over index rectangles ---------------===//
//
// Each modelled op maps the intervals of its operands to an interval that
// contains every value the op can produce for operand values inside them
// (an enclosure). Integer results are checked against their type's signed
// range, so a computation that could wrap is unknown rather than wrong; an
// i1 that is unknown is the interval [0, 1], which `and`, `or` and
// `select` still use (a false conjunct decides an `and` alone).
//
// Interval evaluation forgets correlations (i - i is [lo - hi, hi - lo], not
// 0), so it can only lose precision, never soundness: the masks models
// write (causal, windows, prefixes, global tokens, documents of fixed
// length, constant document tables) read each index a few times and are
// decided exactly on every block that lies on one side of their edges.
//
//===----------------------------------------------------------------------===//
#include "MaskIntervals.h"

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::flash;

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

/// Width of an integer or index type (index as 64 bits), 0 for others.
unsigned intWidth(Type t) {
  if (t.isIndex())
    return 64;
  if (auto i = dyn_cast<IntegerType>(t))
    return i.getWidth();
  return 0;
}

bool isI1(Type t) { return t.isInteger(1); }

/// `r` when every value in it is representable in `t` as a signed integer
/// (i1 as 0 / 1), else unknown: the op may have wrapped.
std::optional<Interval> fitIn(Interval r, Type t) {
  unsigned w = intWidth(t);
  if (w == 0)
    return std::nullopt;
  if (w == 1)
    return (r.lo >= 0 && r.hi <= 1) ? std::optional(r) : std::nullopt;
  if (w >= 64)
    return r;
  int64_t lo = -(int64_t(1) << (w - 1)), hi = (int64_t(1) << (w - 1)) - 1;
  if (r.lo < lo || r.hi > hi)
    return std::nullopt;
  return r;
}

/// Smallest interval holding the given values.
Interval hull(std::initializer_list<int64_t> vals) {
  return {std::min(vals), std::max(vals)};
}

/// Truncating, flooring and ceiling signed division, nullopt on overflow.
enum class Rounding { Trunc, Floor, Ceil };
std::optional<int64_t> divide(int64_t x, int64_t y, Rounding r) {
  if (y == 0 || (x == kMin && y == -1))
    return std::nullopt;
  int64_t q = x / y;
  bool inexact = q * y != x;
  bool negative = (x < 0) != (y < 0);
  if (r == Rounding::Floor && inexact && negative)
    --q;
  if (r == Rounding::Ceil && inexact && !negative)
    ++q;
  return q;
}

/// x / y over the box, for a divisor interval that excludes 0: each of the
/// three divisions is monotone in x for a fixed y and in y for a fixed x
/// of one sign, so the extremes are at the corners.
std::optional<Interval> divideIntervals(Interval a, Interval b, Rounding r) {
  if (b.lo <= 0 && b.hi >= 0)
    return std::nullopt;
  std::optional<int64_t> c[4] = {divide(a.lo, b.lo, r), divide(a.lo, b.hi, r),
                                 divide(a.hi, b.lo, r), divide(a.hi, b.hi, r)};
  for (auto &v : c)
    if (!v)
      return std::nullopt;
  return hull({*c[0], *c[1], *c[2], *c[3]});
}

/// x rem c (the sign of x, as arith.remsi) for a constant c != 0. Within
/// one period of |c| on one side of 0 the remainder is x shifted, so exact;
/// otherwise every remainder of that sign up to |c| - 1 may occur.
std::optional<Interval> remainder(Interval a, int64_t c) {
  if (c == 0 || c == kMin)
    return std::nullopt;
  int64_t m = c < 0 ? -c : c;
  if ((a.lo >= 0 || a.hi <= 0) && a.lo / m == a.hi / m)
    return Interval{a.lo % m, a.hi % m};
  if (a.lo >= 0)
    return Interval{0, std::min(a.hi, m - 1)};
  if (a.hi <= 0)
    return Interval{std::max(a.lo, -(m - 1)), 0};
  return Interval{std::max(a.lo, -(m - 1)), std::min(a.hi, m - 1)};
}

/// Three-valued comparisons: [1, 1] always, [0, 0] never, [0, 1] either.
Interval truth(bool always, bool never) {
  return always  ? Interval::point(1)
         : never ? Interval::point(0)
                 : Interval{0, 1};
}
Interval lessThan(Interval a, Interval b) {
  return truth(a.hi < b.lo, a.lo >= b.hi);
}
Interval lessEqual(Interval a, Interval b) {
  return truth(a.hi <= b.lo, a.lo > b.hi);
}
Interval equal(Interval a, Interval b) {
  return truth(a.isPoint() && b.isPoint() && a.lo == b.lo,
               a.hi < b.lo || b.hi < a.lo);
}

Interval compare(arith::CmpIPredicate p, Interval a, Interval b) {
  using P = arith::CmpIPredicate;
  auto negate = [](Interval t) { return Interval{1 - t.hi, 1 - t.lo}; };
  switch (p) {
  case P::eq:
    return equal(a, b);
  case P::ne:
    return negate(equal(a, b));
  case P::slt:
  case P::ult:
    return lessThan(a, b);
  case P::sle:
  case P::ule:
    return lessEqual(a, b);
  case P::sgt:
  case P::ugt:
    return lessThan(b, a);
  case P::sge:
  case P::uge:
    return lessEqual(b, a);
  }
  return {0, 1};
}

bool isUnsigned(arith::CmpIPredicate p) {
  using P = arith::CmpIPredicate;
  return p == P::ult || p == P::ule || p == P::ugt || p == P::uge;
}

/// The elements of an integer constant tensor, sign-extended (i1 as 0/1).
std::optional<SmallVector<int64_t>> constantElements(Value tensor) {
  DenseIntElementsAttr attr;
  if (!tensor.getDefiningOp() || !matchPattern(tensor, m_Constant(&attr)))
    return std::nullopt;
  bool boolean = isI1(attr.getElementType());
  SmallVector<int64_t> out;
  out.reserve(attr.getNumElements());
  for (const APInt &v : attr.getValues<APInt>())
    out.push_back(boolean ? int64_t(v.getBoolValue()) : v.getSExtValue());
  return out;
}

/// Enclosure of `elts[idx]` (row-major over `shape`) for idx in the box
/// `idx`, clipped to the tensor (an index outside it is undefined
/// behaviour in the region, so no point of the box reads there). Boxes
/// larger than `limit` elements are not scanned.
std::optional<Interval> extractRange(ArrayRef<int64_t> elts,
                                     ArrayRef<int64_t> shape,
                                     ArrayRef<Interval> idx) {
  constexpr int64_t limit = 1 << 16;
  SmallVector<Interval> box;
  int64_t count = 1;
  for (auto [r, dim] : llvm::zip_equal(idx, shape)) {
    Interval c{std::max<int64_t>(r.lo, 0), std::min<int64_t>(r.hi, dim - 1)};
    if (c.lo > c.hi)
      return std::nullopt;
    box.push_back(c);
    count *= c.hi - c.lo + 1;
    if (count > limit)
      return std::nullopt;
  }
  SmallVector<int64_t> at;
  for (Interval c : box)
    at.push_back(c.lo);
  Interval out{kMax, kMin};
  for (int64_t n = 0; n < count; ++n) {
    int64_t flat = 0;
    for (auto [i, dim] : llvm::zip_equal(at, shape))
      flat = flat * dim + i;
    out = {std::min(out.lo, elts[flat]), std::max(out.hi, elts[flat])};
    // Odometer step over the box.
    for (int64_t d = int64_t(at.size()) - 1; d >= 0; --d) {
      if (++at[d] <= box[d].hi)
        break;
      at[d] = box[d].lo;
    }
  }
  return out;
}

} // namespace

MaskIntervalEvaluator::MaskIntervalEvaluator(Region &maskMod)
    : region(maskMod) {
  if (!region.hasOneBlock()) {
    firstUnmodelled = region.getParentOp();
    return;
  }
  Block &body = region.front();
  usesBatchOrHead =
      body.getNumArguments() >= 2 &&
      (!body.getArgument(0).use_empty() || !body.getArgument(1).use_empty());
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  // Find the first op no box can bound, for the caller's remarks; every
  // other op is re-evaluated per box.
  for (Operation *op : ops) {
    bool modelled =
        op->getNumRegions() == 0 && op->getNumResults() == 1 &&
        isa<arith::ConstantOp, arith::AddIOp, arith::SubIOp, arith::MulIOp,
            arith::DivSIOp, arith::DivUIOp, arith::FloorDivSIOp,
            arith::CeilDivSIOp, arith::RemSIOp, arith::RemUIOp, arith::MaxSIOp,
            arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp, arith::CmpIOp,
            arith::AndIOp, arith::OrIOp, arith::XOrIOp, arith::SelectOp,
            arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
            arith::ExtUIOp, arith::TruncIOp, math::AbsIOp, tensor::ExtractOp>(
            op);
    if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
      auto elts = constantElements(extract.getTensor());
      modelled = elts.has_value();
      if (elts)
        constants[extract.getTensor()] = std::move(*elts);
    }
    if (!modelled && !firstUnmodelled)
      firstUnmodelled = op;
  }
}

std::optional<Interval> MaskIntervalEvaluator::lookup(Value v) {
  if (auto it = env.find(v); it != env.end())
    return it->second;
  // Integer constants defined above the op (a window width, a prefix
  // length hoisted out of the region).
  IntegerAttr attr;
  if (v.getDefiningOp() && !region.isAncestor(v.getParentRegion()) &&
      matchPattern(v, m_Constant(&attr)))
    return Interval::point(isI1(v.getType())
                               ? int64_t(attr.getValue().getBoolValue())
                               : attr.getValue().getSExtValue());
  // An unknown i1 is either value.
  if (isI1(v.getType()))
    return Interval{0, 1};
  return std::nullopt;
}

std::optional<Interval> MaskIntervalEvaluator::evalOp(Operation *op) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0)
    return std::nullopt;
  Type type = op->getResult(0).getType();
  if (intWidth(type) == 0)
    return std::nullopt;
  bool boolean = isI1(type);

  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    auto attr = dyn_cast<IntegerAttr>(c.getValue());
    if (!attr)
      return std::nullopt;
    return Interval::point(boolean ? int64_t(attr.getValue().getBoolValue())
                                   : attr.getValue().getSExtValue());
  }

  // Logic on i1: three-valued, so one decided side may decide the result.
  if (boolean && isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(op)) {
    Interval a = *lookup(op->getOperand(0)), b = *lookup(op->getOperand(1));
    if (isa<arith::AndIOp>(op))
      return Interval{a.lo & b.lo, a.hi & b.hi};
    if (isa<arith::OrIOp>(op))
      return Interval{a.lo | b.lo, a.hi | b.hi};
    if (a.isPoint() && b.isPoint())
      return Interval::point(a.lo ^ b.lo);
    return Interval{0, 1};
  }
  if (auto sel = dyn_cast<arith::SelectOp>(op)) {
    if (!isI1(sel.getCondition().getType()))
      return std::nullopt; // a vector condition: not in a scalar region
    Interval c = *lookup(sel.getCondition());
    std::optional<Interval> t = lookup(sel.getTrueValue()),
                            f = lookup(sel.getFalseValue());
    if (c.isPoint())
      return c.lo ? t : f;
    if (!t || !f)
      return std::nullopt;
    return Interval{std::min(t->lo, f->lo), std::max(t->hi, f->hi)};
  }
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    std::optional<Interval> a = lookup(cmp.getLhs()), b = lookup(cmp.getRhs());
    if (!a || !b)
      return Interval{0, 1};
    arith::CmpIPredicate p = cmp.getPredicate();
    // i1 operands are held as 0/1, which orders them as unsigned; signed
    // i1 order (true = -1) is not modelled. Unsigned order agrees with the
    // signed intervals only where both sides are non-negative.
    bool signedI1 = isI1(cmp.getLhs().getType()) && !isUnsigned(p) &&
                    p != arith::CmpIPredicate::eq &&
                    p != arith::CmpIPredicate::ne;
    if (signedI1 || (isUnsigned(p) && (a->lo < 0 || b->lo < 0)))
      return Interval{0, 1};
    return compare(p, *a, *b);
  }
  if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
    auto it = constants.find(extract.getTensor());
    if (it == constants.end())
      return std::nullopt;
    SmallVector<Interval> idx;
    for (Value i : extract.getIndices()) {
      std::optional<Interval> r = lookup(i);
      if (!r)
        return std::nullopt;
      idx.push_back(*r);
    }
    return extractRange(it->second, extract.getTensor().getType().getShape(),
                        idx);
  }

  // Casts: the value is kept where the target holds it.
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
          arith::ExtUIOp, arith::TruncIOp>(op)) {
    Value in = op->getOperand(0);
    std::optional<Interval> a = lookup(in);
    if (!a)
      return std::nullopt;
    bool fromI1 = isI1(in.getType());
    if (fromI1 && isa<arith::ExtSIOp>(op))
      return fitIn(Interval{-a->hi, -a->lo}, type);
    // Zero extension of a negative value changes it (a non-i1 source).
    if (!fromI1 && a->lo < 0 && isa<arith::ExtUIOp, arith::IndexCastUIOp>(op))
      return std::nullopt;
    if (boolean && !fromI1)
      return a->isPoint() ? std::optional(Interval::point(a->lo & 1))
                          : std::optional(Interval{0, 1});
    return fitIn(*a, type);
  }

  // Integer arithmetic (not on i1, whose add is an xor).
  if (boolean)
    return std::nullopt;
  std::optional<Interval> a = lookup(op->getOperand(0));
  if (!a)
    return std::nullopt;
  if (auto abs = dyn_cast<math::AbsIOp>(op)) {
    if (a->lo == kMin)
      return std::nullopt;
    if (a->lo >= 0)
      return fitIn(*a, type);
    if (a->hi <= 0)
      return fitIn(Interval{-a->hi, -a->lo}, type);
    return fitIn(Interval{0, std::max(-a->lo, a->hi)}, type);
  }
  if (op->getNumOperands() != 2)
    return std::nullopt;
  std::optional<Interval> b = lookup(op->getOperand(1));
  if (!b)
    return std::nullopt;
  int64_t lo, hi;
  if (isa<arith::AddIOp>(op)) {
    if (llvm::AddOverflow(a->lo, b->lo, lo) ||
        llvm::AddOverflow(a->hi, b->hi, hi))
      return std::nullopt;
    return fitIn({lo, hi}, type);
  }
  if (isa<arith::SubIOp>(op)) {
    if (llvm::SubOverflow(a->lo, b->hi, lo) ||
        llvm::SubOverflow(a->hi, b->lo, hi))
      return std::nullopt;
    return fitIn({lo, hi}, type);
  }
  if (isa<arith::MulIOp>(op)) {
    int64_t c[4];
    if (llvm::MulOverflow(a->lo, b->lo, c[0]) ||
        llvm::MulOverflow(a->lo, b->hi, c[1]) ||
        llvm::MulOverflow(a->hi, b->lo, c[2]) ||
        llvm::MulOverflow(a->hi, b->hi, c[3]))
      return std::nullopt;
    return fitIn(hull({c[0], c[1], c[2], c[3]}), type);
  }
  bool nonNegative = a->lo >= 0 && b->lo >= 0;
  std::optional<Interval> r;
  if (isa<arith::DivSIOp>(op) || (isa<arith::DivUIOp>(op) && nonNegative))
    r = divideIntervals(*a, *b, Rounding::Trunc);
  else if (isa<arith::FloorDivSIOp>(op))
    r = divideIntervals(*a, *b, Rounding::Floor);
  else if (isa<arith::CeilDivSIOp>(op))
    r = divideIntervals(*a, *b, Rounding::Ceil);
  else if ((isa<arith::RemSIOp>(op) ||
            (isa<arith::RemUIOp>(op) && nonNegative)) &&
           b->isPoint())
    r = remainder(*a, b->lo);
  else if (isa<arith::MaxSIOp>(op) || (isa<arith::MaxUIOp>(op) && nonNegative))
    r = Interval{std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
  else if (isa<arith::MinSIOp>(op) || (isa<arith::MinUIOp>(op) && nonNegative))
    r = Interval{std::min(a->lo, b->lo), std::min(a->hi, b->hi)};
  else if (isa<arith::AndIOp>(op) && nonNegative)
    r = Interval{0, std::min(a->hi, b->hi)}; // x & y <= min(x, y) for x, y >= 0
  if (!r)
    return std::nullopt;
  return fitIn(*r, type);
}

BoxVerdict MaskIntervalEvaluator::evaluate(const std::array<Interval, 4> &box) {
  if (!region.hasOneBlock())
    return BoxVerdict::Some;
  auto yield = dyn_cast<YieldOp>(region.front().getTerminator());
  if (!yield || yield.getValues().size() != 1)
    return BoxVerdict::Some;
  SmallVector<Value, 1> terms(yield.getValues());
  return evaluate(box, terms);
}

BoxVerdict MaskIntervalEvaluator::evaluate(const std::array<Interval, 4> &box,
                                           ArrayRef<Value> terms) {
  if (!region.hasOneBlock())
    return BoxVerdict::Some;
  Block &body = region.front();
  env.clear();
  for (auto [arg, r] : llvm::zip(body.getArguments(), box))
    env[arg] = r;
  for (Operation *op : ops)
    if (std::optional<Interval> r = evalOp(op))
      env[op->getResult(0)] = *r;
  // An empty conjunction keeps everything.
  Interval all = Interval::point(1);
  for (Value term : terms) {
    std::optional<Interval> t = lookup(term);
    if (!t)
      return BoxVerdict::Some;
    all = {all.lo & t->lo, all.hi & t->hi};
  }
  if (!all.isPoint())
    return BoxVerdict::Some;
  return all.lo ? BoxVerdict::All : BoxVerdict::None;
}
