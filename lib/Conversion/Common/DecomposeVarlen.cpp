//===- DecomposeVarlen.cpp - packed flash.attention as a masked one -------===//
//
// Written from the varlen paragraph of flash.attention's description
// (FlashOps.td); flash.attention_grad is rewritten the same way, so the
// dense backward recomputes P under the same mask. Two steps:
//  1. seg[i], the sequence owning packed query row i: B for every row, then
//     seg[i] := b for i in [cu_q[b], cu_q[b+1]), one scf.for over b with an
//     inner one over its rows (O(B + total_q) work; rows no sequence owns
//     keep B);
//  2. the same flash.attention without cu_seqlens, causal or window, whose
//     mask_mod keeps key j for query row i iff s = seg[i] < B,
//     j in [cu_k[s], cu_k[s+1]), and the causal / window band holds between
//     the local indices i - cu_q[s] and j - cu_k[s], with bottom-right
//     alignment by the sequence's own lengths.
// Scale, softcap, dropout, GQA and the layouts carry over unchanged, so
// everything else about the variant is the dense op's; dropout's keep test
// alone draws at indices the dense op does not have (the sequence and the
// local ones), which VarlenIndices::local gives the lowering. A row without a visible key is
// a fully masked row of the dense op: O = 0, LSE = +inf, as the contract
// says. The dense lowerings do not know the mask is block-diagonal, so
// they compute (and mask away) every cross-sequence score: O(total_q *
// total_k) work, acceptable for the CPU reference lowerings.
// Offsets outside [0, total] (outside the contract) are clamped where they
// are read, so that nothing is read out of bounds.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Conversion/Common/DecomposeVarlen.h"

#include "flashfuse/Conversion/Common/Layout.h"
#include "flashfuse/Conversion/Common/LinalgBuilders.h"
#include "flashfuse/Conversion/Common/LowerEachOp.h"
#include "flashfuse/Conversion/Common/Philox.h"
#include "flashfuse/Conversion/Common/ScorePipeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::flash;

namespace {
/// What the forward and the backward rewrite share: the segment ids and
/// the per-sequence mask_mod, read from the op through its variant
/// interface and its cu_seqlens operands.
class VarlenMask {
public:
  VarlenMask(OpBuilder &b, Operation *op, Value cuQ, Value cuK)
      : b(b), loc(op->getLoc()), variant(cast<AttentionVariantInterface>(op)) {
    AttentionSizes sz = variant.getSizes();
    at.cuQ = cuQ;
    at.cuK = cuK;
    at.totalQ = sz.seqQ;
    at.totalK = sz.seqK;
    at.batch = cast<RankedTensorType>(cuQ.getType()).getDimSize(0) - 1;
  }

  /// Step 1, at the builder's insertion point (null when B = 0); returns
  /// the indices that the rewritten op's regions and dropout read.
  const VarlenIndices &buildSegmentIds() {
    at.seg = at.batch > 0 ? segmentIds() : Value();
    return at;
  }

  /// Step 2: fills the empty mask_mod region of the dense op: the
  /// sequence's keys, its band, and the op's own mask_mod (if any) on
  /// local indices.
  void buildMaskMod(Region &region, Region &userMaskMod);

  /// Fills the empty score_mod region of the dense op with the op's own
  /// `userScoreMod` on the sequence index and local indices.
  void buildScoreMod(Region &region, Region &userScoreMod);

private:
  OpBuilder &b;
  Location loc;
  AttentionVariantInterface variant;
  VarlenIndices at;

  Value clampedLocal(Value x, Value lo, Value hi);

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  /// seg [total_q] of index, B where no sequence owns the row.
  Value segmentIds() {
    Value empty =
        buildEmpty(b, loc, {b.getIndexAttr(at.totalQ)}, b.getIndexType());
    Value init =
        linalg::FillOp::create(b, loc, index(at.batch), empty).getResult(0);
    Value one = index(1);
    auto outer = scf::ForOp::create(
        b, loc, index(0), index(at.batch), one, ValueRange{init},
        [&](OpBuilder &nb, Location, Value seq, ValueRange args) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value lo = VarlenIndices::offset(b, loc, at.cuQ, seq, at.totalQ);
          Value next = arith::AddIOp::create(b, loc, seq, one);
          Value hi = VarlenIndices::offset(b, loc, at.cuQ, next, at.totalQ);
          // An empty (or, outside the contract, reversed) range runs no
          // iteration.
          auto inner = scf::ForOp::create(
              b, loc, lo, hi, one, args,
              [&](OpBuilder &ib, Location, Value row, ValueRange segs) {
                OpBuilder::InsertionGuard guard(b);
                b.setInsertionPoint(ib.getInsertionBlock(),
                                    ib.getInsertionPoint());
                Value updated =
                    tensor::InsertOp::create(b, loc, seq, segs[0], row);
                scf::YieldOp::create(b, loc, updated);
              });
          scf::YieldOp::create(b, loc, inner.getResults());
        });
    return outer.getResult(0);
  }
};
} // namespace

