// flash-lower-to-gpu lowers a varlen (packed) flash.attention (varlen.mlir)
// but refuses its gradient even with a config set by hand: no backward
// kernel tiles a packed batch yet, and lowering it as a dense op would
// attend across sequences.
// RUN: flashfuse-opt %s --split-input-file --flash-lower-to-gpu -verify-diagnostics

func.func @varlen_grad(%t: tensor<1x8x256x64xf16>, %lse: tensor<1x8x256xf32>, %cu: tensor<5xi32>)
    -> tensor<1x8x256x64xf16> {
  // expected-error @below {{varlen attention_grad (cu_seqlens_q / cu_seqlens_k) has no GPU backward kernels yet (the forward has one); lower it with flash-lower-to-loops or flash-lower-naive}}
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      varlen(%cu, %cu : tensor<5xi32>, tensor<5xi32>)
      {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>}
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
  // expected-error @below {{varlen attention_grad (cu_seqlens_q / cu_seqlens_k) has no GPU backward kernels yet}}
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %o, %lse
      varlen(%cu, %cu : tensor<5xi32>, tensor<5xi32>)
      {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>}
      : tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>,
        tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256xf32>
      -> tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>
  return %dq : tensor<1x8x256x64xf16>
}
