// REQUIRES: ptxas
// The decode kernels with ALiBi (alibi_slopes [Hq] or [B, Hq]): contiguous
// and paged, 16 packed rows and (sm_90, G * Sq <= 8) the swapped block_m 8
// tiles, not causal, with a window and the softcap, left-padded, D = 256;
// each assembles without spills for sm_80 and sm_90a, is told apart by its
// name
// (_alibi for [Hq], _alibib for [B, Hq]) and manifest key (`alibi 1` /
// `alibi 2`), and takes the param alibi_slopes after the lengths, the table
// and the first rows. A kernel without the operand has neither.
//
// RUN: rm -rf %t && mkdir -p %t && flashfuse-compile %s --target=a100 -o %t/a100 > %t/a100.log
// RUN: FileCheck %s --check-prefix=A100 < %t/a100.log
// RUN: FileCheck %s --check-prefix=NOSPILL < %t/a100.log
// RUN: flashfuse-compile %s --target=h100 -o %t/h100 > %t/h100.log
// RUN: FileCheck %s --check-prefix=H100 < %t/h100.log
// RUN: FileCheck %s --check-prefix=NOSPILL < %t/h100.log
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
//
// NOSPILL-NOT: {{[1-9][0-9]*/[0-9]+}} bytes spill
// A100-COUNT-7: ptxas sm_80 flash_decode_{{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_bf16_d128_m16n128w4s2_causalbr_alibi: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_bf16_d128_m16n128w4s2_causalbr_page16_alibib: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_f16_d256_{{.*}}_window_softcap_alibi: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_bf16_d128_m8{{.*}}_causalbr_alibi: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_bf16_d256_m64n32w4s2_causalbr_alibib: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_f16_d64_{{.*}}_causalbr_leftpad_alibib: {{.*}}, 0/0 bytes spill stores/loads
//
// MANIFEST-LABEL: kernel flash_decode_bf16_d128_m16n128w4s2_causalbr_alibi
// MANIFEST: page_size 0
// MANIFEST: alibi 1
// MANIFEST: params memref:q memref:k memref:v memref:o memref:lse memref:o_partial memref:lse_partial memref:split_arrivals memref:cache_seqlens memref:alibi_slopes i32:batch
// MANIFEST-LABEL: kernel flash_decode_bf16_d128_m16n128w4s2_causalbr_page16_alibib
// MANIFEST: page_size 16
// MANIFEST: alibi 2
// MANIFEST: params {{.*}} memref:cache_seqlens memref:block_table memref:alibi_slopes i32:batch
// MANIFEST-LABEL: kernel flash_decode_f16_d64_{{.*}}_causalbr_leftpad_alibib
// MANIFEST: leftpad 1
// MANIFEST: alibi 2
// MANIFEST: params {{.*}} memref:cache_seqlens memref:cache_leftpad memref:alibi_slopes i32:batch
// MANIFEST-LABEL: kernel flash_decode_bf16_d128_m16n128w4s2_causalbr{{$}}
// MANIFEST-NOT: alibi
// MANIFEST: params {{.*}} memref:cache_seqlens i32:batch
// MANIFEST-NOT: alibi

func.func @contiguous(%q: tensor<2x128x1x128xbf16>, %k: tensor<2x8x256x128xbf16>, %len: tensor<2xi32>, %s: tensor<128xf32>) -> tensor<2x128x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len alibi(%s : tensor<128xf32>) {causal = #flash.causal<bottom_right>}
      : tensor<2x128x1x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2xi32> -> tensor<2x128x1x128xbf16>
  return %o : tensor<2x128x1x128xbf16>
}

func.func @paged(%q: tensor<2x128x1x128xbf16>, %k: tensor<40x16x8x128xbf16>, %len: tensor<2xi32>, %bt: tensor<2x16xi32>, %s: tensor<2x128xf32>) -> tensor<2x128x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<2x16xi32>) alibi(%s : tensor<2x128xf32>) {causal = #flash.causal<bottom_right>}
      : tensor<2x128x1x128xbf16>, tensor<40x16x8x128xbf16>, tensor<40x16x8x128xbf16>, tensor<2xi32> -> tensor<2x128x1x128xbf16>
  return %o : tensor<2x128x1x128xbf16>
}

// Not causal: ALiBi's |distance| on both sides of the diagonal.
func.func @window_softcap(%q: tensor<2x32x1x256xf16>, %k: tensor<2x2x256x256xf16>, %len: tensor<2xi32>, %s: tensor<32xf32>) -> tensor<2x32x1x256xf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len alibi(%s : tensor<32xf32>) {window_left = 64, window_right = 8, softcap = 30.0 : f32}
      : tensor<2x32x1x256xf16>, tensor<2x2x256x256xf16>, tensor<2x2x256x256xf16>, tensor<2xi32> -> tensor<2x32x1x256xf16>
  return %o : tensor<2x32x1x256xf16>
}

// D = 256, causal: two stages (three spilled 48-72 bytes on sm_90a).
func.func @d256(%q: tensor<2x16x1x256xbf16>, %k: tensor<2x4x256x256xbf16>, %len: tensor<2xi32>, %s: tensor<2x16xf32>) -> tensor<2x16x1x256xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len alibi(%s : tensor<2x16xf32>) {causal = #flash.causal<bottom_right>}
      : tensor<2x16x1x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2xi32> -> tensor<2x16x1x256xbf16>
  return %o : tensor<2x16x1x256xbf16>
}

// Four query heads a kv head: block_m 8 on sm_90.
func.func @rows8(%q: tensor<2x32x1x128xbf16>, %k: tensor<2x8x256x128xbf16>, %len: tensor<2xi32>, %s: tensor<32xf32>) -> tensor<2x32x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len alibi(%s : tensor<32xf32>) {causal = #flash.causal<bottom_right>}
      : tensor<2x32x1x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2xi32> -> tensor<2x32x1x128xbf16>
  return %o : tensor<2x32x1x128xbf16>
}

func.func @leftpad(%q: tensor<2x16x4x64xf16>, %k: tensor<2x4x256x64xf16>, %len: tensor<2xi32>, %pad: tensor<2xi32>, %s: tensor<2x16xf32>) -> tensor<2x16x4x64xf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len cache_leftpad(%pad : tensor<2xi32>) alibi(%s : tensor<2x16xf32>) {causal = #flash.causal<bottom_right>}
      : tensor<2x16x4x64xf16>, tensor<2x4x256x64xf16>, tensor<2x4x256x64xf16>, tensor<2xi32> -> tensor<2x16x4x64xf16>
  return %o : tensor<2x16x4x64xf16>
}

func.func @plain(%q: tensor<2x128x1x128xbf16>, %k: tensor<2x8x256x128xbf16>, %len: tensor<2xi32>) -> tensor<2x128x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len {causal = #flash.causal<bottom_right>}
      : tensor<2x128x1x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2xi32> -> tensor<2x128x1x128xbf16>
  return %o : tensor<2x128x1x128xbf16>
}
