// flash-lower-to-gpu refuses a varlen (packed) flash.attention even with a
// config set by hand: no recipe tiles a packed batch yet, and lowering it
// as a dense op would attend across sequences.
// RUN: flashfuse-opt %s --split-input-file --flash-lower-to-gpu -verify-diagnostics

func.func @varlen(%q: tensor<1x8x256x64xf16>, %cu: tensor<5xi32>) -> tensor<1x8x256x64xf16> {
  // expected-error @below {{varlen attention (cu_seqlens_q / cu_seqlens_k) has no GPU kernel yet}}
  %o = flash.attention %q, %q, %q varlen(%cu, %cu : tensor<5xi32>, tensor<5xi32>)
      {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>}
      : tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>
      -> tensor<1x8x256x64xf16>
  return %o : tensor<1x8x256x64xf16>
}

// -----

func.func @varlen_grad(%t: tensor<1x8x256x64xf16>, %lse: tensor<1x8x256xf32>, %cu: tensor<5xi32>)
    -> tensor<1x8x256x64xf16> {
  // expected-error @below {{varlen attention (cu_seqlens_q / cu_seqlens_k) has no GPU kernel yet}}
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      varlen(%cu, %cu : tensor<5xi32>, tensor<5xi32>)
      {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>}
      : tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>,
        tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256xf32>
      -> tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>
  return %dq : tensor<1x8x256x64xf16>
}
