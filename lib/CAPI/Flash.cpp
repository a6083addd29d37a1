//===- Flash.cpp - C API for the flash dialect ----------------------------===//
//
// Every entry point checks its handles first: a C caller has no exceptions
// and no asserts to catch, so a null handle or an op of another kind must
// come back as failure / null rather than reach an unchecked cast.
//
//===----------------------------------------------------------------------===//
#include "flashfuse-c/Dialect/Flash.h"

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::flash;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Flash, flash, mlir::flash::FlashDialect)

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

bool flashAttributeIsACausal(MlirAttribute attr) {
  return !mlirAttributeIsNull(attr) && isa<CausalAlignmentAttr>(unwrap(attr));
}

MlirAttribute flashCausalAttrGet(MlirContext ctx,
                                 FlashCausalAlignment alignment) {
  // The enumerators mirror CausalAlignment's values; anything else (a C enum
  // accepts any int) has no attribute.
  std::optional<CausalAlignment> value =
      symbolizeCausalAlignment(static_cast<uint32_t>(alignment));
  if (mlirContextIsNull(ctx) || !value)
    return MlirAttribute{nullptr};
  return wrap(CausalAlignmentAttr::get(unwrap(ctx), *value));
}

MlirLogicalResult flashCausalAttrGetValue(MlirAttribute attr,
                                          FlashCausalAlignment *alignment) {
  if (!flashAttributeIsACausal(attr) || !alignment)
    return mlirLogicalResultFailure();
  *alignment = static_cast<FlashCausalAlignment>(
      cast<CausalAlignmentAttr>(unwrap(attr)).getValue());
  return mlirLogicalResultSuccess();
}

bool flashAttributeIsAKernelConfig(MlirAttribute attr) {
  return !mlirAttributeIsNull(attr) && isa<KernelConfigAttr>(unwrap(attr));
}

MlirAttribute flashKernelConfigAttrGet(MlirContext ctx,
                                       FlashKernelConfig config) {
  std::optional<Recipe> recipe =
      symbolizeRecipe(static_cast<uint32_t>(config.recipe));
  if (mlirContextIsNull(ctx))
    return MlirAttribute{nullptr};
  MLIRContext *context = unwrap(ctx);
  auto emitError = [context] { return mlir::emitError(UnknownLoc::get(context)); };
  if (!recipe) {
    emitError() << "flashKernelConfigAttrGet: unknown recipe "
                << static_cast<int>(config.recipe);
    return MlirAttribute{nullptr};
  }
  // getChecked runs the attribute's verifier and reports through the
  // context's diagnostic handlers instead of asserting.
  return wrap(KernelConfigAttr::getChecked(
      emitError, context, *recipe, config.blockM, config.blockN, config.warps,
      config.stages, config.splits));
}

MlirLogicalResult flashKernelConfigAttrGetValue(MlirAttribute attr,
                                                FlashKernelConfig *config) {
  if (!flashAttributeIsAKernelConfig(attr) || !config)
    return mlirLogicalResultFailure();
  auto a = cast<KernelConfigAttr>(unwrap(attr));
  *config = {static_cast<FlashRecipe>(a.getRecipe()),
             a.getBlockM(),
             a.getBlockN(),
             a.getWarps(),
             a.getStages(),
             a.getSplits()};
  return mlirLogicalResultSuccess();
}

bool flashAttributeIsATarget(MlirAttribute attr) {
  return !mlirAttributeIsNull(attr) && isa<TargetAttr>(unwrap(attr));
}

MlirAttribute flashTargetAttrGet(MlirContext ctx, FlashTarget target) {
  if (mlirContextIsNull(ctx) || (!target.name.data && target.name.length))
    return MlirAttribute{nullptr};
  MLIRContext *context = unwrap(ctx);
  auto emitError = [context] { return mlir::emitError(UnknownLoc::get(context)); };
  return wrap(TargetAttr::getChecked(emitError, context, unwrap(target.name),
                                     target.arch, target.sms,
                                     target.smemPerBlock, target.regsPerSm));
}

MlirLogicalResult flashTargetAttrGetValue(MlirAttribute attr,
                                          FlashTarget *target) {
  if (!flashAttributeIsATarget(attr) || !target)
    return mlirLogicalResultFailure();
  auto a = cast<TargetAttr>(unwrap(attr));
  *target = {wrap(a.getName()), a.getArch(), a.getSms(), a.getSmemPerBlock(),
             a.getRegsPerSm()};
  return mlirLogicalResultSuccess();
}

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

template <typename OpTy>
static bool isOp(MlirOperation op) {
  return !mlirOperationIsNull(op) && isa<OpTy>(unwrap(op));
}

bool flashOperationIsAAttention(MlirOperation op) {
  return isOp<AttentionOp>(op);
}
bool flashOperationIsAAttentionGrad(MlirOperation op) {
  return isOp<AttentionGradOp>(op);
}
bool flashOperationIsAAttentionKVCache(MlirOperation op) {
  return isOp<AttentionKVCacheOp>(op);
}
bool flashOperationIsAAttentionVariant(MlirOperation op) {
  return isOp<AttentionVariantInterface>(op);
}

