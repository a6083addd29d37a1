//===- FlashInterfaces.td - what every attention op shares -*- tablegen -*-===//
#ifndef FLASHFUSE_DIALECT_FLASH_IR_FLASHINTERFACES_TD
#define FLASHFUSE_DIALECT_FLASH_IR_FLASHINTERFACES_TD

include "mlir/IR/OpBase.td"

// The forward and the backward op carry the same variant (scale, masks,
// layouts, regions); passes read it through this interface so that masking,
// scaling and layout code is written once.
def Flash_AttentionVariantInterface : OpInterface<"AttentionVariantInterface"> {
  let cppNamespace = "::mlir::flash";
  let description = [{
    Read access to the attention variant shared by `flash.attention` and
    `flash.attention_grad`: logical sizes, the effective scale, masks,
    layouts and the optional `score_mod` / `mask_mod` regions.
  }];
  let methods = [
    InterfaceMethod<"Q, K and V, in that order", "::llvm::SmallVector<::mlir::Value, 3>",
      "getQKV", (ins), [{ return {$_op.getQuery(), $_op.getKey(), $_op.getValue()}; }]>,
    InterfaceMethod<"optional additive bias", "::mlir::Value", "getBiasOperand",
      (ins), [{ return $_op.getBias(); }]>,
    InterfaceMethod<"optional boolean mask (true = keep)", "::mlir::Value",
      "getMaskOperand", (ins), [{ return $_op.getMask(); }]>,
    InterfaceMethod<"optional dropout seed", "::mlir::Value", "getSeedOperand",
      (ins), [{ return $_op.getSeed(); }]>,
    InterfaceMethod<"the score_mod region (may be empty)", "::mlir::Region &",
      "getScoreModRegion", (ins), [{ return $_op.getScoreMod(); }]>,
    InterfaceMethod<"the mask_mod region (may be empty)", "::mlir::Region &",
      "getMaskModRegion", (ins), [{ return $_op.getMaskMod(); }]>,
    InterfaceMethod<"optional ALiBi slopes (f32 [Hq] or [B, Hq])",
      "::mlir::Value", "getAlibiOperand", (ins),
      [{ return $_op.getAlibiSlopes(); }]>,
    InterfaceMethod<[{the block-sparse lists and block sizes (null operands
      where the op is dense)}], "::mlir::flash::BlockSparseOperands",
      "getBlockSparse", (ins), [{
        ::mlir::flash::BlockSparseOperands bs;
        bs.numBlocks = $_op.getKvNumBlocks();
        bs.indices = $_op.getKvIndices();
        bs.fullNumBlocks = $_op.getFullKvNumBlocks();
        bs.fullIndices = $_op.getFullKvIndices();
        if (auto size = $_op.getSparseBlockSizeAttr();
            size && size.size() == 2) {
          bs.blockQ = size[0];
          bs.blockK = size[1];
        }
        return bs;
      }]>,
  ];
  // Written against the generic Operation so that it works both in the
  // interface and in the op (attribute names are those of FlashOps.td).
  let extraSharedClassDeclaration = [{
    /// Logical sizes [B, Hq, Hkv, Sq, Sk, D, Dv]; dynamic sizes are
    /// ShapedType::kDynamic.
    ::mlir::flash::AttentionSizes getSizes() {
      auto qkv = $_op.getQKV();
      return ::mlir::flash::getAttentionSizes(qkv[0].getType(),
          qkv[1].getType(), qkv[2].getType(), getQueryPerm(), getKeyPerm(),
          getValuePerm());
    }
    /// `scale` when present, else 1/sqrt(D) (D must then be static).
    double getEffectiveScale() {
      if (auto s = $_op->template getAttrOfType<::mlir::FloatAttr>("scale"))
        return s.getValueAsDouble();
      return 1.0 / std::sqrt(double(getSizes().d));
    }
    /// Operand dimension of each logical dimension (B, H, S, D).
    ::llvm::SmallVector<int64_t, 4> getQueryPerm() { return getPerm("q_perm"); }
    ::llvm::SmallVector<int64_t, 4> getKeyPerm() { return getPerm("k_perm"); }
    ::llvm::SmallVector<int64_t, 4> getValuePerm() { return getPerm("v_perm"); }
    ::llvm::SmallVector<int64_t, 4> getPerm(::llvm::StringRef name) {
      return ::mlir::flash::permOrIdentity(
          $_op->template getAttrOfType<::mlir::DenseI64ArrayAttr>(name));
    }
    bool isCausal() { return $_op->hasAttr("causal"); }
    /// True when the diagonal sits at j == i + (Sk - Sq) (causal
    /// bottom-right); otherwise at j == i.
    bool isBottomRightAligned() {
      auto c = $_op->template getAttrOfType<::mlir::flash::CausalAlignmentAttr>("causal");
      return c && c.getValue() == ::mlir::flash::CausalAlignment::BottomRight;
    }
    std::optional<int64_t> getWindowLeftSize() { return getIntAttr("window_left"); }
    std::optional<int64_t> getWindowRightSize() { return getIntAttr("window_right"); }
    std::optional<double> getSoftcapValue() { return getFloatAttr("softcap"); }
    double getDropoutProbability() {
      return getFloatAttr("dropout_p").value_or(0.0);
    }
    bool hasDropout() { return getDropoutProbability() > 0.0; }
    ::mlir::flash::KernelConfigAttr getKernelConfig() {
      return $_op->template getAttrOfType<::mlir::flash::KernelConfigAttr>("config");
    }
    std::optional<int64_t> getIntAttr(::llvm::StringRef name) {
      if (auto a = $_op->template getAttrOfType<::mlir::IntegerAttr>(name))
        return a.getInt();
      return std::nullopt;
    }
    std::optional<double> getFloatAttr(::llvm::StringRef name) {
      if (auto a = $_op->template getAttrOfType<::mlir::FloatAttr>(name))
        return a.getValueAsDouble();
      return std::nullopt;
    }
  }];
}

#endif // FLASHFUSE_DIALECT_FLASH_IR_FLASHINTERFACES_TD
