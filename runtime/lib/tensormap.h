// TMA tensor maps of the kernels that load their tiles with the copy engine
// (the sm90ws recipe; KERNEL_ABI.md "Tensor maps").
//
// A `tensormap:<operand>_map` parameter is encoded at launch from the
// operand's own arguments: its memref (the base address), the sizes of the
// variant (batch, heads, sequence, head dim) and its b/h/s strides, as a 4-D
// tiled map [B][H][S][D] whose box is one 128-byte swizzle row (64 16-bit
// or 128 e4m3 columns) wide and a tile of the kernel's rows (block_m for Q,
// block_n for K and V) high, with the 128-byte swizzle the wgmma
// descriptors read and zeros for rows past the sequence; e4m3 rows of 64
// bytes (D = 64) are one box of the 64-byte swizzle instead, as the
// kernel's KernelSpec::tmaSwizzleBytes has them. An e4m3 kernel's
// third map covers Vt [B][Hkv][Dv][Sk] instead (KERNEL_ABI.md "FP8
// forwards"): the keys are its columns, a box of block_n keys by Dv rows,
// with its b/h/d strides.
#ifndef FLASHFUSE_RUNTIME_TENSORMAP_H
#define FLASHFUSE_RUNTIME_TENSORMAP_H

#include "driver.h"
#include "manifest.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace flashfuse {

struct TensorMapRequest {
  std::size_t slot = 0;    // where the map's address goes in the params
  const void *address = nullptr;
  int dataType = 0;        // CUtensorMapDataType
  std::uint64_t dims[4] = {};    // columns, rows, h, b (innermost first)
  std::uint64_t strides[3] = {}; // bytes between rows, heads, batches
  std::uint32_t box[4] = {};
  int swizzle = 0;               // CUtensorMapSwizzle
};

// Describes the map of parameter `param` (kind tensormap) of `spec` from the
// named arguments, checking what TMA requires (a 16-byte-aligned base,
// strides that are multiples of 16 bytes below 2^40, dims below 2^32).
// Needs no GPU.
flashfuse_status describeTensorMap(const KernelSpec &spec,
                                   const std::string &param,
                                   const flashfuse_arg *args, int numArgs,
                                   TensorMapRequest &out);

// Encodes `r` with the driver's cuTensorMapEncodeTiled.
flashfuse_status encodeTensorMap(const DriverApi &api, const KernelSpec &spec,
                                 const TensorMapRequest &r,
                                 cu::CUtensorMap &out);

} // namespace flashfuse

#endif // FLASHFUSE_RUNTIME_TENSORMAP_H
