//===- AttentionMatch.cpp - from a softmax to the whole attention ---------===//
//
// Walk up from the softmax input to the one Q·Kᵀ contraction that feeds it
// through elementwise ops and reshapes, read the layouts of Q and K, follow
// the score's index from the matmul to the softmax, classify the score
// expression, then walk down from P to the P·V contraction and read V.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

#include <deque>
#include <numeric>

using namespace mlir;
using namespace mlir::flash::raise;

static LinExpr batchIndex(Role r, int64_t heads) {
  switch (r) {
  case Role::B:
    return LinExpr::dim(kB);
  case Role::H:
    return LinExpr::dim(kH);
  default: // b * H + h
    return LinExpr::dim(kB) * heads + LinExpr::dim(kH);
  }
}

/// Roles of a contraction operand's dims (operand map `map`).
static SmallVector<Role> operandRoles(const ContractionView &c, AffineMap map,
                                      unsigned seqLoop) {
  SmallVector<Role> roles;
  for (AffineExpr r : map.getResults()) {
    unsigned d = cast<AffineDimExpr>(r).getPosition();
    if (d == seqLoop)
      roles.push_back(Role::S);
    else if (d == c.rDim || d == c.nDim || d == c.mDim)
      roles.push_back(Role::D);
    else if (c.batchDims.size() == 2)
      roles.push_back(d == c.batchDims[0] ? Role::B : Role::H);
    else
      roles.push_back(Role::BH);
  }
  return roles;
}

static bool allProjected(const ContractionView &c) {
  return llvm::all_of(c.maps, [](AffineMap m) {
    return m.isProjectedPermutation(/*allowZeroInResults=*/false);
  });
}

/// Propagates a read position from a producer to its consumer along one
/// elementwise op or reshape.
static std::optional<LinIndex> forward(Value from, Value to,
                                       ArrayRef<LinExpr> at,
                                       const Extents &ext) {
  Operation *op = to.getDefiningOp();
  if (auto rs = matchReshape(op))
    return reshapeResultIndex(rs->reassoc, rs->expand,
                              cast<ShapedType>(from.getType()).getShape(),
                              cast<ShapedType>(to.getType()).getShape(), at,
                              ext);
  auto ew = matchElementwise(op);
  if (!ew)
    return std::nullopt;
  for (auto [in, map] : llvm::zip(ew->inputs, ew->inputMaps)) {
    if (in != from)
      continue;
    auto loops = invertPermutation(map, at);
    if (!loops)
      return std::nullopt;
    return applyMap(ew->outputMap, *loops, ext);
  }
  return std::nullopt;
}

static int64_t dimOf(const OperandView &v, unsigned logical) {
  return v.perm[logical] < 0
             ? 1
             : cast<ShapedType>(v.base.getType()).getDimSize(v.perm[logical]);
}

/// Dropout on P: P * keep * c (or / (1 - p)) with keep not depending on P.
static LogicalResult matchDropout(const Expr *e, Value p,
                                  std::optional<double> &dropoutP) {
  SmallVector<const Expr *> factors;
  double c = 1.0;
  std::function<bool(const Expr *)> collect = [&](const Expr *x) {
    x = stripFloatCasts(x);
    if (x->kind == Expr::Op && x->op == ScalarKind::Mul)
      return collect(x->operands[0]) && collect(x->operands[1]);
    if (x->kind == Expr::Op && x->op == ScalarKind::Div) {
      const Expr *d = stripFloatCasts(x->operands[1]);
      if (d->kind != Expr::Const || d->fval == 0)
        return false;
      c /= d->fval;
      return collect(x->operands[0]);
    }
    if (x->kind == Expr::Const) {
      c *= x->fval;
      return true;
    }
    factors.push_back(x);
    return true;
  };
  if (!collect(e))
    return failure();
  const Expr *pRead = nullptr, *keep = nullptr;
  for (const Expr *f : factors) {
    if (f->kind == Expr::Read && f->tensor == p && !pRead)
      pRead = f;
    else if (!keep)
      keep = f;
    else
      return failure();
  }
  if (!pRead)
    return failure();
  if (!keep)
    return c == 1.0 ? success() : failure();
  // The keep mask is 0/1: a cast of an i1 or a select between 1 and 0.
  const Expr *k = keep;
  bool isBool = (k->kind == Expr::Op && k->op == ScalarKind::Cast &&
                 k->operands[0]->type.isInteger(1)) ||
                (k->kind == Expr::Op && k->op == ScalarKind::Select &&
                 isConstant(k->operands[1], 1.0) &&
                 isConstant(k->operands[2], 0.0));
  if (!isBool || c <= 1.0)
    return failure();
  dropoutP = 1.0 - 1.0 / c;
  return success();
}

