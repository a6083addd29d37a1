//===- LowerToGPU.cpp - flash.attention to a generated kernel + launch ----===//
//
// For every flash.attention: derive its KernelSpec, build (once per distinct
// spec) a gpu.func in the `flash_kernels` gpu.module with the recipe's
// builder, and replace the op on the host by a gpu.launch_func over its
// operands' buffers. Each kernel carries a `flash.manifest` dictionary that
// flashfuse-compile turns into the artifact's manifest.txt.
//
//===----------------------------------------------------------------------===//
#include "Recipes.h"

#include "flashfuse/Conversion/FlashToGPU/KernelSpec.h"
#include "flashfuse/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
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
      b.getNamedAttr("kind", b.getStringAttr("forward")),
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
      b.getNamedAttr("dropout", b.getI64IntegerAttr(0)),
      b.getNamedAttr("params", b.getArrayAttr(params))};
  return b.getDictionaryAttr(f);
}

namespace {

struct FlashLowerToGPU : flash::impl::FlashLowerToGPUBase<FlashLowerToGPU> {
  using FlashLowerToGPUBase::FlashLowerToGPUBase;

  void runOnOperation() override;

private:
  gpu::GPUModuleOp getOrCreateKernelModule();
  gpu::GPUFuncOp getOrCreateKernel(gpu::GPUModuleOp module,
                                   const KernelSpec &spec);
  LogicalResult replaceWithLaunch(AttentionOp op, gpu::GPUFuncOp kernel,
                                  const KernelSpec &spec);

  SmallVector<std::pair<KernelSpec, gpu::GPUFuncOp>> kernels;
  int64_t nextUniqueId = 0;
};

gpu::GPUModuleOp FlashLowerToGPU::getOrCreateKernelModule() {
  ModuleOp module = getOperation();
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName))
    return existing;
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(module.getContext()));
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto target = NVVM::NVVMTargetAttr::get(module.getContext(), /*optLevel=*/3,
                                          "nvptx64-nvidia-cuda", chip, "+ptx80");
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
  buildSm80ForwardKernel(func, spec);
  kernels.push_back({spec, func});
  return func;
}

/// Dimension `dim` of a tensor as an index value.
static Value dimOf(ImplicitLocOpBuilder &b, Value tensor, int64_t dim) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(dim))
    return arith::ConstantIndexOp::create(b, type.getDimSize(dim));
  return tensor::DimOp::create(b, tensor, dim);
}

/// Row-major strides of a contiguous rank-4 tensor, as index values.
static SmallVector<Value, 4> contiguousStrides(ImplicitLocOpBuilder &b,
                                               Value tensor) {
  SmallVector<Value, 4> strides(4);
  strides[3] = arith::ConstantIndexOp::create(b, 1);
  for (int64_t d = 2; d >= 0; --d)
    strides[d] = arith::MulIOp::create(b, strides[d + 1], dimOf(b, tensor, d + 1));
  return strides;
}

/// The buffer of a rank-4 tensor, flattened to the kernel's memref<?xT>,
/// converting the element type to `elt` first when it differs.
static Value flatBuffer(ImplicitLocOpBuilder &b, Value tensor, Type elt) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (type.getElementType() != elt) {
    auto converted = type.clone(elt);
    if (isa<FloatType>(elt))
      tensor = arith::ExtFOp::create(b, converted, tensor);
    else
      tensor = arith::ExtUIOp::create(b, converted, tensor);
    type = converted;
  }
  auto memTy = MemRefType::get(type.getShape(), elt);
  Value buf = bufferization::ToBufferOp::create(b, b.getLoc(), memTy, tensor,
                                                /*read_only=*/b.getUnitAttr());
  SmallVector<ReassociationIndices> all = {{0, 1, 2, 3}};
  Value flat = memref::CollapseShapeOp::create(b, buf, all);
  return memref::CastOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, elt), flat);
}

