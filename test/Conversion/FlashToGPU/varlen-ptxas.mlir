// REQUIRES: ptxas
// The packed-batch (varlen) forward kernels assemble without spilling
// (flashfuse-compile fails on a spill) on sm_80 (A100) and sm_90a (H100, with
// the sm90 recipe where it applies, and the sm80 recipe forced): D = 64 and
// 128 in every causal alignment, a window and softcap at D = 128, and the
// other tile shapes (D = 32 on padded tiles with its direct epilogue,
// D = 96 and 256) with the configs flash-select-config gives them, and an
// f32 O (out_f32, stored from the fragments). The scheduler keeps each
// sequence's lengths in i32 registers across the key loop (two i64 ones
// spilled 24 bytes in the sm80 recipe at D = 128 on sm_90a) and reads the
// sequence again after it for the fragments' epilogue (kept, it spilled 24
// bytes in the sm80 f32-O kernel at D = 128 on sm_80).
//
// RUN: rm -rf %t && flashfuse-compile %s --target=a100 -o %t/a100 | FileCheck %s --check-prefix=A100
// RUN: flashfuse-compile %s --target=h100 -o %t/h100 | FileCheck %s --check-prefix=H100
// RUN: flashfuse-compile %s --target=h100 --recipe=sm80 -o %t/h100-sm80 | FileCheck %s --check-prefix=SM80ON90
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
//
// A100-COUNT-11: ptxas sm_80 flash_fwd_sm80_{{.*}}_varlen: {{.*}}, 0/0 bytes spill stores/loads
// A100: kernel flash_fwd_sm80_bf16_d128_m128n32w4s2_causalbr_varlen
// H100-COUNT-11: ptxas sm_90a flash_fwd_sm{{[89]}}0_{{.*}}_varlen: {{.*}}, 0/0 bytes spill stores/loads
// H100: kernel flash_fwd_sm90_bf16_d128_m128n128w8s3_causalbr_varlen
// H100: kernel flash_fwd_sm80_f16_d32_m128n32w4s2_causal_varlen
// SM80ON90-COUNT-11: ptxas sm_90a flash_fwd_sm80_{{.*}}_varlen: {{.*}}, 0/0 bytes spill stores/loads
//
// MANIFEST-LABEL: kernel flash_fwd_sm90_f16_d64_m128n64w8s3_varlen
// MANIFEST: kind forward
// MANIFEST: causal none
// MANIFEST: dropout 0
// MANIFEST-NEXT: varlen 1
// MANIFEST-NEXT: params memref:q memref:k memref:v memref:o memref:lse memref:cu_seqlens_q memref:cu_seqlens_k i32:batch i32:heads_q i32:heads_kv i32:seq_q i32:seq_k i32:num_seqs i32:max_seqlen_q i64:q_stride_b

