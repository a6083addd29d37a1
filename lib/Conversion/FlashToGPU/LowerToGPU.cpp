//===- LowerToGPU.cpp - flash.attention to a generated kernel + launch ----===//
//
// For every flash.attention: derive its KernelSpec, build (once per distinct
// spec) a gpu.func in the `flash_kernels` gpu.module with the recipe's
// builder, and replace the op on the host by a gpu.launch_func over its
// operands' buffers (HostLaunches.cpp). Each kernel carries a
// `flash.manifest` dictionary that flashfuse-compile turns into the
// artifact's manifest.txt.
//
//===----------------------------------------------------------------------===//
#include "HostLaunches.h"
#include "ModCaptures.h"
#include "Recipes.h"

#include "flashfuse/Conversion/FlashToGPU/KernelSpec.h"
#include "flashfuse/Dialect/Flash/IR/KVCacheKernels.h"
#include "flashfuse/decode_splits.h"
#include "flashfuse/fp8_vt_layout.h"
#include "flashfuse/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::flash {
#define GEN_PASS_DEF_FLASHLOWERTOGPU
#include "flashfuse/Conversion/Passes.h.inc"
} // namespace mlir::flash

using namespace mlir;
using namespace mlir::flash;

static constexpr StringLiteral kKernelModuleName = "flash_kernels";