LogicalResult FlashLowerToGPU::replaceWithLaunch(AttentionOp op,
                                                 gpu::GPUFuncOp kernel,
                                                 const KernelSpec &spec) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  auto iface = cast<AttentionVariantInterface>(op.getOperation());
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), f32 = b.getF32Type();
  auto toI32 = [&](Value v) { return Value(arith::IndexCastOp::create(b, i32, v)); };
  auto toI64 = [&](Value v) { return Value(arith::IndexCastOp::create(b, i64, v)); };

  auto qPerm = iface.getQueryPerm(), kPerm = iface.getKeyPerm(),
       vPerm = iface.getValuePerm();
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  Value batch = dimOf(b, q, qPerm[0]), headsQ = dimOf(b, q, qPerm[1]),
        seqQ = dimOf(b, q, qPerm[2]), headsKV = dimOf(b, k, kPerm[1]),
        seqK = dimOf(b, k, kPerm[2]);

  // Outputs: O in the layout of Q, LSE [B, Hq, Sq]; LSE is always written.
  auto outTy = cast<RankedTensorType>(op.getOutput().getType());
  SmallVector<Value> outDyn;
  for (int64_t d = 0; d < 4; ++d)
    if (outTy.isDynamicDim(d))
      outDyn.push_back(dimOf(b, q, d));
  auto outMem = MemRefType::get(outTy.getShape(), outTy.getElementType());
  Value oBuf = memref::AllocOp::create(b, outMem, outDyn);
  auto lseTy = op.getLse() ? cast<RankedTensorType>(op.getLse().getType())
                           : RankedTensorType::get({outTy.getDimSize(qPerm[0]),
                                                    outTy.getDimSize(qPerm[1]),
                                                    outTy.getDimSize(qPerm[2])},
                                                   f32);
  SmallVector<Value> lseDyn;
  Value lseSizes[3] = {batch, headsQ, seqQ};
  for (int64_t d = 0; d < 3; ++d)
    if (lseTy.isDynamicDim(d))
      lseDyn.push_back(lseSizes[d]);
  Value lseBuf = memref::AllocOp::create(b, MemRefType::get(lseTy.getShape(), f32), lseDyn);

  auto flatOut = [&](Value buf, int64_t rank, Type elt) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < rank; ++d)
      all[0].push_back(d);
    Value flat = memref::CollapseShapeOp::create(b, buf, all);
    return Value(memref::CastOp::create(
        b, MemRefType::get({ShapedType::kDynamic}, elt), flat));
  };

  SmallVector<Value> args = {flatBuffer(b, q, spec.elementType),
                             flatBuffer(b, k, spec.elementType),
                             flatBuffer(b, v, spec.elementType),
                             flatOut(oBuf, 4, spec.elementType),
                             flatOut(lseBuf, 3, f32)};
  if (spec.bias)
    args.push_back(flatBuffer(b, op.getBias(), f32));
  if (spec.mask)
    args.push_back(flatBuffer(b, op.getMask(), b.getI8Type()));
  for (Value size : {batch, headsQ, headsKV, seqQ, seqK})
    args.push_back(toI32(size));
  // Logical B, H, S strides of each operand, read through its perm.
  auto pushStrides = [&](Value tensor, ArrayRef<int64_t> perm) {
    auto strides = contiguousStrides(b, tensor);
    for (int64_t l = 0; l < 3; ++l)
      args.push_back(toI64(strides[perm[l]]));
  };
  pushStrides(q, qPerm);
  pushStrides(k, kPerm);
  pushStrides(v, vPerm);
  pushStrides(q, qPerm); // O has the layout and sizes of Q (D == Dv here)
  // Bias and mask: [B, Hq, Sq, Sk]; a size-1 dimension broadcasts (stride 0).
  auto pushBroadcastStrides = [&](Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    auto strides = contiguousStrides(b, tensor);
    for (int64_t d = 0; d < 4; ++d)
      args.push_back(type.getDimSize(d) == 1
                         ? Value(arith::ConstantIntOp::create(b, i64, 0))
                         : toI64(strides[d]));
  };
  if (spec.bias)
    pushBroadcastStrides(op.getBias());
  if (spec.mask)
    pushBroadcastStrides(op.getMask());
  auto cf = [&](double x) {
    return Value(arith::ConstantFloatOp::create(b, cast<FloatType>(f32), APFloat(float(x))));
  };
  auto ci = [&](int64_t x) { return Value(arith::ConstantIntOp::create(b, i32, x)); };
  args.push_back(cf(iface.getEffectiveScale()));
  args.push_back(ci(iface.getWindowLeftSize().value_or(-1)));
  args.push_back(ci(iface.getWindowRightSize().value_or(-1)));
  args.push_back(cf(iface.getSoftcapValue().value_or(0.0)));
  args.push_back(cf(0.0));
  args.push_back(arith::ConstantIntOp::create(b, i64, 0));

  Value one = arith::ConstantIndexOp::create(b, 1);
  Value gridX = arith::CeilDivUIOp::create(
      b, seqQ, arith::ConstantIndexOp::create(b, spec.blockM));
  gpu::KernelDim3 grid{gridX, headsQ, batch};
  gpu::KernelDim3 block{arith::ConstantIndexOp::create(b, spec.threads()), one, one};
  Value smem = arith::ConstantIntOp::create(b, i32, spec.smemBytes());
  gpu::LaunchFuncOp::create(b, b.getLoc(), kernel, grid, block, smem, args);

  Value out = bufferization::ToTensorOp::create(b, b.getLoc(), outTy, oBuf,
                                                /*restrict=*/true, /*writable=*/true);
  op.getOutput().replaceAllUsesWith(out);
  if (op.getLse()) {
    Value lse = bufferization::ToTensorOp::create(b, b.getLoc(), lseTy, lseBuf,
                                                  true, true);
    op.getLse().replaceAllUsesWith(lse);
  }
  op.erase();
  return success();
}

void FlashLowerToGPU::runOnOperation() {
  SmallVector<AttentionOp> ops;
  getOperation().walk([&](AttentionOp op) { ops.push_back(op); });
  if (ops.empty())
    return;
  // Check every op first so that a failure leaves the module untouched.
  SmallVector<KernelSpec> specs;
  for (AttentionOp op : ops) {
    FailureOr<KernelSpec> spec = getKernelSpec(op);
    if (failed(spec))
      return signalPassFailure();
    if (spec->scoreMod || spec->maskMod)
      spec->uniqueId = nextUniqueId++;
    specs.push_back(*spec);
  }
  gpu::GPUModuleOp module = getOrCreateKernelModule();
  for (auto [op, spec] : llvm::zip(ops, specs)) {
    gpu::GPUFuncOp kernel = getOrCreateKernel(module, spec);
    if (failed(replaceWithLaunch(op, kernel, spec)))
      return signalPassFailure();
  }
  getOperation().walk([&](AttentionGradOp op) {
    op.emitOpError() << "has no GPU lowering yet; lower it with "
                        "flash-lower-to-loops or flash-lower-naive";
    signalPassFailure();
  });
}

} // namespace
