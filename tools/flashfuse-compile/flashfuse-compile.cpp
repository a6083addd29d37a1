//===- flashfuse-compile.cpp - flash.attention to a kernel artifact -------===//
//
//   flashfuse-compile model.mlir --target=h100 -o out/
//
// Chooses kernel configs for the target (flash-select-config, for ops that
// have none), derives block-sparse lists from mask_mod regions
// (flash-derive-block-sparsity, unless --no-derive-block-sparsity),
// generates the kernels (flash-lower-to-gpu), lowers them to PTX
// (flash-kernels-to-ptx), assembles a cubin with ptxas and writes the
// artifact of docs/KERNEL_ABI.md: kernels.ptx, kernels.cubin, manifest.txt,
// and lists.bin where lists known at compile time are carried for the
// runtime (BoundLists.h).
// Under the default recipe on sm_90, ops with a mask_mod take the sm90ws
// recipe's kernels where it serves them (preferSm90WsForMaskMods). ptxas's
// register, stack and spill figures are printed per kernel; a spill is an
// error unless --allow-spills, but where it is a kernel of that preference
// (compiled again with the recipe's own) or a derived block-sparse kernel
// (kept, with a note: the dense walk it replaces costs far more).
//
//===----------------------------------------------------------------------===//
#include "Artifact.h"
#include "Registration.h"

#include "flashfuse/Conversion/Passes.h"
#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"
#include "flashfuse/Dialect/Flash/Transforms/Passes.h"
#include "flashfuse/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                                      cl::init("-"));
static cl::opt<std::string> outputDir("o", cl::desc("Artifact directory"),
                                      cl::value_desc("dir"), cl::Required);
static cl::opt<std::string>
    targetName("target",
               cl::desc("a100 (sm_80), l4 (sm_89), h100 or h200 (sm_90)"),
               cl::init("h100"));
static cl::opt<std::string> ptxasPath("ptxas",
                                      cl::desc("ptxas to assemble the cubin "
                                               "(default: $CUDA_HOME or "
                                               "/usr/local/cuda)"));
static cl::opt<bool> noCubin("no-cubin",
                             cl::desc("Write PTX only (the driver JITs it)"));
static cl::opt<bool> allowSpills("allow-spills",
                                 cl::desc("Accept kernels that spill registers"));
static cl::opt<bool> deterministic(
    "deterministic",
    cl::desc("Backward kernels without float atomics (bit-identical runs)"));
static cl::opt<std::string> recipeName(
    "recipe",
    cl::desc("Recipe for ops without a config: auto (sm90 on sm_90 where "
             "it applies, else sm80), auto-tma (sm90ws for the forwards and "
             "backwards it serves on sm_90, else as auto), sm80, sm90 or sm90ws (forward "
             "and backward ops it serves; other backward ops as auto)"),
    cl::init("auto"));
static cl::opt<bool> noDeriveBlockSparsity(
    "no-derive-block-sparsity",
    cl::desc("Keep mask_mod ops dense: no key-block lists derived from "
             "their mask_mod (flash-derive-block-sparsity)"));
static cl::opt<bool> explainBlockSparsity(
    "explain-block-sparsity",
    cl::desc("Remark on every mask_mod op left dense, naming why"));
static cl::opt<bool> dumpKernels("dump-kernel-ir",
                                 cl::desc("Print the generated gpu.module"));

/// The compute capability ptxas targets for a named GPU.
static std::optional<int> archOf(llvm::StringRef target) {
  return llvm::StringSwitch<std::optional<int>>(target)
      .Case("a100", 80)
      .Case("l4", 89)
      .Case("h100", 90)
      .Case("h200", 90)
      .Default(std::nullopt);
}

static std::string defaultPtxas() {
  if (auto home = llvm::sys::Process::GetEnv("CUDA_HOME"))
    return *home + "/bin/ptxas";
  return "/usr/local/cuda/bin/ptxas";
}

