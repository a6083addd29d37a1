//===- Tiles.h - tiles, band bounds and score tiles for the loops lowering ===//
//
// What the forward and the backward loop nests share: slicing one head's
// rows out of an operand of any layout, the key (or query) range a tile can
// see through the causal / window band, and the score tile computed from a
// Q tile and a K tile with the shared score pipeline.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOLOOPS_TILES_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOLOOPS_TILES_H

#include "flashfuse/Conversion/Common/ScorePipeline.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::flash {
struct VarlenIndices;
} // namespace mlir::flash

namespace mlir::flash::loops {

struct LoopContext {
  OpBuilder &b;
  Location loc;
  AttentionVariantInterface op;
  AttentionSizes sz;
  AttentionBand band;
  int64_t group; // G = Hq / Hkv
  int64_t blockM, blockN;
  /// Where a packed op's dropout draws (DecomposeVarlen.h); null: at the
  /// op's own (b, h, i, j).
  const VarlenIndices *dropoutAt = nullptr;

  Value index(int64_t v);
  AffineExpr dim(unsigned d) { return getAffineDimExpr(d, b.getContext()); }
  AffineMap map(unsigned numDims, ArrayRef<AffineExpr> exprs) {
    return AffineMap::get(numDims, 0, exprs, b.getContext());
  }
  Value min(Value a, Value c);
  Value max(Value a, Value c);
  Value add(Value a, int64_t c);
  Value add(Value a, Value c);
  /// min(block, end - start): the extent of the tile starting at `start`,
  /// smaller than `block` for the tail.
  Value tileExtent(int64_t block, Value start, Value end);
};

/// A run of rows [start, start + size) of one (batch, head) of a 4-D
/// operand in layout `perm`, with all of its feature dimension.
struct RowSlice {
  ArrayRef<int64_t> perm;
  Value batch, head, start, size;
};

/// The rows as a rank-reduced 2-D tensor in the operand's own order:
/// [size, E] when S precedes D in the operand, else [E, size].
Value extractRows(LoopContext &c, Value operand, const RowSlice &rows);
/// Inserts a tile shaped like extractRows' result into `dest`.
Value insertRows(LoopContext &c, Value tile, Value dest, const RowSlice &rows);
/// The same, as a tensor.parallel_insert_slice at the builder's insertion
/// point (inside an scf.forall terminator).
void parallelInsertRows(LoopContext &c, Value tile, Value dest,
                        const RowSlice &rows);
/// The offsets, sizes and strides of `rows` in a 4-D operand whose
/// feature dimension has size `featureSize`.
void rowSliceGeometry(LoopContext &c, const RowSlice &rows, int64_t featureSize,
                      SmallVector<OpFoldResult> &offsets,
                      SmallVector<OpFoldResult> &sizes,
                      SmallVector<OpFoldResult> &strides);
/// Map of an extractRows tile inside a generic whose row loop is `row` and
/// feature loop is `feature`.
AffineMap rowsMap(LoopContext &c, ArrayRef<int64_t> perm, AffineExpr row,
                  AffineExpr feature, unsigned numDims);

/// [start, end) of the keys visible from queries [q0, q0 + m) (the whole
/// [0, Sk) without a band). The key loop runs exactly over it, so tiles
/// wholly outside the band are never visited.
std::pair<Value, Value> keyRangeForQueries(LoopContext &c, Value q0, Value m);
/// [start, end) of the queries that see keys [k0, k0 + n).
std::pair<Value, Value> queryRangeForKeys(LoopContext &c, Value k0, Value n);

/// A vector of one f32 per row (or a 2-D tile) filled with `value`.
Value filledTile(LoopContext &c, ArrayRef<OpFoldResult> sizes, float value);

/// X[i, j] = sum_d Q[i, d] K[j, d] in f32 for an [m, D] Q tile and an
/// [n, D] K tile (each in its operand's order).
Value buildRawDotTile(LoopContext &c, Value qTile, Value kTile, Value m,
                      Value n);

/// Logical position of a tile: its batch, query head and first row / key.
struct TileOrigin {
  Value batch, head, q0, k0;
};

/// S[i, j]: the score pipeline on X at (batch, head, q0 + i, k0 + j), with
/// bias and mask read from the whole operands (broadcast dims read 0).
Value buildScoreTile(LoopContext &c, Value rawDots, const TileOrigin &at);

/// Inside a generic over tile loops (i at `rowLoop`, j at `keyLoop`): the
/// logical ScoreIndex of the current element.
ScoreIndex tileScoreIndex(LoopContext &c, OpBuilder &b, Location loc,
                          const TileOrigin &at, unsigned rowLoop,
                          unsigned keyLoop);

/// The f32 dropout factor tile Z[i, j] at `at`, or null without dropout.
Value buildDropoutTile(LoopContext &c, Value like, const TileOrigin &at);

/// An elementwise generic over 2-D [m, n] f32 tiles (identity maps).
Value mapTiles(LoopContext &c, ValueRange tiles,
               function_ref<Value(OpBuilder &, Location, ValueRange)> fn);

/// An scf.for from `lb` to `ub` by `step` carrying `inits`; `body` builds
/// the iteration at the builder's insertion point and returns the values
/// to yield. Returns the loop's results.
SmallVector<Value> buildForLoop(
    LoopContext &c, Value lb, Value ub, Value step, ValueRange inits,
    function_ref<SmallVector<Value>(Value iv, ValueRange args)> body);

/// An f32 [rows, features] tile converted to `elt` after multiplying by
/// `factor`, laid out like extractRows' result for an operand in `perm`.
Value castRowsTile(LoopContext &c, Value tile, ArrayRef<int64_t> perm, Type elt,
                   float factor);

/// Sizes of a 2-D tile.
SmallVector<OpFoldResult> tileSizes(OpFoldResult rows, OpFoldResult cols);

} // namespace mlir::flash::loops

#endif
