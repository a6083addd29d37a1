//===- Fp8Dequant.cpp - attention over dequantised FP8 inputs -------------===//
//
// A model that stores Q, K and V in float8_e4m3fn dequantises them right
// before attention: `q.to(torch.bfloat16) * q_scale`, exported by torch-mlir
// as an arith.extf from f8E4M3FN and an arith.mulf by the scale (one
// linalg.generic after elementwise fusion, two before). Raised as it stands that is a bf16 attention after a
// separate dequantise, which reads twice the bytes and runs the 16-bit
// tensor cores. When each of Q, K, V is such a dequantise with a scale that
// is per tensor or per head, the op is rebuilt on the e4m3 tensors with the
// scales as descale operands (FlashOps.td states the FP8 semantics); the
// dequantised values are then products in f32 rather than rounded to 16
// bits, a difference within the FP8 numerics rule.
//
// A scale per block of rows (FlashAttention-3's block quantisation, as a
// model writes it: `(x8.view(B, H, N, rows, D).to(bf16) * scale[:, :, :,
// None, None]).view(B, H, S, D)`, exported as a tensor.expand_shape, the
// dequantise on the 5-D view and a tensor.collapse_shape) becomes a
// per-block descale [B, H, N] with descale_block_size.
//
// The matching of one dequantise, the checks of its source type and scale
// and the building of a descale operand are shared with the FP8 KV cache
// (KVCacheFp8.cpp), which absorbs the same dequantise of a decode step's
// caches into flash.attention_kvcache.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::raise;

namespace {
bool isFp8(Type t) { return isa<Float8E4M3FNType, Float8E5M2Type>(t); }

/// Follows `v` up through scalar extf / truncf to a block argument.
BlockArgument throughCasts(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<arith::ExtFOp, arith::TruncFOp>(def))
      return {};
    v = def->getOperand(0);
  }
  return dyn_cast<BlockArgument>(v);
}

/// The f8 source of a whole-tensor up-cast `v` (a linalg.generic of
/// arith.extf with identity maps), else null.
Value upcastSource(Value v, SmallVectorImpl<Operation *> &ops) {
  Operation *def = v.getDefiningOp();
  auto g = dyn_cast_or_null<linalg::GenericOp>(def);
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return {};
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  BlockArgument arg = throughCasts(yield.getOperand(0));
  Value src = g.getDpsInputOperand(0)->get();
  if (!arg || arg.getArgNumber() != 0 || !isFp8(getElementTypeOrSelf(src)))
    return {};
  ops.push_back(def);
  return src;
}
} // namespace

/// A dequantise of blocks of rows: `collapse` merges back the two
/// dimensions a tensor.expand_shape split an FP8 tensor's dimension into,
/// with the dequantise between them.
static FailureOr<Fp8Dequant> matchBlockDequant(tensor::CollapseShapeOp collapse,
                                               std::string &why) {
  SmallVector<ReassociationIndices> groups =
      collapse.getReassociationIndices();
  int64_t split = -1;
  for (auto [i, group] : llvm::enumerate(groups)) {
    if (group.size() == 2 && split < 0)
      split = int64_t(i);
    else if (group.size() != 1)
      return failure();
  }
  if (split < 0)
    return failure();
  FailureOr<Fp8Dequant> d = matchFp8Dequant(collapse.getSrc(), why);
  if (failed(d))
    return failure();
  auto expand = d->f8.getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand || expand.getReassociationIndices() != groups)
    return failure();
  int64_t rows = expand.getResultType().getDimSize(split + 1);
  if (ShapedType::isDynamic(rows))
    return failure();
  // The scale's dimensions in terms of the unsplit tensor.
  for (int64_t &k : d->scaleDims) {
    if (k == split) {
      k = kFp8ScaleBlockDim;
    } else if (k == split + 1) {
      why = "the scale varies within a block of rows (per token), not per "
            "tensor, per head or per block";
      return failure();
    } else if (k > split + 1) {
      k -= 1;
    }
  }
  d->f8 = expand.getSrc();
  d->blockRows = rows;
  d->blockDim = split;
  d->ops.insert(d->ops.begin(), collapse);
  d->ops.push_back(expand);
  return d;
}

