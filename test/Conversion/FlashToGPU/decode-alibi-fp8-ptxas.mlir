// REQUIRES: ptxas
// ALiBi over an FP8 (e4m3) cache: the FP8 decode kernels take the slopes
// like the 16-bit ones (the shared score stage after k_descale is folded
// into the scale), contiguous and paged, four and sixteen query heads a kv
// head, a window with the softcap, D = 64, 128 and 256; each
// assembles without spills for sm_90a, is told apart by its name and
// manifest keys (kv_dtype e4m3 and alibi N) and takes alibi_slopes before
// the descales.
//
// RUN: rm -rf %t && mkdir -p %t && flashfuse-compile %s --target=h100 -o %t/h100 > %t/h100.log
// RUN: FileCheck %s --check-prefix=H100 < %t/h100.log
// RUN: FileCheck %s --check-prefix=NOSPILL < %t/h100.log
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
//
// NOSPILL-NOT: {{[1-9][0-9]*/[0-9]+}} bytes spill
// H100-COUNT-5: ptxas sm_90a flash_decode_{{.*}}_alibi{{b?}}: {{.*}}, 0/0 bytes spill stores/loads
//
// MANIFEST-LABEL: kernel flash_decode_bf16_kvf8_d128_{{.*}}_causalbr_alibi
// MANIFEST: kv_dtype e4m3
// MANIFEST: alibi 1
// MANIFEST: params {{.*}} memref:cache_seqlens memref:alibi_slopes i32:batch {{.*}} memref:k_descale memref:v_descale
// MANIFEST-LABEL: kernel flash_decode_bf16_kvf8_d128_{{.*}}_causalbr_page16_alibib
// MANIFEST: page_size 16
// MANIFEST: kv_dtype e4m3
// MANIFEST: alibi 2

func.func @contiguous(%q: tensor<2x128x1x128xbf16>, %k: tensor<2x8x256x128xf8E4M3FN>, %len: tensor<2xi32>, %d: tensor<2x8xf32>, %s: tensor<128xf32>) -> tensor<2x128x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len descale(%d, %d : tensor<2x8xf32>, tensor<2x8xf32>) alibi(%s : tensor<128xf32>) {causal = #flash.causal<bottom_right>}
      : tensor<2x128x1x128xbf16>, tensor<2x8x256x128xf8E4M3FN>, tensor<2x8x256x128xf8E4M3FN>, tensor<2xi32> -> tensor<2x128x1x128xbf16>
  return %o : tensor<2x128x1x128xbf16>
}

func.func @paged(%q: tensor<2x128x1x128xbf16>, %k: tensor<40x16x8x128xf8E4M3FN>, %len: tensor<2xi32>, %bt: tensor<2x16xi32>, %d: tensor<f32>, %s: tensor<2x128xf32>) -> tensor<2x128x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<2x16xi32>) descale(%d, %d : tensor<f32>, tensor<f32>) alibi(%s : tensor<2x128xf32>) {causal = #flash.causal<bottom_right>}
      : tensor<2x128x1x128xbf16>, tensor<40x16x8x128xf8E4M3FN>, tensor<40x16x8x128xf8E4M3FN>, tensor<2xi32> -> tensor<2x128x1x128xbf16>
  return %o : tensor<2x128x1x128xbf16>
}

// Four query heads a kv head.
func.func @rows8(%q: tensor<2x32x1x128xf16>, %k: tensor<2x8x256x128xf8E4M3FN>, %len: tensor<2xi32>, %d: tensor<2x8xf32>, %s: tensor<32xf32>) -> tensor<2x32x1x128xf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len descale(%d, %d : tensor<2x8xf32>, tensor<2x8xf32>) alibi(%s : tensor<32xf32>) {causal = #flash.causal<bottom_right>}
      : tensor<2x32x1x128xf16>, tensor<2x8x256x128xf8E4M3FN>, tensor<2x8x256x128xf8E4M3FN>, tensor<2xi32> -> tensor<2x32x1x128xf16>
  return %o : tensor<2x32x1x128xf16>
}

func.func @window_softcap(%q: tensor<2x32x1x64xf16>, %k: tensor<2x2x256x64xf8E4M3FN>, %len: tensor<2xi32>, %d: tensor<f32>, %s: tensor<32xf32>) -> tensor<2x32x1x64xf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len descale(%d, %d : tensor<f32>, tensor<f32>) alibi(%s : tensor<32xf32>) {window_left = 64, window_right = 8, softcap = 30.0 : f32}
      : tensor<2x32x1x64xf16>, tensor<2x2x256x64xf8E4M3FN>, tensor<2x2x256x64xf8E4M3FN>, tensor<2xi32> -> tensor<2x32x1x64xf16>
  return %o : tensor<2x32x1x64xf16>
}

func.func @d256(%q: tensor<2x16x1x256xbf16>, %k: tensor<2x4x256x256xf8E4M3FN>, %len: tensor<2xi32>, %d: tensor<2x4xf32>, %s: tensor<2x16xf32>) -> tensor<2x16x1x256xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len descale(%d, %d : tensor<2x4xf32>, tensor<2x4xf32>) alibi(%s : tensor<2x16xf32>) {causal = #flash.causal<bottom_right>}
      : tensor<2x16x1x256xbf16>, tensor<2x4x256x256xf8E4M3FN>, tensor<2x4x256x256xf8E4M3FN>, tensor<2xi32> -> tensor<2x16x1x256xbf16>
  return %o : tensor<2x16x1x256xbf16>
}
