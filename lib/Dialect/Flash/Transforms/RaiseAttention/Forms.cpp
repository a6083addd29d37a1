//===- Forms.cpp - one entry point over the linalg and TOSA views ---------===//
#include "Match.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::flash::raise;

/// The linalg view if the op has one, else the TOSA view.
template <typename View>
static std::optional<View> either(std::optional<View> (*linalgForm)(Operation *),
                                  std::optional<View> (*tosaForm)(Operation *),
                                  Operation *op) {
  if (auto v = linalgForm(op))
    return v;
  return tosaForm(op);
}

std::optional<ElementwiseView>
mlir::flash::raise::matchElementwise(Operation *op) {
  return either(linalgElementwise, tosaElementwise, op);
}
std::optional<ReductionView> mlir::flash::raise::matchReduction(Operation *op) {
  return either(linalgReduction, tosaReduction, op);
}
std::optional<ContractionView>
mlir::flash::raise::matchContraction(Operation *op) {
  return either(linalgContraction, tosaContraction, op);
}
std::optional<ReshapeView> mlir::flash::raise::matchReshape(Operation *op) {
  return either(tensorReshape, tosaReshape, op);
}
std::optional<Attribute> mlir::flash::raise::denseConstant(Value v) {
  Attribute a;
  // arith.constant and tosa.const are both ConstantLike.
  if (matchPattern(v, m_Constant(&a)) && isa<ElementsAttr>(a))
    return a;
  return std::nullopt;
}
