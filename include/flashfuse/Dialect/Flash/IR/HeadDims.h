//===- HeadDims.h - the head dims the GPU kernels serve ---------*- C++ -*-===//
//
// What flash-select-config (which chooses tiles for a head dim) and the GPU
// kernel builders (which build them) must agree on about head dims, in one
// place: which head dims are served, how wide their mma.sync tiles are and
// how much of them the backward can hold in registers.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_DIALECT_FLASH_IR_HEADDIMS_H
#define FLASHFUSE_DIALECT_FLASH_IR_HEADDIMS_H

#include <cstdint>

namespace mlir::flash {

/// Head dims (D or Dv) the GPU recipes serve: rows are copied in 16-byte
/// chunks (8 elements), and a K/V stage of 256 columns is the widest the
/// shared memory holds at useful tiles.
constexpr bool isServedHeadDim(int64_t d) {
  return d % 8 == 0 && d >= 8 && d <= 256;
}

/// Columns the mma.sync tiles span for a head dim of `cols` (a multiple of
/// 8): whole k16 steps of S = Q Kᵀ and whole pairs of 8-column n-tiles of
/// the products over Dv. A head dim that is an odd multiple of 8 (8, 40,
/// 72, ...) keeps its last 8 columns zero-filled in shared memory: zeros in
/// Q and K leave S exact, and the output columns they produce are never
/// stored. Every other head dim spans exactly its columns.
constexpr int64_t mmaWidth(int64_t cols) { return (cols + 15) / 16 * 16; }

/// Head dims of the decode recipe (Sm80Decode.cpp, on the forward's tiles):
/// one fragment layout for both products, so D == Dv, and whole 16-column
/// steps, since its epilogue stores whole 8-column pairs of the mma width
/// (an odd multiple of 8 would store past the row).
constexpr bool isDecodeHeadDim(int64_t d, int64_t dv) {
  return d == dv && d % 16 == 0 && d >= 32 && d <= 256;
}

/// The sm80 backward keeps dK and dV of 16 keys per warp in registers:
/// (D + Dv) / 2 f32 registers a thread (over mmaWidth columns), at most 160
/// next to the Sᵀ and dPᵀ tiles (D = Dv = 160 and D = 192, Dv = 128 fit).
constexpr int64_t kMaxBackwardDims = 320;

/// Past kMaxBackwardDims (D = Dv = 168 to 256, D = 256 with Dv = 128, ...)
/// the sm80 backward splits the columns of dK and dV between two warps that
/// own the same 16 keys: each recomputes Sᵀ and dPᵀ of those keys (two of
/// the five products done twice, against a schedule that would stage P and
/// dS through shared memory) and keeps half of dK and dV, at most 128
/// registers a thread at D = Dv = 256.
constexpr int64_t backwardColumnGroups(int64_t d, int64_t dv) {
  return mmaWidth(d) + mmaWidth(dv) <= kMaxBackwardDims ? 1 : 2;
}

/// The wgmma backwards (Sm90Backward.cpp) keep a consumer warpgroup's dK
/// and dV of 64 keys in registers, (D + Dv) / 2 f32 a thread: 128 at D =
/// Dv = 128, next to Sᵀ and dPᵀ (64 more at 64 query rows) within the
/// sm90ws consumers' 240. Past D + Dv = 256 two warpgroups own the same 64
/// keys, each recomputing Sᵀ and dPᵀ and keeping one column half of dK and
/// dV (as the sm80 backward's column groups do): D = Dv = 256 holds the
/// registers of D = 128.
constexpr int64_t kMaxWgmmaBackwardDims = 256;
constexpr int64_t wgmmaBackwardColumnGroups(int64_t d, int64_t dv) {
  return d + dv <= kMaxWgmmaBackwardDims ? 1 : 2;
}

/// Columns of `cols` (D or Dv) one of `groups` column groups of the
/// backward holds: whole 16-column steps, the last group taking what is left
/// (D = 176: 96 and 80).
constexpr int64_t backwardGroupColumns(int64_t cols, int64_t groups) {
  return (mmaWidth(cols) / 16 + groups - 1) / groups * 16;
}

} // namespace mlir::flash

#endif
