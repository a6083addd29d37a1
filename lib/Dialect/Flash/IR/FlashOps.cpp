//===- FlashOps.cpp - verifiers of flash.attention and its gradient -------===//
//
// The verifiers name the offending operand and print the shape it must have,
// in the operand's own dimension order, with `?` for sizes left free.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"
#include "VerifierUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::detail;

static constexpr int64_t kDyn = ShapedType::kDynamic;

SmallVector<int64_t, 4> mlir::flash::permOrIdentity(DenseI64ArrayAttr perm) {
  if (!perm)
    return {0, 1, 2, 3};
  return SmallVector<int64_t, 4>(perm.asArrayRef());
}

SmallVector<int64_t, 4> mlir::flash::applyPerm(ArrayRef<int64_t> logical,
                                               ArrayRef<int64_t> perm) {
  SmallVector<int64_t, 4> shape(logical.size(), kDyn);
  for (auto [logicalDim, operandDim] : llvm::enumerate(perm))
    shape[operandDim] = logical[logicalDim];
  return shape;
}

/// Logical [B, H, S, D] of a rank-4 tensor type under `perm`.
static SmallVector<int64_t, 4> logicalShape(Type type, ArrayRef<int64_t> perm) {
  auto shape = cast<RankedTensorType>(type).getShape();
  SmallVector<int64_t, 4> logical;
  for (int64_t operandDim : perm)
    logical.push_back(shape[operandDim]);
  return logical;
}

AttentionSizes mlir::flash::getAttentionSizes(Type q, Type k, Type v,
                                              ArrayRef<int64_t> qPerm,
                                              ArrayRef<int64_t> kPerm,
                                              ArrayRef<int64_t> vPerm) {
  auto ql = logicalShape(q, qPerm), kl = logicalShape(k, kPerm),
       vl = logicalShape(v, vPerm);
  // Prefer whichever operand knows a size statically: B is shared by all
  // three, Hkv and Sk by K and V, D by Q and K.
  auto pick = [](int64_t a, int64_t b) { return a != kDyn ? a : b; };
  return {pick(pick(ql[0], kl[0]), vl[0]),
          ql[1],
          pick(kl[1], vl[1]),
          ql[2],
          pick(kl[2], vl[2]),
          pick(ql[3], kl[3]),
          vl[3]};
}

namespace {
/// Shared verification of everything the variant interface describes.
struct VariantVerifier {
  Operation *op;
  AttentionVariantInterface iface;
  SmallVector<int64_t, 4> qPerm, kPerm, vPerm;
  AttentionSizes sz{};

  InFlightDiagnostic error() { return op->emitOpError(); }

  LogicalResult verifyPerm(StringRef name, DenseI64ArrayAttr perm) {
    return flash::detail::verifyPerm(op, name, perm);
  }

