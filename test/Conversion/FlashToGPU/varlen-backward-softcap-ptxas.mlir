// REQUIRES: ptxas
// The packed causal softcap backward at D = 128 assembles for sm_90a
// without spilling (flashfuse-compile fails on a spill) in both Hopper
// recipes: the sm90 kernel at its 255 registers (8 bytes before) and the
// sm90ws kernel at the consumers' 240 (16 bytes before). flash-lower-to-gpu
// marks these kernels (and no others) to address their dynamic shared
// memory through PTX's extern array aligned to 1024 bytes
// (flash-align-dynamic-shared-memory): their run-time rounding of the
// region's start, `(1024 - base) & 1008`, is gone, and with it the base and
// the tile and descriptor addresses derived from it that ptxas kept, and
// spilled, across the query loop. The dense backward beside it keeps the
// demoted static variable and its rounding.
//
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --recipe=sm90 -o %t/sm90 | FileCheck %s --check-prefix=SM90
// RUN: FileCheck %s --check-prefix=PTX < %t/sm90/kernels.ptx
// RUN: flashfuse-compile %s --target=h100 --recipe=sm90ws -o %t/ws | FileCheck %s --check-prefix=WS
// RUN: FileCheck %s --check-prefix=PTX < %t/ws/kernels.ptx
//
// SM90-DAG: ptxas sm_90a flash_bwd_sm90_bf16_d128_m64n128w8s2_causal_softcap_varlen: {{.*}}, 0/0 bytes spill stores/loads
// SM90-DAG: ptxas sm_90a flash_bwd_sm90_bf16_d128_m64n128w8s2_causal: {{.*}}, 0/0 bytes spill stores/loads
// WS-DAG: ptxas sm_90a flash_bwd_sm90ws_bf16_d128_m64n128w8s2_causal_softcap_varlen: {{.*}}, 0/0 bytes spill stores/loads
// WS-DAG: ptxas sm_90a flash_bwd_sm90ws_bf16_d128_m64n128w8s2_causal: {{.*}}, 0/0 bytes spill stores/loads
//
// PTX: .extern .shared .align 1024 .b8 __dynamic_shmem_align1024[];
// PTX-LABEL: .entry flash_bwd_sm90{{(ws)?}}_bf16_d128_m64n128w8s2_causal_softcap_varlen(
// PTX-NOT: __dynamic_shmem__0
// PTX: mov.b64 {{%rd[0-9]+}}, __dynamic_shmem_align1024;
// PTX-NOT: and.b64 {{.*}}, 1008;
// PTX-LABEL: .entry flash_bwd_sm90{{(ws)?}}_bf16_d128_m64n128w8s2_causal(
// PTX: and.b64 {{.*}}, 1008;
// PTX-LABEL: .entry flash_bwd_post_

func.func @packed_causal_softcap(%do: tensor<1x8x512x128xbf16>, %q: tensor<1x8x512x128xbf16>, %k: tensor<1x2x700x128xbf16>, %v: tensor<1x2x700x128xbf16>, %o: tensor<1x8x512x128xbf16>, %lse: tensor<1x8x512xf32>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> (tensor<1x8x512x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x2x700x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {causal = #flash.causal<top_left>, softcap = 30.0 : f32} : tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x8x512xf32> -> tensor<1x8x512x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x2x700x128xbf16>
  return %dq, %dk, %dv : tensor<1x8x512x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x2x700x128xbf16>
}

func.func @dense_causal(%do: tensor<1x4x1024x128xbf16>, %q: tensor<1x4x1024x128xbf16>, %k: tensor<1x4x1024x128xbf16>, %v: tensor<1x4x1024x128xbf16>, %o: tensor<1x4x1024x128xbf16>, %lse: tensor<1x4x1024xf32>) -> (tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024xf32> -> tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>
  return %dq, %dk, %dv : tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>
}
