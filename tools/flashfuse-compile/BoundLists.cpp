//===- BoundLists.cpp - constant block-sparse lists into the artifact -----===//
#include "BoundLists.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>

using namespace mlir;
using namespace flashfuse;

namespace {

/// The list file's name in the artifact directory.
constexpr llvm::StringLiteral kListFile = "lists.bin";

/// Folds `v` to a constant through the ops that compute it (the launch's
/// strides are products of tensor.dim's of the constant lists, cast to
/// i64), without changing the IR; null when some input is not constant.
Attribute foldToConstant(Value v, int depth = 0) {
  Attribute attr;
  if (matchPattern(v, m_Constant(&attr)))
    return attr;
  Operation *def = v.getDefiningOp();
  // The chains are a few ops long; the bound keeps a pathological input
  // from recursing without end.
  if (!def || depth > 32 || def->getNumResults() != 1 ||
      def->getNumRegions() != 0)
    return {};
  SmallVector<Attribute> operands;
  for (Value operand : def->getOperands()) {
    // A tensor operand (tensor.dim's source) folds from its static type;
    // a non-constant one is passed as unknown.
    operands.push_back(foldToConstant(operand, depth + 1));
    if (!operands.back() && !isa<TensorType>(operand.getType()))
      return {};
  }
  SmallVector<OpFoldResult> results;
  if (failed(def->fold(operands, results)) || results.size() != 1)
    return {};
  if (auto folded = dyn_cast<Attribute>(results[0]))
    return folded;
  Value same = cast<Value>(results[0]);
  return same == v ? Attribute() : foldToConstant(same, depth + 1);
}

/// The tensor a launch's memref argument views (flatBuffer: to_buffer,
/// collapse_shape, cast).
Value viewedTensor(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto cast = dyn_cast<memref::CastOp>(def))
      v = cast.getSource();
    else if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def))
      v = collapse.getSrc();
    else if (auto toBuffer = dyn_cast<bufferization::ToBufferOp>(def))
      v = toBuffer.getTensor();
    else
      break;
  }
  return v;
}

/// The constant i32 tensor a launch's memref argument views, or null.
DenseIntElementsAttr constantBuffer(Value v) {
  v = viewedTensor(v);
  DenseIntElementsAttr attr;
  if (matchPattern(v, m_Constant(&attr)) &&
      attr.getElementType().isInteger(32))
    return attr;
  return {};
}

std::optional<int64_t> constantInt(Value v) {
  if (auto attr = dyn_cast_or_null<IntegerAttr>(foldToConstant(v)))
    return attr.getValue().getSExtValue();
  return std::nullopt;
}

