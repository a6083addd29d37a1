// REQUIRES: ptxas
// ALiBi's native stage (`alibi(...)`) on the library's tiles: the sm90ws
// forwards keep the plain variants' tiles (128 x 176 x 2 at D = 128
// unmasked, 128 x 128 x 3 causal), where ALiBi as a score_mod had to take
// 128 x 128 and still spilled 4-48 bytes (docs/PERF.md "ALiBi"); the varlen
// forward (sm90ws too under auto-tma, one tile a block), the sm90ws
// backward and the sm80 kernels too, all without spilling. Compiled without --allow-spills: a spill fails the RUN line.
//
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --recipe=auto-tma -o %t/h100 | FileCheck %s --check-prefix=H100
// RUN: flashfuse-compile %s --target=a100 -o %t/a100 | FileCheck %s --check-prefix=A100
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
//
// H100-DAG: ptxas sm_90a flash_fwd_sm90ws_bf16_d128_m128n176w8s2_alibi: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_fwd_sm90ws_bf16_d128_m128n128w8s3_causal_alibib: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_fwd_sm90ws_f16_d64_{{.*}}_causalbr_alibib_varlen: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm90ws_bf16_d128_m64n128w8s2_alibi: {{.*}}, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_fwd_sm80_bf16_d128_{{.*}}_alibi: {{.*}}, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_fwd_sm80_bf16_d128_{{.*}}_causal_alibib: {{.*}}, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_fwd_sm80_f16_d64_{{.*}}_causalbr_alibib_varlen: {{.*}}, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d128_{{.*}}_alibi: {{.*}}, 0/0 bytes spill stores/loads
//
// MANIFEST-LABEL: kernel flash_fwd_sm90ws_bf16_d128_m128n176w8s2_alibi
// MANIFEST: alibi 1
// MANIFEST: params {{.*}}memref:lse memref:alibi_slopes i32:batch
// MANIFEST-LABEL: kernel flash_bwd_pre_sm90_bf16_d128_m64n128w8s2
// MANIFEST-NOT: alibi
// MANIFEST: kernel flash_bwd_sm90ws_bf16_d128_m64n128w8s2_alibi
// MANIFEST: alibi 1

func.func @f128(%q: tensor<1x16x2048x128xbf16>, %s: tensor<16xf32>) -> tensor<1x16x2048x128xbf16> {
  %o = flash.attention %q, %q, %q alibi(%s : tensor<16xf32>) : tensor<1x16x2048x128xbf16>, tensor<1x16x2048x128xbf16>, tensor<1x16x2048x128xbf16> -> tensor<1x16x2048x128xbf16>
  return %o : tensor<1x16x2048x128xbf16>
}

func.func @f128c(%q: tensor<1x16x2048x128xbf16>, %s: tensor<1x16xf32>) -> tensor<1x16x2048x128xbf16> {
  %o = flash.attention %q, %q, %q alibi(%s : tensor<1x16xf32>) {causal = #flash.causal<top_left>} : tensor<1x16x2048x128xbf16>, tensor<1x16x2048x128xbf16>, tensor<1x16x2048x128xbf16> -> tensor<1x16x2048x128xbf16>
  return %o : tensor<1x16x2048x128xbf16>
}

func.func @f64v(%q: tensor<1x8x300x64xf16>, %cu: tensor<4xi32>, %s: tensor<3x8xf32>) -> tensor<1x8x300x64xf16> {
  %o = flash.attention %q, %q, %q varlen(%cu, %cu : tensor<4xi32>, tensor<4xi32>) alibi(%s : tensor<3x8xf32>) {causal = #flash.causal<bottom_right>} : tensor<1x8x300x64xf16>, tensor<1x8x300x64xf16>, tensor<1x8x300x64xf16> -> tensor<1x8x300x64xf16>
  return %o : tensor<1x8x300x64xf16>
}

func.func @b128(%do: tensor<1x16x2048x128xbf16>, %lse: tensor<1x16x2048xf32>, %s: tensor<16xf32>) -> (tensor<1x16x2048x128xbf16>, tensor<1x16x2048x128xbf16>, tensor<1x16x2048x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %do, %do, %do, %do, %lse alibi(%s : tensor<16xf32>) : tensor<1x16x2048x128xbf16>, tensor<1x16x2048x128xbf16>, tensor<1x16x2048x128xbf16>, tensor<1x16x2048x128xbf16>, tensor<1x16x2048x128xbf16>, tensor<1x16x2048xf32> -> tensor<1x16x2048x128xbf16>, tensor<1x16x2048x128xbf16>, tensor<1x16x2048x128xbf16>
  return %dq, %dk, %dv : tensor<1x16x2048x128xbf16>, tensor<1x16x2048x128xbf16>, tensor<1x16x2048x128xbf16>
}
