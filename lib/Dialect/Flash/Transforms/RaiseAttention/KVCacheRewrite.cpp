//===- KVCacheRewrite.cpp - build flash.attention_kvcache for a decode ----===//
//
// A decode step matched by KVCacheMatch.cpp becomes
//
//   %len = tensor.generate { ^bb0(%b: index): L(b) as i32 } : tensor<Bxi32>
//   %o = flash.attention_kvcache %q, %k, %v, %len [causal<bottom_right>]
//
// where %k / %v are the tensors the model attended over: its caches after
// it wrote this step's rows. The length is the one the model's mask uses
// (it counts those rows), so the op needs no new_kv and its cache_seqlens
// equal L. The update itself stays in the IR as the model wrote it.
//
// Why not new_kv: with new_kv the op writes the rows and cache_seqlens must
// be the length before them. Using it would mean replacing the model's
// update by the op's, which is only correct once the update is proven to
// write exactly rows [L - Snew, L) of every sequence and head with the new
// K/V rows and nothing else. torch-mlir emits index_copy_ at the cache
// position as a scatter through a materialised [N, 4] index tensor (a loop
// of tensor.insert after mending); proving that is out of this match's
// reach, and a wrong proof would corrupt the cache silently. The form
// chosen here is exact for any update.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::raise;

/// `v` (index or any integer width) as an i64.
static Value toI64(OpBuilder &b, Location loc, Value v) {
  Type i64 = b.getI64Type();
  if (isa<IndexType>(v.getType()))
    return arith::IndexCastOp::create(b, loc, i64, v);
  unsigned w = v.getType().getIntOrFloatBitWidth();
  if (w < 64)
    return arith::ExtSIOp::create(b, loc, i64, v);
  if (w > 64)
    return arith::TruncIOp::create(b, loc, i64, v);
  return v;
}

/// cache_seqlens: L(b) for every sequence, an i32 [B] built in the IR
/// from what the mask read (a batch-uniform position is broadcast).
static Value buildCacheSeqlens(OpBuilder &b, Location loc,
                               const KVCacheLength &len, int64_t batch) {
  auto ty = RankedTensorType::get({batch}, b.getI32Type());
  auto gen = tensor::GenerateOp::create(
      b, loc, ty, ValueRange{}, [&](OpBuilder &nb, Location l, ValueRange ivs) {
        Value zero = arith::ConstantIndexOp::create(nb, l, 0);
        // The length reads the batch index only; q is 0 where a term read
        // the single query row.
        SmallVector<Value> idx = {ivs[0], zero, zero, zero};
        Type i64 = nb.getI64Type();
        auto cst = [&](int64_t c) {
          return arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(c))
              .getResult();
        };
        Value acc = cst(len.lin.cst);
        if (len.lin.c[kB] != 0)
          acc = arith::AddIOp::create(
              nb, l, acc,
              arith::MulIOp::create(
                  nb, l, arith::IndexCastOp::create(nb, l, i64, ivs[0]),
                  cst(len.lin.c[kB])));
        DenseMap<const Expr *, Value> memo;
        for (auto [term, factor] : len.terms) {
          Value t = toI64(nb, l, emitExpr(nb, l, term, Value(), idx, memo));
          if (factor == 1) {
            acc = arith::AddIOp::create(nb, l, acc, t);
          } else if (factor == -1) {
            acc = arith::SubIOp::create(nb, l, acc, t);
          } else {
            acc = arith::AddIOp::create(
                nb, l, acc, arith::MulIOp::create(nb, l, t, cst(factor)));
          }
        }
        Value l32 = arith::TruncIOp::create(nb, l, nb.getI32Type(), acc);
        tensor::YieldOp::create(nb, l, l32);
      });
  return gen.getResult();
}

FailureOr<Operation *> mlir::flash::raise::rewriteAttentionKVCache(
    AttentionMatch &m, const KVCacheLength &len, DenseSet<Operation *> &erased,
    Explainer &why) {
  Operation *pvOp = m.pv.op;
  Location loc = pvOp->getLoc();
  OpBuilder b(pvOp);
  auto operands = buildRaisedOperands(b, m, why);
  if (failed(operands))
    return failure();
  Value seqlens = buildCacheSeqlens(b, loc, len, m.batch);
  auto permAttr = [&](ArrayRef<int64_t> p) {
    return llvm::equal(p, ArrayRef<int64_t>{0, 1, 2, 3})
               ? DenseI64ArrayAttr()
               : b.getDenseI64ArrayAttr(p);
  };
  CausalAlignmentAttr causal;
  if (len.causal)
    causal = CausalAlignmentAttr::get(b.getContext(),
                                      CausalAlignment::BottomRight);
  auto op = AttentionKVCacheOp::create(
      b, loc, operands->outputType, /*lse=*/Type(), /*key_cache_out=*/Type(),
      /*value_cache_out=*/Type(), operands->q, operands->k, operands->v,
      seqlens, /*block_table=*/Value(), /*cache_leftpad=*/Value(),
      /*key_new=*/Value(),
      /*value_new=*/Value(), /*k_descale=*/Value(), /*v_descale=*/Value(),
      len.alibi ? buildAlibiSlopes(b, loc, *len.alibi, m) : Value(),
      /*rotary_cos=*/Value(), /*rotary_sin=*/Value(),
      /*cache_batch_idx=*/Value(), b.getF32FloatAttr(m.parts.scale), causal,
      /*window_left=*/IntegerAttr(), /*window_right=*/IntegerAttr(),
      m.parts.softcap ? b.getF32FloatAttr(*m.parts.softcap) : FloatAttr(),
      /*rotary_interleaved=*/UnitAttr(),
      permAttr(operands->qPerm), permAttr(operands->kPerm),
      permAttr(operands->vPerm), KernelConfigAttr());
  replaceAttentionOutput(b, m, op.getOutput(), erased);
  return op.getOperation();
}
