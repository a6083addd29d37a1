// Targets the sm80 recipe cannot serve, and missing or malformed targets.
// RUN: flashfuse-opt %s --split-input-file --flash-select-config -verify-diagnostics

// sm_75 (Turing) has tensor cores but no cp.async or bf16 mma.
module attributes {flash.target = #flash.target<name = "t4", arch = 75, sms = 40, smem_per_block = 65536, regs_per_sm = 65536>} {
  func.func @sm75(%x: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
    // expected-error @below {{no kernel config for target 't4': the sm80 recipe needs sm_80 or newer, target is sm_75}}
    %0 = flash.attention %x, %x, %x
        : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
        -> tensor<1x2x64x64xf16>
    return %0 : tensor<1x2x64x64xf16>
  }
}

// -----

// Even block_n = 16 with one stage needs 1024 + 2 * (128*128 + 16*256) = 41984
// bytes at D = 128.
module attributes {flash.target = #flash.target<name = "tiny", arch = 80, sms = 1, smem_per_block = 40000, regs_per_sm = 65536>} {
  func.func @smem(%x: tensor<1x2x64x128xf16>) -> tensor<1x2x64x128xf16> {
    // expected-error @below {{no kernel config for target 'tiny': the sm80 recipe needs 41984 bytes of shared memory per block at its smallest tiles (block_m = 128, block_n = 16, stages = 1, D = 128), the target has 40000}}
    %0 = flash.attention %x, %x, %x
        : tensor<1x2x64x128xf16>, tensor<1x2x64x128xf16>, tensor<1x2x64x128xf16>
        -> tensor<1x2x64x128xf16>
    return %0 : tensor<1x2x64x128xf16>
  }
}

// -----

func.func @no_target(%x: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  // expected-error @below {{no target: pass target=<a100, l4, h100, h200> to flash-select-config or set 'flash.target = #flash.target<...>' on the module}}
  %0 = flash.attention %x, %x, %x
      : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
      -> tensor<1x2x64x64xf16>
  return %0 : tensor<1x2x64x64xf16>
}

// -----

// A GPU's name is not a target description.
module attributes {flash.target = "h100"} {
  func.func @target_string(%x: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
    // expected-error @below {{'flash.target' on 'builtin.module' must be a #flash.target<...>, got "h100"}}
    %0 = flash.attention %x, %x, %x
        : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
        -> tensor<1x2x64x64xf16>
    return %0 : tensor<1x2x64x64xf16>
  }
}
