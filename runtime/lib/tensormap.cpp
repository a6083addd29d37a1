#include "tensormap.h"

#include "error.h"
#include "launch.h"

#include <cstring>

namespace flashfuse {

namespace {

/// The sizes and box rows of each operand a tensor map may cover.
struct MapOperand {
  const char *operand, *rows, *heads, *boxRows;
  bool valueDim; // its columns are Dv
};
constexpr MapOperand kMapOperands[] = {
    {"q", "seq_q", "heads_q", "block_m", false},
    {"k", "seq_k", "heads_kv", "block_n", false},
    {"v", "seq_k", "heads_kv", "block_n", true},
};

/// Columns of one box: a 128-byte swizzle row of 16-bit elements.
constexpr std::uint32_t kBoxColumns = 64;
constexpr std::uint64_t kMaxStride = std::uint64_t(1) << 40;
constexpr std::uint64_t kMaxDim = std::uint64_t(1) << 32;

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
  const MapOperand *op = nullptr;
  for (const MapOperand &m : kMapOperands)
    if (param == std::string(m.operand) + "_map")
      op = &m;
  if (!op)
    return bad("the runtime makes tensor maps of q, k and v only");
  const flashfuse_arg *buf = findArg(args, numArgs, op->operand);
  if (!buf || buf->type != FLASHFUSE_PARAM_MEMREF || !buf->ptr)
    return bad(concat("needs the memref argument '", op->operand, "'"));
  auto integer = [&](const std::string &name, int64_t &v) {
    const flashfuse_arg *a = findArg(args, numArgs, name);
    if (!a || (a->type != FLASHFUSE_PARAM_I32 && a->type != FLASHFUSE_PARAM_I64))
      return false;
    v = a->i;
    return true;
  };
  int64_t size[4] = {}, stride[3] = {};
  size[0] = op->valueDim ? spec.variant.head_dim_v : spec.variant.head_dim;
  const char *sizeNames[3] = {op->rows, op->heads, "batch"};
  for (int d = 1; d < 4; ++d)
    if (!integer(sizeNames[d - 1], size[d]) || size[d] <= 0)
      return bad(concat("needs a positive integer argument '",
                        sizeNames[d - 1], "'"));
  const char *strideDims[3] = {"s", "h", "b"};
  for (int d = 0; d < 3; ++d) {
    std::string name = concat(op->operand, "_stride_", strideDims[d]);
    if (!integer(name, stride[d]) || stride[d] < 0)
      return bad(concat("needs a non-negative integer argument '", name, "'"));
  }
  if (spec.variant.dtype != FLASHFUSE_DTYPE_F16 &&
      spec.variant.dtype != FLASHFUSE_DTYPE_BF16)
    return bad("tensor maps cover f16 or bf16 operands only");
  const std::uint64_t elt = 2;
  auto address = reinterpret_cast<std::uintptr_t>(buf->ptr);
  if (address % 16 != 0)
    return bad(concat("'", op->operand, "' is not 16-byte aligned"));
  out = TensorMapRequest{};
  out.address = buf->ptr;
  out.dataType = spec.variant.dtype == FLASHFUSE_DTYPE_F16
                     ? cu::CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                     : cu::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
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
  int boxRows = std::string(op->boxRows) == "block_m" ? spec.block_m
                                                      : spec.block_n;
  if (boxRows <= 0 || boxRows > 256)
    return bad(concat("the kernel's ", op->boxRows, " = ", boxRows,
                      " is not a TMA box height (1..256)"));
  out.box[0] = kBoxColumns;
  out.box[1] = static_cast<std::uint32_t>(boxRows);
  out.box[2] = out.box[3] = 1;
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
          cu::CU_TENSOR_MAP_SWIZZLE_128B,
          cu::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
          cu::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
      concat("encoding a tensor map for '", spec.name, "'"));
}

} // namespace flashfuse
