//===- Forms.cpp - one entry point over the linalg and TOSA views ---------===//
#include "Match.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::flash::raise;

std::optional<ElementwiseView>
mlir::flash::raise::matchElementwise(Operation *op) {
  if (auto v = linalgElementwise(op))
    return v;
  return tosaElementwise(op);
}
std::optional<ReductionView> mlir::flash::raise::matchReduction(Operation *op) {
  if (auto v = linalgReduction(op))
    return v;
  return tosaReduction(op);
}
std::optional<ContractionView>
mlir::flash::raise::matchContraction(Operation *op) {
  if (auto v = linalgContraction(op))
    return v;
  return tosaContraction(op);
}
std::optional<ReshapeView> mlir::flash::raise::matchReshape(Operation *op) {
  if (auto v = tensorReshape(op))
    return v;
  return tosaReshape(op);
}
std::optional<Attribute> mlir::flash::raise::denseConstant(Value v) {
  Attribute a;
  // arith.constant and tosa.const are both ConstantLike.
  if (matchPattern(v, m_Constant(&a)) && isa<ElementsAttr>(a))
    return a;
  return std::nullopt;
}
