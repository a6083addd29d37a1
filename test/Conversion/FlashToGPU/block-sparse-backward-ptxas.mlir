// REQUIRES: ptxas
// The block-sparse backward kernels (BlockSparseQueryIterator.h over the
// sm80 backward engine on sm_80 (A100) and the sm90 one on sm_90a (H100),
// and the backward_sparse_transpose kernel) assemble without spilling
// (flashfuse-compile fails on a spill): D = 64 and 128, partial lists only
// and partial + full lists, lists broadcast over batch and heads, causal,
// GQA, and a mask_mod (the variant where full blocks skip the element
// masks). The main kernel reads its key block's row of the transposed
// lists once, saves it in shared memory, and each step's fetch records
// its query block in the stage's slot, read back where the step needs it:
// read from the lists at each use, the sm90 D = 128 kernels spilled 36-92
// bytes at 255 registers.
//
// RUN: rm -rf %t && flashfuse-compile %s --target=a100 -o %t/a100 | FileCheck %s --check-prefix=A100
// RUN: flashfuse-compile %s --target=h100 --recipe=sm90 -o %t/h100 | FileCheck %s --check-prefix=H100
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
// Deterministic: the dQ kernels (the forward's key-block iterator over the
// dQ engine) and the main kernels without the dQ product spill nothing.
// RUN: flashfuse-compile %s --target=h100 --deterministic -o %t/h100-det | FileCheck %s --check-prefix=DET
//
// DET-COUNT-6: ptxas sm_90a flash_bwd_dq_sm90_{{.*}}_det_bs{{.*}}: {{.*}}, 0/0 bytes spill stores/loads
//
// Five transpose kernels: the mask_mod op's is the full-list bf16 D = 128
// one (the transposition reads no region).
// A100-COUNT-5: ptxas sm_80 flash_bwd_bs_transpose_sm80_{{.*}}: {{.*}}, 0/0 bytes spill stores/loads
// A100-COUNT-6: ptxas sm_80 flash_bwd_sm80_{{.*}}_bs{{.*}}: {{.*}}, 0/0 bytes spill stores/loads
// H100-COUNT-5: ptxas sm_90a flash_bwd_bs_transpose_sm90_{{.*}}: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm90_bf16_d128_m64n128w8s2_causal_bs128x128: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm90_bf16_d128_m64n128w8s2_bs128x128f: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm90_f16_d128_m64n128w8s2_bs128x128: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm90_bf16_d128_m64n128w8s2_causal_bs128x128f: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm90_f16_d64_m128n128w8s2_bs128x128f: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm90_bf16_d128_m64n128w8s2_bs128x128f_mod0: {{.*}}, 0/0 bytes spill stores/loads
//
// MANIFEST-LABEL: kernel flash_bwd_sm90_bf16_d128_{{.*}}_bs128x128f
// MANIFEST: kind backward
// MANIFEST: block_sparse 2
// MANIFEST-NEXT: sparse_block_q 128
// MANIFEST-NEXT: sparse_block_k 128
// MANIFEST-NEXT: params {{.*}} i64:seed memref:q_num_blocks memref:q_indices i64:q_num_blocks_stride_b i64:q_num_blocks_stride_h i64:q_indices_stride_b i64:q_indices_stride_h i32:q_slots memref:full_q_num_blocks {{.*}} i32:full_q_slots{{$}}
// MANIFEST-LABEL: kernel flash_bwd_bs_transpose_sm90_bf16_d128_{{.*}}_bs128x128f
// MANIFEST: kind backward_sparse_transpose
// MANIFEST: threads 128
// MANIFEST: smem 0
// MANIFEST: block_sparse 2
// MANIFEST-NEXT: sparse_block_q 128
// MANIFEST-NEXT: sparse_block_k 128
// MANIFEST-NEXT: params memref:kv_num_blocks memref:kv_indices {{.*}} i32:full_kv_slots memref:q_num_blocks {{.*}} i32:full_q_slots i32:batch i32:heads_q i32:seq_q i32:seq_k{{$}}