/// The tile order (docs/KERNEL_ABI.md "The tile order") of a forward whose
/// lists `b` binds, with the policy of the package's
/// block_sparse.tile_order: rows more than twice as long as the mean first,
/// longest first; the rest head-major, each head's longest first; ties in
/// launch order. None where batch or heads_q is not static (the entries
/// depend on both), a field would not fit, or a list param is missing.
std::optional<std::vector<int32_t>> tileOrderOf(const KernelBinding &b,
                                                DictionaryAttr manifest) {
  auto sizeOf = [&](StringRef name) -> std::optional<int64_t> {
    for (const auto &[n, v] : b.sizes)
      if (n == name)
        return v;
    for (const auto &[n, v] : b.scalars)
      if (n == name)
        return v;
    return std::nullopt;
  };
  auto blockM = manifest.getAs<IntegerAttr>("block_m");
  auto blockQ = manifest.getAs<IntegerAttr>("sparse_block_q");
  std::optional<int64_t> batch = sizeOf("batch"), heads = sizeOf("heads_q"),
                         seqQ = sizeOf("seq_q");
  if (!blockM || !blockQ || !batch || !heads || !seqQ || blockM.getInt() <= 0 ||
      blockQ.getInt() % blockM.getInt() != 0)
    return std::nullopt;
  int64_t tilesM = (*seqQ + blockM.getInt() - 1) / blockM.getInt();
  int64_t perRow = blockQ.getInt() / blockM.getInt();
  if (*batch < 1 || *batch > 256 || *heads < 1 || *heads > 256 ||
      tilesM < 1 || tilesM > 65536)
    return std::nullopt;
  // Listed blocks of each tile, partial and full, each count clamped into
  // [0, slots] as the kernel clamps it.
  int64_t n = *batch * *heads * tilesM;
  std::vector<int64_t> count(n, 0);
  for (StringRef prefix : {"", "full_"}) {
    const BoundBuffer *num = nullptr;
    for (const BoundBuffer &buffer : b.buffers)
      if (buffer.param == (prefix + "kv_num_blocks").str())
        num = &buffer;
    if (!num)
      continue;
    std::optional<int64_t> strideB = sizeOf((prefix + "kv_num_blocks_stride_b").str()),
                           strideH = sizeOf((prefix + "kv_num_blocks_stride_h").str()),
                           slots = sizeOf((prefix + "kv_slots").str());
    if (!strideB || !strideH || !slots)
      return std::nullopt;
    for (int64_t bi = 0; bi < *batch; ++bi)
      for (int64_t h = 0; h < *heads; ++h)
        for (int64_t m = 0; m < tilesM; ++m) {
          int64_t at = bi * *strideB + h * *strideH + m / perRow;
          if (at < 0 || at >= int64_t(num->data.size()))
            return std::nullopt;
          count[(bi * *heads + h) * tilesM + m] +=
              std::clamp<int64_t>(num->data[at], 0, *slots);
        }
  }
  int64_t total = 0, longest = 0;
  for (int64_t c : count) {
    total += c;
    longest = std::max(longest, c);
  }
  // The sort key of tile i: its shortfall from the longest, alone for a
  // long row, after its head's rank for the others.
  auto key = [&](int64_t i) {
    int64_t shortfall = longest - count[i];
    if (count[i] * n > 2 * total)
      return std::make_pair(int64_t(0), shortfall);
    return std::make_pair(1 + i / tilesM, shortfall);
  };
  std::vector<int64_t> tiles(n);
  for (int64_t i = 0; i < n; ++i)
    tiles[i] = i;
  std::stable_sort(tiles.begin(), tiles.end(),
                   [&](int64_t x, int64_t y) { return key(x) < key(y); });
  std::vector<int32_t> entries;
  entries.reserve(n);
  for (int64_t t : tiles) {
    int64_t m = t % tilesM, h = (t / tilesM) % *heads,
            bi = t / (tilesM * *heads);
    entries.push_back(int32_t((uint32_t(bi) << 24) | (uint32_t(h) << 16) |
                              uint32_t(m)));
  }
  return entries;
}

/// The binding one launch gives its kernel, or why it gives none.
ListBinding bindingOfLaunch(gpu::LaunchFuncOp launch, DictionaryAttr manifest) {
  ListBinding out;
  auto params = manifest.getAs<ArrayAttr>("params");
  auto level = manifest.getAs<IntegerAttr>("block_sparse");
  ValueRange args = launch.getKernelOperands();
  if (!params || !level || args.size() != params.size()) {
    out.whyNot = "its launch does not match its parameter list";
    return out;
  }
  llvm::StringMap<Value> byName;
  for (auto [param, arg] : llvm::zip(params, args))
    byName[cast<StringAttr>(param).getValue().split(':').second] = arg;

  for (const std::string &name : listParamNames(level.getInt())) {
    Value arg = byName.lookup(name);
    if (!arg) {
      out.whyNot = "it takes no '" + name + "'";
      return out;
    }
    if (isa<MemRefType>(arg.getType())) {
      DenseIntElementsAttr data = constantBuffer(arg);
      if (!data) {
        out.whyNot =
            isa<BlockArgument>(viewedTensor(arg))
                ? "its lists are arguments of the input's function"
                : "its lists are computed at run time by host code";
        return out;
      }
      BoundBuffer buffer;
      buffer.param = name;
      for (APInt x : data.getValues<APInt>())
        buffer.data.push_back(int32_t(x.getSExtValue()));
      out.binding.buffers.push_back(std::move(buffer));
    } else if (std::optional<int64_t> value = constantInt(arg)) {
      out.binding.scalars.emplace_back(name, *value);
    } else {
      out.whyNot = "its '" + name + "' is computed at run time";
      return out;
    }
  }
  // A kernel that takes a tile order gets none from its host launch (0, the
  // grid's own); bound with the lists (below, once the sizes are known), so
  // that the runtime passes it too.
  std::optional<int64_t> order;
  if (Value arg = byName.lookup("kv_tile_order")) {
    order = constantInt(arg);
    if (!order) {
      out.whyNot = "its 'kv_tile_order' is computed at run time";
      return out;
    }
  }
  // The sizes the lists were derived for: the lengths always (a list row
  // per query block, indices below ceil(seq_k / BK)); batch and heads and
  // the window where the op had them static (the mask_mod and the band
  // were evaluated over those ranges).
  std::vector<std::string> sizes = {"seq_q", "seq_k", "batch", "heads_q"};
  if (auto window = manifest.getAs<IntegerAttr>("window");
      window && window.getInt())
    sizes.insert(sizes.end(), {"window_left", "window_right"});
  for (const std::string &name : sizes) {
    Value arg = byName.lookup(name);
    std::optional<int64_t> value = arg ? constantInt(arg) : std::nullopt;
    if (value)
      out.binding.sizes.emplace_back(name, *value);
    else if (name == "seq_q" || name == "seq_k") {
      out.whyNot = "its " + name + " is not static";
      return out;
    }
  }
  // The grid's own order asked for: where the sizes fix every tile, the
  // lists' order instead (a buffer, whose address the runtime passes).
  if (order) {
    std::optional<std::vector<int32_t>> tiles;
    if (*order == 0)
      tiles = tileOrderOf(out.binding, manifest);
    if (tiles) {
      BoundBuffer buffer;
      buffer.param = "kv_tile_order";
      buffer.data = std::move(*tiles);
      out.binding.buffers.push_back(std::move(buffer));
    } else {
      out.binding.scalars.emplace_back("kv_tile_order", *order);
    }
  }
  out.bound = true;
  return out;
}

} // namespace