  LogicalResult verifyRank4(StringRef name, Value v, StringRef logical) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 4)
      return error() << "'" << name << "' must have rank 4 (logical "
                     << logical << "), got " << t;
    return success();
  }

  /// `v` must have operand shape applyPerm(logical, perm).
  LogicalResult expectShape(StringRef name, Value v,
                            ArrayRef<int64_t> logical, ArrayRef<int64_t> perm,
                            StringRef what) {
    auto want = applyPerm(logical, perm);
    auto got = cast<RankedTensorType>(v.getType()).getShape();
    if (!compatibleShape(got, want))
      return error() << "'" << name << "' must have shape " << shapeStr(want)
                     << " (" << what << "), got " << shapeStr(got);
    return success();
  }

  /// Bias and mask: rank 4, each dimension 1 or the logical [B, Hq, Sq, Sk].
  LogicalResult verifyBroadcastable(StringRef name, Value v) {
    if (!v)
      return success();
    auto got = cast<RankedTensorType>(v.getType()).getShape();
    SmallVector<int64_t, 4> want = {sz.batch, sz.headsQ, sz.seqQ, sz.seqK};
    bool ok = got.size() == 4;
    for (unsigned i = 0; ok && i < 4; ++i)
      ok = got[i] == 1 || compatible(got[i], want[i]);
    if (!ok)
      return error() << "'" << name << "' must be broadcastable to "
                     << shapeStr(want)
                     << " ([B, Hq, Sq, Sk], each dimension that size or 1), got "
                     << shapeStr(got);
    return success();
  }

  LogicalResult verify() {
    if (failed(verifyAttributeNames(op)))
      return failure();
    auto attrOf = [&](StringRef n) {
      return op->getAttrOfType<DenseI64ArrayAttr>(n);
    };
    if (failed(verifyPerm("q_perm", attrOf("q_perm"))) ||
        failed(verifyPerm("k_perm", attrOf("k_perm"))) ||
        failed(verifyPerm("v_perm", attrOf("v_perm"))))
      return failure();
    qPerm = iface.getQueryPerm();
    kPerm = iface.getKeyPerm();
    vPerm = iface.getValuePerm();

    auto qkv = iface.getQKV();
    if (failed(verifyRank4("query", qkv[0], "[B, Hq, Sq, D]")) ||
        failed(verifyRank4("key", qkv[1], "[B, Hkv, Sk, D]")) ||
        failed(verifyRank4("value", qkv[2], "[B, Hkv, Sk, Dv]")))
      return failure();

    Type elt = getElementTypeOrSelf(qkv[0]);
    for (auto [name, v] : {std::pair<StringRef, Value>{"key", qkv[1]},
                           {"value", qkv[2]}})
      if (getElementTypeOrSelf(v) != elt)
        return error() << "'" << name << "' element type "
                       << getElementTypeOrSelf(v)
                       << " must match 'query' element type " << elt;

    auto ql = logicalShape(qkv[0].getType(), qPerm);
    auto kl = logicalShape(qkv[1].getType(), kPerm);
    sz = iface.getSizes();
    if (failed(expectShape("key", qkv[1], {ql[0], kDyn, kDyn, ql[3]}, kPerm,
                           "logical [B, Hkv, Sk, D] with B and D of 'query'")) ||
        failed(expectShape("value", qkv[2],
                           {ql[0] != kDyn ? ql[0] : kl[0], kl[1], kl[2], kDyn},
                           vPerm,
                           "logical [B, Hkv, Sk, Dv] with B, Hkv, Sk of 'key'")))
      return failure();
    // The default scale is 1/sqrt(D), and a kernel cannot tile a zero-width
    // head; zero-sized B, H or S are legal (an empty batch is still a batch).
    if (sz.d == 0)
      return error() << "head dim D of 'query' and 'key' must be positive, "
                        "got 0";
    if (sz.dv == 0)
      return error() << "head dim Dv of 'value' must be positive, got 0";
    if (sz.headsKV == 0)
      return error() << "'key' and 'value' must have at least one head, got "
                        "Hkv = 0";
    if (sz.headsQ != kDyn && sz.headsKV != kDyn &&
        sz.headsQ % sz.headsKV != 0)
      return error() << "query heads (" << sz.headsQ
                     << ") must be a multiple of key/value heads ("
                     << sz.headsKV << ")";

    if (failed(verifyBroadcastable("bias", iface.getBiasOperand())) ||
        failed(verifyBroadcastable("mask", iface.getMaskOperand())))
      return failure();
    // Scores are f32 inside every lowering, so an f32 bias loses nothing;
    // exported graphs often keep additive masks in f32 next to f16 inputs.
    // Any other mix (a bf16 bias on f16 inputs) is a conversion the caller
    // must spell out.
    if (Value bias = iface.getBiasOperand()) {
      Type biasElt = getElementTypeOrSelf(bias);
      if (biasElt != elt && !biasElt.isF32())
        return error() << "'bias' element type " << biasElt
                       << " must be f32 or the 'query' element type " << elt;
    }

    auto f32Attr = [&](StringRef n) { return op->getAttrOfType<FloatAttr>(n); };
    if (auto s = f32Attr("scale"); s && !std::isfinite(s.getValueAsDouble()))
      return error() << "'scale' must be finite, got " << num(s.getValueAsDouble());
    if (!f32Attr("scale") && sz.d == kDyn)
      return error() << "'scale' must be given when the head dim D is dynamic";
    if (auto c = f32Attr("softcap");
        c && !(c.getValueAsDouble() > 0.0 && std::isfinite(c.getValueAsDouble())))
      return error() << "'softcap' must be positive and finite, got "
                     << num(c.getValueAsDouble());
    double p = 0.0;
    if (auto d = f32Attr("dropout_p")) {
      p = d.getValueAsDouble();
      if (!(p >= 0.0 && p < 1.0))
        return error() << "'dropout_p' must be in [0, 1), got " << num(p);
    }
    if (p > 0.0 && !iface.getSeedOperand())
      return error() << "dropout_p > 0 needs a 'seed' operand";
    if (p == 0.0 && iface.getSeedOperand())
      return error() << "'seed' is given but dropout_p is not positive";
    for (StringRef n : {"window_left", "window_right"})
      if (auto w = op->getAttrOfType<IntegerAttr>(n); w && w.getInt() < 0)
        return error() << "'" << n << "' must be non-negative, got "
                       << w.getInt();
    return success();
  }

  /// Logical output [B, Hq, Sq, Dv] in the layout of Q, in Q's element
  /// type or, where `allowF32` (flash.attention's result), f32 over f16 or
  /// bf16 inputs: the partial results split-sequence schemes merge by their
  /// LSE (FlashOps.td). flash.attention_grad's O operand stays Q's type.
  LogicalResult verifyOutputLike(StringRef name, Value v,
                                 bool allowF32 = false) {
    Type elt = getElementTypeOrSelf(iface.getQKV()[0]);
    Type outElt = getElementTypeOrSelf(v);
    bool f32Partial = outElt.isF32() && (elt.isF16() || elt.isBF16());
    // FP8 inputs give a 16-bit O (verifyAttentionFp8 says which).
    bool fp8Out = isa<Float8E4M3FNType>(elt) && (outElt.isF16() || outElt.isBF16());
    if (outElt != elt && !(allowF32 && (f32Partial || fp8Out))) {
      auto diag = error() << "'" << name << "' element type " << outElt
                          << " must match 'query' element type " << elt;
      if (allowF32)
        diag << " or be f32 (over f16 or bf16 inputs)";
      else if (f32Partial)
        diag << " (only flash.attention writes an f32 O; the gradient takes "
                "O in the inputs' type)";
      return diag;
    }
    if (cast<RankedTensorType>(v.getType()).getRank() != 4)
      return error() << "'" << name << "' must have rank 4, got "
                     << v.getType();
    return expectShape(name, v, {sz.batch, sz.headsQ, sz.seqQ, sz.dv}, qPerm,
                       "logical [B, Hq, Sq, Dv] in the layout of 'query'");
  }

  LogicalResult verifyLse(StringRef name, Value v) {
    SmallVector<int64_t> want = {sz.batch, sz.headsQ, sz.seqQ};
    auto got = cast<RankedTensorType>(v.getType()).getShape();
    if (!compatibleShape(got, want))
      return error() << "'" << name << "' must have shape " << shapeStr(want)
                     << " ([B, Hq, Sq]), got " << shapeStr(got);
    return success();
  }

  LogicalResult verifySameType(StringRef name, Value v, StringRef otherName,
                               Value other) {
    if (v.getType() != other.getType())
      return error() << "'" << name << "' must have the type of '" << otherName
                     << "' " << other.getType() << ", got " << v.getType();
    return success();
  }
};