func.func @bf16_d128_full(%t: tensor<2x8x1000x128xbf16>, %lse: tensor<2x8x1000xf32>, %n: tensor<2x8x8xi32>, %i: tensor<2x8x8x8xi32>, %fn: tensor<2x8x8xi32>, %fi: tensor<2x8x8x8xi32>) -> tensor<2x8x1000x128xbf16> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<2x8x8xi32>, tensor<2x8x8x8xi32>)
      full_blocks(%fn, %fi : tensor<2x8x8xi32>, tensor<2x8x8x8xi32>)
      : tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>,
        tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>
      -> tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>
  return %dq : tensor<2x8x1000x128xbf16>
}
func.func @f16_d128_partial_broadcast(%t: tensor<2x8x1024x128xf16>, %lse: tensor<2x8x1024xf32>, %n: tensor<1x1x8xi32>, %i: tensor<1x1x8x8xi32>) -> tensor<2x8x1024x128xf16> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>)
      : tensor<2x8x1024x128xf16>, tensor<2x8x1024x128xf16>, tensor<2x8x1024x128xf16>,
        tensor<2x8x1024x128xf16>, tensor<2x8x1024x128xf16>, tensor<2x8x1024xf32>
      -> tensor<2x8x1024x128xf16>, tensor<2x8x1024x128xf16>, tensor<2x8x1024x128xf16>
  return %dq : tensor<2x8x1024x128xf16>
}
func.func @bf16_d128_causal_gqa_full(%q: tensor<1x8x1024x128xbf16>, %k: tensor<1x2x1024x128xbf16>, %lse: tensor<1x8x1024xf32>, %n: tensor<1x8x8xi32>, %i: tensor<1x8x8x8xi32>, %fn: tensor<1x8x8xi32>, %fi: tensor<1x8x8x8xi32>) -> tensor<1x8x1024x128xbf16> {
  %dq, %dk, %dv = flash.attention_grad %q, %q, %k, %k, %q, %lse
      block_sparse(%n, %i : tensor<1x8x8xi32>, tensor<1x8x8x8xi32>)
      full_blocks(%fn, %fi : tensor<1x8x8xi32>, tensor<1x8x8x8xi32>)
      {causal = #flash.causal<top_left>}
      : tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>, tensor<1x2x1024x128xbf16>,
        tensor<1x2x1024x128xbf16>, tensor<1x8x1024x128xbf16>, tensor<1x8x1024xf32>
      -> tensor<1x8x1024x128xbf16>, tensor<1x2x1024x128xbf16>, tensor<1x2x1024x128xbf16>
  return %dq : tensor<1x8x1024x128xbf16>
}
func.func @bf16_d128_causal_partial(%t: tensor<1x8x1024x128xbf16>, %lse: tensor<1x8x1024xf32>, %n: tensor<1x1x8xi32>, %i: tensor<1x1x8x8xi32>) -> tensor<1x8x1024x128xbf16> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>)
      {causal = #flash.causal<top_left>}
      : tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>,
        tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>, tensor<1x8x1024xf32>
      -> tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>
  return %dq : tensor<1x8x1024x128xbf16>
}
func.func @f16_d64_full(%t: tensor<2x4x777x64xf16>, %lse: tensor<2x4x777xf32>, %n: tensor<2x1x7xi32>, %i: tensor<2x1x7x7xi32>, %fn: tensor<2x1x7xi32>, %fi: tensor<2x1x7x7xi32>) -> tensor<2x4x777x64xf16> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<2x1x7xi32>, tensor<2x1x7x7xi32>)
      full_blocks(%fn, %fi : tensor<2x1x7xi32>, tensor<2x1x7x7xi32>)
      : tensor<2x4x777x64xf16>, tensor<2x4x777x64xf16>, tensor<2x4x777x64xf16>,
        tensor<2x4x777x64xf16>, tensor<2x4x777x64xf16>, tensor<2x4x777xf32>
      -> tensor<2x4x777x64xf16>, tensor<2x4x777x64xf16>, tensor<2x4x777x64xf16>
  return %dq : tensor<2x4x777x64xf16>
}
func.func @bf16_d128_mask_mod_full(%t: tensor<1x4x1024x128xbf16>, %lse: tensor<1x4x1024xf32>, %n: tensor<1x1x8xi32>, %i: tensor<1x1x8x8xi32>, %fn: tensor<1x1x8xi32>, %fi: tensor<1x1x8x8xi32>) -> tensor<1x4x1024x128xbf16> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>)
      full_blocks(%fn, %fi : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>)
      : tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>,
        tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024xf32>
      -> tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %kj: index):
        %c = arith.constant 256 : index
        %qd = arith.divui %qi, %c : index
        %kd = arith.divui %kj, %c : index
        %same = arith.cmpi eq, %qd, %kd : index
        flash.yield %same : i1
      }
  return %dq : tensor<1x4x1024x128xbf16>
}
