// Sparse blocks other than 128 x 128 (FlexAttention's BlockMask of 64, or
// 128 x 64): flash-select-config fits the tiles to them, since a thread
// block's rows lie in one sparse query block and its keys tile the sparse
// key blocks. The wgmma recipes keep their 128-row forwards (and the
// backward's 128-key blocks), so query blocks of 64 rows go to the sm80
// recipe, whose tiles shrink to divide both sizes; the sm90 backward takes
// 64-row steps for them. Sizes no tile divides are an error on the op
// (block-sparse-sizes-errors.mlir).
// RUN: flashfuse-opt %s --split-input-file --flash-select-config=target=h100 | FileCheck %s
// RUN: flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=auto-tma" | FileCheck %s --check-prefix=TMA
// RUN: flashfuse-opt %s --split-input-file --flash-select-config=target=a100 | FileCheck %s --check-prefix=A100

// CHECK-LABEL: func.func @fwd_64x64
// CHECK: config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>
// TMA-LABEL: func.func @fwd_64x64
// TMA: config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>
// A100-LABEL: func.func @fwd_64x64
// A100: config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>
func.func @fwd_64x64(%q: tensor<1x2x256x128xbf16>, %n: tensor<1x1x4xi32>, %i: tensor<1x1x4x4xi32>) -> tensor<1x2x256x128xbf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x1x4xi32>, tensor<1x1x4x4xi32>) {sparse_block_size = array<i64: 64, 64>}
      : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16> -> tensor<1x2x256x128xbf16>
  return %o : tensor<1x2x256x128xbf16>
}

// -----

// Key blocks of 64 under 128-row query blocks: the wgmma forwards' key
// tiles divide them.
// CHECK-LABEL: func.func @fwd_128x64
// CHECK: config = #flash.config<sm90, block_m = 128, block_n = 64, warps = 8, stages = 3>
// TMA-LABEL: func.func @fwd_128x64
// TMA: config = #flash.config<sm90ws, block_m = 128, block_n = 64, warps = 8, stages = 3>
// A100-LABEL: func.func @fwd_128x64
// A100: config = #flash.config<sm80, block_m = 128, block_n = 32, warps = 4, stages = 2>
func.func @fwd_128x64(%q: tensor<1x2x256x128xbf16>, %n: tensor<1x1x2xi32>, %i: tensor<1x1x2x4xi32>) -> tensor<1x2x256x128xbf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x1x2xi32>, tensor<1x1x2x4xi32>) {sparse_block_size = array<i64: 128, 64>}
      : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16> -> tensor<1x2x256x128xbf16>
  return %o : tensor<1x2x256x128xbf16>
}

// -----

// D = 64's backward steps over 128 query rows; 64-row query blocks take
// its 64-row steps on the wgmma recipes (keys in blocks of 128 still).
// CHECK-LABEL: func.func @bwd_d64_64x128
// CHECK: flash.attention_grad {{.*}}config = #flash.config<sm90, block_m = 64, block_n = 128, warps = 8, stages = 2>
// TMA-LABEL: func.func @bwd_d64_64x128
// TMA: flash.attention_grad {{.*}}config = #flash.config<sm90ws, block_m = 64, block_n = 128, warps = 8, stages = 2>
// A100-LABEL: func.func @bwd_d64_64x128
// A100: flash.attention_grad {{.*}}config = #flash.config<sm80, block_m = 32, block_n = 128, warps = 4, stages = 2>
func.func @bwd_d64_64x128(%t: tensor<1x2x256x64xbf16>, %lse: tensor<1x2x256xf32>, %n: tensor<1x1x4xi32>, %i: tensor<1x1x4x2xi32>) -> tensor<1x2x256x64xbf16> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<1x1x4xi32>, tensor<1x1x4x2xi32>) {sparse_block_size = array<i64: 64, 128>}
      : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>,
        tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256xf32>
      -> tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>
  return %dq : tensor<1x2x256x64xbf16>
}

// -----

// Key blocks of 64 under D = 128's backward (128 keys on 8 warps): four
// warps of 16 keys, and 32 query rows (64 spilled on sm_90a).
// CHECK-LABEL: func.func @bwd_d128_64x64
// CHECK: flash.attention_grad {{.*}}config = #flash.config<sm80, block_m = 32, block_n = 64, warps = 4, stages = 2>
// A100-LABEL: func.func @bwd_d128_64x64
// A100: flash.attention_grad {{.*}}config = #flash.config<sm80, block_m = 32, block_n = 64, warps = 4, stages = 2>
func.func @bwd_d128_64x64(%t: tensor<1x2x256x128xbf16>, %lse: tensor<1x2x256xf32>, %n: tensor<1x1x4xi32>, %i: tensor<1x1x4x4xi32>) -> tensor<1x2x256x128xbf16> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<1x1x4xi32>, tensor<1x1x4x4xi32>) {sparse_block_size = array<i64: 64, 64>}
      : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>,
        tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256xf32>
      -> tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>
  return %dq : tensor<1x2x256x128xbf16>
}
