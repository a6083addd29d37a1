//===- AttentionKVCacheOp.cpp - flash.attention_kvcache -------------------===//
//
// Sizes, the result-type syntax and the verifier of the decoding op
// (docs/KVCACHE.md is the contract). Messages follow flash.attention's: they
// name the operand and print the shape it must have in its own dimension
// order, `?` for sizes left free.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"
#include "VerifierUtils.h"

#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::detail;

static constexpr int64_t kDyn = ShapedType::kDynamic;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Logical [B, H, S, D] of a rank-4 operand under `perm`.
static SmallVector<int64_t, 4> logical(Value v, ArrayRef<int64_t> perm) {
  ArrayRef<int64_t> shape = shapeOf(v);
  SmallVector<int64_t, 4> l;
  for (int64_t operandDim : perm)
    l.push_back(shape[operandDim]);
  return l;
}

// Paged caches have the fixed layout [num_pages, page_size, Hkv, D].
enum PagedDim { kPage = 0, kPageRow = 1, kPagedHead = 2, kPagedD = 3 };

//===----------------------------------------------------------------------===//
// Sizes
//===----------------------------------------------------------------------===//

bool AttentionKVCacheOp::hasFp8Cache() {
  return isa<Float8E4M3FNType>(getElementTypeOrSelf(getKeyCache()));
}

int64_t AttentionKVCacheOp::getPageSize() {
  return isPaged() ? shapeOf(getKeyCache())[kPageRow] : 0;
}

int64_t AttentionKVCacheOp::getNumPages() {
  return isPaged() ? firstStatic({shapeOf(getKeyCache())[kPage],
                                  shapeOf(getValueCache())[kPage]})
                   : 0;
}

int64_t AttentionKVCacheOp::getMaxPages() {
  return isPaged() ? shapeOf(getBlockTable())[1] : 0;
}

int64_t AttentionKVCacheOp::getRotaryPairs() {
  return hasRotary() ? shapeOf(getRotaryCos())[1] : 0;
}

int64_t AttentionKVCacheOp::getCacheBatch() {
  if (isPaged())
    return 0;
  return firstStatic({logical(getKeyCache(), getKeyPerm())[0],
                      logical(getValueCache(), getValuePerm())[0]});
}

int64_t AttentionKVCacheOp::getBatch() {
  int64_t fromCache = kDyn;
  // With cache_batch_idx the caches hold a pool of Bc sequences.
  if (!isPaged() && !hasCacheBatchIdx())
    fromCache = firstStatic({logical(getKeyCache(), getKeyPerm())[0],
                             logical(getValueCache(), getValuePerm())[0]});
  return firstStatic({logical(getQuery(), getQueryPerm())[0],
                      shapeOf(getCacheSeqlens())[0], fromCache,
                      isPaged() ? shapeOf(getBlockTable())[0] : kDyn,
                      hasNewKV() ? logical(getKeyNew(), getQueryPerm())[0]
                                 : kDyn});
}

int64_t AttentionKVCacheOp::getHeadsQ() {
  return logical(getQuery(), getQueryPerm())[1];
}

int64_t AttentionKVCacheOp::getHeadsKV() {
  if (isPaged())
    return firstStatic({shapeOf(getKeyCache())[kPagedHead],
                        shapeOf(getValueCache())[kPagedHead]});
  return firstStatic({logical(getKeyCache(), getKeyPerm())[1],
                      logical(getValueCache(), getValuePerm())[1]});
}

int64_t AttentionKVCacheOp::getSeqQ() {
  return logical(getQuery(), getQueryPerm())[2];
}

int64_t AttentionKVCacheOp::getCapacity() {
  if (isPaged()) {
    int64_t pages = getMaxPages(), rows = getPageSize();
    return pages == kDyn || rows == kDyn ? kDyn : pages * rows;
  }
  return firstStatic({logical(getKeyCache(), getKeyPerm())[2],
                      logical(getValueCache(), getValuePerm())[2]});
}

