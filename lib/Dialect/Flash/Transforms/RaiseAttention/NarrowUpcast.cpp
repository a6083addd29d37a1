//===- NarrowUpcast.cpp - 16-bit attention computed in f32 ----------------===//
//
// PyTorch's CPU decomposition of scaled_dot_product_attention (the one
// torch-mlir exports) computes f16/bf16 attention in f32: Q, K and V are
// up-cast elementwise, the f32 result is cast back. Raised as it stands, the
// op is an f32 attention, which no tensor-core kernel serves. When every
// input is an up-cast from the same 16-bit type and the output only reaches
// (through reshapes) a down-cast to that type, the op is rebuilt on the
// 16-bit values, as frameworks with FlashAttention run such a model: the
// kernels still accumulate in f32 (S, the softmax statistics, O), rounding
// only P to 16 bits for P·V, within FlashAttention's numerics rule.
//
//===----------------------------------------------------------------------===//
#include "Match.h"

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

using namespace mlir;
using namespace mlir::flash;

/// The input of `op` when it is an elementwise float conversion between two
/// tensors of one shape (a linalg.generic of one `CastOp`, that op on
/// tensors, or tosa.cast), else null.
template <typename CastOp>
static Value castInput(Operation *op) {
  if (!op || op->getNumResults() != 1)
    return {};
  if (auto c = dyn_cast<CastOp>(op))
    return c.getIn();
  if (auto c = dyn_cast<tosa::CastOp>(op))
    return c.getInput();
  auto g = dyn_cast<linalg::GenericOp>(op);
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }) ||
      !llvm::all_of(g.getIteratorTypesArray(), [](utils::IteratorType t) {
        return t == utils::IteratorType::parallel;
      }))
    return {};
  Block &body = g.getRegion().front();
  auto cast = dyn_cast<CastOp>(body.front());
  if (!cast || body.getOperations().size() != 2 ||
      cast->getOperand(0) != body.getArgument(0) ||
      body.getTerminator()->getOperand(0) != cast->getResult(0))
    return {};
  return g.getDpsInputOperand(0)->get();
}

static bool isSixteenBit(Type t) { return t.isF16() || t.isBF16(); }

Operation *mlir::flash::raise::narrowUpcastAttention(AttentionOp op) {
  if (!getElementTypeOrSelf(op.getOutput().getType()).isF32())
    return op;
  // The inputs: up-casts to f32 from one 16-bit type.
  SmallVector<Value, 3> narrow;
  for (Value v : {op.getQuery(), op.getKey(), op.getValue()}) {
    if (!getElementTypeOrSelf(v).isF32())
      return op;
    Value src = castInput<arith::ExtFOp>(v.getDefiningOp());
    if (!src || !isSixteenBit(getElementTypeOrSelf(src)) ||
        (!narrow.empty() &&
         getElementTypeOrSelf(src) != getElementTypeOrSelf(narrow.front())))
      return op;
    narrow.push_back(src);
  }
  Type elt = getElementTypeOrSelf(narrow.front());
  // The output: single-use reshapes, then a down-cast to that type.
  SmallVector<Operation *> reshapes;
  Value cur = op.getOutput();
  Operation *down = nullptr;
  while (cur.hasOneUse()) {
    Operation *user = *cur.getUsers().begin();
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user)) {
      reshapes.push_back(user);
      cur = user->getResult(0);
      continue;
    }
    if (castInput<arith::TruncFOp>(user) == cur &&
        getElementTypeOrSelf(user->getResult(0)) == elt)
      down = user;
    break;
  }
  if (!down)
    return op;

  // The same op on the 16-bit values (attributes and regions carried
  // over), then the reshapes replayed on its result.
  OpBuilder b(op);
  auto narrowTy = [&](Type t) {
    return cast<RankedTensorType>(t).clone(elt);
  };
  OperationState state(op.getLoc(), op->getName());
  SmallVector<Value> operands(op->getOperands());
  for (int i = 0; i < 3; ++i)
    operands[i] = narrow[i];
  state.addOperands(operands);
  state.addAttributes(op->getAttrs());
  SmallVector<Type> types(op->getResultTypes());
  types[0] = narrowTy(types[0]);
  state.addTypes(types);
  for (Region &r : op->getRegions())
    state.addRegion()->takeBody(r);
  Operation *narrowOp = b.create(state);
  Value out = narrowOp->getResult(0);
  for (Operation *r : reshapes) {
    b.setInsertionPoint(r);
    if (auto c = dyn_cast<tensor::CollapseShapeOp>(r))
      out = tensor::CollapseShapeOp::create(b, c.getLoc(),
                                            narrowTy(c.getType()), out,
                                            c.getReassociationIndices());
    else {
      auto e = cast<tensor::ExpandShapeOp>(r);
      out = tensor::ExpandShapeOp::create(
          b, e.getLoc(), narrowTy(e.getType()), out,
          e.getReassociationIndices(), e.getMixedOutputShape());
    }
  }
  down->getResult(0).replaceAllUsesWith(out);
  if (op->getNumResults() > 1)
    op->getResult(1).replaceAllUsesWith(narrowOp->getResult(1));
  // The old chain, innermost user first, and the casts left unused (with
  // the tensor.empty a generic wrote into).
  auto eraseCast = [](Operation *c) {
    Operation *init = nullptr;
    if (auto g = dyn_cast<linalg::GenericOp>(c))
      init = g.getDpsInitOperand(0)->get().getDefiningOp<tensor::EmptyOp>();
    c->erase();
    if (init && init->use_empty())
      init->erase();
  };
  eraseCast(down);
  for (Operation *r : llvm::reverse(reshapes))
    r->erase();
  SmallVector<Operation *> upcasts;
  for (Value v : {op.getQuery(), op.getKey(), op.getValue()})
    if (Operation *def = v.getDefiningOp();
        def && !llvm::is_contained(upcasts, def))
      upcasts.push_back(def);
  op->erase();
  for (Operation *u : upcasts)
    if (u->use_empty())
      eraseCast(u);
  return narrowOp;
}
