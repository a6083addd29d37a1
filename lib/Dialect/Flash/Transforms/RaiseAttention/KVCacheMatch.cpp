//===- KVCacheMatch.cpp - decode steps: length masks over a KV cache ------===//
//
// A decode step exported from a model with a static KV cache attends a few
// new queries over the whole preallocated cache [B, Hkv, Smax, D] and hides
// the rows not written yet with a mask built from the cache position:
// Hugging Face's StaticCache builds `kv_idx <= q_offset + q_idx` over
// arange(Smax) (a boolean mask for SDPA, 0 / -inf added for eager), where
// q_offset is a tensor the step reads at run time. Dense flash.attention
// would keep that as a mask over all Smax keys; flash.attention_kvcache
// takes the length itself (cache_seqlens) and never reads the rows past it.
//
// The match reads each keep condition as a comparison that is linear in the
// key index k with a remainder that reads only the batch index b:
//     k < L(b)           (k <= P(b) is k < P(b) + 1)
//     k <= q + P(b)      bottom-right causal over L(b) = P(b) + Sq
// With one query row q is 0, so both forms are a plain length. Anything
// else (a band, a padding mask read from data, a mask of h or of the
// scores) is not a length, and the attention stays dense.
//
// Which length: the model writes this step's K/V rows into the cache
// (index_copy at the cache position) BEFORE attending, and its mask already
// counts them (j <= position). The raised op therefore attends over the
// updated cache with cache_seqlens = that length and no new_kv, which is
// exactly the model's function whatever form the update takes (torch-mlir
// emits it as a scatter of a materialised index tensor). Absorbing the
// update as new_kv with cache_seqlens = L - Snew would additionally need a
// proof that the update writes rows [L - Snew, L) of every sequence with
// the new rows; see KVCacheRewrite.cpp.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::flash::raise;

static constexpr StringLiteral kStep = "kv cache";

/// Decoding covers one token up to speculative and chunked steps of a few
/// dozen rows (docs/KVCACHE.md); more query rows than that is a prefill or
/// an encoder, which the dense op and its kernels serve better.
static constexpr int64_t kMaxDecodeQueries = 64;

namespace {
/// sum of (factor * term) + lin, over integer trees.
struct AffineForm {
  LinExpr lin;
  SmallVector<std::pair<const Expr *, int64_t>> terms;
};
} // namespace

/// Adds `sign * e` to `f`: index and integer constants go to the linear
/// part, sums and constant multiples are distributed, and any other integer
/// tree that reads neither the key, the head nor the scores becomes a term.
static bool collect(const Expr *e, int64_t sign, AffineForm &f) {
  if (isa<FloatType>(e->type) || e->type.isInteger(1))
    return false;
  switch (e->kind) {
  case Expr::Index:
    f.lin = f.lin + e->index * sign;
    return true;
  case Expr::Const:
    f.lin.cst += sign * int64_t(e->fval);
    return true;
  case Expr::Op:
    switch (e->op) {
    case ScalarKind::Add:
      return collect(e->operands[0], sign, f) &&
             collect(e->operands[1], sign, f);
    case ScalarKind::Sub:
      return collect(e->operands[0], sign, f) &&
             collect(e->operands[1], -sign, f);
    case ScalarKind::Cast:
    case ScalarKind::Copy:
      // Integer <-> index casts (index_cast of linalg.index, i32 <-> i64)
      // keep the value of an index or a position.
      if (!isa<FloatType>(e->operands[0]->type) &&
          !e->operands[0]->type.isInteger(1))
        return collect(e->operands[0], sign, f);
      break;
    case ScalarKind::Mul: {
      const Expr *a = e->operands[0], *c = e->operands[1];
      if (a->kind == Expr::Const)
        std::swap(a, c);
      if (c->kind == Expr::Const)
        return collect(a, sign * int64_t(c->fval), f);
      break;
    }
    default:
      break;
    }
    [[fallthrough]];
  case Expr::Read:
    if (e->hasScore || exprUsesDim(e, kK) || exprUsesDim(e, kH))
      return false;
    f.terms.push_back({e, sign});
    return true;
  case Expr::Score:
    return false;
  }
  return false;
}

/// `b PRED a` for `a PRED b`.
static std::optional<arith::CmpIPredicate>
swapOperands(arith::CmpIPredicate pred) {
  using P = arith::CmpIPredicate;
  switch (pred) {
  case P::slt: return P::sgt;
  case P::sle: return P::sge;
  case P::sgt: return P::slt;
  case P::sge: return P::sle;
  default: return std::nullopt;
  }
}

