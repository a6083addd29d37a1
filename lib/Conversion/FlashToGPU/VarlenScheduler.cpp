//===- VarlenScheduler.cpp - where a packed batch's block lies ------------===//
//
// The engine-independent pieces of the varlen tile scheduler
// (VarlenScheduler.h): the block's sequence from the cu_seqlens buffers, and
// the early return of a block past its sequence's end.
//
//===----------------------------------------------------------------------===//
#include "VarlenScheduler.h"
#include "Fragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

PackedSequence mlir::flash::readPackedSequence(ImplicitLocOpBuilder &b,
                                               Value cuQ, Value cuK, Value z,
                                               Value numSeqs, Value totalQ,
                                               Value totalK,
                                               UnownedRows unowned,
                                               bool zeroExtend) {
  // In i32, as the offsets and totals are: the lengths the key loop keeps
  // then take one register each, not two.
  Type i32 = b.getI32Type();
  z = arith::IndexCastOp::create(b, i32, z);
  // Blocks z > num_seqs (a grid larger than the ABI's) read as the rows
  // past the last sequence: every load stays inside the [num_seqs + 1]
  // buffers.
  Value at = arith::MinUIOp::create(b, z, numSeqs);
  Value owned = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, z, numSeqs);
  Value next = arith::SelectOp::create(
      b, owned,
      arith::AddIOp::create(b, at, arith::ConstantIntOp::create(b, i32, 1)),
      at);
  auto offset = [&](Value cu, Value i, Value lo, Value hi) {
    Value v = memref::LoadOp::create(
        b, cu, ValueRange{arith::IndexCastOp::create(b, b.getIndexType(), i)});
    return Value(arith::MaxSIOp::create(b, arith::MinSIOp::create(b, v, hi),
                                        lo));
  };
  Value zero = arith::ConstantIntOp::create(b, i32, 0);
  Value startQ = offset(cuQ, at, zero, totalQ);
  Value startK = offset(cuK, at, zero, totalK);
  // The rows no sequence owns run to the end of Q and see no key (or to
  // the end of K, seen by no query).
  bool keys = unowned == UnownedRows::Keys;
  Value endQ = arith::SelectOp::create(
      b, owned, offset(cuQ, next, startQ, totalQ), keys ? startQ : totalQ);
  Value endK = arith::SelectOp::create(
      b, owned, offset(cuK, next, startK, totalK), keys ? totalK : startK);
  auto index = [&](Value v) {
    if (zeroExtend)
      return Value(arith::IndexCastUIOp::create(b, b.getIndexType(), v));
    return Value(arith::IndexCastOp::create(b, b.getIndexType(), v));
  };
  PackedSequence seq;
  seq.startQ = index(startQ);
  seq.startK = index(startK);
  seq.lengthQ = index(arith::SubIOp::create(b, endQ, startQ));
  seq.lengthK = index(arith::SubIOp::create(b, endK, startK));
  return seq;
}

Value mlir::flash::packedOperandBase(ImplicitLocOpBuilder &b,
                                     const PackedSequence &seq, StringRef name,
                                     Value h, Value strideH, Value strideS) {
  bool keys = name == "k" || name == "v" || name == "grad_k" || name == "grad_v";
  Value start = keys ? seq.startK : seq.startQ;
  Value hOff = arith::MulIOp::create(b, h, strideH);
  Value sOff = arith::MulIOp::create(b, start, strideS);
  return arith::AddIOp::create(b, hOff, sOff);
}

void mlir::flash::returnIf(ImplicitLocOpBuilder &b, Value exit) {
  // scf.if cannot hold a gpu.return: branch to a block of its own, and go
  // on in a new one.
  Block *current = b.getInsertionBlock();
  Block *rest = current->splitBlock(b.getInsertionPoint());
  auto *ret = new Block();
  current->getParent()->push_back(ret);
  b.setInsertionPointToEnd(current);
  cf::CondBranchOp::create(b, exit, ret, ValueRange{}, rest, ValueRange{});
  b.setInsertionPointToStart(ret);
  gpu::ReturnOp::create(b);
  b.setInsertionPointToStart(rest);
}
