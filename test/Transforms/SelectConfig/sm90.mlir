// The sm90 recipe: chosen on sm_90 targets where it applies (f16/bf16,
// (D, Dv) in {(64, 64), (128, 128), (192, 128), (256, 256)} for forwards,
// {(64, 64), (128, 128)} for backwards);
// everything else keeps the sm80 table. recipe=sm80 forces the FA2
// schedule; recipe=sm90 makes a refusal an error.
// RUN: flashfuse-opt %s --split-input-file --flash-select-config=target=h100 | FileCheck %s
// RUN: flashfuse-opt %s --split-input-file --flash-select-config=target=a100 | FileCheck %s --check-prefix=A100
// RUN: not flashfuse-opt %s --split-input-file --flash-select-config="target=a100 recipe=sm90" 2>&1 | FileCheck %s --check-prefix=FORCED
// RUN: not flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=sm7" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=sm80" | FileCheck %s --check-prefix=SM80
// RUN: not flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=sm90" 2>&1 | FileCheck %s --check-prefix=FORCED90

// CHECK-LABEL: func.func @d128
// CHECK: config = #flash.config<sm90, block_m = 128, block_n = 128, warps = 8, stages = 3>
// A100-LABEL: func.func @d128
// A100: config = #flash.config<sm80, block_m = 128, block_n = 32, warps = 4, stages = 2>
// FORCED: error: no kernel config for target 'a100': the sm90 recipe cannot serve this op: wgmma needs sm_90, target is sm_80
// UNKNOWN: error: unknown recipe 'sm7'; expected auto, auto-tma, sm80, sm90 or sm90ws
func.func @d128(%x: tensor<2x8x512x128xbf16>) -> tensor<2x8x512x128xbf16> {
  %o = flash.attention %x, %x, %x {causal = #flash.causal<top_left>}
      : tensor<2x8x512x128xbf16>, tensor<2x8x512x128xbf16>, tensor<2x8x512x128xbf16>
      -> tensor<2x8x512x128xbf16>
  return %o : tensor<2x8x512x128xbf16>
}

// -----

// A mask with the softcap at D = 128 (Gemma-2's padded batches): two stages
// (three spilled); a mask alone keeps three.
// CHECK-LABEL: func.func @d128_mask_softcap
// CHECK: config = #flash.config<sm90, block_m = 128, block_n = 128, warps = 8, stages = 2>
// CHECK-LABEL: func.func @d128_mask
// CHECK: config = #flash.config<sm90, block_m = 128, block_n = 128, warps = 8, stages = 3>
func.func @d128_mask_softcap(%x: tensor<2x8x512x128xbf16>, %m: tensor<2x1x512x512xi1>) -> tensor<2x8x512x128xbf16> {
  %o = flash.attention %x, %x, %x mask(%m : tensor<2x1x512x512xi1>) {softcap = 30.0 : f32}
      : tensor<2x8x512x128xbf16>, tensor<2x8x512x128xbf16>, tensor<2x8x512x128xbf16>
      -> tensor<2x8x512x128xbf16>
  return %o : tensor<2x8x512x128xbf16>
}
func.func @d128_mask(%x: tensor<2x8x512x128xbf16>, %m: tensor<2x1x512x512xi1>) -> tensor<2x8x512x128xbf16> {
  %o = flash.attention %x, %x, %x mask(%m : tensor<2x1x512x512xi1>)
      : tensor<2x8x512x128xbf16>, tensor<2x8x512x128xbf16>, tensor<2x8x512x128xbf16>
      -> tensor<2x8x512x128xbf16>
  return %o : tensor<2x8x512x128xbf16>
}

// -----

// CHECK-LABEL: func.func @d64
// CHECK: config = #flash.config<sm90, block_m = 128, block_n = 64, warps = 8, stages = 3>
// A100-LABEL: func.func @d64
// A100: config = #flash.config<sm80, block_m = 128, block_n = 64, warps = 4, stages = 2>
func.func @d64(%x: tensor<2x8x512x64xf16>) -> tensor<2x8x512x64xf16> {
  %o = flash.attention %x, %x, %x
      : tensor<2x8x512x64xf16>, tensor<2x8x512x64xf16>, tensor<2x8x512x64xf16>
      -> tensor<2x8x512x64xf16>
  return %o : tensor<2x8x512x64xf16>
}

// -----

// Head dims the sm90 recipe does not serve fall back to sm80.
// CHECK-LABEL: func.func @d32
// CHECK: config = #flash.config<sm80, block_m = 128, block_n = 32, warps = 4, stages = 2>
func.func @d32(%x: tensor<2x8x512x32xf16>) -> tensor<2x8x512x32xf16> {
  %o = flash.attention %x, %x, %x
      : tensor<2x8x512x32xf16>, tensor<2x8x512x32xf16>, tensor<2x8x512x32xf16>
      -> tensor<2x8x512x32xf16>
  return %o : tensor<2x8x512x32xf16>
}

// -----

// D = 256: two stages of 80 keys (three fit only 32-48 keys in 227 KiB).
// CHECK-LABEL: func.func @d256
// CHECK: config = #flash.config<sm90, block_m = 128, block_n = 80, warps = 8, stages = 2>
// A100-LABEL: func.func @d256
// A100: config = #flash.config<sm80, block_m = 64, block_n = 32, warps = 4, stages = 2>
func.func @d256(%x: tensor<2x8x512x256xbf16>) -> tensor<2x8x512x256xbf16> {
  %o = flash.attention %x, %x, %x {causal = #flash.causal<bottom_right>}
      : tensor<2x8x512x256xbf16>, tensor<2x8x512x256xbf16>, tensor<2x8x512x256xbf16>
      -> tensor<2x8x512x256xbf16>
  return %o : tensor<2x8x512x256xbf16>
}

// -----

// The backward: 64 query rows x 128 keys at D = 128, 128 x 128 at D = 64.
// CHECK-LABEL: func.func @grad
// CHECK: flash.attention_grad {{.*}}config = #flash.config<sm90, block_m = 64, block_n = 128, warps = 8, stages = 2>
// SM80-LABEL: func.func @grad
// SM80: flash.attention_grad {{.*}}config = #flash.config<sm80, block_m = 64, block_n = 128, warps = 8, stages = 2>
func.func @grad(%x: tensor<1x4x256x128xf16>, %lse: tensor<1x4x256xf32>) -> (tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>) {
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse
      : tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256xf32>
      -> tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>
  return %dq, %dk, %dv : tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>
}

// -----

// CHECK-LABEL: func.func @grad_d64
// CHECK: flash.attention_grad {{.*}}config = #flash.config<sm90, block_m = 128, block_n = 128, warps = 8, stages = 2>
func.func @grad_d64(%x: tensor<1x4x256x64xbf16>, %lse: tensor<1x4x256xf32>) -> (tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse
      : tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256xf32>
      -> tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>
  return %dq, %dk, %dv : tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>
}

// -----

// D = 64 with softcap (likewise bias, dropout): 64 query rows, where 128
// spill.
// CHECK-LABEL: func.func @grad_d64_softcap
// CHECK: flash.attention_grad {{.*}}config = #flash.config<sm90, block_m = 64, block_n = 128, warps = 8, stages = 2>
func.func @grad_d64_softcap(%x: tensor<1x4x256x64xbf16>, %lse: tensor<1x4x256xf32>) -> (tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse {softcap = 30.0 : f32}
      : tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256xf32>
      -> tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>
  return %dq, %dk, %dv : tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>
}

// -----

// D = 160 backward: the sm90 recipe has none; the sm80 table's row of 256
// (D + Dv <= 320: dK and dV of 16 keys per warp fit in registers; wider
// ones split them between two warps, targets.mlir).
// FORCED90-DAG: error: no kernel config for target 'h100': the sm90 recipe cannot serve this op: its backward serves (D, Dv) in {(64, 64), (128, 128), (192, 128), (256, 256)}, got D = 160, Dv = 160
// CHECK-LABEL: func.func @grad_d160
// CHECK: flash.attention_grad {{.*}}config = #flash.config<sm80, block_m = 16, block_n = 32, warps = 2, stages = 2>
func.func @grad_d160(%x: tensor<1x4x256x160xf16>, %lse: tensor<1x4x256xf32>) -> (tensor<1x4x256x160xf16>, tensor<1x4x256x160xf16>, tensor<1x4x256x160xf16>) {
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse
      : tensor<1x4x256x160xf16>, tensor<1x4x256x160xf16>, tensor<1x4x256x160xf16>, tensor<1x4x256x160xf16>, tensor<1x4x256x160xf16>, tensor<1x4x256xf32>
      -> tensor<1x4x256x160xf16>, tensor<1x4x256x160xf16>, tensor<1x4x256x160xf16>
  return %dq, %dk, %dv : tensor<1x4x256x160xf16>, tensor<1x4x256x160xf16>, tensor<1x4x256x160xf16>
}

// -----

// D = 32: the sm80 table's backward.
// CHECK-LABEL: func.func @grad_d32
// CHECK: flash.attention_grad {{.*}}config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>
func.func @grad_d32(%x: tensor<1x4x256x32xf16>, %lse: tensor<1x4x256xf32>) -> (tensor<1x4x256x32xf16>, tensor<1x4x256x32xf16>, tensor<1x4x256x32xf16>) {
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse
      : tensor<1x4x256x32xf16>, tensor<1x4x256x32xf16>, tensor<1x4x256x32xf16>, tensor<1x4x256x32xf16>, tensor<1x4x256x32xf16>, tensor<1x4x256xf32>
      -> tensor<1x4x256x32xf16>, tensor<1x4x256x32xf16>, tensor<1x4x256x32xf16>
  return %dq, %dk, %dv : tensor<1x4x256x32xf16>, tensor<1x4x256x32xf16>, tensor<1x4x256x32xf16>
}