/// The manifest fields of docs/KERNEL_ABI.md, attached to the kernel.
static DictionaryAttr buildManifestAttr(Builder &b, const KernelSpec &s) {
  SmallVector<Attribute> params;
  for (const std::string &p : s.params())
    params.push_back(b.getStringAttr(p));
  SmallVector<NamedAttribute> f = {
      b.getNamedAttr("kind", b.getStringAttr(s.kindName())),
      b.getNamedAttr("dtype", b.getStringAttr(s.dtypeName())),
      b.getNamedAttr("head_dim", b.getI64IntegerAttr(s.headDim)),
      b.getNamedAttr("head_dim_v", b.getI64IntegerAttr(s.headDimV)),
      b.getNamedAttr("block_m", b.getI64IntegerAttr(s.blockM)),
      b.getNamedAttr("block_n", b.getI64IntegerAttr(s.blockN)),
      b.getNamedAttr("threads", b.getI64IntegerAttr(s.threads())),
      b.getNamedAttr("smem", b.getI64IntegerAttr(s.smemBytes())),
      b.getNamedAttr("causal", b.getStringAttr(s.causalName())),
      b.getNamedAttr("window", b.getI64IntegerAttr(s.window)),
      b.getNamedAttr("softcap", b.getI64IntegerAttr(s.softcap)),
      b.getNamedAttr("bias", b.getI64IntegerAttr(s.bias)),
      b.getNamedAttr("mask", b.getI64IntegerAttr(s.mask)),
      b.getNamedAttr("dropout", b.getI64IntegerAttr(s.dropout))};
  // Decode kernels name their cache's page size (0: contiguous); no other
  // kernel has the key, so their manifests read as before.
  if (s.kind == KernelSpec::Kind::Decode ||
      s.kind == KernelSpec::Kind::KVAppend ||
      s.kind == KernelSpec::Kind::DecodeCheck)
    f.push_back(b.getNamedAttr("page_size", b.getI64IntegerAttr(s.pageSize)));
  // Decode kernels that can merge their splits inside a thread-block
  // cluster (sm_90+) say how many; the others' manifests read as before.
  if (int64_t n = s.clusterMergeSplits())
    f.push_back(b.getNamedAttr("cluster_merge", b.getI64IntegerAttr(n)));
  // Decode kernels of an FP8 cache name its dtype (Q's is `dtype`); the
  // 16-bit ones have no key, so their manifests read as before.
  if (s.fp8Cache)
    f.push_back(b.getNamedAttr("kv_dtype", b.getStringAttr("e4m3")));
  // Likewise a decode over a left-padded cache (its param cache_leftpad).
  if (s.leftPad)
    f.push_back(b.getNamedAttr("leftpad", b.getI64IntegerAttr(1)));
  // And one with ALiBi (its param alibi_slopes: 1 [Hq], 2 [B, Hq]).
  if (s.alibi)
    f.push_back(b.getNamedAttr("alibi", b.getI64IntegerAttr(s.alibi)));
  // Likewise decode and kv_append kernels over a pool of sequences (their
  // params cache_batch_idx and cache_batch).
  if (s.cacheBatchIdx)
    f.push_back(b.getNamedAttr("batch_idx", b.getI64IntegerAttr(1)));
  // And a kv_append that rotates (its params q, q_rot, rotary_cos,
  // rotary_sin): launched by name, never for a variant.
  if (s.rotaryDim) {
    f.push_back(b.getNamedAttr("rotary_dim", b.getI64IntegerAttr(s.rotaryDim)));
    f.push_back(b.getNamedAttr("rotary_interleaved",
                               b.getI64IntegerAttr(s.rotaryInterleaved)));
    f.push_back(b.getNamedAttr("rotary_per_row",
                               b.getI64IntegerAttr(s.rotaryQueryRowsApart)));
  }
  // Likewise only a forward that writes O in f32 says so: the runtime looks
  // it up by this flag (flashfuse_variant::out_f32, 0 where absent).
  if (s.writesF32Output())
    f.push_back(b.getNamedAttr("out_f32", b.getI64IntegerAttr(1)));
  // FP8 forwards name O's dtype (dtype is the inputs' e4m3), and the group
  // of keys their Vᵀ is permuted within (fp8_vt_layout.h): the runtime
  // refuses e4m3 kernels without it, which read Vᵀ in natural order.
  if (s.isFp8()) {
    f.push_back(b.getNamedAttr(
        "out_dtype",
        b.getStringAttr(s.outputType().isBF16() ? "bf16" : "f16")));
    f.push_back(b.getNamedAttr(
        "vt_key_group", b.getI64IntegerAttr(FLASHFUSE_FP8_VT_KEY_GROUP)));
  }
  // Kernels that inline a score_mod or mask_mod compute what their op's
  // regions say, which no variant key tells: the runtime launches them by
  // name only, never for a variant (docs/KERNEL_ABI.md); the others'
  // manifests read as before.
  if (s.inlinesRegions())
    f.push_back(b.getNamedAttr("mods", b.getI64IntegerAttr(1)));
  // Kernels that inline a region reading values from above its op name
  // their types (docs/KERNEL_ABI.md "Values captured by score_mod and
  // mask_mod"); the others' manifests read as before.
  if (s.takesCaptures()) {
    SmallVector<Attribute> types;
    for (const std::string &t : captureManifestTypes(s.captures))
      types.push_back(b.getStringAttr(t));
    f.push_back(b.getNamedAttr("captures", b.getArrayAttr(types)));
  }
  // Packed-batch forwards say so; the others' manifests read as before.
  if (s.varlen)
    f.push_back(b.getNamedAttr("varlen", b.getI64IntegerAttr(1)));
  // Likewise block-sparse forwards: 1 with partial lists only, 2 with full
  // lists too (docs/KERNEL_ABI.md "Block-sparse"), and their block sizes.
  if (s.blockSparse) {
    f.push_back(b.getNamedAttr("block_sparse",
                               b.getI64IntegerAttr(s.fullBlocks ? 2 : 1)));
    f.push_back(b.getNamedAttr("sparse_block_q",
                               b.getI64IntegerAttr(s.sparseBlockQ)));
    f.push_back(b.getNamedAttr("sparse_block_k",
                               b.getI64IntegerAttr(s.sparseBlockK)));
  }
  // FP8 forwards with per-block descales, their block sizes (the runtime
  // matches them against the call's).
  if (s.blockDescales()) {
    f.push_back(b.getNamedAttr("descale_block_q",
                               b.getI64IntegerAttr(s.descaleBlockQ)));
    f.push_back(b.getNamedAttr("descale_block_k",
                               b.getI64IntegerAttr(s.descaleBlockK)));
  }
  // A persistent forward's grid is sized by the runtime from the GPU's SMs
  // (docs/KERNEL_ABI.md "Grids"); the others' manifests read as before.
  if (s.persistentGrid())
    f.push_back(b.getNamedAttr("grid", b.getStringAttr("persistent")));
  f.push_back(b.getNamedAttr("params", b.getArrayAttr(params)));
  return b.getDictionaryAttr(f);
}

