//===- TMTensorDialect.cpp - verifiers of the tm_tensor ops ---------------===//
//
// The checks a reader of these ops relies on: operand counts, the shapes that
// tie operands together, and region signatures. Messages name the operand
// and the expected shape.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Dialect/TMTensor/IR/TMTensorDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::flash::tm_tensor;

#include "flashfuse/Dialect/TMTensor/IR/TMTensorDialect.cpp.inc"

void TMTensorDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "flashfuse/Dialect/TMTensor/IR/TMTensorOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "flashfuse/Dialect/TMTensor/IR/TMTensorOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

static bool sameDim(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += ", ";
    s += ShapedType::isDynamic(d) ? "?" : std::to_string(d);
  }
  return s + "]";
}

static bool sameShape(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  return a.size() == b.size() &&
         llvm::all_of(llvm::zip(a, b),
                      [](auto p) { return sameDim(std::get<0>(p), std::get<1>(p)); });
}

/// Destination style: tensor outputs give results of the same types, memref
/// outputs none.
static LogicalResult verifyDestinations(Operation *op, ValueRange outputs,
                                        TypeRange results) {
  bool tensors = llvm::all_of(outputs.getTypes(), llvm::IsaPred<TensorType>);
  if (!tensors) {
    if (!results.empty())
      return op->emitOpError("has memref outputs and must have no results");
    return success();
  }
  if (outputs.getTypes() != results)
    return op->emitOpError("expects one result per output, of the output's "
                           "type");
  return success();
}

/// The region has one block with `args` scalar arguments and yields
/// `yields` values; types are checked where given.
static LogicalResult verifyRegion(Operation *op, Region &region,
                                  ArrayRef<Type> args,
                                  ArrayRef<Type> yields) {
  Block &block = region.front();
  if (block.getNumArguments() != args.size())
    return op->emitOpError("expects its region to take ")
           << args.size() << " arguments, got " << block.getNumArguments();
  for (auto [i, a] : llvm::enumerate(block.getArguments()))
    if (args[i] && a.getType() != args[i])
      return op->emitOpError("expects region argument #")
             << i << " of type " << args[i] << ", got " << a.getType();
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return op->emitOpError("expects its region to end in tm_tensor.yield");
  if (yield.getNumOperands() != yields.size())
    return op->emitOpError("expects its region to yield ")
           << yields.size() << " value(s), got " << yield.getNumOperands();
  for (auto [i, t] : llvm::enumerate(yield.getOperandTypes()))
    if (yields[i] && t != yields[i])
      return op->emitOpError("expects its region to yield ")
             << yields[i] << " as value #" << i << ", got " << t;
  return success();
}

/// Inputs are read, outputs read and written, when they are memrefs; on
/// tensors the ops have no memory effects.
static void getDpsEffects(
    MutableOperandRange inputs, MutableOperandRange outputs,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  for (OpOperand &o : inputs)
    if (isa<MemRefType>(o.get().getType()))
      effects.emplace_back(MemoryEffects::Read::get(), &o,
                           SideEffects::DefaultResource::get());
  for (OpOperand &o : outputs) {
    if (!isa<MemRefType>(o.get().getType()))
      continue;
    effects.emplace_back(MemoryEffects::Read::get(), &o,
                         SideEffects::DefaultResource::get());
    effects.emplace_back(MemoryEffects::Write::get(), &o,
                         SideEffects::DefaultResource::get());
  }
}

#define TM_TENSOR_EFFECTS(OP)                                                  \
  void OP::getEffects(                                                         \
      SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>      \
          &effects) {                                                          \
    getDpsEffects(getInputsMutable(), getOutputsMutable(), effects);           \
  }
TM_TENSOR_EFFECTS(ScanOp)
TM_TENSOR_EFFECTS(ScatterOp)
TM_TENSOR_EFFECTS(SortOp)
TM_TENSOR_EFFECTS(TopkOp)
TM_TENSOR_EFFECTS(AttentionOp)
#undef TM_TENSOR_EFFECTS

static ShapedType shaped(Value v) { return cast<ShapedType>(v.getType()); }

//===----------------------------------------------------------------------===//
// scan
//===----------------------------------------------------------------------===//

