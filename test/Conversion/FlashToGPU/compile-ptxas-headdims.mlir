// REQUIRES: ptxas
// The head dims served on tiles wider than the head dim
// (docs/config-selection.md) assemble with ptxas for sm_80 (A100) and
// sm_90a (H100, where the sm90 recipe takes only the D = 192, Dv = 128
// forward: its wgmma tile, mla-forward-ptxas.mlir) with the tiles
// flash-select-config gives them, forward and backward: D = 8 and 40 (odd
// multiples of 8: one zero-filled 8-column step), D = 80 (128-column
// swizzled forward tiles), D = 112 (32 keys forward: 64 spilled), D = 160
// (three K/V stages forward: at two the bottom-right causal variant
// spilled; backward 16 x 32 on 2 warps) and D = 192 with Dv = 128 (DeepSeek
// MLA prefill), with and without causal masking. Every kernel is
// spill-free except the plain D = 192, Dv = 128 backward on sm_90a, which
// spills 8 bytes (its causal variant and sm_80 none), pinned here so that
// a change shows. Not here: D = 160's causal backward spills 12 bytes on
// sm_90a (scripts/kernels/gen_suite.py --headdims builds it).
//
// RUN: rm -rf %t && flashfuse-compile %s --target=a100 -o %t/a100 --allow-spills | FileCheck %s --check-prefix=A100
// RUN: flashfuse-compile %s --target=h100 -o %t/h100 --allow-spills | FileCheck %s --check-prefix=H100
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
//
// The manifest carries the true head dims of the MLA kernels.
// MANIFEST-LABEL: kernel flash_fwd_sm90_bf16_d192_dv128_m128n128w8s2
// MANIFEST: head_dim 192
// MANIFEST-NEXT: head_dim_v 128
//
// A100-DAG: ptxas sm_80 flash_bwd_post_sm80_bf16_d192_dv128_m16n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d192_dv128_m16n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_pre_sm80_bf16_d192_dv128_m16n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_post_sm80_bf16_d192_dv128_m16n64w4s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d192_dv128_m16n64w4s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_pre_sm80_bf16_d192_dv128_m16n64w4s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_post_sm80_bf16_d160_m16n32w2s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d160_m16n32w2s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_pre_sm80_bf16_d160_m16n32w2s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_post_sm80_bf16_d112_m32n32w2s2_causalbr: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d112_m32n32w2s2_causalbr: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_pre_sm80_bf16_d112_m32n32w2s2_causalbr: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_post_sm80_bf16_d80_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d80_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_pre_sm80_bf16_d80_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_post_sm80_bf16_d80_m64n64w4s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d80_m64n64w4s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_pre_sm80_bf16_d80_m64n64w4s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_post_sm80_bf16_d40_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d40_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_pre_sm80_bf16_d40_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_post_sm80_bf16_d8_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d8_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_pre_sm80_bf16_d8_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_fwd_sm80_bf16_d192_dv128_m64n32w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_fwd_sm80_bf16_d192_dv128_m64n32w4s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_fwd_sm80_bf16_d160_m64n32w4s3: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_fwd_sm80_bf16_d112_m128n32w4s2_causalbr: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_fwd_sm80_bf16_d80_m128n32w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_fwd_sm80_bf16_d80_m128n32w4s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_fwd_sm80_bf16_d40_m128n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_fwd_sm80_bf16_d8_m128n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_fwd_sm80_bf16_d160_m64n32w4s3_causalbr: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_post_sm80_bf16_d192_dv128_m16n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm80_bf16_d192_dv128_m16n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_pre_sm80_bf16_d192_dv128_m16n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_post_sm80_bf16_d192_dv128_m16n64w4s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm80_bf16_d192_dv128_m16n64w4s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 8/4 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_pre_sm80_bf16_d192_dv128_m16n64w4s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_post_sm80_bf16_d160_m16n32w2s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm80_bf16_d160_m16n32w2s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_pre_sm80_bf16_d160_m16n32w2s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_post_sm80_bf16_d112_m32n32w2s2_causalbr: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm80_bf16_d112_m32n32w2s2_causalbr: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_pre_sm80_bf16_d112_m32n32w2s2_causalbr: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_post_sm80_bf16_d80_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm80_bf16_d80_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_pre_sm80_bf16_d80_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_post_sm80_bf16_d80_m64n64w4s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm80_bf16_d80_m64n64w4s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_pre_sm80_bf16_d80_m64n64w4s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_post_sm80_bf16_d40_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm80_bf16_d40_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_pre_sm80_bf16_d40_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_post_sm80_bf16_d8_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm80_bf16_d8_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_pre_sm80_bf16_d8_m64n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_fwd_sm90_bf16_d192_dv128_m128n128w8s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_fwd_sm90_bf16_d192_dv128_m128n128w8s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_fwd_sm80_bf16_d160_m64n32w4s3: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_fwd_sm80_bf16_d112_m128n32w4s2_causalbr: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_fwd_sm80_bf16_d80_m128n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_fwd_sm80_bf16_d80_m128n64w4s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_fwd_sm80_bf16_d40_m128n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_fwd_sm80_bf16_d8_m128n64w4s2_causal: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_fwd_sm80_bf16_d160_m64n32w4s3_causalbr: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads

