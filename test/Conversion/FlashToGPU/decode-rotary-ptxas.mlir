// REQUIRES: ptxas
// kv_append with rotary embedding: GPT-NeoX halves and GPT-J pairs,
// rotary_dim below D and equal to it, contiguous and paged caches, and (on
// sm_90a) an FP8 cache whose rotated rows are quantised. Each assembles
// without spills for sm_80 and sm_90a, is told apart by its name
// (_rotary<N>[i][_qsamepos]) and manifest keys, and takes the query, q_rot
// and the tables after its other params. The decode kernels beside it are
// the plain ones.
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
// A100-DAG: ptxas sm_80 flash_kv_append_bf16_d128_{{.*}}_rotary128_qsamepos: {{.*}}, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_kv_append_f16_d64_{{.*}}_page16_rotary32i: {{.*}}, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_kv_append_bf16_d256_{{.*}}_rotary64: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_kv_append_bf16_d128_{{.*}}_rotary128_qsamepos: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_kv_append_f16_d64_{{.*}}_page16_rotary32i: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_kv_append_bf16_d256_{{.*}}_rotary64: {{.*}}, 0/0 bytes spill stores/loads
//
// MANIFEST-LABEL: kernel flash_kv_append_bf16_d128_{{.*}}_rotary128_qsamepos
// MANIFEST: kind kv_append
// MANIFEST: rotary_dim 128
// MANIFEST-NEXT: rotary_interleaved 0
// MANIFEST-NEXT: rotary_per_row 0
// MANIFEST: params memref:k memref:v memref:k_new memref:v_new memref:cache_seqlens i32:batch {{.*}} memref:q memref:q_rot memref:rotary_cos memref:rotary_sin i32:heads_q i32:seq_q i32:seq_rotary i64:q_stride_b i64:q_stride_h i64:q_stride_s i64:q_rot_stride_b i64:q_rot_stride_h i64:q_rot_stride_s
// MANIFEST-LABEL: kernel flash_kv_append_f16_d64_{{.*}}_page16_rotary32i
// MANIFEST: rotary_dim 32
// MANIFEST-NEXT: rotary_interleaved 1
// MANIFEST-NEXT: rotary_per_row 1

func.func @halves_full(%q: tensor<2x32x1x128xbf16>, %k: tensor<2x8x256x128xbf16>, %len: tensor<2xi32>,
                       %kn: tensor<2x8x1x128xbf16>, %c: tensor<256x64xbf16>) -> tensor<2x32x1x128xbf16> {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %k, %len
      new_kv(%kn, %kn : tensor<2x8x1x128xbf16>, tensor<2x8x1x128xbf16>)
      rotary(%c, %c : tensor<256x64xbf16>, tensor<256x64xbf16>)
      : tensor<2x32x1x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2xi32>
      -> tensor<2x32x1x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>
  return %o : tensor<2x32x1x128xbf16>
}

func.func @pairs_paged(%q: tensor<2x8x2x64xf16>, %k: tensor<20x16x2x64xf16>, %len: tensor<2xi32>, %bt: tensor<2x8xi32>,
                       %kn: tensor<2x2x2x64xf16>, %c: tensor<128x16xf16>) -> tensor<2x8x2x64xf16> {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<2x8xi32>)
      new_kv(%kn, %kn : tensor<2x2x2x64xf16>, tensor<2x2x2x64xf16>)
      rotary(%c, %c : tensor<128x16xf16>, tensor<128x16xf16>)
      {causal = #flash.causal<bottom_right>, rotary_interleaved}
      : tensor<2x8x2x64xf16>, tensor<20x16x2x64xf16>, tensor<20x16x2x64xf16>, tensor<2xi32>
      -> tensor<2x8x2x64xf16>, tensor<20x16x2x64xf16>, tensor<20x16x2x64xf16>
  return %o : tensor<2x8x2x64xf16>
}

// rotary_dim 64 of D = 256: the halves' pieces, then the unrotated tail.
func.func @halves_part(%q: tensor<2x16x1x256xbf16>, %k: tensor<2x4x256x256xbf16>, %len: tensor<2xi32>,
                       %kn: tensor<2x4x1x256xbf16>, %c: tensor<300x32xbf16>) -> tensor<2x16x1x256xbf16> {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %k, %len
      new_kv(%kn, %kn : tensor<2x4x1x256xbf16>, tensor<2x4x1x256xbf16>)
      rotary(%c, %c : tensor<300x32xbf16>, tensor<300x32xbf16>)
      {causal = #flash.causal<bottom_right>}
      : tensor<2x16x1x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2xi32>
      -> tensor<2x16x1x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x256xbf16>
  return %o : tensor<2x16x1x256xbf16>
}
