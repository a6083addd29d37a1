//===- Artifact.cpp - write a kernel artifact (PTX, cubin, manifest) ------===//
#include "Artifact.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace flashfuse;

std::string flashfuse::extractPtx(ModuleOp module) {
  std::string ptx;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute obj : binary.getObjects())
      if (auto object = dyn_cast<gpu::ObjectAttr>(obj))
        ptx = object.getObject().str();
  });
  return ptx;
}

bool flashfuse::assemble(llvm::StringRef ptxas, llvm::StringRef chip,
                         llvm::StringRef ptxPath, llvm::StringRef cubinPath,
                         std::string &log,
                         std::vector<KernelResources> &resources) {
  llvm::SmallString<128> logPath;
  if (llvm::sys::fs::createTemporaryFile("ptxas", "log", logPath)) {
    log = "cannot create a temporary file for ptxas's output";
    return false;
  }
  std::string archFlag = ("-arch=" + chip).str();
  llvm::StringRef args[] = {ptxas, archFlag, "-O3", "-v", ptxPath, "-o", cubinPath};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath.str(),
                                                logPath.str()};
  // A limit that only catches a hung ptxas: its time grows with the
  // module's kernels (2-4 s each on an idle core, several times that on a
  // loaded build machine; the 68-kernel decode library took 120 s of a
  // 2-core CI build), so a fixed limit failed large libraries on busy
  // machines. 300 s plus 30 s a kernel.
  size_t kernels = 0;
  if (auto ptx = llvm::MemoryBuffer::getFile(ptxPath))
    kernels = (*ptx)->getBuffer().count(".entry ");
  unsigned limit = 300 + 30 * kernels;
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                     /*SecondsToWait=*/limit, 0, &execError);
  if (auto buf = llvm::MemoryBuffer::getFile(logPath))
    log = (*buf)->getBuffer().str();
  llvm::sys::fs::remove(logPath);
  if (rc != 0) {
    if (rc == -2)
      execError += " (ptxas crashed, or ran past its limit of " +
                   std::to_string(limit) + " s for " +
                   std::to_string(kernels) + " kernels)";
    if (!execError.empty())
      log = execError + "\n" + log;
    return false;
  }
  // "Compiling entry function 'NAME' for 'sm_90'", then the frame/spill line
  // and the register line.
  llvm::Regex entry("Compiling entry function '([^']+)'");
  llvm::Regex spills("([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores, "
                     "([0-9]+) bytes spill loads");
  llvm::Regex regs("Used ([0-9]+) registers");
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(log).split(lines, '\n');
  for (llvm::StringRef line : lines) {
    llvm::SmallVector<llvm::StringRef> m;
    if (entry.match(line, &m)) {
      resources.push_back({m[1].str()});
    } else if (!resources.empty() && spills.match(line, &m)) {
      m[1].getAsInteger(10, resources.back().stackFrame);
      m[2].getAsInteger(10, resources.back().spillStores);
      m[3].getAsInteger(10, resources.back().spillLoads);
    } else if (!resources.empty() && regs.match(line, &m)) {
      m[1].getAsInteger(10, resources.back().registers);
    }
  }
  return true;
}