/// The variant interface of `op`, or null when `op` is null or another op.
static AttentionVariantInterface variantOf(MlirOperation op) {
  if (mlirOperationIsNull(op))
    return nullptr;
  return dyn_cast<AttentionVariantInterface>(unwrap(op));
}

/// Writes `value` to `out` when both exist.
template <typename T, typename U>
static MlirLogicalResult store(const std::optional<U> &value, T *out) {
  if (!value || !out)
    return mlirLogicalResultFailure();
  *out = static_cast<T>(*value);
  return mlirLogicalResultSuccess();
}

/// The ops must have Q, K, V of rank 4 for their sizes to mean anything; a
/// parsed op that was never verified may not.
static bool hasRank4Operands(AttentionVariantInterface iface) {
  for (Value v : iface.getQKV()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || t.getRank() != 4)
      return false;
  }
  return true;
}

MlirLogicalResult flashAttentionGetSizes(MlirOperation op,
                                         FlashAttentionSizes *sizes) {
  AttentionVariantInterface iface = variantOf(op);
  if (!iface || !sizes || !hasRank4Operands(iface))
    return mlirLogicalResultFailure();
  AttentionSizes s = iface.getSizes();
  *sizes = {s.batch, s.headsQ, s.headsKV, s.seqQ, s.seqK, s.d, s.dv};
  return mlirLogicalResultSuccess();
}

MlirLogicalResult flashAttentionGetEffectiveScale(MlirOperation op,
                                                  double *scale) {
  AttentionVariantInterface iface = variantOf(op);
  if (!iface || !scale)
    return mlirLogicalResultFailure();
  // 1/sqrt(D) of a dynamic D would be a number computed from kDynamic.
  if (!iface->hasAttr("scale") &&
      (!hasRank4Operands(iface) || ShapedType::isDynamic(iface.getSizes().d)))
    return mlirLogicalResultFailure();
  *scale = iface.getEffectiveScale();
  return mlirLogicalResultSuccess();
}

MlirLogicalResult flashAttentionGetCausal(MlirOperation op,
                                          FlashCausalAlignment *alignment) {
  AttentionVariantInterface iface = variantOf(op);
  if (!iface)
    return mlirLogicalResultFailure();
  return flashCausalAttrGetValue(wrap(iface->getAttr("causal")), alignment);
}

MlirLogicalResult flashAttentionGetWindowLeft(MlirOperation op,
                                              int64_t *windowLeft) {
  AttentionVariantInterface iface = variantOf(op);
  return iface ? store(iface.getWindowLeftSize(), windowLeft)
               : mlirLogicalResultFailure();
}

MlirLogicalResult flashAttentionGetWindowRight(MlirOperation op,
                                               int64_t *windowRight) {
  AttentionVariantInterface iface = variantOf(op);
  return iface ? store(iface.getWindowRightSize(), windowRight)
               : mlirLogicalResultFailure();
}

MlirLogicalResult flashAttentionGetSoftcap(MlirOperation op, double *softcap) {
  AttentionVariantInterface iface = variantOf(op);
  return iface ? store(iface.getSoftcapValue(), softcap)
               : mlirLogicalResultFailure();
}

MlirLogicalResult flashAttentionGetDropoutP(MlirOperation op,
                                            double *dropoutP) {
  AttentionVariantInterface iface = variantOf(op);
  return iface ? store(std::optional<double>(iface.getDropoutProbability()),
                       dropoutP)
               : mlirLogicalResultFailure();
}

MlirAttribute flashAttentionGetKernelConfig(MlirOperation op) {
  AttentionVariantInterface iface = variantOf(op);
  return wrap(iface ? Attribute(iface.getKernelConfig()) : Attribute());
}

MlirValue flashAttentionGetBias(MlirOperation op) {
  AttentionVariantInterface iface = variantOf(op);
  return wrap(iface ? iface.getBiasOperand() : Value());
}
MlirValue flashAttentionGetMask(MlirOperation op) {
  AttentionVariantInterface iface = variantOf(op);
  return wrap(iface ? iface.getMaskOperand() : Value());
}
MlirValue flashAttentionGetSeed(MlirOperation op) {
  AttentionVariantInterface iface = variantOf(op);
  return wrap(iface ? iface.getSeedOperand() : Value());
}
bool flashAttentionHasScoreMod(MlirOperation op) {
  AttentionVariantInterface iface = variantOf(op);
  return iface && !iface.getScoreModRegion().empty();
}
bool flashAttentionHasMaskMod(MlirOperation op) {
  AttentionVariantInterface iface = variantOf(op);
  return iface && !iface.getMaskModRegion().empty();
}

