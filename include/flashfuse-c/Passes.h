/*===-- flashfuse-c/Passes.h - C API for the FlashFuse passes -----*- C -*-===*\
|*                                                                            *|
|* Registration and creation of the FlashFuse passes and pipelines through    *|
|* MLIR's pass-manager C API (mlir-c/Pass.h). Same conventions and ABI note   *|
|* as flashfuse-c/Dialect/Flash.h.                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FLASHFUSE_C_PASSES_H
#define FLASHFUSE_C_PASSES_H

#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Registers every FlashFuse pass and the named pipelines (flash-cpu-pipeline,
 * flash-kernels-to-ptx) in MLIR's global registry, so that
 * mlirParsePassPipeline and mlirOpPassManagerAddPipeline find them by name,
 * options included ("flash-lower-to-gpu{chip=sm_90}"). Idempotent. */
MLIR_CAPI_EXPORTED void flashfuseRegisterPasses(void);

/* Appends to `pm` (anchored on builtin.module) the lowering of the
 * gpu.modules that flash-lower-to-gpu built down to gpu.binary ops holding
 * PTX: the pipeline registered as flash-kernels-to-ptx. Fails on a null
 * pass manager. */
MLIR_CAPI_EXPORTED MlirLogicalResult
flashfuseAddKernelsToPtxPipeline(MlirOpPassManager pm);

#ifdef __cplusplus
}
#endif

/* Generated from the Passes.td files (mlir-tblgen -gen-pass-capi-header):
 * mlirCreate<Group><Pass>() and mlirRegister<Group><Pass>() for each pass,
 * with the groups FlashTransforms (flash-raise-attention,
 * flash-select-config) and FlashConversion (the lowerings), plus
 * mlirRegisterFlashTransformsPasses() and mlirRegisterFlashConversionPasses().
 * A created pass has its default options; give options through pipeline
 * text instead. */
#include "flashfuse/Conversion/Passes.capi.h.inc"
#include "flashfuse/Dialect/Flash/Transforms/Passes.capi.h.inc"

#endif /* FLASHFUSE_C_PASSES_H */
