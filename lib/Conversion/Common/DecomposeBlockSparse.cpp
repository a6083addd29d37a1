//===- DecomposeBlockSparse.cpp - block-sparse flash.attention as a masked one -===//
//
// Written from the block-sparse paragraph of flash.attention's description
// (FlashOps.td). Two steps, as DecomposeVarlen.cpp does for packed batches:
//  1. cls[B'', H'', QB, KB] (i8): 0 for an unlisted key block, 1 for a
//     partial one, 2 for a full one, where B'' (H'') is B (Hq) if either
//     list has that dimension and 1 if both broadcast it. Built by one walk
//     over each list's used slots, the partial list first, so that a block
//     in both lists (outside the contract) reads as full;
//  2. the same op without the lists, whose mask_mod keeps key j of query i
//     iff cls[b, h, i / BQ, j / BK] is 2, or is 1 and the original mask_mod
//     keeps it: a full block skips mask_mod, as the contract says. The
//     band attributes (which hold in every block), score_mod, bias,
//     softcap, dropout, GQA and the layouts carry over.
// Counts are clamped into [0, N] and indices outside [0, KB) are skipped
// where they are read, so that nothing is read out of bounds.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Conversion/Common/DecomposeBlockSparse.h"

#include "flashfuse/Conversion/Common/LinalgBuilders.h"
#include "flashfuse/Conversion/Common/LowerEachOp.h"
#include "flashfuse/Conversion/Common/ScorePipeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::flash;

namespace {
enum BlockClass : int64_t { kUnlisted = 0, kPartial = 1, kFull = 2 };

Value cIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// The index into a list's dimension `dim` for logical index `v`: 0 where
/// the list broadcasts that dimension (size 1).
Value listIndex(OpBuilder &b, Location loc, Value list, unsigned dim, Value v) {
  if (cast<RankedTensorType>(list.getType()).getDimSize(dim) == 1)
    return cIndex(b, loc, 0);
  return v;
}

/// kv_num_blocks[b, h, q] clamped into [0, N] (N = slots of `indices`), as
/// an index.
Value listedCount(OpBuilder &b, Location loc, Value num, Value indices,
                  Value batch, Value head, Value qBlock) {
  Value bi = listIndex(b, loc, num, 0, batch);
  Value hi = listIndex(b, loc, num, 1, head);
  Value n = tensor::ExtractOp::create(b, loc, num, ValueRange{bi, hi, qBlock});
  n = arith::IndexCastOp::create(b, loc, b.getIndexType(), n);
  int64_t slots = cast<RankedTensorType>(indices.getType()).getDimSize(3);
  n = arith::MaxSIOp::create(b, loc, n, cIndex(b, loc, 0));
  return arith::MinSIOp::create(b, loc, n, cIndex(b, loc, slots));
}

/// kv_indices[b, h, q, slot] as an index.
Value listedBlock(OpBuilder &b, Location loc, Value indices, Value batch,
                  Value head, Value qBlock, Value slot) {
  Value bi = listIndex(b, loc, indices, 0, batch);
  Value hi = listIndex(b, loc, indices, 1, head);
  Value kb = tensor::ExtractOp::create(b, loc, indices,
                                       ValueRange{bi, hi, qBlock, slot});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), kb);
}

/// Whether `kb` names a key block, 0 <= kb < numKeyBlocks.
Value inRange(OpBuilder &b, Location loc, Value kb, int64_t numKeyBlocks) {
  Value lo = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, kb,
                                   cIndex(b, loc, 0));
  Value hi = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, kb,
                                   cIndex(b, loc, numKeyBlocks));
  return arith::AndIOp::create(b, loc, lo, hi);
}

/// Steps 1 and 2 for either op, through the variant interface.
class BlockSparseMask {
public:
  BlockSparseMask(OpBuilder &b, Operation *op)
      : b(b), loc(op->getLoc()), variant(cast<AttentionVariantInterface>(op)),
        lists(variant.getBlockSparse()) {
    AttentionSizes sz = variant.getSizes();
    qBlocks = llvm::divideCeil(sz.seqQ, lists.blockQ);
    kBlocks = llvm::divideCeil(sz.seqK, lists.blockK);
    auto dimOf = [&](unsigned dim, int64_t full) {
      for (Value v : {lists.numBlocks, lists.fullNumBlocks})
        if (v && cast<RankedTensorType>(v.getType()).getDimSize(dim) != 1)
          return full;
      return int64_t(1);
    };
    clsBatch = dimOf(0, sz.batch);
    clsHeads = dimOf(1, sz.headsQ);
  }

  /// Step 1, at the builder's insertion point.
  Value buildClasses();
  /// Step 2: fills the empty mask_mod region of the dense op; reads the
  /// original op's mask_mod and band, so it runs before that op is erased.
  void buildMaskMod(Region &region, Value cls);

private:
  OpBuilder &b;
  Location loc;
  AttentionVariantInterface variant;
  BlockSparseOperands lists;
  int64_t qBlocks, kBlocks, clsBatch, clsHeads;

