/*===-- flashfuse-c/Dialect/Flash.h - C API for the flash dialect -*- C -*-===*\
|*                                                                            *|
|* The flash dialect for stacks that drive MLIR through its C API (Python     *|
|* bindings, Rust or Julia front ends, ML compilers written in C). It follows *|
|* mlir-c's conventions: handles are the MLIR C API's own (MlirContext,       *|
|* MlirOperation, MlirAttribute...), a null handle is accepted everywhere     *|
|* and answered with failure, false or a null handle, never a crash.          *|
|*                                                                            *|
|* ABI: this header and libFlashFuseCAPI are built against one MLIR release   *|
|* (the major version FlashFuse's CMake package records, 22 today); the MLIR  *|
|* C API has no stable ABI across majors, so a stack must use the MLIR it was *|
|* built with (docs/EMBEDDING.md).                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FLASHFUSE_C_DIALECT_FLASH_H
#define FLASHFUSE_C_DIALECT_FLASH_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* mlirGetDialectHandle__flash__(): load with mlirDialectHandleLoadDialect or
 * insert into a registry with mlirDialectHandleInsertDialect. */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Flash, flash);

/*===----------------------------------------------------------------------===*
 * Attributes
 *===----------------------------------------------------------------------===*/

/* Where the causal diagonal sits when Sq != Sk (#flash.causal<...>). */
typedef enum FlashCausalAlignment {
  FlashCausalTopLeft = 0,
  FlashCausalBottomRight = 1,
} FlashCausalAlignment;

/* A GPU kernel recipe (#flash.recipe<...>, the first field of #flash.config). */
typedef enum FlashRecipe {
  FlashRecipeSm80 = 0,
  FlashRecipeSm90 = 1,
  FlashRecipeDecode = 2,
} FlashRecipe;

/* The fields of #flash.config<...>, as flash-select-config chose them. */
typedef struct FlashKernelConfig {
  FlashRecipe recipe;
  int64_t blockM;
  int64_t blockN;
  int64_t warps;
  int64_t stages;
  int64_t splits; /* 1 unless the decode recipe splits the keys */
} FlashKernelConfig;

/* The fields of #flash.target<...>. `name` points into the context's storage
 * when read back with flashTargetAttrGetValue. */
typedef struct FlashTarget {
  MlirStringRef name;
  int64_t arch; /* compute capability, e.g. 90 */
  int64_t sms;
  int64_t smemPerBlock; /* bytes */
  int64_t regsPerSm;
} FlashTarget;

MLIR_CAPI_EXPORTED bool flashAttributeIsACausal(MlirAttribute attr);
/* Null when `ctx` is null or `alignment` is not one of the enumerators. */
MLIR_CAPI_EXPORTED MlirAttribute flashCausalAttrGet(MlirContext ctx,
                                                   FlashCausalAlignment alignment);
MLIR_CAPI_EXPORTED MlirLogicalResult
flashCausalAttrGetValue(MlirAttribute attr, FlashCausalAlignment *alignment);

MLIR_CAPI_EXPORTED bool flashAttributeIsAKernelConfig(MlirAttribute attr);
/* Null when `ctx` is null or the attribute's verifier rejects the fields (the
 * reason goes to the context's diagnostic handlers). */
MLIR_CAPI_EXPORTED MlirAttribute
flashKernelConfigAttrGet(MlirContext ctx, FlashKernelConfig config);
MLIR_CAPI_EXPORTED MlirLogicalResult
flashKernelConfigAttrGetValue(MlirAttribute attr, FlashKernelConfig *config);

