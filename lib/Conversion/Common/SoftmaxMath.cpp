//===- SoftmaxMath.cpp - f32 softmax statistics shared by lowerings -------===//
#include "flashfuse/Conversion/Common/SoftmaxMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

using namespace mlir;

Value mlir::flash::castToF32(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isF32())
    return v;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
}

Value mlir::flash::castFromF32(OpBuilder &b, Location loc, Value v, Type type) {
  if (type.isF32())
    return v;
  return arith::TruncFOp::create(b, loc, type, v);
}

Value mlir::flash::constF32(OpBuilder &b, Location loc, float v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

Value mlir::flash::negInfF32(OpBuilder &b, Location loc) {
  return constF32(b, loc, -std::numeric_limits<float>::infinity());
}

Value mlir::flash::posInfF32(OpBuilder &b, Location loc) {
  return constF32(b, loc, std::numeric_limits<float>::infinity());
}

Value mlir::flash::buildSafeRowMax(OpBuilder &b, Location loc, Value rowMax) {
  Value isNegInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                         rowMax, negInfF32(b, loc));
  return arith::SelectOp::create(b, loc, isNegInf, constF32(b, loc, 0.0f),
                                 rowMax);
}

Value mlir::flash::buildNormalizedOutput(OpBuilder &b, Location loc, Value acc,
                                         Value sum) {
  Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum,
                                      constF32(b, loc, 0.0f));
  Value ratio = arith::DivFOp::create(b, loc, acc, sum);
  return arith::SelectOp::create(b, loc, empty, constF32(b, loc, 0.0f), ratio);
}

Value mlir::flash::buildLogSumExp(OpBuilder &b, Location loc, Value safeMax,
                                  Value sum) {
  Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum,
                                      constF32(b, loc, 0.0f));
  Value lse = arith::AddFOp::create(b, loc, safeMax,
                                    math::LogOp::create(b, loc, sum));
  return arith::SelectOp::create(b, loc, empty, posInfF32(b, loc), lse);
}

Value mlir::flash::buildProbabilityFromLse(OpBuilder &b, Location loc,
                                           Value score, Value lse) {
  Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, lse,
                                      posInfF32(b, loc));
  Value p = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, score, lse));
  return arith::SelectOp::create(b, loc, empty, constF32(b, loc, 0.0f), p);
}
