//===- Jit.h - lower a case module to LLVM and run it ----------*- C++ -*-===//
#ifndef FLASHFUSE_TOOLS_NUMERICS_JIT_H
#define FLASHFUSE_TOOLS_NUMERICS_JIT_H

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace flashfuse::numerics {

/// One memref argument: its shape and its row-major element bytes.
struct Buffer {
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

/// The pass pipeline from a module holding flash ops to the LLVM dialect:
/// the chosen flash lowering, one-shot bufferization across function
/// boundaries, deallocation, and the standard conversions to LLVM.
std::string cpuLoweringPipeline(const std::string &lowering, int64_t blockM,
                                int64_t blockN);

class CaseJit {
public:
  CaseJit();
  /// Parses `source`, runs `pipeline`, JIT-compiles it and calls `function`
  /// (which has llvm.emit_c_interface) on `args`, each passed as a strided
  /// memref descriptor; results are written into the buffers in place.
  llvm::Error run(const std::string &source, const std::string &pipeline,
                  const std::string &function, std::vector<Buffer> &args);

private:
  mlir::MLIRContext context;
};

} // namespace flashfuse::numerics

#endif
