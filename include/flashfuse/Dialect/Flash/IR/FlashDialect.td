//===- FlashDialect.td - the flash dialect ------------------*- tablegen -*-===//
#ifndef FLASHFUSE_DIALECT_FLASH_IR_FLASHDIALECT_TD
#define FLASHFUSE_DIALECT_FLASH_IR_FLASHDIALECT_TD

include "mlir/IR/OpBase.td"

def Flash_Dialect : Dialect {
  let name = "flash";
  let cppNamespace = "::mlir::flash";
  let summary = "Fused attention as one first-class operation";
  let description = [{
    The `flash` dialect holds attention as one operation, `flash.attention`,
    and its gradient, `flash.attention_grad`. Passes raise attention written
    out in linalg or TOSA into these ops, choose a kernel configuration for a
    target, and lower them to a materialised reference, to tiled loops with
    an online softmax, or to NVPTX kernels.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

class Flash_Op<string mnemonic, list<Trait> traits = []>
    : Op<Flash_Dialect, mnemonic, traits>;

#endif // FLASHFUSE_DIALECT_FLASH_IR_FLASHDIALECT_TD