/// The length a keep condition imposes, if it is `k < L(b)` or
/// `k <= q + L(b) - Sq` (see the file comment).
static std::optional<KVCacheLength> lengthOf(const Expr *cond,
                                             const AttentionMatch &m) {
  bool negate = false;
  while (cond->kind == Expr::Op && cond->op == ScalarKind::Not) {
    negate = !negate;
    cond = cond->operands[0];
  }
  if (cond->kind != Expr::Op || cond->op != ScalarKind::CmpI)
    return std::nullopt;
  // cond is (a - b) PRED 0.
  AffineForm f;
  if (!collect(cond->operands[0], 1, f) || !collect(cond->operands[1], -1, f))
    return std::nullopt;
  auto pred = arith::CmpIPredicate(cond->predicate);
  if (negate)
    pred = arith::invertPredicate(pred);
  if (f.lin.uses(kH) || (f.lin.c[kK] != 1 && f.lin.c[kK] != -1))
    return std::nullopt;
  if (f.lin.c[kK] == -1) {
    // -(k + r) PRED 0  <=>  k + r PRED' 0 with the comparison swapped.
    f.lin = f.lin * -1;
    for (auto &t : f.terms)
      t.second = -t.second;
    auto swapped = swapOperands(pred);
    if (!swapped)
      return std::nullopt;
    pred = *swapped;
  }
  // k + r < 0 or k + r <= 0: k < -r (+ 1). Lower bounds on k (a sliding
  // window, a left pad), equalities and unsigned compares are not lengths.
  int64_t inclusive;
  if (pred == arith::CmpIPredicate::slt)
    inclusive = 0;
  else if (pred == arith::CmpIPredicate::sle)
    inclusive = 1;
  else
    return std::nullopt;
  KVCacheLength len;
  len.lin = f.lin * -1;
  len.lin.c[kK] = 0;
  len.lin.cst += inclusive;
  for (auto [t, s] : f.terms)
    len.terms.push_back({t, -s});
  // The bound may read the query row only through q itself: with one row q
  // is 0; otherwise k < q + U is bottom-right causal over L = U + Sq - 1.
  bool termsReadQ = llvm::any_of(
      len.terms, [](auto &t) { return exprUsesDim(t.first, kQ); });
  if (m.seqQ == 1) {
    len.lin.c[kQ] = 0;
  } else if (termsReadQ) {
    return std::nullopt;
  } else if (len.lin.c[kQ] == 1) {
    len.causal = true;
    len.lin.c[kQ] = 0;
    len.lin.cst += m.seqQ - 1;
  } else if (len.lin.c[kQ] != 0) {
    return std::nullopt;
  }
  return len;
}

LogicalResult mlir::flash::raise::matchKVCacheLength(const AttentionMatch &m,
                                                     KVCacheLength &out,
                                                     Explainer &why) {
  // Without a mask the bands cannot express, or with as many queries as
  // keys, this is no decode step over a cache: nothing to say.
  if (m.masks.rest.empty() || m.seqQ >= m.seqK)
    return failure();
  std::optional<KVCacheLength> found;
  for (const Expr *c : m.masks.rest) {
    auto len = lengthOf(c, m);
    if (!len)
      return why.fail(kStep,
                      "the mask is not a length mask (key j < L_b, L_b read "
                      "from the batch index only), so flash.attention_kvcache "
                      "cannot express it; kept as a mask of flash.attention");
    if (found)
      return why.fail(kStep, "two length masks; flash.attention_kvcache takes "
                             "one length per sequence");
    found = len;
  }
  // A length fixed at compile time is a band the attributes could not place
  // (j < i over fewer queries than keys, say), not the cache's fill level,
  // which a decode step reads at run time: leave it to the dense op.
  if (found->terms.empty())
    return failure();
  // Everything the length mask is combined with must be expressible on the
  // KV-cache op too.
  if (m.seqQ > kMaxDecodeQueries)
    return why.fail(kStep, "a length mask over " + Twine(m.seqQ) +
                               " query rows is a prefill, not a decode step "
                               "(at most " +
                               Twine(kMaxDecodeQueries) + ")");
  // ALiBi is the one bias the KV-cache op computes: one slope * position
  // term, over keys that end at each row's diagonal i + L_b - Sq.
  if (m.parts.residual || m.parts.biasTerms.size() > 1)
    return why.fail(kStep, "flash.attention_kvcache has no bias or score_mod");
  if (!m.parts.biasTerms.empty()) {
    AlibiDiagonal diag;
    diag.keysUpToDiagonal = m.seqQ == 1 || found->causal;
    std::string whyNot;
    auto alibi = matchAlibiBias(m.parts.biasTerms.front(), m, diag, whyNot);
    if (failed(alibi)) {
      std::string reason = "flash.attention_kvcache has no bias or score_mod";
      if (!whyNot.empty())
        reason += "; the bias is not the op's ALiBi: " + whyNot;
      return why.fail(kStep, reason);
    }
    found->alibi = *alibi;
  }
  if (m.dropoutP)
    return why.fail(kStep, "flash.attention_kvcache has no dropout");
  if (m.masks.causalBottomRight || m.masks.windowLeft || m.masks.windowRight)
    return why.fail(kStep, "a causal or window band besides the length mask "
                           "is not aligned to the per-sequence length");
  // The cache holds one [Hkv, C, D] block per sequence: K and V must carry
  // the batch, not be shared by every sequence.
  for (const OperandView *kv : {&m.k, &m.v}) {
    auto shape = cast<ShapedType>(kv->base.getType()).getShape();
    int64_t batch = kv->perm[0] >= 0 ? shape[kv->perm[0]]
                    : kv->bhMerged >= 0 ? m.batch
                                        : 1;
    if (batch != m.batch)
      return why.fail(kStep, "K or V is shared across the batch; a KV cache "
                             "holds one per sequence");
  }
  out = *found;
  return success();
}