static int fail(const llvm::Twine &message) {
  llvm::errs() << "flashfuse-compile: error: " << message << "\n";
  return 1;
}

/// What compileModule returns where a kernel spills (and spills are not
/// allowed), printing nothing more than ptxas's figures: main decides
/// whether to compile again (another recipe for the mask_mod ops) or fails.
constexpr int kKernelSpilled = 2;

/// Selects configs, derives block-sparse lists (`derive`), generates the
/// kernels and writes the artifact of `module` into --o; 0 on success, 1
/// on an error (printed), kKernelSpilled as above. A kernel that
/// derivation made block-sparse is kept where it spills, with a note:
/// block skipping is an optimisation the user did not ask for by name, but
/// dropping it for a spill costs far more than the spill (a derived sm90
/// forward spilling 76-264 bytes ran 2.3-3.9x faster than its dense walk,
/// a causal document backward spilling 8 bytes 7.2x; docs/PERF.md runs
/// 118 and 450).
static int compileModule(ModuleOp module, MLIRContext &context,
                         const std::string &chip, int arch, bool derive) {
  std::string error;
  PassManager pm(&context);
  bool needsConfig = false;
  module.walk([&](Operation *op) {
    if (isa<flash::AttentionOp, flash::AttentionGradOp,
            flash::AttentionKVCacheOp>(op) &&
        !op->hasAttr("config"))
      needsConfig = true;
  });
  if (needsConfig) {
    flash::FlashSelectConfigOptions selectOptions;
    selectOptions.target = targetName;
    selectOptions.recipe = recipeName;
    selectOptions.deterministic = deterministic;
    pm.addPass(flash::createFlashSelectConfig(selectOptions));
  }
  // After the configs: the lists' block sizes are fitted to each op's tiles
  // (flash-derive-block-sparsity rounds them up to block_m / block_n), also
  // for ops that came with a config.
  if (derive) {
    flash::FlashDeriveBlockSparsityOptions deriveOptions;
    deriveOptions.explain = explainBlockSparsity;
    pm.addPass(flash::createFlashDeriveBlockSparsity(deriveOptions));
  }
  flash::FlashLowerToGPUOptions gpuOptions;
  gpuOptions.chip = chip;
  gpuOptions.deterministic = deterministic;
  // Only the kernels are kept: the runtime launches them.
  gpuOptions.kernelsOnly = true;
  pm.addPass(flash::createFlashLowerToGPU(gpuOptions));
  if (failed(pm.run(module)))
    return 1;

  // The kernels, alone in a module of their own, down to PTX.
  std::vector<flashfuse::KernelEntry> kernels;
  OwningOpRef<ModuleOp> device = ModuleOp::create(module.getLoc());
  (*device)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                     UnitAttr::get(&context));
  OpBuilder builder = OpBuilder::atBlockEnd(device->getBody());
  module.walk([&](gpu::GPUModuleOp gpuModule) {
    for (auto func : gpuModule.getOps<gpu::GPUFuncOp>())
      if (auto manifest = func->getAttrOfType<DictionaryAttr>("flash.manifest"))
        kernels.push_back({func.getName().str(), manifest});
    builder.clone(*gpuModule);
  });
  if (kernels.empty())
    return fail("the input has no flash.attention to compile");
  // What the dropped host code passes as block-sparse lists: constants are
  // carried in the artifact, the rest stays the caller's to pass.
  std::map<std::string, DictionaryAttr> manifests;
  for (const auto &k : kernels)
    manifests[k.name] = k.manifest;
  std::map<std::string, flashfuse::ListBinding> listBindings =
      flashfuse::collectListBindings(module, manifests);
  if (dumpKernels)
    device->print(llvm::outs());

  PassManager ptxPm(&context);
  if (failed(flash::buildKernelsToPtxPipeline(ptxPm)) || failed(ptxPm.run(*device)))
    return fail("lowering the kernels to PTX failed");
  std::string ptx = flashfuse::extractPtx(*device);
  if (ptx.empty())
    return fail("the PTX serialisation produced no output");

  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
    return fail("cannot create " + outputDir + ": " + ec.message());
  llvm::SmallString<256> ptxFile(outputDir), cubinFile(outputDir),
      manifestFile(outputDir);
  llvm::sys::path::append(ptxFile, "kernels.ptx");
  llvm::sys::path::append(cubinFile, "kernels.cubin");
  llvm::sys::path::append(manifestFile, "manifest.txt");
  {
    auto out = openOutputFile(ptxFile, &error);
    if (!out)
      return fail(error);
    out->os() << ptx;
    out->keep();
  }

  bool haveCubin = false;
  if (!noCubin) {
    std::string ptxas = ptxasPath.empty() ? defaultPtxas() : ptxasPath.getValue();
    if (!llvm::sys::fs::can_execute(ptxas))
      return fail("ptxas not found at '" + ptxas +
                  "' (set --ptxas or CUDA_HOME, or pass --no-cubin)");
    std::string log;
    std::vector<flashfuse::KernelResources> resources;
    if (!flashfuse::assemble(ptxas, chip, ptxFile, cubinFile, log, resources))
      return fail("ptxas failed:\n" + log);
    haveCubin = true;
    // Warnings do not fail the build but are shown: among them C7508, ptxas
    // ignoring a setmaxnreg (the sm90ws recipe's register reallocation).
    for (llvm::StringRef line : llvm::split(log, '\n'))
      if (line.contains("warning"))
        llvm::outs() << "ptxas warning: " << line.trim() << "\n";
    bool otherSpilled = false;
    SmallVector<std::string> derivedSpilled;
    for (const auto &r : resources) {
      llvm::outs() << "ptxas " << chip << " " << r.name << ": "
                   << r.registers << " registers, " << r.stackFrame
                   << " bytes stack, " << r.spillStores << "/" << r.spillLoads
                   << " bytes spill stores/loads\n";
      if (r.spillStores == 0 && r.spillLoads == 0)
        continue;
      // A kernel derivation made block-sparse (a mask_mod's _mod kernel
      // with lists).
      if (derive && listBindings.count(r.name) &&
          llvm::StringRef(r.name).contains("_mod"))
        derivedSpilled.push_back(r.name);
      else
        otherSpilled = true;
    }
    if (!allowSpills && otherSpilled)
      return kKernelSpilled;
    if (!allowSpills)
      for (const std::string &name : derivedSpilled)
        llvm::outs() << "note: kernel " << name
                     << " spills registers and is kept: it is made "
                        "block-sparse by flash-derive-block-sparsity, and "
                        "the dense walk it replaces visits every key block "
                        "(--no-derive-block-sparsity compiles the mask_mod "
                        "ops dense)\n";
  }
  if (!flashfuse::writeListFile(outputDir, listBindings, error) ||
      !flashfuse::writeManifest(manifestFile, arch, haveCubin, kernels,
                                listBindings, error))
    return fail(error);
  for (const auto &k : kernels)
    llvm::outs() << "kernel " << k.name << " (smem "
                 << k.manifest.getAs<IntegerAttr>("smem").getInt()
                 << " bytes)\n";
  bool anyBound = false;
  for (const auto &[name, b] : listBindings) {
    anyBound |= b.bound;
    if (b.bound)
      llvm::outs() << "kernel " << name
                   << ": block-sparse lists bound by the artifact (lists.bin)\n";
    else
      llvm::outs() << "note: kernel " << name
                   << ": block-sparse lists not in the artifact: " << b.whyNot
                   << "; the caller passes them (docs/KERNEL_ABI.md "
                      "\"Block-sparse\")\n";
  }
  llvm::outs() << "wrote " << outputDir << "/{kernels.ptx"
               << (haveCubin ? ", kernels.cubin" : "")
               << (anyBound ? ", lists.bin" : "") << ", manifest.txt}\n";
  return 0;
}