MLIR_CAPI_EXPORTED bool flashAttributeIsATarget(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirAttribute flashTargetAttrGet(MlirContext ctx,
                                                   FlashTarget target);
MLIR_CAPI_EXPORTED MlirLogicalResult
flashTargetAttrGetValue(MlirAttribute attr, FlashTarget *target);

/*===----------------------------------------------------------------------===*
 * Operations
 *===----------------------------------------------------------------------===*/

MLIR_CAPI_EXPORTED bool flashOperationIsAAttention(MlirOperation op);
MLIR_CAPI_EXPORTED bool flashOperationIsAAttentionGrad(MlirOperation op);
MLIR_CAPI_EXPORTED bool flashOperationIsAAttentionKVCache(MlirOperation op);
/* True for the ops that carry an attention variant (flash.attention and
 * flash.attention_grad): the accessors below accept exactly these. */
MLIR_CAPI_EXPORTED bool flashOperationIsAAttentionVariant(MlirOperation op);

/* Logical sizes [B, Hq, Hkv, Sq, Sk, D, Dv] after the operand layouts are
 * applied; a dynamic size is mlirShapedTypeGetDynamicSize(). */
typedef struct FlashAttentionSizes {
  int64_t batch, headsQ, headsKV, seqQ, seqK, headDim, headDimV;
} FlashAttentionSizes;

/* Each accessor below fails (or returns false / a null handle) when `op` is
 * null or not an attention-variant op, when an out pointer is null, or when
 * the optional attribute it reads is absent. */
MLIR_CAPI_EXPORTED MlirLogicalResult
flashAttentionGetSizes(MlirOperation op, FlashAttentionSizes *sizes);
/* `scale` when present, else 1/sqrt(D); fails when neither is known (no
 * scale attribute and a dynamic D). */
MLIR_CAPI_EXPORTED MlirLogicalResult
flashAttentionGetEffectiveScale(MlirOperation op, double *scale);
MLIR_CAPI_EXPORTED MlirLogicalResult
flashAttentionGetCausal(MlirOperation op, FlashCausalAlignment *alignment);
MLIR_CAPI_EXPORTED MlirLogicalResult
flashAttentionGetWindowLeft(MlirOperation op, int64_t *windowLeft);
MLIR_CAPI_EXPORTED MlirLogicalResult
flashAttentionGetWindowRight(MlirOperation op, int64_t *windowRight);
MLIR_CAPI_EXPORTED MlirLogicalResult
flashAttentionGetSoftcap(MlirOperation op, double *softcap);
/* dropout_p; succeeds with 0 when the attribute is absent. */
MLIR_CAPI_EXPORTED MlirLogicalResult
flashAttentionGetDropoutP(MlirOperation op, double *dropoutP);
/* The #flash.config of the op, null until flash-select-config ran. */
MLIR_CAPI_EXPORTED MlirAttribute flashAttentionGetKernelConfig(MlirOperation op);
/* The optional operands; null values when absent. */
MLIR_CAPI_EXPORTED MlirValue flashAttentionGetBias(MlirOperation op);
MLIR_CAPI_EXPORTED MlirValue flashAttentionGetMask(MlirOperation op);
MLIR_CAPI_EXPORTED MlirValue flashAttentionGetSeed(MlirOperation op);
MLIR_CAPI_EXPORTED bool flashAttentionHasScoreMod(MlirOperation op);
MLIR_CAPI_EXPORTED bool flashAttentionHasMaskMod(MlirOperation op);

/* Builds a detached flash.attention on ranked tensors `query`, `key`,
 * `value` (required) with the optional `bias`, `mask` and `seed` operands
 * (null values leave them out). The output type is derived from the operands
 * (logical [B, Hq, Sq, Dv] in the layout of the query, its element type);
 * `withLse` adds the f32 [B, Hq, Sq] log-sum-exp result. `attributes` are
 * the variant attributes (scale, causal, window_left, ...; FlashOps.td).
 * The op is verified: on any error the reason goes to the context's
 * diagnostic handlers and a null operation is returned. Insert the result
 * with mlirBlockInsertOwnedOperation* or destroy it. */
MLIR_CAPI_EXPORTED MlirOperation flashAttentionCreate(
    MlirLocation loc, MlirValue query, MlirValue key, MlirValue value,
    MlirValue bias, MlirValue mask, MlirValue seed, bool withLse,
    intptr_t nAttributes, const MlirNamedAttribute *attributes);

#ifdef __cplusplus
}
#endif

#endif /* FLASHFUSE_C_DIALECT_FLASH_H */
