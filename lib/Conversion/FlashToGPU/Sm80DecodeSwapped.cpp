//===- Sm80DecodeSwapped.cpp - decode with the rows as the products' n ----===//
//
// The decode kernel's mainloop where block_m = 8
// (KernelSpec::swapsDecodeOperands). A decode step has few packed rows
// (G * Sq: 4 for 32 query heads over 8 kv heads, one token), which the
// m16n8k16 engine puts in the m of its products: 12 of every 16 rows are
// zeros it multiplies, exponentiates and rescales. Here the rows are the
// products' n (8) instead:
//   - S^T = K Q^T: the A operand is a 16-key tile of K, stored [key][D]
//     (ldmatrix); the B operand is Q's 8 rows, read once into registers
//     (2 registers a k-step, where Q's A operand takes 4).
//   - thread (g, t) holds S^T[key 16a + g + 8i][row 2t + j] at [i][j] of
//     key tile a: the score pipeline and the online softmax run on that
//     layout. A row's max is a column's: over the thread's keys, then the
//     8 lanes sharing t (shuffles xor 4, 8, 16); its sum stays a per-thread
//     share until the epilogue, as the m16 engine keeps its own.
//   - O^T = V^T P^T: the A operand is a 16-key slice of V read with
//     ldmatrix.trans; the B operand is P^T, whose accumulator pairs
//     (key g + 8i; rows 2t, 2t + 1), packed to 16 bits, are an 8 x 8
//     matrix that movmatrix.trans turns into the B fragment (keys 2t,
//     2t + 1; row g). O^T takes Dv / 16 accumulators, half of O's.
// Per key block a warp so issues half the mma.sync, half the ex2 and half
// the rescale multiplies of the m16 engine, with as many ldmatrix. The
// copies, the split of the keys between the warps and the epilogue are
// the decode builder's (Sm80Decode.cpp): the warps' transposed partial
// rows go to shared memory as O's rows (storeSwappedPartials), where
// mergeKeyWarps reads them into the m16 engine's fragments.
//
//===----------------------------------------------------------------------===//
#include "Sm80Decode.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

ForwardBuilder::SoftmaxState
Sm80DecodeBuilder::buildKeyLoop(ArrayRef<Frags> qOps, Value nStart, Value nEnd,
                                const SoftmaxState &init, Value anyGroup) {
  if (!s.swapsDecodeOperands())
    return Sm80ForwardBuilder::buildKeyLoop(qOps, nStart, nEnd, init,
                                            anyGroup);
  return buildSwappedKeyLoop(nStart, nEnd);
}

Value Sm80DecodeBuilder::swappedPackedRowOf(int64_t j) {
  return arith::AddIOp::create(
      b, packedStart,
      arith::AddIOp::create(b, arith::MulIOp::create(b, t, cIdx(b, 2)),
                            cIdx(b, j)));
}

Value Sm80DecodeBuilder::swappedRowOf(int64_t j) {
  return i32(arith::DivUIOp::create(b, swappedPackedRowOf(j), group));
}