Value VarlenIndices::offset(OpBuilder &b, Location loc, Value cu, Value at,
                            int64_t limit) {
  Value v = tensor::ExtractOp::create(b, loc, cu, at);
  v = arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value hi = arith::ConstantIndexOp::create(b, loc, limit);
  v = arith::MaxSIOp::create(b, loc, v, zero);
  return arith::MinSIOp::create(b, loc, v, hi);
}

/// Where query row i lies: its sequence (0 for a row no sequence owns,
/// with `owned` false) and that sequence's offsets.
VarlenIndices::Sequence VarlenIndices::locate(OpBuilder &b, Location loc,
                                              Value i) const {
  Sequence q;
  // One statement per op, so that the IR does not depend on the
  // compiler's order of evaluating arguments.
  Value s = tensor::ExtractOp::create(b, loc, seg, i);
  Value nb = arith::ConstantIndexOp::create(b, loc, batch);
  q.owned = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, s, nb);
  // An unowned row reads sequence 0's offsets (in bounds) and is masked
  // by `owned` anyway.
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  q.index = arith::SelectOp::create(b, loc, q.owned, s, zero);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value next = arith::AddIOp::create(b, loc, q.index, one);
  q.qLo = offset(b, loc, cuQ, q.index, totalQ);
  q.qHi = offset(b, loc, cuQ, next, totalQ);
  q.kLo = offset(b, loc, cuK, q.index, totalK);
  q.kHi = offset(b, loc, cuK, next, totalK);
  return q;
}

std::array<Value, 4> VarlenIndices::local(OpBuilder &b, Location loc, Value h,
                                          Value i, Value j) const {
  if (!seg) {
    // B = 0: no pair is kept; any index will do.
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    return {zero, h, i, j};
  }
  Sequence q = locate(b, loc, i);
  Value li = arith::SubIOp::create(b, loc, i, q.qLo);
  Value lj = arith::SubIOp::create(b, loc, j, q.kLo);
  return {q.index, h, li, lj};
}

/// x - lo clamped into [0, max(hi - lo - 1, 0)]: a local index the
/// regions may use to read their captured tensors, whatever pair of the
/// dense op they are evaluated for (the pairs across sequences are masked
/// away after).
Value VarlenMask::clampedLocal(Value x, Value lo, Value hi) {
  Value zero = index(0), one = index(1);
  Value local = arith::SubIOp::create(b, loc, x, lo);
  Value len = arith::SubIOp::create(b, loc, hi, lo);
  Value last = arith::SubIOp::create(b, loc, len, one);
  last = arith::MaxSIOp::create(b, loc, last, zero);
  local = arith::MaxSIOp::create(b, loc, local, zero);
  return arith::MinSIOp::create(b, loc, local, last);
}

