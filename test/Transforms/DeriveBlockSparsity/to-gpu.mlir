// The derived lists reach the GPU kernels: flash-derive-block-sparsity, then
// flash-select-config and flash-lower-to-gpu build the recipe's forward
// with the block-sparse key-block iterator (partial and full lists: the
// `f` suffix), launched with the constant lists.
// RUN: flashfuse-opt %s --flash-derive-block-sparsity --flash-select-config=target=a100 --flash-lower-to-gpu=chip=sm_80 | FileCheck %s
// Without the pass, the dense forward.
// RUN: flashfuse-opt %s --flash-select-config=target=a100 --flash-lower-to-gpu=chip=sm_80 | FileCheck %s --check-prefix=DENSE

// CHECK-LABEL: func.func @sliding_window
// A window of 256 keys behind each query (0 <= q - k < 256): per query
// block, its own key block and the one two before it partial (the
// window's edges), the one just before it full.
// CHECK: arith.constant dense<[{{\[\[}}1, 1, 2, 2, 2, 2, 2, 2]]]> : tensor<1x1x8xi32>
// CHECK: arith.constant dense<[{{\[\[}}0, 1, 1, 1, 1, 1, 1, 1]]]> : tensor<1x1x8xi32>
// CHECK: gpu.launch_func  @flash_kernels::@flash_fwd_sm80_{{[a-z0-9_]*}}_bs128x128f_mod0 blocks
// CHECK: gpu.func @flash_fwd_sm80_{{[a-z0-9_]*}}_bs128x128f_mod0(
// DENSE-LABEL: func.func @sliding_window
// DENSE-NOT: _bs128x128
func.func @sliding_window(%q: tensor<1x4x1024x64xf16>) -> tensor<1x4x1024x64xf16> {
  %o = flash.attention %q, %q, %q : tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16> -> tensor<1x4x1024x64xf16>
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
  return %o : tensor<1x4x1024x64xf16>
}
