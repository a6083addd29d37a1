// For GPU code the pass runs after flash-select-config: the block sizes are
// fitted to the chosen tiles. On h100 at D = 256 the sm90 forward takes
// 80-key tiles, so the 128-key blocks become 160 keys (two tiles), which
// flash-lower-to-gpu's key-block iterator accepts.
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-derive-block-sparsity --flash-lower-to-gpu=chip=sm_90a | FileCheck %s

// CHECK-LABEL: func.func @causal_d256
// CHECK: gpu.launch_func  @flash_kernels::@flash_fwd_sm90_{{[a-z0-9_]*}}_bs128x160f_mod0 blocks
func.func @causal_d256(%q: tensor<1x2x1024x256xbf16>) -> tensor<1x2x1024x256xbf16> {
  %o = flash.attention %q, %q, %q : tensor<1x2x1024x256xbf16>, tensor<1x2x1024x256xbf16>, tensor<1x2x1024x256xbf16> -> tensor<1x2x1024x256xbf16>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sle, %j, %i : index
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x1024x256xbf16>
}