int64_t AttentionKVCacheOp::getNewRows() {
  if (!hasNewKV())
    return 0;
  auto perm = getQueryPerm();
  return firstStatic({logical(getKeyNew(), perm)[2],
                      getValueNew() ? logical(getValueNew(), perm)[2] : kDyn});
}

int64_t AttentionKVCacheOp::getHeadDim() {
  int64_t fromCache = isPaged() ? shapeOf(getKeyCache())[kPagedD]
                                : logical(getKeyCache(), getKeyPerm())[3];
  return firstStatic({logical(getQuery(), getQueryPerm())[3], fromCache});
}

int64_t AttentionKVCacheOp::getHeadDimV() {
  int64_t fromCache = isPaged() ? shapeOf(getValueCache())[kPagedD]
                                : logical(getValueCache(), getValuePerm())[3];
  return firstStatic({fromCache, logical(getOutput(), getQueryPerm())[3]});
}

double AttentionKVCacheOp::getEffectiveScale() {
  if (FloatAttr s = getScaleAttr())
    return s.getValueAsDouble();
  return 1.0 / std::sqrt(double(getHeadDim()));
}

//===----------------------------------------------------------------------===//
// Result types: `-> O [, LSE] [, key_cache_out, value_cache_out]`
//===----------------------------------------------------------------------===//

namespace mlir::flash {
/// The updated caches are present exactly when `new_kv` is, and are then the
/// last two types; what remains is O and, optionally, the LSE.
ParseResult parseKVCacheResultTypes(OpAsmParser &parser, Type keyNewType,
                                    Type &output, Type &lse, Type &keyCacheOut,
                                    Type &valueCacheOut) {
  SmallVector<Type, 4> types;
  llvm::SMLoc loc = parser.getCurrentLocation();
  if (parser.parseTypeList(types))
    return failure();
  size_t caches = keyNewType ? 2 : 0;
  if (types.size() < 1 + caches || types.size() > 2 + caches)
    return parser.emitError(loc)
           << "expected " << (keyNewType ? "3 or 4" : "1 or 2")
           << " result types (O [, LSE]"
           << (keyNewType ? ", key_cache_out, value_cache_out" : "")
           << "), got " << types.size();
  output = types[0];
  if (types.size() == 2 + caches)
    lse = types[1];
  if (keyNewType) {
    keyCacheOut = types[types.size() - 2];
    valueCacheOut = types.back();
  }
  return success();
}

void printKVCacheResultTypes(OpAsmPrinter &printer, Operation *,
                             Type /*keyNewType*/, Type output, Type lse,
                             Type keyCacheOut, Type valueCacheOut) {
  printer << output;
  for (Type t : {lse, keyCacheOut, valueCacheOut})
    if (t)
      printer << ", " << t;
}
} // namespace mlir::flash

//===----------------------------------------------------------------------===//
// Verifier
//===----------------------------------------------------------------------===//

namespace {
struct KVCacheVerifier {
  AttentionKVCacheOp op;

  InFlightDiagnostic error() { return op.emitOpError(); }

