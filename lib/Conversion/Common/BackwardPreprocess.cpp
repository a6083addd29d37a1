//===- BackwardPreprocess.cpp - D = rowsum(dO ∘ O) -------------------------===//
#include "flashfuse/Conversion/Common/BackwardPreprocess.h"

#include "flashfuse/Conversion/Common/Layout.h"
#include "flashfuse/Conversion/Common/LinalgBuilders.h"
#include "flashfuse/Conversion/Common/SoftmaxMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::flash;

Value mlir::flash::buildGradOutputDotOutput(OpBuilder &b, Location loc,
                                            AttentionGradOp op) {
  auto iface = cast<AttentionVariantInterface>(*op);
  AttentionSizes sz = iface.getSizes();
  MLIRContext *ctx = b.getContext();
  auto d = [&](unsigned n) { return getAffineDimExpr(n, ctx); };
  // Loops (b, h, i, e), e reduced.
  AffineMap rowsOfQ = AffineMap::get(
      4, 0, toOperandOrder<AffineExpr>({d(0), d(1), d(2), d(3)}, iface.getQueryPerm()),
      ctx);
  AffineMap row = AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx);
  Value init = buildFilledF32(b, loc,
                              {b.getIndexAttr(sz.batch), b.getIndexAttr(sz.headsQ),
                               b.getIndexAttr(sz.seqQ)},
                              0.0f);
  return buildGeneric(b, loc, {op.getGradOutput(), op.getOutput()}, init,
                      {rowsOfQ, rowsOfQ, row}, parallelThenReduction(3, 1),
                      multiplyAccumulateF32);
}
