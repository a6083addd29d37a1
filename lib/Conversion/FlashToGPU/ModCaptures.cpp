//===- ModCaptures.cpp - values a score_mod / mask_mod reads from above ---===//
//
// See ModCaptures.h.
//
//===----------------------------------------------------------------------===//
#include "ModCaptures.h"

#include <limits>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::flash;

/// A scalar type a kernel parameter carries exactly.
static bool isCapturableScalar(Type t) {
  if (auto it = dyn_cast<IntegerType>(t))
    return it.getWidth() <= 64;
  return isa<IndexType>(t) || t.isF16() || t.isBF16() || t.isF32();
}

/// A scalar constant: cloned into the kernel rather than passed.
static bool isScalarConstant(Value v) {
  return isCapturableScalar(v.getType()) && matchPattern(v, m_Constant());
}

static std::string captureName(size_t i) { return "capture" + std::to_string(i); }

FailureOr<SmallVector<Value>>
mlir::flash::collectModCaptures(Operation *op, ArrayRef<Region *> regions) {
  llvm::SetVector<Value> captures;
  for (Region *r : regions)
    r->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (!op->isAncestor(v.getParentRegion()->getParentOp()) &&
            !isScalarConstant(v))
          captures.insert(v);
    });
  auto insideRegions = [&](Operation *user) {
    return llvm::any_of(regions,
                        [&](Region *r) { return r->isAncestor(user->getParentRegion()); });
  };
  for (Value v : captures) {
    auto tensor = dyn_cast<RankedTensorType>(v.getType());
    if (!tensor && isCapturableScalar(v.getType()))
      continue;
    if (!tensor || !isCapturableScalar(tensor.getElementType()))
      return op->emitOpError()
             << "a score_mod or mask_mod reads a value of type " << v.getType()
             << " from above the op; a kernel takes integers (up to 64 bits), "
                "index, f16, bf16 and f32 values, and ranked tensors of them";
    // The kernels address a captured tensor in 32 bits (its offsets,
    // lowerCapturedTensorReads); the runtime checks dynamic extents.
    if (tensor.hasStaticShape() &&
        tensor.getNumElements() > std::numeric_limits<int32_t>::max())
      return op->emitOpError()
             << "a score_mod or mask_mod reads the tensor " << v.getType()
             << " of " << tensor.getNumElements()
             << " elements from above the op; a kernel addresses a captured "
                "tensor in 32 bits (at most 2147483647 elements)";
    for (OpOperand &use : v.getUses()) {
      if (!insideRegions(use.getOwner()))
        continue;
      auto extract = dyn_cast<tensor::ExtractOp>(use.getOwner());
      if (!extract || extract.getTensor() != v)
        return op->emitOpError()
               << "a score_mod or mask_mod reads the tensor " << v.getType()
               << " from above the op through '"
               << use.getOwner()->getName()
               << "'; a kernel reads such tensors only by tensor.extract";
    }
  }
  return SmallVector<Value>(captures.begin(), captures.end());
}

Type mlir::flash::captureBufferElementType(Type elt) {
  MLIRContext *ctx = elt.getContext();
  if (isa<IndexType>(elt))
    return IntegerType::get(ctx, 64);
  if (elt.isInteger(1))
    return IntegerType::get(ctx, 8);
  return elt;
}

Type mlir::flash::captureBufferElementType(ArrayRef<Value> captures,
                                           StringRef name) {
  for (auto [i, v] : llvm::enumerate(captures))
    if (name == captureName(i))
      if (auto tensor = dyn_cast<RankedTensorType>(v.getType()))
        return captureBufferElementType(tensor.getElementType());
  return Type();
}

SmallVector<std::string>
mlir::flash::captureManifestTypes(ArrayRef<Value> captures) {
  SmallVector<std::string> types;
  for (Value v : captures) {
    std::string token;
    llvm::raw_string_ostream os(token);
    auto tensor = dyn_cast<RankedTensorType>(v.getType());
    os << (tensor ? tensor.getElementType() : v.getType());
    if (tensor)
      os << "/" << tensor.getRank();
    types.push_back(token);
  }
  return types;
}

/// The kind of the scalar parameter carrying a value of type `t`.
static const char *scalarParamKind(Type t) {
  if (isa<FloatType>(t))
    return "f32";
  if (isa<IndexType>(t) || t.isInteger(64))
    return "i64";
  return "i32";
}

void mlir::flash::appendCaptureParams(ArrayRef<Value> captures,
                                      SmallVectorImpl<std::string> &params) {
  for (auto [i, v] : llvm::enumerate(captures)) {
    std::string name = captureName(i);
    auto tensor = dyn_cast<RankedTensorType>(v.getType());
    if (!tensor) {
      params.push_back(std::string(scalarParamKind(v.getType())) + ":" + name);
      continue;
    }
    params.push_back("memref:" + name);
    for (int64_t k = 0; k + 1 < tensor.getRank(); ++k)
      params.push_back("i64:" + name + "_stride_" + std::to_string(k));
  }
}