namespace {

struct FlashLowerToGPU : flash::impl::FlashLowerToGPUBase<FlashLowerToGPU> {
  using FlashLowerToGPUBase::FlashLowerToGPUBase;

  void runOnOperation() override;

private:
  gpu::GPUModuleOp getOrCreateKernelModule();
  /// Raises the kernel module's PTX version where its kernels need it.
  void requirePtxForMmaSyncFp8(gpu::GPUModuleOp module);
  gpu::GPUFuncOp getOrCreateKernel(gpu::GPUModuleOp module,
                                   const KernelSpec &spec);

  SmallVector<std::pair<KernelSpec, gpu::GPUFuncOp>, 4> kernels;
  int64_t nextUniqueId = 0;
};

gpu::GPUModuleOp FlashLowerToGPU::getOrCreateKernelModule() {
  ModuleOp module = getOperation();
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName))
    return existing;
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(module.getContext()));
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  // PTX 8.1 for sm_90: the dQ reduction uses red.global.add.v2.f32. 8.0
  // elsewhere, which every driver that runs sm_80 code JITs (a module with
  // the mma.sync FP8 forward asks for 8.4: requirePtxForMmaSyncFp8).
  StringRef ptx = StringRef(chip).starts_with("sm_9") ? "+ptx81" : "+ptx80";
  auto target = NVVM::NVVMTargetAttr::get(module.getContext(), /*optLevel=*/3,
                                          "nvptx64-nvidia-cuda", chip, ptx);
  return gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName,
                                  b.getArrayAttr({target}));
}