MlirOperation flashAttentionCreate(MlirLocation loc, MlirValue query,
                                   MlirValue key, MlirValue value,
                                   MlirValue bias, MlirValue mask,
                                   MlirValue seed, bool withLse,
                                   intptr_t nAttributes,
                                   const MlirNamedAttribute *attributes) {
  if (mlirLocationIsNull(loc) || mlirValueIsNull(query) ||
      mlirValueIsNull(key) || mlirValueIsNull(value) ||
      (nAttributes > 0 && !attributes) || nAttributes < 0)
    return MlirOperation{nullptr};
  Location location = unwrap(loc);
  Value q = unwrap(query), k = unwrap(key), v = unwrap(value);
  for (auto [name, operand] : {std::pair{"query", q}, {"key", k}, {"value", v}}) {
    auto t = dyn_cast<RankedTensorType>(operand.getType());
    if (!t || t.getRank() != 4) {
      emitError(location) << "flashAttentionCreate: '" << name
                          << "' must be a ranked tensor of rank 4, got "
                          << operand.getType();
      return MlirOperation{nullptr};
    }
  }

  NamedAttrList attrs;
  for (intptr_t i = 0; i < nAttributes; ++i) {
    if (mlirAttributeIsNull(attributes[i].attribute) ||
        !attributes[i].name.ptr) {
      emitError(location) << "flashAttentionCreate: attribute " << i
                          << " has a null name or value";
      return MlirOperation{nullptr};
    }
    attrs.set(unwrap(attributes[i].name), unwrap(attributes[i].attribute));
  }

  // The output is logical [B, Hq, Sq, Dv] in the layout of the query, as the
  // verifier expects; the perms are read from the attributes given, and
  // must be permutations of 0..3 before getAttentionSizes indexes with them.
  SmallVector<SmallVector<int64_t, 4>, 3> perms;
  for (StringRef name : {"q_perm", "k_perm", "v_perm"}) {
    Attribute a = attrs.get(name);
    if (a && !isa<DenseI64ArrayAttr>(a)) {
      emitError(location) << "flashAttentionCreate: '" << name
                          << "' must be an array<i64>, got " << a;
      return MlirOperation{nullptr};
    }
    SmallVector<int64_t, 4> p =
        permOrIdentity(dyn_cast_if_present<DenseI64ArrayAttr>(a));
    SmallVector<int64_t, 4> sorted(p);
    llvm::sort(sorted);
    if (sorted != SmallVector<int64_t, 4>{0, 1, 2, 3}) {
      emitError(location) << "flashAttentionCreate: '" << name
                          << "' must be a permutation of 0, 1, 2, 3";
      return MlirOperation{nullptr};
    }
    perms.push_back(std::move(p));
  }
  AttentionSizes sz = getAttentionSizes(q.getType(), k.getType(), v.getType(),
                                        perms[0], perms[1], perms[2]);
  auto queryType = cast<RankedTensorType>(q.getType());
  SmallVector<Type, 2> resultTypes = {RankedTensorType::get(
      applyPerm({sz.batch, sz.headsQ, sz.seqQ, sz.dv}, perms[0]),
      queryType.getElementType())};
  if (withLse)
    resultTypes.push_back(
        RankedTensorType::get({sz.batch, sz.headsQ, sz.seqQ},
                              Float32Type::get(location.getContext())));

  OpBuilder builder(location.getContext());
  auto op = AttentionOp::create(
      builder, location, resultTypes, q, k, v, unwrap(bias), unwrap(mask),
      unwrap(seed), /*cu_seqlens_q=*/Value(), /*cu_seqlens_k=*/Value(),
      /*q_descale=*/Value(), /*k_descale=*/Value(), /*v_descale=*/Value(),
      /*kv_num_blocks=*/Value(), /*kv_indices=*/Value(),
      /*full_kv_num_blocks=*/Value(), /*full_kv_indices=*/Value(),
      /*alibi_slopes=*/Value(),
      /*scale=*/nullptr, /*causal=*/nullptr,
      /*window_left=*/nullptr, /*window_right=*/nullptr, /*softcap=*/nullptr,
      /*dropout_p=*/nullptr, /*q_perm=*/nullptr, /*k_perm=*/nullptr,
      /*v_perm=*/nullptr, /*config=*/nullptr,
      /*sparse_block_size=*/nullptr,
      /*descale_block_size=*/nullptr);
  // An inherent attribute of the wrong kind (causal = "yes") would be
  // dropped silently by the property setter; say so instead.
  for (const NamedAttribute &a : attrs) {
    op->setAttr(a.getName(), a.getValue());
    if (op->getAttr(a.getName()) != a.getValue()) {
      emitError(location) << "flashAttentionCreate: attribute '"
                          << a.getName().strref() << "' has the wrong kind: "
                          << a.getValue();
      op->erase();
      return MlirOperation{nullptr};
    }
  }
  // Report an ill-formed variant now, with the verifier's message, rather
  // than let it surface later in whatever pass first reads it.
  if (failed(verify(op))) {
    op->erase();
    return MlirOperation{nullptr};
  }
  return wrap(op.getOperation());
}
