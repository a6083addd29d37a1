//===- Artifact.h - write a kernel artifact (PTX, cubin, manifest) -*- C++ -*-===//
#ifndef FLASHFUSE_TOOLS_FLASHFUSE_COMPILE_ARTIFACT_H
#define FLASHFUSE_TOOLS_FLASHFUSE_COMPILE_ARTIFACT_H

#include "BoundLists.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace flashfuse {

/// One kernel of the artifact: its symbol and the `flash.manifest`
/// dictionary flash-lower-to-gpu attached to it.
struct KernelEntry {
  std::string name;
  mlir::DictionaryAttr manifest;
};

/// What ptxas reported for one kernel.
struct KernelResources {
  std::string name;
  int registers = -1;
  int spillStores = 0, spillLoads = 0, stackFrame = 0;
};

/// The PTX held by the (single) gpu.binary of `module`, or an empty string.
std::string extractPtx(mlir::ModuleOp module);

/// Runs `ptxas -arch=<chip> -O3 -v` on `ptxPath`; returns false with the
/// tool's output in `log` on failure. Fills `resources` from the -v report.
bool assemble(llvm::StringRef ptxas, llvm::StringRef chip, llvm::StringRef ptxPath,
              llvm::StringRef cubinPath, std::string &log,
              std::vector<KernelResources> &resources);

/// Writes manifest.txt in the format of docs/KERNEL_ABI.md; a kernel of
/// `bindings` that is bound gets its `bound_for` and `bound` lines.
bool writeManifest(llvm::StringRef path, int arch, bool haveCubin,
                   const std::vector<KernelEntry> &kernels,
                   const std::map<std::string, ListBinding> &bindings,
                   std::string &error);

} // namespace flashfuse

#endif