//
// Past D + Dv = 320 the backward splits dK and dV between two warps per
// 16-key tile (HeadDims.h's backwardColumnGroups): D = 256 (Gemma-2) on 8
// warps, causal or not, and D = 176 (an uneven split, 96 + 80 columns, on
// 32 x 16 tiles) assemble without spills.
// A100-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d256_m16n64w8s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d256_m16n64w8s2_causalbr: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d176_m32n16w2s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm80_bf16_d256_m16n64w8s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm80_bf16_d256_m16n64w8s2_causalbr: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm80_bf16_d176_m32n16w2s2: {{[0-9]+}} registers, {{[0-9]+}} bytes stack, 0/0 bytes spill stores/loads

func.func @d160_causal_br(%q: tensor<1x1x128x160xbf16>, %k: tensor<1x1x128x160xbf16>, %v: tensor<1x1x128x160xbf16>) -> (tensor<1x1x128x160xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<bottom_right>} : tensor<1x1x128x160xbf16>, tensor<1x1x128x160xbf16>, tensor<1x1x128x160xbf16> -> tensor<1x1x128x160xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x160xbf16>, tensor<1x1x128xf32>
}
func.func @grad_d8_top_left(%do: tensor<1x1x128x8xbf16>, %q: tensor<1x1x128x8xbf16>, %k: tensor<1x1x128x8xbf16>, %v: tensor<1x1x128x8xbf16>, %o: tensor<1x1x128x8xbf16>, %lse: tensor<1x1x128xf32>) -> (tensor<1x1x128x8xbf16>, tensor<1x1x128x8xbf16>, tensor<1x1x128x8xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<1x1x128x8xbf16>, tensor<1x1x128x8xbf16>, tensor<1x1x128x8xbf16>, tensor<1x1x128x8xbf16>, tensor<1x1x128x8xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x8xbf16>, tensor<1x1x128x8xbf16>, tensor<1x1x128x8xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x8xbf16>, tensor<1x1x128x8xbf16>, tensor<1x1x128x8xbf16>
}
func.func @fwd_d8_top_left(%q: tensor<1x1x128x8xbf16>, %k: tensor<1x1x128x8xbf16>, %v: tensor<1x1x128x8xbf16>) -> (tensor<1x1x128x8xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<1x1x128x8xbf16>, tensor<1x1x128x8xbf16>, tensor<1x1x128x8xbf16> -> tensor<1x1x128x8xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x8xbf16>, tensor<1x1x128xf32>
}
func.func @grad_d40_top_left(%do: tensor<1x1x128x40xbf16>, %q: tensor<1x1x128x40xbf16>, %k: tensor<1x1x128x40xbf16>, %v: tensor<1x1x128x40xbf16>, %o: tensor<1x1x128x40xbf16>, %lse: tensor<1x1x128xf32>) -> (tensor<1x1x128x40xbf16>, tensor<1x1x128x40xbf16>, tensor<1x1x128x40xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<1x1x128x40xbf16>, tensor<1x1x128x40xbf16>, tensor<1x1x128x40xbf16>, tensor<1x1x128x40xbf16>, tensor<1x1x128x40xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x40xbf16>, tensor<1x1x128x40xbf16>, tensor<1x1x128x40xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x40xbf16>, tensor<1x1x128x40xbf16>, tensor<1x1x128x40xbf16>
}
func.func @fwd_d40_top_left(%q: tensor<1x1x128x40xbf16>, %k: tensor<1x1x128x40xbf16>, %v: tensor<1x1x128x40xbf16>) -> (tensor<1x1x128x40xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<1x1x128x40xbf16>, tensor<1x1x128x40xbf16>, tensor<1x1x128x40xbf16> -> tensor<1x1x128x40xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x40xbf16>, tensor<1x1x128xf32>
}
func.func @grad_d80_full(%do: tensor<1x1x128x80xbf16>, %q: tensor<1x1x128x80xbf16>, %k: tensor<1x1x128x80xbf16>, %v: tensor<1x1x128x80xbf16>, %o: tensor<1x1x128x80xbf16>, %lse: tensor<1x1x128xf32>) -> (tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>
}
func.func @fwd_d80_full(%q: tensor<1x1x128x80xbf16>, %k: tensor<1x1x128x80xbf16>, %v: tensor<1x1x128x80xbf16>) -> (tensor<1x1x128x80xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v : tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16> -> tensor<1x1x128x80xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x80xbf16>, tensor<1x1x128xf32>
}
func.func @grad_d80_top_left(%do: tensor<1x1x128x80xbf16>, %q: tensor<1x1x128x80xbf16>, %k: tensor<1x1x128x80xbf16>, %v: tensor<1x1x128x80xbf16>, %o: tensor<1x1x128x80xbf16>, %lse: tensor<1x1x128xf32>) -> (tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>
}
func.func @fwd_d80_top_left(%q: tensor<1x1x128x80xbf16>, %k: tensor<1x1x128x80xbf16>, %v: tensor<1x1x128x80xbf16>) -> (tensor<1x1x128x80xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16>, tensor<1x1x128x80xbf16> -> tensor<1x1x128x80xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x80xbf16>, tensor<1x1x128xf32>
}
func.func @grad_d112_bottom_right(%do: tensor<1x1x128x112xbf16>, %q: tensor<1x1x128x112xbf16>, %k: tensor<1x1x128x112xbf16>, %v: tensor<1x1x128x112xbf16>, %o: tensor<1x1x128x112xbf16>, %lse: tensor<1x1x128xf32>) -> (tensor<1x1x128x112xbf16>, tensor<1x1x128x112xbf16>, tensor<1x1x128x112xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<bottom_right>} : tensor<1x1x128x112xbf16>, tensor<1x1x128x112xbf16>, tensor<1x1x128x112xbf16>, tensor<1x1x128x112xbf16>, tensor<1x1x128x112xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x112xbf16>, tensor<1x1x128x112xbf16>, tensor<1x1x128x112xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x112xbf16>, tensor<1x1x128x112xbf16>, tensor<1x1x128x112xbf16>
}
func.func @fwd_d112_bottom_right(%q: tensor<1x1x128x112xbf16>, %k: tensor<1x1x128x112xbf16>, %v: tensor<1x1x128x112xbf16>) -> (tensor<1x1x128x112xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<bottom_right>} : tensor<1x1x128x112xbf16>, tensor<1x1x128x112xbf16>, tensor<1x1x128x112xbf16> -> tensor<1x1x128x112xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x112xbf16>, tensor<1x1x128xf32>
}
func.func @grad_d160_full(%do: tensor<1x1x128x160xbf16>, %q: tensor<1x1x128x160xbf16>, %k: tensor<1x1x128x160xbf16>, %v: tensor<1x1x128x160xbf16>, %o: tensor<1x1x128x160xbf16>, %lse: tensor<1x1x128xf32>) -> (tensor<1x1x128x160xbf16>, tensor<1x1x128x160xbf16>, tensor<1x1x128x160xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x1x128x160xbf16>, tensor<1x1x128x160xbf16>, tensor<1x1x128x160xbf16>, tensor<1x1x128x160xbf16>, tensor<1x1x128x160xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x160xbf16>, tensor<1x1x128x160xbf16>, tensor<1x1x128x160xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x160xbf16>, tensor<1x1x128x160xbf16>, tensor<1x1x128x160xbf16>
}
func.func @fwd_d160_full(%q: tensor<1x1x128x160xbf16>, %k: tensor<1x1x128x160xbf16>, %v: tensor<1x1x128x160xbf16>) -> (tensor<1x1x128x160xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v : tensor<1x1x128x160xbf16>, tensor<1x1x128x160xbf16>, tensor<1x1x128x160xbf16> -> tensor<1x1x128x160xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x160xbf16>, tensor<1x1x128xf32>
}
func.func @grad_d192_dv128_full(%do: tensor<1x1x128x128xbf16>, %q: tensor<1x1x128x192xbf16>, %k: tensor<1x1x128x192xbf16>, %v: tensor<1x1x128x128xbf16>, %o: tensor<1x1x128x128xbf16>, %lse: tensor<1x1x128xf32>) -> (tensor<1x1x128x192xbf16>, tensor<1x1x128x192xbf16>, tensor<1x1x128x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x1x128x128xbf16>, tensor<1x1x128x192xbf16>, tensor<1x1x128x192xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x192xbf16>, tensor<1x1x128x192xbf16>, tensor<1x1x128x128xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x192xbf16>, tensor<1x1x128x192xbf16>, tensor<1x1x128x128xbf16>
}
func.func @fwd_d192_dv128_full(%q: tensor<1x1x128x192xbf16>, %k: tensor<1x1x128x192xbf16>, %v: tensor<1x1x128x128xbf16>) -> (tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v : tensor<1x1x128x192xbf16>, tensor<1x1x128x192xbf16>, tensor<1x1x128x128xbf16> -> tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>
}
func.func @grad_d192_dv128_top_left(%do: tensor<1x1x128x128xbf16>, %q: tensor<1x1x128x192xbf16>, %k: tensor<1x1x128x192xbf16>, %v: tensor<1x1x128x128xbf16>, %o: tensor<1x1x128x128xbf16>, %lse: tensor<1x1x128xf32>) -> (tensor<1x1x128x192xbf16>, tensor<1x1x128x192xbf16>, tensor<1x1x128x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<1x1x128x128xbf16>, tensor<1x1x128x192xbf16>, tensor<1x1x128x192xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x192xbf16>, tensor<1x1x128x192xbf16>, tensor<1x1x128x128xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x192xbf16>, tensor<1x1x128x192xbf16>, tensor<1x1x128x128xbf16>
}
func.func @fwd_d192_dv128_top_left(%q: tensor<1x1x128x192xbf16>, %k: tensor<1x1x128x192xbf16>, %v: tensor<1x1x128x128xbf16>) -> (tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<1x1x128x192xbf16>, tensor<1x1x128x192xbf16>, tensor<1x1x128x128xbf16> -> tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>
}
func.func @grad_d256_full(%do: tensor<1x1x128x256xbf16>, %q: tensor<1x1x128x256xbf16>, %k: tensor<1x1x128x256xbf16>, %v: tensor<1x1x128x256xbf16>, %o: tensor<1x1x128x256xbf16>, %lse: tensor<1x1x128xf32>) -> (tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>
}
func.func @grad_d256_bottom_right(%do: tensor<1x1x128x256xbf16>, %q: tensor<1x1x128x256xbf16>, %k: tensor<1x1x128x256xbf16>, %v: tensor<1x1x128x256xbf16>, %o: tensor<1x1x128x256xbf16>, %lse: tensor<1x1x128xf32>) -> (tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<bottom_right>} : tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>
}
func.func @grad_d176_full(%do: tensor<1x1x128x176xbf16>, %q: tensor<1x1x128x176xbf16>, %k: tensor<1x1x128x176xbf16>, %v: tensor<1x1x128x176xbf16>, %o: tensor<1x1x128x176xbf16>, %lse: tensor<1x1x128xf32>) -> (tensor<1x1x128x176xbf16>, tensor<1x1x128x176xbf16>, tensor<1x1x128x176xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x1x128x176xbf16>, tensor<1x1x128x176xbf16>, tensor<1x1x128x176xbf16>, tensor<1x1x128x176xbf16>, tensor<1x1x128x176xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x176xbf16>, tensor<1x1x128x176xbf16>, tensor<1x1x128x176xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x176xbf16>, tensor<1x1x128x176xbf16>, tensor<1x1x128x176xbf16>
}