  Value index(int64_t v) { return cIndex(b, loc, v); }
  /// Marks every in-range block of one list as `cls` in `classes`.
  Value markList(Value classes, Value num, Value indices, BlockClass cls);
};
} // namespace

Value BlockSparseMask::markList(Value classes, Value num, Value indices,
                                BlockClass cls) {
  Value zero = index(0), one = index(1);
  // for b, h, q: for slot < count: cls[b, h, q, kb] = cls if kb in range.
  auto nest = [&](int64_t ub, Value init,
                  function_ref<Value(OpBuilder &, Value, Value)> body) {
    auto loop = scf::ForOp::create(
        b, loc, zero, index(ub), one, ValueRange{init},
        [&](OpBuilder &nb, Location, Value iv, ValueRange args) {
          Value next = body(nb, iv, args[0]);
          scf::YieldOp::create(nb, loc, next);
        });
    return loop.getResult(0);
  };
  return nest(clsBatch, classes, [&](OpBuilder &b1, Value bi, Value c1) {
    OpBuilder::InsertionGuard g1(b);
    b.setInsertionPoint(b1.getInsertionBlock(), b1.getInsertionPoint());
    return nest(clsHeads, c1, [&](OpBuilder &b2, Value hi, Value c2) {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPoint(b2.getInsertionBlock(), b2.getInsertionPoint());
      return nest(qBlocks, c2, [&](OpBuilder &b3, Value qi, Value c3) {
        OpBuilder::InsertionGuard g3(b);
        b.setInsertionPoint(b3.getInsertionBlock(), b3.getInsertionPoint());
        Value count = listedCount(b, loc, num, indices, bi, hi, qi);
        auto slots = scf::ForOp::create(
            b, loc, zero, count, one, ValueRange{c3},
            [&](OpBuilder &b4, Location, Value slot, ValueRange args) {
              OpBuilder::InsertionGuard g4(b);
              b.setInsertionPoint(b4.getInsertionBlock(),
                                  b4.getInsertionPoint());
              Value kb = listedBlock(b, loc, indices, bi, hi, qi, slot);
              Value ok = inRange(b, loc, kb, kBlocks);
              // Out of range: rewrite block 0 with its own class.
              Value at = arith::SelectOp::create(b, loc, ok, kb, zero);
              Value old = tensor::ExtractOp::create(
                  b, loc, args[0], ValueRange{bi, hi, qi, at});
              Value mark =
                  arith::ConstantIntOp::create(b, loc, b.getI8Type(), cls);
              Value val = arith::SelectOp::create(b, loc, ok, mark, old);
              Value updated = tensor::InsertOp::create(
                  b, loc, val, args[0], ValueRange{bi, hi, qi, at});
              scf::YieldOp::create(b, loc, updated);
            });
        return slots.getResult(0);
      });
    });
  });
}

Value BlockSparseMask::buildClasses() {
  Value empty = buildEmpty(
      b, loc,
      {b.getIndexAttr(clsBatch), b.getIndexAttr(clsHeads),
       b.getIndexAttr(qBlocks), b.getIndexAttr(kBlocks)},
      b.getI8Type());
  Value none = arith::ConstantIntOp::create(b, loc, b.getI8Type(), kUnlisted);
  Value classes = linalg::FillOp::create(b, loc, none, empty).getResult(0);
  classes = markList(classes, lists.numBlocks, lists.indices, kPartial);
  if (lists.fullNumBlocks)
    classes =
        markList(classes, lists.fullNumBlocks, lists.fullIndices, kFull);
  return classes;
}

void BlockSparseMask::buildMaskMod(Region &region, Value cls) {
  OpBuilder::InsertionGuard guard(b);
  Type idx = b.getIndexType();
  Block *body = b.createBlock(&region, {}, {idx, idx, idx, idx},
                              SmallVector<Location>(4, loc));
  Value bArg = body->getArgument(0), hArg = body->getArgument(1),
        i = body->getArgument(2), j = body->getArgument(3);
  Value bi = clsBatch == 1 ? index(0) : bArg;
  Value hi = clsHeads == 1 ? index(0) : hArg;
  Value qb = arith::DivUIOp::create(b, loc, i, index(lists.blockQ));
  Value kb = arith::DivUIOp::create(b, loc, j, index(lists.blockK));
  Value c = tensor::ExtractOp::create(b, loc, cls, ValueRange{bi, hi, qb, kb});
  auto is = [&](BlockClass k) -> Value {
    Value v = arith::ConstantIntOp::create(b, loc, b.getI8Type(), k);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c, v);
  };
  Value full = is(kFull);
  Value partial = is(kPartial);
  // The original mask_mod, for partial blocks only (the verifier refuses
  // a mask operand with the lists; the band stays on the dense op).
  Region &original = variant.getMaskModRegion();
  if (!original.empty()) {
    Value keepOriginal =
        inlineModRegion(b, original, ValueRange{bArg, hArg, i, j});
    partial = arith::AndIOp::create(b, loc, partial, keepOriginal);
  }
  Value keep = arith::OrIOp::create(b, loc, full, partial);
  YieldOp::create(b, loc, keep);
}