/// score_mod: (f32, index, index, index, index) -> f32;
/// mask_mod: (index, index, index, index) -> i1.
LogicalResult verifyModRegion(Operation *op, Region &region, StringRef name,
                              ArrayRef<Type> argTypes, Type yieldType) {
  if (region.empty())
    return success();
  if (!region.hasOneBlock())
    return op->emitOpError() << "'" << name << "' region must have one block";
  Block &block = region.front();
  auto typeList = [](TypeRange types) {
    std::string s;
    llvm::raw_string_ostream os(s);
    llvm::interleaveComma(types, os);
    return s;
  };
  if (block.getArgumentTypes() != TypeRange(argTypes))
    return op->emitOpError()
           << "'" << name << "' region must take (" << typeList(argTypes)
           << "), got (" << typeList(block.getArgumentTypes()) << ")";
  // The generic verifier has already rejected an empty block or one that
  // does not end in a terminator, but a region verifier must not rely on
  // running after it: look at the last op without asserting it terminates.
  auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
  if (!yield || yield.getValues().size() != 1 ||
      yield.getValues()[0].getType() != yieldType) {
    auto diag = op->emitOpError()
                << "'" << name << "' region must end in flash.yield of one "
                << yieldType;
    if (yield)
      diag << ", got flash.yield of (" << typeList(yield.getValues().getTypes())
           << ")";
    else if (!block.empty())
      diag << ", got " << block.back().getName();
    return diag;
  }
  return success();
}