gpu::GPUFuncOp FlashLowerToGPU::getOrCreateKernel(gpu::GPUModuleOp module,
                                                  const KernelSpec &spec) {
  for (auto &[known, func] : kernels)
    if (known == spec)
      return func;
  MLIRContext *ctx = module.getContext();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto type = FunctionType::get(ctx, getKernelArgumentTypes(ctx, spec), {});
  auto func = gpu::GPUFuncOp::create(b, module.getLoc(), spec.kernelName(), type);
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({int32_t(spec.threads()), 1, 1}));
  func->setAttr("flash.manifest", buildManifestAttr(b, spec));
  if (spec.usesTensorMaps()) {
    // setmaxnreg moves registers between the warpgroups only in a kernel
    // whose register count is capped at entry: one block per SM, of
    // threads() threads.
    func->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
    // The tensor maps are passed by value (flash-grid-constant-params).
    func->setAttr(kGridConstantParamsAttrName,
                  b.getI64IntegerAttr(spec.tensorMapCount()));
  }
  // The packed softcap backwards' shared addresses as link-time constants
  // (flash-align-dynamic-shared-memory): they spilled 8 (sm90) and 16
  // (sm90ws) bytes at the causal D = 128 kernels' register caps holding a
  // run-time base and the tile and descriptor addresses derived from it
  // across the query loop, and spill none so. Only those: the other wgmma
  // backwards ran 0.5-2% slower at D = 64 and the sm90 causal forwards 2-3%
  // (H200, docs/PERF.md runs 376-377), none of them spilling either way.
  if (spec.kind == KernelSpec::Kind::Backward && spec.usesWgmma() &&
      spec.varlen && spec.softcap)
    func->setAttr(kAlignedDynamicSharedAttrName, b.getUnitAttr());
  // ptxas held the sm80 D = 96 dropout forward to 128 registers and
  // spilled 4 bytes there; one block an SM lets it take what it needs (it
  // took 164 with a Philox draw per score).
  if (spec.kind == KernelSpec::Kind::Forward && spec.dropout &&
      spec.recipe == Recipe::Sm80)
    func->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
  // sm_90's 228 KiB per SM, the most of any target.
  constexpr int64_t kLargestSmemPerSm = 233472;
  if (spec.kind == KernelSpec::Kind::Decode && spec.smemBytes() > 0)
    // As many blocks per SM as run at once on any target (their shared
    // memory, their registers at Dv > 80), and no more: ptxas need not
    // keep registers for others, and otherwise spilled the merge of the
    // splits to stay at 168 (D = 128, one block an SM) or 128 (D = 64,
    // two).
    func->setAttr("nvvm.minctasm",
                  b.getI32IntegerAttr(flashfuse_decode_blocks_per_sm(
                      kLargestSmemPerSm, spec.smemBytes(), spec.headDimV)));
  switch (spec.kind) {
  case KernelSpec::Kind::Forward:
    if (spec.recipe == Recipe::Sm90Ws && spec.isFp8())
      buildSm90Fp8ForwardKernel(func, spec);
    else if (spec.recipe == Recipe::Sm90Ws)
      buildSm90WsForwardKernel(func, spec);
    else if (spec.recipe == Recipe::Sm90)
      buildSm90ForwardKernel(func, spec);
    else if (spec.isFp8())
      buildSm80Fp8ForwardKernel(func, spec);
    else
      buildSm80ForwardKernel(func, spec);
    break;
  case KernelSpec::Kind::BackwardPreprocess:
    buildSm80BackwardPreprocessKernel(func, spec);
    break;
  case KernelSpec::Kind::Backward:
    if (spec.recipe == Recipe::Sm90Ws)
      buildSm90WsBackwardKernel(func, spec);
    else if (spec.recipe == Recipe::Sm90)
      buildSm90BackwardKernel(func, spec);
    else
      buildSm80BackwardKernel(func, spec);
    break;
  case KernelSpec::Kind::BackwardDQ:
    buildSm80BackwardDQKernel(func, spec);
    break;
  case KernelSpec::Kind::BackwardPostprocess:
    buildSm80BackwardPostprocessKernel(func, spec);
    break;
  case KernelSpec::Kind::Decode:
    buildSm80DecodeKernel(func, spec);
    break;
  case KernelSpec::Kind::DecodeCombine:
    buildDecodeCombineKernel(func, spec);
    break;
  case KernelSpec::Kind::KVAppend:
    buildKVAppendKernel(func, spec);
    break;
  case KernelSpec::Kind::DecodeCheck:
    buildDecodeCheckKernel(func, spec);
    break;
  case KernelSpec::Kind::BackwardSparseTranspose:
    buildBlockSparseTransposeKernel(func, spec);
    break;
  }
  kernels.push_back({spec, func});
  return func;
}

