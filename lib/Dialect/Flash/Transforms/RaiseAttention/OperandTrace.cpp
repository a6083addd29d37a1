//===- OperandTrace.cpp - logical [B, H, S, D] views of Q, K and V --------===//
//
// Model code reaches the matmuls through layout changes that
// flash.attention absorbs: the transpose of K (and BSHD -> BHSD transposes)
// become perms, the collapse of batch and heads into one matmul batch dim is
// undone, constant scalings of Q or K fold into `scale`, and the head
// broadcast of grouped-query attention (unsqueeze, expand, reshape: query
// head h reads kv head h / G) is dropped in favour of the un-repeated K/V.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::flash::raise;

static constexpr StringLiteral kStep = "operand layout";

/// A copy: input dim j is read at map.getResult(j), an expression of the
/// result dims.
static std::optional<std::pair<Value, AffineMap>> copyOf(Operation *op) {
  auto ew = matchElementwise(op);
  if (!ew || ew->inputs.size() != 1)
    return std::nullopt;
  bool isCopy = ew->body ? ew->body->getTerminator()->getOperand(0) ==
                               ew->body->getArgument(0)
                         : ew->kind == ScalarKind::Copy;
  if (!isCopy)
    return std::nullopt;
  AffineMap inv = inversePermutation(ew->outputMap);
  return std::make_pair(ew->inputs[0], ew->inputMaps[0].compose(inv));
}

/// The constant factor of `x * c`, `c * x` or `x / c` where x is the only
/// tensor input.
static std::optional<std::pair<Value, double>> scaledBy(Operation *op) {
  auto ew = matchElementwise(op);
  if (!ew || op->getNumResults() != 1)
    return std::nullopt;
  auto shape = cast<ShapedType>(op->getResult(0).getType()).getShape();
  if (shape.size() > 4 || ew->inputs.empty())
    return std::nullopt;
  LinIndex id = identityIndex(shape.size());
  Extents ext = extentsOf(shape);
  ExprBuilder b(Value(), id, ext);
  // Constant inputs must fold into the tree; the tensor input stays a leaf.
  for (Value in : ew->inputs)
    if (!splatConstant(in))
      b.stops.insert(in);
  Explainer local;
  auto t = b.build(op->getResult(0), id, local);
  if (failed(t))
    return std::nullopt;
  const Expr *e = *t;
  if (e->kind != Expr::Op ||
      (e->op != ScalarKind::Mul && e->op != ScalarKind::Div))
    return std::nullopt;
  for (unsigned i = 0; i < 2; ++i) {
    const Expr *x = stripFloatCasts(e->operands[i]);
    const Expr *c = stripFloatCasts(e->operands[1 - i]);
    if (x->kind != Expr::Read || x->at != id || c->kind != Expr::Const ||
        c->fval == 0.0)
      continue;
    if (e->op == ScalarKind::Div && i != 0)
      continue;
    // Only a cast-free chain keeps the operand's type unchanged.
    if (getElementTypeOrSelf(x->tensor.getType()) !=
        getElementTypeOrSelf(op->getResult(0).getType()))
      return std::nullopt;
    return std::make_pair(x->tensor,
                          e->op == ScalarKind::Mul ? c->fval : 1.0 / c->fval);
  }
  return std::nullopt;
}

/// The K/V tensor before a head broadcast: `src` copies its input along
/// `gDim`, reading it at 0 (a unit dim from an unsqueeze) or not at all.
static std::optional<Value> peelHeadBroadcast(Value src, int64_t gDim) {
  Operation *def = src.getDefiningOp();
  auto copy = def ? copyOf(def) : std::nullopt;
  if (!copy)
    return std::nullopt;
  auto [in, map] = *copy;
  auto shape = cast<ShapedType>(src.getType()).getShape();
  auto inShape = cast<ShapedType>(in.getType()).getShape();
  MLIRContext *ctx = map.getContext();
  bool readsAtZero = map.getNumResults() == shape.size() &&
                     map.getResult(gDim) == getAffineConstantExpr(0, ctx) &&
                     inShape[gDim] == 1;
  bool drops = map.getNumResults() + 1 == shape.size() &&
               !map.isFunctionOfDim(gDim);
  if (!readsAtZero && !drops)
    return std::nullopt;
  // Every other input dim reads the same result dim.
  unsigned r = 0;
  for (unsigned d = 0; d < shape.size(); ++d) {
    if (d == unsigned(gDim)) {
      r += readsAtZero;
      continue;
    }
    if (map.getResult(r++) != getAffineDimExpr(d, ctx))
      return std::nullopt;
  }
  if (drops)
    return in;
  // The unit dim came from an unsqueeze (expand_shape); read the tensor
  // before it.
  auto un = in.getDefiningOp() ? matchReshape(in.getDefiningOp()) : std::nullopt;
  if (!un || !un->expand ||
      cast<ShapedType>(un->source.getType()).getRank() + 1 !=
          int64_t(inShape.size()))
    return std::nullopt;
  return un->source;
}

