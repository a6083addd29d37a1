//===- AttentionRewrite.cpp - build flash.attention for a match -----------===//
//
// Operands become rank-4 views with tensor.expand_shape only (splitting the
// merged batch*heads dim, adding unit dims), never copies; the output is
// collapsed back to the shape of the P·V result it replaces. Bias and mask
// tensors that are projections of [B, H, Sq, Sk] become operands, an ALiBi
// bias the alibi operand (AlibiBias.cpp); every other modification becomes
// a score_mod / mask_mod region.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::raise;

static constexpr StringLiteral kStep = "rewrite";

/// Expands `v` to rank 4 with the logical dims in the order its own dims
/// hold them; `perm` receives the operand dim of each logical dim.
static Value toRank4Unstrided(OpBuilder &b, Location loc,
                              const OperandView &v, int64_t batch,
                              SmallVectorImpl<int64_t> &perm);

/// toRank4, then every headStride-th head when the base repeats its heads
/// (a strided tensor.extract_slice). It bufferises to a strided subview;
/// where a lowering needs a contiguous operand (the GPU kernels),
/// bufferization copies these Hkv heads, 1/G of the repeated tensor.
static Value toRank4(OpBuilder &b, Location loc, const OperandView &v,
                     int64_t batch, SmallVectorImpl<int64_t> &perm) {
  Value r = toRank4Unstrided(b, loc, v, batch, perm);
  if (v.headStride == 1)
    return r;
  auto ty = cast<RankedTensorType>(r.getType());
  int64_t h = perm[1];
  SmallVector<int64_t> offsets(ty.getRank(), 0), sizes(ty.getShape()),
      strides(ty.getRank(), 1);
  sizes[h] /= v.headStride;
  strides[h] = v.headStride;
  auto resTy = RankedTensorType::get(sizes, ty.getElementType());
  return tensor::ExtractSliceOp::create(
      b, loc, resTy, r, ValueRange(), ValueRange(), ValueRange(),
      b.getDenseI64ArrayAttr(offsets), b.getDenseI64ArrayAttr(sizes),
      b.getDenseI64ArrayAttr(strides));
}

static Value toRank4Unstrided(OpBuilder &b, Location loc,
                              const OperandView &v, int64_t batch,
                              SmallVectorImpl<int64_t> &perm) {
  auto ty = cast<RankedTensorType>(v.base.getType());
  perm.assign(4, -1);
  bool addBH = v.perm[0] < 0 && v.perm[1] < 0 && v.bhMerged < 0;
  if (!addBH && v.bhMerged < 0) {
    perm.assign(v.perm, v.perm + 4);
    return v.base;
  }
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> reassoc;
  for (int64_t i = 0; i < ty.getRank(); ++i) {
    ReassociationIndices group;
    auto add = [&](unsigned logical, int64_t size) {
      perm[logical] = shape.size();
      group.push_back(shape.size());
      shape.push_back(size);
    };
    if (addBH && i == 0) {
      add(0, 1);
      add(1, 1);
    }
    if (i == v.bhMerged) {
      add(0, batch);
      add(1, ty.getDimSize(i) / batch);
    } else {
      for (unsigned l = 0; l < 4; ++l)
        if (v.perm[l] == i)
          add(l, ty.getDimSize(i));
    }
    reassoc.push_back(group);
  }
  auto resTy = RankedTensorType::get(shape, ty.getElementType());
  return tensor::ExpandShapeOp::create(b, loc, resTy, v.base, reassoc);
}

/// A Read whose position is a projection of (b, h, q, k) in order, expanded
/// to rank 4 so the op can broadcast it; null when it is not one.
static Value projectTo4(OpBuilder &b, Location loc, const Expr *e,
                        const AttentionMatch &m) {
  e = stripFloatCasts(e);
  if (e->kind != Expr::Read)
    return nullptr;
  auto ty = cast<RankedTensorType>(e->tensor.getType());
  if (ty.getRank() > 4 || ty.getRank() == 0)
    return nullptr;
  LinExpr bh = LinExpr::dim(kB) * m.headsQ + LinExpr::dim(kH);
  SmallVector<SmallVector<unsigned, 2>> covers;
  for (auto [i, l] : llvm::enumerate(e->at)) {
    int64_t size = ty.getDimSize(i);
    if (l == LinExpr::constant(0) && size == 1)
      covers.push_back({});
    else if (auto d = l.asDim(); d && size == m.ext.e[*d])
      covers.push_back({*d});
    else if (l == bh && size == m.batch * m.headsQ)
      covers.push_back({kB, kH});
    else
      return nullptr;
  }
  // Assign logical dims to groups in order; uncovered ones become units.
  SmallVector<int64_t> shape(4, 1);
  SmallVector<ReassociationIndices> reassoc;
  unsigned next = 0;
  for (auto [t, cov] : llvm::enumerate(covers)) {
    ReassociationIndices group;
    if (cov.empty()) {
      // A unit dim takes the next logical dim no later tensor dim covers.
      bool coveredLater = false;
      for (unsigned u = t + 1; u < covers.size(); ++u)
        coveredLater |= llvm::is_contained(covers[u], next);
      if (next >= 4 || coveredLater)
        return nullptr;
      group.push_back(next++);
    } else {
      if (cov.front() < next)
        return nullptr;
      while (next < cov.front())
        group.push_back(next++);
      for (unsigned d : cov) {
        if (d != next)
          return nullptr;
        shape[d] = m.ext.e[d];
        group.push_back(next++);
      }
    }
    reassoc.push_back(group);
  }
  while (next < 4)
    reassoc.back().push_back(next++);
  if (ty.getRank() == 4 && llvm::equal(ty.getShape(), shape))
    return e->tensor;
  auto resTy = RankedTensorType::get(shape, ty.getElementType());
  return tensor::ExpandShapeOp::create(b, loc, resTy, e->tensor, reassoc);
}