void FlashLowerToGPU::runOnOperation() {
  SmallVector<AttentionOp> ops;
  SmallVector<AttentionGradOp> gradOps;
  SmallVector<AttentionKVCacheOp> kvOps;
  getOperation().walk([&](AttentionOp op) { ops.push_back(op); });
  getOperation().walk([&](AttentionGradOp op) { gradOps.push_back(op); });
  getOperation().walk([&](AttentionKVCacheOp op) { kvOps.push_back(op); });
  if (ops.empty() && gradOps.empty() && kvOps.empty())
    return;
  // Check every op first so that a failure leaves the module untouched.
  SmallVector<KernelSpec, 4> specs, gradSpecs, kvSpecs;
  bool refused = false;
  auto collect = [&](FailureOr<KernelSpec> spec, SmallVector<KernelSpec, 4> &out) {
    if (failed(spec)) {
      refused = true;
      return;
    }
    if (spec->scoreMod || spec->maskMod)
      spec->uniqueId = nextUniqueId++;
    // "sm_90" -> 90; an unparsable chip keeps the sm_80 baseline.
    StringRef digits = StringRef(chip).drop_front(3).take_while(llvm::isDigit);
    (void)digits.getAsInteger(10, spec->arch);
    out.push_back(*spec);
  };
  // A kernel must fit the chip's shared memory, or it would only fail at
  // launch: an explicit config is not fitted by flash-select-config.
  auto checkSharedMemory = [&](Operation *op, const KernelSpec &spec) {
    int64_t limit = maxSharedMemoryPerBlock(spec.arch);
    if (refused || spec.smemBytes() <= limit)
      return;
    op->emitOpError() << "its " << spec.kindName() << " kernel needs "
                      << spec.smemBytes() << " bytes of shared memory, chip="
                      << chip << " has at most " << limit
                      << " a block: take fewer stages or smaller tiles";
    refused = true;
  };
  // wgmma exists only in the architecture-specific sm_90a.
  auto checkChip = [&](Operation *op, const SmallVector<KernelSpec, 4> &out) {
    if (refused)
      return;
    if (out.back().usesWgmma() && chip != "sm_90a") {
      op->emitOpError() << "recipe '" << stringifyRecipe(out.back().recipe)
                        << "' needs chip=sm_90a (wgmma), got chip=" << chip;
      refused = true;
    }
    checkSharedMemory(op, out.back());
  };
  for (AttentionOp op : ops) {
    collect(getKernelSpec(op), specs);
    checkChip(op, specs);
  }
  for (AttentionGradOp op : gradOps) {
    collect(getKernelSpec(op, deterministic), gradSpecs);
    checkChip(op, gradSpecs);
    if (!refused && gradSpecs.back().deterministic &&
        gradSpecs.back().recipe == Recipe::Sm80)
      checkSharedMemory(op, getBackwardStepSpec(gradSpecs.back(),
                                                KernelSpec::Kind::BackwardDQ));
  }
  for (AttentionKVCacheOp op : kvOps) {
    collect(getKernelSpec(op), kvSpecs);
    checkChip(op, kvSpecs);
    // The e4m3 conversions of the FP8-cache decode and append need sm_89+.
    if (!refused && kvSpecs.back().fp8Cache && kvSpecs.back().arch < 89) {
      op.emitOpError() << kFp8CacheNeedsSm89;
      refused = true;
    }
  }
  if (refused)
    return signalPassFailure();
  // An artifact holds one preprocess and one postprocess per runtime
  // variant key (the manifest's fields but the tiles), which the runtime
  // pairs with every main kernel of that variant: two gradients of one key
  // whose kernels lay out dQ's accumulator differently (KernelSpec::dqTiles:
  // the sm90 recipe's tiles of block_m rows for dense and block-sparse ops;
  // rows for packed batches and the sm80 recipe) cannot share an artifact.
  Builder builder(&getContext());
  auto runtimeKey = [&](const KernelSpec &grad) {
    KernelSpec post =
        getBackwardStepSpec(grad, KernelSpec::Kind::BackwardPostprocess);
    post.varlen = false; // a packed batch's are looked up as dense ones
    NamedAttrList fields(buildManifestAttr(builder, post));
    for (StringRef tile : {"block_m", "block_n", "threads", "smem", "params"})
      fields.erase(tile);
    return fields.getDictionary(&getContext());
  };
  auto dqLayout = [](const KernelSpec &grad) {
    return grad.dqTiles ? grad.blockM : 0; // tiles of block_m rows, or rows
  };
  auto layout = [](const KernelSpec &grad) -> std::string {
    if (grad.dqTiles)
      return "tiles of " + std::to_string(grad.blockM) + " rows (sm90 recipe)";
    return grad.varlen ? "rows (a packed batch)"
                       : "rows (recipe '" + stringifyRecipe(grad.recipe).str() +
                             "')";
  };
  for (auto [i, spec] : llvm::enumerate(gradSpecs))
    for (auto [j, other] : llvm::enumerate(gradSpecs)) {
      if (j >= i || dqLayout(spec) == dqLayout(other) ||
          runtimeKey(spec) != runtimeKey(other))
        continue;
      gradOps[i]->emitOpError()
          << "shares its variant with another flash.attention_grad of this "
             "module, and the two accumulate dQ in different layouts (this "
             "one in "
          << layout(spec) << ", the other in " << layout(other)
          << "); the runtime pairs one preprocess and postprocess with every "
             "backward of a variant: compile them into separate artifacts";
      return signalPassFailure();
    }
  gpu::GPUModuleOp module = getOrCreateKernelModule();
  auto kernelOf = [&](const KernelSpec &spec) {
    return getOrCreateKernel(module, spec);
  };
  for (auto [op, spec] : llvm::zip(ops, specs)) {
    gpu::GPUFuncOp kernel = kernelOf(spec);
    if (failed(checkLaunchable(op, spec, kernelsOnly)))
      return signalPassFailure();
    replaceWithLaunch(op, kernel, spec);
  }
  for (auto [op, spec] : llvm::zip(gradOps, gradSpecs)) {
    if (failed(checkLaunchable(op, spec, kernelsOnly)))
      return signalPassFailure();
    replaceGradWithLaunches(op, kernelOf, spec);
  }
  for (auto [op, spec] : llvm::zip(kvOps, kvSpecs))
    replaceKVCacheWithLaunches(op, kernelOf, spec,
                               op.getConfigAttr().getSplits());
  // The kv_append, decode_check and backward_sparse_transpose kernels go
  // last: the PTX numbers its kernels in module order (in their block
  // labels), so every other kernel keeps the code it had before they
  // existed, byte for byte. The FP8-cache appends, the newest, go after
  // those.
  Block &body = module.getBodyRegion().front();
  auto moveLast = [&](function_ref<bool(const KernelSpec &)> selected) {
    for (auto &[spec, func] : kernels) {
      if (!selected(spec))
        continue;
      Operation &last = body.back();
      if (last.hasTrait<OpTrait::IsTerminator>())
        func->moveBefore(&last);
      else
        func->moveBefore(&body, body.end());
    }
  };
  auto fp8Append = [](const KernelSpec &spec) {
    return spec.kind == KernelSpec::Kind::KVAppend && spec.fp8Cache;
  };
  moveLast([&](const KernelSpec &spec) {
    return (spec.kind == KernelSpec::Kind::KVAppend ||
            spec.kind == KernelSpec::Kind::DecodeCheck ||
            spec.kind == KernelSpec::Kind::BackwardSparseTranspose) &&
           !fp8Append(spec);
  });
  moveLast(fp8Append);
  requirePtxForMmaSyncFp8(module);
}

