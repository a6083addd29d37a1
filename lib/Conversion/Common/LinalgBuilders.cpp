//===- LinalgBuilders.cpp - terse linalg-on-tensors construction ----------===//
#include "flashfuse/Conversion/Common/LinalgBuilders.h"

#include "flashfuse/Conversion/Common/SoftmaxMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

Value mlir::flash::buildEmpty(OpBuilder &b, Location loc,
                              ArrayRef<OpFoldResult> sizes, Type elt) {
  return tensor::EmptyOp::create(b, loc, sizes, elt);
}

Value mlir::flash::buildFilledF32(OpBuilder &b, Location loc,
                                  ArrayRef<OpFoldResult> sizes, float value) {
  Value empty = buildEmpty(b, loc, sizes, b.getF32Type());
  return linalg::FillOp::create(b, loc, constF32(b, loc, value), empty)
      .getResult(0);
}

Value mlir::flash::buildGeneric(OpBuilder &b, Location loc, ValueRange inputs,
                                Value init, ArrayRef<AffineMap> maps,
                                ArrayRef<utils::IteratorType> iterators,
                                GenericBody body) {
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, init, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
      });
  return generic.getResult(0);
}

Value mlir::flash::multiplyAccumulateF32(OpBuilder &b, Location loc,
                                         ValueRange args) {
  // One statement per op: C++ leaves the order of argument evaluation open,
  // and the IR must not depend on the compiler.
  Value lhs = castToF32(b, loc, args[0]);
  Value rhs = castToF32(b, loc, args[1]);
  Value prod = arith::MulFOp::create(b, loc, lhs, rhs);
  return arith::AddFOp::create(b, loc, args[2], prod);
}

SmallVector<utils::IteratorType>
mlir::flash::parallelThenReduction(unsigned numParallel, unsigned numReduction) {
  SmallVector<utils::IteratorType> its(numParallel,
                                       utils::IteratorType::parallel);
  its.append(numReduction, utils::IteratorType::reduction);
  return its;
}

SmallVector<Value, 6> mlir::flash::loopIndices(OpBuilder &b, Location loc,
                                               unsigned n) {
  SmallVector<Value, 6> idx;
  for (unsigned d = 0; d < n; ++d)
    idx.push_back(linalg::IndexOp::create(b, loc, d));
  return idx;
}
