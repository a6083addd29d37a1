//===- ExpandFp8Casts.cpp - f8E4M3FN conversions as integer arithmetic ----===//
//
// e4m3 (OCP FP8 "E4M3FN"): 1 sign bit, 4 exponent bits (bias 7), 3 mantissa
// bits, no infinities, S.1111.111 the only NaN, largest finite 448. Both
// directions go through f32, whose bit layout the rewrite reads directly.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

namespace mlir::flash {
#define GEN_PASS_DEF_FLASHEXPANDFP8CASTS
#include "flashfuse/Conversion/Passes.h.inc"
} // namespace mlir::flash

using namespace mlir;

namespace {
/// Scalar i32 / f32 arithmetic at one insertion point. Each helper creates
/// its constant before its op, and callers build one op per statement, so
/// that the IR does not depend on the order C++ evaluates arguments in.
struct Bits {
  OpBuilder &b;
  Location loc;
  Type i32() { return b.getI32Type(); }
  Type f32() { return b.getF32Type(); }
  Value c(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  }
  Value f(float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value shr(Value x, int64_t n) {
    Value k = c(n);
    return arith::ShRUIOp::create(b, loc, x, k);
  }
  Value shl(Value x, int64_t n) {
    Value k = c(n);
    return arith::ShLIOp::create(b, loc, x, k);
  }
  Value band(Value x, int64_t m) {
    Value k = c(m);
    return arith::AndIOp::create(b, loc, x, k);
  }
  Value addc(Value x, int64_t y) {
    Value k = c(y);
    return arith::AddIOp::create(b, loc, x, k);
  }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, int64_t y) {
    Value k = c(y);
    return arith::CmpIOp::create(b, loc, p, x, k);
  }
  Value sel(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value toF32(Value bits) { return arith::BitcastOp::create(b, loc, f32(), bits); }
  Value toI32(Value x) { return arith::BitcastOp::create(b, loc, i32(), x); }
};
} // namespace

/// f8E4M3FN -> f32, exactly.
static Value decodeE4M3(OpBuilder &b, Location loc, Value f8) {
  Bits k{b, loc};
  Value byte = arith::BitcastOp::create(b, loc, b.getI8Type(), f8);
  Value u = arith::ExtUIOp::create(b, loc, k.i32(), byte);
  Value signBit = k.shr(u, 7);
  Value sign = k.shl(signBit, 31);
  Value expField = k.shr(u, 3);
  Value exp = k.band(expField, 15);
  Value man = k.band(u, 7);
  // Normal: rebias 7 -> 127 and move the mantissa to the top of f32's.
  Value rebiased = k.addc(exp, 120);
  Value expBits = k.shl(rebiased, 23);
  Value manBits = k.shl(man, 20);
  Value magBits = k.bor(expBits, manBits);
  Value normal = k.toF32(k.bor(sign, magBits));
  // Subnormal: m * 2^-9, signed (-0 stays -0 through the sign bit).
  Value manF = arith::UIToFPOp::create(b, loc, k.f32(), man);
  Value step = k.f(1.0f / 512.0f);
  Value subMag = arith::MulFOp::create(b, loc, manF, step);
  Value subMagBits = k.toI32(subMag);
  Value sub = k.toF32(k.bor(sign, subMagBits));
  Value isSub = k.cmp(arith::CmpIPredicate::eq, exp, 0);
  Value value = k.sel(isSub, sub, normal);
  Value low7 = k.band(u, 0x7F);
  Value isNan = k.cmp(arith::CmpIPredicate::eq, low7, 0x7F);
  Value nan = k.f(std::numeric_limits<float>::quiet_NaN());
  return k.sel(isNan, nan, value);
}

/// f32 -> f8E4M3FN, round to nearest even; NaN for a NaN or infinite input
/// and for a magnitude that rounds above 448.
static Value encodeE4M3(OpBuilder &b, Location loc, Value f32) {
  Bits k{b, loc};
  Value u = k.toI32(f32);
  Value signBit = k.shr(u, 31);
  Value sign = k.shl(signBit, 7);
  Value mag = k.band(u, 0x7FFFFFFF);
  // Normal range (|x| >= 2^-6, f32 exponent >= 121): round f32's 23-bit
  // mantissa to 3 bits, to nearest even, by adding just under half an e4m3
  // step plus the kept lowest bit; a carry moves into the exponent, as it
  // should.
  Value keptBit = k.shr(mag, 20);
  Value keptLsb = k.band(keptBit, 1);
  Value half = k.addc(mag, 0x7FFFF);
  Value sum = k.add(half, keptLsb);
  Value rounded = k.band(sum, static_cast<int32_t>(0xFFF00000u));
  Value expField = k.shr(rounded, 23);
  Value exp = k.addc(expField, -120);
  Value expCode = k.shl(exp, 3);
  Value manField = k.shr(rounded, 20);
  Value manCode = k.band(manField, 7);
  Value normalCode = k.bor(expCode, manCode);
  // Below 2^-6 the step is 2^-9: the code is round(|x| * 512), and 8 (a
  // round up to 2^-6) is exactly the code of the smallest normal.
  Value absX = k.toF32(mag);
  Value steps = k.f(512.0f);
  Value scaledX = arith::MulFOp::create(b, loc, absX, steps);
  Value scaled = math::RoundEvenOp::create(b, loc, scaledX);
  Value subCode = arith::FPToUIOp::create(b, loc, k.i32(), scaled);
  Value isNormal = k.cmp(arith::CmpIPredicate::uge, mag, 121 << 23);
  Value code = k.sel(isNormal, normalCode, subCode);
  // 448 = 1.75 * 2^8 is f32 0x43E00000; NaN and infinity are above it too.
  Value zero = k.c(0);
  Value normalRounded = k.sel(isNormal, rounded, zero);
  Value overflow = k.cmp(arith::CmpIPredicate::ugt, normalRounded, 0x43E00000);
  Value nanCode = k.c(0x7F);
  Value magCode = k.sel(overflow, nanCode, code);
  Value bits = k.bor(sign, magCode);
  Value byte = arith::TruncIOp::create(b, loc, b.getI8Type(), bits);
  return arith::BitcastOp::create(b, loc, b.getType<Float8E4M3FNType>(), byte);
}

namespace {
struct FlashExpandFp8Casts
    : flash::impl::FlashExpandFp8CastsBase<FlashExpandFp8Casts> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation()->walk([&](Operation *op) {
      if (auto ext = dyn_cast<arith::ExtFOp>(op)) {
        if (!isa<Float8E4M3FNType>(ext.getIn().getType()))
          return;
        rewriter.setInsertionPoint(ext);
        Value v = decodeE4M3(rewriter, ext.getLoc(), ext.getIn());
        // f16, bf16 and f64 hold every e4m3 value: the last step is exact.
        unsigned width = ext.getType().getIntOrFloatBitWidth();
        if (width < 32)
          v = arith::TruncFOp::create(rewriter, ext.getLoc(), ext.getType(), v);
        else if (width > 32)
          v = arith::ExtFOp::create(rewriter, ext.getLoc(), ext.getType(), v);
        rewriter.replaceOp(ext, v);
      } else if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
        // A wider source (f64) would round twice through f32: left alone.
        if (!isa<Float8E4M3FNType>(trunc.getType()) ||
            trunc.getIn().getType().getIntOrFloatBitWidth() > 32)
          return;
        rewriter.setInsertionPoint(trunc);
        Value in = trunc.getIn();
        // Every narrower source widens to f32 exactly: one rounding only.
        if (!in.getType().isF32())
          in = arith::ExtFOp::create(rewriter, trunc.getLoc(),
                                     rewriter.getF32Type(), in);
        rewriter.replaceOp(trunc, encodeE4M3(rewriter, trunc.getLoc(), in));
      }
    });
  }
};
} // namespace
