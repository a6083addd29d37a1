// D = 192 with Dv = 128 (DeepSeek-V2/V3's multi-head latent attention in its
// prefill form) on the wgmma recipes: the sm90 forward's two stages of 128
// keys (three of 64 with a mask or bias tensor or dropout), the sm90ws
// forward's two stages of 128 (64 keys under 128 x 64 block-sparse lists);
// the backward takes the sm90ws recipe's 64 x 64 tiles under auto-tma
// (two consumer warpgroups share each key, HeadDims.h's
// wgmmaBackwardColumnGroups), which the sm90 recipe refuses by name, and
// keeps the sm80 recipe under auto. Other pairs of unequal head dims are
// refused by name under a forced wgmma recipe.
// RUN: flashfuse-opt %s --split-input-file --flash-select-config=target=h100 | FileCheck %s --check-prefix=AUTO
// RUN: flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=auto-tma" | FileCheck %s --check-prefix=TMA
// RUN: not flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=sm90ws" 2>&1 | FileCheck %s --check-prefix=WS
// RUN: not flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=sm90" 2>&1 | FileCheck %s --check-prefix=SM90

// AUTO-LABEL: func.func @fwd
// AUTO: config = #flash.config<sm90, block_m = 128, block_n = 128, warps = 8, stages = 2>
// TMA-LABEL: func.func @fwd
// TMA: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 2>
func.func @fwd(%q: tensor<2x16x4096x192xbf16>, %v: tensor<2x16x4096x128xbf16>) -> tensor<2x16x4096x128xbf16> {
  %o = flash.attention %q, %q, %v {causal = #flash.causal<top_left>} : tensor<2x16x4096x192xbf16>, tensor<2x16x4096x192xbf16>, tensor<2x16x4096x128xbf16> -> tensor<2x16x4096x128xbf16>
  return %o : tensor<2x16x4096x128xbf16>
}

// -----

// Unmasked: not D = 128's 176 keys (that tile is for D = Dv = 128).
// AUTO-LABEL: func.func @fwd_unmasked
// AUTO: config = #flash.config<sm90, block_m = 128, block_n = 128, warps = 8, stages = 2>
// TMA-LABEL: func.func @fwd_unmasked
// TMA: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 2>
func.func @fwd_unmasked(%q: tensor<2x16x4096x192xf16>, %v: tensor<2x16x4096x128xf16>) -> tensor<2x16x4096x128xf16> {
  %o = flash.attention %q, %q, %v : tensor<2x16x4096x192xf16>, tensor<2x16x4096x192xf16>, tensor<2x16x4096x128xf16> -> tensor<2x16x4096x128xf16>
  return %o : tensor<2x16x4096x128xf16>
}

// -----

// Block-sparse lists of 128 x 128 keep the 128-key tiles; lists of 128 x 64
// take the widest key tile of 16 dividing 64.
// AUTO-LABEL: func.func @fwd_block_sparse
// AUTO: config = #flash.config<sm90, block_m = 128, block_n = 128, warps = 8, stages = 2>
// TMA-LABEL: func.func @fwd_block_sparse
// TMA: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 2>
func.func @fwd_block_sparse(%q: tensor<1x4x1024x192xbf16>, %v: tensor<1x4x1024x128xbf16>, %n: tensor<1x4x8xi32>, %i: tensor<1x4x8x8xi32>) -> tensor<1x4x1024x128xbf16> {
  %o = flash.attention %q, %q, %v block_sparse(%n, %i : tensor<1x4x8xi32>, tensor<1x4x8x8xi32>) : tensor<1x4x1024x192xbf16>, tensor<1x4x1024x192xbf16>, tensor<1x4x1024x128xbf16> -> tensor<1x4x1024x128xbf16>
  return %o : tensor<1x4x1024x128xbf16>
}

// -----

// AUTO-LABEL: func.func @fwd_block_sparse_64
// AUTO: config = #flash.config<sm90, block_m = 128, block_n = 64, warps = 8, stages = 2>
// TMA-LABEL: func.func @fwd_block_sparse_64
// TMA: config = #flash.config<sm90ws, block_m = 128, block_n = 64, warps = 8, stages = 2>
func.func @fwd_block_sparse_64(%q: tensor<1x4x1024x192xbf16>, %v: tensor<1x4x1024x128xbf16>, %n: tensor<1x4x8xi32>, %i: tensor<1x4x8x16xi32>) -> tensor<1x4x1024x128xbf16> {
  %o = flash.attention %q, %q, %v block_sparse(%n, %i : tensor<1x4x8xi32>, tensor<1x4x8x16xi32>) {sparse_block_size = array<i64: 128, 64>} : tensor<1x4x1024x192xbf16>, tensor<1x4x1024x192xbf16>, tensor<1x4x1024x128xbf16> -> tensor<1x4x1024x128xbf16>
  return %o : tensor<1x4x1024x128xbf16>
}

// -----

// A mask or bias tensor on the sm90 recipe (the sm90ws one serves neither):
// three stages of 64 keys (at 128 keys on two the mask variants spill 176
// bytes).
// AUTO-LABEL: func.func @fwd_mask
// AUTO: config = #flash.config<sm90, block_m = 128, block_n = 64, warps = 8, stages = 3>
// TMA-LABEL: func.func @fwd_mask
// TMA: config = #flash.config<sm90, block_m = 128, block_n = 64, warps = 8, stages = 3>
func.func @fwd_mask(%q: tensor<1x4x1024x192xbf16>, %v: tensor<1x4x1024x128xbf16>, %m: tensor<1x1x1024x1024xi1>) -> tensor<1x4x1024x128xbf16> {
  %o = flash.attention %q, %q, %v mask(%m : tensor<1x1x1024x1024xi1>) : tensor<1x4x1024x192xbf16>, tensor<1x4x1024x192xbf16>, tensor<1x4x1024x128xbf16> -> tensor<1x4x1024x128xbf16>
  return %o : tensor<1x4x1024x128xbf16>
}

// -----

// AUTO-LABEL: func.func @fwd_bias
// AUTO: config = #flash.config<sm90, block_m = 128, block_n = 64, warps = 8, stages = 3>
func.func @fwd_bias(%q: tensor<1x4x1024x192xbf16>, %v: tensor<1x4x1024x128xbf16>, %bias: tensor<1x4x1024x1024xf32>) -> tensor<1x4x1024x128xbf16> {
  %o = flash.attention %q, %q, %v bias(%bias : tensor<1x4x1024x1024xf32>) : tensor<1x4x1024x192xbf16>, tensor<1x4x1024x192xbf16>, tensor<1x4x1024x128xbf16> -> tensor<1x4x1024x128xbf16>
  return %o : tensor<1x4x1024x128xbf16>
}

// -----

// Dropout on the sm90 recipe: three stages of 64 keys (at 128 keys on two
// it spills 4 bytes).
// AUTO-LABEL: func.func @fwd_dropout
// AUTO: config = #flash.config<sm90, block_m = 128, block_n = 64, warps = 8, stages = 3>
func.func @fwd_dropout(%q: tensor<1x4x1024x192xbf16>, %v: tensor<1x4x1024x128xbf16>, %seed: i64) -> tensor<1x4x1024x128xbf16> {
  %o = flash.attention %q, %q, %v seed(%seed) {dropout_p = 0.1 : f32} : tensor<1x4x1024x192xbf16>, tensor<1x4x1024x192xbf16>, tensor<1x4x1024x128xbf16> -> tensor<1x4x1024x128xbf16>
  return %o : tensor<1x4x1024x128xbf16>
}

// -----

// AUTO-LABEL: func.func @grad
// AUTO: config = #flash.config<sm80,
// TMA-LABEL: func.func @grad
// TMA: config = #flash.config<sm90ws, block_m = 64, block_n = 64, warps = 8, stages = 2>
// SM90: error: no kernel config for target 'h100': the sm90 recipe cannot serve this op: its backward at D = 192, Dv = 128 shares each key between two warpgroups, which takes the sm90ws recipe's registers (--recipe=sm90ws or auto-tma)
func.func @grad(%do: tensor<1x4x256x128xbf16>, %q: tensor<1x4x256x192xbf16>, %v: tensor<1x4x256x128xbf16>, %lse: tensor<1x4x256xf32>) -> (tensor<1x4x256x192xbf16>, tensor<1x4x256x192xbf16>, tensor<1x4x256x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %q, %v, %do, %lse : tensor<1x4x256x128xbf16>, tensor<1x4x256x192xbf16>, tensor<1x4x256x192xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256xf32> -> tensor<1x4x256x192xbf16>, tensor<1x4x256x192xbf16>, tensor<1x4x256x128xbf16>
  return %dq, %dk, %dv : tensor<1x4x256x192xbf16>, tensor<1x4x256x192xbf16>, tensor<1x4x256x128xbf16>
}

// -----

// Packed batches too: their dQ rows (KernelSpec::stagesDQRows) fit beside
// MLA's tiles.
// AUTO-LABEL: func.func @grad_packed
// AUTO: config = #flash.config<sm80,
// TMA-LABEL: func.func @grad_packed
// TMA: config = #flash.config<sm90ws, block_m = 64, block_n = 64, warps = 8, stages = 2>
func.func @grad_packed(%do: tensor<1x4x600x128xbf16>, %q: tensor<1x4x600x192xbf16>, %v: tensor<1x4x600x128xbf16>, %lse: tensor<1x4x600xf32>, %cu: tensor<3xi32>) -> (tensor<1x4x600x192xbf16>, tensor<1x4x600x192xbf16>, tensor<1x4x600x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %q, %v, %do, %lse varlen(%cu, %cu : tensor<3xi32>, tensor<3xi32>) {causal = #flash.causal<top_left>} : tensor<1x4x600x128xbf16>, tensor<1x4x600x192xbf16>, tensor<1x4x600x192xbf16>, tensor<1x4x600x128xbf16>, tensor<1x4x600x128xbf16>, tensor<1x4x600xf32> -> tensor<1x4x600x192xbf16>, tensor<1x4x600x192xbf16>, tensor<1x4x600x128xbf16>
  return %dq, %dk, %dv : tensor<1x4x600x192xbf16>, tensor<1x4x600x192xbf16>, tensor<1x4x600x128xbf16>
}

// -----

// A pair no wgmma tile is chosen for (a forced #flash.config still lowers
// it: KernelSpec takes any D and Dv <= D of whole swizzle rows).
// AUTO-LABEL: func.func @fwd_256_128
// AUTO: config = #flash.config<sm80,
// WS: error: no kernel config for target 'h100': the sm90ws recipe cannot serve this op: it serves (D, Dv) in {(64, 64), (128, 128), (192, 128), (256, 256)}, got D = 256, Dv = 128
// SM90: error: no kernel config for target 'h100': the sm90 recipe cannot serve this op: it serves (D, Dv) in {(64, 64), (128, 128), (192, 128), (256, 256)}, got D = 256, Dv = 128
func.func @fwd_256_128(%q: tensor<1x4x256x256xbf16>, %v: tensor<1x4x256x128xbf16>) -> tensor<1x4x256x128xbf16> {
  %o = flash.attention %q, %q, %v : tensor<1x4x256x256xbf16>, tensor<1x4x256x256xbf16>, tensor<1x4x256x128xbf16> -> tensor<1x4x256x128xbf16>
  return %o : tensor<1x4x256x128xbf16>
}