/// Gives `module`'s ops with a mask_mod region (forwards and backwards
/// without a config of their own) the configs `--recipe=auto-tma` would
/// give them where those are the sm90ws recipe's, leaving the other ops to
/// the recipe asked for; false where no op changed. For ops whose lists
/// flash-derive-block-sparsity derives: the artifact's kernels are
/// launched by the runtime, which makes the sm90ws kernels' tensor maps,
/// and over derived lists the sm90ws kernels are faster (H200, a document
/// mask: forward 1.3x, backward 1.5x the sm90 ones, docs/PERF.md runs
/// 434-437, 445) and spill less (the forwards of a window's and a
/// document's mask_mod: none against 56-76 bytes). Not for score_mods or
/// dense walks: there the sm90ws kernels spill up to 36 bytes where the
/// sm90 ones do not.
static bool preferSm90WsForMaskMods(ModuleOp module, MLIRContext &context) {
  OwningOpRef<ModuleOp> probe = module.clone();
  // Quiet: an op the probe cannot configure fails the compile that follows
  // too, which reports it (once).
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  PassManager pm(&context);
  flash::FlashSelectConfigOptions options;
  options.target = targetName;
  options.recipe = "auto-tma";
  options.deterministic = deterministic;
  pm.addPass(flash::createFlashSelectConfig(options));
  if (failed(pm.run(*probe)))
    return false;
  // The clone walks in the same order as its original.
  SmallVector<Operation *> ops, probed;
  auto collect = [](ModuleOp m, SmallVector<Operation *> &into) {
    m.walk([&](flash::AttentionVariantInterface op) {
      into.push_back(op.getOperation());
    });
  };
  collect(module, ops);
  collect(*probe, probed);
  bool changed = false;
  for (auto [op, p] : llvm::zip_equal(ops, probed)) {
    auto iface = cast<flash::AttentionVariantInterface>(op);
    auto config = p->getAttrOfType<flash::KernelConfigAttr>("config");
    if (op->hasAttr("config") || iface.getMaskModRegion().empty() || !config ||
        config.getRecipe() != flash::Recipe::Sm90Ws)
      continue;
    op->setAttr("config", config);
    changed = true;
  }
  return changed;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "FlashFuse kernel compiler\n");

  std::optional<int> arch = archOf(targetName);
  if (!arch)
    return fail("unknown --target '" + targetName +
                "'; expected a100, l4, h100 or h200");

  // The PTX pipeline is textual: its upstream passes must be registered.
  flashfuse::registerCompilerPasses();
  DialectRegistry registry;
  flashfuse::registerCompilerDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  std::string error;
  auto file = openInputFile(inputFile, &error);
  if (!file)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1; // the parser printed the diagnostic

  // sm_90 kernels are built for sm_90a: the sm90 recipe's wgmma exists only
  // there, and sm_90a code runs on every sm_90 GPU (H100, H200).
  std::string chip = "sm_" + std::to_string(*arch) + (*arch == 90 ? "a" : "");
  bool derive = !noDeriveBlockSparsity;
  // Under the default recipe on sm_90 the mask_mod ops, whose lists
  // derivation gives, first take the sm90ws kernels
  // (preferSm90WsForMaskMods); where another kernel then spills, the
  // recipe's own.
  if (derive && recipeName == "auto" && *arch == 90) {
    OwningOpRef<ModuleOp> preferred = module->clone();
    if (preferSm90WsForMaskMods(*preferred, context)) {
      int status = compileModule(*preferred, context, chip, *arch, derive);
      if (status != kKernelSpilled)
        return status;
      llvm::outs() << "note: with the sm90ws recipe for the mask_mod ops a "
                      "kernel spills registers; compiling again with the "
                      "default recipe's\n";
    }
  }
  int status = compileModule(*module, context, chip, *arch, derive);
  if (status != kKernelSpilled)
    return status;
  return fail("a kernel spills registers (see above); pass --allow-spills "
              "to accept it");
}