void FlashLowerToGPU::requirePtxForMmaSyncFp8(gpu::GPUModuleOp module) {
  // mma.sync with e4m3 operands is PTX ISA 8.4, and LLVM selects the e4m3
  // conversions (the FP8 cache's decode and kv_append) from 8.1 on sm_89:
  // only a module holding such kernels asks for more than the default, so
  // that the others keep running on older drivers. (sm_90 modules have 8.1
  // already.)
  bool mmaSyncFp8 = llvm::any_of(kernels, [](const auto &kernel) {
    const KernelSpec &spec = kernel.first;
    return spec.kind == KernelSpec::Kind::Forward && spec.isFp8() &&
           spec.recipe == Recipe::Sm80;
  });
  bool fp8Cache = llvm::any_of(
      kernels, [](const auto &kernel) { return kernel.first.fp8Cache; });
  auto target = cast<NVVM::NVVMTargetAttr>(module.getTargetsAttr()[0]);
  StringRef ptx = mmaSyncFp8 ? "+ptx84"
                  : fp8Cache && target.getFeatures() == "+ptx80" ? "+ptx81"
                                                                 : "";
  if (ptx.empty())
    return;
  module.setTargetsAttr(ArrayAttr::get(
      module.getContext(),
      {NVVM::NVVMTargetAttr::get(module.getContext(), target.getO(),
                                 target.getTriple(), target.getChip(), ptx)}));
}

} // namespace
