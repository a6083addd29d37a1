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
#include <type_traits>

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

/// The classes of all QB x KB blocks of each of the lists' groupsB x
/// groupsH (batch, head) rows, row-major, and what decided them. A group
/// is one batch (head) where the mask_mod reads b (h), else all of them.
struct Classification {
  int64_t groupsB = 1, groupsH = 1;
  int64_t qBlocks, kBlocks;
  std::vector<BlockClass> cls;
  int64_t fullCount = 0, maskSkipped = 0;
  BlockClass &at(int64_t gb, int64_t gh, int64_t qb, int64_t kb) {
    return cls[((gb * groupsH + gh) * qBlocks + qb) * kBlocks + kb];
  }
  BlockClass at(int64_t gb, int64_t gh, int64_t qb, int64_t kb) const {
    return cls[((gb * groupsH + gh) * qBlocks + qb) * kBlocks + kb];
  }
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
/// known at compile time) over its index box, and by the band; per batch
/// (head) when `perBatch` (`perHead`), else once for all of them.
Classification classify(AttentionVariantInterface op, const AttentionSizes &sz,
                        int64_t bq, int64_t bk, VerdictFn verdict,
                        bool perBatch = false, bool perHead = false) {
  Classification c;
  c.groupsB = perBatch ? sz.batch : 1;
  c.groupsH = perHead ? sz.headsQ : 1;
  c.qBlocks = llvm::divideCeil(sz.seqQ, bq);
  c.kBlocks = llvm::divideCeil(sz.seqK, bk);
  c.cls.assign(c.groupsB * c.groupsH * c.qBlocks * c.kBlocks,
               BlockClass::Partial);
  // A group's b (h): one index, or the whole range where the lists are
  // shared (a dynamic size leaves it unbounded above).
  auto group = [](bool split, int64_t g, int64_t n) {
    if (split)
      return Interval{g, g};
    return Interval{0, ShapedType::isDynamic(n)
                           ? std::numeric_limits<int64_t>::max()
                           : n - 1};
  };
  int64_t off = op.isBottomRightAligned() ? sz.seqK - sz.seqQ : 0;
  int64_t budget = kRefineBudget;
  for (int64_t gb = 0; gb < c.groupsB; ++gb)
    for (int64_t gh = 0; gh < c.groupsH; ++gh) {
      Interval b = group(perBatch, gb, sz.batch);
      Interval h = group(perHead, gh, sz.headsQ);
      for (int64_t qb = 0; qb < c.qBlocks; ++qb) {
        Interval i{qb * bq, std::min((qb + 1) * bq, sz.seqQ) - 1};
        for (int64_t kb = 0; kb < c.kBlocks; ++kb) {
          Interval j{kb * bk, std::min((kb + 1) * bk, sz.seqK) - 1};
          BlockClass &out = c.at(gb, gh, qb, kb);
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
    }
  return c;
}

/// Shares the lists of groups that came out the same (a mask that reads h
/// only where it cannot matter, or the same for every batch): one row
/// broadcast over the dimension instead of B or H copies.
void shareIdenticalGroups(Classification &c) {
  int64_t plane = c.qBlocks * c.kBlocks;
  auto group = [&](int64_t gb, int64_t gh) {
    return c.cls.begin() + (gb * c.groupsH + gh) * plane;
  };
  auto keep = [&](int64_t nb, int64_t nh, auto pick) {
    std::vector<BlockClass> kept;
    for (int64_t gb = 0; gb < nb; ++gb)
      for (int64_t gh = 0; gh < nh; ++gh) {
        auto [b, h] = pick(gb, gh);
        kept.insert(kept.end(), group(b, h), group(b, h) + plane);
      }
    c.cls = std::move(kept);
    c.groupsB = nb;
    c.groupsH = nh;
  };
  bool headsSame = true;
  for (int64_t gb = 0; gb < c.groupsB && headsSame; ++gb)
    for (int64_t gh = 1; gh < c.groupsH && headsSame; ++gh)
      headsSame = std::equal(group(gb, 0), group(gb, 0) + plane, group(gb, gh));
  if (c.groupsH > 1 && headsSame)
    keep(c.groupsB, 1, [](int64_t gb, int64_t) {
      return std::pair<int64_t, int64_t>{gb, 0};
    });
  bool batchesSame = true;
  for (int64_t gb = 1; gb < c.groupsB && batchesSame; ++gb)
    batchesSame =
        std::equal(group(0, 0), group(0, 0) + c.groupsH * plane, group(gb, 0));
  if (c.groupsB > 1 && batchesSame)
    keep(1, c.groupsH, [](int64_t, int64_t gh) {
      return std::pair<int64_t, int64_t>{0, gh};
    });
}

/// kv_num_blocks [GB, GH, QB] and kv_indices [GB, GH, QB, N] of the blocks
/// of class `want`, sorted by key block (GB, GH: the classification's
/// groups, 1 where the lists are shared); N is the longest row (at least 1,
/// so that the slot dimension is never empty) and unused slots hold 0.
std::pair<Value, Value> buildLists(OpBuilder &b, Location loc,
                                   const Classification &c, BlockClass want) {
  int64_t numRows = c.groupsB * c.groupsH * c.qBlocks;
  std::vector<std::vector<int32_t>> rows(numRows);
  int64_t width = 1;
  for (int64_t row = 0; row < numRows; ++row) {
    for (int64_t kb = 0; kb < c.kBlocks; ++kb)
      if (c.cls[row * c.kBlocks + kb] == want)
        rows[row].push_back(int32_t(kb));
    width = std::max<int64_t>(width, rows[row].size());
  }
  std::vector<int32_t> counts, indices(numRows * width, 0);
  for (int64_t row = 0; row < numRows; ++row) {
    counts.push_back(int32_t(rows[row].size()));
    llvm::copy(rows[row], indices.begin() + row * width);
  }
  auto i32 = b.getI32Type();
  auto numType =
      RankedTensorType::get({c.groupsB, c.groupsH, c.qBlocks}, i32);
  auto idxType =
      RankedTensorType::get({c.groupsB, c.groupsH, c.qBlocks, width}, i32);
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
    // The forward and the gradient alike: a training graph's backward
    // visits the same blocks (its kernels walk the transposed lists).
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionGradOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      std::string why = isa<AttentionOp>(op) ? derive(cast<AttentionOp>(op))
                                             : derive(cast<AttentionGradOp>(op));
      auto iface = cast<AttentionVariantInterface>(op);
      if (!why.empty() && explain && !iface.getMaskModRegion().empty())
        op->emitRemark() << "flash-derive-block-sparsity: left dense: " << why;
    }
  }

  /// Gives `op` (flash.attention or flash.attention_grad) its lists, or
  /// says why not.
  template <typename OpT>
  std::string derive(OpT op) {
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
    if constexpr (std::is_same_v<OpT, AttentionOp>)
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
    // A mask that reads b or h gets lists per batch or head where the
    // sizes are static and the blocks stay within bounds: over the whole
    // range those indices would leave most blocks partial (a window that
    // depends on the head is narrow for one head and wide for another).
    Region &region = op.getMaskMod();
    auto splits = [&](unsigned arg, int64_t n) {
      return !region.front().getArgument(arg).use_empty() &&
             !ShapedType::isDynamic(n) && n > 1;
    };
    bool perBatch = splits(0, sz.batch), perHead = splits(1, sz.headsQ);
    if ((perBatch ? sz.batch : 1) * (perHead ? sz.headsQ : 1) * qBlocks *
            kBlocks > kMaxBlocks)
      perBatch = perHead = false;
    Classification c = classify(
        iface, sz, bq, bk, [&](const auto &box) { return eval.evaluate(box); },
        perBatch, perHead);
    shareIdenticalGroups(c);
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
  template <typename OpT>
  void setLists(OpT op, Value num, Value idx, Value fullNum,
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
