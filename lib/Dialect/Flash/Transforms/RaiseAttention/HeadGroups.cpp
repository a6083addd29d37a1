//===- HeadGroups.cpp - K/V heads repeated before the layout changes ------===//
//
// Grouped-query attention usually repeats K and V heads right before the
// matmuls (repeat_kv), and traceOperand peels that broadcast. Some models
// repeat earlier: Falcon's new decoder architecture splits one fused QKV
// projection laid out [B, S, Hkv, G + 2, D] and broadcasts K and V over the
// G query heads of their group straight away, so K then goes through the
// transposes and the rotary embedding with Hq = Hkv * G heads, while V,
// which reaches the P·V matmul through reshapes only, is peeled to Hkv.
//
// headGroupsOf proves the repetition instead of peeling it: it follows a
// tensor back through elementwise ops (RoPE's multiply, negate and add,
// transposes), full slices, concatenations of other dims and reshapes, and
// returns the largest g such that the tensor's value does not change within
// each run of g consecutive indices of one dim. Heads h and h' with
// h / g == h' / g then hold the same data, and the operand may read every
// g-th head only (a strided slice of the base) as a kv head of a GQA
// group: the kernels read Hkv heads instead of Hq.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"

#include <numeric>

using namespace mlir;
using namespace mlir::flash::raise;

namespace {
struct HeadGroups {
  DenseMap<std::pair<Value, unsigned>, int64_t> memo;
  unsigned budget = 256;

  int64_t of(Value t, unsigned dim);
  int64_t compute(Value t, unsigned dim, int64_t extent);
};
} // namespace

int64_t HeadGroups::of(Value t, unsigned dim) {
  auto ty = dyn_cast<RankedTensorType>(t.getType());
  if (!ty || dim >= ty.getRank() || ty.isDynamicDim(dim))
    return 1;
  auto key = std::make_pair(t, dim);
  if (auto it = memo.find(key); it != memo.end())
    return it->second;
  // Visiting a value again before it is computed means a cycle; 1 is safe.
  memo[key] = 1;
  int64_t extent = ty.getDimSize(dim);
  int64_t g = budget ? (--budget, compute(t, dim, extent)) : 1;
  // A run never exceeds the extent, and must tile it.
  g = std::gcd(g, extent);
  memo[key] = g;
  return g;
}

int64_t HeadGroups::compute(Value t, unsigned dim, int64_t extent) {
  if (splatConstant(t))
    return extent;
  Operation *def = t.getDefiningOp();
  if (!def)
    return 1;

  if (auto ew = matchElementwise(def)) {
    // The loop dim that writes `dim`, and every input's read of it.
    unsigned loop = cast<AffineDimExpr>(ew->outputMap.getResult(dim))
                        .getPosition();
    if (ew->body) {
      bool readsIndex = false;
      ew->body->walk([&](linalg::IndexOp ix) {
        readsIndex |= ix.getDim() == loop;
      });
      if (readsIndex)
        return 1;
    }
    int64_t g = extent;
    for (auto [in, map] : llvm::zip(ew->inputs, ew->inputMaps)) {
      if (!map.isFunctionOfDim(loop))
        continue; // broadcast along `dim`: constant there
      std::optional<unsigned> at;
      for (auto [j, r] : llvm::enumerate(map.getResults()))
        if (auto d = dyn_cast<AffineDimExpr>(r); d && d.getPosition() == loop)
          at = j;
        else if (r.isFunctionOfDim(loop))
          return 1; // `dim` mixed with another index
      if (!at)
        return 1;
      g = std::gcd(g, of(in, *at));
      if (g == 1)
        return 1;
    }
    return g;
  }

  if (auto rs = matchReshape(def)) {
    auto srcShape = cast<ShapedType>(rs->source.getType()).getShape();
    auto resShape = cast<ShapedType>(t.getType()).getShape();
    if (!rs->expand) {
      // A collapsed dim is a mixed-radix index whose fastest digit is the
      // last source dim of its group: runs along that digit carry over.
      ReassociationIndices group = rs->reassoc[dim];
      return of(rs->source, group.back());
    }
    // An expanded dim: only the fastest non-unit dim of its group keeps the
    // source's runs; slower ones would need them to span whole rows.
    for (auto [s, group] : llvm::enumerate(rs->reassoc)) {
      if (!llvm::is_contained(group, int64_t(dim)))
        continue;
      for (int64_t r = group.back(); r > int64_t(dim); --r)
        if (resShape[r] != 1)
          return 1;
      return of(rs->source, s);
    }
    (void)srcShape;
    return 1;
  }

  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
    // Slices of other dims, taking all of `dim` at unit stride.
    auto src = slice.getSourceType();
    if (src.getRank() != slice.getResultType().getRank() ||
        slice.getStaticOffsets()[dim] != 0 ||
        slice.getStaticStrides()[dim] != 1 ||
        slice.getStaticSizes()[dim] != src.getDimSize(dim))
      return 1;
    return of(slice.getSource(), dim);
  }

  if (auto concat = dyn_cast<tensor::ConcatOp>(def)) {
    if (concat.getDim() == dim)
      return 1;
    int64_t g = extent;
    for (Value in : concat.getInputs())
      g = std::gcd(g, of(in, dim));
    return g;
  }
  return 1;
}

int64_t mlir::flash::raise::headGroupsOf(Value t, unsigned dim) {
  HeadGroups h;
  return h.of(t, dim);
}
