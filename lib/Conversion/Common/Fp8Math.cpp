//===- Fp8Math.cpp - the FP8 steps of flash.attention ---------------------===//
#include "flashfuse/Conversion/Common/Fp8Math.h"

#include "flashfuse/Conversion/Common/SoftmaxMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

Value mlir::flash::readDescale(OpBuilder &b, Location loc, Value descale,
                               Value batch, Value head, Value row,
                               int64_t blockRows) {
  auto type = cast<RankedTensorType>(descale.getType());
  if (type.getRank() == 0)
    return tensor::ExtractOp::create(b, loc, descale, ValueRange{});
  if (type.getRank() == 2)
    return tensor::ExtractOp::create(b, loc, descale, ValueRange{batch, head});
  assert(row && blockRows > 0 && "a per-block descale needs its row");
  Value block = arith::DivUIOp::create(
      b, loc, row, arith::ConstantIndexOp::create(b, loc, blockRows));
  return tensor::ExtractOp::create(b, loc, descale,
                                   ValueRange{batch, head, block});
}

bool mlir::flash::isBlockDescale(Value descale) {
  return descale && cast<RankedTensorType>(descale.getType()).getRank() == 3;
}

Value mlir::flash::quantizeProbability(OpBuilder &b, Location loc, Value p) {
  // The clamp is explicit: truncf of a value above 448 would give NaN (e4m3
  // has no infinity), where the kernels' cvt.satfinite saturates. With
  // p <= 1 it never binds; it keeps the semantics total.
  Value scale = constF32(b, loc, kFp8ProbScale);
  Value scaled = arith::MulFOp::create(b, loc, p, scale);
  Value max = constF32(b, loc, kE4M3Max);
  Value clamped = arith::MinimumFOp::create(b, loc, scaled, max);
  Value p8 = arith::TruncFOp::create(b, loc, b.getType<Float8E4M3FNType>(),
                                     clamped);
  return arith::ExtFOp::create(b, loc, b.getF32Type(), p8);
}

Value mlir::flash::dequantizeE4M3(OpBuilder &b, Location loc, Value x8,
                                  Value descale) {
  Value x = arith::ExtFOp::create(b, loc, b.getF32Type(), x8);
  return arith::MulFOp::create(b, loc, x, descale);
}

Value mlir::flash::quantizeToE4M3(OpBuilder &b, Location loc, Value x,
                                  Value invDescale) {
  Value scaled = arith::MulFOp::create(b, loc, castToF32(b, loc, x), invDescale);
  // minimumf / maximumf propagate a NaN input, which stays NaN in e4m3.
  Value hi = constF32(b, loc, kE4M3Max);
  Value lo = constF32(b, loc, -kE4M3Max);
  Value clamped = arith::MinimumFOp::create(b, loc, scaled, hi);
  clamped = arith::MaximumFOp::create(b, loc, clamped, lo);
  return arith::TruncFOp::create(b, loc, b.getType<Float8E4M3FNType>(),
                                 clamped);
}