bool KernelBinding::sameValues(const KernelBinding &other) const {
  if (scalars != other.scalars || sizes != other.sizes ||
      buffers.size() != other.buffers.size())
    return false;
  for (auto [a, b] : llvm::zip(buffers, other.buffers))
    if (a.param != b.param || a.data != b.data)
      return false;
  return true;
}

std::vector<std::string> flashfuse::listParamNames(int64_t level) {
  std::vector<std::string> names;
  for (std::string prefix : {"", "full_"}) {
    if (prefix == "full_" && level < 2)
      break;
    for (const char *name :
         {"kv_num_blocks", "kv_indices", "kv_num_blocks_stride_b",
          "kv_num_blocks_stride_h", "kv_indices_stride_b",
          "kv_indices_stride_h", "kv_slots"})
      names.push_back(prefix + name);
  }
  return names;
}

std::map<std::string, ListBinding> flashfuse::collectListBindings(
    ModuleOp host,
    const std::map<std::string, DictionaryAttr> &kernelManifests) {
  std::map<std::string, ListBinding> result;
  std::map<std::string, int> launches;
  host.walk([&](gpu::LaunchFuncOp launch) {
    std::string name = launch.getKernelName().str();
    auto it = kernelManifests.find(name);
    if (it == kernelManifests.end())
      return;
    auto level = it->second.getAs<IntegerAttr>("block_sparse");
    if (!level || level.getInt() == 0)
      return;
    ListBinding one = bindingOfLaunch(launch, it->second);
    if (launches[name]++ == 0) {
      result[name] = std::move(one);
      return;
    }
    // A kernel several ops launch (same variant, no mask_mod of its own)
    // is bound only when they all pass the same lists.
    ListBinding &first = result[name];
    if (!first.bound)
      return;
    if (!one.bound) {
      first = std::move(one);
    } else if (!first.binding.sameValues(one.binding)) {
      first.bound = false;
      first.whyNot = "several launches pass it different lists";
    }
  });
  return result;
}

/// The list's bytes as the file holds them: little-endian i32.
static std::vector<uint8_t> littleEndianBytes(const std::vector<int32_t> &data) {
  std::vector<uint8_t> bytes;
  bytes.reserve(data.size() * 4);
  for (int32_t x : data)
    for (int shift = 0; shift < 32; shift += 8)
      bytes.push_back(uint8_t(uint32_t(x) >> shift));
  return bytes;
}

uint32_t flashfuse::crc32Of(const std::vector<int32_t> &data) {
  return llvm::crc32(littleEndianBytes(data));
}

bool flashfuse::writeListFile(llvm::StringRef dir,
                              std::map<std::string, ListBinding> &bindings,
                              std::string &error) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, kListFile);
  bool any = false;
  for (auto &[name, b] : bindings)
    any |= b.bound && !b.binding.buffers.empty();
  if (!any) {
    // A list file of an earlier compile into the same directory would be
    // stale: nothing names it, but it must not look like this artifact's.
    llvm::sys::fs::remove(path);
    return true;
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = "cannot write " + path.str().str() + ": " + ec.message();
    return false;
  }
  uint64_t offset = 0;
  for (auto &[name, b] : bindings) {
    if (!b.bound)
      continue;
    for (BoundBuffer &buffer : b.binding.buffers) {
      buffer.file = kListFile.str();
      buffer.offset = offset;
      std::vector<uint8_t> bytes = littleEndianBytes(buffer.data);
      buffer.crc32 = llvm::crc32(bytes);
      os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
      offset += bytes.size();
      for (; offset % 16 != 0; ++offset)
        os << '\0';
    }
  }
  return !os.has_error();
}
