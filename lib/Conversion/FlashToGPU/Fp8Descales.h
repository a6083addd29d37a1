//===- Fp8Descales.h - the FP8 forwards' dequantisation factors -*- C++ -*-===//
//
// The descales of an FP8 forward (docs/FP8.md), as a part either FP8
// engine takes on: Fp8Descales<E> is engine E (the wgmma schedule of
// Sm90Fp8Forward.cpp, the mma.sync one of Sm80Fp8Forward.cpp) with
//
//   - per tensor or per head: scale · q_descale · k_descale as the score
//     factor, v_descale applied to O once, in the epilogue;
//   - per block (KernelSpec::blockDescales): a warp's 16 rows share one
//     q_descale (BQ is a multiple of 16), a key block one k_descale and one
//     v_descale (BK a multiple of block_n). k_descale goes into each
//     block's score factor; O is kept in units of the current block's
//     v_descale, rescaled by dv(j - 1) / dv(j) with the softmax's alpha, and
//     the last block's applied in the epilogue;
//   - P scaled by 2^8 onto e4m3's normal range (probabilityLog2Scale).
//
// The engine calls prepareDescales(nStart, nEnd) once its block's key range
// is known, and the key loop's hooks (ForwardBuilder.h: beginKeyBlock,
// enterKeyBlock, outputRescale) per block.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_FP8DESCALES_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_FP8DESCALES_H

#include "Fragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

namespace mlir::flash {

template <class Engine>
class Fp8Descales : public Engine {
public:
  using Engine::Engine;

protected:
  Value vDescale;

  /// The key-block position before `position`, whose v_descale O is in
  /// when block `position` starts (the wgmma engine asks for it only past
  /// the walk's first block; the mma.sync one clamps it to the first).
  virtual Value previousPosition(Value position) {
    return arith::SubIOp::create(this->b, position,
                                 frag::cIdx(this->b, 1));
  }

  /// scale · q_descale of this warp's rows, with per-block descales; for
  /// plain scores only its product with log2(e), the exponent's factor.
  Value queryScale;
  /// The current key block's k_descale, and the v_descales of the block
  /// before it and of it (beginKeyBlock's loads, used once the S product
  /// has given them time to land), and dv(j - 1) / dv(j).
  Value blockKDescale, previousVDescale, blockVDescale, valueRatio;

  /// Reads the block's descales once its key blocks [nStart, nEnd) are
  /// known: the score factor and O's factor, or with per-block descales the
  /// rows' q factor and the last key block's v factor.
  void prepareDescales(Value nStart, Value nEnd) {
    if (this->s.blockDescales())
      return prepareBlockDescales(nStart, nEnd);
    // One factor per (batch, head) folds the dequantisation of Q and K into
    // the score scale; V's is applied to O once, in the epilogue.
    this->scaleOverride = arith::MulFOp::create(
        this->b, this->arg.lookup("scale"),
        arith::MulFOp::create(this->b, this->loadDescale("q", this->head), this->loadDescale("k", this->headKV)));
    this->scoreFactor =
        arith::MulFOp::create(this->b, this->scaleOverride, frag::cF32(this->b, float(M_LOG2E)));
    vDescale = this->loadDescale("v", this->headKV);
  }

  /// The descale block of key block `position` (index).
  Value keyDescaleBlock(Value position) {
    // One statement per op throughout: the IR must not depend on the order
    // C++ evaluates arguments in.
    Value start = this->keyStartAt(position);
    Value rows = frag::cIdx(this->b, this->s.descaleBlockK);
    return arith::DivUIOp::create(this->b, start, rows);
  }

