//===- ForwardLoops.cpp - flash.attention as FlashAttention loops ---------===//
//
//   scf.forall (b, h, query block) {
//     m = -inf, l = 0, acc = 0                         [block-m rows, f32]
//     scf.for key block in band(query block) iter_args(m, l, acc) {
//       S = score pipeline(Q_blk K_blkᵀ)
//       m' = max(m, rowmax S); alpha = exp(m - m'); P = exp(S - m')
//       l' = alpha l + rowsum P; acc' = alpha acc + (P ∘ dropout) V_blk
//     }
//     O_blk = acc / l (0 for an empty row); LSE_blk = m + log l (+inf)
//   }
// where m' is the safe max (0 instead of -inf), so empty rows never NaN.
//
// FP8 (FlashOps.td): X is descaled by q_descale · k_descale; a first key
// loop computes the final row maxima, which the online loop starts from
// (alpha is then 1), so that P8 = e4m3(256 P) quantises exp(s - m) against
// the row maximum as the semantics state; V is weighted by P8 while l sums
// the unquantised P, and O = acc / l · v_descale / 256. Per-block descales
// (FlashOps.td) are read per row and key inside the tiles: Q's and K's
// factors multiply X element by element, V's weights P8 by its key's block.
//
// Block-sparse (the op decomposed by DecomposeBlockSparse.h, its lists
// given): the query tile is one sparse query block, and the key loop runs,
// for each block its lists name (partial, then full), over that block's
// keys in block-n tiles; unlisted blocks are never read.
//
//===----------------------------------------------------------------------===//
#include "LoopsLowering.h"
#include "Tiles.h"

#include "flashfuse/Conversion/Common/DecomposeBlockSparse.h"
#include "flashfuse/Conversion/Common/Fp8Math.h"
#include "flashfuse/Conversion/Common/Layout.h"
#include "flashfuse/Conversion/Common/LinalgBuilders.h"
#include "flashfuse/Conversion/Common/SoftmaxMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <optional>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::loops;

namespace {
/// The running statistics of one query block.
struct OnlineSoftmaxState {
  Value rowMax, rowSum, acc;
};

/// The tile's (i, j) as the query row q0 + i and the key k0 + j, inside a
/// generic over the tile.
std::pair<Value, Value> tilePosition(OpBuilder &b, Location loc,
                                     const TileOrigin &at) {
  auto idx = loopIndices(b, loc, 2);
  return {arith::AddIOp::create(b, loc, at.q0, idx[0]),
          arith::AddIOp::create(b, loc, at.k0, idx[1])};
}

/// FP8's dequantisation factors for one (batch, head): scalars read once
/// where the descales are per tensor or per head, read per row and key
/// inside the tiles where they are per block.
struct Fp8Factors {
  Value qDescale, kDescale, vDescale;
  int64_t blockQ, blockK; // descale_block_size
  Value batch, head, kvHead;
  Value qk; // q_descale · k_descale, when neither is per block
  Value v;  // v_descale, applied to O, when not per block

  /// q_descale · k_descale of the tile's element (i, j) at `at`, inside a
  /// generic over the tile.
  Value qkAt(OpBuilder &b, Location loc, const TileOrigin &at) const {
    if (qk)
      return qk;
    auto [row, key] = tilePosition(b, loc, at);
    Value qd = readDescale(b, loc, qDescale, batch, head, row, blockQ);
    Value kd = readDescale(b, loc, kDescale, batch, kvHead, key, blockK);
    return arith::MulFOp::create(b, loc, qd, kd);
  }
  /// v_descale of the tile's element (i, j)'s key block (only when V's is
  /// per block).
  Value vAt(OpBuilder &b, Location loc, const TileOrigin &at) const {
    Value key = tilePosition(b, loc, at).second;
    return readDescale(b, loc, vDescale, batch, kvHead, key, blockK);
  }
};
} // namespace

/// The score tile of a query tile and a key tile at `at`; `fp8` (FP8 only,
/// else null) descales the raw dots first.
static Value scoreTile(LoopContext &c, Value qTile, Value kTile, Value m,
                       Value n, const Fp8Factors *fp8, const TileOrigin &at) {
  Value dots = buildRawDotTile(c, qTile, kTile, m, n);
  if (fp8)
    dots = mapTiles(c, dots, [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
      return arith::MulFOp::create(b, loc, a[0], fp8->qkAt(b, loc, at));
    });
  return buildScoreTile(c, dots, at);
}