FailureOr<OperandView> mlir::flash::raise::traceOperand(Value v,
                                                        ArrayRef<Role> roles,
                                                        bool allowTranspose,
                                                        bool allowGqa,
                                                        Explainer &why) {
  SmallVector<Role> cur(roles.begin(), roles.end());
  OperandView view;
  auto indexOf = [&](Role r) -> int64_t {
    auto it = llvm::find(cur, r);
    return it == cur.end() ? -1 : it - cur.begin();
  };
  // Each iteration peels one op; the chains are short, the bound guards
  // against cycles through unexpected IR.
  for (unsigned step = 0; step < 32; ++step) {
    Operation *def = v.getDefiningOp();
    if (!def)
      break;
    if (auto rs = matchReshape(def); rs && !rs->expand) {
      // Undo the merge of B and H into one batch dim.
      int64_t bh = indexOf(Role::BH);
      auto shape = cast<ShapedType>(rs->source.getType()).getShape();
      // Only the group of `dim` may merge source dims.
      auto othersSingle = [&](int64_t dim) {
        return llvm::all_of(llvm::enumerate(rs->reassoc), [&](auto g) {
          return int64_t(g.index()) == dim || g.value().size() == 1;
        });
      };
      // (B, Hkv, G) collapsed at once into the batch dim, G a broadcast.
      Value src = rs->source;
      if (allowGqa && bh >= 0 && othersSingle(bh) &&
          rs->reassoc[bh].size() == 3) {
        int64_t gDim = rs->reassoc[bh][2];
        if (auto base = peelHeadBroadcast(rs->source, gDim)) {
          view.kvGroups *= shape[gDim];
          src = *base;
        }
      }
      if (bh >= 0 && othersSingle(bh) &&
          (rs->reassoc[bh].size() == 2 || src != rs->source)) {
        SmallVector<Role> next;
        for (auto [i, g] : llvm::enumerate(rs->reassoc)) {
          if (int64_t(i) == bh) {
            next.push_back(Role::B);
            next.push_back(Role::H);
          } else {
            next.push_back(cur[i]);
          }
        }
        cur = next;
        v = src;
        continue;
      }
      // GQA: heads = (kv heads, G) where the G dim is a broadcast.
      int64_t h = indexOf(Role::H);
      if (allowGqa && h >= 0 && othersSingle(h) && rs->reassoc[h].size() == 2) {
        int64_t gDim = rs->reassoc[h][1];
        if (auto base = peelHeadBroadcast(rs->source, gDim)) {
          view.kvGroups *= shape[gDim];
          v = *base;
          continue;
        }
      }
      break;
    }
    if (auto copy = copyOf(def)) {
      auto [in, map] = *copy;
      if (!allowTranspose || !map.isPermutation())
        break;
      // Input dim j holds result dim map(j).
      SmallVector<Role> next(cur.size());
      for (unsigned j = 0; j < cur.size(); ++j)
        next[j] = cur[cast<AffineDimExpr>(map.getResult(j)).getPosition()];
      cur = next;
      v = in;
      continue;
    }
    if (auto s = scaledBy(def)) {
      view.scale *= s->second;
      v = s->first;
      continue;
    }
    break;
  }
  view.base = v;
  for (unsigned i = 0; i < 4; ++i)
    view.perm[i] = -1;
  view.perm[0] = indexOf(Role::B);
  view.perm[1] = indexOf(Role::H);
  view.perm[2] = indexOf(Role::S);
  view.perm[3] = indexOf(Role::D);
  view.bhMerged = indexOf(Role::BH);
  if (view.perm[2] < 0 || view.perm[3] < 0)
    return why.fail(kStep, "operand has no sequence or head dim", v.getDefiningOp());
  return view;
}
