// REQUIRES: ptxas
// D = 192 with Dv = 128 (DeepSeek's MLA prefill) on the wgmma recipes: the
// sm90 forward (auto: 128 x 128, two stages) and the sm90ws forward
// (auto-tma: 128 x 128, two stages, K and V apart) assemble for sm_90a
// without spilling (flashfuse-compile fails on a spill) and with the
// register reallocation in effect (no C7508 warning). S = Q Kᵀ is twelve
// k16 steps over D's three swizzle rows at N = block_n = 128, P·V steps
// over the keys at N = Dv = 128 (no N of 192 anywhere); the manifest
// carries both head dims.
//
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 -o %t/sm90 | FileCheck %s --check-prefix=SM90
// RUN: FileCheck %s --check-prefix=SM90-PTX < %t/sm90/kernels.ptx
// RUN: flashfuse-compile %s --target=h100 --recipe=auto-tma -o %t/ws | FileCheck %s --check-prefix=WS
// RUN: FileCheck %s --check-prefix=WS-PTX < %t/ws/kernels.ptx
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/ws/manifest.txt
//
// SM90-NOT: ptxas warning
// SM90-DAG: ptxas sm_90a flash_fwd_sm90_bf16_d192_dv128_m128n128w8s2_causal: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill stores/loads
// SM90-DAG: ptxas sm_90a flash_fwd_sm90_f16_d192_dv128_m128n128w8s2: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill stores/loads
// SM90-PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// SM90-PTX-NOT: m64n192k16
//
// WS-NOT: ptxas warning
// WS-DAG: ptxas sm_90a flash_fwd_sm90ws_bf16_d192_dv128_m128n128w8s2_causal: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill stores/loads
// WS-DAG: ptxas sm_90a flash_fwd_sm90ws_f16_d192_dv128_m128n128w8s2: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill stores/loads
// WS-PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// WS-PTX-DAG: cp.async.bulk.tensor
//
// MANIFEST-LABEL: kernel flash_fwd_sm90ws_bf16_d192_dv128_m128n128w8s2_causal
// MANIFEST: head_dim 192
// MANIFEST-NEXT: head_dim_v 128
// MANIFEST: tensormap:q_map tensormap:k_map tensormap:v_map

func.func @bf16_causal(%q: tensor<?x16x?x192xbf16>, %k: tensor<?x16x?x192xbf16>, %v: tensor<?x16x?x128xbf16>) -> tensor<?x16x?x128xbf16> {
  %o = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>, tensor<?x16x?x128xbf16> -> tensor<?x16x?x128xbf16>
  return %o : tensor<?x16x?x128xbf16>
}
func.func @f16_full(%q: tensor<?x16x?x192xf16>, %k: tensor<?x16x?x192xf16>, %v: tensor<?x16x?x128xf16>) -> tensor<?x16x?x128xf16> {
  %o = flash.attention %q, %k, %v : tensor<?x16x?x192xf16>, tensor<?x16x?x192xf16>, tensor<?x16x?x128xf16> -> tensor<?x16x?x128xf16>
  return %o : tensor<?x16x?x128xf16>
}
