// D = 256 backwards on Hopper (HeadDims.h's wgmmaBackwardColumnGroups):
// the sm90ws recipe puts both consumer warpgroups on the same 64 keys, each
// keeping one column half of dK and dV, so auto-tma and sm90ws give 64 x 64
// tiles; the sm90 recipe, whose warpgroups store Pᵀ and dSᵀ and have not
// the registers, refuses it by name, and auto keeps the sm80 recipe.
// Packed walks (whose dQ rows do not fit beside D = 256's tiles), and
// (256, 128), keep the sm80 recipe.
// RUN: flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=auto-tma" | FileCheck %s --check-prefix=TMA
// RUN: flashfuse-opt %s --split-input-file --flash-select-config="target=h100" | FileCheck %s --check-prefix=AUTO
// RUN: not flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=sm90" 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=auto-tma deterministic=true" | FileCheck %s --check-prefix=DET

// TMA-LABEL: func.func @plain
// TMA: config = #flash.config<sm90ws, block_m = 64, block_n = 64, warps = 8, stages = 2>
// AUTO-LABEL: func.func @plain
// AUTO: config = #flash.config<sm80,
// SM90: error: no kernel config for target 'h100': the sm90 recipe cannot serve this op: its backward at D = 256, Dv = 256 shares each key between two warpgroups, which takes the sm90ws recipe's registers (--recipe=sm90ws or auto-tma)
// DET-LABEL: func.func @plain
// DET: config = #flash.config<sm80,
func.func @plain(%x: tensor<1x4x512x256xbf16>, %lse: tensor<1x4x512xf32>) -> (tensor<1x4x512x256xbf16>, tensor<1x4x512x256xbf16>, tensor<1x4x512x256xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse {causal = #flash.causal<top_left>}
      : tensor<1x4x512x256xbf16>, tensor<1x4x512x256xbf16>, tensor<1x4x512x256xbf16>, tensor<1x4x512x256xbf16>, tensor<1x4x512x256xbf16>, tensor<1x4x512xf32>
      -> tensor<1x4x512x256xbf16>, tensor<1x4x512x256xbf16>, tensor<1x4x512x256xbf16>
  return %dq, %dk, %dv : tensor<1x4x512x256xbf16>, tensor<1x4x512x256xbf16>, tensor<1x4x512x256xbf16>
}

// -----

// TMA-LABEL: func.func @packed
// TMA: config = #flash.config<sm80,
func.func @packed(%x: tensor<1x4x600x256xf16>, %lse: tensor<1x4x600xf32>, %cu: tensor<3xi32>) -> (tensor<1x4x600x256xf16>, tensor<1x4x600x256xf16>, tensor<1x4x600x256xf16>) {
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse varlen(%cu, %cu : tensor<3xi32>, tensor<3xi32>)
      : tensor<1x4x600x256xf16>, tensor<1x4x600x256xf16>, tensor<1x4x600x256xf16>, tensor<1x4x600x256xf16>, tensor<1x4x600x256xf16>, tensor<1x4x600xf32>
      -> tensor<1x4x600x256xf16>, tensor<1x4x600x256xf16>, tensor<1x4x600x256xf16>
  return %dq, %dk, %dv : tensor<1x4x600x256xf16>, tensor<1x4x600x256xf16>, tensor<1x4x600x256xf16>
}

// -----

// TMA-LABEL: func.func @dv128
// TMA: config = #flash.config<sm80,
func.func @dv128(%q: tensor<1x4x512x256xbf16>, %v: tensor<1x4x512x128xbf16>, %lse: tensor<1x4x512xf32>) -> (tensor<1x4x512x256xbf16>, tensor<1x4x512x256xbf16>, tensor<1x4x512x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %v, %q, %q, %v, %v, %lse
      : tensor<1x4x512x128xbf16>, tensor<1x4x512x256xbf16>, tensor<1x4x512x256xbf16>, tensor<1x4x512x128xbf16>, tensor<1x4x512x128xbf16>, tensor<1x4x512xf32>
      -> tensor<1x4x512x256xbf16>, tensor<1x4x512x256xbf16>, tensor<1x4x512x128xbf16>
  return %dq, %dk, %dv : tensor<1x4x512x256xbf16>, tensor<1x4x512x256xbf16>, tensor<1x4x512x128xbf16>
}
