//===- DecomposeKVCache.cpp - flash.attention_kvcache in other ops --------===//
//
// Three steps, each written straight from docs/KVCACHE.md:
//  0. with rotary_cos / rotary_sin, key_new and the query are rotated at
//     their positions (elementwise: each element reads its pair's partner);
//  1. with new_kv, row t of key_new[b] / value_new[b] is written to cache row
//     cache_seqlens[b] + t of sequence b (through the block table when
//     paged), element by element so that every layout is the same loop;
//  2. a paged cache is gathered into a dense [B, Hkv, C, D] tensor through
//     the block table, a pool of sequences (cache_batch_idx) through the
//     indices;
//  3. a flash.attention over the (dense) caches, Sk = C, whose mask_mod keeps
//     key j for query i of sequence b iff cache_leftpad[b] <= j < L_b =
//     cache_seqlens[b] + Snew (no lower bound without cache_leftpad) and j
//     lies in the causal / window band around diag(i) = i + L_b - Sq; with
//     alibi_slopes, a score_mod subtracts slope * |diag(i) - j|.
// An FP8 (f8E4M3FN) cache adds two steps of its own: new rows are quantised
// with 1 / descale as they are written (step 1), and the dense caches are
// dequantised into f32 before step 3, whose flash.attention then runs on
// f32 operands (Q widened, O narrowed back to Q's type): the exact
// dequantised semantics of FlashOps.td, with no FP8 attention involved.
// Inputs outside the contract (lengths outside [0, C], page indices outside
// [0, num_pages)) give a wrong answer but never an out-of-bounds access: new
// rows outside [0, C) or on a page outside [0, num_pages) are not written,
// and page indices are clamped where they are read, as in the kernels.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Conversion/Common/DecomposeKVCache.h"

#include "flashfuse/Conversion/Common/AlibiScoreMod.h"

#include "flashfuse/Conversion/Common/Fp8Math.h"
#include "flashfuse/Conversion/Common/Layout.h"
#include "flashfuse/Conversion/Common/LinalgBuilders.h"
#include "flashfuse/Conversion/Common/SoftmaxMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::flash;

namespace {
class KVCacheDecomposer {
public:
  KVCacheDecomposer(OpBuilder &b, AttentionKVCacheOp op)
      : b(b), loc(op.getLoc()), op(op), batch(op.getBatch()),
        headsKV(op.getHeadsKV()), seqQ(op.getSeqQ()),
        capacity(op.getCapacity()), newRows(op.getNewRows()),
        pageSize(op.getPageSize()), numPages(op.getNumPages()) {}

  /// The values replacing the op's results, in order.
  SmallVector<Value> build() {
    Value keys = op.getKeyCache(), values = op.getValueCache();
    Value query = op.getQuery(), keyNew = op.getKeyNew();
    if (op.hasRotary()) {
      query = rotate(query, /*isQuery=*/true);
      keyNew = rotate(keyNew, /*isQuery=*/false);
    }
    if (op.hasNewKV())
      std::tie(keys, values) = appendNewRows(keyNew, keys, values);
    SmallVector<Value> results;
    Value denseKeys = keys, denseValues = values;
    if (gathers()) {
      denseKeys = gatherSequences(keys, op.getHeadDim(), op.getKeyPerm());
      denseValues =
          gatherSequences(values, op.getHeadDimV(), op.getValuePerm());
    }
    Type outType = op.getOutput().getType();
    if (op.hasFp8Cache()) {
      // Gathered caches are [B, Hkv, C, D]; a contiguous one keeps its
      // perm.
      SmallVector<int64_t, 4> identity = {0, 1, 2, 3};
      denseKeys = dequantize(denseKeys,
                             gathers() ? identity : op.getKeyPerm(),
                             op.getKDescale());
      denseValues = dequantize(denseValues,
                               gathers() ? identity : op.getValuePerm(),
                               op.getVDescale());
      query = convertElements(query, b.getF32Type());
      outType = cast<RankedTensorType>(outType).clone(b.getF32Type());
    }
    AttentionOp attention =
        buildAttention(query, denseKeys, denseValues, outType);
    Value output = attention.getOutput();
    if (op.hasFp8Cache())
      output = convertElements(
          output, getElementTypeOrSelf(op.getOutput().getType()));
    results.push_back(output);
    if (op.getLse())
      results.push_back(attention.getLse());
    if (op.hasNewKV()) {
      results.push_back(keys);
      results.push_back(values);
    }
    return results;
  }

private:
  OpBuilder &b;
  Location loc;
  AttentionKVCacheOp op;
  int64_t batch, headsKV, seqQ, capacity, newRows, pageSize, numPages;

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  /// cache_seqlens[bIdx] (or any i32 element) as an index.
  Value extractIndex(Value tensor, ValueRange indices) {
    Value v = tensor::ExtractOp::create(b, loc, tensor, indices);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }

