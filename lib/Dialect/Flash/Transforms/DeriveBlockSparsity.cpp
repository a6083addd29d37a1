//===- DeriveBlockSparsity.cpp - block lists from a mask_mod --------------===//
//
// A model's mask_mod (causal, sliding window with global tokens, prefix-LM,
// documents) says, block by block, which key blocks a query block can see.
// FlexAttention makes the user build that BlockMask; here the compiler
// reads it off the region, so that the kernels' key-block iterator skips
// the blocks the mask excludes and the mask_mod work in the blocks it keeps
// whole, with nothing from the user. Masks of the indices alone are decided
// at compile time (constant lists); a document mask, whose ids only exist at
// run time, gets IR that computes its lists then (DocumentLists.h).
//
// Every compile-time verdict comes from MaskIntervalEvaluator, which is
// sound: a block is full or skipped only when that is proven for every
// index in it, so the lists never change the op's result (FlashOps.td: a
// full block is the promise that mask_mod keeps all of it; a block in
// neither list is masked).
//
//===----------------------------------------------------------------------===//
#include "DocumentLists.h"
#include "MaskIntervals.h"

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"
#include "flashfuse/Dialect/Flash/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

namespace mlir::flash {
#define GEN_PASS_DEF_FLASHDERIVEBLOCKSPARSITY
#include "flashfuse/Dialect/Flash/Transforms/Passes.h.inc"
} // namespace mlir::flash

using namespace mlir;
using namespace mlir::flash;