  LogicalResult expectRank(StringRef name, Value v, int64_t rank,
                           StringRef what) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != rank)
      return error() << "'" << name << "' must have rank " << rank << " ("
                     << what << "), got " << t;
    return success();
  }

  LogicalResult expectShape(StringRef name, Value v, ArrayRef<int64_t> want,
                            StringRef what) {
    ArrayRef<int64_t> got = shapeOf(v);
    if (!compatibleShape(got, want))
      return error() << "'" << name << "' must have shape " << shapeStr(want)
                     << " (" << what << "), got " << shapeStr(got);
    return success();
  }

  LogicalResult expectElementType(StringRef name, Value v, Type elt) {
    if (getElementTypeOrSelf(v) != elt)
      return error() << "'" << name << "' element type "
                     << getElementTypeOrSelf(v)
                     << " must match 'query' element type " << elt;
    return success();
  }

  LogicalResult verifyAttributes() {
    Operation *o = op.getOperation();
    if (failed(verifyAttributeNames(o)) ||
        failed(verifyPerm(o, "q_perm", op.getQPermAttr())) ||
        failed(verifyPerm(o, "k_perm", op.getKPermAttr())) ||
        failed(verifyPerm(o, "v_perm", op.getVPermAttr())))
      return failure();
    if (op.isPaged())
      for (auto [name, perm] :
           {std::pair<StringRef, DenseI64ArrayAttr>{"k_perm", op.getKPermAttr()},
            {"v_perm", op.getVPermAttr()}})
        if (perm)
          return error() << "'" << name
                         << "' is not allowed with a paged cache (its layout "
                            "is fixed: [num_pages, page_size, Hkv, D])";
    if (auto c = op.getCausalAttr();
        c && c.getValue() != CausalAlignment::BottomRight)
      return error() << "'causal' must be #flash.causal<bottom_right>: each "
                        "sequence's last query row sits at its own last key "
                        "(cache_seqlens[b] + Snew - 1), which top_left "
                        "alignment cannot express";
    if (auto s = op.getScaleAttr(); s && !std::isfinite(s.getValueAsDouble()))
      return error() << "'scale' must be finite, got "
                     << num(s.getValueAsDouble());
    if (auto c = op.getSoftcapAttr();
        c && !(c.getValueAsDouble() > 0.0 && std::isfinite(c.getValueAsDouble())))
      return error() << "'softcap' must be positive and finite, got "
                     << num(c.getValueAsDouble());
    for (auto [name, w] : {std::pair<StringRef, IntegerAttr>{
                               "window_left", op.getWindowLeftAttr()},
                           {"window_right", op.getWindowRightAttr()}})
      if (w && w.getInt() < 0)
        return error() << "'" << name << "' must be non-negative, got "
                       << w.getInt() << " (leave it out for no limit)";
    return success();
  }

  LogicalResult verifyRanksAndTypes() {
    bool paged = op.isPaged();
    StringRef kWhat = paged ? "paged [num_pages, page_size, Hkv, D]"
                            : "logical [B, Hkv, C, D]";
    StringRef vWhat = paged ? "paged [num_pages, page_size, Hkv, Dv]"
                            : "logical [B, Hkv, C, Dv]";
    if (failed(expectRank("query", op.getQuery(), 4, "logical [B, Hq, Sq, D]")) ||
        failed(expectRank("key_cache", op.getKeyCache(), 4, kWhat)) ||
        failed(expectRank("value_cache", op.getValueCache(), 4, vWhat)) ||
        failed(expectRank("cache_seqlens", op.getCacheSeqlens(), 1, "[B]")))
      return failure();
    if (paged && failed(expectRank("block_table", op.getBlockTable(), 2,
                                   "[B, max_pages]")))
      return failure();
    if (op.hasLeftPad() &&
        failed(expectRank("cache_leftpad", op.getCacheLeftpad(), 1, "[B]")))
      return failure();
    if (op.hasCacheBatchIdx()) {
      if (failed(expectRank("cache_batch_idx", op.getCacheBatchIdx(), 1,
                            "[B]")))
        return failure();
      if (paged)
        return error() << "'cache_batch_idx' is for a contiguous cache: a "
                          "paged one reaches each sequence's rows through "
                          "'block_table'";
    }
    if (op.hasAlibi()) {
      int64_t rank =
          cast<RankedTensorType>(op.getAlibiSlopes().getType()).getRank();
      if (rank != 1 && rank != 2)
        return error() << "'alibi_slopes' must be [Hq] or [B, Hq] (rank 1 or "
                          "2), got rank "
                       << rank;
    }
    if (static_cast<bool>(op.getKeyNew()) != static_cast<bool>(op.getValueNew()))
      return error() << "'key_new' and 'value_new' must be given together";
    if (failed(verifyRotaryTypes()))
      return failure();
    if (op.hasNewKV() &&
        (failed(expectRank("key_new", op.getKeyNew(), 4,
                           "logical [B, Hkv, Snew, D]")) ||
         failed(expectRank("value_new", op.getValueNew(), 4,
                           "logical [B, Hkv, Snew, Dv]"))))
      return failure();
    if (failed(expectRank("output", op.getOutput(), 4,
                          "logical [B, Hq, Sq, Dv]")))
      return failure();

    // An f8E4M3FN cache's element types were checked by
    // verifyKVCacheFp8Types; the rest follow the query.
    Type elt = getElementTypeOrSelf(op.getQuery());
    for (auto [name, v] :
         {std::pair<StringRef, Value>{"key_cache", op.getKeyCache()},
          {"value_cache", op.getValueCache()},
          {"key_new", op.getKeyNew()},
          {"value_new", op.getValueNew()},
          {"output", op.getOutput()}})
      if (v && !(op.hasFp8Cache() && name.ends_with("_cache")) &&
          failed(expectElementType(name, v, elt)))
        return failure();
    return success();
  }

  /// rotary(cos, sin): together, [R, rotary_dim / 2] in the query's type,
  /// only with new_kv; rotary_interleaved only with them.
  LogicalResult verifyRotaryTypes() {
    if (static_cast<bool>(op.getRotaryCos()) !=
        static_cast<bool>(op.getRotarySin()))
      return error() << "'rotary_cos' and 'rotary_sin' must be given together";
    if (!op.hasRotary()) {
      if (op.getRotaryInterleaved())
        return error() << "'rotary_interleaved' needs 'rotary_cos' and "
                          "'rotary_sin'";
      return success();
    }
    if (!op.hasNewKV())
      return error() << "rotary embedding needs 'new_kv': it rotates the new "
                        "keys as they are appended (the cached ones were "
                        "rotated when they were), and the query with them";
    Type elt = getElementTypeOrSelf(op.getQuery());
    for (auto [name, v] :
         {std::pair<StringRef, Value>{"rotary_cos", op.getRotaryCos()},
          {"rotary_sin", op.getRotarySin()}})
      if (failed(expectRank(name, v, 2, "[R, rotary_dim / 2]")) ||
          failed(expectElementType(name, v, elt)))
        return failure();
    return success();
  }

  /// R covers every cache row, rotary_dim = 2 * dim 1 is static, positive
  /// and at most D, and sin has the shape of cos.
  LogicalResult verifyRotaryShapes() {
    if (!op.hasRotary())
      return success();
    ArrayRef<int64_t> cos = shapeOf(op.getRotaryCos());
    if (failed(expectShape("rotary_sin", op.getRotarySin(), cos,
                           "[R, rotary_dim / 2] of 'rotary_cos'")))
      return failure();
    int64_t pairs = cos[1], d = op.getHeadDim(), c = op.getCapacity();
    if (pairs == kDyn || pairs == 0)
      return error() << "rotary_dim / 2 (dim 1 of 'rotary_cos') must be "
                        "static and positive, got "
                     << shapeStr(cos);
    if (d != kDyn && 2 * pairs > d)
      return error() << "rotary_dim = " << 2 * pairs
                     << " (twice dim 1 of 'rotary_cos') must not exceed the "
                        "head dim D = "
                     << d;
    // Positions are clamped into [0, R): an empty table leaves nothing to
    // clamp to.
    if (cos[0] == 0)
      return error() << "'rotary_cos' must hold at least one position, got "
                     << shapeStr(cos);
    if (cos[0] != kDyn && c != kDyn && cos[0] < c)
      return error() << "'rotary_cos' has R = " << cos[0]
                     << " positions but the cache holds C = " << c
                     << " rows: every row a new key can take needs one";
    return success();
  }

  LogicalResult verifyShapes() {
    int64_t b = op.getBatch(), hq = op.getHeadsQ(), hkv = op.getHeadsKV(),
            sq = op.getSeqQ(), c = op.getCapacity(), snew = op.getNewRows(),
            d = op.getHeadDim(), dv = op.getHeadDimV();
    auto qPerm = op.getQueryPerm();

    // Q is where B, Hq, Sq and D are read first, so it agrees with them by
    // construction; every other operand is checked against it.
    if (op.isPaged()) {
      int64_t pages = op.getNumPages(), rows = op.getPageSize();
      if (failed(expectShape("key_cache", op.getKeyCache(),
                             {pages, rows, hkv, d},
                             "paged [num_pages, page_size, Hkv, D] with D of "
                             "'query'")) ||
          failed(expectShape("value_cache", op.getValueCache(),
                             {pages, rows, hkv, dv},
                             "paged [num_pages, page_size, Hkv, Dv] with "
                             "num_pages, page_size, Hkv of 'key_cache'")))
        return failure();
      if (rows == kDyn || rows == 0)
        return error() << "page size (dim 1 of 'key_cache') must be static "
                          "and positive, got "
                       << shapeStr(shapeOf(op.getKeyCache()));
      // Out-of-range page indices are clamped into [0, num_pages): an empty
      // pool leaves nothing to clamp to.
      if (pages == 0)
        return error() << "the page pool (dim 0 of 'key_cache') must hold at "
                          "least one page";
      if (failed(expectShape("block_table", op.getBlockTable(), {b, kDyn},
                             "[B, max_pages]")))
        return failure();
    } else {
      // With cache_batch_idx the caches hold a pool of Bc sequences' rows;
      // B is the query's.
      bool pool = op.hasCacheBatchIdx();
      int64_t rows = pool ? op.getCacheBatch() : b;
      if (failed(expectShape("key_cache", op.getKeyCache(),
                             applyPerm({rows, hkv, c, d}, op.getKeyPerm()),
                             pool ? "logical [Bc, Hkv, C, D] with D of 'query'"
                                  : "logical [B, Hkv, C, D] with B and D of "
                                    "'query'")) ||
          failed(expectShape("value_cache", op.getValueCache(),
                             applyPerm({rows, hkv, c, dv}, op.getValuePerm()),
                             pool ? "logical [Bc, Hkv, C, Dv] with Bc, Hkv, C "
                                    "of 'key_cache'"
                                  : "logical [B, Hkv, C, Dv] with B, Hkv, C of "
                                    "'key_cache'")))
        return failure();
      // Indices are clamped into [0, Bc) where they are read: an empty
      // pool leaves nothing to clamp to.
      if (pool && rows == 0)
        return error() << "with 'cache_batch_idx' the caches must hold at "
                          "least one sequence (dim Bc of 'key_cache'), got 0";
      if (pool && failed(expectShape("cache_batch_idx", op.getCacheBatchIdx(),
                                     {b}, "[B]")))
        return failure();
    }
    if (failed(expectShape("cache_seqlens", op.getCacheSeqlens(), {b}, "[B]")))
      return failure();
    if (op.hasLeftPad() &&
        failed(expectShape("cache_leftpad", op.getCacheLeftpad(), {b}, "[B]")))
      return failure();
    if (op.hasAlibi()) {
      auto slopes = cast<RankedTensorType>(op.getAlibiSlopes().getType());
      if (slopes.getRank() == 1
              ? failed(expectShape("alibi_slopes", op.getAlibiSlopes(), {hq},
                                   "[Hq] or [B, Hq]"))
              : failed(expectShape("alibi_slopes", op.getAlibiSlopes(),
                                   {b, hq}, "[Hq] or [B, Hq]")))
        return failure();
    }

    if (failed(verifyRotaryShapes()))
      return failure();

    // The default scale is 1/sqrt(D) and a kernel cannot tile a zero-width
    // head; zero-sized B, H or S are legal (an empty batch is still a batch).
    if (d == 0)
      return error() << "head dim D of 'query' and 'key_cache' must be "
                        "positive, got 0";
    if (dv == 0)
      return error() << "head dim Dv of 'value_cache' must be positive, got 0";
    if (d == kDyn && !op.getScaleAttr())
      return error() << "'scale' must be given when the head dim D is dynamic";
    if (hkv == 0)
      return error() << "'key_cache' and 'value_cache' must have at least one "
                        "head, got Hkv = 0";
    if (hq != kDyn && hkv != kDyn && hq % hkv != 0)
      return error() << "query heads (" << hq
                     << ") must be a multiple of key/value heads (" << hkv
                     << ")";

    if (op.hasNewKV() &&
        (failed(expectShape("key_new", op.getKeyNew(),
                            applyPerm({b, hkv, snew, d}, qPerm),
                            "logical [B, Hkv, Snew, D] in the layout of "
                            "'query'")) ||
         failed(expectShape("value_new", op.getValueNew(),
                            applyPerm({b, hkv, snew, dv}, qPerm),
                            "logical [B, Hkv, Snew, Dv] in the layout of "
                            "'query'"))))
      return failure();

    // A step never holds more query rows or new rows than a cache can: the
    // caller has mixed up an operand (or the capacity is too small).
    if (c != kDyn && sq != kDyn && sq > c)
      return error() << "'query' has Sq = " << sq
                     << " rows but the cache holds at most C = " << c;
    if (c != kDyn && snew != kDyn && snew > c)
      return error() << "'key_new' has Snew = " << snew
                     << " rows but the cache holds at most C = " << c;
    return success();
  }

  LogicalResult verifyResults() {
    if (failed(expectShape("output", op.getOutput(),
                           applyPerm({op.getBatch(), op.getHeadsQ(),
                                      op.getSeqQ(), op.getHeadDimV()},
                                     op.getQueryPerm()),
                           "logical [B, Hq, Sq, Dv] in the layout of "
                           "'query'")))
      return failure();
    if (Value lse = op.getLse()) {
      if (failed(expectRank("lse", lse, 3, "[B, Hq, Sq]")) ||
          failed(expectShape("lse", lse,
                             {op.getBatch(), op.getHeadsQ(), op.getSeqQ()},
                             "[B, Hq, Sq]")))
        return failure();
    }
    bool outs = op.getKeyCacheOut() || op.getValueCacheOut();
    if (op.hasNewKV() && !(op.getKeyCacheOut() && op.getValueCacheOut()))
      return error() << "with 'new_kv' the updated caches must be results "
                        "('key_cache_out' and 'value_cache_out')";
    if (!op.hasNewKV() && outs)
      return error() << "'key_cache_out' and 'value_cache_out' are results "
                        "only with 'new_kv'";
    for (auto [name, out, cache] :
         {std::tuple<StringRef, Value, Value>{"key_cache_out",
                                              op.getKeyCacheOut(),
                                              op.getKeyCache()},
          {"value_cache_out", op.getValueCacheOut(), op.getValueCache()}})
      if (out && out.getType() != cache.getType())
        return error() << "'" << name << "' must have the type of '"
                       << (name == "key_cache_out" ? "key_cache"
                                                   : "value_cache")
                       << "' " << cache.getType() << ", got " << out.getType();
    return success();
  }
};
} // namespace

LogicalResult AttentionKVCacheOp::verify() {
  if (failed(verifyKVCacheFp8Types(*this)))
    return failure();
  KVCacheVerifier v{*this};
  if (failed(v.verifyAttributes()) || failed(v.verifyRanksAndTypes()) ||
      failed(v.verifyShapes()) || failed(verifyKVCacheFp8Descales(*this)))
    return failure();
  return v.verifyResults();
}