void VarlenMask::buildMaskMod(Region &region, Region &userMaskMod) {
  OpBuilder::InsertionGuard guard(b);
  Type idx = b.getIndexType();
  Block *body = b.createBlock(&region, {}, {idx, idx, idx, idx},
                              SmallVector<Location>(4, loc));
  if (!at.seg) {
    // B = 0: no sequence owns any row.
    Value none = arith::ConstantIntOp::create(b, loc, 0, 1);
    YieldOp::create(b, loc, none);
    return;
  }
  Value h = body->getArgument(1), i = body->getArgument(2),
        j = body->getArgument(3);
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, p, x, y);
  };
  VarlenIndices::Sequence q = at.locate(b, loc, i);
  Value keep = q.owned;
  auto conj = [&](Value c) { keep = arith::AndIOp::create(b, loc, keep, c); };
  conj(cmp(arith::CmpIPredicate::sge, j, q.kLo));
  conj(cmp(arith::CmpIPredicate::slt, j, q.kHi));

  std::optional<int64_t> left = variant.getWindowLeftSize(),
                         right = variant.getWindowRightSize();
  if (variant.isCausal() || left || right) {
    // Local indices; diag = i' + off with off = Lk_b - Lq_b when causal
    // is bottom-right, else 0 (top-left, also a window alone). Signed:
    // diag is negative for the first rows when Lq_b > Lk_b.
    Value li = arith::SubIOp::create(b, loc, i, q.qLo);
    Value lj = arith::SubIOp::create(b, loc, j, q.kLo);
    Value diag = li;
    if (variant.isBottomRightAligned()) {
      Value lenK = arith::SubIOp::create(b, loc, q.kHi, q.kLo);
      Value lenQ = arith::SubIOp::create(b, loc, q.qHi, q.qLo);
      Value off = arith::SubIOp::create(b, loc, lenK, lenQ);
      diag = arith::AddIOp::create(b, loc, li, off);
    }
    if (variant.isCausal())
      conj(cmp(arith::CmpIPredicate::sle, lj, diag));
    if (left) {
      Value w = index(*left);
      Value lo = arith::SubIOp::create(b, loc, diag, w);
      conj(cmp(arith::CmpIPredicate::sge, lj, lo));
    }
    if (right) {
      Value w = index(*right);
      Value hi = arith::AddIOp::create(b, loc, diag, w);
      conj(cmp(arith::CmpIPredicate::sle, lj, hi));
    }
  }
  if (!userMaskMod.empty()) {
    // The op's own mask_mod, on the sequence's local indices.
    Value li = clampedLocal(i, q.qLo, q.qHi);
    Value lj = clampedLocal(j, q.kLo, q.kHi);
    conj(inlineModRegion(b, userMaskMod, {q.index, h, li, lj}));
  }
  YieldOp::create(b, loc, keep);
}

void VarlenMask::buildScoreMod(Region &region, Region &userScoreMod) {
  OpBuilder::InsertionGuard guard(b);
  Type idx = b.getIndexType();
  Block *body = b.createBlock(&region, {},
                              {b.getF32Type(), idx, idx, idx, idx},
                              SmallVector<Location>(5, loc));
  Value score = body->getArgument(0);
  if (!at.seg) {
    // B = 0: every score is masked; the region is never looked at.
    YieldOp::create(b, loc, score);
    return;
  }
  Value h = body->getArgument(2), i = body->getArgument(3),
        j = body->getArgument(4);
  VarlenIndices::Sequence q = at.locate(b, loc, i);
  Value li = clampedLocal(i, q.qLo, q.qHi);
  Value lj = clampedLocal(j, q.kLo, q.kHi);
  YieldOp::create(b, loc,
                  inlineModRegion(b, userScoreMod, {score, q.index, h, li, lj}));
}

Value mlir::flash::buildDropoutFactorAt(OpBuilder &b, Location loc,
                                        AttentionVariantInterface op,
                                        const VarlenIndices *packed,
                                        Value batch, Value h, Value i,
                                        Value j) {
  std::array<Value, 4> at = {batch, h, i, j};
  if (packed)
    at = packed->local(b, loc, h, i, j);
  return buildDropoutFactor(b, loc, op.getSeedOperand(), at[0], at[1], at[2],
                            at[3], op.getDropoutProbability());
}