  /// True when the attention reads the caches gathered into
  /// [B, Hkv, C, D] (step 2): paged, or a pool named by cache_batch_idx.
  bool gathers() { return op.isPaged() || op.hasCacheBatchIdx(); }

  /// cache_batch_idx[bIdx] as an index, unclamped.
  Value poolRow(Value bIdx) {
    return extractIndex(op.getCacheBatchIdx(), bIdx);
  }

  /// The position of element (bIdx, h, row, d) of sequence bIdx's cache in
  /// the cache operand: through the block table when paged (page index
  /// clamped into [0, num_pages)), else through k_perm / v_perm, at row
  /// cache_batch_idx[bIdx] (clamped into [0, Bc)) of a pool.
  SmallVector<Value, 4> cacheIndices(Value bIdx, Value h, Value row, Value d,
                                     ArrayRef<int64_t> perm) {
    if (op.hasCacheBatchIdx()) {
      Value r = arith::MaxSIOp::create(b, loc, poolRow(bIdx), index(0));
      r = arith::MinSIOp::create(b, loc, r, index(op.getCacheBatch() - 1));
      return toOperandOrder<Value>({r, h, row, d}, perm);
    }
    if (!op.isPaged())
      return toOperandOrder<Value>({bIdx, h, row, d}, perm);
    Value ps = index(pageSize);
    Value slot = arith::DivUIOp::create(b, loc, row, ps);
    Value page = extractIndex(op.getBlockTable(), {bIdx, slot});
    page = arith::MaxSIOp::create(b, loc, page, index(0));
    page = arith::MinSIOp::create(b, loc, page, index(numPages - 1));
    Value offset = arith::RemUIOp::create(b, loc, row, ps);
    return {page, offset, h, d};
  }

  /// for iv in [0, n) carrying `init`; `body` returns the next values.
  SmallVector<Value>
  forLoop(int64_t n, ValueRange init,
          function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    Value lb = index(0), ub = index(n), step = index(1);
    auto loop = scf::ForOp::create(
        b, loc, lb, ub, step, init,
        [&](OpBuilder &nb, Location, Value iv, ValueRange args) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          scf::YieldOp::create(b, loc, body(iv, args));
        });
    return loop.getResults();
  }

  /// Copies new[bIdx, h, t, :] (layout of Q) into cache row `row`;
  /// quantised with `invDescale` (1 / descale of (bIdx, h)) when given.
  Value copyRow(Value newRowsOperand, Value cache, int64_t width,
                ArrayRef<int64_t> cachePerm, Value bIdx, Value h, Value t,
                Value row, Value invDescale) {
    auto qPerm = op.getQueryPerm();
    return forLoop(width, cache, [&](Value d, ValueRange args) {
             Value x = tensor::ExtractOp::create(
                 b, loc, newRowsOperand,
                 toOperandOrder<Value>({bIdx, h, t, d}, qPerm));
             if (invDescale)
               x = quantizeToE4M3(b, loc, x, invDescale);
             Value updated = tensor::InsertOp::create(
                 b, loc, x, args[0], cacheIndices(bIdx, h, row, d, cachePerm));
             return SmallVector<Value>{updated};
           })
        .front();
  }