/// K and V must read their kv heads alike. When one was peeled of a head
/// broadcast and the other was not (Falcon's grouped QKV repeats K and V
/// before the rotary embedding, which only K goes through), the other may
/// still repeat its heads in its base: it then reads every G-th of them.
static LogicalResult reconcileHeadGroups(AttentionMatch &m, Explainer &why);

/// Then, when neither K nor V was peeled, both may repeat their heads in
/// their bases (a repeat the trace cannot see through, e.g. before the
/// rotary embedding of K and a transpose of V): GQA over every g-th head.
static LogicalResult matchHeadGroups(AttentionMatch &m, Explainer &why) {
  if (failed(reconcileHeadGroups(m, why)))
    return failure();
  OperandView &k = m.k, &v = m.v;
  if (k.headStride != 1 || v.headStride != 1 || k.perm[1] < 0 ||
      v.perm[1] < 0)
    return success();
  int64_t gk = headGroupsOf(k.base, k.perm[1]);
  int64_t g = gk == 1 ? 1 : std::gcd(gk, headGroupsOf(v.base, v.perm[1]));
  if (g > 1) {
    k.headStride = v.headStride = g;
    k.kvGroups *= g;
    v.kvGroups *= g;
    m.headsKV /= g;
  }
  return success();
}

static LogicalResult reconcileHeadGroups(AttentionMatch &m, Explainer &why) {
  OperandView &k = m.k, &v = m.v;
  if (k.kvGroups == v.kvGroups)
    return success();
  bool kFewer = k.kvGroups < v.kvGroups;
  OperandView &less = kFewer ? k : v;
  int64_t want = kFewer ? v.kvGroups : k.kvGroups;
  int64_t factor = want % less.kvGroups ? 0 : want / less.kvGroups;
  std::string groupsReason =
      ("V's head grouping (" + Twine(v.kvGroups) +
       " query heads per kv head) differs from K's (" + Twine(k.kvGroups) + ")")
          .str();
  if (!factor || less.perm[1] < 0)
    return why.fail("operand layout",
                    groupsReason + ", and " + (kFewer ? "K" : "V") +
                        " has no separate head dim to read in groups",
                    m.pv.op);
  int64_t g = headGroupsOf(less.base, less.perm[1]);
  if (g % factor)
    return why.fail("operand layout",
                    groupsReason + ", and " + (kFewer ? "K" : "V") +
                        "'s heads are not repeated in runs of " +
                        Twine(factor) + " before the matmul",
                    m.pv.op);
  less.headStride = factor;
  less.kvGroups = want;
  m.headsKV = m.headsQ / want;
  return success();
}

