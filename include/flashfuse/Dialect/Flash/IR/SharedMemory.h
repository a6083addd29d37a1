//===- SharedMemory.h - shared memory of kernels and chips ----*- C++ -*-===//
//
// What flash-select-config (which fits tiles to a target) and the GPU kernel
// builders (which lay the tiles out; KernelSpec::smemBytes) must agree on
// about shared memory, in one place: the bytes the sm80 forward's and
// backward's kernels take for given tiles, and the bytes a chip gives one
// block. A config
// chosen on an estimate that is lower than the kernel's real layout builds a
// kernel that only fails at launch.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_DIALECT_FLASH_IR_SHAREDMEMORY_H
#define FLASHFUSE_DIALECT_FLASH_IR_SHAREDMEMORY_H

#include "flashfuse/Dialect/Flash/IR/HeadDims.h"

#include <cstdint>

namespace mlir::flash {

/// Rows of the padded 16-bit tiles (the sm80 backward's, and the forward's
/// below 64 columns) are mmaWidth columns plus 8 elements (16 bytes), so
/// that the 8 rows one ldmatrix phase reads fall in 8 different 16-byte bank
/// groups: the pitch is an odd multiple of 16 bytes for every head dim.
constexpr int64_t kPaddedRowExtra = 8;

/// A padded tile of `rows` rows of `cols` (D or Dv) 16-bit elements.
constexpr int64_t paddedTileBytes(int64_t rows, int64_t cols) {
  return rows * (mmaWidth(cols) + kPaddedRowExtra) * 2;
}

/// Swizzled 16-bit tiles hold whole 64-element (128-byte) swizzle rows, and
/// the tiles start on a 1024-byte boundary, which the kernel finds at run
/// time in up to this much slack.
constexpr int64_t kSwizzleAlignSlack = 1024;
constexpr int64_t swizzledColumns(int64_t cols) { return (cols + 63) / 64 * 64; }

/// Whether the sm80 forward (and decode) lays its 16-bit tiles out
/// swizzled: D and Dv of 64 or more, and each tile (Q of block_m rows of D
/// elements, K and V of block_n rows of kCols and vCols 16-bit units) copied
/// in 16-byte pieces that the block's `threads` share evenly; else on padded
/// rows (paddedTileBytes).
constexpr bool sm80ForwardSwizzled(int64_t blockM, int64_t blockN,
                                   int64_t threads, int64_t d, int64_t dv,
                                   int64_t kCols, int64_t vCols) {
  auto evenlyCopied = [threads](int64_t rows, int64_t cols) {
    return rows * swizzledColumns(cols) / 8 % threads == 0;
  };
  return d >= 64 && dv >= 64 && evenlyCopied(blockM, d) &&
         evenlyCopied(blockN, kCols) && evenlyCopied(blockN, vCols);
}

/// The sm80 forward's 16-bit tiles (Sm80Forward.cpp, Sm80Decode.cpp): Q of
/// block_m rows and a `stages`-deep ring of K and V tiles of block_n rows,
/// on `threads` threads.
constexpr int64_t sm80ForwardBytes(int64_t blockM, int64_t blockN,
                                   int64_t stages, int64_t d, int64_t dv,
                                   int64_t threads) {
  if (sm80ForwardSwizzled(blockM, blockN, threads, d, dv, d, dv))
    return kSwizzleAlignSlack +
           2 * (blockM * swizzledColumns(d) +
                stages * blockN * (swizzledColumns(d) + swizzledColumns(dv)));
  return paddedTileBytes(blockM, d) +
         stages * (paddedTileBytes(blockN, d) + paddedTileBytes(blockN, dv));
}

/// The sm80 backward's LSE and Dsum of its Q/dO ring, [stages][2][block_m]
/// f32; block-sparse, then [stages + 1][4] i32: what the query-block
/// iterator records of each stage's step and its row of the lists
/// (BlockSparseQueryIterator.h), 16 bytes each so that what follows stays
/// 16-byte aligned.
constexpr int64_t sm80BackwardStatBytes(int64_t blockM, int64_t stages,
                                        bool blockSparse) {
  return 4 * stages * 2 * blockM + (blockSparse ? 16 * (stages + 1) : 0);
}

/// dS of one (key block, query block) pair of the sm80 backward,
/// [block_n][block_m + pad] 16-bit.
constexpr int64_t sm80BackwardDsBytes(int64_t blockM, int64_t blockN) {
  return blockN * (blockM + kPaddedRowExtra) * 2;
}

/// The sm80 backward's main kernel (Sm80Backward.cpp): K and V of its key
/// block, a `stages`-deep ring of Q and dO tiles, the dS tile the dQ product
/// reads back (`dsTile`: all but the deterministic mode, whose dQ kernel
/// recomputes dS) and the ring's statistics.
constexpr int64_t sm80BackwardBytes(int64_t blockM, int64_t blockN,
                                    int64_t stages, int64_t d, int64_t dv,
                                    bool dsTile, bool blockSparse) {
  return paddedTileBytes(blockN, d) + paddedTileBytes(blockN, dv) +
         stages * (paddedTileBytes(blockM, d) + paddedTileBytes(blockM, dv)) +
         (dsTile ? sm80BackwardDsBytes(blockM, blockN) : 0) +
         sm80BackwardStatBytes(blockM, stages, blockSparse);
}

/// The deterministic backward's dQ kernel (Sm80BackwardDQ.cpp): the
/// forward's layout (Q, then a `stages`-deep ring of K and V tiles) plus the
/// dO tile.
constexpr int64_t sm80BackwardDQBytes(int64_t blockM, int64_t blockN,
                                      int64_t stages, int64_t d, int64_t dv) {
  return paddedTileBytes(blockM, d) + paddedTileBytes(blockM, dv) +
         stages * (paddedTileBytes(blockN, d) + paddedTileBytes(blockN, dv));
}

/// The most dynamic shared memory one block of sm_<arch> may take (the
/// opt-in maximum, cudaDevAttrMaxSharedMemoryPerBlockOptin, which a kernel
/// launched with a raised limit gets): 163 KiB on sm_80 and sm_87, 99 KiB
/// on sm_86 and sm_89, 227 KiB from sm_90. Below sm_80, 48 KiB.
constexpr int64_t maxSharedMemoryPerBlock(int64_t arch) {
  if (arch >= 90)
    return 232448;
  if (arch == 86 || arch == 89)
    return 101376;
  if (arch >= 80)
    return 166912;
  return 49152;
}

} // namespace mlir::flash

#endif
