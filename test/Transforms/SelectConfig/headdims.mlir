// flash-select-config for head dims served on tiles wider than the head dim
// (docs/config-selection.md, "The sm80 tiles"): D = 8, 40, 80, 112, 160,
// D = 192 with Dv = 128 and D = 256, forward and backward, on A100 and H100
// (recipe auto: the sm90 recipe's forward takes (D, Dv) in {(64, 64),
// (128, 128), (192, 128), (256, 256)}, its backward D = Dv in {64, 128}).
// RUN: flashfuse-opt %s --flash-select-config=target=a100 | FileCheck %s --check-prefixes=CHECK,A100
// RUN: flashfuse-opt %s --flash-select-config=target=h100 | FileCheck %s --check-prefixes=CHECK,H100

// D = 8: the row of 32; its tiles span one k16 step (8 zero-filled columns),
// and the forward takes 64 keys (at 32 its causal variants spilled).
// CHECK-LABEL: func.func @fwd_d8
// CHECK: flash.attention {{.*}}config = #flash.config<sm80, block_m = 128, block_n = 64, warps = 4, stages = 2>
func.func @fwd_d8(%q: tensor<2x4x200x8xf16>, %v: tensor<2x4x200x8xf16>) -> tensor<2x4x200x8xf16> {
  %o = flash.attention %q, %q, %v : tensor<2x4x200x8xf16>, tensor<2x4x200x8xf16>, tensor<2x4x200x8xf16> -> tensor<2x4x200x8xf16>
  return %o : tensor<2x4x200x8xf16>
}
// CHECK-LABEL: func.func @bwd_d8
// CHECK: flash.attention_grad {{.*}}config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>
func.func @bwd_d8(%do: tensor<2x4x200x8xf16>, %q: tensor<2x4x200x8xf16>, %v: tensor<2x4x200x8xf16>, %lse: tensor<2x4x200xf32>) -> (tensor<2x4x200x8xf16>, tensor<2x4x200x8xf16>, tensor<2x4x200x8xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %q, %v, %do, %lse : tensor<2x4x200x8xf16>, tensor<2x4x200x8xf16>, tensor<2x4x200x8xf16>, tensor<2x4x200x8xf16>, tensor<2x4x200x8xf16>, tensor<2x4x200xf32> -> tensor<2x4x200x8xf16>, tensor<2x4x200x8xf16>, tensor<2x4x200x8xf16>
  return %dq, %dk, %dv : tensor<2x4x200x8xf16>, tensor<2x4x200x8xf16>, tensor<2x4x200x8xf16>
}

