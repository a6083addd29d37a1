// recipe=auto-tma (opt-in; flashfuse-compile's default is auto): the
// forwards and backwards the sm90ws recipe serves take it on sm_90; every
// other op gets what auto gives it (a bias and D = 96 fall back to sm90
// and sm80, a backward with a bias to sm90), without an error; on sm_80
// everything is auto's.
// RUN: flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=auto-tma" | FileCheck %s
// RUN: flashfuse-opt %s --split-input-file --flash-select-config="target=a100 recipe=auto-tma" | FileCheck %s --check-prefix=A100
// With deterministic=true (flash-lower-to-gpu's deterministic mode, which
// the sm90ws backward lacks) the backward ops take the sm90 backward.
// RUN: flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=auto-tma deterministic=true" | FileCheck %s --check-prefix=DET

// CHECK-LABEL: func.func @d128
// CHECK: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>
// A100-LABEL: func.func @d128
// A100: config = #flash.config<sm80,
func.func @d128(%x: tensor<2x8x512x128xbf16>) -> tensor<2x8x512x128xbf16> {
  %o = flash.attention %x, %x, %x {causal = #flash.causal<top_left>}
      : tensor<2x8x512x128xbf16>, tensor<2x8x512x128xbf16>, tensor<2x8x512x128xbf16>
      -> tensor<2x8x512x128xbf16>
  return %o : tensor<2x8x512x128xbf16>
}

// -----

// CHECK-LABEL: func.func @bias
// CHECK: config = #flash.config<sm90,
func.func @bias(%x: tensor<1x4x256x128xbf16>, %bias: tensor<1x4x256x256xf32>) -> tensor<1x4x256x128xbf16> {
  %o = flash.attention %x, %x, %x bias(%bias : tensor<1x4x256x256xf32>)
      : tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>
      -> tensor<1x4x256x128xbf16>
  return %o : tensor<1x4x256x128xbf16>
}

// -----

// CHECK-LABEL: func.func @d96
// CHECK: config = #flash.config<sm80,
func.func @d96(%x: tensor<1x4x256x96xbf16>) -> tensor<1x4x256x96xbf16> {
  %o = flash.attention %x, %x, %x
      : tensor<1x4x256x96xbf16>, tensor<1x4x256x96xbf16>, tensor<1x4x256x96xbf16>
      -> tensor<1x4x256x96xbf16>
  return %o : tensor<1x4x256x96xbf16>
}

// -----

// CHECK-LABEL: func.func @grad
// CHECK: config = #flash.config<sm90ws, block_m = 64, block_n = 128, warps = 8, stages = 2>
// DET-LABEL: func.func @grad
// DET: config = #flash.config<sm90, block_m = 64, block_n = 128, warps = 8, stages = 2>
// A100-LABEL: func.func @grad
// A100: config = #flash.config<sm80,
func.func @grad(%x: tensor<1x4x256x128xbf16>, %lse: tensor<1x4x256xf32>) -> (tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse
      : tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256xf32>
      -> tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>
  return %dq, %dk, %dv : tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>
}


// -----

// CHECK-LABEL: func.func @grad_bias
// CHECK: config = #flash.config<sm90, block_m = 64, block_n = 128, warps = 8, stages = 2>
func.func @grad_bias(%x: tensor<1x4x256x64xbf16>, %lse: tensor<1x4x256xf32>, %b: tensor<1x4x256x256xf32>) -> (tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse bias(%b : tensor<1x4x256x256xf32>)
      : tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256xf32>
      -> tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>
  return %dq, %dk, %dv : tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>
}
