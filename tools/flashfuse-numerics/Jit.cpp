//===- Jit.cpp - lower a case module to LLVM and run it -------------------===//
#include "Jit.h"

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"
#include "flashfuse/Pipelines/Pipelines.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

using namespace flashfuse::numerics;

std::string flashfuse::numerics::cpuLoweringPipeline(const std::string &lowering,
                                                     int64_t blockM,
                                                     int64_t blockN) {
  return mlir::flash::cpuPipelineText(lowering, blockM, blockN);
}

CaseJit::CaseJit() {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    mlir::registerAllPasses();
    mlir::flash::registerFlashPassesAndPipelines();
    return true;
  }();
  (void)initialized;
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<mlir::flash::FlashDialect>();
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
}

namespace {
/// MLIR's strided memref descriptor for ranks up to 4: sizes occupy the
/// first `rank` entries of sizesAndStrides and strides the next `rank`.
struct MemRefDescriptor {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizesAndStrides[8];
};
} // namespace

llvm::Error CaseJit::run(const std::string &source, const std::string &pipeline,
                         const std::string &function,
                         std::vector<Buffer> &args) {
  std::string diagnostics;
  llvm::raw_string_ostream diagOS(diagnostics);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagOS);
  auto fail = [&](const std::string &what) {
    return llvm::createStringError(what + ":\n" + diagnostics);
  };

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module)
    return fail("the case module does not parse");
  mlir::PassManager pm(&context);
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm, diagOS)))
    return fail("bad pipeline");
  if (mlir::failed(pm.run(*module)))
    return fail("lowering failed");

  mlir::ExecutionEngineOptions options;
  options.transformer = mlir::makeOptimizingTransformer(
      /*optLevel=*/2, /*sizeLevel=*/0, /*targetMachine=*/nullptr);
  // memrefCopy (copies of strided buffers) lives in the C runner utils.
  llvm::StringRef runnerUtils = FLASHFUSE_C_RUNNER_UTILS;
  options.sharedLibPaths = runnerUtils;
  auto engine = mlir::ExecutionEngine::create(*module, options);
  if (!engine)
    return fail(llvm::toString(engine.takeError()));

  std::vector<MemRefDescriptor> descriptors(args.size());
  std::vector<MemRefDescriptor *> pointers(args.size());
  std::vector<void *> packed(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    MemRefDescriptor &d = descriptors[i];
    d.allocated = d.aligned = args[i].bytes.data();
    d.offset = 0;
    size_t rank = args[i].shape.size();
    int64_t stride = 1;
    for (size_t k = rank; k-- > 0;) {
      d.sizesAndStrides[k] = args[i].shape[k];
      d.sizesAndStrides[rank + k] = stride;
      stride *= args[i].shape[k];
    }
    pointers[i] = &d;
    packed[i] = &pointers[i];
  }
  return (*engine)->invokePacked("_mlir_ciface_" + function, packed);
}