  /// Step 0: `x` (the query, or key_new: both in the layout of Q) with the
  /// first 2r elements of every row rotated at the row's position p,
  /// computed in f32 and rounded back to x's type:
  ///   first of a pair (x0):  x0 * cos[p, e] - x1 * sin[p, e]
  ///   second (x1):           x1 * cos[p, e] + x0 * sin[p, e]
  /// with pairs (e, e + r) (halves) or (2e, 2e + 1) (interleaved). p is
  /// cache_seqlens[b] + s (key_new; the query when its rows sit apart),
  /// else cache_seqlens[b], clamped into [0, R) where it is read.
  Value rotate(Value x, bool isQuery) {
    auto type = cast<RankedTensorType>(x.getType());
    Type elt = type.getElementType();
    SmallVector<OpFoldResult> sizes;
    for (int64_t n : type.getShape())
      sizes.push_back(b.getIndexAttr(n));
    Value init = buildEmpty(b, loc, sizes, elt);
    AffineMap identity = b.getMultiDimIdentityMap(4);
    auto qPerm = op.getQueryPerm();
    int64_t pairs = op.getRotaryPairs();
    int64_t positions = cast<RankedTensorType>(op.getRotaryCos().getType())
                            .getDimSize(0);
    bool ownRow = !isQuery || op.rotatesQueryRowsApart();
    bool interleaved = op.getRotaryInterleaved();
    return buildGeneric(
        b, loc, x, init, {identity, identity}, parallelThenReduction(4, 0),
        [&](OpBuilder &nb, Location, ValueRange args) -> Value {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          auto ids = loopIndices(b, loc, 4);
          Value bIdx = ids[qPerm[0]], h = ids[qPerm[1]], row = ids[qPerm[2]],
                d = ids[qPerm[3]];
          auto cmp = [&](arith::CmpIPredicate p, Value l, Value r) -> Value {
            return arith::CmpIOp::create(b, loc, p, l, r);
          };
          auto select = [&](Value c, Value t, Value f) -> Value {
            return arith::SelectOp::create(b, loc, c, t, f);
          };
          Value r = index(pairs), one = index(1), zero = index(0);
          Value rotated = cmp(arith::CmpIPredicate::ult, d, index(2 * pairs));
          // Which of its pair d is, the pair's e and the partner's index;
          // an element past 2r computes a pair too (partner and e kept in
          // range) and is then not taken.
          Value first, e, partner;
          if (interleaved) {
            Value odd = arith::AndIOp::create(b, loc, d, one);
            first = cmp(arith::CmpIPredicate::eq, odd, zero);
            e = arith::DivUIOp::create(b, loc, d, index(2));
            partner = arith::XOrIOp::create(b, loc, d, one);
          } else {
            first = cmp(arith::CmpIPredicate::ult, d, r);
            Value dPlus = arith::AddIOp::create(b, loc, d, r);
            Value dMinus = arith::SubIOp::create(b, loc, d, r);
            e = select(first, d, dMinus);
            partner = select(first, dPlus, dMinus);
          }
          e = select(rotated, e, zero);
          partner = select(rotated, partner, d);
          Value pos = extractIndex(op.getCacheSeqlens(), bIdx);
          if (ownRow)
            pos = arith::AddIOp::create(b, loc, pos, row);
          pos = arith::MaxSIOp::create(b, loc, pos, zero);
          pos = arith::MinSIOp::create(b, loc, pos, index(positions - 1));
          Value self = castToF32(b, loc, args[0]);
          Value other = castToF32(
              b, loc,
              tensor::ExtractOp::create(
                  b, loc, x,
                  toOperandOrder<Value>({bIdx, h, row, partner}, qPerm)));
          Value cosv = castToF32(
              b, loc,
              tensor::ExtractOp::create(b, loc, op.getRotaryCos(),
                                        ValueRange{pos, e}));
          Value sinv = castToF32(
              b, loc,
              tensor::ExtractOp::create(b, loc, op.getRotarySin(),
                                        ValueRange{pos, e}));
          Value selfCos = arith::MulFOp::create(b, loc, self, cosv);
          Value otherSin = arith::MulFOp::create(b, loc, other, sinv);
          Value asFirst = arith::SubFOp::create(b, loc, selfCos, otherSin);
          Value asSecond = arith::AddFOp::create(b, loc, selfCos, otherSin);
          Value out = select(first, asFirst, asSecond);
          out = castFromF32(b, loc, out, elt);
          return select(rotated, out, args[0]);
        });
  }

