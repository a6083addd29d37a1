// REQUIRES: ptxas
// Dropout over a packed (varlen) batch (FlashOps.td: the keep test draws at
// (sequence, h, local row, local key)): the varlen schedulers give the
// engines the block's sequence as its batch index and sequence-local rows,
// which is what the dense kernels' Philox octets draw at, so the forward
// and the backward are the dense dropout kernels under the scheduler, with
// the dense kernels' dropout_p and seed params. sm90ws serves no dropout:
// h100 takes the sm90 recipe. The forwards assemble without spilling; the
// sm90 D = 128 backward spills (136 bytes of stack; the dense dropout
// backward 152), so --allow-spills, as the package's on-demand variants are
// built.
//
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --allow-spills -o %t/h100 | FileCheck %s --check-prefix=H100
// RUN: flashfuse-compile %s --target=a100 --allow-spills -o %t/a100 | FileCheck %s --check-prefix=A100
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
//
// H100-DAG: ptxas sm_90a flash_fwd_sm90_bf16_d128_m128n128w8s3_causalbr_dropout_varlen: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm90_bf16_d128_m64n128w8s2_causalbr_dropout_varlen:
// H100-DAG: ptxas sm_90a flash_fwd_sm90_f16_d64_{{.*}}_dropout_varlen: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm90_f16_d64_{{.*}}_dropout_varlen: {{.*}}, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_fwd_sm80_bf16_d128_{{.*}}_causalbr_dropout_varlen: {{.*}}, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d128_{{.*}}_causalbr_dropout_varlen: {{.*}}, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_sm80_f16_d64_{{.*}}_dropout_varlen: {{.*}}, 0/0 bytes spill stores/loads
//
// MANIFEST-LABEL: kernel flash_fwd_sm90_bf16_d128_m128n128w8s3_causalbr_dropout_varlen
// MANIFEST: kind forward
// MANIFEST: dropout 1
// MANIFEST-NEXT: varlen 1
// MANIFEST-NEXT: params {{.*}}memref:cu_seqlens_q memref:cu_seqlens_k {{.*}}i32:num_seqs i32:max_seqlen_q {{.*}} f32:dropout_p i64:seed
// MANIFEST-LABEL: kernel flash_bwd_sm90_bf16_d128_m64n128w8s2_causalbr_dropout_varlen
// MANIFEST: kind backward
// MANIFEST: dropout 1
// MANIFEST-NEXT: varlen 1
// MANIFEST-NEXT: params {{.*}}memref:cu_seqlens_q memref:cu_seqlens_k {{.*}}i32:num_seqs i32:max_seqlen_k {{.*}} f32:dropout_p i64:seed

func.func @grad_bf16(%do: tensor<1x16x?x128xbf16>, %q: tensor<1x16x?x128xbf16>,
                     %k: tensor<1x4x?x128xbf16>, %v: tensor<1x4x?x128xbf16>,
                     %o: tensor<1x16x?x128xbf16>, %lse: tensor<1x16x?xf32>,
                     %s: i64, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> (tensor<1x16x?x128xbf16>, tensor<1x4x?x128xbf16>, tensor<1x4x?x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse seed(%s)
      varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>)
      {causal = #flash.causal<bottom_right>, dropout_p = 0.1 : f32}
      : tensor<1x16x?x128xbf16>, tensor<1x16x?x128xbf16>, tensor<1x4x?x128xbf16>,
        tensor<1x4x?x128xbf16>, tensor<1x16x?x128xbf16>, tensor<1x16x?xf32>
      -> tensor<1x16x?x128xbf16>, tensor<1x4x?x128xbf16>, tensor<1x4x?x128xbf16>
  return %dq, %dk, %dv : tensor<1x16x?x128xbf16>, tensor<1x4x?x128xbf16>, tensor<1x4x?x128xbf16>
}

func.func @fwd_bf16(%q: tensor<1x16x?x128xbf16>, %k: tensor<1x4x?x128xbf16>,
                    %v: tensor<1x4x?x128xbf16>, %s: i64, %cu_q: tensor<?xi32>,
                    %cu_k: tensor<?xi32>)
    -> (tensor<1x16x?x128xbf16>, tensor<1x16x?xf32>) {
  %o, %lse = flash.attention %q, %k, %v seed(%s)
      varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>)
      {causal = #flash.causal<bottom_right>, dropout_p = 0.1 : f32}
      : tensor<1x16x?x128xbf16>, tensor<1x4x?x128xbf16>, tensor<1x4x?x128xbf16>
      -> tensor<1x16x?x128xbf16>, tensor<1x16x?xf32>
  return %o, %lse : tensor<1x16x?x128xbf16>, tensor<1x16x?xf32>
}

func.func @grad_f16(%do: tensor<1x8x?x64xf16>, %q: tensor<1x8x?x64xf16>,
                    %k: tensor<1x8x?x64xf16>, %v: tensor<1x8x?x64xf16>,
                    %o: tensor<1x8x?x64xf16>, %lse: tensor<1x8x?xf32>,
                    %s: i64, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> (tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse seed(%s)
      varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {dropout_p = 0.25 : f32}
      : tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>,
        tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?xf32>
      -> tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>
  return %dq, %dk, %dv : tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>
}

func.func @fwd_f16(%q: tensor<1x8x?x64xf16>, %k: tensor<1x8x?x64xf16>,
                   %v: tensor<1x8x?x64xf16>, %s: i64, %cu_q: tensor<?xi32>,
                   %cu_k: tensor<?xi32>)
    -> (tensor<1x8x?x64xf16>, tensor<1x8x?xf32>) {
  %o, %lse = flash.attention %q, %k, %v seed(%s)
      varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {dropout_p = 0.25 : f32}
      : tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>
      -> tensor<1x8x?x64xf16>, tensor<1x8x?xf32>
  return %o, %lse : tensor<1x8x?x64xf16>, tensor<1x8x?xf32>
}