// D = 40: the row of 64, 48-column padded tiles. Its backward's 32 x 128 would
// split dQ into two groups of 24 columns (not a multiple of 16): 64 x 64.
// CHECK-LABEL: func.func @fwd_d40
// CHECK: flash.attention {{.*}}config = #flash.config<sm80, block_m = 128, block_n = 64, warps = 4, stages = 2>
func.func @fwd_d40(%q: tensor<2x4x200x40xf16>, %v: tensor<2x4x200x40xf16>) -> tensor<2x4x200x40xf16> {
  %o = flash.attention %q, %q, %v {causal = #flash.causal<top_left>} : tensor<2x4x200x40xf16>, tensor<2x4x200x40xf16>, tensor<2x4x200x40xf16> -> tensor<2x4x200x40xf16>
  return %o : tensor<2x4x200x40xf16>
}
// CHECK-LABEL: func.func @bwd_d40
// CHECK: flash.attention_grad {{.*}}config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>
func.func @bwd_d40(%do: tensor<2x4x200x40xf16>, %q: tensor<2x4x200x40xf16>, %v: tensor<2x4x200x40xf16>, %lse: tensor<2x4x200xf32>) -> (tensor<2x4x200x40xf16>, tensor<2x4x200x40xf16>, tensor<2x4x200x40xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %q, %v, %do, %lse {causal = #flash.causal<top_left>} : tensor<2x4x200x40xf16>, tensor<2x4x200x40xf16>, tensor<2x4x200x40xf16>, tensor<2x4x200x40xf16>, tensor<2x4x200x40xf16>, tensor<2x4x200xf32> -> tensor<2x4x200x40xf16>, tensor<2x4x200x40xf16>, tensor<2x4x200x40xf16>
  return %dq, %dk, %dv : tensor<2x4x200x40xf16>, tensor<2x4x200x40xf16>, tensor<2x4x200x40xf16>
}

// D = 80 (Phi-2): the row of 96, 128-column swizzled tiles, 97 KiB at 64 keys
// (two blocks on an H100, one on an A100, which takes 32 keys). The sm90 recipe serves
// no D = 80: H100 falls back to sm80.
// CHECK-LABEL: func.func @fwd_d80
// A100: flash.attention {{.*}}config = #flash.config<sm80, block_m = 128, block_n = 32, warps = 4, stages = 2>
// H100: flash.attention {{.*}}config = #flash.config<sm80, block_m = 128, block_n = 64, warps = 4, stages = 2>
func.func @fwd_d80(%q: tensor<2x4x200x80xf16>, %v: tensor<2x4x200x80xf16>) -> tensor<2x4x200x80xf16> {
  %o = flash.attention %q, %q, %v : tensor<2x4x200x80xf16>, tensor<2x4x200x80xf16>, tensor<2x4x200x80xf16> -> tensor<2x4x200x80xf16>
  return %o : tensor<2x4x200x80xf16>
}
// CHECK-LABEL: func.func @bwd_d80
// CHECK: flash.attention_grad {{.*}}config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>
func.func @bwd_d80(%do: tensor<2x4x200x80xf16>, %q: tensor<2x4x200x80xf16>, %v: tensor<2x4x200x80xf16>, %lse: tensor<2x4x200xf32>) -> (tensor<2x4x200x80xf16>, tensor<2x4x200x80xf16>, tensor<2x4x200x80xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %q, %v, %do, %lse : tensor<2x4x200x80xf16>, tensor<2x4x200x80xf16>, tensor<2x4x200x80xf16>, tensor<2x4x200x80xf16>, tensor<2x4x200x80xf16>, tensor<2x4x200xf32> -> tensor<2x4x200x80xf16>, tensor<2x4x200x80xf16>, tensor<2x4x200x80xf16>
  return %dq, %dk, %dv : tensor<2x4x200x80xf16>, tensor<2x4x200x80xf16>, tensor<2x4x200x80xf16>
}

// D = 112: the row of 128, whose 64-key forward only D = 128 assembles
// without spills (it skips unit rescales): 32 keys. Its backward's 64 x 128
// on 8 warps would split dQ into 56-column groups: 32 x 32 on 2 warps.
// CHECK-LABEL: func.func @fwd_d112
// CHECK: flash.attention {{.*}}config = #flash.config<sm80, block_m = 128, block_n = 32, warps = 4, stages = 2>
func.func @fwd_d112(%q: tensor<2x4x200x112xf16>, %v: tensor<2x4x200x112xf16>) -> tensor<2x4x200x112xf16> {
  %o = flash.attention %q, %q, %v : tensor<2x4x200x112xf16>, tensor<2x4x200x112xf16>, tensor<2x4x200x112xf16> -> tensor<2x4x200x112xf16>
  return %o : tensor<2x4x200x112xf16>
}
// CHECK-LABEL: func.func @bwd_d112
// CHECK: flash.attention_grad {{.*}}config = #flash.config<sm80, block_m = 32, block_n = 32, warps = 2, stages = 2>
func.func @bwd_d112(%do: tensor<2x4x200x112xf16>, %q: tensor<2x4x200x112xf16>, %v: tensor<2x4x200x112xf16>, %lse: tensor<2x4x200xf32>) -> (tensor<2x4x200x112xf16>, tensor<2x4x200x112xf16>, tensor<2x4x200x112xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %q, %v, %do, %lse : tensor<2x4x200x112xf16>, tensor<2x4x200x112xf16>, tensor<2x4x200x112xf16>, tensor<2x4x200x112xf16>, tensor<2x4x200x112xf16>, tensor<2x4x200xf32> -> tensor<2x4x200x112xf16>, tensor<2x4x200x112xf16>, tensor<2x4x200x112xf16>
  return %dq, %dk, %dv : tensor<2x4x200x112xf16>, tensor<2x4x200x112xf16>, tensor<2x4x200x112xf16>
}

// D = 160: the row of 256 (64 x 32 forward, three K/V stages: at two a
// causal variant spilled); its backward's 16 x 64 on 4
// warps would split dQ into 40-column groups: 16 x 32 on 2 warps, which
// keeps dK and dV (160 registers a thread) next to 8-register Sᵀ and dPᵀ.
// CHECK-LABEL: func.func @fwd_d160
// CHECK: flash.attention {{.*}}config = #flash.config<sm80, block_m = 64, block_n = 32, warps = 4, stages = 3>
func.func @fwd_d160(%q: tensor<2x4x200x160xf16>, %v: tensor<2x4x200x160xf16>) -> tensor<2x4x200x160xf16> {
  %o = flash.attention %q, %q, %v {causal = #flash.causal<top_left>} : tensor<2x4x200x160xf16>, tensor<2x4x200x160xf16>, tensor<2x4x200x160xf16> -> tensor<2x4x200x160xf16>
  return %o : tensor<2x4x200x160xf16>
}
// CHECK-LABEL: func.func @bwd_d160
// CHECK: flash.attention_grad {{.*}}config = #flash.config<sm80, block_m = 16, block_n = 32, warps = 2, stages = 2>
func.func @bwd_d160(%do: tensor<2x4x200x160xf16>, %q: tensor<2x4x200x160xf16>, %v: tensor<2x4x200x160xf16>, %lse: tensor<2x4x200xf32>) -> (tensor<2x4x200x160xf16>, tensor<2x4x200x160xf16>, tensor<2x4x200x160xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %q, %v, %do, %lse {causal = #flash.causal<top_left>} : tensor<2x4x200x160xf16>, tensor<2x4x200x160xf16>, tensor<2x4x200x160xf16>, tensor<2x4x200x160xf16>, tensor<2x4x200x160xf16>, tensor<2x4x200xf32> -> tensor<2x4x200x160xf16>, tensor<2x4x200x160xf16>, tensor<2x4x200x160xf16>
  return %dq, %dk, %dv : tensor<2x4x200x160xf16>, tensor<2x4x200x160xf16>, tensor<2x4x200x160xf16>
}

// D = 192, Dv = 128 (DeepSeek MLA prefill): S over 192 columns, O over 128.
// The H100 forward takes the sm90 recipe's wgmma tile for the pair (two
// stages of 128 keys); the backward stays on sm80.
// CHECK-LABEL: func.func @fwd_d192_dv128
// A100: flash.attention {{.*}}config = #flash.config<sm80, block_m = 64, block_n = 32, warps = 4, stages = 2>
// H100: flash.attention {{.*}}config = #flash.config<sm90, block_m = 128, block_n = 128, warps = 8, stages = 2>
func.func @fwd_d192_dv128(%q: tensor<2x4x200x192xbf16>, %v: tensor<2x4x200x128xbf16>) -> tensor<2x4x200x128xbf16> {
  %o = flash.attention %q, %q, %v : tensor<2x4x200x192xbf16>, tensor<2x4x200x192xbf16>, tensor<2x4x200x128xbf16> -> tensor<2x4x200x128xbf16>
  return %o : tensor<2x4x200x128xbf16>
}
// CHECK-LABEL: func.func @bwd_d192_dv128
// CHECK: flash.attention_grad {{.*}}config = #flash.config<sm80, block_m = 16, block_n = 64, warps = 4, stages = 2>
func.func @bwd_d192_dv128(%do: tensor<2x4x200x128xbf16>, %q: tensor<2x4x200x192xbf16>, %v: tensor<2x4x200x128xbf16>, %lse: tensor<2x4x200xf32>) -> (tensor<2x4x200x192xbf16>, tensor<2x4x200x192xbf16>, tensor<2x4x200x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %q, %v, %do, %lse : tensor<2x4x200x128xbf16>, tensor<2x4x200x192xbf16>, tensor<2x4x200x192xbf16>, tensor<2x4x200x128xbf16>, tensor<2x4x200x128xbf16>, tensor<2x4x200xf32> -> tensor<2x4x200x192xbf16>, tensor<2x4x200x192xbf16>, tensor<2x4x200x128xbf16>
  return %dq, %dk, %dv : tensor<2x4x200x192xbf16>, tensor<2x4x200x192xbf16>, tensor<2x4x200x128xbf16>
}

// D = 256 forward: sm80's 64 x 32 on an A100, the sm90 recipe on an H100.
// CHECK-LABEL: func.func @fwd_d256
// A100: flash.attention {{.*}}config = #flash.config<sm80, block_m = 64, block_n = 32, warps = 4, stages = 2>
// H100: flash.attention {{.*}}config = #flash.config<sm90, block_m = 128, block_n = 80, warps = 8, stages = 2>
func.func @fwd_d256(%q: tensor<2x4x200x256xf16>, %v: tensor<2x4x200x256xf16>) -> tensor<2x4x200x256xf16> {
  %o = flash.attention %q, %q, %v : tensor<2x4x200x256xf16>, tensor<2x4x200x256xf16>, tensor<2x4x200x256xf16> -> tensor<2x4x200x256xf16>
  return %o : tensor<2x4x200x256xf16>
}
