//===- Layout.cpp - logical indexing of flash operands ---------------------===//
#include "flashfuse/Conversion/Common/Layout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

AffineMap mlir::flash::broadcastMap(ShapedType type,
                                    ArrayRef<AffineExpr> logical,
                                    unsigned numDims) {
  MLIRContext *ctx = type.getContext();
  SmallVector<AffineExpr, 4> exprs;
  for (unsigned d = 0; d < 4; ++d)
    exprs.push_back(isBroadcastDim(type, d) ? getAffineConstantExpr(0, ctx)
                                            : logical[d]);
  return AffineMap::get(numDims, /*symbolCount=*/0, exprs, ctx);
}

SmallVector<Value, 4> mlir::flash::broadcastIndices(OpBuilder &b, Location loc,
                                                    ShapedType type,
                                                    ArrayRef<Value> logical) {
  SmallVector<Value, 4> indices;
  Value zero;
  for (unsigned d = 0; d < 4; ++d) {
    if (!isBroadcastDim(type, d)) {
      indices.push_back(logical[d]);
      continue;
    }
    if (!zero)
      zero = arith::ConstantIndexOp::create(b, loc, 0);
    indices.push_back(zero);
  }
  return indices;
}

LogicalResult mlir::flash::requireStaticShapes(Operation *op,
                                               StringRef lowering) {
  auto check = [&](Value v, StringRef kind, unsigned n) -> LogicalResult {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || t.hasStaticShape())
      return success();
    return op->emitOpError() << lowering << " needs static shapes: " << kind
                             << " #" << n << " has type " << t;
  };
  for (auto [n, v] : llvm::enumerate(op->getOperands()))
    if (failed(check(v, "operand", n)))
      return failure();
  for (auto [n, v] : llvm::enumerate(op->getResults()))
    if (failed(check(v, "result", n)))
      return failure();
  return success();
}