  /// Step 1: rows [cache_seqlens[b], cache_seqlens[b] + Snew) of each
  /// sequence := keyNew[b] (key_new, rotated with rotary) / value_new[b];
  /// rows outside [0, C), on a page outside [0, num_pages) or of a pool
  /// index outside [0, Bc) are dropped.
  std::pair<Value, Value> appendNewRows(Value keyNew, Value keys,
                                        Value values) {
    auto kPerm = op.getKeyPerm(), vPerm = op.getValuePerm();
    int64_t d = op.getHeadDim(), dv = op.getHeadDimV();
    auto updated = forLoop(batch, {keys, values}, [&](Value bIdx,
                                                      ValueRange caches) {
      Value start = extractIndex(op.getCacheSeqlens(), bIdx);
      return forLoop(newRows, caches, [&](Value t, ValueRange caches) {
        // One statement per op: C++ leaves the order of argument
        // evaluation open, and the IR must not depend on the compiler.
        Value row = arith::AddIOp::create(b, loc, start, t);
        Value zero = index(0), cap = index(capacity);
        Value notBelow =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, row, zero);
        Value below =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row, cap);
        Value inRange = arith::AndIOp::create(b, loc, notBelow, below);
        if (op.isPaged()) {
          // A row on a page outside [0, num_pages) is dropped too, never
          // clamped onto another page (another sequence's rows), as the
          // kv_append kernel does. Its table entry is read at a slot kept
          // inside the table for rows outside the cache.
          Value ps = index(pageSize);
          Value rowSlot = arith::DivUIOp::create(b, loc, row, ps);
          Value slot =
              arith::SelectOp::create(b, loc, inRange, rowSlot, zero);
          Value page = extractIndex(op.getBlockTable(), {bIdx, slot});
          Value pages = index(numPages);
          Value pageNotBelow = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::sge, page, zero);
          Value pageBelow = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::slt, page, pages);
          Value pageOk =
              arith::AndIOp::create(b, loc, pageNotBelow, pageBelow);
          inRange = arith::AndIOp::create(b, loc, inRange, pageOk);
        }
        if (op.hasCacheBatchIdx()) {
          // Never clamped onto another sequence's row of the pool.
          Value at = poolRow(bIdx);
          Value atNotBelow = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::sge, at, zero);
          Value atBelow = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::slt, at,
              index(op.getCacheBatch()));
          Value atOk = arith::AndIOp::create(b, loc, atNotBelow, atBelow);
          inRange = arith::AndIOp::create(b, loc, inRange, atOk);
        }
        auto ifOp = scf::IfOp::create(b, loc, caches.getTypes(), inRange,
                                      /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          SmallVector<Value> rows =
              forLoop(headsKV, caches, [&](Value h, ValueRange cs) {
                Value kInv, vInv;
                if (op.hasFp8Cache()) {
                  kInv = reciprocal(readDescale(b, loc, op.getKDescale(),
                                                bIdx, h));
                  vInv = reciprocal(readDescale(b, loc, op.getVDescale(),
                                                bIdx, h));
                }
                Value k = copyRow(keyNew, cs[0], d, kPerm, bIdx, h, t, row,
                                  kInv);
                Value v = copyRow(op.getValueNew(), cs[1], dv, vPerm, bIdx, h,
                                  t, row, vInv);
                return SmallVector<Value>{k, v};
              });
          scf::YieldOp::create(b, loc, rows);
          b.setInsertionPointToStart(ifOp.elseBlock());
          scf::YieldOp::create(b, loc, caches);
        }
        return SmallVector<Value>(ifOp.getResults());
      });
    });
    return {updated[0], updated[1]};
  }

  /// Step 2: dense[b, h, j, :] = pages[table[b, j / page_size],
  /// j % page_size, h, :] (paged) or cache[cache_batch_idx[b], h, j, :]
  /// (a pool, through `perm`), as [B, Hkv, C, width].
  Value gatherSequences(Value cache, int64_t width, ArrayRef<int64_t> perm) {
    Type elt = cast<ShapedType>(cache.getType()).getElementType();
    Value init = buildEmpty(
        b, loc,
        {b.getIndexAttr(batch), b.getIndexAttr(headsKV),
         b.getIndexAttr(capacity), b.getIndexAttr(width)},
        elt);
    AffineMap identity = b.getMultiDimIdentityMap(4);
    return buildGeneric(
        b, loc, /*inputs=*/{}, init, {identity}, parallelThenReduction(4, 0),
        [&](OpBuilder &nb, Location, ValueRange) -> Value {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          auto ids = loopIndices(b, loc, 4);
          return tensor::ExtractOp::create(
              b, loc, cache,
              cacheIndices(ids[0], ids[1], ids[2], ids[3], perm));
        });
  }

  /// The f32 1 / d: the IEEE division a kernel's rcp.rn also computes, so
  /// that both quantise a new row alike.
  Value reciprocal(Value d) {
    Value one = constF32(b, loc, 1.0f);
    return arith::DivFOp::create(b, loc, one, d);
  }

  /// FP8 cache: descale[b, h] * f32(cache8) in f32, elementwise over the
  /// cache's own shape; `perm` places B and H in it (logical -> operand
  /// dimension).
  Value dequantize(Value cache, ArrayRef<int64_t> perm, Value descale) {
    auto type = cast<RankedTensorType>(cache.getType());
    SmallVector<OpFoldResult> sizes;
    for (int64_t n : type.getShape())
      sizes.push_back(b.getIndexAttr(n));
    Value init = buildEmpty(b, loc, sizes, b.getF32Type());
    AffineMap identity = b.getMultiDimIdentityMap(4);
    return buildGeneric(
        b, loc, cache, init, {identity, identity}, parallelThenReduction(4, 0),
        [&](OpBuilder &nb, Location, ValueRange args) -> Value {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          auto ids = loopIndices(b, loc, 4);
          Value d = readDescale(b, loc, descale, ids[perm[0]], ids[perm[1]]);
          return dequantizeE4M3(b, loc, args[0], d);
        });
  }

  /// `t` with its elements converted (extf / truncf) to `elt`.
  Value convertElements(Value t, Type elt) {
    auto type = cast<RankedTensorType>(t.getType());
    SmallVector<OpFoldResult> sizes;
    for (int64_t n : type.getShape())
      sizes.push_back(b.getIndexAttr(n));
    Value init = buildEmpty(b, loc, sizes, elt);
    AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
    return buildGeneric(
        b, loc, t, init, {identity, identity},
        parallelThenReduction(type.getRank(), 0),
        [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
          Value x = castToF32(nb, l, args[0]);
          return castFromF32(nb, l, x, elt);
        });
  }

  /// L_b = cache_seqlens[bIdx] + Snew, as an index.
  Value sequenceLength(Value bIdx) {
    Value len = extractIndex(op.getCacheSeqlens(), bIdx);
    if (newRows == 0)
      return len;
    Value snew = index(newRows);
    return arith::AddIOp::create(b, loc, len, snew);
  }

  /// ALiBi as the attention's score_mod: s - slope * |diag(i) - j| with
  /// diag(i) = i + L_b - Sq (buildAlibiScoreMod).
  void buildAlibiScoreMod(AttentionOp attention) {
    flash::buildAlibiScoreMod(
        b, loc, attention.getScoreMod(), op.getAlibiSlopes(),
        [&](OpBuilder &, Location, Value bIdx) -> Value {
          return arith::SubIOp::create(b, loc, sequenceLength(bIdx),
                                       index(seqQ));
        });
  }

  /// Step 3: attention over all C rows; the mask_mod keeps what the
  /// contract makes visible. `outType` is O's (f32 over an FP8 cache).
  AttentionOp buildAttention(Value query, Value keys, Value values,
                             Type outType) {
    bool gathered = gathers();
    Type lseType = op.getLse() ? op.getLse().getType() : Type();
    auto attention = AttentionOp::create(
        b, loc, outType, lseType, query, keys,
        values, /*bias=*/Value(), /*mask=*/Value(), /*seed=*/Value(),
        /*cu_seqlens_q=*/Value(), /*cu_seqlens_k=*/Value(),
        // An FP8 cache is dequantised before: the attention is f32.
        /*q_descale=*/Value(), /*k_descale=*/Value(), /*v_descale=*/Value(),
        /*kv_num_blocks=*/Value(), /*kv_indices=*/Value(),
        /*full_kv_num_blocks=*/Value(), /*full_kv_indices=*/Value(),
        // ALiBi's diagonal is per sequence: folded into score_mod below.
        /*alibi_slopes=*/Value(), op.getScaleAttr(),
        /*causal=*/CausalAlignmentAttr(),
        /*window_left=*/IntegerAttr(), /*window_right=*/IntegerAttr(),
        op.getSoftcapAttr(), /*dropout_p=*/FloatAttr(), op.getQPermAttr(),
        gathered ? DenseI64ArrayAttr() : op.getKPermAttr(),
        gathered ? DenseI64ArrayAttr() : op.getVPermAttr(),
        /*config=*/KernelConfigAttr(),
        /*sparse_block_size=*/DenseI64ArrayAttr(),
        /*descale_block_size=*/DenseI64ArrayAttr());

    OpBuilder::InsertionGuard guard(b);
    Type idx = b.getIndexType();
    if (op.hasAlibi())
      buildAlibiScoreMod(attention);
    Block *body = b.createBlock(&attention.getMaskMod(), {},
                                {idx, idx, idx, idx},
                                SmallVector<Location>(4, loc));
    Value bIdx = body->getArgument(0), i = body->getArgument(2),
          j = body->getArgument(3);
    // L_b, and diag(i) = i + L_b - Sq only when a band needs it. Index
    // arithmetic is signed: diag is negative for the first rows when
    // Sq > L_b. One statement per op, so that the IR does not depend on the
    // compiler's order of evaluating arguments.
    Value len = sequenceLength(bIdx);
    auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) -> Value {
      return arith::CmpIOp::create(b, loc, p, x, y);
    };
    Value keep = cmp(arith::CmpIPredicate::slt, j, len);
    auto conj = [&](Value c) { keep = arith::AndIOp::create(b, loc, keep, c); };
    if (op.hasLeftPad())
      conj(cmp(arith::CmpIPredicate::sge, j,
               extractIndex(op.getCacheLeftpad(), bIdx)));
    std::optional<uint64_t> left = op.getWindowLeft(),
                            right = op.getWindowRight();
    if (!op.isCausal() && !left && !right) {
      YieldOp::create(b, loc, keep);
      return attention;
    }
    Value sq = index(seqQ);
    Value iPlusLen = arith::AddIOp::create(b, loc, i, len);
    Value diag = arith::SubIOp::create(b, loc, iPlusLen, sq);
    if (op.isCausal())
      conj(cmp(arith::CmpIPredicate::sle, j, diag));
    if (left) {
      Value w = index(int64_t(*left));
      Value lo = arith::SubIOp::create(b, loc, diag, w);
      conj(cmp(arith::CmpIPredicate::sge, j, lo));
    }
    if (right) {
      Value w = index(int64_t(*right));
      Value hi = arith::AddIOp::create(b, loc, diag, w);
      conj(cmp(arith::CmpIPredicate::sle, j, hi));
    }
    YieldOp::create(b, loc, keep);
    return attention;
  }
};