template <typename OpT>
LogicalResult verifyRegions(OpT op) {
  Builder b(op.getContext());
  Type idx = b.getIndexType();
  if (failed(verifyModRegion(op, op.getScoreMod(), "score_mod",
                             {b.getF32Type(), idx, idx, idx, idx},
                             b.getF32Type())))
    return failure();
  return verifyModRegion(op, op.getMaskMod(), "mask_mod", {idx, idx, idx, idx},
                         b.getI1Type());
}
} // namespace

/// The packed (varlen) form of flash.attention and its gradient:
/// cu_seqlens_q / cu_seqlens_k i32 [B + 1] over a batch of one, and none of
/// the variants whose indices or operands would have to be re-based per
/// sequence (FlashOps.td).
template <typename OpT>
static LogicalResult verifyVarlen(OpT op, const AttentionSizes &sz) {
  Value cuQ = op.getCuSeqlensQ(), cuK = op.getCuSeqlensK();
  if (!cuQ && !cuK)
    return success();
  if (!cuQ || !cuK)
    return op.emitOpError()
           << "'cu_seqlens_q' and 'cu_seqlens_k' must be given together "
              "(varlen), got only '"
           << (cuQ ? "cu_seqlens_q" : "cu_seqlens_k") << "'";
  for (auto [name, v] : {std::pair<StringRef, Value>{"cu_seqlens_q", cuQ},
                         {"cu_seqlens_k", cuK}}) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 1)
      return op.emitOpError() << "'" << name
                              << "' must have rank 1 ([B + 1]), got " << t;
    // Even an empty batch has its leading 0.
    if (t.getDimSize(0) == 0)
      return op.emitOpError() << "'" << name
                              << "' must have B + 1 >= 1 elements, got 0";
  }
  int64_t nQ = cast<RankedTensorType>(cuQ.getType()).getDimSize(0),
          nK = cast<RankedTensorType>(cuK.getType()).getDimSize(0);
  if (!compatible(nQ, nK))
    return op.emitOpError() << "'cu_seqlens_k' must have shape "
                            << shapeStr({nQ})
                            << " ([B + 1], as 'cu_seqlens_q'), got "
                            << shapeStr({nK});
  if (sz.batch != kDyn && sz.batch != 1)
    return op.emitOpError()
           << "varlen packs the batch along S: the batch size B of 'query', "
              "'key' and 'value' must be 1, got "
           << sz.batch;
  // Each refusal names the combination: none is wrong in principle, each
  // needs its indices re-based per sequence, which no lowering does yet.
  if (op.getBias())
    return op.emitOpError() << "varlen with a 'bias' operand is not supported "
                               "yet (its [B, Hq, Sq, Sk] would be per sequence)";
  if (op.getMask())
    return op.emitOpError() << "varlen with a 'mask' operand is not supported "
                               "yet (its [B, Hq, Sq, Sk] would be per sequence)";
  // score_mod, mask_mod and dropout's keep test are given per-sequence
  // indices (FlashOps.td).
  return success();
}