LogicalResult ScanOp::verify() {
  if (getInputs().size() != 1 || getOutputs().size() != 2)
    return emitOpError("expects one input and two outputs (result, "
                       "accumulator), got ")
           << getInputs().size() << " and " << getOutputs().size();
  ShapedType in = shaped(getInputs()[0]);
  ShapedType out = shaped(getOutputs()[0]);
  ShapedType acc = shaped(getOutputs()[1]);
  int64_t dim = getDimension();
  if (dim < 0 || dim >= in.getRank())
    return emitOpError("dimension ") << dim << " is out of range for the "
                                     << in.getRank() << "-d input";
  if (!sameShape(out.getShape(), in.getShape()))
    return emitOpError("expects the result output of the input's shape ")
           << shapeStr(in.getShape()) << ", got " << shapeStr(out.getShape());
  SmallVector<int64_t> accShape(in.getShape());
  accShape.erase(accShape.begin() + dim);
  if (!sameShape(acc.getShape(), accShape))
    return emitOpError("expects the accumulator of shape ")
           << shapeStr(accShape) << " (the input without dimension " << dim
           << "), got " << shapeStr(acc.getShape());
  Type elt = in.getElementType();
  if (out.getElementType() != elt || acc.getElementType() != elt)
    return emitOpError("expects the outputs to have the input's element "
                       "type ")
           << elt;
  if (failed(verifyRegion(*this, getRegion(), {elt, elt}, {elt})))
    return failure();
  return verifyDestinations(*this, getOutputs(), getResultTypes());
}

//===----------------------------------------------------------------------===//
// scatter
//===----------------------------------------------------------------------===//

LogicalResult ScatterOp::verify() {
  if (getInputs().size() != 2 || getOutputs().size() != 1)
    return emitOpError("expects two inputs (updates, indices) and one output "
                       "(original), got ")
           << getInputs().size() << " and " << getOutputs().size();
  ShapedType updates = shaped(getInputs()[0]);
  ShapedType indices = shaped(getInputs()[1]);
  ShapedType original = shaped(getOutputs()[0]);
  if (indices.getRank() != 2 || !indices.getElementType().isIntOrIndex())
    return emitOpError("expects indices [N, depth] of integers, got ")
           << indices;
  if (indices.isDynamicDim(1))
    return emitOpError("expects a static index depth");
  int64_t depth = indices.getDimSize(1);
  if (updates.getRank() < 1 ||
      !sameDim(updates.getDimSize(0), indices.getDimSize(0)))
    return emitOpError("expects updates [N, ...] with N = ")
           << indices.getDimSize(0) << " (the indices' rows), got " << updates;
  ArrayRef<int64_t> map = getDimensionMap();
  if (int64_t(map.size()) != depth)
    return emitOpError("expects dimension_map of ")
           << depth << " entries (the index depth), got " << map.size();
  for (int64_t d : map)
    if (d < 0 || d >= original.getRank())
      return emitOpError("dimension_map entry ")
             << d << " is out of range for the " << original.getRank()
             << "-d original";
  int64_t sliceRank = updates.getRank() - 1;
  if (sliceRank > original.getRank())
    return emitOpError("expects update slices of rank <= ")
           << original.getRank() << ", got " << sliceRank;
  // The slice lines up with the trailing dims of original.
  for (int64_t i = 0; i < sliceRank; ++i) {
    int64_t u = updates.getDimSize(updates.getRank() - 1 - i);
    int64_t o = original.getDimSize(original.getRank() - 1 - i);
    if (!ShapedType::isDynamic(u) && !ShapedType::isDynamic(o) && u > o)
      return emitOpError("update slice dim ")
             << updates.getRank() - 1 - i << " (" << u
             << ") exceeds the original's (" << o << ")";
  }
  if (failed(verifyRegion(*this, getRegion(),
                          {updates.getElementType(),
                           original.getElementType()},
                          {original.getElementType()})))
    return failure();
  return verifyDestinations(*this, getOutputs(), getResultTypes());
}

//===----------------------------------------------------------------------===//
// sort
//===----------------------------------------------------------------------===//

LogicalResult SortOp::verify() {
  if (getOutputs().empty())
    return emitOpError("expects at least one output");
  ShapedType first = shaped(getOutputs()[0]);
  int64_t dim = getDimension();
  if (dim < 0 || dim >= first.getRank())
    return emitOpError("dimension ") << dim << " is out of range for the "
                                     << first.getRank() << "-d outputs";
  SmallVector<Type> args;
  for (auto [i, o] : llvm::enumerate(getOutputs())) {
    ShapedType t = shaped(o);
    if (!sameShape(t.getShape(), first.getShape()))
      return emitOpError("expects every output of shape ")
             << shapeStr(first.getShape()) << ", output #" << i << " is "
             << shapeStr(t.getShape());
    args.push_back(t.getElementType());
    args.push_back(t.getElementType());
  }
  Builder b(getContext());
  if (failed(verifyRegion(*this, getRegion(), args, {b.getI1Type()})))
    return failure();
  return verifyDestinations(*this, getOutputs(), getResultTypes());
}

