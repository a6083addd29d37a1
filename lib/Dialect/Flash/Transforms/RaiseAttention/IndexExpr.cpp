//===- IndexExpr.cpp - linear index arithmetic over (b, h, q, k) ----------===//
//
// Reshapes between [B*H, S, S] and [B, H, S, S] turn one index into div/mod
// of another. Affine simplification cannot drop `(b*H + h) floordiv H` to `b`
// without knowing h < H, so the matcher keeps indices as linear forms over
// dimensions with known extents and simplifies mixed-radix div/mod itself.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::flash::raise;

LinExpr LinExpr::operator+(const LinExpr &o) const {
  LinExpr r = *this;
  for (unsigned d = 0; d < kNumLogical; ++d)
    r.c[d] += o.c[d];
  r.cst += o.cst;
  return r;
}
LinExpr LinExpr::operator-(const LinExpr &o) const { return *this + o * -1; }
LinExpr LinExpr::operator*(int64_t f) const {
  LinExpr r = *this;
  for (unsigned d = 0; d < kNumLogical; ++d)
    r.c[d] *= f;
  r.cst *= f;
  return r;
}
bool LinExpr::operator==(const LinExpr &o) const {
  for (unsigned d = 0; d < kNumLogical; ++d)
    if (c[d] != o.c[d])
      return false;
  return cst == o.cst;
}
std::optional<unsigned> LinExpr::asDim() const {
  if (cst != 0)
    return std::nullopt;
  std::optional<unsigned> found;
  for (unsigned d = 0; d < kNumLogical; ++d) {
    if (c[d] == 0)
      continue;
    if (c[d] != 1 || found)
      return std::nullopt;
    found = d;
  }
  return found;
}
int64_t LinExpr::eval(const int64_t idx[kNumLogical]) const {
  int64_t v = cst;
  for (unsigned d = 0; d < kNumLogical; ++d)
    v += c[d] * idx[d];
  return v;
}

LinIndex mlir::flash::raise::identityIndex(unsigned rank) {
  LinIndex id;
  for (unsigned d = 0; d < rank; ++d)
    id.push_back(LinExpr::dim(d));
  return id;
}

Extents mlir::flash::raise::extentsOf(ArrayRef<int64_t> shape) {
  Extents ext{{1, 1, 1, 1}};
  for (unsigned d = 0; d < shape.size() && d < kNumLogical; ++d)
    ext.e[d] = shape[d];
  return ext;
}

/// Splits e into m*hi + lo where lo holds the terms whose coefficient m does
/// not divide; valid when lo stays in [0, m) over the extents.
static std::optional<std::pair<LinExpr, LinExpr>>
splitRadix(const LinExpr &e, int64_t m, const Extents &ext) {
  if (m <= 0)
    return std::nullopt;
  LinExpr hi, lo;
  for (unsigned d = 0; d < kNumLogical; ++d) {
    if (e.c[d] % m == 0) {
      hi.c[d] = e.c[d] / m;
      continue;
    }
    if (e.c[d] < 0 || ext.e[d] == ShapedType::kDynamic)
      return std::nullopt;
    lo.c[d] = e.c[d];
  }
  hi.cst = e.cst / m;
  lo.cst = e.cst % m;
  if (lo.cst < 0)
    return std::nullopt;
  int64_t maxLo = lo.cst;
  for (unsigned d = 0; d < kNumLogical; ++d)
    if (lo.c[d])
      maxLo += lo.c[d] * (ext.e[d] - 1);
  if (maxLo >= m)
    return std::nullopt;
  return std::make_pair(hi, lo);
}

std::optional<LinExpr> mlir::flash::raise::floorDivBy(const LinExpr &e,
                                                      int64_t m,
                                                      const Extents &ext) {
  if (auto s = splitRadix(e, m, ext))
    return s->first;
  return std::nullopt;
}
std::optional<LinExpr> mlir::flash::raise::modBy(const LinExpr &e, int64_t m,
                                                 const Extents &ext) {
  if (auto s = splitRadix(e, m, ext))
    return s->second;
  return std::nullopt;
}