namespace {

/// More blocks than this are not classified: the lists would be constants
/// of tens of megabytes (2^22 blocks is 2048 x 2048 blocks of 128, S = 256k).
constexpr int64_t kMaxBlocks = int64_t(1) << 22;

using BlockClass = StaticBlock;

/// The classes of all QB x KB blocks, row-major, and what decided them.
struct Classification {
  int64_t qBlocks, kBlocks;
  std::vector<BlockClass> cls;
  int64_t fullCount = 0, maskSkipped = 0;
};

/// True when the op's causal / window band masks every (i, j) of the box:
/// such a block is skipped whatever mask_mod says (the band holds in every
/// block, FlashOps.td).
bool bandMasksAll(AttentionVariantInterface op, int64_t off, Interval i,
                  Interval j) {
  // Kept keys satisfy j <= i + off (causal), j >= i + off - left,
  // j <= i + off + right; the box is all masked when one of them fails at
  // its most favourable corner.
  if (op.isCausal() && j.lo > i.hi + off)
    return true;
  if (auto left = op.getWindowLeftSize(); left && j.hi < i.lo + off - *left)
    return true;
  if (auto right = op.getWindowRightSize(); right && j.lo > i.hi + off + *right)
    return true;
  return false;
}

using VerdictFn =
    llvm::function_ref<BoxVerdict(const std::array<Interval, 4> &)>;

/// Bisections of an undecided block, and evaluations per op, at most.
constexpr int kRefineDepth = 4;
constexpr int64_t kRefineBudget = int64_t(1) << 20;

/// The verdict of `box`, refined by bisection. Interval evaluation forgets
/// that the terms of `|q - k| < w or k < g or q < g` read the same indices,
/// so a block every part of which is decided (by one term or another) can
/// itself be undecided. Deciding the halves of both index ranges recovers
/// such blocks; it stays sound, since the parts cover the box: all of them
/// kept (masked) means the box is. The first undecided or disagreeing part
/// ends the search, so a block on a mask edge costs about one evaluation
/// per level; `budget` bounds the evaluations of the whole op.
BoxVerdict refine(const std::array<Interval, 4> &box, int depth,
                  int64_t &budget, VerdictFn verdict) {
  --budget;
  BoxVerdict v = verdict(box);
  Interval i = box[2], j = box[3];
  if (v != BoxVerdict::Some || depth == 0 || budget <= 0 ||
      (i.isPoint() && j.isPoint()))
    return v;
  auto halves = [](Interval r) -> SmallVector<Interval, 2> {
    if (r.isPoint())
      return {r};
    int64_t mid = r.lo + (r.hi - r.lo) / 2;
    return {Interval{r.lo, mid}, Interval{mid + 1, r.hi}};
  };
  std::optional<BoxVerdict> common;
  for (Interval si : halves(i))
    for (Interval sj : halves(j)) {
      BoxVerdict part =
          refine({box[0], box[1], si, sj}, depth - 1, budget, verdict);
      if (part == BoxVerdict::Some || (common && *common != part))
        return BoxVerdict::Some;
      common = part;
    }
  return *common;
}

/// Classifies every block by `verdict` (the mask_mod, or the part of it
/// known at compile time) over its index box, and by the band.
Classification classify(AttentionVariantInterface op, const AttentionSizes &sz,
                        int64_t bq, int64_t bk, VerdictFn verdict) {
  Classification c;
  c.qBlocks = llvm::divideCeil(sz.seqQ, bq);
  c.kBlocks = llvm::divideCeil(sz.seqK, bk);
  c.cls.assign(c.qBlocks * c.kBlocks, BlockClass::Partial);
  // b and h over their whole ranges (the lists are shared by every batch
  // and head); a dynamic size leaves them unbounded above.
  auto upTo = [](int64_t n) {
    return Interval{0, ShapedType::isDynamic(n)
                           ? std::numeric_limits<int64_t>::max()
                           : n - 1};
  };
  Interval b = upTo(sz.batch), h = upTo(sz.headsQ);
  int64_t off = op.isBottomRightAligned() ? sz.seqK - sz.seqQ : 0;
  int64_t budget = kRefineBudget;
  for (int64_t qb = 0; qb < c.qBlocks; ++qb) {
    Interval i{qb * bq, std::min((qb + 1) * bq, sz.seqQ) - 1};
    for (int64_t kb = 0; kb < c.kBlocks; ++kb) {
      Interval j{kb * bk, std::min((kb + 1) * bk, sz.seqK) - 1};
      BlockClass &out = c.cls[qb * c.kBlocks + kb];
      if (bandMasksAll(op, off, i, j)) {
        out = BlockClass::Skipped;
        continue;
      }
      switch (refine({b, h, i, j}, kRefineDepth, budget, verdict)) {
      case BoxVerdict::All:
        out = BlockClass::Full;
        ++c.fullCount;
        break;
      case BoxVerdict::None:
        out = BlockClass::Skipped;
        ++c.maskSkipped;
        break;
      case BoxVerdict::Some:
        break;
      }
    }
  }
  return c;
}

/// kv_num_blocks [1, 1, QB] and kv_indices [1, 1, QB, N] of the blocks of
/// class `want`, sorted by key block; N is the longest row (at least 1, so
/// that the slot dimension is never empty) and unused slots hold 0.
std::pair<Value, Value> buildLists(OpBuilder &b, Location loc,
                                   const Classification &c, BlockClass want) {
  std::vector<std::vector<int32_t>> rows(c.qBlocks);
  int64_t width = 1;
  for (int64_t qb = 0; qb < c.qBlocks; ++qb) {
    for (int64_t kb = 0; kb < c.kBlocks; ++kb)
      if (c.cls[qb * c.kBlocks + kb] == want)
        rows[qb].push_back(int32_t(kb));
    width = std::max<int64_t>(width, rows[qb].size());
  }
  std::vector<int32_t> counts, indices(c.qBlocks * width, 0);
  for (int64_t qb = 0; qb < c.qBlocks; ++qb) {
    counts.push_back(int32_t(rows[qb].size()));
    llvm::copy(rows[qb], indices.begin() + qb * width);
  }
  auto i32 = b.getI32Type();
  auto numType = RankedTensorType::get({1, 1, c.qBlocks}, i32);
  auto idxType = RankedTensorType::get({1, 1, c.qBlocks, width}, i32);
  Value num = arith::ConstantOp::create(
      b, loc, numType,
      DenseElementsAttr::get(numType, llvm::ArrayRef<int32_t>(counts)));
  Value idx = arith::ConstantOp::create(
      b, loc, idxType,
      DenseElementsAttr::get(idxType, llvm::ArrayRef<int32_t>(indices)));
  return {num, idx};
}

struct FlashDeriveBlockSparsity
    : flash::impl::FlashDeriveBlockSparsityBase<FlashDeriveBlockSparsity> {
  using FlashDeriveBlockSparsityBase::FlashDeriveBlockSparsityBase;

  void runOnOperation() override {
    if (blockQ <= 0 || blockK <= 0) {
      getOperation()->emitError()
          << "flash-derive-block-sparsity: block-q and block-k must be "
             "positive, got "
          << blockQ << " and " << blockK;
      return signalPassFailure();
    }
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    for (AttentionOp op : ops) {
      std::string why = derive(op);
      if (!why.empty() && explain && !op.getMaskMod().empty())
        op.emitRemark() << "flash-derive-block-sparsity: left dense: " << why;
    }
  }

  /// Gives `op` its lists, or says why not.
  std::string derive(AttentionOp op) {
    if (op.getMaskMod().empty())
      return "no mask_mod region";
    auto iface = cast<AttentionVariantInterface>(op.getOperation());
    if (iface.getBlockSparse())
      return "it already has block_sparse lists";
    // The verifier refuses lists with these three (FlashOps.td).
    if (op.getMask())
      return "it has a 'mask' operand, which block_sparse does not take";
    if (op.isVarlen())
      return "it is varlen, which block_sparse does not take";
    if (op.isFp8())
      return "it has FP8 operands, which block_sparse does not take";
    AttentionSizes sz = iface.getSizes();
    if (ShapedType::isDynamic(sz.seqQ) || ShapedType::isDynamic(sz.seqK))
      return "Sq and Sk must be static";
    // flash-lower-to-gpu walks a sparse block in whole kernel tiles, so an
    // op that already has its config gets the requested sizes rounded up
    // to multiples of its block_m / block_n (e.g. 160 keys for the 80-key
    // tiles of sm90 at D = 256).
    int64_t bq = blockQ, bk = blockK;
    if (KernelConfigAttr config = iface.getKernelConfig()) {
      bq = llvm::alignTo(bq, config.getBlockM());
      bk = llvm::alignTo(bk, config.getBlockN());
    }
    int64_t qBlocks = llvm::divideCeil(sz.seqQ, bq);
    int64_t kBlocks = llvm::divideCeil(sz.seqK, bk);
    if (qBlocks * kBlocks > kMaxBlocks)
      return std::to_string(qBlocks) + " x " + std::to_string(kBlocks) +
             " blocks are more than " + std::to_string(kMaxBlocks);

    MaskIntervalEvaluator eval(op.getMaskMod());
    OpBuilder b(op);
    // Ids read at run time: the lists are computed at run time from the
    // blocks' id ranges, with the rest of the mask decided here.
    if (std::optional<DocumentMask> doc =
            matchDocumentMask(op.getMaskMod(), sz.batch, sz.seqQ, sz.seqK)) {
      Classification c = classify(iface, sz, bq, bk, [&](const auto &box) {
        return eval.evaluate(box, doc->rest);
      });
      std::array<Value, 4> lists = buildDocumentLists(
          b, op.getLoc(), *doc, c.cls, sz.seqQ, sz.seqK, bq, bk);
      setLists(op, lists[0], lists[1], lists[2], lists[3], bq, bk);
      return "";
    }
    Classification c = classify(
        iface, sz, bq, bk, [&](const auto &box) { return eval.evaluate(box); });
    if (c.fullCount == 0 && c.maskSkipped == 0) {
      std::string why = "no block is provably all kept or all masked by the "
                        "mask_mod, every one would be partial";
      if (Operation *unknown = eval.getFirstUnmodelled())
        why += " (the evaluator does not model '" +
               unknown->getName().getStringRef().str() + "')";
      return why;
    }
    auto [num, idx] = buildLists(b, op.getLoc(), c, BlockClass::Partial);
    Value fullNum, fullIdx;
    if (c.fullCount)
      std::tie(fullNum, fullIdx) =
          buildLists(b, op.getLoc(), c, BlockClass::Full);
    setLists(op, num, idx, fullNum, fullIdx, bq, bk);
    return "";
  }

  /// Sets the lists (the full ones where given) and their block size.
  void setLists(AttentionOp op, Value num, Value idx, Value fullNum,
                Value fullIdx, int64_t bq, int64_t bk) {
    op.getKvNumBlocksMutable().assign(num);
    op.getKvIndicesMutable().assign(idx);
    if (fullNum) {
      op.getFullKvNumBlocksMutable().assign(fullNum);
      op.getFullKvIndicesMutable().assign(fullIdx);
    }
    OpBuilder b(op);
    op.setSparseBlockSizeAttr(b.getDenseI64ArrayAttr({bq, bk}));
  }
};

} // namespace