FailureOr<Fp8Dequant> mlir::flash::raise::matchFp8Dequant(Value v,
                                                          std::string &why) {
  if (auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>())
    return matchBlockDequant(collapse, why);
  Fp8Dequant d;
  Operation *def = v.getDefiningOp();
  auto g = dyn_cast_or_null<linalg::GenericOp>(def);
  if (!g || g.getNumDpsInits() != 1 || g.getNumDpsInputs() != 2 ||
      !g.getIndexingMapsArray().back().isIdentity() ||
      !llvm::all_of(g.getIteratorTypesArray(), [](utils::IteratorType t) {
        return t == utils::IteratorType::parallel;
      }))
    return failure();
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto mul = yield.getOperand(0).getDefiningOp<arith::MulFOp>();
  if (!mul)
    return failure();
  BlockArgument lhs = throughCasts(mul.getLhs()), rhs = throughCasts(mul.getRhs());
  if (!lhs || !rhs || lhs == rhs || lhs.getArgNumber() >= 2 ||
      rhs.getArgNumber() >= 2)
    return failure();
  for (BlockArgument data : {lhs, rhs}) {
    OpOperand *in = g.getDpsInputOperand(data.getArgNumber());
    AffineMap map = g.getMatchingIndexingMap(in);
    if (!map.isIdentity())
      continue;
    SmallVector<Operation *> ops;
    // Fused: the generic reads the e4m3 tensor itself; else its input is
    // an up-cast of one.
    Value f8 = isFp8(getElementTypeOrSelf(in->get())) ? in->get()
                                                       : upcastSource(in->get(), ops);
    if (!f8)
      continue;
    d.f8 = f8;
    d.ops = {def};
    d.ops.append(ops);
    OpOperand *scaleIn =
        g.getDpsInputOperand(data == lhs ? rhs.getArgNumber() : lhs.getArgNumber());
    d.scale = scaleIn->get();
    AffineMap scaleMap = g.getMatchingIndexingMap(scaleIn);
    auto loopSizes = g.getStaticLoopRanges();
    for (AffineExpr e : scaleMap.getResults()) {
      if (auto c = dyn_cast<AffineConstantExpr>(e); c && c.getValue() == 0)
        d.scaleDims.push_back(-1);
      else if (auto dim = dyn_cast<AffineDimExpr>(e))
        d.scaleDims.push_back(loopSizes[dim.getPosition()] == 1
                                  ? -1
                                  : int64_t(dim.getPosition()));
      else
        return why = "the scale is read through an index expression other "
                     "than a loop dimension or 0",
               failure();
    }
    break;
  }
  if (!d.f8)
    return failure();
  return d;
}

LogicalResult mlir::flash::raise::checkFp8Source(const Fp8Dequant &d,
                                                StringRef name,
                                                StringRef takes,
                                                std::string &why) {
  Type t = getElementTypeOrSelf(d.f8);
  if (isa<Float8E4M3FNType>(t))
    return success();
  why = ("'" + name + "' is dequantised from " +
         (isa<Float8E5M2Type>(t) ? "f8E5M2" : "another type") + " (" + takes +
         " f8E4M3FN)")
            .str();
  return failure();
}

LogicalResult mlir::flash::raise::checkFp8Scale(const Fp8Dequant &d,
                                               ArrayRef<int64_t> perm,
                                               StringRef name, bool &perHead,
                                               std::string &why,
                                               int64_t *blockRows) {
  perHead = false;
  if (blockRows)
    *blockRows = 0;
  for (int64_t k : d.scaleDims) {
    if (k == kFp8ScaleBlockDim) {
      if (!blockRows || d.blockDim != perm[2]) {
        why = ("the scale of '" + name + "' is per block of " +
               (blockRows ? "another dimension than S"
                          : "rows (per-block descales are flash.attention's)"))
                  .str();
        return failure();
      }
      *blockRows = d.blockRows;
      perHead = true;
      continue;
    }
    if (k < 0)
      continue;
    if (k != perm[0] && k != perm[1]) {
      why = ("the scale of '" + name +
             "' varies along S or D (per token or per channel), not per "
             "tensor or per head")
                .str();
      return failure();
    }
    perHead = true;
  }
  DenseFPElementsAttr values;
  if (matchPattern(d.scale, m_Constant(&values)))
    for (APFloat x : values.getValues<APFloat>()) {
      double s = x.convertToDouble();
      if (!(s > 0.0 && std::isfinite(s))) {
        why = ("the scale of '" + name + "' is not positive and finite").str();
        return failure();
      }
    }
  return success();
}