/// m' = max(m, rowmax S) for an [m, n] score tile.
static Value maxWithTile(LoopContext &c, Value scores, Value rowMax) {
  AffineExpr i = c.dim(0), j = c.dim(1);
  return buildGeneric(
      c.b, c.loc, scores, rowMax, {c.map(2, {i, j}), c.map(2, {i})},
      parallelThenReduction(1, 1),
      [](OpBuilder &b, Location loc, ValueRange a) -> Value {
        return arith::MaximumFOp::create(b, loc, a[0], a[1]);
      });
}

/// One key block's update of the online softmax. With FP8 (`fp8` set) the
/// state's row max is already final and P8 weights V.
static OnlineSoftmaxState updateWithKeyBlock(LoopContext &c,
                                             const OnlineSoftmaxState &state,
                                             Value qTile, Value m, Value k0,
                                             Value kEnd, const TileOrigin &at,
                                             const Fp8Factors *fp8) {
  Value n = c.tileExtent(c.blockN, k0, kEnd);
  Value kvHead = arith::DivUIOp::create(c.b, c.loc, at.head, c.index(c.group));
  Value kTile = extractRows(
      c, c.op.getQKV()[1], {c.op.getKeyPerm(), at.batch, kvHead, k0, n});
  Value vTile = extractRows(
      c, c.op.getQKV()[2], {c.op.getValuePerm(), at.batch, kvHead, k0, n});
  Value scores = scoreTile(c, qTile, kTile, m, n, fp8, at);

  AffineExpr i = c.dim(0), j = c.dim(1);
  AffineMap tile = c.map(2, {i, j}), row = c.map(2, {i});
  Value newMax = maxWithTile(c, scores, state.rowMax);
  // P = exp(S - safe(m')).
  Value probs = buildGeneric(
      c.b, c.loc, {scores, newMax},
      tensor::EmptyOp::create(c.b, c.loc, tileSizes(m, n), c.b.getF32Type()),
      {tile, row, tile}, parallelThenReduction(2, 0),
      [](OpBuilder &b, Location loc, ValueRange a) -> Value {
        Value safe = buildSafeRowMax(b, loc, a[1]);
        return math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, a[0], safe));
      });
  Value blockSum = buildGeneric(
      c.b, c.loc, probs, filledTile(c, {m}, 0.0f), {tile, row},
      parallelThenReduction(1, 1),
      [](OpBuilder &b, Location loc, ValueRange a) -> Value {
        return arith::AddFOp::create(b, loc, a[0], a[1]);
      });
  // alpha = exp(m - safe(m')) rescales what was accumulated before: 0 while
  // the row has seen only masked keys (m = -inf).
  AffineMap id1 = c.map(1, {c.dim(0)});
  Value alpha = buildGeneric(
      c.b, c.loc, {state.rowMax, newMax},
      tensor::EmptyOp::create(c.b, c.loc, ArrayRef<OpFoldResult>{m}, c.b.getF32Type()),
      {id1, id1, id1}, parallelThenReduction(1, 0),
      [](OpBuilder &b, Location loc, ValueRange a) -> Value {
        Value safe = buildSafeRowMax(b, loc, a[1]);
        return math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, a[0], safe));
      });
  Value newSum = buildGeneric(
      c.b, c.loc, {alpha, state.rowSum, blockSum},
      tensor::EmptyOp::create(c.b, c.loc, ArrayRef<OpFoldResult>{m}, c.b.getF32Type()),
      {id1, id1, id1, id1}, parallelThenReduction(1, 0),
      [](OpBuilder &b, Location loc, ValueRange a) -> Value {
        return arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, a[0], a[1]),
                                     a[2]);
      });
  Value scaledAcc = buildGeneric(
      c.b, c.loc, {state.acc, alpha},
      tensor::EmptyOp::create(c.b, c.loc, tileSizes(m, c.b.getIndexAttr(c.sz.dv)),
                              c.b.getF32Type()),
      {tile, row, tile}, parallelThenReduction(2, 0),
      [](OpBuilder &b, Location loc, ValueRange a) -> Value {
        return arith::MulFOp::create(b, loc, a[0], a[1]);
      });
  // FP8 weights V with P8 = e4m3(256 P) (times its key's per-block
  // v_descale); l above summed the unquantised P.
  if (fp8)
    probs = mapTiles(c, probs, [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
      Value p8 = quantizeProbability(b, loc, a[0]);
      if (fp8->v)
        return p8;
      return arith::MulFOp::create(b, loc, p8, fp8->vAt(b, loc, at));
    });
  // Dropout scales the probabilities V is weighted with, not the sum l.
  if (Value factor = buildDropoutTile(c, probs, at))
    probs = mapTiles(c, {probs, factor},
                     [](OpBuilder &b, Location loc, ValueRange a) -> Value {
                       return arith::MulFOp::create(b, loc, a[0], a[1]);
                     });
  // acc' = alpha acc + P V; loops (i, e, j).
  AffineExpr e = c.dim(1), jj = c.dim(2);
  Value newAcc = buildGeneric(
      c.b, c.loc, {probs, vTile}, scaledAcc,
      {c.map(3, {c.dim(0), jj}), rowsMap(c, c.op.getValuePerm(), jj, e, 3),
       c.map(3, {c.dim(0), e})},
      parallelThenReduction(2, 1),
      multiplyAccumulateF32);
  return {newMax, newSum, newAcc};
}