std::pair<AttentionOp, VarlenIndices>
mlir::flash::decomposeVarlenAttention(RewriterBase &rewriter, AttentionOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  VarlenMask mask(rewriter, op, op.getCuSeqlensQ(), op.getCuSeqlensK());
  VarlenIndices at = mask.buildSegmentIds();
  // The same op without cu_seqlens and without the band attributes, which
  // the mask_mod applies per sequence instead; everything else carries over
  // (dropout too, its keep test's indices mapped by `at` in the lowering).
  Type lseType = op.getLse() ? op.getLse().getType() : Type();
  auto dense = AttentionOp::create(
      rewriter, loc, op.getOutput().getType(), lseType, op.getQuery(),
      op.getKey(), op.getValue(), /*bias=*/Value(), /*mask=*/Value(),
      op.getSeed(), /*cu_seqlens_q=*/Value(), /*cu_seqlens_k=*/Value(),
      // The verifier refuses FP8 with varlen: no descales to carry.
      /*q_descale=*/Value(), /*k_descale=*/Value(), /*v_descale=*/Value(),
      // The verifier refuses block-sparse lists with varlen.
      /*kv_num_blocks=*/Value(), /*kv_indices=*/Value(),
      /*full_kv_num_blocks=*/Value(), /*full_kv_indices=*/Value(),
      /*alibi_slopes=*/Value(),
      op.getScaleAttr(), /*causal=*/CausalAlignmentAttr(),
      /*window_left=*/IntegerAttr(), /*window_right=*/IntegerAttr(),
      op.getSoftcapAttr(), op.getDropoutPAttr(), op.getQPermAttr(),
      op.getKPermAttr(), op.getVPermAttr(), /*config=*/KernelConfigAttr(),
      /*sparse_block_size=*/DenseI64ArrayAttr(),
      /*descale_block_size=*/DenseI64ArrayAttr());
  copyDiscardableAttrs(op, dense);
  mask.buildMaskMod(dense.getMaskMod(), op.getMaskMod());
  if (!op.getScoreMod().empty())
    mask.buildScoreMod(dense.getScoreMod(), op.getScoreMod());
  rewriter.replaceOp(op, dense->getResults());
  return {dense, at};
}

std::pair<AttentionGradOp, VarlenIndices>
mlir::flash::decomposeVarlenAttentionGrad(RewriterBase &rewriter,
                                          AttentionGradOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  VarlenMask mask(rewriter, op, op.getCuSeqlensQ(), op.getCuSeqlensK());
  VarlenIndices at = mask.buildSegmentIds();
  // No dBias: the verifier refuses a bias with varlen.
  auto dense = AttentionGradOp::create(
      rewriter, loc, op.getGradQuery().getType(), op.getGradKey().getType(),
      op.getGradValue().getType(), /*grad_bias=*/Type(), op.getGradOutput(),
      op.getQuery(), op.getKey(), op.getValue(), op.getOutput(), op.getLse(),
      /*bias=*/Value(), /*mask=*/Value(), op.getSeed(),
      /*cu_seqlens_q=*/Value(), /*cu_seqlens_k=*/Value(),
      /*kv_num_blocks=*/Value(), /*kv_indices=*/Value(),
      /*full_kv_num_blocks=*/Value(), /*full_kv_indices=*/Value(),
      /*alibi_slopes=*/Value(),
      op.getScaleAttr(),
      /*causal=*/CausalAlignmentAttr(), /*window_left=*/IntegerAttr(),
      /*window_right=*/IntegerAttr(), op.getSoftcapAttr(),
      op.getDropoutPAttr(), op.getQPermAttr(), op.getKPermAttr(),
      op.getVPermAttr(), /*config=*/KernelConfigAttr(),
      /*sparse_block_size=*/DenseI64ArrayAttr());
  copyDiscardableAttrs(op, dense);
  mask.buildMaskMod(dense.getMaskMod(), op.getMaskMod());
  if (!op.getScoreMod().empty())
    mask.buildScoreMod(dense.getScoreMod(), op.getScoreMod());
  rewriter.replaceOp(op, dense->getResults());
  return {dense, at};
}

LogicalResult
mlir::flash::decomposeVarlenOps(Operation *root, StringRef lowering,
                                VarlenDropoutIndices &dropoutIndices) {
  // Collected first: the rewrite replaces the ops being walked.
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (auto forward = dyn_cast<AttentionOp>(op); forward && forward.isVarlen())
      ops.push_back(op);
    if (auto grad = dyn_cast<AttentionGradOp>(op); grad && grad.isVarlen())
      ops.push_back(op);
  });
  IRRewriter rewriter(root->getContext());
  bool refused = false;
  for (Operation *op : ops) {
    // The segment-id tensor and the offset clamps are sized by the static
    // totals and batch.
    if (failed(requireStaticShapes(op, lowering))) {
      refused = true;
      continue;
    }
    std::pair<Operation *, VarlenIndices> done;
    if (auto forward = dyn_cast<AttentionOp>(op))
      done = decomposeVarlenAttention(rewriter, forward);
    else
      done = decomposeVarlenAttentionGrad(rewriter, cast<AttentionGradOp>(op));
    auto [dense, at] = done;
    if (cast<AttentionVariantInterface>(dense).hasDropout())
      dropoutIndices[dense] = at;
  }
  return failure(refused);
}