bool flashfuse::writeManifest(llvm::StringRef path, int arch, bool haveCubin,
                              const std::vector<KernelEntry> &kernels,
                              const std::map<std::string, ListBinding> &bindings,
                              std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write " + path.str() + ": " + ec.message();
    return false;
  }
  os << "flashfuse-manifest 1\n";
  os << "arch " << arch << "\n";
  os << "ptx kernels.ptx\n";
  if (haveCubin)
    os << "cubin kernels.cubin\n";
  // Field order as in docs/KERNEL_ABI.md; params last.
  const char *fields[] = {"kind",  "dtype",  "head_dim", "head_dim_v",
                          "block_m", "block_n", "threads", "smem",
                          "causal", "window", "softcap", "bias",
                          "mask",  "dropout"};
  for (const KernelEntry &k : kernels) {
    os << "kernel " << k.name << "\n";
    for (const char *f : fields) {
      Attribute a = k.manifest.get(f);
      os << "  " << f << " ";
      if (auto s = dyn_cast_or_null<StringAttr>(a))
        os << s.getValue();
      else if (auto i = dyn_cast_or_null<IntegerAttr>(a))
        os << i.getInt();
      os << "\n";
    }
    // Optional keys: written only by the kernels that have them.
    if (auto page = dyn_cast_or_null<IntegerAttr>(k.manifest.get("page_size")))
      os << "  page_size " << page.getInt() << "\n";
    // Only the decode kernels of sm_90+ have it (docs/KERNEL_ABI.md).
    if (auto n = dyn_cast_or_null<IntegerAttr>(k.manifest.get("cluster_merge")))
      os << "  cluster_merge " << n.getInt() << "\n";
    // Only a decode kernel of an FP8 cache has it (docs/KERNEL_ABI.md).
    if (auto kv = dyn_cast_or_null<StringAttr>(k.manifest.get("kv_dtype")))
      os << "  kv_dtype " << kv.getValue() << "\n";
    if (auto f32 = dyn_cast_or_null<IntegerAttr>(k.manifest.get("out_f32")))
      os << "  out_f32 " << f32.getInt() << "\n";
    if (auto varlen = dyn_cast_or_null<IntegerAttr>(k.manifest.get("varlen")))
      os << "  varlen " << varlen.getInt() << "\n";
    if (auto out = dyn_cast_or_null<StringAttr>(k.manifest.get("out_dtype")))
      os << "  out_dtype " << out.getValue() << "\n";
    if (auto group =
            dyn_cast_or_null<IntegerAttr>(k.manifest.get("vt_key_group")))
      os << "  vt_key_group " << group.getInt() << "\n";
    for (const char *key : {"block_sparse", "sparse_block_q", "sparse_block_k",
                            "descale_block_q", "descale_block_k", "leftpad",
                            "alibi", "batch_idx", "rotary_dim", "rotary_interleaved",
                            "rotary_per_row"})
      if (auto v = dyn_cast_or_null<IntegerAttr>(k.manifest.get(key)))
        os << "  " << key << " " << v.getInt() << "\n";
    if (auto grid = dyn_cast_or_null<StringAttr>(k.manifest.get("grid")))
      os << "  grid " << grid.getValue() << "\n";
    if (auto mods = dyn_cast_or_null<IntegerAttr>(k.manifest.get("mods")))
      os << "  mods " << mods.getInt() << "\n";
    if (auto captures = dyn_cast_or_null<ArrayAttr>(k.manifest.get("captures"))) {
      os << "  captures";
      for (Attribute t : captures)
        os << " " << cast<StringAttr>(t).getValue();
      os << "\n";
    }
    os << "  params";
    if (auto params = dyn_cast_or_null<ArrayAttr>(k.manifest.get("params")))
      for (Attribute p : params)
        os << " " << cast<StringAttr>(p).getValue();
    os << "\n";
    // Lists the artifact carries (KERNEL_ABI.md "Block-sparse"): the sizes
    // they hold for, then each list param's value.
    if (auto it = bindings.find(k.name);
        it != bindings.end() && it->second.bound) {
      const KernelBinding &b = it->second.binding;
      os << "  bound_for";
      for (const auto &[name, value] : b.sizes)
        os << " " << name << " " << value;
      os << "\n";
      for (const BoundBuffer &buffer : b.buffers)
        os << "  bound " << buffer.param << " file " << buffer.file
           << " offset " << buffer.offset << " i32 " << buffer.data.size()
           << " crc32 " << llvm::format_hex_no_prefix(buffer.crc32, 8) << "\n";
      for (const auto &[name, value] : b.scalars)
        os << "  bound " << name << " " << value << "\n";
    }
    os << "end\n";
  }
  return true;
}