FailureOr<std::unique_ptr<AttentionMatch>>
mlir::flash::raise::matchAttention(Operation *anchor, Explainer &why) {
  auto sm = matchSoftmax(anchor, why);
  if (failed(sm))
    return failure();
  why.softmaxFound = true;
  auto m = std::make_unique<AttentionMatch>();
  m->softmax = *sm;
  Value x = sm->input;
  auto xTy = cast<ShapedType>(x.getType());
  if (sm->axis + 1 != xTy.getRank())
    return why.fail("softmax",
                    "the softmax is over dim " + Twine(sm->axis) +
                        ", not the last (key) dim",
                    anchor);

  // 1. The one contraction feeding X through elementwise ops and reshapes.
  DenseMap<Value, Value> consumer;
  std::deque<Value> work = {x};
  DenseSet<Value> seen = {x};
  SmallVector<std::pair<ContractionView, Value>> found;
  while (!work.empty() && seen.size() < 512) {
    Value v = work.front();
    work.pop_front();
    Operation *def = v.getDefiningOp();
    if (!def)
      continue;
    if (auto c = matchContraction(def)) {
      if (llvm::none_of(found, [&](auto &f) { return f.first.op == def; }))
        found.push_back({*c, v});
      continue;
    }
    SmallVector<Value> ins;
    if (auto rs = matchReshape(def))
      ins.push_back(rs->source);
    else if (auto ew = matchElementwise(def))
      ins = ew->inputs;
    for (Value in : ins)
      if (seen.insert(in).second) {
        consumer[in] = v;
        work.push_back(in);
      }
  }
  if (found.empty())
    return why.fail("Q·Kᵀ",
                    "no matmul feeds the softmax input through elementwise "
                    "ops and reshapes",
                    anchor);
  if (found.size() > 1)
    return why.fail("Q·Kᵀ",
                    "two matmuls feed the softmax input; which is Q·Kᵀ is "
                    "ambiguous",
                    found[1].first.op);
  m->qk = found[0].first;
  const ContractionView &qk = m->qk;
  if (!allProjected(qk))
    return why.fail("Q·Kᵀ", "the matmul's indexing maps are not projections",
                    qk.op);

  // 2. Q and K layouts.
  auto q = traceOperand(qk.lhs, operandRoles(qk, qk.maps[0], qk.mDim),
                        /*allowTranspose=*/false, /*allowGqa=*/false, why);
  if (failed(q))
    return failure();
  auto k = traceOperand(qk.rhs, operandRoles(qk, qk.maps[1], qk.nDim),
                        /*allowTranspose=*/true, /*allowGqa=*/true, why);
  if (failed(k))
    return failure();
  m->q = *q;
  m->k = *k;
  for (Value v : {q->base, k->base})
    if (!cast<ShapedType>(v.getType()).hasStaticShape())
      return why.fail("operand layout", "dynamic shapes are not supported",
                      qk.op);
  auto qShape = cast<ShapedType>(q->base.getType()).getShape();
  auto kShape = cast<ShapedType>(k->base.getType()).getShape();
  if (q->perm[0] >= 0) {
    m->batch = dimOf(*q, 0);
    m->headsQ = dimOf(*q, 1);
  } else if (k->perm[0] >= 0 && q->bhMerged >= 0) {
    m->batch = dimOf(*k, 0);
    m->headsQ = qShape[q->bhMerged] / m->batch;
  } else if (q->bhMerged >= 0) {
    m->headsQ = qShape[q->bhMerged];
  }
  if (k->perm[1] >= 0)
    m->headsKV = dimOf(*k, 1);
  else if (k->bhMerged >= 0)
    m->headsKV = kShape[k->bhMerged] / m->batch;
  if (m->headsKV * k->kvGroups != m->headsQ)
    return why.fail("operand layout",
                    "K has " + Twine(m->headsKV) + " heads x " +
                        Twine(k->kvGroups) + " repeats for " +
                        Twine(m->headsQ) + " query heads",
                    qk.op);
  m->seqQ = qShape[q->perm[2]];
  m->seqK = kShape[k->perm[2]];
  m->ext = Extents{{m->batch, m->headsQ, m->seqQ, m->seqK}};

  // 3. The score's position, from the matmul to the softmax input.
  LinIndex scoreAt;
  for (AffineExpr r : qk.maps[2].getResults()) {
    unsigned d = cast<AffineDimExpr>(r).getPosition();
    if (d == qk.mDim)
      scoreAt.push_back(LinExpr::dim(kQ));
    else if (d == qk.nDim)
      scoreAt.push_back(LinExpr::dim(kK));
    else
      scoreAt.push_back(batchIndex(
          qk.batchDims.size() == 2 ? (d == qk.batchDims[0] ? Role::B : Role::H)
                                   : Role::BH,
          m->headsQ));
  }
  LinIndex at = scoreAt;
  Value s = qk.result;
  for (Value cur = s; cur != x;) {
    Value next = consumer.lookup(cur);
    auto n = forward(cur, next, at, m->ext);
    if (!n)
      return why.fail("score expression",
                      "cannot follow the score's index through " +
                          next.getDefiningOp()->getName().getStringRef(),
                      next.getDefiningOp());
    at = *n;
    cur = next;
  }
  if (at.back() != LinExpr::dim(kK))
    return why.fail("softmax",
                    "the softmax is not over the key dim of Q·Kᵀ", anchor);
  LinIndex xAt = at;

  // 4. Scale, softcap, bias, masks.
  m->builder = std::make_unique<ExprBuilder>(s, scoreAt, m->ext);
  auto tree = m->builder->build(x, xAt, why);
  if (failed(tree) || failed(decomposeScore(*tree, *m->builder, m->parts, why)) ||
      failed(analyzeMasks(m->parts.keep, m->ext, m->masks, why)))
    return failure();
  m->parts.scale *= q->scale * k->scale;

  // 5. Down from P to the P·V contraction.
  Value p = sm->output;
  DenseMap<Value, Value> producer;
  std::deque<Value> down = {p};
  DenseSet<Value> visited = {p};
  std::optional<ContractionView> pv;
  Value pvLhs;
  while (!down.empty() && !pv && visited.size() < 64) {
    Value v = down.front();
    down.pop_front();
    for (Operation *user : v.getUsers()) {
      if (auto c = matchContraction(user)) {
        if (c->lhs == v) {
          pv = c;
          pvLhs = v;
          break;
        }
        continue;
      }
      if (user->getNumResults() != 1 ||
          !(matchReshape(user) || matchElementwise(user)))
        continue;
      Value r = user->getResult(0);
      if (visited.insert(r).second) {
        producer[r] = v;
        down.push_back(r);
      }
    }
  }
  if (!pv)
    return why.fail("P·V",
                    "the softmax result does not feed the left operand of a "
                    "second matmul",
                    anchor);
  m->pv = *pv;
  if (!allProjected(*pv) || pv->batchDims.size() != qk.batchDims.size())
    return why.fail("P·V", "the second matmul's batch dims differ from Q·Kᵀ",
                    pv->op);
  SmallVector<Value> chain;
  for (Value c = pvLhs; c != p; c = producer.lookup(c))
    chain.push_back(c);
  LinIndex pAt = xAt;
  Value prev = p;
  for (Value c : llvm::reverse(chain)) {
    auto n = forward(prev, c, pAt, m->ext);
    if (!n)
      return why.fail("P·V", "cannot follow P's index to the second matmul",
                      c.getDefiningOp());
    pAt = *n;
    prev = c;
  }
  // P must be contracted over k and keep q as rows.
  SmallVector<LinExpr> loops(pv->maps[0].getNumDims(), LinExpr::constant(0));
  loops[pv->mDim] = LinExpr::dim(kQ);
  loops[pv->rDim] = LinExpr::dim(kK);
  for (auto [i, d] : llvm::enumerate(pv->batchDims))
    loops[d] = batchIndex(pv->batchDims.size() == 2 ? (i == 0 ? Role::B : Role::H)
                                                    : Role::BH,
                          m->headsQ);
  auto expected = applyMap(pv->maps[0], loops, m->ext);
  if (!expected || *expected != pAt)
    return why.fail("P·V",
                    "the second matmul does not contract P over the key dim",
                    pv->op);
  if (!chain.empty()) {
    ExprBuilder pb(Value(), {}, m->ext);
    pb.stops.insert(p);
    auto pt = pb.build(pvLhs, pAt, why);
    if (failed(pt))
      return failure();
    if (failed(matchDropout(*pt, p, m->dropoutP)))
      return why.fail("P·V",
                      "an op between the softmax and P·V is neither a cast "
                      "nor dropout",
                      pv->op);
  }
  auto v = traceOperand(pv->rhs, operandRoles(*pv, pv->maps[1], pv->rDim),
                        /*allowTranspose=*/true, /*allowGqa=*/true, why);
  if (failed(v))
    return failure();
  m->v = *v;
  if (v->scale != 1.0)
    return why.fail("operand layout", "V is scaled by a constant", pv->op);
  if (failed(matchHeadGroups(*m, why)))
    return failure();
  for (AffineExpr r : pv->maps[2].getResults()) {
    unsigned d = cast<AffineDimExpr>(r).getPosition();
    m->outRoles.push_back(
        d == pv->mDim   ? Role::S
        : d == pv->nDim ? Role::D
        : pv->batchDims.size() == 2 ? (d == pv->batchDims[0] ? Role::B : Role::H)
                                    : Role::BH);
  }
  Type elt = getElementTypeOrSelf(q->base.getType());
  // f16 models accumulate P·V in f32 and truncate: the truncation is the
  // attention's output.
  m->output = pv->result;
  if (getElementTypeOrSelf(pv->result.getType()) != elt &&
      pv->result.hasOneUse()) {
    Operation *user = *pv->result.getUsers().begin();
    auto shape = cast<ShapedType>(pv->result.getType()).getShape();
    LinIndex id = identityIndex(shape.size());
    ExprBuilder cb(Value(), {}, m->ext);
    cb.stops.insert(pv->result);
    Explainer local;
    Expr *t = nullptr;
    if (user->getNumResults() == 1 && matchElementwise(user) &&
        shape.size() <= 4) {
      FailureOr<Expr *> built = cb.build(user->getResult(0), id, local);
      if (succeeded(built))
        t = *built;
    }
    if (t && t->kind == Expr::Op && t->op == ScalarKind::Cast &&
        isa<FloatType>(t->type) && t->operands[0]->kind == Expr::Read &&
        t->operands[0]->tensor == pv->result && t->operands[0]->at == id &&
        user->getResult(0).getType() ==
            cast<ShapedType>(pv->result.getType()).clone(elt))
      m->output = user->getResult(0);
  }
  if (getElementTypeOrSelf(k->base.getType()) != elt ||
      getElementTypeOrSelf(v->base.getType()) != elt ||
      getElementTypeOrSelf(m->output.getType()) != elt)
    return why.fail("operand layout",
                    "Q, K, V and the output do not share one element type",
                    pv->op);
  if (!isa<Float16Type, BFloat16Type, Float32Type>(elt))
    return why.fail("operand layout", "element type is not f16, bf16 or f32",
                    pv->op);
  return m;
}