/// Expands BH into (B, H) in a role list.
static SmallVector<Role> splitRoles(ArrayRef<Role> roles) {
  SmallVector<Role> out;
  for (Role r : roles) {
    if (r == Role::BH) {
      out.push_back(Role::B);
      out.push_back(Role::H);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

void mlir::flash::raise::eraseDead(Operation *root,
                                   DenseSet<Operation *> &erased) {
  SmallVector<Operation *> work = {root};
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (erased.contains(op) || !isOpTriviallyDead(op))
      continue;
    for (Value o : op->getOperands())
      if (Operation *def = o.getDefiningOp())
        work.push_back(def);
    erased.insert(op);
    op->erase();
  }
}

FailureOr<RaisedOperands>
mlir::flash::raise::buildRaisedOperands(OpBuilder &b, const AttentionMatch &m,
                                        Explainer &why) {
  // The output keeps Q's layout, which must be the P·V result's up to unit
  // and merged batch/head dims.
  SmallVector<Role> qRoles(5, Role::D), outRoles = splitRoles(m.outRoles);
  {
    auto rank = cast<ShapedType>(m.q.base.getType()).getRank();
    qRoles.assign(rank, Role::D);
    const Role names[4] = {Role::B, Role::H, Role::S, Role::D};
    for (unsigned l = 0; l < 4; ++l)
      if (m.q.perm[l] >= 0)
        qRoles[m.q.perm[l]] = names[l];
    if (m.q.bhMerged >= 0)
      qRoles[m.q.bhMerged] = Role::BH;
    qRoles = splitRoles(qRoles);
    if (qRoles.size() == 2)
      qRoles.insert(qRoles.begin(), {Role::B, Role::H});
  }
  SmallVector<Role> outFull = outRoles;
  if (outFull.size() == 2)
    outFull.insert(outFull.begin(), {Role::B, Role::H});
  if (qRoles != outFull)
    return why.fail(kStep,
                    "the output of P·V is not laid out like Q; a transpose "
                    "would be needed",
                    m.pv.op);

  Location loc = m.pv.op->getLoc();
  RaisedOperands ops;
  ops.q = toRank4(b, loc, m.q, m.batch, ops.qPerm);
  ops.k = toRank4(b, loc, m.k, m.batch, ops.kPerm);
  ops.v = toRank4(b, loc, m.v, m.batch, ops.vPerm);
  Type elt = cast<ShapedType>(m.q.base.getType()).getElementType();
  auto vShape = cast<ShapedType>(ops.v.getType()).getShape();
  SmallVector<int64_t, 4> logicalOut = {m.batch, m.headsQ, m.seqQ,
                                        vShape[ops.vPerm[3]]};
  ops.outputType = RankedTensorType::get(applyPerm(logicalOut, ops.qPerm), elt);
  return ops;
}

void mlir::flash::raise::replaceAttentionOutput(OpBuilder &b,
                                                AttentionMatch &m, Value out,
                                                DenseSet<Operation *> &erased) {
  // Back to the P·V result's shape: merge (B, H) or drop the unit ones.
  Operation *pvOp = m.pv.op;
  Location loc = pvOp->getLoc();
  b.setInsertionPoint(pvOp);
  auto resTy = cast<RankedTensorType>(m.output.getType());
  if (resTy != out.getType()) {
    SmallVector<ReassociationIndices> reassoc;
    unsigned o = 0;
    unsigned lead = 4 - splitRoles(m.outRoles).size(); // unit B, H added
    for (auto [i, r] : llvm::enumerate(m.outRoles)) {
      ReassociationIndices g;
      if (i == 0)
        for (unsigned u = 0; u < lead; ++u)
          g.push_back(o++);
      g.push_back(o++);
      if (r == Role::BH)
        g.push_back(o++);
      reassoc.push_back(g);
    }
    out = tensor::CollapseShapeOp::create(b, loc, resTy, out, reassoc);
  }
  Operation *replaced = m.output.getDefiningOp();
  m.output.replaceAllUsesWith(out);
  eraseDead(replaced, erased);
}

FailureOr<Operation *>
mlir::flash::raise::rewriteAttention(AttentionMatch &m,
                                     DenseSet<Operation *> &erased,
                                     Explainer &why) {
  Operation *pvOp = m.pv.op;
  Location loc = pvOp->getLoc();
  OpBuilder b(pvOp);
  auto operands = buildRaisedOperands(b, m, why);
  if (failed(operands))
    return failure();
  Value q = operands->q, k = operands->k, v = operands->v;
  ArrayRef<int64_t> qPerm = operands->qPerm, kPerm = operands->kPerm,
                    vPerm = operands->vPerm;
  // Bias: an ALiBi term becomes the alibi operand (applied after score_mod,
  // so any term may go), one projectable tensor the bias operand (applied
  // before it, so not with a residual); the rest score_mod.
  Value bias, alibi;
  SmallVector<Expr *> modTerms;
  AlibiDiagonal diag = denseAlibiDiagonal(m);
  for (Expr *t : m.parts.biasTerms) {
    if (!alibi) {
      std::string whyNot;
      if (auto a = matchAlibiBias(t, m, diag, whyNot); succeeded(a)) {
        alibi = buildAlibiSlopes(b, loc, *a, m);
        continue;
      }
      if (m.alibiNote.empty())
        m.alibiNote = whyNot;
    }
    Value asOperand = (!bias && !m.parts.residual) ? projectTo4(b, loc, t, m)
                                                   : Value();
    if (asOperand)
      bias = asOperand;
    else
      modTerms.push_back(t);
  }
  Value mask;
  SmallVector<Expr *> maskConds;
  for (Expr *c : m.masks.rest) {
    Value asOperand =
        !mask && c->type.isInteger(1) ? projectTo4(b, loc, c, m) : Value();
    if (asOperand)
      mask = asOperand;
    else
      maskConds.push_back(c);
  }
  Value seed;
  FloatAttr dropout;
  if (m.dropoutP) {
    // The model's RNG stream is not reproducible by the kernel anyway; a
    // fixed seed keeps forward and backward consistent.
    seed = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
    dropout = b.getF32FloatAttr(*m.dropoutP);
  }

  auto permAttr = [&](ArrayRef<int64_t> p) {
    return llvm::equal(p, ArrayRef<int64_t>{0, 1, 2, 3})
               ? DenseI64ArrayAttr()
               : b.getDenseI64ArrayAttr(p);
  };
  auto i64 = [&](std::optional<int64_t> x) {
    return x ? b.getI64IntegerAttr(*x) : IntegerAttr();
  };
  CausalAlignmentAttr causal;
  if (m.masks.causalBottomRight)
    causal = CausalAlignmentAttr::get(
        b.getContext(), *m.masks.causalBottomRight ? CausalAlignment::BottomRight
                                                   : CausalAlignment::TopLeft);
  auto op = AttentionOp::create(
      b, loc, operands->outputType, /*lse=*/Type(), q, k, v, bias, mask, seed,
      /*cu_seqlens_q=*/Value(), /*cu_seqlens_k=*/Value(),
      /*q_descale=*/Value(), /*k_descale=*/Value(), /*v_descale=*/Value(),
      /*kv_num_blocks=*/Value(), /*kv_indices=*/Value(),
      /*full_kv_num_blocks=*/Value(), /*full_kv_indices=*/Value(), alibi,
      b.getF32FloatAttr(m.parts.scale), causal, i64(m.masks.windowLeft),
      i64(m.masks.windowRight),
      m.parts.softcap ? b.getF32FloatAttr(*m.parts.softcap) : FloatAttr(),
      dropout, permAttr(qPerm), permAttr(kPerm), permAttr(vPerm),
      KernelConfigAttr(), /*sparse_block_size=*/DenseI64ArrayAttr(),
      /*descale_block_size=*/DenseI64ArrayAttr());

  Type f32 = b.getF32Type(), idx = b.getIndexType();
  if (m.parts.residual || !modTerms.empty()) {
    Block *body = b.createBlock(&op.getScoreMod(), {}, {f32, idx, idx, idx, idx},
                                SmallVector<Location>(5, loc));
    DenseMap<const Expr *, Value> memo;
    SmallVector<Value> ids(body->getArguments().drop_front());
    Value s = body->getArgument(0);
    Value r = m.parts.residual
                  ? emitExpr(b, loc, m.parts.residual, s, ids, memo)
                  : s;
    for (Expr *t : modTerms)
      r = arith::AddFOp::create(b, loc, r, emitExpr(b, loc, t, s, ids, memo));
    YieldOp::create(b, loc, r);
  }
  if (!maskConds.empty()) {
    Block *body = b.createBlock(&op.getMaskMod(), {}, {idx, idx, idx, idx},
                                SmallVector<Location>(4, loc));
    DenseMap<const Expr *, Value> memo;
    SmallVector<Value> ids(body->getArguments());
    Value c;
    for (Expr *e : maskConds) {
      Value x = emitExpr(b, loc, e, Value(), ids, memo);
      c = c ? arith::AndIOp::create(b, loc, c, x).getResult() : x;
    }
    YieldOp::create(b, loc, c);
  }

  replaceAttentionOutput(b, m, op.getOutput(), erased);
  return op.getOperation();
}