func.func @f16_d64_full(%q: tensor<1x8x512x64xf16>, %k: tensor<1x2x700x64xf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<1x8x512x64xf16> {
  %o = flash.attention %q, %k, %k varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) : tensor<1x8x512x64xf16>, tensor<1x2x700x64xf16>, tensor<1x2x700x64xf16> -> tensor<1x8x512x64xf16>
  return %o : tensor<1x8x512x64xf16>
}
func.func @bf16_d64_bottom_right(%q: tensor<1x8x512x64xbf16>, %k: tensor<1x2x700x64xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<1x8x512x64xbf16> {
  %o = flash.attention %q, %k, %k varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {causal = #flash.causal<bottom_right>} : tensor<1x8x512x64xbf16>, tensor<1x2x700x64xbf16>, tensor<1x2x700x64xbf16> -> tensor<1x8x512x64xbf16>
  return %o : tensor<1x8x512x64xbf16>
}
func.func @f16_d128_full(%q: tensor<1x8x512x128xf16>, %k: tensor<1x2x700x128xf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<1x8x512x128xf16> {
  %o = flash.attention %q, %k, %k varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) : tensor<1x8x512x128xf16>, tensor<1x2x700x128xf16>, tensor<1x2x700x128xf16> -> tensor<1x8x512x128xf16>
  return %o : tensor<1x8x512x128xf16>
}
func.func @bf16_d128_top_left(%q: tensor<1x8x512x128xbf16>, %k: tensor<1x2x700x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<1x8x512x128xbf16> {
  %o = flash.attention %q, %k, %k varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {causal = #flash.causal<top_left>} : tensor<1x8x512x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x2x700x128xbf16> -> tensor<1x8x512x128xbf16>
  return %o : tensor<1x8x512x128xbf16>
}
func.func @bf16_d128_bottom_right(%q: tensor<1x8x512x128xbf16>, %k: tensor<1x2x700x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<1x8x512x128xbf16> {
  %o = flash.attention %q, %k, %k varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {causal = #flash.causal<bottom_right>} : tensor<1x8x512x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x2x700x128xbf16> -> tensor<1x8x512x128xbf16>
  return %o : tensor<1x8x512x128xbf16>
}
func.func @f16_d128_full_window(%q: tensor<1x8x512x128xf16>, %k: tensor<1x2x700x128xf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<1x8x512x128xf16> {
  %o = flash.attention %q, %k, %k varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {window_left = 64 : i64, window_right = 0 : i64} : tensor<1x8x512x128xf16>, tensor<1x2x700x128xf16>, tensor<1x2x700x128xf16> -> tensor<1x8x512x128xf16>
  return %o : tensor<1x8x512x128xf16>
}
func.func @bf16_d128_bottom_right_softcap(%q: tensor<1x8x512x128xbf16>, %k: tensor<1x2x700x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<1x8x512x128xbf16> {
  %o = flash.attention %q, %k, %k varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {causal = #flash.causal<bottom_right>, softcap = 30.0 : f32} : tensor<1x8x512x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x2x700x128xbf16> -> tensor<1x8x512x128xbf16>
  return %o : tensor<1x8x512x128xbf16>
}
func.func @f16_d32_top_left(%q: tensor<1x8x512x32xf16>, %k: tensor<1x2x700x32xf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<1x8x512x32xf16> {
  %o = flash.attention %q, %k, %k varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {causal = #flash.causal<top_left>} : tensor<1x8x512x32xf16>, tensor<1x2x700x32xf16>, tensor<1x2x700x32xf16> -> tensor<1x8x512x32xf16>
  return %o : tensor<1x8x512x32xf16>
}
func.func @bf16_d96_bottom_right(%q: tensor<1x8x512x96xbf16>, %k: tensor<1x2x700x96xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<1x8x512x96xbf16> {
  %o = flash.attention %q, %k, %k varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {causal = #flash.causal<bottom_right>} : tensor<1x8x512x96xbf16>, tensor<1x2x700x96xbf16>, tensor<1x2x700x96xbf16> -> tensor<1x8x512x96xbf16>
  return %o : tensor<1x8x512x96xbf16>
}
func.func @f16_d256_full(%q: tensor<1x8x512x256xf16>, %k: tensor<1x2x700x256xf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<1x8x512x256xf16> {
  %o = flash.attention %q, %k, %k varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) : tensor<1x8x512x256xf16>, tensor<1x2x700x256xf16>, tensor<1x2x700x256xf16> -> tensor<1x8x512x256xf16>
  return %o : tensor<1x8x512x256xf16>
}
func.func @bf16_d128_bottom_right_of32(%q: tensor<1x8x512x128xbf16>, %k: tensor<1x2x700x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<1x8x512x128xf32> {
  %o = flash.attention %q, %k, %k varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {causal = #flash.causal<bottom_right>} : tensor<1x8x512x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x2x700x128xbf16> -> tensor<1x8x512x128xf32>
  return %o : tensor<1x8x512x128xf32>
}