ForwardBuilder::SoftmaxState
Sm80DecodeBuilder::buildSwappedKeyLoop(Value nStart, Value nEnd) {
  int64_t keyTiles = nTilesN / 2; // 16-key tiles of this warp's keys
  int64_t dTiles = nTilesDv / 2;  // 16-column tiles of O^T
  // Q^T's B operands, k-step kk: rows 0-7 of the Q tile (the pattern's
  // other two matrices, rows 8-15, are never used).
  SmallVector<Regs> qB;
  for (int64_t kk = 0; kk < nTilesD; ++kk) {
    Regs r = loadBlock(Operand::Q, Value(), X4::BPair, cIdx(b, 0), 16 * kk);
    qB.push_back({r[0], r[1]});
  }

  Value negInf = cF32(b, -INFINITY);
  SmallVector<Value> init(dTiles, accZero(b));
  init.append({negInf, negInf, cF32(b, 0.0f), cF32(b, 0.0f)});
  auto loop = scf::ForOp::create(b, nStart, nEnd, cIdx(b, 1), init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value position = loop.getInductionVar();
  ValueRange args = loop.getRegionIterArgs();
  SmallVector<Value> acc(args.begin(), args.begin() + dTiles);
  Value rowMax[2] = {args[dTiles], args[dTiles + 1]};
  Value rowSum[2] = {args[dTiles + 2], args[dTiles + 3]};

  Value stage = acquireKeyBlock(position, nStart);
  SmallVector<Value> sc(keyTiles, accZero(b));
  for (int64_t kk = 0; kk < nTilesD; ++kk)
    for (int64_t a = 0; a < keyTiles; ++a) {
      Regs kA = loadBlock(Operand::K, stage, X4::A, keyRow(16 * a), 16 * kk);
      sc[a] = mma(b, kA, qB[kk], sc[a], s.elementType);
    }
  Value kvStart =
      arith::AddIOp::create(b, scoredKeyStart(position), warpKeyOffset);
  maskSwappedScores(sc, kvStart);

  // The online softmax of rows 2t + j: P^T in place of S^T, alpha per row.
  SmallVector<Value> nextMax(2), nextSum(2), alpha(2);
  SmallVector<SmallVector<std::array<Value, 2>>> probs(
      keyTiles, SmallVector<std::array<Value, 2>>(2));
  for (int64_t j = 0; j < 2; ++j) {
    Value local = negInf;
    for (int64_t a = 0; a < keyTiles; ++a)
      for (int64_t i = 0; i < 2; ++i)
        local = arith::MaximumFOp::create(b, local, accGet(b, sc[a], i, j));
    Value localMax = columnReduceMax(b, local);
    if (isPlainScore())
      localMax = arith::MulFOp::create(b, localMax, scoreFactor);
    Value mNew = arith::MaximumFOp::create(b, rowMax[j], localMax);
    // A row with every key masked so far keeps m = -inf (ForwardBuilder's
    // onlineSoftmax says why 0 is subtracted then).
    Value mUse = arith::SelectOp::create(
        b, arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mNew, negInf),
        cF32(b, 0.0f), mNew);
    alpha[j] = exp2Approx(b, arith::SubFOp::create(b, rowMax[j], mUse));
    Value negMUse = arith::NegFOp::create(b, mUse);
    Value sum = cF32(b, 0.0f);
    for (int64_t a = 0; a < keyTiles; ++a)
      for (int64_t i = 0; i < 2; ++i) {
        Value x = accGet(b, sc[a], i, j);
        Value p = exp2Approx(
            b, isPlainScore()
                   ? Value(LLVM::FMAOp::create(b, x, scoreFactor, negMUse))
                   : Value(arith::SubFOp::create(b, x, mUse)));
        sum = arith::AddFOp::create(b, sum, p);
        probs[a][i][j] = p;
      }
    nextMax[j] = mNew;
    nextSum[j] = arith::AddFOp::create(
        b, arith::MulFOp::create(b, rowSum[j], alpha[j]), sum);
  }
  // P^T's B operands, key tile a: keys 2t, 2t + 1 (then + 8) of row g.
  SmallVector<Regs> pB(keyTiles);
  for (int64_t a = 0; a < keyTiles; ++a)
    for (int64_t i = 0; i < 2; ++i)
      pB[a].push_back(transposeMatrix(
          b, packPair(b, probs[a][i][0], probs[a][i][1], probabilityType())));

  for (Value &accT : acc)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j)
        accT = accSet(
            b, accT, arith::MulFOp::create(b, accGet(b, accT, i, j), alpha[j]),
            i, j);
  for (int64_t a = 0; a < keyTiles; ++a)
    for (int64_t d = 0; d < dTiles; ++d) {
      Regs vA = loadBlock(Operand::V, stage, X4::ATransposed, keyRow(16 * a),
                          16 * d);
      acc[d] = mma(b, vA, pB[a], acc[d], probabilityType());
    }
  // The next iteration's prefetch overwrites the stage read here.
  gpu::BarrierOp::create(b);
  SmallVector<Value> next(acc);
  next.append({nextMax[0], nextMax[1], nextSum[0], nextSum[1]});
  scf::YieldOp::create(b, next);

  ValueRange results = loop.getResults();
  SoftmaxState final;
  final.acc.assign(results.begin(), results.begin() + dTiles);
  final.rowMax = {results[dTiles], results[dTiles + 1]};
  final.rowSum = {results[dTiles + 2], results[dTiles + 3]};
  return final;
}

