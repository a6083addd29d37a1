// REQUIRES: ptxas
// The sm90ws forwards assemble without spilling (flashfuse-compile fails on
// a spill) and with the register reallocation in effect (ptxas warns, C7508,
// when it ignores a setmaxnreg; flashfuse-compile prints ptxas's warnings):
// D = 64, 128 and 256 in both dtypes and the causal alignments, a window,
// softcap and an f32 O at D = 128; at D = 64 without a mask the kernels of
// three consumer warpgroups (192 rows, 512 threads: 128 registers at
// launch, 32 / 160 after setmaxnreg), with a softcap and an f32 O too.
//
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --recipe=sm90ws -o %t/h100 | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
//
// CHECK-NOT: ptxas warning
// CHECK-COUNT-12: ptxas sm_90a flash_fwd_sm90ws_{{.*}}, 0/0 bytes spill stores/loads
//
// MANIFEST-LABEL: kernel flash_fwd_sm90ws_f16_d64_m192n128w12s4
// MANIFEST: threads 512
// MANIFEST: params memref:q memref:k memref:v memref:o memref:lse {{.*}} tensormap:q_map tensormap:k_map tensormap:v_map
// MANIFEST-LABEL: kernel flash_fwd_sm90ws_bf16_d64_m128n128w8s3_causal
// MANIFEST: threads 384
// MANIFEST: params memref:q memref:k memref:v memref:o memref:lse {{.*}} tensormap:q_map tensormap:k_map tensormap:v_map

func.func @f16_d64(%q: tensor<2x8x1000x64xf16>) -> tensor<2x8x1000x64xf16> {
  %o = flash.attention %q, %q, %q : tensor<2x8x1000x64xf16>, tensor<2x8x1000x64xf16>, tensor<2x8x1000x64xf16> -> tensor<2x8x1000x64xf16>
  return %o : tensor<2x8x1000x64xf16>
}
func.func @bf16_d64_causal(%q: tensor<2x8x1000x64xbf16>) -> tensor<2x8x1000x64xbf16> {
  %o = flash.attention %q, %q, %q {causal = #flash.causal<top_left>} : tensor<2x8x1000x64xbf16>, tensor<2x8x1000x64xbf16>, tensor<2x8x1000x64xbf16> -> tensor<2x8x1000x64xbf16>
  return %o : tensor<2x8x1000x64xbf16>
}
func.func @bf16_d64_softcap(%q: tensor<2x8x1000x64xbf16>) -> tensor<2x8x1000x64xbf16> {
  %o = flash.attention %q, %q, %q {softcap = 30.0 : f32} : tensor<2x8x1000x64xbf16>, tensor<2x8x1000x64xbf16>, tensor<2x8x1000x64xbf16> -> tensor<2x8x1000x64xbf16>
  return %o : tensor<2x8x1000x64xbf16>
}
func.func @bf16_d64_of32(%q: tensor<2x8x1000x64xbf16>) -> tensor<2x8x1000x64xf32> {
  %o = flash.attention %q, %q, %q : tensor<2x8x1000x64xbf16>, tensor<2x8x1000x64xbf16>, tensor<2x8x1000x64xbf16> -> tensor<2x8x1000x64xf32>
  return %o : tensor<2x8x1000x64xf32>
}
func.func @bf16_d128(%q: tensor<2x8x1000x128xbf16>) -> tensor<2x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q : tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16> -> tensor<2x8x1000x128xbf16>
  return %o : tensor<2x8x1000x128xbf16>
}
func.func @f16_d128_causal(%q: tensor<2x8x1000x128xf16>) -> tensor<2x8x1000x128xf16> {
  %o = flash.attention %q, %q, %q {causal = #flash.causal<top_left>} : tensor<2x8x1000x128xf16>, tensor<2x8x1000x128xf16>, tensor<2x8x1000x128xf16> -> tensor<2x8x1000x128xf16>
  return %o : tensor<2x8x1000x128xf16>
}
func.func @bf16_d128_causalbr(%q: tensor<2x8x700x128xbf16>, %k: tensor<2x8x1000x128xbf16>) -> tensor<2x8x700x128xbf16> {
  %o = flash.attention %q, %k, %k {causal = #flash.causal<bottom_right>} : tensor<2x8x700x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16> -> tensor<2x8x700x128xbf16>
  return %o : tensor<2x8x700x128xbf16>
}
func.func @bf16_d128_window(%q: tensor<2x8x1000x128xbf16>) -> tensor<2x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q {window_left = 64 : i64, window_right = 0 : i64} : tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16> -> tensor<2x8x1000x128xbf16>
  return %o : tensor<2x8x1000x128xbf16>
}
func.func @bf16_d128_softcap(%q: tensor<2x8x1000x128xbf16>) -> tensor<2x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q {softcap = 30.0 : f32} : tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16> -> tensor<2x8x1000x128xbf16>
  return %o : tensor<2x8x1000x128xbf16>
}
func.func @bf16_d128_of32(%q: tensor<2x8x1000x128xbf16>) -> tensor<2x8x1000x128xf32> {
  %o = flash.attention %q, %q, %q : tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16> -> tensor<2x8x1000x128xf32>
  return %o : tensor<2x8x1000x128xf32>
}
func.func @f16_d256(%q: tensor<1x4x1000x256xf16>) -> tensor<1x4x1000x256xf16> {
  %o = flash.attention %q, %q, %q : tensor<1x4x1000x256xf16>, tensor<1x4x1000x256xf16>, tensor<1x4x1000x256xf16> -> tensor<1x4x1000x256xf16>
  return %o : tensor<1x4x1000x256xf16>
}
func.func @bf16_d256_causal(%q: tensor<1x4x1000x256xbf16>) -> tensor<1x4x1000x256xbf16> {
  %o = flash.attention %q, %q, %q {causal = #flash.causal<top_left>} : tensor<1x4x1000x256xbf16>, tensor<1x4x1000x256xbf16>, tensor<1x4x1000x256xbf16> -> tensor<1x4x1000x256xbf16>
  return %o : tensor<1x4x1000x256xbf16>
}