struct DecomposeAttentionKVCachePattern
    : OpRewritePattern<AttentionKVCacheOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionKVCacheOp op,
                                PatternRewriter &rewriter) const override {
    auto isStatic = [](Type t) {
      return cast<RankedTensorType>(t).hasStaticShape();
    };
    if (!llvm::all_of(op->getOperandTypes(), isStatic) ||
        !llvm::all_of(op->getResultTypes(), isStatic))
      return rewriter.notifyMatchFailure(op, "dynamic shapes");
    decomposeAttentionKVCache(rewriter, op);
    return success();
  }
};
} // namespace

void mlir::flash::decomposeAttentionKVCache(RewriterBase &rewriter,
                                            AttentionKVCacheOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  SmallVector<Value> results = KVCacheDecomposer(rewriter, op).build();
  rewriter.replaceOp(op, results);
}

LogicalResult mlir::flash::decomposeKVCacheOps(Operation *root,
                                               StringRef lowering) {
  // Collected first: the rewrite replaces the ops being walked.
  SmallVector<AttentionKVCacheOp> ops;
  root->walk([&](AttentionKVCacheOp op) { ops.push_back(op); });
  IRRewriter rewriter(root->getContext());
  bool refused = false;
  for (AttentionKVCacheOp op : ops) {
    // The loop bounds, the capacity clamp and the page arithmetic are
    // compile-time constants.
    if (failed(requireStaticShapes(op, lowering))) {
      refused = true;
      continue;
    }
    decomposeAttentionKVCache(rewriter, op);
  }
  return failure(refused);
}

void mlir::flash::populateDecomposeKVCachePatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeAttentionKVCachePattern>(patterns.getContext());
}
