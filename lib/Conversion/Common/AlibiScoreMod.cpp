//===- AlibiScoreMod.cpp - ALiBi's bias as a score_mod region -------------===//
#include "flashfuse/Conversion/Common/AlibiScoreMod.h"

#include "flashfuse/Conversion/Common/ScorePipeline.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::flash;

void mlir::flash::buildAlibiScoreMod(
    OpBuilder &b, Location loc, Region &target, Value slopes,
    function_ref<Value(OpBuilder &, Location, Value)> diagOffset,
    Region *inner) {
  OpBuilder::InsertionGuard guard(b);
  Type idx = b.getIndexType(), f32 = b.getF32Type();
  Block *body = b.createBlock(&target, {}, {f32, idx, idx, idx, idx},
                              SmallVector<Location>(5, loc));
  Value score = body->getArgument(0), batch = body->getArgument(1),
        h = body->getArgument(2), i = body->getArgument(3),
        j = body->getArgument(4);
  if (inner && !inner->empty())
    score = inlineModRegion(b, *inner, body->getArguments());
  SmallVector<Value, 2> at = {h};
  if (cast<RankedTensorType>(slopes.getType()).getRank() == 2)
    at = {batch, h};
  Value slope = tensor::ExtractOp::create(b, loc, slopes, at);
  Value diag = arith::AddIOp::create(b, loc, i, diagOffset(b, loc, batch));
  Value d = arith::SubIOp::create(b, loc, diag, j);
  Value negD = arith::SubIOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, 0), d);
  Value dist = arith::MaxSIOp::create(b, loc, d, negD);
  Value dist64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), dist);
  Value distF = arith::SIToFPOp::create(b, loc, f32, dist64);
  Value bias = arith::MulFOp::create(b, loc, slope, distF);
  YieldOp::create(b, loc,
                  ValueRange{arith::SubFOp::create(b, loc, score, bias)});
}

namespace {
/// Sk - Sq of a dense op (the logical S dimensions of Q and K), or Lk_b -
/// Lq_b of packed sequence b (its cu_seqlens).
template <typename OpT>
Value diagOffsetOf(OpT op, OpBuilder &b, Location loc, Value batch) {
  auto iface = cast<AttentionVariantInterface>(op.getOperation());
  if (op.isVarlen()) {
    Value next = arith::AddIOp::create(
        b, loc, batch, arith::ConstantIndexOp::create(b, loc, 1));
    auto length = [&](Value cu) {
      Value hi = tensor::ExtractOp::create(b, loc, cu, next);
      Value lo = tensor::ExtractOp::create(b, loc, cu, batch);
      return arith::SubIOp::create(b, loc, hi, lo);
    };
    Value off = arith::SubIOp::create(b, loc, length(op.getCuSeqlensK()),
                                      length(op.getCuSeqlensQ()));
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), off);
  }
  auto qkv = iface.getQKV();
  Value sq = tensor::DimOp::create(b, loc, qkv[0], iface.getQueryPerm()[2]);
  Value sk = tensor::DimOp::create(b, loc, qkv[1], iface.getKeyPerm()[2]);
  return arith::SubIOp::create(b, loc, sk, sq);
}

template <typename OpT> void foldAlibi(OpT op) {
  Value slopes = op.getAlibiSlopes();
  OpBuilder b(op);
  Region folded;
  buildAlibiScoreMod(
      b, op.getLoc(), folded, slopes,
      [&](OpBuilder &inner, Location loc, Value batch) {
        return diagOffsetOf(op, inner, loc, batch);
      },
      &op.getScoreMod());
  op.getScoreMod().takeBody(folded);
  op.getAlibiSlopesMutable().clear();
}
} // namespace

void mlir::flash::foldAlibiIntoScoreMods(Operation *root) {
  root->walk([&](Operation *op) {
    if (auto forward = dyn_cast<AttentionOp>(op); forward && forward.getAlibiSlopes())
      foldAlibi(forward);
    else if (auto grad = dyn_cast<AttentionGradOp>(op);
             grad && grad.getAlibiSlopes())
      foldAlibi(grad);
  });
}