Value mlir::flash::raise::buildFp8Descale(OpBuilder &b, Location loc,
                                         const Fp8Dequant &d, bool perHead,
                                         ArrayRef<int64_t> perm, int64_t batch,
                                         int64_t heads, int64_t blockRows,
                                         int64_t seq) {
  Type f32 = b.getF32Type();
  auto toF32 = [&](OpBuilder &nb, Location nloc, Value x) -> Value {
    if (x.getType().isF32())
      return x;
    return arith::ExtFOp::create(nb, nloc, f32, x);
  };
  auto scaleType = cast<RankedTensorType>(d.scale.getType());
  if (!perHead) {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    SmallVector<Value> idx(scaleType.getRank(), zero);
    Value s = toF32(b, loc, tensor::ExtractOp::create(b, loc, d.scale, idx));
    return tensor::FromElementsOp::create(b, loc, RankedTensorType::get({}, f32),
                                          ValueRange{s});
  }
  // [B, H] (or [B, H, N] per block) from the scale: loops (b, h[, n]),
  // the scale read at b / h / n where it follows B / H / the blocks and at
  // 0 elsewhere.
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> reads;
  for (int64_t k : d.scaleDims)
    reads.push_back(k == perm[0]   ? getAffineDimExpr(0, ctx)
                    : k == perm[1] ? getAffineDimExpr(1, ctx)
                    : k == kFp8ScaleBlockDim ? getAffineDimExpr(2, ctx)
                                             : getAffineConstantExpr(0, ctx));
  SmallVector<int64_t> shape = {batch, heads};
  if (blockRows)
    shape.push_back(seq / blockRows);
  unsigned loops = shape.size();
  Value init = tensor::EmptyOp::create(b, loc, shape, f32);
  auto g = linalg::GenericOp::create(
      b, loc, init.getType(), d.scale, init,
      ArrayRef<AffineMap>{AffineMap::get(loops, 0, reads, ctx),
                          AffineMap::getMultiDimIdentityMap(loops, ctx)},
      SmallVector<utils::IteratorType>(loops, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, toF32(nb, nloc, args[0]));
      });
  return g.getResult(0);
}

void mlir::flash::raise::eraseFp8DequantIfUnused(const Fp8Dequant &d) {
  for (Operation *op : d.ops) {
    if (!op->use_empty())
      return;
    Operation *init = nullptr;
    if (auto g = dyn_cast<linalg::GenericOp>(op))
      init = g.getDpsInitOperand(0)->get().getDefiningOp<tensor::EmptyOp>();
    op->erase();
    if (init && init->use_empty())
      init->erase();
  }
}