LogicalResult mlir::flash::loops::lowerAttention(
    AttentionOp op, int64_t blockM, int64_t blockN,
    const BlockSparseOperands &lists, const VarlenIndices *dropoutAt) {
  OpBuilder b(op);
  LoopContext c = makeLoopContext(b, op, blockM, blockN, dropoutAt);
  Location loc = c.loc;
  auto qPerm = c.op.getQueryPerm();
  auto outType = op.getOutput().getType();
  SmallVector<Value> outs = {
      tensor::EmptyOp::create(b, loc, outType.getShape(), outType.getElementType())};
  if (op.getLse())
    outs.push_back(tensor::EmptyOp::create(b, loc, op.getLse().getType().getShape(),
                                           b.getF32Type()));
  int64_t numQueryBlocks = llvm::divideCeil(c.sz.seqQ, blockM);
  auto forall = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0), b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(c.sz.batch), b.getIndexAttr(c.sz.headsQ),
                             b.getIndexAttr(numQueryBlocks)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1), b.getIndexAttr(1)},
      outs, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forall.getTerminator());
    auto ivs = forall.getInductionVars();
    Value batch = ivs[0], head = ivs[1];
    Value q0 = arith::MulIOp::create(b, loc, ivs[2], c.index(blockM));
    Value m = c.tileExtent(blockM, q0, c.index(c.sz.seqQ));
    Value qTile = extractRows(c, c.op.getQKV()[0], {qPerm, batch, head, q0, m});

    // The key loop runs over the band only: blocks that every query of this
    // block masks are not visited at all.
    auto [kStart, kEnd] = keyRangeForQueries(c, q0, m);
    // FP8 only, so that other ops lower to the same IR as before.
    std::optional<Fp8Factors> fp8;
    Value kvHead;
    if (op.isFp8()) {
      kvHead = arith::DivUIOp::create(b, loc, head, c.index(c.group));
      auto [bq, bk] = op.getDescaleBlocks();
      fp8 = Fp8Factors{op.getQDescale(), op.getKDescale(), op.getVDescale(),
                       bq, bk, batch, head, kvHead, Value(), Value()};
      // One statement per op: the IR must not depend on the order C++
      // evaluates arguments in.
      if (!isBlockDescale(op.getQDescale()) &&
          !isBlockDescale(op.getKDescale())) {
        Value qd = readDescale(b, loc, op.getQDescale(), batch, head);
        Value kd = readDescale(b, loc, op.getKDescale(), batch, kvHead);
        fp8->qk = arith::MulFOp::create(b, loc, qd, kd);
      }
      if (!isBlockDescale(op.getVDescale()))
        fp8->v = readDescale(b, loc, op.getVDescale(), batch, kvHead);
    }
    const Fp8Factors *fp8Factors = fp8 ? &*fp8 : nullptr;
    Value initMax = filledTile(c, {m}, -INFINITY);
    if (fp8) {
      // The row maxima over every visible key, before any P is quantised.
      initMax = buildForLoop(
          c, kStart, kEnd, c.index(blockN), initMax,
          [&](Value k0, ValueRange args) -> SmallVector<Value> {
            Value n = c.tileExtent(blockN, k0, kEnd);
            Value kTile = extractRows(
                c, c.op.getQKV()[1], {c.op.getKeyPerm(), batch, kvHead, k0, n});
            Value scores = scoreTile(c, qTile, kTile, m, n, fp8Factors,
                                     {batch, head, q0, k0});
            return {maxWithTile(c, scores, args[0])};
          })[0];
    }
    SmallVector<Value> init = {initMax, filledTile(c, {m}, 0.0f),
                               filledTile(c, tileSizes(m, c.b.getIndexAttr(c.sz.dv)), 0.0f)};
    // The online softmax over keys [first, last) in block-n tiles.
    auto walkKeys = [&](Value first, Value last,
                        ValueRange state) -> SmallVector<Value> {
      auto keyLoop = scf::ForOp::create(b, loc, first, last, c.index(blockN), state);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(keyLoop.getBody());
      auto args = keyLoop.getRegionIterArgs();
      OnlineSoftmaxState next = updateWithKeyBlock(
          c, {args[0], args[1], args[2]}, qTile, m, keyLoop.getInductionVar(), last,
          {batch, head, q0, keyLoop.getInductionVar()}, fp8Factors);
      scf::YieldOp::create(b, loc, ValueRange{next.rowMax, next.rowSum, next.acc});
      return SmallVector<Value>(keyLoop.getResults());
    };
    // Block-sparse: the listed blocks of this query block (ivs[2], the
    // tile being one sparse query block) instead of the band.
    SmallVector<Value> final =
        lists ? forEachListedKeyBlock(b, loc, lists, c.sz.seqK, batch, head,
                                      ivs[2], init, walkKeys)
              : walkKeys(kStart, kEnd, init);
    Value rowMax = final[0], rowSum = final[1], acc = final[2];

    // O = acc / l in the output's element type and Q's layout.
    AffineExpr i = c.dim(0), e = c.dim(1);
    SmallVector<OpFoldResult> oTileSizes = tileSizes(m, c.b.getIndexAttr(c.sz.dv));
    if (!seqBeforeHeadDim(qPerm))
      std::swap(oTileSizes[0], oTileSizes[1]);
    Type outElt = outType.getElementType();
    Value oTile = buildGeneric(
        b, loc, {acc, rowSum}, tensor::EmptyOp::create(b, loc, oTileSizes, outElt),
        {c.map(2, {i, e}), c.map(2, {i}), rowsMap(c, qPerm, i, e, 2)},
        parallelThenReduction(2, 0),
        [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
          Value o = buildNormalizedOutput(b, loc, a[0], a[1]);
          if (fp8) {
            // A per-block v_descale is in acc already.
            Value factor = constF32(b, loc, 1.0f / kFp8ProbScale);
            if (fp8->v)
              factor = arith::MulFOp::create(b, loc, fp8->v, factor);
            o = arith::MulFOp::create(b, loc, o, factor);
          }
          return castFromF32(b, loc, o, outElt);
        });
    Value lseTile;
    if (op.getLse()) {
      AffineMap id1 = c.map(1, {c.dim(0)});
      lseTile = buildGeneric(
          b, loc, {rowMax, rowSum},
          tensor::EmptyOp::create(b, loc, ArrayRef<OpFoldResult>{m}, b.getF32Type()),
          {id1, id1, id1}, parallelThenReduction(1, 0),
          [](OpBuilder &b, Location loc, ValueRange a) -> Value {
            return buildLogSumExp(b, loc, buildSafeRowMax(b, loc, a[0]), a[1]);
          });
    }
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    auto shared = forall.getRegionIterArgs();
    parallelInsertRows(c, oTile, shared[0], {qPerm, batch, head, q0, m});
    if (lseTile) {
      OpFoldResult one = b.getIndexAttr(1);
      tensor::ParallelInsertSliceOp::create(
          b, loc, lseTile, shared[1], ArrayRef<OpFoldResult>{batch, head, q0},
          ArrayRef<OpFoldResult>{one, one, m}, ArrayRef<OpFoldResult>{one, one, one});
    }
  }
  op->replaceAllUsesWith(forall.getResults());
  op->erase();
  return success();
}
