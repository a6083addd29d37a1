//===- Registration.cpp - what flashfuse-compile registers ----------------===//
//
// flashfuse-compile registers what it uses, not MLIR's registerAll*: those
// reference every dialect, target and translation upstream has (AMDGPU,
// SPIR-V, XeGPU, ArmSME, every LLVM backend...), and a statically linked
// tool (the wheel's, cmake/FlashFuseStaticLLVM.cmake) would carry them all:
// 175 MB stripped with registerAll*, against what this list needs. What the
// kernel pipeline needs is checked by every lit test that runs the tool and
// by the libraries' PTX, which must not change with this list.
//
//===----------------------------------------------------------------------===//
#include "Registration.h"

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"
#include "flashfuse/Pipelines/Pipelines.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void flashfuse::registerCompilerDialects(DialectRegistry &registry) {
  // Models arrive as linalg or TOSA on tensors (raised to flash ops);
  // the kernels are built from the rest.
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  func::FuncDialect, gpu::GPUDialect, index::IndexDialect,
                  linalg::LinalgDialect, LLVM::LLVMDialect, math::MathDialect,
                  memref::MemRefDialect, nvgpu::NVGPUDialect,
                  NVVM::NVVMDialect, scf::SCFDialect, tensor::TensorDialect,
                  tosa::TosaDialect, ub::UBDialect, vector::VectorDialect,
                  flash::FlashDialect>();
  // convert-gpu-to-nvvm lowers the ops of every dialect in the kernels
  // through their ConvertToLLVM interfaces.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  // gpu-module-to-binary: the #nvvm.target serialiser and the translations
  // to LLVM IR it runs.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void flashfuse::registerCompilerPasses() {
  // flash-kernels-to-ptx (lib/Pipelines/Pipelines.cpp), pass by pass.
  registerConvertNVGPUToNVVMPass();
  registerSCFToControlFlowPass();
  registerConvertNVVMToLLVMPass();
  memref::registerExpandStridedMetadataPass();
  registerLowerAffinePass();
  registerConvertGpuOpsToNVVMOps();
  registerConvertVectorToLLVMPass();
  registerCanonicalizerPass();
  registerCSEPass();
  registerReconcileUnrealizedCastsPass();
  registerGpuModuleToBinaryPass();
  flash::registerFlashPassesAndPipelines();
}
