// REQUIRES: ptxas
// Block-sparse forwards at D = 256 on sm_90a. The dense D = 256 tile has
// 80 keys (two stages), which 128-key sparse blocks are not whole numbers
// of; flash-select-config gives block-sparse ops the widest key tile that
// divides their sparse key blocks (64 keys, two stages) on the sm90 and
// sm90ws recipes, and both kernels assemble with no spill
// (flashfuse-compile fails on one). The sm80 recipe's 32-key tile divides
// them already.
// RUN: rm -rf %t && flashfuse-opt %s --flash-select-config=target=h100 | FileCheck %s --check-prefix=SM90
// RUN: flashfuse-opt %s --flash-select-config="target=h100 recipe=sm90ws" | FileCheck %s --check-prefix=WS
// RUN: flashfuse-opt %s --flash-select-config=target=a100 | FileCheck %s --check-prefix=A100
// RUN: flashfuse-compile %s --target=h100 -o %t/sm90 | FileCheck %s --check-prefix=PTXAS90
// RUN: flashfuse-compile %s --target=h100 --recipe=sm90ws -o %t/ws | FileCheck %s --check-prefix=PTXASWS
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/ws/manifest.txt

// SM90-COUNT-2: config = #flash.config<sm90, block_m = 128, block_n = 64, warps = 8, stages = 2>
// SM90: config = #flash.config<sm90, block_m = 128, block_n = 80, warps = 8, stages = 2>
// WS-COUNT-2: config = #flash.config<sm90ws, block_m = 128, block_n = 64, warps = 8, stages = 2>
// WS: config = #flash.config<sm90ws, block_m = 128, block_n = 80, warps = 8, stages = 2>
// A100-COUNT-2: config = #flash.config<sm80, block_m = 64, block_n = 32, warps = 4, stages = 2>

// PTXAS90-DAG: ptxas sm_90a flash_fwd_sm90_bf16_d256_m128n64w8s2_bs128x128f: {{.*}}, 0/0 bytes spill stores/loads
// PTXAS90-DAG: ptxas sm_90a flash_fwd_sm90_f16_d256_m128n64w8s2_causal_bs128x128: {{.*}}, 0/0 bytes spill stores/loads
// PTXASWS-DAG: ptxas sm_90a flash_fwd_sm90ws_bf16_d256_m128n64w8s2_bs128x128f: {{.*}}, 0/0 bytes spill stores/loads
// PTXASWS-DAG: ptxas sm_90a flash_fwd_sm90ws_f16_d256_m128n64w8s2_causal_bs128x128: {{.*}}, 0/0 bytes spill stores/loads
// MANIFEST-LABEL: kernel flash_fwd_sm90ws_bf16_d256_m128n64w8s2_bs128x128f
// MANIFEST: block_sparse 2

func.func @bf16_d256_full(%q: tensor<2x4x1000x256xbf16>, %n: tensor<2x4x8xi32>, %i: tensor<2x4x8x8xi32>, %fn: tensor<2x4x8xi32>, %fi: tensor<2x4x8x8xi32>) -> tensor<2x4x1000x256xbf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<2x4x8xi32>, tensor<2x4x8x8xi32>) full_blocks(%fn, %fi : tensor<2x4x8xi32>, tensor<2x4x8x8xi32>) : tensor<2x4x1000x256xbf16>, tensor<2x4x1000x256xbf16>, tensor<2x4x1000x256xbf16> -> tensor<2x4x1000x256xbf16>
  return %o : tensor<2x4x1000x256xbf16>
}
func.func @f16_d256_causal(%q: tensor<2x4x1024x256xf16>, %n: tensor<1x1x8xi32>, %i: tensor<1x1x8x8xi32>) -> tensor<2x4x1024x256xf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>) {causal = #flash.causal<top_left>} : tensor<2x4x1024x256xf16>, tensor<2x4x1024x256xf16>, tensor<2x4x1024x256xf16> -> tensor<2x4x1024x256xf16>
  return %o : tensor<2x4x1024x256xf16>
}
// The dense op keeps its 80-key tile.
func.func @bf16_d256_dense(%q: tensor<2x4x1000x256xbf16>) -> tensor<2x4x1000x256xbf16> {
  %o = flash.attention %q, %q, %q : tensor<2x4x1000x256xbf16>, tensor<2x4x1000x256xbf16>, tensor<2x4x1000x256xbf16> -> tensor<2x4x1000x256xbf16>
  return %o : tensor<2x4x1000x256xbf16>
}
