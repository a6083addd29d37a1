//===- Swizzle.h - the 128-byte-swizzled shared-memory layout -----*- C++ -*-===//
//
// The one swizzled layout of the kernels: wgmma reads it through descriptors
// (Wgmma.h), ldmatrix through per-lane addresses (Fragments.h). A tile of R
// rows x C columns (C a multiple of 64 16-bit elements) is stored as C / 64
// column blocks of R rows x 128 bytes, one after the other; within a block
// row r starts at r * 128 and its 16-byte chunk c sits at chunk position
// c ^ (r % 8). Tiles start at 1024-byte boundaries, as the swizzle is a
// function of the address bits.
//
// Why: 8 threads copying one 128-byte row segment with cp.async write one
// whole 128-byte line (one shared-memory wavefront), and the 8 rows one
// ldmatrix phase reads (one chunk each) fall in 8 different 16-byte bank
// groups. Padded rows get the second but not the first: their cp.async
// writes straddle lines (2.6x the ideal wavefronts, docs/PERF.md).
//
// The exceptions: e4m3 TMA tiles whose rows are not whole 128-byte rows
// take the widest swizzle their rows are whole rows of. The 64-byte one
// (Q and K at D = 64, Vᵀ rows of 192 keys) has rows of 64 bytes whose
// 16-byte chunk c sits at c ^ ((r / 2) % 4), 8-row atoms of 512 bytes; the
// 32-byte one (Vᵀ rows of 160 or 224 keys) rows of 32 bytes whose chunk c
// sits at c ^ ((r / 4) % 2), 8-row atoms of 256 bytes. Only the copy
// engine writes them and only wgmma descriptors read them
// (kNarrowRowBytes, kNarrowestRowBytes; Wgmma.h's `rowBytes` arguments).
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_SWIZZLE_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_SWIZZLE_H

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"

namespace mlir::flash::swizzle {

/// Bytes of one swizzle atom row and of one 8-row atom.
constexpr int64_t kRowBytes = 128;
constexpr int64_t kAtomBytes = 1024;
/// 16-bit elements of one atom row.
constexpr int64_t kRowElements = kRowBytes / 2;
/// Bytes of one row of the 64-byte and of the 32-byte swizzle.
constexpr int64_t kNarrowRowBytes = 64;
constexpr int64_t kNarrowestRowBytes = 32;

/// Element offset, inside a swizzled tile of `rows` rows, of the 8 elements
/// of row `row` from column `col` (a multiple of 8). Index values.
Value offset(ImplicitLocOpBuilder &b, Value row, Value col, int64_t rows);

} // namespace mlir::flash::swizzle

#endif // FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_SWIZZLE_H