  void prepareBlockDescales(Value nStart, Value nEnd) {
    // The warp's rows (rowOf(0, 0) and the 15 after it) lie in one Q block;
    // a tail tile's rows past Sq read the last block.
    Value row = arith::IndexCastOp::create(this->b, this->b.getIndexType(), this->rowOf(0, 0));
    Value rows = frag::cIdx(this->b, this->s.descaleBlockQ);
    Value lastRow = arith::SubIOp::create(this->b, this->seqQ, frag::cIdx(this->b, 1));
    Value lastBlock = arith::DivUIOp::create(this->b, lastRow, rows);
    Value rowBlock = arith::DivUIOp::create(this->b, row, rows);
    Value qBlock = arith::MinUIOp::create(this->b, rowBlock, lastBlock);
    queryScale = arith::MulFOp::create(this->b, this->arg.lookup("scale"),
                                       this->loadDescale("q", this->head, qBlock));
    if (this->isPlainScore())
      queryScale =
          arith::MulFOp::create(this->b, queryScale, frag::cF32(this->b, float(M_LOG2E)));
    // O leaves in units of the last key block's v_descale (a tile with no
    // key block reads none: its O is 0).
    Value any = arith::CmpIOp::create(this->b, arith::CmpIPredicate::ult, nStart, nEnd);
    auto ifAny = scf::IfOp::create(this->b, this->b.getF32Type(), any, /*withElse=*/true);
    {
      OpBuilder::InsertionGuard g(this->b);
      this->b.setInsertionPointToStart(&ifAny.getThenRegion().front());
      Value last = arith::SubIOp::create(this->b, nEnd, frag::cIdx(this->b, 1));
      scf::YieldOp::create(
          this->b, this->loadDescale("v", this->headKV, keyDescaleBlock(last)));
      this->b.setInsertionPointToStart(&ifAny.getElseRegion().front());
      scf::YieldOp::create(this->b, frag::cF32(this->b, 1.0f));
    }
    vDescale = ifAny.getResult(0);
  }

  void beginKeyBlock(Value position, bool first) override {
    if (!this->s.blockDescales() || !earlyDescaleLoads())
      return;
    Value block = keyDescaleBlock(position);
    blockKDescale = this->loadDescale("k", this->headKV, block);
    previousVDescale = Value();
    if (first)
      return;
    Value previous = previousPosition(position);
    previousVDescale = this->loadDescale("v", this->headKV, keyDescaleBlock(previous));
    blockVDescale = this->loadDescale("v", this->headKV, block);
  }

  /// Whether beginKeyBlock loads the block's descales, ahead of their use:
  /// not at D = 256, whose consumers spill 8-12 bytes holding even one of
  /// them across the S product (they are loaded where they are used).
  bool earlyDescaleLoads() const { return this->s.headDim < 256; }

  /// dv(j - 1) / dv(j) from the two loads. (An approximate reciprocal: an
  /// IEEE division's slow path costs the D = 256 consumers registers they
  /// do not have.)
  Value ratioOfValueDescales() {
    return arith::MulFOp::create(this->b, previousVDescale,
                                 frag::reciprocalApprox(this->b, blockVDescale));
  }

  void enterKeyBlock(Value position) override {
    if (!this->s.blockDescales())
      return;
    if (!earlyDescaleLoads())
      blockKDescale = this->loadDescale("k", this->headKV, keyDescaleBlock(position));
    // O's ratio while the softmax runs, not after the P·V wait, where the
    // reciprocal's latency would sit between the product and O's rescale.
    valueRatio = earlyDescaleLoads() && previousVDescale
                     ? ratioOfValueDescales()
                     : Value();
    Value scaled = arith::MulFOp::create(this->b, queryScale, blockKDescale);
    if (this->isPlainScore()) {
      this->scoreFactor = scaled;
      return;
    }
    this->scaleOverride = scaled;
    this->scoreFactor =
        arith::MulFOp::create(this->b, this->scaleOverride, frag::cF32(this->b, float(M_LOG2E)));
  }

  SmallVector<SmallVector<Value>>
  outputRescale(ArrayRef<SmallVector<Value>> alpha, Value position) override {
    SmallVector<SmallVector<Value>> factors(alpha.begin(), alpha.end());
    if (!this->s.blockDescales())
      return factors;
    // O holds block position - 1's P·V in that block's units: move it to
    // this block's.
    Value ratio = valueRatio;
    if (!earlyDescaleLoads()) {
      Value previous = previousPosition(position);
      previousVDescale = this->loadDescale("v", this->headKV, keyDescaleBlock(previous));
      blockVDescale = this->loadDescale("v", this->headKV, keyDescaleBlock(position));
      ratio = ratioOfValueDescales();
    }
    for (SmallVector<Value> &rows : factors)
      for (Value &a : rows)
        a = arith::MulFOp::create(this->b, a, ratio);
    return factors;
  }

  float probabilityLog2Scale() const override { return 8; }
  Value outputFactor() override { return vDescale; }
};

} // namespace mlir::flash

#endif