/// The scalar parameter `param` as a value of the captured type `t`.
static Value scalarFromParam(OpBuilder &b, Location loc, Value param, Type t) {
  if (param.getType() == t)
    return param;
  if (isa<IndexType>(t))
    return arith::IndexCastOp::create(b, loc, t, param);
  if (isa<FloatType>(t))
    return arith::TruncFOp::create(b, loc, t, param);
  return arith::TruncIOp::create(b, loc, t, param);
}

SmallVector<Operation *>
mlir::flash::mapModCaptures(OpBuilder &b, Location loc, Region *region,
                            ArrayRef<Value> captures,
                            const llvm::StringMap<Value> &params,
                            IRMapping &map) {
  SmallVector<Operation *> placeholders;
  Operation *op = region->getParentOp();
  region->walk([&](Operation *inner) {
    for (Value v : inner->getOperands()) {
      if (op->isAncestor(v.getParentRegion()->getParentOp()) || map.contains(v))
        continue;
      const auto *it = llvm::find(captures, v);
      if (it == captures.end()) {
        // A scalar constant (collectModCaptures passes no other value).
        map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
        continue;
      }
      std::string name = captureName(it - captures.begin());
      auto tensor = dyn_cast<RankedTensorType>(v.getType());
      if (!tensor) {
        map.map(v, scalarFromParam(b, loc, params.lookup(name), v.getType()));
        continue;
      }
      // The buffer and the strides (as index) ride on a placeholder of the
      // tensor's type, so that the cloned tensor.extract ops, nested ones
      // included, find them through their operand.
      SmallVector<Value> inputs = {params.lookup(name)};
      for (int64_t k = 0; k + 1 < tensor.getRank(); ++k)
        inputs.push_back(arith::IndexCastOp::create(
            b, loc, b.getIndexType(),
            params.lookup(name + "_stride_" + std::to_string(k))));
      auto cast =
          UnrealizedConversionCastOp::create(b, loc, TypeRange{tensor}, inputs);
      placeholders.push_back(cast);
      map.map(v, cast.getResult(0));
    }
  });
  return placeholders;
}

void mlir::flash::lowerCapturedTensorReads(ArrayRef<Operation *> placeholders,
                                           bool clampToBuffer) {
  for (Operation *placeholder : placeholders) {
    Value buffer = placeholder->getOperand(0);
    auto tensor = cast<RankedTensorType>(placeholder->getResult(0).getType());
    Type elt = tensor.getElementType();
    for (Operation *user : llvm::make_early_inc_range(placeholder->getUsers())) {
      auto extract = cast<tensor::ExtractOp>(user);
      OpBuilder b(extract);
      Location loc = extract.getLoc();
      // Row-major over the strides; the last dimension is contiguous. In
      // 32 bits (a captured buffer holds fewer than 2^31 elements: the
      // runtime and flashfuse.artifact refuse larger ones): half the
      // registers of index arithmetic, which took the D = 128 backwards
      // of document masks from 8-12 bytes of spill to 0 (docs/PERF.md
      // run 445).
      Type i32 = b.getI32Type();
      auto to32 = [&](Value x) {
        return Value(arith::IndexCastOp::create(b, loc, i32, x));
      };
      Value offset = arith::ConstantIntOp::create(b, loc, i32, 0);
      size_t rank = extract.getIndices().size();
      for (auto [k, index] : llvm::enumerate(extract.getIndices())) {
        Value term = to32(index);
        if (k + 1 < rank) {
          Value stride = to32(placeholder->getOperand(1 + k));
          term = arith::MulIOp::create(b, loc, term, stride);
        }
        offset = arith::AddIOp::create(b, loc, offset, term);
      }
      if (clampToBuffer) {
        Value last = arith::SubIOp::create(
            b, loc, to32(memref::DimOp::create(b, loc, buffer, 0)),
            arith::ConstantIntOp::create(b, loc, i32, 1));
        offset = arith::MaxSIOp::create(
            b, loc, arith::MinSIOp::create(b, loc, offset, last),
            arith::ConstantIntOp::create(b, loc, i32, 0));
      }
      offset = arith::IndexCastOp::create(b, loc, b.getIndexType(), offset);
      Value v = memref::LoadOp::create(b, loc, buffer, ValueRange{offset});
      if (isa<IndexType>(elt))
        v = arith::IndexCastOp::create(b, loc, elt, v);
      else if (elt.isInteger(1))
        v = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ne, v,
            arith::ConstantIntOp::create(b, loc, b.getI8Type(), 0));
      extract.replaceAllUsesWith(v);
      extract.erase();
    }
    placeholder->erase();
  }
}
