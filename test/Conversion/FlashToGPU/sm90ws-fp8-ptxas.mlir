// REQUIRES: ptxas
// The FP8 forwards assemble without spilling (flashfuse-compile fails on a
// spill) and with the register reallocation in effect (no ptxas warning):
// D = 64, 128 and 256, O in bf16 and f16, causal and not, and at D = 64 a
// window with a softcap (the 64-byte swizzle's Q and K tiles), and per-block
// descales at D = 64, 128 (causal) and 256. D = 128, and D = 64 under a
// bottom-right causal mask, take blocks of 192 keys (Vᵀ in three 64-byte
// swizzle rows) unless a window or per-block descales of 128 keys keep
// 128; D = 64 under a top-left one 192 rows on three consumer warpgroups
// over blocks of 160 keys (Vᵀ in five 32-byte swizzle rows).
//
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 -o %t/h100 | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
//
// CHECK-NOT: ptxas warning
// CHECK-COUNT-11: ptxas sm_90a flash_fwd_sm90ws_e4m3_{{.*}}, 0/0 bytes spill stores/loads
//
// MANIFEST-LABEL: kernel flash_fwd_sm90ws_e4m3_bf16_d128_m128n192w8s2
// MANIFEST: dtype e4m3
// MANIFEST: threads 384
// MANIFEST: smem 115712
// MANIFEST: out_dtype bf16
// MANIFEST: params memref:q memref:k memref:vt {{.*}} tensormap:q_map tensormap:k_map tensormap:vt_map
// MANIFEST-LABEL: kernel flash_fwd_sm90ws_e4m3_f16_d256_m128n128w8s2_causalbr
// MANIFEST: smem 164864
// MANIFEST: out_dtype f16
// MANIFEST-LABEL: kernel flash_fwd_sm90ws_e4m3_bf16_d64_m192n128w12s4
// MANIFEST: threads 512
// MANIFEST: smem 78848
// MANIFEST-LABEL: kernel flash_fwd_sm90ws_e4m3_f16_d64_m128n192w8s2_causalbr
// MANIFEST: smem 58368
// MANIFEST-LABEL: kernel flash_fwd_sm90ws_e4m3_bf16_d128_m128n128w8s3_causalbr_ds128x128
// MANIFEST: descale_block_q 128
// MANIFEST: descale_block_k 128
// MANIFEST: params {{.*}} i64:q_descale_stride_b i64:q_descale_stride_h i64:q_descale_stride_n i64:k_descale_stride_b
// MANIFEST-LABEL: kernel flash_fwd_sm90ws_e4m3_bf16_d64_m192n160w12s4_causal
// MANIFEST: threads 512
// MANIFEST: smem 95232

