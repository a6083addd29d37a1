//===- VerifierUtils.cpp - diagnostics shared by the flash verifiers ------===//
#include "VerifierUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

using namespace mlir;

std::string mlir::flash::detail::shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (d == ShapedType::kDynamic)
      os << "?";
    else
      os << d;
  });
  os << "]";
  return s;
}

std::string mlir::flash::detail::num(double d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", d);
  return buf;
}

bool mlir::flash::detail::compatibleShape(ArrayRef<int64_t> got,
                                          ArrayRef<int64_t> want) {
  return got.size() == want.size() &&
         llvm::all_of(llvm::zip(got, want), [](auto p) {
           return compatible(std::get<0>(p), std::get<1>(p));
         });
}

int64_t mlir::flash::detail::firstStatic(std::initializer_list<int64_t> sizes) {
  for (int64_t s : sizes)
    if (s != ShapedType::kDynamic)
      return s;
  return ShapedType::kDynamic;
}

LogicalResult mlir::flash::detail::verifyAttributeNames(Operation *op) {
  ArrayRef<StringAttr> known = op->getName().getAttributeNames();
  for (NamedAttribute a : op->getDiscardableAttrs()) {
    StringRef name = a.getName().getValue();
    if (name.contains('.') || llvm::is_contained(known, a.getName()))
      continue;
    std::string names;
    llvm::raw_string_ostream os(names);
    llvm::interleaveComma(
        llvm::make_filter_range(known,
                                [](StringAttr n) {
                                  return n.getValue() != "operandSegmentSizes" &&
                                         n.getValue() != "resultSegmentSizes";
                                }),
        os, [&](StringAttr n) { os << n.getValue(); });
    return op->emitOpError() << "has no attribute '" << name
                             << "' (its attributes: " << names
                             << "; dialect-prefixed names pass through)";
  }
  return success();
}

LogicalResult mlir::flash::detail::verifyPerm(Operation *op, StringRef name,
                                              DenseI64ArrayAttr perm) {
  if (!perm)
    return success();
  SmallVector<int64_t> sorted(perm.asArrayRef());
  llvm::sort(sorted);
  if (sorted != SmallVector<int64_t>{0, 1, 2, 3})
    return op->emitOpError() << "'" << name
                             << "' must be a permutation of [0, 1, 2, 3], got "
                             << shapeStr(perm.asArrayRef());
  return success();
}