/// The block-sparse lists of flash.attention and its gradient
/// (FlashOps.td, "Block-sparse"): kv_num_blocks [B', H', QB] and
/// kv_indices [B', H', QB, N] (the same B', H', QB), the optional full_*
/// pair shaped the same way, B' in {1, B}, H' in {1, Hq},
/// QB = ceil(Sq / BQ); and none of the variants no lowering serves with
/// them yet.
template <typename OpT>
static LogicalResult verifyBlockSparse(OpT op, const AttentionSizes &sz) {
  Value num = op.getKvNumBlocks(), idx = op.getKvIndices(),
        fullNum = op.getFullKvNumBlocks(), fullIdx = op.getFullKvIndices();
  DenseI64ArrayAttr size = op.getSparseBlockSizeAttr();
  if (!num && !idx && !fullNum && !fullIdx) {
    if (size)
      return op.emitOpError() << "'sparse_block_size' is given but there are "
                                 "no block_sparse(...) lists";
    return success();
  }
  // The custom form cannot give one operand of a pair alone; the generic
  // form can.
  auto pair = [&](StringRef what, StringRef a, Value va, StringRef bName,
                  Value vb) -> LogicalResult {
    if (static_cast<bool>(va) == static_cast<bool>(vb))
      return success();
    return op.emitOpError() << "'" << a << "' and '" << bName
                            << "' must be given together (" << what
                            << "), got only '" << (va ? a : bName) << "'";
  };
  if (failed(pair("block_sparse", "kv_num_blocks", num, "kv_indices", idx)) ||
      failed(pair("full_blocks", "full_kv_num_blocks", fullNum,
                  "full_kv_indices", fullIdx)))
    return failure();
  if (!num)
    return op.emitOpError()
           << "full_blocks(...) needs the partial lists block_sparse("
              "'kv_num_blocks', 'kv_indices') (FlexAttention's BlockMask "
              "always has them; they may list no block)";
  int64_t bq = kDefaultSparseBlock;
  if (size) {
    if (size.size() != 2)
      return op.emitOpError()
             << "'sparse_block_size' must have 2 elements [BQ, BK], got "
             << shapeStr(size.asArrayRef());
    bq = size[0];
    if (size[0] <= 0 || size[1] <= 0)
      return op.emitOpError()
             << "'sparse_block_size' must be positive, got "
             << shapeStr(size.asArrayRef());
  }
  int64_t qBlocks = sz.seqQ == kDyn ? kDyn : llvm::divideCeil(sz.seqQ, bq);
  auto listPair = [&](StringRef numName, Value n, StringRef idxName,
                      Value ix) -> LogicalResult {
    auto nt = cast<RankedTensorType>(n.getType());
    auto it = cast<RankedTensorType>(ix.getType());
    if (nt.getRank() != 3)
      return op.emitOpError() << "'" << numName
                              << "' must have rank 3 ([B, Hq, QB]), got " << nt;
    if (it.getRank() != 4)
      return op.emitOpError() << "'" << idxName
                              << "' must have rank 4 ([B, Hq, QB, N]), got "
                              << it;
    auto got = nt.getShape();
    bool ok = (got[0] == 1 || compatible(got[0], sz.batch)) &&
              (got[1] == 1 || compatible(got[1], sz.headsQ)) &&
              compatible(got[2], qBlocks);
    if (!ok) {
      auto diag = op.emitOpError()
                  << "'" << numName << "' must have shape "
                  << shapeStr({sz.batch, sz.headsQ, qBlocks})
                  << " ([B, Hq, QB], B and Hq may be 1; QB = ceil(Sq / BQ)";
      if (qBlocks != kDyn)
        diag << " = ceil(" << sz.seqQ << " / " << bq << ")";
      return diag << "), got " << shapeStr(got);
    }
    auto gotIdx = it.getShape();
    if (!compatibleShape(gotIdx.take_front(3), got))
      return op.emitOpError()
             << "'" << idxName << "' must have shape "
             << shapeStr({got[0], got[1], got[2], kDyn})
             << " ([B, Hq, QB, N] with the B, Hq, QB of '" << numName
             << "'), got " << shapeStr(gotIdx);
    return success();
  };
  if (failed(listPair("kv_num_blocks", num, "kv_indices", idx)) ||
      (fullNum && failed(listPair("full_kv_num_blocks", fullNum,
                                  "full_kv_indices", fullIdx))))
    return failure();
  // Each refusal names the combination no lowering serves yet.
  if (op.getCuSeqlensQ() || op.getCuSeqlensK())
    return op.emitOpError() << "block_sparse with varlen is not supported yet "
                               "(the lists would be per packed sequence)";
  if (op.getMask())
    return op.emitOpError()
           << "block_sparse with a 'mask' operand is not supported yet "
              "(express the mask as mask_mod)";
  auto variant = cast<AttentionVariantInterface>(op.getOperation());
  if (isa<Float8E4M3FNType, Float8E5M2Type>(
          getElementTypeOrSelf(variant.getQKV()[0])))
    return op.emitOpError() << "block_sparse with FP8 operands is not "
                               "supported yet";
  return success();
}

