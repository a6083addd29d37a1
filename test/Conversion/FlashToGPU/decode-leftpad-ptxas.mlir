// REQUIRES: ptxas
// The decode kernels of a left-padded cache (cache_leftpad): contiguous and
// paged, 16 packed rows and (sm_90, G * Sq <= 8) the swapped block_m 8
// tiles, with the softcap; each assembles without spills for sm_80 and
// sm_90a, is told apart by its name (_leftpad) and manifest key
// (`leftpad 1`), and takes the param cache_leftpad after the lengths and
// the table. A kernel without the operand has neither.
//
// RUN: rm -rf %t && flashfuse-compile %s --target=a100 -o %t/a100 | FileCheck %s --check-prefix=A100
// RUN: flashfuse-compile %s --target=h100 -o %t/h100 | FileCheck %s --check-prefix=H100
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a | FileCheck %s --check-prefix=FLOOR
//
// A100-COUNT-4: ptxas sm_80 flash_decode_{{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_bf16_d128_m16n128w4s2_causalbr_leftpad: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_bf16_d128_m16n128w4s2_causalbr_page16_leftpad: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_f16_d256_{{.*}}_causalbr_softcap_leftpad: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_bf16_d128_m8{{.*}}_causalbr_leftpad: {{.*}}, 0/0 bytes spill stores/loads
//
// MANIFEST-LABEL: kernel flash_decode_bf16_d128_m16n128w4s2_causalbr_leftpad
// MANIFEST: page_size 0
// MANIFEST: leftpad 1
// MANIFEST: params memref:q memref:k memref:v memref:o memref:lse memref:o_partial memref:lse_partial memref:split_arrivals memref:cache_seqlens memref:cache_leftpad i32:batch
// MANIFEST-LABEL: kernel flash_decode_bf16_d128_m16n128w4s2_causalbr_page16_leftpad
// MANIFEST: page_size 16
// MANIFEST: leftpad 1
// MANIFEST: params {{.*}} memref:cache_seqlens memref:block_table memref:cache_leftpad i32:batch
// MANIFEST-LABEL: kernel flash_decode_bf16_d128_m16n128w4s2_causalbr{{$}}
// MANIFEST-NOT: leftpad
// MANIFEST: params {{.*}} memref:cache_seqlens i32:batch
// MANIFEST-NOT: leftpad

// The K/V copies never read a row below cache_leftpad[b] (clamped at 0):
// a key block takes the unchecked copies only where it starts at or past
// that row, and the checked ones zero-fill each pass's rows below it
// (docs/KVCACHE.md "What a step reads"). A kernel without the operand
// tests its blocks' ends only.
// FLOOR-LABEL: gpu.func @flash_decode_bf16_d128_m16n128w4s2_causalbr_leftpad(
// FLOOR: %[[PAD:.*]] = memref.load %arg9[
// FLOOR-NEXT: %[[PADI:.*]] = arith.index_cast %[[PAD]] : i32 to index
// FLOOR-NEXT: %[[FIRST:.*]] = arith.maxsi %[[PADI]], %{{.*}} : index
// FLOOR: %[[END:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : index
// FLOOR-NEXT: %[[START:.*]] = arith.cmpi sge, %[[ROW:.*]], %[[FIRST]] : index
// FLOOR-NEXT: %[[ALL:.*]] = arith.andi %[[END]], %[[START]] : i1
// FLOOR-NEXT: scf.if %[[ALL]] {
// FLOOR: } else {
// FLOOR: %[[BELOW:.*]] = arith.subi %[[FIRST]], %[[ROW]] : index
// FLOOR-NEXT: %[[SKIP:.*]] = arith.subi %[[BELOW]], %{{.*}} : index
// FLOOR-COUNT-16: arith.cmpi sle, %[[SKIP]], %c{{[0-9]+}}{{.*}} : index
// FLOOR-LABEL: gpu.func @flash_decode_bf16_d128_m16n128w4s2_causalbr(
// FLOOR: %[[PLAINEND:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : index
// FLOOR-NEXT: scf.if %[[PLAINEND]] {

func.func @contiguous(%q: tensor<2x128x1x128xbf16>, %k: tensor<2x8x256x128xbf16>, %len: tensor<2xi32>, %pad: tensor<2xi32>) -> tensor<2x128x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len cache_leftpad(%pad : tensor<2xi32>) {causal = #flash.causal<bottom_right>}
      : tensor<2x128x1x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2xi32> -> tensor<2x128x1x128xbf16>
  return %o : tensor<2x128x1x128xbf16>
}

func.func @paged(%q: tensor<2x128x1x128xbf16>, %k: tensor<40x16x8x128xbf16>, %len: tensor<2xi32>, %bt: tensor<2x16xi32>, %pad: tensor<2xi32>) -> tensor<2x128x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<2x16xi32>) cache_leftpad(%pad : tensor<2xi32>) {causal = #flash.causal<bottom_right>}
      : tensor<2x128x1x128xbf16>, tensor<40x16x8x128xbf16>, tensor<40x16x8x128xbf16>, tensor<2xi32> -> tensor<2x128x1x128xbf16>
  return %o : tensor<2x128x1x128xbf16>
}

func.func @softcap(%q: tensor<2x32x1x256xf16>, %k: tensor<2x2x256x256xf16>, %len: tensor<2xi32>, %pad: tensor<2xi32>) -> tensor<2x32x1x256xf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len cache_leftpad(%pad : tensor<2xi32>) {causal = #flash.causal<bottom_right>, softcap = 30.0 : f32}
      : tensor<2x32x1x256xf16>, tensor<2x2x256x256xf16>, tensor<2x2x256x256xf16>, tensor<2xi32> -> tensor<2x32x1x256xf16>
  return %o : tensor<2x32x1x256xf16>
}

// Four query heads a kv head: block_m 8 on sm_90.
func.func @rows8(%q: tensor<2x32x1x128xbf16>, %k: tensor<2x8x256x128xbf16>, %len: tensor<2xi32>, %pad: tensor<2xi32>) -> tensor<2x32x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len cache_leftpad(%pad : tensor<2xi32>) {causal = #flash.causal<bottom_right>}
      : tensor<2x32x1x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2xi32> -> tensor<2x32x1x128xbf16>
  return %o : tensor<2x32x1x128xbf16>
}

func.func @plain(%q: tensor<2x128x1x128xbf16>, %k: tensor<2x8x256x128xbf16>, %len: tensor<2xi32>) -> tensor<2x128x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len {causal = #flash.causal<bottom_right>}
      : tensor<2x128x1x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2xi32> -> tensor<2x128x1x128xbf16>
  return %o : tensor<2x128x1x128xbf16>
}
