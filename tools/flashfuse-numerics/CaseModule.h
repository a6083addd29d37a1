//===- CaseModule.h - the MLIR function a numerics case runs ---*- C++ -*-===//
#ifndef FLASHFUSE_TOOLS_NUMERICS_CASEMODULE_H
#define FLASHFUSE_TOOLS_NUMERICS_CASEMODULE_H

#include "CaseSpec.h"

#include <string>

namespace flashfuse::numerics {

/// Name of the function in the module built by buildCaseModule.
inline constexpr const char *kCaseFunction = "flash_case";

/// MLIR source of one function `@flash_case` taking every operand and every
/// result as a memref (results last, written with
/// bufferization.materialize_in_destination) and computing the case's
/// flash.attention (dir=fwd) or flash.attention_grad (dir=bwd). Argument
/// order, forward: Q, K, V, [bias], [mask], O, LSE; backward: dO, Q, K, V,
/// O, LSE, [bias], [mask], dQ, dK, dV, [dBias]; op=varlen adds
/// cu_seqlens_q, cu_seqlens_k after the inputs (after LSE backward, before
/// the results); block-sparse cases kv_num_blocks, kv_indices and, with
/// full blocks, full_kv_num_blocks, full_kv_indices after the mask. op=kvcache: Q, key_cache,
/// value_cache, cache_seqlens, [block_table], [key_new, value_new], O, LSE,
/// [key_cache_out, value_cache_out] for flash.attention_kvcache.
std::string buildCaseModule(const CaseSpec &c);

} // namespace flashfuse::numerics

#endif