AttentionOp mlir::flash::decomposeBlockSparseAttention(RewriterBase &rewriter,
                                                       AttentionOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  BlockSparseMask mask(rewriter, op);
  Value cls = mask.buildClasses();
  // The verifier refuses the mask operand, varlen and FP8 with the lists:
  // none to carry.
  Type lseType = op.getLse() ? op.getLse().getType() : Type();
  auto dense = AttentionOp::create(
      rewriter, loc, op.getOutput().getType(), lseType, op.getQuery(),
      op.getKey(), op.getValue(), op.getBias(), /*mask=*/Value(), op.getSeed(),
      /*cu_seqlens_q=*/Value(), /*cu_seqlens_k=*/Value(),
      /*q_descale=*/Value(), /*k_descale=*/Value(), /*v_descale=*/Value(),
      /*kv_num_blocks=*/Value(), /*kv_indices=*/Value(),
      /*full_kv_num_blocks=*/Value(), /*full_kv_indices=*/Value(),
      op.getAlibiSlopes(),
      op.getScaleAttr(), op.getCausalAttr(), op.getWindowLeftAttr(),
      op.getWindowRightAttr(), op.getSoftcapAttr(), op.getDropoutPAttr(),
      op.getQPermAttr(),
      op.getKPermAttr(), op.getVPermAttr(), /*config=*/KernelConfigAttr(),
      /*sparse_block_size=*/DenseI64ArrayAttr(),
      /*descale_block_size=*/DenseI64ArrayAttr());
  copyDiscardableAttrs(op, dense);
  mask.buildMaskMod(dense.getMaskMod(), cls);
  dense.getScoreMod().takeBody(op.getScoreMod());
  rewriter.replaceOp(op, dense->getResults());
  return dense;
}

AttentionGradOp
mlir::flash::decomposeBlockSparseAttentionGrad(RewriterBase &rewriter,
                                               AttentionGradOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  BlockSparseMask mask(rewriter, op);
  Value cls = mask.buildClasses();
  Type gradBiasType = op.getGradBias() ? op.getGradBias().getType() : Type();
  auto dense = AttentionGradOp::create(
      rewriter, loc, op.getGradQuery().getType(), op.getGradKey().getType(),
      op.getGradValue().getType(), gradBiasType, op.getGradOutput(),
      op.getQuery(), op.getKey(), op.getValue(), op.getOutput(), op.getLse(),
      op.getBias(), /*mask=*/Value(), op.getSeed(), /*cu_seqlens_q=*/Value(),
      /*cu_seqlens_k=*/Value(), /*kv_num_blocks=*/Value(),
      /*kv_indices=*/Value(), /*full_kv_num_blocks=*/Value(),
      /*full_kv_indices=*/Value(), op.getAlibiSlopes(), op.getScaleAttr(),
      op.getCausalAttr(), op.getWindowLeftAttr(), op.getWindowRightAttr(), op.getSoftcapAttr(),
      op.getDropoutPAttr(), op.getQPermAttr(), op.getKPermAttr(),
      op.getVPermAttr(), /*config=*/KernelConfigAttr(),
      /*sparse_block_size=*/DenseI64ArrayAttr());
  copyDiscardableAttrs(op, dense);
  mask.buildMaskMod(dense.getMaskMod(), cls);
  dense.getScoreMod().takeBody(op.getScoreMod());
  rewriter.replaceOp(op, dense->getResults());
  return dense;
}

SmallVector<Value> mlir::flash::forEachListedKeyBlock(
    OpBuilder &b, Location loc, const BlockSparseOperands &lists,
    int64_t seqK, Value batch, Value head, Value qBlock, ValueRange init,
    function_ref<SmallVector<Value>(Value, Value, ValueRange)> body) {
  int64_t kBlocks = llvm::divideCeil(seqK, lists.blockK);
  SmallVector<Value> values(init);
  for (auto [num, indices] : {std::pair{lists.numBlocks, lists.indices},
                              std::pair{lists.fullNumBlocks,
                                        lists.fullIndices}}) {
    if (!num)
      continue;
    Value zero = cIndex(b, loc, 0), one = cIndex(b, loc, 1);
    Value count = listedCount(b, loc, num, indices, batch, head, qBlock);
    auto loop = scf::ForOp::create(
        b, loc, zero, count, one, values,
        [&](OpBuilder &nb, Location, Value slot, ValueRange args) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value kb = listedBlock(b, loc, indices, batch, head, qBlock, slot);
          Value ok = inRange(b, loc, kb, kBlocks);
          // An index out of range visits [Sk, Sk): nothing.
          Value kbStart =
              arith::MulIOp::create(b, loc, kb, cIndex(b, loc, lists.blockK));
          Value sk = cIndex(b, loc, seqK);
          Value start = arith::SelectOp::create(b, loc, ok, kbStart, sk);
          Value end = arith::AddIOp::create(b, loc, start,
                                            cIndex(b, loc, lists.blockK));
          end = arith::MinSIOp::create(b, loc, end, sk);
          SmallVector<Value> next = body(start, end, args);
          scf::YieldOp::create(b, loc, next);
        });
    values.assign(loop.getResults().begin(), loop.getResults().end());
  }
  return values;
}
