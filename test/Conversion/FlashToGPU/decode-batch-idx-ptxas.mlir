// REQUIRES: ptxas
// The decode and kv_append kernels over a pool of sequences
// (cache_batch_idx): the 16-row (sm_80) and the swapped 8-row (sm_90a)
// decode tiles, with new rows (decode-batch-idx-fp8-ptxas.mlir: an FP8
// pool). Each assembles without spills
// for sm_80 and sm_90a, is named `_bidx`, has the manifest key
// `batch_idx 1` and takes cache_batch_idx and cache_batch last.
//
// RUN: rm -rf %t && mkdir -p %t && flashfuse-compile %s --target=a100 -o %t/a100 > %t/a100.log
// RUN: FileCheck %s --check-prefix=NOSPILL < %t/a100.log
// RUN: FileCheck %s --check-prefix=A100 < %t/a100.log
// RUN: flashfuse-compile %s --target=h100 -o %t/h100 > %t/h100.log
// RUN: FileCheck %s --check-prefix=NOSPILL < %t/h100.log
// RUN: FileCheck %s --check-prefix=H100 < %t/h100.log
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
//
// NOSPILL-NOT: {{[1-9][0-9]*/[0-9]+}} bytes spill
// A100-DAG: ptxas sm_80 flash_decode_bf16_d128_{{.*}}_bidx: {{.*}}, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_kv_append_bf16_d128_{{.*}}_bidx: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_bf16_d128_m8{{.*}}_bidx: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_kv_append_bf16_d128_{{.*}}_bidx: {{.*}}, 0/0 bytes spill stores/loads
//
// MANIFEST-LABEL: kernel flash_decode_bf16_d128_{{.*}}_bidx
// MANIFEST: batch_idx 1
// MANIFEST: params {{.*}} memref:cache_batch_idx i32:cache_batch{{$}}
// MANIFEST-LABEL: kernel flash_kv_append_bf16_d128_{{.*}}_bidx
// MANIFEST: batch_idx 1
// MANIFEST: params {{.*}} memref:cache_batch_idx i32:cache_batch{{$}}

func.func @pool(%q: tensor<2x32x1x128xbf16>, %k: tensor<6x8x256x128xbf16>, %len: tensor<2xi32>,
                %idx: tensor<2xi32>, %kn: tensor<2x8x1x128xbf16>) -> tensor<2x32x1x128xbf16> {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %k, %len cache_batch_idx(%idx : tensor<2xi32>)
      new_kv(%kn, %kn : tensor<2x8x1x128xbf16>, tensor<2x8x1x128xbf16>)
      {causal = #flash.causal<bottom_right>}
      : tensor<2x32x1x128xbf16>, tensor<6x8x256x128xbf16>, tensor<6x8x256x128xbf16>, tensor<2xi32>
      -> tensor<2x32x1x128xbf16>, tensor<6x8x256x128xbf16>, tensor<6x8x256x128xbf16>
  return %o : tensor<2x32x1x128xbf16>
}
