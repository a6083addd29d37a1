// flash-lower-to-gpu lowers a varlen (packed) flash.attention_grad
// (varlen-backward.mlir) with the dense op's checks: a config or chip the
// backward kernels cannot serve is refused for the packed op as for the
// dense one, and the refusal leaves the module untouched.
// RUN: flashfuse-opt %s --split-input-file --flash-lower-to-gpu -verify-diagnostics

func.func @varlen_grad_bad_tiles(%t: tensor<1x8x256x64xf16>, %lse: tensor<1x8x256xf32>, %cu: tensor<5xi32>)
    -> tensor<1x8x256x64xf16> {
  // expected-error @below {{the sm80 backward needs block_n = 48 to be a multiple of 16 * warps (64)}}
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      varlen(%cu, %cu : tensor<5xi32>, tensor<5xi32>)
      {config = #flash.config<sm80, block_m = 64, block_n = 48, warps = 4, stages = 2>}
      : tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>,
        tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256xf32>
      -> tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>
  return %dq : tensor<1x8x256x64xf16>
}

// -----

// The refusal leaves the module untouched, a varlen forward beside it
// included (every op is checked before anything is rewritten).
func.func @forward_and_grad(%t: tensor<1x8x256x64xf16>, %cu: tensor<5xi32>)
    -> tensor<1x8x256x64xf16> {
  %o, %lse = flash.attention %t, %t, %t varlen(%cu, %cu : tensor<5xi32>, tensor<5xi32>)
      {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>}
      : tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>
      -> tensor<1x8x256x64xf16>, tensor<1x8x256xf32>
  // expected-error @below {{recipe 'sm90' needs chip=sm_90a (wgmma), got chip=sm_80}}
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %o, %lse
      varlen(%cu, %cu : tensor<5xi32>, tensor<5xi32>)
      {config = #flash.config<sm90, block_m = 64, block_n = 128, warps = 8, stages = 2>}
      : tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>,
        tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256xf32>
      -> tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>
  return %dq : tensor<1x8x256x64xf16>
}
