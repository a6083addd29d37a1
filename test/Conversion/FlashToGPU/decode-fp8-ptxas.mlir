// REQUIRES: ptxas
// The FP8-cache decode kernels (decode-fp8.mlir) assemble without spills for
// sm_90a: blocks of 256 keys at D = 128 (contiguous, paged with window and
// softcap) and D = 96 (paged; its tiles 48 of 64 units wide, copied chunk
// by chunk), 128 at D = 64, 32 at D = 256, with f16 and bf16 queries.
// Their K/V copies are 16-byte cp.async of the codes, converted by
// cvt.rn.f16x2.e4m3x2 (bf16: through f32, cvt.rn.bf16x2.f32); the manifest
// names the cache's dtype and the descale params. Their kv_append kernels
// quantise new rows with cvt.rn.satfinite.e4m3x2.f32 after an IEEE
// reciprocal of the descale (rcp.rn.f32) and store 8 codes a lane.
//
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 -o %t/h100 | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
// RUN: grep -c "cvt.rn.f16x2.e4m3x2" %t/h100/kernels.ptx | FileCheck %s --check-prefix=NONZERO
// RUN: grep -c "cvt.rn.bf16x2.f32" %t/h100/kernels.ptx | FileCheck %s --check-prefix=NONZERO
// RUN: grep -c "cp.async.cg.shared.global" %t/h100/kernels.ptx | FileCheck %s --check-prefix=NONZERO
// RUN: grep -c "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" %t/h100/kernels.ptx | FileCheck %s --check-prefix=NONZERO
// RUN: grep -c "cvt.rn.satfinite.e4m3x2.f32" %t/h100/kernels.ptx | FileCheck %s --check-prefix=NONZERO
// RUN: grep -c "rcp.rn.f32" %t/h100/kernels.ptx | FileCheck %s --check-prefix=NONZERO
// RUN: grep -c "st.global.v4.b16" %t/h100/kernels.ptx | FileCheck %s --check-prefix=NONZERO
//
// CHECK-DAG: ptxas sm_90a flash_decode_bf16_kvf8_d128_m16n256w4s2_causalbr: {{.*}}, 0/0 bytes spill stores/loads
// CHECK-DAG: ptxas sm_90a flash_decode_bf16_kvf8_d128_m16n256w4s2_causalbr_window_softcap_page64: {{.*}}, 0/0 bytes spill stores/loads
// CHECK-DAG: ptxas sm_90a flash_decode_f16_kvf8_d64_m16n128w4s3_page16: {{.*}}, 0/0 bytes spill stores/loads
// CHECK-DAG: ptxas sm_90a flash_decode_f16_kvf8_d96_m16n256w4s2_page16: {{.*}}, 0/0 bytes spill stores/loads
// CHECK-DAG: ptxas sm_90a flash_decode_f16_kvf8_d256_m64n32w4s3_causalbr_page16: {{.*}}, 0/0 bytes spill stores/loads
// CHECK-DAG: ptxas sm_90a flash_kv_append_bf16_kvf8_d128_m4n0w4s0: {{.*}}, 0/0 bytes spill stores/loads
// CHECK-DAG: ptxas sm_90a flash_kv_append_f16_kvf8_d64_m4n0w4s0_page16: {{.*}}, 0/0 bytes spill stores/loads
// CHECK: wrote
//
// MANIFEST-LABEL: kernel flash_decode_bf16_kvf8_d128_m16n256w4s2_causalbr
// MANIFEST: kind decode
// MANIFEST: dtype bf16
// MANIFEST: page_size 0
// MANIFEST: kv_dtype e4m3
// MANIFEST: params {{.*}} memref:k_descale memref:v_descale i64:k_descale_stride_b i64:k_descale_stride_h i64:v_descale_stride_b i64:v_descale_stride_h
// MANIFEST-LABEL: kernel flash_kv_append_bf16_kvf8_d128_m4n0w4s0
// MANIFEST: kind kv_append
// MANIFEST: dtype bf16
// MANIFEST: kv_dtype e4m3
// MANIFEST: params memref:k memref:v memref:k_new memref:v_new {{.*}} memref:k_descale memref:v_descale i64:k_descale_stride_b i64:k_descale_stride_h i64:v_descale_stride_b i64:v_descale_stride_h
// NONZERO: {{[1-9]}}

