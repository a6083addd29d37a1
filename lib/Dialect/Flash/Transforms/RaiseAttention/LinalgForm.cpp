//===- LinalgForm.cpp - linalg/tensor/arith ops as neutral views ----------===//
//
// torch-mlir's linalg-on-tensors output spells every elementwise step as a
// linalg.generic (broadcasts in the indexing maps), reductions as generics
// with one reduction loop over a linalg.fill, matmuls as linalg.matmul /
// batch_matmul, and layout changes as linalg.transpose, generics that copy,
// and tensor.expand_shape / collapse_shape. This file recognises those.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::flash::raise;

std::optional<ElementwiseView>
mlir::flash::raise::linalgElementwise(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
      linalgOp.getNumReductionLoops() != 0 || isa<linalg::FillOp>(op) ||
      op->getNumRegions() != 1 || op->getRegion(0).empty())
    return std::nullopt;
  // The value must not depend on the init (an in-place update is no
  // elementwise function of the inputs).
  Block *body = linalgOp.getBlock();
  OpOperand *init = linalgOp.getDpsInitOperand(0);
  if (linalgOp.payloadUsesValueFromOperand(init))
    return std::nullopt;
  ElementwiseView v;
  v.op = op;
  v.body = body;
  for (OpOperand *in : linalgOp.getDpsInputOperands()) {
    v.inputs.push_back(in->get());
    v.inputMaps.push_back(linalgOp.getMatchingIndexingMap(in));
  }
  v.outputMap = linalgOp.getMatchingIndexingMap(init);
  if (!v.outputMap.isPermutation())
    return std::nullopt;
  return v;
}

/// The scalar constant a linalg.fill writes, if any.
static std::optional<double> fillValue(Value v) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return std::nullopt;
  Attribute a;
  if (!matchPattern(fill.getInputs()[0], m_Constant(&a)))
    return std::nullopt;
  if (auto f = dyn_cast<FloatAttr>(a))
    return f.getValueAsDouble();
  if (auto i = dyn_cast<IntegerAttr>(a))
    return double(i.getValue().getSExtValue() != 0 ? 1 : 0);
  return std::nullopt;
}

std::optional<ReductionView>
mlir::flash::raise::linalgReduction(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumReductionLoops() != 1 ||
      linalgOp.getNumDpsInputs() != 1 || linalgOp.getNumDpsInits() < 1 ||
      op->getNumRegions() != 1)
    return std::nullopt;
  OpOperand *in = linalgOp.getDpsInputOperand(0);
  OpOperand *init = linalgOp.getDpsInitOperand(0);
  if (!linalgOp.getMatchingIndexingMap(in).isIdentity())
    return std::nullopt;
  SmallVector<unsigned> red;
  linalgOp.getReductionDims(red);
  ReductionView v;
  v.op = op;
  v.input = in->get();
  v.axis = red[0];
  AffineMap outMap = linalgOp.getMatchingIndexingMap(init);
  v.keepDim = outMap.getNumResults() == outMap.getNumDims();
  // The combiner of result 0 must be max/add/and of the input and the init.
  Block *body = linalgOp.getBlock();
  Value inArg = body->getArgument(0);
  Value outArg = linalgOp.getMatchingBlockArgument(init);
  Operation *comb = body->getTerminator()->getOperand(0).getDefiningOp();
  if (!comb)
    return std::nullopt;
  auto isInOut = [&](Value a, Value b) {
    return (a == inArg && b == outArg) || (a == outArg && b == inArg);
  };
  auto init0 = fillValue(init->get());
  if (!init0)
    return std::nullopt;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(comb) &&
      isInOut(comb->getOperand(0), comb->getOperand(1))) {
    v.kind = ReductionKind::Max;
  } else if (auto sel = dyn_cast<arith::SelectOp>(comb)) {
    auto cmp = sel.getCondition().getDefiningOp<arith::CmpFOp>();
    if (!cmp || sel.getTrueValue() != inArg || sel.getFalseValue() != outArg ||
        cmp.getLhs() != inArg || cmp.getRhs() != outArg ||
        (cmp.getPredicate() != arith::CmpFPredicate::OGT &&
         cmp.getPredicate() != arith::CmpFPredicate::OGE))
      return std::nullopt;
    v.kind = ReductionKind::Max;
  } else if (isa<arith::AddFOp>(comb) &&
             isInOut(comb->getOperand(0), comb->getOperand(1))) {
    v.kind = ReductionKind::Sum;
  } else if (isa<arith::AndIOp>(comb) &&
             isInOut(comb->getOperand(0), comb->getOperand(1))) {
    v.kind = ReductionKind::And;
  } else {
    return std::nullopt;
  }
  // A max must start at -inf (or a lowest float, f16's -65504 included), a
  // sum at 0, an and at true; otherwise the init changes the value.
  bool okInit = (v.kind == ReductionKind::Max && *init0 <= -6.0e4) ||
                (v.kind == ReductionKind::Sum && *init0 == 0.0) ||
                (v.kind == ReductionKind::And && *init0 == 1.0);
  if (!okInit)
    return std::nullopt;
  return v;
}

std::optional<ContractionView>
mlir::flash::raise::linalgContraction(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      !linalg::isaContractionOpInterface(linalgOp) ||
      linalgOp.getNumDpsInputs() != 2)
    return std::nullopt;
  // The accumulator must start at zero: out = lhs·rhs, not out += lhs·rhs.
  auto zero = fillValue(linalgOp.getDpsInitOperand(0)->get());
  if (!zero || *zero != 0.0)
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(linalgOp);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1 || dims->batch.size() > 2)
    return std::nullopt;
  ContractionView v;
  v.op = op;
  v.lhs = linalgOp.getDpsInputOperand(0)->get();
  v.rhs = linalgOp.getDpsInputOperand(1)->get();
  v.result = op->getResult(0);
  v.maps = SmallVector<AffineMap, 3>(linalgOp.getIndexingMapsArray());
  v.batchDims.assign(dims->batch.begin(), dims->batch.end());
  v.mDim = dims->m[0];
  v.nDim = dims->n[0];
  v.rDim = dims->k[0];
  return v;
}

std::optional<ReshapeView> mlir::flash::raise::tensorReshape(Operation *op) {
  if (auto e = dyn_cast<tensor::ExpandShapeOp>(op))
    return ReshapeView{e.getSrc(), e.getReassociationIndices(), true};
  if (auto c = dyn_cast<tensor::CollapseShapeOp>(op))
    return ReshapeView{c.getSrc(), c.getReassociationIndices(), false};
  return std::nullopt;
}

std::optional<Attribute> mlir::flash::raise::splatConstant(Value v) {
  auto dense = denseConstant(v);
  if (dense) {
    if (auto e = dyn_cast<DenseElementsAttr>(*dense); e && e.isSplat())
      return e.getSplatValue<Attribute>();
    return std::nullopt;
  }
  if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
    Attribute a;
    if (matchPattern(fill.getInputs()[0], m_Constant(&a)))
      return a;
  }
  return std::nullopt;
}
