// REQUIRES: ptxas
// An FP8 pool of sequences (cache_batch_idx over f8E4M3FN caches, sm_89+):
// the decode that dequantises and the kv_append that quantises into row
// cache_batch_idx[b] assemble without spills for sm_90a.
//
// RUN: rm -rf %t && mkdir -p %t && flashfuse-compile %s --target=h100 -o %t/h100 > %t/h100.log
// RUN: FileCheck %s --check-prefix=NOSPILL < %t/h100.log
// RUN: FileCheck %s < %t/h100.log
//
// NOSPILL-NOT: {{[1-9][0-9]*/[0-9]+}} bytes spill
// CHECK-DAG: ptxas sm_90a flash_decode_f16_kvf8_d128_{{.*}}_bidx: {{.*}}, 0/0 bytes spill stores/loads
// CHECK-DAG: ptxas sm_90a flash_kv_append_f16_kvf8_d128_{{.*}}_bidx: {{.*}}, 0/0 bytes spill stores/loads

func.func @pool_fp8(%q: tensor<2x16x1x128xf16>, %k: tensor<4x4x256x128xf8E4M3FN>, %len: tensor<2xi32>,
                    %idx: tensor<2xi32>, %kn: tensor<2x4x1x128xf16>, %d: tensor<2x4xf32>) -> tensor<2x16x1x128xf16> {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %k, %len cache_batch_idx(%idx : tensor<2xi32>)
      new_kv(%kn, %kn : tensor<2x4x1x128xf16>, tensor<2x4x1x128xf16>)
      descale(%d, %d : tensor<2x4xf32>, tensor<2x4xf32>)
      {causal = #flash.causal<bottom_right>}
      : tensor<2x16x1x128xf16>, tensor<4x4x256x128xf8E4M3FN>, tensor<4x4x256x128xf8E4M3FN>, tensor<2xi32>
      -> tensor<2x16x1x128xf16>, tensor<4x4x256x128xf8E4M3FN>, tensor<4x4x256x128xf8E4M3FN>
  return %o : tensor<2x16x1x128xf16>
}
