#include "tensormap.h"

#include "error.h"
#include "launch.h"
#include "flashfuse/fp8_vt_layout.h"

#include <cstring>
#include <functional>

namespace flashfuse {

namespace {

/// Where a size of a map comes from: an integer argument of the launch
/// (batch, heads, lengths), a head dim of the variant, a tile of the
/// kernel, or the columns of one 128-byte swizzle row of the element type.
enum class Extent { Arg, HeadDim, HeadDimV, BlockM, BlockN, SwizzleRow, Map };

struct Size {
  Extent from;
  const char *arg = nullptr; // Extent::Arg: the argument's name
  int64_t multiple = 1;      // Extent::Arg: rounded up to a multiple of this
};

/// One operand a tensor map may cover: a 4-D [B][H][rows][columns] array
/// with the columns contiguous, and the box a load of it moves.
struct MapOperand {
  const char *operand;
  Size columns, rows;
  const char *heads;
  const char *rowStride; // the suffix of its rows' stride argument
  Size boxColumns, boxRows;
  // The columns of the kernel's tile, which the swizzle follows
  // (KernelSpec::tmaSwizzleBytes): the map's own columns, or for Vt the
  // kernel's block_n keys (copied one swizzle row a box).
  Size tileColumns = {Extent::Map};
};

/// 16-bit kernels: Q, K, V and (the backward's) dO as [B][H][S][D]
/// (KERNEL_ABI.md "Tensor maps").
constexpr MapOperand kMaps16[] = {
    {"q", {Extent::HeadDim}, {Extent::Arg, "seq_q"}, "heads_q", "s",
     {Extent::SwizzleRow}, {Extent::BlockM}},
    {"k", {Extent::HeadDim}, {Extent::Arg, "seq_k"}, "heads_kv", "s",
     {Extent::SwizzleRow}, {Extent::BlockN}},
    {"v", {Extent::HeadDimV}, {Extent::Arg, "seq_k"}, "heads_kv", "s",
     {Extent::SwizzleRow}, {Extent::BlockN}},
    {"do", {Extent::HeadDimV}, {Extent::Arg, "seq_q"}, "heads_q", "s",
     {Extent::SwizzleRow}, {Extent::BlockM}},
};
/// e4m3 kernels: Q and K as above, and Vt as [B][Hkv][Dv][Sk_pad], the
/// keys contiguous and permuted in groups (fp8_vt_layout.h), a box of one
/// swizzle row of keys by all Dv rows, block_n / box keys a stage
/// (KERNEL_ABI.md "FP8 forwards"). The map spans Sk_pad: the last group's
/// keys lie anywhere in it.
constexpr MapOperand kMapsE4m3[] = {
    kMaps16[0],
    kMaps16[1],
    {"vt", {Extent::Arg, "seq_k", FLASHFUSE_FP8_VT_KEY_GROUP},
     {Extent::HeadDimV}, "heads_kv", "d", {Extent::SwizzleRow},
     {Extent::HeadDimV}, {Extent::BlockN}},
};

/// Bytes of one swizzle row: a box's columns must fit in it. e4m3 tile
/// rows that are not whole 128-byte rows take the widest of the 64- and
/// 32-byte swizzles they are whole rows of (64: Q and K at D = 64, Vt at
/// block_n = 192; 32: Vt at block_n = 160 or 224).
constexpr std::uint64_t kSwizzleBytes = 128;
constexpr std::uint64_t kNarrowSwizzleBytes = 64;
constexpr std::uint64_t kNarrowestSwizzleBytes = 32;
constexpr std::uint32_t kMaxBox = 256;
constexpr std::uint64_t kMaxStride = std::uint64_t(1) << 40;
constexpr std::uint64_t kMaxDim = std::uint64_t(1) << 32;

const char *extentName(const Size &s) {
  switch (s.from) {
  case Extent::Arg:
    return s.arg;
  case Extent::HeadDim:
    return "head_dim";
  case Extent::HeadDimV:
    return "head_dim_v";
  case Extent::BlockM:
    return "block_m";
  case Extent::BlockN:
    return "block_n";
  case Extent::SwizzleRow:
    return "swizzle row";
  case Extent::Map:
    return "columns";
  }
  return "?";
}

} // namespace

flashfuse_status describeTensorMap(const KernelSpec &spec,
                                   const std::string &param,
                                   const flashfuse_arg *args, int numArgs,
                                   TensorMapRequest &out) {
  auto bad = [&](const std::string &what) {
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                concat("launching '", spec.name, "': tensor map '", param,
                       "': ", what));
  };
  const flashfuse_variant &v = spec.variant;
  int dataType = 0;
  switch (v.dtype) {
  case FLASHFUSE_DTYPE_F16:
    dataType = cu::CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    break;
  case FLASHFUSE_DTYPE_BF16:
    dataType = cu::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    break;
  case FLASHFUSE_DTYPE_E4M3:
    // TMA copies bytes; only the wgmma reads them as e4m3.
    dataType = cu::CU_TENSOR_MAP_DATA_TYPE_UINT8;
    break;
  default:
    return bad("tensor maps cover f16, bf16 or e4m3 operands only");
  }
  const bool e4m3 = v.dtype == FLASHFUSE_DTYPE_E4M3;
  const MapOperand *op = nullptr;
  auto find = [&](const auto &maps) {
    for (const MapOperand &m : maps)
      if (param == std::string(m.operand) + "_map")
        op = &m;
  };
  if (e4m3)
    find(kMapsE4m3);
  else
    find(kMaps16);
  if (!op)
    return bad(e4m3 ? "the runtime makes tensor maps of q, k and vt only "
                      "for e4m3 kernels"
                    : "the runtime makes tensor maps of q, k, v and do "
                      "only");
  const flashfuse_arg *buf = findArg(args, numArgs, op->operand);
  if (!buf || buf->type != FLASHFUSE_PARAM_MEMREF || !buf->ptr)
    return bad(concat("needs the memref argument '", op->operand, "'"));
  auto integer = [&](const std::string &name, int64_t &value) {
    const flashfuse_arg *a = findArg(args, numArgs, name);
    if (!a || (a->type != FLASHFUSE_PARAM_I32 && a->type != FLASHFUSE_PARAM_I64))
      return false;
    value = a->i;
    return true;
  };
  const std::uint64_t elt = static_cast<std::uint64_t>(dtypeBytes(v.dtype));
  // The value of a size, or -1 when its argument is missing.
  std::uint64_t swizzleBytes = kSwizzleBytes;
  std::function<int64_t(const Size &)> extent = [&](const Size &s) -> int64_t {
    int64_t value = -1;
    switch (s.from) {
    case Extent::Arg:
      if (!integer(s.arg, value) || value <= 0)
        return -1;
      return (value + s.multiple - 1) / s.multiple * s.multiple;
    case Extent::HeadDim:
      return v.head_dim;
    case Extent::HeadDimV:
      return v.head_dim_v;
    case Extent::BlockM:
      return spec.block_m;
    case Extent::BlockN:
      return spec.block_n;
    case Extent::SwizzleRow:
      return static_cast<int64_t>(swizzleBytes / elt);
    case Extent::Map:
      return extent(op->columns);
    }
    return value;
  };
  // The kernel's rule (KernelSpec::tmaSwizzleBytes): 128-byte swizzle rows,
  // but where e4m3 tile rows are not whole 128-byte rows the widest of 64
  // and 32 bytes that they are whole rows of; a tile row is whole swizzle
  // rows either way.
  const int64_t tileColumns = extent(op->tileColumns);
  if (e4m3 && tileColumns > 0)
    for (std::uint64_t bytes : {kSwizzleBytes, kNarrowSwizzleBytes,
                                kNarrowestSwizzleBytes}) {
      swizzleBytes = bytes;
      if (std::uint64_t(tileColumns) * elt % bytes == 0)
        break;
    }
  if (e4m3 && tileColumns > 0 &&
      std::uint64_t(tileColumns) * elt % swizzleBytes != 0)
    return bad(concat("the kernel's ", extentName(op->tileColumns), " = ",
                      tileColumns, " columns of ", elt,
                      " byte(s) are not whole ", swizzleBytes,
                      "-byte swizzle rows"));
  int64_t size[4] = {}, stride[3] = {};
  const Size sizes[4] = {op->columns, op->rows, {Extent::Arg, op->heads},
                         {Extent::Arg, "batch"}};
  for (int d = 0; d < 4; ++d)
    if ((size[d] = extent(sizes[d])) <= 0)
      return bad(concat("needs a positive integer argument '",
                        extentName(sizes[d]), "'"));
  const char *strideDims[3] = {op->rowStride, "h", "b"};
  for (int d = 0; d < 3; ++d) {
    std::string name = concat(op->operand, "_stride_", strideDims[d]);
    if (!integer(name, stride[d]) || stride[d] < 0)
      return bad(concat("needs a non-negative integer argument '", name, "'"));
  }
  auto address = reinterpret_cast<std::uintptr_t>(buf->ptr);
  if (address % 16 != 0)
    return bad(concat("'", op->operand, "' is not 16-byte aligned"));
  out = TensorMapRequest{};
  out.address = buf->ptr;
  out.dataType = dataType;
  for (int d = 0; d < 4; ++d) {
    if (std::uint64_t(size[d]) >= kMaxDim)
      return bad(concat("dimension ", d, " of '", op->operand, "' (", size[d],
                        ") exceeds TMA's 2^32"));
    out.dims[d] = std::uint64_t(size[d]);
  }
  // A dimension of size 1 is never stepped: give it the packed stride, so
  // that a caller's arbitrary stride there (PyTorch keeps any) passes.
  std::uint64_t packed = out.dims[0] * elt;
  for (int d = 0; d < 3; ++d) {
    std::uint64_t bytes =
        out.dims[d + 1] == 1 ? packed : std::uint64_t(stride[d]) * elt;
    if (bytes % 16 != 0 || bytes >= kMaxStride)
      return bad(concat("'", op->operand, "_stride_", strideDims[d], "' = ",
                        stride[d], " elements is not a multiple of 16 bytes "
                        "below 2^40, as TMA requires"));
    out.strides[d] = bytes;
    packed = bytes * out.dims[d + 1];
  }
  const int64_t boxColumns = extent(op->boxColumns);
  const int64_t boxRows = extent(op->boxRows);
  // The swizzle needs the box's columns within one swizzle row.
  if (boxColumns <= 0 || std::uint64_t(boxColumns) * elt > swizzleBytes)
    return bad(concat("the kernel's ", extentName(op->boxColumns), " = ",
                      boxColumns, " columns of ", elt,
                      " byte(s) is not a box width within one ", swizzleBytes,
                      "-byte swizzle row"));
  if (boxRows <= 0 || boxRows > int64_t(kMaxBox))
    return bad(concat("the kernel's ", extentName(op->boxRows), " = ",
                      boxRows, " is not a TMA box height (1..256)"));
  out.box[0] = static_cast<std::uint32_t>(boxColumns);
  out.box[1] = static_cast<std::uint32_t>(boxRows);
  out.box[2] = out.box[3] = 1;
  out.swizzle = swizzleBytes == kSwizzleBytes ? cu::CU_TENSOR_MAP_SWIZZLE_128B
                : swizzleBytes == kNarrowSwizzleBytes
                    ? cu::CU_TENSOR_MAP_SWIZZLE_64B
                    : cu::CU_TENSOR_MAP_SWIZZLE_32B;
  return FLASHFUSE_SUCCESS;
}

flashfuse_status encodeTensorMap(const DriverApi &api, const KernelSpec &spec,
                                 const TensorMapRequest &r,
                                 cu::CUtensorMap &out) {
  if (!api.cuTensorMapEncodeTiled)
    return fail(FLASHFUSE_ERROR_UNSUPPORTED,
                concat("launching '", spec.name, "': the CUDA driver has no "
                       "cuTensorMapEncodeTiled (TMA kernels need a CUDA 12 "
                       "driver)"));
  const std::uint32_t unitStrides[4] = {1, 1, 1, 1};
  std::memset(&out, 0, sizeof out);
  return checkCu(
      api,
      api.cuTensorMapEncodeTiled(
          &out, r.dataType, 4, const_cast<void *>(r.address), r.dims,
          r.strides, r.box, unitStrides, cu::CU_TENSOR_MAP_INTERLEAVE_NONE,
          r.swizzle,
          cu::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
          cu::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
      concat("encoding a tensor map for '", spec.name, "'"));
}

} // namespace flashfuse
