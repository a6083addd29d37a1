// The derived lists reach the backward's kernels: flash-derive-block-sparsity
// gives flash.attention_grad the lists of its mask_mod, and on sm_90
// flash-select-config and flash-lower-to-gpu build the sm90 backward with
// the query-block iterator over their transposition (the transpose kernel
// launched before it), dQ in tiles like the dense backward's.
// RUN: flashfuse-opt %s --flash-derive-block-sparsity --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a | FileCheck %s
// Without the pass, the dense backward walking the whole band.
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a | FileCheck %s --check-prefix=DENSE

// CHECK-LABEL: func.func @sliding_window_grad
// A window of 256 keys behind each query (0 <= q - k < 256): per query
// block, its own key block and the one two before it partial, the one just
// before it full (the forward's lists, test/Transforms/DeriveBlockSparsity/to-gpu.mlir).
// CHECK: arith.constant dense<[{{\[\[}}1, 1, 2, 2, 2, 2, 2, 2]]]> : tensor<1x1x8xi32>
// CHECK: arith.constant dense<[{{\[\[}}0, 1, 1, 1, 1, 1, 1, 1]]]> : tensor<1x1x8xi32>
// CHECK: gpu.launch_func  @flash_kernels::@flash_bwd_pre_sm90_bf16_d128_m64n128w8s2_mod0 blocks
// CHECK: gpu.launch_func  @flash_kernels::@flash_bwd_bs_transpose_sm90_{{[a-z0-9_]*}}_bs128x128f blocks
// CHECK: gpu.launch_func  @flash_kernels::@flash_bwd_sm90_bf16_d128_m64n128w8s2_bs128x128f_mod0 blocks
// CHECK: gpu.launch_func  @flash_kernels::@flash_bwd_post_sm90_bf16_d128_m64n128w8s2_mod0 blocks
// CHECK: gpu.func @flash_bwd_sm90_bf16_d128_m64n128w8s2_bs128x128f_mod0(
// CHECK: cp.reduce.async.bulk
// DENSE-LABEL: func.func @sliding_window_grad
// DENSE-NOT: _bs128x128
func.func @sliding_window_grad(%q: tensor<1x4x1024x128xbf16>, %lse: tensor<1x4x1024xf32>) -> (tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %q, %q, %q, %q, %q, %lse : tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024xf32> -> tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c0 = arith.constant 0 : index
    %w = arith.constant 256 : index
    %d = arith.subi %i, %j : index
    %lo = arith.cmpi sge, %d, %c0 : index
    %hi = arith.cmpi slt, %d, %w : index
    %keep = arith.andi %lo, %hi : i1
    flash.yield %keep : i1
  }
  return %dq, %dk, %dv : tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>
}
