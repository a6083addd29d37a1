// The target from a `flash.target` attribute, and the option overriding it.
// RUN: flashfuse-opt %s --flash-select-config | FileCheck %s --check-prefix=ATTR
// RUN: flashfuse-opt %s --flash-select-config="target=h100 recipe=sm80" | FileCheck %s --check-prefix=OPTION

// The module names a GPU with 48 KiB per block; the option's H100 has 227 KiB.
module attributes {flash.target = #flash.target<name = "48k", arch = 80, sms = 108, smem_per_block = 49152, regs_per_sm = 65536>} {
  // ATTR-LABEL: func.func @from_module
  // ATTR: config = #flash.config<sm80, block_m = 128, block_n = 16, warps = 4, stages = 1>
  // OPTION-LABEL: func.func @from_module
  // OPTION: config = #flash.config<sm80, block_m = 128, block_n = 64, warps = 4, stages = 2>
  func.func @from_module(%x: tensor<1x8x256x128xf16>) -> tensor<1x8x256x128xf16> {
    %o = flash.attention %x, %x, %x
        : tensor<1x8x256x128xf16>, tensor<1x8x256x128xf16>, tensor<1x8x256x128xf16>
        -> tensor<1x8x256x128xf16>
    return %o : tensor<1x8x256x128xf16>
  }

  // The nearest enclosing flash.target wins: this function says L4, whose
  // 101376 bytes hold two blocks of 128 x 32 (but not of 128 x 64).
  // ATTR-LABEL: func.func @from_function
  // ATTR: config = #flash.config<sm80, block_m = 128, block_n = 32, warps = 4, stages = 2>
  // OPTION-LABEL: func.func @from_function
  // OPTION: config = #flash.config<sm80, block_m = 128, block_n = 64, warps = 4, stages = 2>
  func.func @from_function(%x: tensor<1x8x256x128xf16>) -> tensor<1x8x256x128xf16>
      attributes {flash.target = #flash.target<name = "l4", arch = 89, sms = 58, smem_per_block = 101376, regs_per_sm = 65536>} {
    %o = flash.attention %x, %x, %x
        : tensor<1x8x256x128xf16>, tensor<1x8x256x128xf16>, tensor<1x8x256x128xf16>
        -> tensor<1x8x256x128xf16>
    return %o : tensor<1x8x256x128xf16>
  }
}
