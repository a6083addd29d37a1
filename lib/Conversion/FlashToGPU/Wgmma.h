//===- Wgmma.h - warpgroup MMA (sm_90a) on swizzled tiles --------*- C++ -*-===//
//
// wgmma.mma_async m64nNk16 with f16/bf16 inputs (m64nNk32 with e4m3, whose
// operands are K-major only) and f32 accumulators, issued by a warpgroup (4
// consecutive warps). B, and A unless it comes from registers, are read from
// shared memory through 64-bit matrix descriptors.
//
// Shared-memory layout: the 128-byte swizzle of Swizzle.h, the one layout
// both operand majors read here; K-major operands whose rows are 64 bytes
// (e4m3 at K = 64) may take the 64-byte swizzle (the `rowBytes`
// arguments).
//
// Accumulator layout: warp w of the warpgroup holds rows 16w..16w+15; with
// g = lane / 4, t = lane % 4, the N/2 registers are, per 8-column tile n,
// {[g][8n+2t], [g][8n+2t+1], [g+8][8n+2t], [g+8][8n+2t+1]}: a warp's slice is
// exactly N/8 mma.sync m16n8 accumulators (Fragments.h), and P packed from
// them is the register A operand, as with mma.sync.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_WGMMA_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_WGMMA_H

#include "Swizzle.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::flash::wgmma {

/// The descriptor of a K-major operand (rows of the operand are the M or N
/// dimension, each row's K elements contiguous) whose first element is at
/// shared address `addr` (i64 bytes), swizzled in rows of `rowBytes` (128,
/// 64 or 32): 8-row groups 8 * rowBytes apart.
Value kMajorDescriptor(ImplicitLocOpBuilder &b, Value addr,
                       int64_t rowBytes = swizzle::kRowBytes);
/// The descriptor of an MN-major operand (K rows, each holding M or N
/// contiguous elements): 8-row K groups 1024 bytes apart, 64-column M/N
/// blocks `blockBytes` apart.
Value mnMajorDescriptor(ImplicitLocOpBuilder &b, Value addr, int64_t blockBytes);
/// Elements of one k-step: 32 bytes of K, i.e. k16 for f16/bf16 and k32
/// for e4m3.
inline int64_t kStepElements(Type elementType) {
  return 256 / elementType.getIntOrFloatBitWidth();
}
/// Byte offset of k-step kk (32 bytes of K) inside a K-major swizzled tile
/// of `rows` rows: rowBytes / 32 k-steps per swizzle row (4 in a 128-byte
/// one), 32 bytes apart, then the next column block of `rows` rows.
constexpr int64_t kStepBytes(int64_t kk, int64_t rows,
                             int64_t rowBytes = swizzle::kRowBytes) {
  return (kk / (rowBytes / 32)) * rows * rowBytes + (kk % (rowBytes / 32)) * 32;
}
/// Byte offset of k-step kk (16 rows, 2 atoms) inside an MN-major tile.
constexpr int64_t mnStepBytes(int64_t kk) { return kk * 2 * swizzle::kAtomBytes; }
/// `desc` moved by `bytes` (a multiple of 16) in shared memory.
Value advance(ImplicitLocOpBuilder &b, Value desc, int64_t bytes);

/// D = A · B (+ D when `accumulate`) for one m64nNk16 step, A from shared
/// memory: K-major, or M-major (mnMajorDescriptor) with `transposeA`; B
/// K-major, or N-major with `transposeB`. `acc` holds the N/2 accumulator
/// registers (ignored, may be empty, without `accumulate`); returns the new
/// ones. Asynchronous: the results are valid after commitGroup() and
/// waitGroup().
SmallVector<Value> mmaShared(ImplicitLocOpBuilder &b, ArrayRef<Value> acc,
                             Value descA, Value descB, int64_t n,
                             Type elementType, bool accumulate,
                             bool transposeA, bool transposeB);
/// The same with A from registers: four i32 per thread, of packed halves
/// (e4m3: of four bytes; the k32 A fragment puts row g's k = 4t..4t+3 in
/// register 0 and 16+4t..16+4t+3 in register 2, row g+8's in 1 and 3).
SmallVector<Value> mmaRegisterA(ImplicitLocOpBuilder &b, ArrayRef<Value> acc,
                                ArrayRef<Value> aRegs, Value descB, int64_t n,
                                Type elementType, bool accumulate,
                                bool transposeB);

/// A warp's slice of an accumulator list as m16n8 fragments (vector<2x2xf32>,
/// Fragments.h), 4 registers each, and back.
SmallVector<Value> toFragments(ImplicitLocOpBuilder &b, ArrayRef<Value> regs);
SmallVector<Value> fromFragments(ImplicitLocOpBuilder &b,
                                 ArrayRef<Value> frags);

/// A = (a tile of `aRows` rows) · Bᵀ (`n` rows of a tile of `bRows` rows,
/// `n` where 0) over `depth` columns, both K-major and swizzled in rows of
/// `rowBytes` (descriptors at k-step 0): depth / kStepElements chained
/// steps, committed as one group.
SmallVector<Value> productKMajor(ImplicitLocOpBuilder &b, Value descA,
                                 int64_t aRows, Value descB, int64_t n,
                                 int64_t depth, Type elementType,
                                 int64_t rowBytes = swizzle::kRowBytes,
                                 int64_t bRows = 0);

/// wgmma.fence: orders this thread's earlier register writes before the
/// asynchronous matrix reads of the next mma.
void fence(ImplicitLocOpBuilder &b);
/// Commits the mmas issued so far as one group.
void commitGroup(ImplicitLocOpBuilder &b);
/// Waits until at most `pending` groups are in flight.
void waitGroup(ImplicitLocOpBuilder &b, int64_t pending);
/// Waits until at most `pending` groups are in flight, in a basic block of
/// its own, and returns copies of `values` (i32 registers) made after the
/// wait. ptxas moves a wait up to the top of its basic block, ahead of
/// work that does not need the products (the softmax a P·V product is
/// meant to overlap); a branch on `token`, a warp-uniform i32 that is never
/// -1, which ptxas cannot fold, ends the block first. The copies are the
/// registers the next mma reads: were they defined before the wait (by the
/// conversions that pack P), ptxas would serialise every mma of the kernel
/// (C7513).
SmallVector<Value> waitGroupThenCopy(ImplicitLocOpBuilder &b, int64_t pending,
                                     Value token, ArrayRef<Value> values);
/// Passes `values` through an empty side-effecting asm. The registers an
/// asynchronous mma reads or writes are plain SSA values to LLVM, which
/// could move their producers past a fence or their users before a wait:
/// routing them through this pins them in program order against those
/// (also side-effecting) operations. Emits no instruction.
SmallVector<Value> pinRegisters(ImplicitLocOpBuilder &b, ArrayRef<Value> values);

} // namespace mlir::flash::wgmma

#endif
