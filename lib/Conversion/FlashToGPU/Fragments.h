//===- Fragments.h - mma.sync m16n8k16 fragments, shared by recipes -*- C++ -*-===//
//
// Register fragments of the warp-level mma.sync.m16n8k16 (f16/bf16 inputs,
// f32 accumulators), the ldmatrix loads that fill them, and the quad
// reductions the online softmax needs. Thread `lane` of a warp holds, with
// g = lane / 4 and t = lane % 4:
//   accumulator C (16x8, vector<2x2xf32>): [i][j] = C[g + 8i][2t + j]
//   A operand (16x16, 4 x i32 of two halves): a0 = A[g][2t..], a1 = A[g+8][2t..],
//       a2 = A[g][2t+8..], a3 = A[g+8][2t+8..]
//   B operand (16x8, 2 x i32): b0 = B[2t..2t+1][g], b1 = B[2t+8..2t+9][g]
// so the accumulators of two adjacent 8-column tiles are, after packing to
// 16 bits, exactly an A operand: P never leaves registers.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_FRAGMENTS_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_FRAGMENTS_H

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::flash::frag {

/// Index-typed constant.
Value cIdx(ImplicitLocOpBuilder &b, int64_t v);
/// f32 constant.
Value cF32(ImplicitLocOpBuilder &b, float v);

/// An A operand (4 registers) or a B operand (2 registers) of packed halves.
using Regs = SmallVector<Value, 4>;

/// ldmatrix.x4 from a shared-memory tile: lane l supplies the address of row
/// `rowOf(l)`, column `colOf(l)`; returns the four 8x8 matrices as i32
/// registers (matrix i in element i).
Regs ldmatrixX4(ImplicitLocOpBuilder &b, Value smem, ValueRange leadingIdx,
                Value row, Value col, Type elementType, bool transpose);

/// The four ldmatrix.x4 lane patterns of the m16n8k16 operands, each over
/// a 16 x 16 block of the stored tile.
enum class X4 {
  A,               // A operand from a tile stored [m][k]
  ATransposed,     // A operand from a tile stored [k][m] (ldmatrix.trans)
  BPair,           // B operands of two 8-column tiles, stored [n][k]
  BPairTransposed, // the same, stored [k][n] (ldmatrix.trans)
};
/// ldmatrix.x4 of the 16 x 16 block at stored (row0, col0) of a padded
/// tile `smem[lead..]` (index values).
Regs ldmatrixPadded(ImplicitLocOpBuilder &b, Value smem, ValueRange lead,
                    Value lane, X4 pattern, Value row0, Value col0,
                    Type elementType);
/// ldmatrix.x4 of the 16 x 16 block at stored row `row0` (a multiple of 8)
/// and stored column `col0` (a multiple of 16) of a 128-byte-swizzled tile
/// (Swizzle.h) of `rows` rows at element `tileOffset` of the 1-D view
/// `tiles`. The block's lane offsets are computed once per lane; the
/// swizzle then only flips bits 4-5 of them by the constant `col0 % 64`, so
/// each load is one xor and an add of constants.
Regs ldmatrixSwizzled(ImplicitLocOpBuilder &b, Value tiles, Value tileOffset,
                      int64_t rows, X4 pattern, Value lane, Value row0,
                      int64_t col0, Type elementType);

/// The four ldmatrix lane patterns of the m16n8k16 operands. `lane` is the
/// lane id; row/column bases are index values of the shared-memory tile.
/// A operand of A[m0..m0+16) x [k0..k0+16) from a tile stored [m][k].
Regs loadA(ImplicitLocOpBuilder &b, Value smem, ValueRange lead, Value lane,
           Value m0, Value k0, Type elementType);
/// The same A operand from a tile stored transposed, [k][m] (ldmatrix.trans).
Regs loadATransposed(ImplicitLocOpBuilder &b, Value smem, ValueRange lead,
                     Value lane, Value m0, Value k0, Type elementType);
/// B operands of the two 8-column tiles n0 and n0 + 8 at k-step k0, from a
/// tile stored [n][k] (K in Q Kᵀ): {b0, b1} of tile n0, then of tile n0 + 8.
Regs loadBPair(ImplicitLocOpBuilder &b, Value smem, ValueRange lead,
               Value lane, Value n0, Value k0, Type elementType);
/// The same from a tile stored [k][n] (V in P V), with ldmatrix.trans.
Regs loadBPairTransposed(ImplicitLocOpBuilder &b, Value smem, ValueRange lead,
                         Value lane, Value n0, Value k0, Type elementType);
/// The A operand formed by the accumulators of two adjacent 8-column tiles
/// (columns 16kk..16kk+15), packed to `elementType`: the register re-use
/// that keeps P (and dS) out of shared memory.
Regs accPairToA(ImplicitLocOpBuilder &b, Value c0, Value c1, Type elementType);

/// C[m][n] = A · Bᵀ for one warp: A is `mTiles` 16-row tiles of the [m][k]
/// tile `aTile` from row `aRow0`, B the [n][k] tile `bTile[bLead..]` with
/// 8 * nTiles rows, over `depth` columns. Returns [mTiles][nTiles]
/// accumulators (S = Q Kᵀ, dP = dO Vᵀ and their transposes).
SmallVector<SmallVector<Value>> warpProductNT(ImplicitLocOpBuilder &b,
                                              Value lane, Value aTile,
                                              Value aRow0, Value bTile,
                                              ValueRange bLead, int64_t mTiles,
                                              int64_t nTiles, int64_t depth,
                                              Type elementType);

/// D = A * B + C for one m16n8k16 tile; C and D are vector<2x2xf32>.
Value mma(ImplicitLocOpBuilder &b, ArrayRef<Value> a, ArrayRef<Value> bOp,
          Value c, Type elementType);

/// Packs two f32 values into one i32 of two halves of `elementType`
/// (the first value in the low half, as mma.sync expects); for e4m3, into
/// one i16 of two bytes, rounded to nearest even and saturated to ±448.
Value packPair(ImplicitLocOpBuilder &b, Value lo, Value hi, Type elementType);

/// Stores lo, hi rounded to `elementType` at memory[indices], memory[.. + 1]
/// as one 4-byte store: a pair of accumulator columns 2t, 2t + 1 in a tile or
/// tensor whose rows start 16-byte aligned (KERNEL_ABI.md) is 4-byte
/// aligned, and saying so matters: at the element's own alignment LLVM
/// splits the store in two 2-byte stores (ncu, run 56: twice the store
/// instructions of the O epilogue). With `elementType` f32 the pair is
/// stored unrounded, as one 8-byte store (column 2t of such a row is
/// 8-byte aligned).
void storePair(ImplicitLocOpBuilder &b, Value lo, Value hi, Type elementType,
               Value memory, ValueRange indices);

/// The e4m3 A operands of P for k32 products (wgmma's register A and
/// mma.sync m16n8k32 share the layout): `pairs[n][i]` is the 16-bit pair of
/// e4m3 probabilities of accumulator tile n (8 keys), row half i (rows g
/// and g + 8), as packPair makes them. Thread (g, t) holds key pairs
/// {2t, 2t+1} of each 8-key tile; the k32 operand's register 0 holds
/// positions 4t..4t+3 of a 32-key step and register 2 positions
/// 16+4t..16+4t+3 (1 and 3 for row g + 8). Each register is two of the
/// thread's own pairs, tiles 4kk and 4kk+1 (2 and 3): positions
/// 16h + 4t + 2j + e take key 16h + 8j + 2t + e, the key order of Vᵀ
/// (kFp8VtKeyGroup, docs/KERNEL_ABI.md "FP8 forwards"), so that P needs no
/// exchange between threads. Returns four i32 registers per 32 keys, in
/// operand order.
SmallVector<Value> e4m3ProbabilityOperands(
    ImplicitLocOpBuilder &b, ArrayRef<std::array<Value, 2>> pairs);
/// mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 (sm_89+): A four
/// i32 registers of 4 e4m3 each, B two, C and the result accumulator
/// fragments as mma's. Inline PTX: MLIR 22's nvvm.mma.sync has no dense
/// e4m3 shape.
Value mmaE4m3(ImplicitLocOpBuilder &b, ArrayRef<Value> a, ArrayRef<Value> bOp,
              Value c);
/// Max or sum over the 4 lanes of a quad (lanes sharing g), via shuffles.
Value quadReduceMax(ImplicitLocOpBuilder &b, Value v);
Value quadReduceSum(ImplicitLocOpBuilder &b, Value v);
/// The same over the 8 lanes that share t (an accumulator column's rows g).
Value columnReduceMax(ImplicitLocOpBuilder &b, Value v);
Value columnReduceSum(ImplicitLocOpBuilder &b, Value v);
/// The same over all 32 lanes of the warp.
Value warpReduceMax(ImplicitLocOpBuilder &b, Value v);
Value warpReduceSum(ImplicitLocOpBuilder &b, Value v);

/// memory[index] += lo, memory[index + 1] += hi (f32, global, atomic per
/// element). With `vectorRed` (sm_90) one red.global.add.v2.f32 does both,
/// halving the reduction instructions; `index` must then be even.
void atomicAddPair(ImplicitLocOpBuilder &b, Value memory, Value index,
                   Value lo, Value hi, bool vectorRed);

/// Fast approximate 2^x and log2(x) (ex2/lg2.approx, as FlashAttention uses).
Value exp2Approx(ImplicitLocOpBuilder &b, Value x);
/// 1 / x, rcp.approx.ftz.f32 (a few ulp; no IEEE division's slow path).
Value reciprocalApprox(ImplicitLocOpBuilder &b, Value x);
Value log2Approx(ImplicitLocOpBuilder &b, Value x);
/// tanh by tanh.approx.f32 (sm_75+; no libdevice).
Value tanhApprox(ImplicitLocOpBuilder &b, Value x);

/// movmatrix.trans: thread (g, t)'s register `reg` holds row g, columns
/// 2t and 2t + 1 (low half first) of an 8 x 8 matrix of 16-bit elements;
/// returns the same of its transpose, i.e. the elements (2t, g) and
/// (2t + 1, g). An accumulator pair packed to 16 bits becomes so the B
/// operand of a product whose k is the accumulator's rows.
Value transposeMatrix(ImplicitLocOpBuilder &b, Value reg);

/// Element [i][j] of a vector<2x2xf32> accumulator, and its update.
Value accGet(ImplicitLocOpBuilder &b, Value acc, int64_t i, int64_t j);
Value accSet(ImplicitLocOpBuilder &b, Value acc, Value v, int64_t i, int64_t j);
Value accZero(ImplicitLocOpBuilder &b);

} // namespace mlir::flash::frag

#endif
