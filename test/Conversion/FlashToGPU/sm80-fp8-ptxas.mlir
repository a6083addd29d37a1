// REQUIRES: ptxas
// The mma.sync FP8 forwards assemble for sm_89 without spilling
// (flashfuse-compile fails on a spill): D = 64 and 128, O in bf16 and f16,
// causal and not, a window with a softcap; PTX 8.4 (mma.sync with e4m3).
//
// RUN: rm -rf %t && flashfuse-compile %s --target=l4 -o %t/l4 | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/l4/manifest.txt
// RUN: FileCheck %s --check-prefix=PTX < %t/l4/kernels.ptx
//
// CHECK-COUNT-4: ptxas sm_89 flash_fwd_sm80_e4m3_{{.*}}, 0/0 bytes spill stores/loads
//
// PTX: .version 8.4
// PTX: .target sm_89
// PTX: mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32
//
// MANIFEST: arch 89
// MANIFEST-LABEL: kernel flash_fwd_sm80_e4m3_bf16_d128_m128n128w8s2
// MANIFEST: dtype e4m3
// MANIFEST: threads 256
// MANIFEST: smem 82944
// MANIFEST: out_dtype bf16
// MANIFEST-NOT: tensormap
// MANIFEST-LABEL: kernel flash_fwd_sm80_e4m3_f16_d64_m128n128w8s3_causalbr
// MANIFEST: smem 91136
// MANIFEST: out_dtype f16

func.func @bf16_d128(%q: tensor<2x8x1000x128xf8E4M3FN>, %d: tensor<2x8xf32>) -> tensor<2x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) : tensor<2x8x1000x128xf8E4M3FN>, tensor<2x8x1000x128xf8E4M3FN>, tensor<2x8x1000x128xf8E4M3FN> -> tensor<2x8x1000x128xbf16>
  return %o : tensor<2x8x1000x128xbf16>
}
func.func @f16_d64_causalbr(%q: tensor<2x8x1000x64xf8E4M3FN>, %d: tensor<f32>) -> tensor<2x8x1000x64xf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {causal = #flash.causal<bottom_right>} : tensor<2x8x1000x64xf8E4M3FN>, tensor<2x8x1000x64xf8E4M3FN>, tensor<2x8x1000x64xf8E4M3FN> -> tensor<2x8x1000x64xf16>
  return %o : tensor<2x8x1000x64xf16>
}
func.func @bf16_d128_causal(%q: tensor<2x8x1000x128xf8E4M3FN>, %d: tensor<f32>) -> tensor<2x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {causal = #flash.causal<top_left>} : tensor<2x8x1000x128xf8E4M3FN>, tensor<2x8x1000x128xf8E4M3FN>, tensor<2x8x1000x128xf8E4M3FN> -> tensor<2x8x1000x128xbf16>
  return %o : tensor<2x8x1000x128xbf16>
}
func.func @bf16_d128_window_softcap(%q: tensor<2x8x1000x128xf8E4M3FN>, %d: tensor<f32>) -> tensor<2x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {window_left = 64 : i64, softcap = 30.0 : f32} : tensor<2x8x1000x128xf8E4M3FN>, tensor<2x8x1000x128xf8E4M3FN>, tensor<2x8x1000x128xf8E4M3FN> -> tensor<2x8x1000x128xbf16>
  return %o : tensor<2x8x1000x128xbf16>
}
