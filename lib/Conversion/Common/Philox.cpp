//===- Philox.cpp - Philox4x32-10 and the dropout keep test in arith ------===//
//
// See Philox.h for the exact definition this file implements.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Conversion/Common/Philox.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace {
constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
constexpr int kRounds = 10;
} // namespace

static Value constI32(OpBuilder &b, Location loc, uint32_t v) {
  // Through APInt: values above INT32_MAX are valid u32 bit patterns.
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(b.getI32Type(), APInt(32, v)));
}

std::array<Value, 4>
mlir::flash::buildPhilox4x32x10(OpBuilder &b, Location loc,
                                std::array<Value, 4> c,
                                std::array<Value, 2> k) {
  Value m0 = constI32(b, loc, kMul0), m1 = constI32(b, loc, kMul1);
  Value w0 = constI32(b, loc, kWeyl0), w1 = constI32(b, loc, kWeyl1);
  for (int round = 0; round < kRounds; ++round) {
    if (round > 0) {
      k[0] = arith::AddIOp::create(b, loc, k[0], w0);
      k[1] = arith::AddIOp::create(b, loc, k[1], w1);
    }
    // mului_extended gives the low and the high half of the 64-bit product.
    auto p0 = arith::MulUIExtendedOp::create(b, loc, m0, c[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, m1, c[2]);
    Value n0 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p1.getHigh(), c[1]), k[0]);
    Value n2 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p0.getHigh(), c[3]), k[1]);
    c = {n0, p1.getLow(), n2, p0.getLow()};
  }
  return c;
}

uint32_t mlir::flash::dropoutThreshold(double p) {
  // p * 2^32 is exact for an f32 p, and p < 1 keeps it below 2^32.
  float pf = static_cast<float>(p);
  return static_cast<uint32_t>(static_cast<double>(pf) * 4294967296.0);
}

/// The Philox key: the low and the high 32 bits of the i64 seed.
static std::array<Value, 2> splitSeed(OpBuilder &b, Location loc, Value seed) {
  Type i32 = b.getI32Type();
  Value lo = arith::TruncIOp::create(b, loc, i32, seed);
  Value shift = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 32);
  Value hi = arith::TruncIOp::create(
      b, loc, i32, arith::ShRUIOp::create(b, loc, seed, shift));
  return {lo, hi};
}

Value mlir::flash::buildDropoutKeepWords(OpBuilder &b, Location loc,
                                         Value seed,
                                         std::array<Value, 4> counterWords,
                                         Value threshold) {
  auto r = buildPhilox4x32x10(b, loc, counterWords, splitSeed(b, loc, seed));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, r[0],
                               threshold);
}

Value mlir::flash::buildDropoutKeep(OpBuilder &b, Location loc, Value seed,
                                    Value batch, Value head, Value qIdx,
                                    Value kvIdx, double p) {
  Type i32 = b.getI32Type();
  auto word = [&](Value index) {
    return arith::IndexCastOp::create(b, loc, i32, index).getResult();
  };
  std::array<Value, 2> key = splitSeed(b, loc, seed);
  auto r = buildPhilox4x32x10(
      b, loc, {word(kvIdx), word(qIdx), word(head), word(batch)}, key);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, r[0],
                               constI32(b, loc, dropoutThreshold(p)));
}

Value mlir::flash::buildDropoutFactor(OpBuilder &b, Location loc, Value seed,
                                      Value batch, Value head, Value qIdx,
                                      Value kvIdx, double p) {
  Value keep = buildDropoutKeep(b, loc, seed, batch, head, qIdx, kvIdx, p);
  float pf = static_cast<float>(p);
  Value kept = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f / (1.0f - pf)));
  Value dropped = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  return arith::SelectOp::create(b, loc, keep, kept, dropped);
}
