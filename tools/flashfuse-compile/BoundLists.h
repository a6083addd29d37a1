//===- BoundLists.h - constant block-sparse lists into the artifact -*- C++ -*-===//
//
// flash-derive-block-sparsity gives an op whose mask_mod reads only the
// indices constant lists; flash-lower-to-gpu passes them, with their strides
// and row length, to the kernel's launch in host IR, which the artifact does
// not keep. This reads those launches back: where every list argument of a
// block-sparse kernel is a compile-time constant, the values are carried in
// the artifact (a list file and `bound` manifest lines, docs/KERNEL_ABI.md
// "Block-sparse") for the runtime to pass. Lists host code computes at run
// time (the document lists flash-derive-block-sparsity builds from sequence
// ids, user code) and lists that are the input's arguments are not: the
// caller passes them.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_TOOLS_FLASHFUSE_COMPILE_BOUNDLISTS_H
#define FLASHFUSE_TOOLS_FLASHFUSE_COMPILE_BOUNDLISTS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace flashfuse {

/// One i32 list, and where writeListFile put it.
struct BoundBuffer {
  std::string param;
  std::vector<int32_t> data;
  std::string file;
  uint64_t offset = 0;
  uint32_t crc32 = 0;
};

/// The values the artifact passes for a kernel's list params, and the
/// launch sizes they are valid for.
struct KernelBinding {
  std::vector<BoundBuffer> buffers;
  std::vector<std::pair<std::string, int64_t>> scalars;
  /// `bound_for`: i32 params whose launch value must equal these.
  std::vector<std::pair<std::string, int64_t>> sizes;

  bool sameValues(const KernelBinding &other) const;
};

/// What became of one block-sparse kernel's lists: bound, or why not.
struct ListBinding {
  bool bound = false;
  KernelBinding binding;
  std::string whyNot;
};

/// The names of the list params of a kernel whose manifest says
/// `block_sparse` = `level` (1: partial lists, 2: partial and full).
std::vector<std::string> listParamNames(int64_t level);

/// For each block-sparse kernel of `kernelManifests` (name -> its
/// flash.manifest), what the launches of `host` (flash-lower-to-gpu's output,
/// before the kernels are split off) pass as its lists.
std::map<std::string, ListBinding>
collectListBindings(mlir::ModuleOp host,
                    const std::map<std::string, mlir::DictionaryAttr> &kernelManifests);

/// Writes every bound buffer into DIR/lists.bin (little-endian i32, each
/// buffer at a 16-byte aligned offset, the alignment the runtime's buffers
/// need) and records its file, offset and CRC-32 in the buffer. Writes no
/// file when nothing is bound.
bool writeListFile(llvm::StringRef dir, std::map<std::string, ListBinding> &bindings,
                   std::string &error);

/// The CRC-32 (IEEE 802.3, zlib's) the manifest records per buffer.
uint32_t crc32Of(const std::vector<int32_t> &data);

} // namespace flashfuse

#endif