Operation *mlir::flash::raise::raiseFp8Dequant(AttentionOp op,
                                               std::string &whyNot) {
  whyNot.clear();
  const char *names[3] = {"query", "key", "value"};
  Value operands[3] = {op.getQuery(), op.getKey(), op.getValue()};
  SmallVector<Fp8Dequant, 3> dq;
  int found = 0;
  for (int i = 0; i < 3; ++i) {
    std::string why;
    FailureOr<Fp8Dequant> d = matchFp8Dequant(operands[i], why);
    if (failed(d)) {
      if (!why.empty())
        whyNot = ("'" + Twine(names[i]) + "': " + why).str();
      dq.push_back({});
      continue;
    }
    ++found;
    dq.push_back(*d);
  }
  if (found == 0)
    return op; // no FP8 here, and nothing to explain
  if (!whyNot.empty())
    return op;
  if (found != 3) {
    whyNot = "only some of Q, K and V are dequantised from FP8 (FP8 "
             "attention takes all three in e4m3)";
    return op;
  }
  for (int i = 0; i < 3; ++i)
    if (failed(checkFp8Source(dq[i], names[i], "FP8 attention takes", whyNot)))
      return op;
  Type outElt = getElementTypeOrSelf(op.getOutput());
  if (!outElt.isBF16() && !outElt.isF16()) {
    whyNot = "the attention's O is not bf16 or f16 (FP8 attention writes a "
             "16-bit O)";
    return op;
  }
  auto iface = cast<AttentionVariantInterface>(op.getOperation());
  if (iface.hasDropout() || op.isVarlen() || iface.getBlockSparse() ||
      op.getAlibiSlopes()) {
    whyNot = "FP8 attention takes no dropout, varlen, block-sparse lists or "
             "ALiBi";
    return op;
  }

  AttentionSizes sz = iface.getSizes();
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<int64_t, 4> perms[3] = {iface.getQueryPerm(), iface.getKeyPerm(),
                                      iface.getValuePerm()};
  int64_t heads[3] = {sz.headsQ, sz.headsKV, sz.headsKV};
  int64_t seqs[3] = {sz.seqQ, sz.seqK, sz.seqK};
  bool perHead[3];
  int64_t blockRows[3];
  for (int i = 0; i < 3; ++i)
    if (failed(checkFp8Scale(dq[i], perms[i], names[i], perHead[i], whyNot,
                             &blockRows[i])))
      return op;
  // One block size for K's and V's rows (descale_block_size's BK).
  if (blockRows[1] && blockRows[2] && blockRows[1] != blockRows[2]) {
    whyNot = "K and V are dequantised per block of different sizes (" +
             std::to_string(blockRows[1]) + " and " +
             std::to_string(blockRows[2]) +
             " rows; FP8 attention takes one for both)";
    return op;
  }
  DenseI64ArrayAttr descaleBlocks;
  if (blockRows[0] || blockRows[1] || blockRows[2]) {
    int64_t bq = blockRows[0], bk = std::max(blockRows[1], blockRows[2]);
    descaleBlocks = b.getDenseI64ArrayAttr({bq ? bq : 128, bk ? bk : 128});
  }
  Value descales[3];
  for (int i = 0; i < 3; ++i)
    descales[i] = buildFp8Descale(b, loc, dq[i], perHead[i], perms[i],
                                  sz.batch, heads[i], blockRows[i], seqs[i]);

  Type lseType = op.getLse() ? op.getLse().getType() : Type();
  auto fp8 = AttentionOp::create(
      b, loc, op.getOutput().getType(), lseType, dq[0].f8, dq[1].f8, dq[2].f8,
      op.getBias(), op.getMask(), op.getSeed(), /*cu_seqlens_q=*/Value(),
      /*cu_seqlens_k=*/Value(), descales[0], descales[1], descales[2],
      /*kv_num_blocks=*/Value(), /*kv_indices=*/Value(),
      /*full_kv_num_blocks=*/Value(), /*full_kv_indices=*/Value(),
      /*alibi_slopes=*/Value(),
      op.getScaleAttr(), op.getCausalAttr(), op.getWindowLeftAttr(),
      op.getWindowRightAttr(), op.getSoftcapAttr(), op.getDropoutPAttr(),
      op.getQPermAttr(), op.getKPermAttr(), op.getVPermAttr(),
      op.getConfigAttr(), /*sparse_block_size=*/DenseI64ArrayAttr(),
      descaleBlocks);
  for (NamedAttribute a : op->getDiscardableAttrs())
    fp8->setAttr(a.getName(), a.getValue());
  fp8.getScoreMod().takeBody(op.getScoreMod());
  fp8.getMaskMod().takeBody(op.getMaskMod());
  op->replaceAllUsesWith(fp8->getResults());
  op->erase();
  // Operands that share one dequantise (K = V) erase it once.
  for (int i = 0; i < 3; ++i)
    if (llvm::none_of(llvm::ArrayRef(dq).take_front(i), [&](const auto &e) {
          return e.ops.front() == dq[i].ops.front();
        }))
      eraseFp8DequantIfUnused(dq[i]);
  return fp8;
}
