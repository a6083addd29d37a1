//===- Swizzle.cpp - the 128-byte-swizzled shared-memory layout -----------===//
#include "Swizzle.h"
#include "Fragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::flash;

Value swizzle::offset(ImplicitLocOpBuilder &b, Value row, Value col,
                      int64_t rows) {
  using frag::cIdx;
  // Column block, 16-byte chunk within the block's 128-byte row, and the
  // chunk's swizzled position: chunk ^ (row % 8).
  Value block = arith::DivUIOp::create(b, col, cIdx(b, kRowElements));
  Value chunk = arith::DivUIOp::create(
      b, arith::RemUIOp::create(b, col, cIdx(b, kRowElements)), cIdx(b, 8));
  Value swizzled = arith::XOrIOp::create(
      b, chunk, arith::RemUIOp::create(b, row, cIdx(b, 8)));
  Value blockStart = arith::MulIOp::create(b, block, cIdx(b, rows * kRowElements));
  Value rowStart = arith::MulIOp::create(b, row, cIdx(b, kRowElements));
  return arith::AddIOp::create(
      b, blockStart,
      arith::AddIOp::create(b, rowStart,
                            arith::MulIOp::create(b, swizzled, cIdx(b, 8))));
}