func.func @d128(%q: tensor<4x32x1x128xbf16>, %k: tensor<4x8x4096x128xf8E4M3FN>,
                %len: tensor<4xi32>, %d: tensor<4x8xf32>) -> tensor<4x32x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len descale(%d, %d : tensor<4x8xf32>, tensor<4x8xf32>)
      {causal = #flash.causal<bottom_right>}
      : tensor<4x32x1x128xbf16>, tensor<4x8x4096x128xf8E4M3FN>, tensor<4x8x4096x128xf8E4M3FN>, tensor<4xi32>
      -> tensor<4x32x1x128xbf16>
  return %o : tensor<4x32x1x128xbf16>
}

func.func @d128_paged(%q: tensor<4x32x1x128xbf16>, %k: tensor<256x64x8x128xf8E4M3FN>,
                      %len: tensor<4xi32>, %bt: tensor<4x64xi32>, %d: tensor<f32>) -> tensor<4x32x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<4x64xi32>) descale(%d, %d : tensor<f32>, tensor<f32>)
      {causal = #flash.causal<bottom_right>, window_left = 256 : i64, softcap = 30.0 : f32}
      : tensor<4x32x1x128xbf16>, tensor<256x64x8x128xf8E4M3FN>, tensor<256x64x8x128xf8E4M3FN>, tensor<4xi32>
      -> tensor<4x32x1x128xbf16>
  return %o : tensor<4x32x1x128xbf16>
}

func.func @d64_paged(%q: tensor<4x32x1x64xf16>, %k: tensor<1024x16x8x64xf8E4M3FN>,
                     %len: tensor<4xi32>, %bt: tensor<4x256xi32>, %d: tensor<4x8xf32>) -> tensor<4x32x1x64xf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<4x256xi32>) descale(%d, %d : tensor<4x8xf32>, tensor<4x8xf32>)
      : tensor<4x32x1x64xf16>, tensor<1024x16x8x64xf8E4M3FN>, tensor<1024x16x8x64xf8E4M3FN>, tensor<4xi32>
      -> tensor<4x32x1x64xf16>
  return %o : tensor<4x32x1x64xf16>
}

func.func @d96_paged(%q: tensor<4x32x1x96xf16>, %k: tensor<1024x16x8x96xf8E4M3FN>,
                     %len: tensor<4xi32>, %bt: tensor<4x256xi32>, %d: tensor<4x8xf32>) -> tensor<4x32x1x96xf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<4x256xi32>) descale(%d, %d : tensor<4x8xf32>, tensor<4x8xf32>)
      : tensor<4x32x1x96xf16>, tensor<1024x16x8x96xf8E4M3FN>, tensor<1024x16x8x96xf8E4M3FN>, tensor<4xi32>
      -> tensor<4x32x1x96xf16>
  return %o : tensor<4x32x1x96xf16>
}

func.func @d256_paged(%q: tensor<4x32x1x256xf16>, %k: tensor<1024x16x8x256xf8E4M3FN>,
                      %len: tensor<4xi32>, %bt: tensor<4x256xi32>, %d: tensor<4x8xf32>) -> tensor<4x32x1x256xf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<4x256xi32>) descale(%d, %d : tensor<4x8xf32>, tensor<4x8xf32>)
      {causal = #flash.causal<bottom_right>}
      : tensor<4x32x1x256xf16>, tensor<1024x16x8x256xf8E4M3FN>, tensor<1024x16x8x256xf8E4M3FN>, tensor<4xi32>
      -> tensor<4x32x1x256xf16>
  return %o : tensor<4x32x1x256xf16>
}