func.func @bf16_d128(%q: tensor<2x8x1000x128xf8E4M3FN>, %d: tensor<2x8xf32>) -> tensor<2x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) : tensor<2x8x1000x128xf8E4M3FN>, tensor<2x8x1000x128xf8E4M3FN>, tensor<2x8x1000x128xf8E4M3FN> -> tensor<2x8x1000x128xbf16>
  return %o : tensor<2x8x1000x128xbf16>
}
func.func @f16_d128_causal(%q: tensor<2x8x1000x128xf8E4M3FN>, %d: tensor<f32>) -> tensor<2x8x1000x128xf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {causal = #flash.causal<top_left>} : tensor<2x8x1000x128xf8E4M3FN>, tensor<2x8x1000x128xf8E4M3FN>, tensor<2x8x1000x128xf8E4M3FN> -> tensor<2x8x1000x128xf16>
  return %o : tensor<2x8x1000x128xf16>
}
func.func @bf16_d256(%q: tensor<2x8x1000x256xf8E4M3FN>, %d: tensor<f32>) -> tensor<2x8x1000x256xbf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) : tensor<2x8x1000x256xf8E4M3FN>, tensor<2x8x1000x256xf8E4M3FN>, tensor<2x8x1000x256xf8E4M3FN> -> tensor<2x8x1000x256xbf16>
  return %o : tensor<2x8x1000x256xbf16>
}
func.func @f16_d256_causal(%q: tensor<2x8x1000x256xf8E4M3FN>, %d: tensor<f32>) -> tensor<2x8x1000x256xf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {causal = #flash.causal<bottom_right>} : tensor<2x8x1000x256xf8E4M3FN>, tensor<2x8x1000x256xf8E4M3FN>, tensor<2x8x1000x256xf8E4M3FN> -> tensor<2x8x1000x256xf16>
  return %o : tensor<2x8x1000x256xf16>
}
func.func @bf16_d64(%q: tensor<2x8x1000x64xf8E4M3FN>, %d: tensor<2x8xf32>) -> tensor<2x8x1000x64xbf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) : tensor<2x8x1000x64xf8E4M3FN>, tensor<2x8x1000x64xf8E4M3FN>, tensor<2x8x1000x64xf8E4M3FN> -> tensor<2x8x1000x64xbf16>
  return %o : tensor<2x8x1000x64xbf16>
}
func.func @f16_d64_causal(%q: tensor<2x8x1000x64xf8E4M3FN>, %d: tensor<f32>) -> tensor<2x8x1000x64xf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {causal = #flash.causal<bottom_right>} : tensor<2x8x1000x64xf8E4M3FN>, tensor<2x8x1000x64xf8E4M3FN>, tensor<2x8x1000x64xf8E4M3FN> -> tensor<2x8x1000x64xf16>
  return %o : tensor<2x8x1000x64xf16>
}
func.func @bf16_d64_window_softcap(%q: tensor<2x8x1000x64xf8E4M3FN>, %d: tensor<f32>) -> tensor<2x8x1000x64xbf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {causal = #flash.causal<bottom_right>, window_left = 64 : i64, softcap = 30.0 : f32} : tensor<2x8x1000x64xf8E4M3FN>, tensor<2x8x1000x64xf8E4M3FN>, tensor<2x8x1000x64xf8E4M3FN> -> tensor<2x8x1000x64xbf16>
  return %o : tensor<2x8x1000x64xbf16>
}
func.func @bf16_d64_blocks(%q: tensor<2x8x1000x64xf8E4M3FN>, %d: tensor<2x8x8xf32>) -> tensor<2x8x1000x64xbf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>) : tensor<2x8x1000x64xf8E4M3FN>, tensor<2x8x1000x64xf8E4M3FN>, tensor<2x8x1000x64xf8E4M3FN> -> tensor<2x8x1000x64xbf16>
  return %o : tensor<2x8x1000x64xbf16>
}
func.func @bf16_d128_causal_blocks(%q: tensor<2x8x1000x128xf8E4M3FN>, %d: tensor<2x8x8xf32>) -> tensor<2x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>) {causal = #flash.causal<bottom_right>} : tensor<2x8x1000x128xf8E4M3FN>, tensor<2x8x1000x128xf8E4M3FN>, tensor<2x8x1000x128xf8E4M3FN> -> tensor<2x8x1000x128xbf16>
  return %o : tensor<2x8x1000x128xbf16>
}
func.func @bf16_d256_blocks(%q: tensor<2x8x1000x256xf8E4M3FN>, %d: tensor<2x8x8xf32>) -> tensor<2x8x1000x256xbf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>) : tensor<2x8x1000x256xf8E4M3FN>, tensor<2x8x1000x256xf8E4M3FN>, tensor<2x8x1000x256xf8E4M3FN> -> tensor<2x8x1000x256xbf16>
  return %o : tensor<2x8x1000x256xbf16>
}
func.func @bf16_d64_causal_top_left(%q: tensor<2x8x1000x64xf8E4M3FN>, %d: tensor<f32>) -> tensor<2x8x1000x64xbf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {causal = #flash.causal<top_left>} : tensor<2x8x1000x64xf8E4M3FN>, tensor<2x8x1000x64xf8E4M3FN>, tensor<2x8x1000x64xf8E4M3FN> -> tensor<2x8x1000x64xbf16>
  return %o : tensor<2x8x1000x64xbf16>
}