void Sm80DecodeBuilder::maskSwappedScores(SmallVector<Value> &sc,
                                          Value kvStart) {
  // As maskScores: masks only in blocks that can hold masked elements (the
  // tail of the sequence, the causal diagonal, window edges).
  Value needMask = tileNeedsMask(mStart, s.blockM, kvStart, s.blockN,
                                 /*rowTail=*/false);
  SmallVector<Type> types(sc.size(), sc.front().getType());
  auto ifOp = scf::IfOp::create(b, types, needMask, /*withElse=*/true);
  for (bool masked : {true, false}) {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(masked ? &ifOp.getThenRegion().front()
                                      : &ifOp.getElseRegion().front());
    SmallVector<Value> copy(sc);
    applySwappedScorePipeline(copy, kvStart, masked);
    scf::YieldOp::create(b, copy);
  }
  sc.assign(ifOp.getResults().begin(), ifOp.getResults().end());
}

void Sm80DecodeBuilder::applySwappedScorePipeline(SmallVector<Value> &sc,
                                                  Value kvStart, bool masked) {
  // Element [i][j] of key tile a is key colBase + 16a + 8i of row 2t + j:
  // the band's bounds per row, each element two compares with immediates
  // (rowBand).
  Value negInf = cF32(b, -INFINITY);
  Value colBase = arith::AddIOp::create(b, i32(kvStart), i32(g));
  for (int64_t j = 0; j < 2; ++j) {
    Value row = swappedRowOf(j);
    Value slope = s.alibi ? alibiRowSlopes[j] : Value();
    RowBand band;
    if (masked)
      band = rowBand(row, colBase);
    for (int64_t a = 0; a < (int64_t)sc.size(); ++a)
      for (int64_t i = 0; i < 2; ++i) {
        Value v = accGet(b, sc[a], i, j);
        Value c = arith::ConstantIntOp::create(b, b.getI32Type(), 16 * a + 8 * i);
        if (!isPlainScore())
          v = arith::MulFOp::create(
              b,
              transformScore(v, row, arith::AddIOp::create(b, colBase, c),
                             /*tanhOut=*/nullptr, slope),
              cF32(b, float(M_LOG2E)));
        if (masked)
          v = arith::SelectOp::create(b, band.contains(b, c), v, negInf);
        sc[a] = accSet(b, sc[a], v, i, j);
      }
  }
}

void Sm80DecodeBuilder::storeSwappedPartials(Value partialO, Value stats,
                                             ArrayRef<Value> acc,
                                             ArrayRef<Value> rowL,
                                             ArrayRef<Value> rowM) {
  // Thread (g, t) holds O^T[16d + g + 8i][2t + j]: row 2t + j's columns
  // 16d + g + 8i. (The 4 lanes of equal g store to one bank: 4 ways, once
  // a block.)
  auto f32x2 = VectorType::get({2}, b.getF32Type());
  Value lowLane =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, g, cIdx(b, 0));
  for (int64_t j = 0; j < 2; ++j) {
    Value row = arith::AddIOp::create(b, arith::MulIOp::create(b, t, cIdx(b, 2)),
                                      cIdx(b, j));
    for (int64_t d = 0; d < (int64_t)acc.size(); ++d)
      for (int64_t i = 0; i < 2; ++i)
        memref::StoreOp::create(
            b, accGet(b, acc[d], i, j), partialO,
            ValueRange{keyWarp, row,
                       arith::AddIOp::create(b, g, cIdx(b, 16 * d + 8 * i))});
    // Every lane of a column holds its row's whole max and sum.
    auto ifLow = scf::IfOp::create(b, TypeRange{}, lowLane, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifLow.getThenRegion().front());
    Value ml = vector::FromElementsOp::create(b, f32x2,
                                              ValueRange{rowM[j], rowL[j]});
    vector::StoreOp::create(b, ml, stats, ValueRange{keyWarp, row, cIdx(b, 0)});
  }
}