/// ALiBi's slopes (FlashOps.td): f32 [Hq] or [B, Hq], B the batch or, with
/// varlen, the number of packed sequences; not with FP8 operands.
template <typename OpT>
static LogicalResult verifyAlibi(OpT op, const AttentionSizes &sz) {
  Value slopes = op.getAlibiSlopes();
  if (!slopes)
    return success();
  auto variant = cast<AttentionVariantInterface>(op.getOperation());
  if (isa<Float8E4M3FNType, Float8E5M2Type>(
          getElementTypeOrSelf(variant.getQKV()[0])))
    return op.emitOpError() << "'alibi_slopes' with FP8 operands is not "
                               "supported yet";
  auto shape = cast<RankedTensorType>(slopes.getType()).getShape();
  int64_t batch = sz.batch;
  if (Value cuQ = op.getCuSeqlensQ()) {
    int64_t n = cast<RankedTensorType>(cuQ.getType()).getDimSize(0);
    batch = n == kDyn ? kDyn : n - 1;
  }
  bool ok = shape.size() == 1 ? compatibleShape(shape, {sz.headsQ})
            : shape.size() == 2 ? compatibleShape(shape, {batch, sz.headsQ})
                                : false;
  if (!ok)
    return op.emitOpError()
           << "'alibi_slopes' must be [Hq] = " << shapeStr({sz.headsQ})
           << " or [B, Hq] = " << shapeStr({batch, sz.headsQ})
           << (op.getCuSeqlensQ() ? " (B: the packed sequences)" : "")
           << ", got " << shapeStr(shape);
  return success();
}

LogicalResult AttentionOp::verify() {
  VariantVerifier v{*this, cast<AttentionVariantInterface>(getOperation())};
  if (failed(v.verify()) || failed(verifyAttentionFp8(*this, v.sz)) ||
      failed(verifyVarlen(*this, v.sz)) ||
      failed(verifyBlockSparse(*this, v.sz)) || failed(verifyAlibi(*this, v.sz)) ||
      failed(v.verifyOutputLike("output", getOutput(), /*allowF32=*/true)))
    return failure();
  if (getLse())
    return v.verifyLse("lse", getLse());
  return success();
}

LogicalResult AttentionOp::verifyRegions() { return ::verifyRegions(*this); }

LogicalResult AttentionGradOp::verify() {
  if (failed(refuseFp8(*this,
                       {{"query", getQuery()}, {"key", getKey()},
                        {"value", getValue()}},
                       "flash.attention_grad has no FP8 form (FP8 attention "
                       "is forward-only, for inference)")))
    return failure();
  VariantVerifier v{*this, cast<AttentionVariantInterface>(getOperation())};
  if (failed(v.verify()) || failed(verifyVarlen(*this, v.sz)) ||
      failed(verifyBlockSparse(*this, v.sz)) || failed(verifyAlibi(*this, v.sz)) ||
      failed(v.verifyOutputLike("output", getOutput())) ||
      failed(v.verifySameType("grad_output", getGradOutput(), "output",
                              getOutput())) ||
      failed(v.verifyLse("lse", getLse())) ||
      failed(v.verifySameType("grad_query", getGradQuery(), "query",
                              getQuery())) ||
      failed(v.verifySameType("grad_key", getGradKey(), "key", getKey())) ||
      failed(v.verifySameType("grad_value", getGradValue(), "value",
                              getValue())))
    return failure();
  if (getGradBias()) {
    if (!getBias())
      return emitOpError() << "'grad_bias' is requested but there is no 'bias'";
    return v.verifySameType("grad_bias", getGradBias(), "bias", getBias());
  }
  return success();
}

LogicalResult AttentionGradOp::verifyRegions() { return ::verifyRegions(*this); }

namespace mlir::flash {
// flash.attention_kvcache's result types (AttentionKVCacheOp.cpp).
ParseResult parseKVCacheResultTypes(OpAsmParser &parser, Type keyNewType,
                                    Type &output, Type &lse, Type &keyCacheOut,
                                    Type &valueCacheOut);
void printKVCacheResultTypes(OpAsmPrinter &printer, Operation *op,
                             Type keyNewType, Type output, Type lse,
                             Type keyCacheOut, Type valueCacheOut);
} // namespace mlir::flash

#define GET_OP_CLASSES
#include "flashfuse/Dialect/Flash/IR/FlashOps.cpp.inc"