static std::optional<LinExpr> applyExpr(AffineExpr a,
                                        ArrayRef<LinExpr> loops,
                                        const Extents &ext) {
  if (auto d = dyn_cast<AffineDimExpr>(a))
    return loops[d.getPosition()];
  if (auto c = dyn_cast<AffineConstantExpr>(a))
    return LinExpr::constant(c.getValue());
  auto bin = dyn_cast<AffineBinaryOpExpr>(a);
  if (!bin)
    return std::nullopt;
  auto l = applyExpr(bin.getLHS(), loops, ext);
  auto r = applyExpr(bin.getRHS(), loops, ext);
  if (!l || !r)
    return std::nullopt;
  switch (a.getKind()) {
  case AffineExprKind::Add:
    return *l + *r;
  case AffineExprKind::Mul:
    if (r->isConstant())
      return *l * r->cst;
    if (l->isConstant())
      return *r * l->cst;
    return std::nullopt;
  case AffineExprKind::FloorDiv:
    return r->isConstant() ? floorDivBy(*l, r->cst, ext) : std::nullopt;
  case AffineExprKind::Mod:
    return r->isConstant() ? modBy(*l, r->cst, ext) : std::nullopt;
  default:
    return std::nullopt;
  }
}

std::optional<LinIndex> mlir::flash::raise::applyMap(AffineMap map,
                                                     ArrayRef<LinExpr> loops,
                                                     const Extents &ext) {
  LinIndex out;
  for (AffineExpr r : map.getResults()) {
    auto e = applyExpr(r, loops, ext);
    if (!e)
      return std::nullopt;
    out.push_back(*e);
  }
  return out;
}

std::optional<LinIndex>
mlir::flash::raise::invertPermutation(AffineMap map, ArrayRef<LinExpr> result) {
  if (!map.isPermutation() || map.getNumResults() != result.size())
    return std::nullopt;
  LinIndex loops(map.getNumDims());
  for (auto [i, r] : llvm::enumerate(map.getResults()))
    loops[cast<AffineDimExpr>(r).getPosition()] = result[i];
  return loops;
}

/// In a reshape, the collapsed side has one dim per group, the expanded side
/// one per group member: collapsed = sum member * stride.
std::optional<LinIndex> mlir::flash::raise::reshapeSourceIndex(
    ArrayRef<ReassociationIndices> reassoc, bool expand,
    ArrayRef<int64_t> srcShape, ArrayRef<int64_t> resShape,
    ArrayRef<LinExpr> result, const Extents &ext) {
  ArrayRef<int64_t> expandedShape = expand ? resShape : srcShape;
  LinIndex out;
  if (expand) {
    // Source dim g = linear combination of the result dims of group g.
    for (const ReassociationIndices &group : reassoc) {
      LinExpr acc;
      for (int64_t d : group) {
        if (expandedShape[d] == ShapedType::kDynamic && group.size() > 1)
          return std::nullopt;
        acc = acc * expandedShape[d] + result[d];
      }
      out.push_back(acc);
    }
    return out;
  }
  // Collapse: split result dim g into its group's source dims.
  out.resize(srcShape.size());
  for (auto [g, group] : llvm::enumerate(reassoc)) {
    LinExpr rest = result[g];
    for (int64_t i = group.size() - 1; i >= 0; --i) {
      int64_t d = group[i];
      if (i == 0) {
        out[d] = rest;
        break;
      }
      int64_t size = expandedShape[d];
      if (size == ShapedType::kDynamic)
        return std::nullopt;
      auto lo = modBy(rest, size, ext);
      auto hi = floorDivBy(rest, size, ext);
      if (!lo || !hi)
        return std::nullopt;
      out[d] = *lo;
      rest = *hi;
    }
  }
  return out;
}

std::optional<LinIndex> mlir::flash::raise::reshapeResultIndex(
    ArrayRef<ReassociationIndices> reassoc, bool expand,
    ArrayRef<int64_t> srcShape, ArrayRef<int64_t> resShape,
    ArrayRef<LinExpr> src, const Extents &ext) {
  // The inverse of a reshape is the reshape the other way round.
  return reshapeSourceIndex(reassoc, !expand, resShape, srcShape, src, ext);
}
