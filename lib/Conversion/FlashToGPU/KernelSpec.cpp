//===- KernelSpec.cpp - the compiled-in part of an attention kernel -------===//
#include "flashfuse/Conversion/FlashToGPU/KernelSpec.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::flash;

std::string KernelSpec::dtypeName() const {
  return elementType.isBF16() ? "bf16" : "f16";
}

std::string KernelSpec::causalName() const {
  switch (causal) {
  case Causal::None:
    return "none";
  case Causal::TopLeft:
    return "top_left";
  case Causal::BottomRight:
    return "bottom_right";
  }
  llvm_unreachable("unknown causal alignment");
}

std::string KernelSpec::kernelName() const {
  std::string name = "flash_fwd_sm80_" + dtypeName() + "_d" +
                     std::to_string(headDim);
  if (headDimV != headDim)
    name += "_dv" + std::to_string(headDimV);
  name += "_m" + std::to_string(blockM) + "n" + std::to_string(blockN) + "w" +
          std::to_string(warps) + "s" + std::to_string(stages);
  if (causal == Causal::TopLeft)
    name += "_causal";
  if (causal == Causal::BottomRight)
    name += "_causalbr";
  if (window)
    name += "_window";
  if (softcap)
    name += "_softcap";
  if (bias)
    name += "_bias";
  if (mask)
    name += "_mask";
  if (uniqueId >= 0)
    name += "_mod" + std::to_string(uniqueId);
  return name;
}

SmallVector<std::string> KernelSpec::params() const {
  SmallVector<std::string> p = {"memref:q", "memref:k", "memref:v", "memref:o",
                                "memref:lse"};
  if (bias)
    p.push_back("memref:bias");
  if (mask)
    p.push_back("memref:mask");
  for (const char *n : {"batch", "heads_q", "heads_kv", "seq_q", "seq_k"})
    p.push_back(std::string("i32:") + n);
  for (const char *t : {"q", "k", "v", "o"})
    for (const char *d : {"b", "h", "s"})
      p.push_back(std::string("i64:") + t + "_stride_" + d);
  if (bias)
    for (const char *d : {"b", "h", "q", "k"})
      p.push_back(std::string("i64:bias_stride_") + d);
  if (mask)
    for (const char *d : {"b", "h", "q", "k"})
      p.push_back(std::string("i64:mask_stride_") + d);
  p.append({"f32:scale", "i32:window_left", "i32:window_right", "f32:softcap",
            "f32:dropout_p", "i64:seed"});
  return p;
}

bool KernelSpec::operator==(const KernelSpec &o) const {
  return elementType == o.elementType && headDim == o.headDim &&
         headDimV == o.headDimV && blockM == o.blockM && blockN == o.blockN &&
         warps == o.warps && stages == o.stages && causal == o.causal &&
         window == o.window && softcap == o.softcap && bias == o.bias &&
         mask == o.mask && uniqueId == o.uniqueId;
}

FailureOr<KernelSpec> mlir::flash::getKernelSpec(AttentionOp op) {
  auto iface = cast<AttentionVariantInterface>(op.getOperation());
  KernelConfigAttr config = iface.getKernelConfig();
  if (!config)
    return op.emitOpError()
           << "has no kernel config; run flash-select-config first";
  if (config.getRecipe() != Recipe::Sm80)
    return op.emitOpError() << "recipe '"
                            << stringifyRecipe(config.getRecipe())
                            << "' has no GPU lowering yet; only sm80 does";
  KernelSpec s;
  s.elementType = getElementTypeOrSelf(op.getQuery().getType());
  if (!s.elementType.isF16() && !s.elementType.isBF16())
    return op.emitOpError() << "the sm80 recipe needs f16 or bf16 operands, got "
                            << s.elementType;
  AttentionSizes sz = iface.getSizes();
  s.headDim = sz.d;
  s.headDimV = sz.dv;
  if (!llvm::is_contained({32, 64, 96, 128, 256}, s.headDim) ||
      s.headDimV != s.headDim)
    return op.emitOpError()
           << "the sm80 recipe supports D = Dv in {32, 64, 96, 128, 256}, got D = "
           << s.headDim << ", Dv = " << s.headDimV;
  for (auto [name, perm] :
       {std::pair<StringRef, SmallVector<int64_t, 4>>{"query", iface.getQueryPerm()},
        {"key", iface.getKeyPerm()},
        {"value", iface.getValuePerm()}})
    if (perm[3] != 3)
      return op.emitOpError() << "'" << name
                              << "' must keep the head dim innermost for the "
                                 "GPU recipe (perm[3] == 3)";
  s.blockM = config.getBlockM();
  s.blockN = config.getBlockN();
  s.warps = config.getWarps();
  s.stages = config.getStages();
  if (s.blockM % (16 * s.warps) != 0 || s.blockN % 16 != 0)
    return op.emitOpError() << "config block_m = " << s.blockM
                            << " must be a multiple of 16 * warps ("
                            << 16 * s.warps << ") and block_n = " << s.blockN
                            << " of 16";
  if (iface.isCausal())
    s.causal = iface.isBottomRightAligned() ? KernelSpec::Causal::BottomRight
                                            : KernelSpec::Causal::TopLeft;
  s.window = iface.getWindowLeftSize() || iface.getWindowRightSize();
  s.softcap = iface.getSoftcapValue().has_value();
  s.bias = static_cast<bool>(op.getBias());
  s.mask = static_cast<bool>(op.getMask());
  if (iface.hasDropout())
    return op.emitOpError()
           << "dropout has no GPU lowering yet (it needs the Philox generator "
              "shared with the backward kernels)";
  for (Region *r : {&op.getScoreMod(), &op.getMaskMod()}) {
    if (r->empty())
      continue;
    bool capturesValues = false;
    r->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (!r->isAncestor(v.getParentRegion()))
          capturesValues = true;
    });
    if (capturesValues)
      return op.emitOpError()
             << "a score_mod or mask_mod that reads values from outside its "
                "region cannot be compiled into a kernel yet";
  }
  if (!op.getScoreMod().empty())
    s.scoreMod = &op.getScoreMod();
  if (!op.getMaskMod().empty())
    s.maskMod = &op.getMaskMod();
  return s;
}