//===----------------------------------------------------------------------===//
// topk
//===----------------------------------------------------------------------===//

LogicalResult TopkOp::verify() {
  if (getInputs().empty() || getInputs().size() > 2 ||
      getOutputs().size() != 2)
    return emitOpError("expects one or two inputs (values, indices) and two "
                       "outputs, got ")
           << getInputs().size() << " and " << getOutputs().size();
  ShapedType values = shaped(getInputs()[0]);
  ShapedType outValues = shaped(getOutputs()[0]);
  ShapedType outIndices = shaped(getOutputs()[1]);
  int64_t dim = getDimension();
  if (dim < 0 || dim >= values.getRank())
    return emitOpError("dimension ") << dim << " is out of range for the "
                                     << values.getRank() << "-d input";
  if (getInputs().size() == 2 &&
      !sameShape(shaped(getInputs()[1]).getShape(), values.getShape()))
    return emitOpError("expects input indices of the values' shape ")
           << shapeStr(values.getShape());
  if (!sameShape(outValues.getShape(), outIndices.getShape()))
    return emitOpError("expects the two outputs to have one shape");
  if (outValues.getRank() != values.getRank())
    return emitOpError("expects outputs of the input's rank ")
           << values.getRank();
  for (int64_t i = 0; i < values.getRank(); ++i)
    if (i != dim &&
        !sameDim(values.getDimSize(i), outValues.getDimSize(i)))
      return emitOpError("expects outputs of the input's shape but for "
                         "dimension ")
             << dim << ", got " << shapeStr(outValues.getShape());
  Type elt = values.getElementType();
  Builder b(getContext());
  if (failed(verifyRegion(*this, getRegion(), {elt, elt}, {b.getI1Type()})))
    return failure();
  return verifyDestinations(*this, getOutputs(), getResultTypes());
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  if (getInputs().size() < 3 || getInputs().size() > 4 ||
      getOutputs().size() != 1)
    return emitOpError("expects inputs query, key, value and an optional "
                       "mask, and one output; got ")
           << getInputs().size() << " and " << getOutputs().size();
  ShapedType q = shaped(getQuery()), k = shaped(getKey()),
             v = shaped(getValue()), out = shaped(getOutputs()[0]);
  int64_t rank = q.getRank();
  if (rank < 3)
    return emitOpError("expects query [batch..., M, D] of rank >= 3, got ")
           << q;
  int64_t nb = rank - 2;
  ArrayRef<int64_t> batch = q.getShape().take_front(nb);
  int64_t m = q.getDimSize(rank - 2), d = q.getDimSize(rank - 1);
  int64_t n = k.getRank() == rank ? k.getDimSize(rank - 2) : 0;
  int64_t dv = v.getRank() == rank ? v.getDimSize(rank - 1) : 0;
  auto expect = [&](StringRef name, ShapedType t,
                    ArrayRef<int64_t> tail) -> LogicalResult {
    SmallVector<int64_t> shape(batch);
    shape.append(tail.begin(), tail.end());
    if (!sameShape(t.getShape(), shape))
      return emitOpError("expects ")
             << name << " of shape " << shapeStr(shape) << ", got "
             << shapeStr(t.getShape());
    return success();
  };
  if (failed(expect("key", k, {n, d})) ||
      failed(expect("value", v, {n, dv})) ||
      failed(expect("output", out, {m, dv})))
    return failure();
  if (Value mask = getMask()) {
    ShapedType mt = shaped(mask);
    if (failed(expect("mask", mt, {m, n})))
      return failure();
    if (!isa<FloatType>(mt.getElementType()) &&
        !mt.getElementType().isInteger(1))
      return emitOpError("expects a floating-point (additive) or i1 mask, "
                         "got ")
             << mt.getElementType();
  }
  for (auto [name, t] : {std::pair{"query", q}, {"key", k}, {"value", v}})
    if (!isa<FloatType>(t.getElementType()))
      return emitOpError("expects a floating-point ") << name;
  return verifyDestinations(*this, getOutputs(), getResultTypes());
}
