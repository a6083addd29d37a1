//===- ElementCodec.h - host doubles <-> memref element bytes --*- C++ -*-===//
#ifndef FLASHFUSE_TOOLS_NUMERICS_ELEMENTCODEC_H
#define FLASHFUSE_TOOLS_NUMERICS_ELEMENTCODEC_H

#include <cstdint>
#include <string>
#include <vector>

namespace flashfuse::numerics {

/// Element types a case's buffers use: f32, f16, bf16, f8E4M3FN, i32 (lengths and
/// page tables) and i1 (stored as one byte per element, as the LLVM lowering
/// of memref<...xi1> does).
size_t elementBytes(const std::string &type);

/// `v` rounded to the nearest value of `type` (ties to even).
double roundTo(const std::string &type, double v);

std::vector<uint8_t> encode(const std::string &type,
                            const std::vector<double> &values);
std::vector<double> decode(const std::string &type,
                           const std::vector<uint8_t> &bytes);

} // namespace flashfuse::numerics

#endif
