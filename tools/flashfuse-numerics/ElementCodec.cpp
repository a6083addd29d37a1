//===- ElementCodec.cpp - host doubles <-> memref element bytes -----------===//
#include "ElementCodec.h"

#include "llvm/ADT/APFloat.h"

#include <cstring>

using namespace flashfuse::numerics;

static const llvm::fltSemantics &semantics(const std::string &type) {
  if (type == "f16")
    return llvm::APFloat::IEEEhalf();
  if (type == "bf16")
    return llvm::APFloat::BFloat();
  if (type == "f8E4M3FN")
    return llvm::APFloat::Float8E4M3FN();
  return llvm::APFloat::IEEEsingle();
}

size_t flashfuse::numerics::elementBytes(const std::string &type) {
  if (type == "i1" || type == "f8E4M3FN")
    return 1;
  if (type == "f16" || type == "bf16")
    return 2;
  return 4;
}

static llvm::APFloat toAPFloat(const std::string &type, double v) {
  llvm::APFloat f(v);
  bool lost;
  f.convert(semantics(type), llvm::APFloat::rmNearestTiesToEven, &lost);
  return f;
}

double flashfuse::numerics::roundTo(const std::string &type, double v) {
  if (type == "i1")
    return v != 0.0 ? 1.0 : 0.0;
  if (type == "i32")
    return double(int32_t(v));
  llvm::APFloat f = toAPFloat(type, v);
  bool lost;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return f.convertToDouble();
}

std::vector<uint8_t>
flashfuse::numerics::encode(const std::string &type,
                            const std::vector<double> &values) {
  size_t n = elementBytes(type);
  std::vector<uint8_t> bytes(values.size() * n);
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == "i1") {
      bytes[i] = values[i] != 0.0;
      continue;
    }
    if (type == "i32") {
      int32_t x = int32_t(values[i]);
      std::memcpy(&bytes[i * n], &x, n);
      continue;
    }
    uint64_t bits = toAPFloat(type, values[i]).bitcastToAPInt().getZExtValue();
    std::memcpy(&bytes[i * n], &bits, n); // little-endian host
  }
  return bytes;
}

std::vector<double>
flashfuse::numerics::decode(const std::string &type,
                            const std::vector<uint8_t> &bytes) {
  size_t n = elementBytes(type);
  std::vector<double> values(bytes.size() / n);
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == "i1") {
      values[i] = bytes[i] != 0;
      continue;
    }
    if (type == "i32") {
      int32_t x;
      std::memcpy(&x, &bytes[i * n], n);
      values[i] = x;
      continue;
    }
    uint64_t bits = 0;
    std::memcpy(&bits, &bytes[i * n], n);
    llvm::APFloat f(semantics(type), llvm::APInt(unsigned(n * 8), bits));
    bool lost;
    f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    values[i] = f.convertToDouble();
  }
  return values;
}
