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
  // p * 2^16 is exact for an f32 p, and p < 1 keeps it below 2^16.
  float pf = static_cast<float>(p);
  return static_cast<uint32_t>(static_cast<double>(pf) * 65536.0);
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

std::array<Value, 4> mlir::flash::dropoutCounter(OpBuilder &b, Location loc,
                                                 Value kvIdx, Value qIdx,
                                                 Value head, Value batch) {
  auto clear = [&](Value v, uint32_t bits) -> Value {
    return arith::AndIOp::create(b, loc, v, constI32(b, loc, ~bits));
  };
  return {clear(kvIdx, 9), clear(qIdx, 8), head, batch};
}

std::array<Value, 4>
mlir::flash::buildDropoutOctetWords(OpBuilder &b, Location loc, Value seed,
                                    std::array<Value, 4> counter) {
  return buildPhilox4x32x10(b, loc, counter, splitSeed(b, loc, seed));
}

Value mlir::flash::dropoutThresholdHigh(OpBuilder &b, Location loc,
                                        Value threshold16) {
  return arith::ShLIOp::create(b, loc, threshold16, constI32(b, loc, 16));
}

Value mlir::flash::buildDropoutHalfKeep(OpBuilder &b, Location loc, Value word,
                                        bool high, Value thresholdHigh) {
  if (!high)
    word = arith::ShLIOp::create(b, loc, word, constI32(b, loc, 16));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, word,
                               thresholdHigh);
}

std::array<Value, 8>
mlir::flash::buildDropoutOctetKeep(OpBuilder &b, Location loc, Value seed,
                                   std::array<Value, 4> counter,
                                   Value threshold16) {
  auto r = buildDropoutOctetWords(b, loc, seed, counter);
  Value high = dropoutThresholdHigh(b, loc, threshold16);
  std::array<Value, 8> keep;
  for (int w = 0; w < 4; ++w) {
    keep[w] = buildDropoutHalfKeep(b, loc, r[w], /*high=*/false, high);
    keep[4 + w] = buildDropoutHalfKeep(b, loc, r[w], /*high=*/true, high);
  }
  return keep;
}

Value mlir::flash::buildDropoutKeep(OpBuilder &b, Location loc, Value seed,
                                    Value batch, Value head, Value qIdx,
                                    Value kvIdx, double p) {
  Type i32 = b.getI32Type();
  auto word = [&](Value index) {
    return arith::IndexCastOp::create(b, loc, i32, index).getResult();
  };
  // One statement each: the IR's order must not depend on the C++
  // compiler's order of evaluating arguments.
  Value kv = word(kvIdx);
  Value q = word(qIdx);
  Value h = word(head);
  Value bt = word(batch);
  std::array<Value, 4> counter = dropoutCounter(b, loc, kv, q, h, bt);
  Value threshold = constI32(b, loc, dropoutThreshold(p));
  auto keep = buildDropoutOctetKeep(b, loc, seed, counter, threshold);
  // The element's: bit 3 of kv_idx picks the half, bit 3 of q_idx the row,
  // bit 0 of kv_idx the column.
  auto bitSet = [&](Value v, uint32_t bit) -> Value {
    Value masked = arith::AndIOp::create(b, loc, v, constI32(b, loc, bit));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, masked,
                                 constI32(b, loc, 0));
  };
  Value oddKey = bitSet(kv, 1), rowPlus8 = bitSet(q, 8),
        keyPlus8 = bitSet(kv, 8);
  auto pick = [&](Value bit, Value ifSet, Value ifClear) -> Value {
    return arith::SelectOp::create(b, loc, bit, ifSet, ifClear);
  };
  std::array<Value, 4> byColumn;
  for (int e = 0; e < 4; ++e)
    byColumn[e] = pick(oddKey, keep[2 * e + 1], keep[2 * e]);
  std::array<Value, 2> byRow = {pick(rowPlus8, byColumn[1], byColumn[0]),
                                pick(rowPlus8, byColumn[3], byColumn[2])};
  return pick(keyPlus8, byRow[1], byRow[0]);
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
