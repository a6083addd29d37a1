// REQUIRES: ptxas
// The block-sparse forward kernels (BlockSparseIterator.h over the sm80 and
// sm90 engines) assemble without spilling (flashfuse-compile fails on a
// spill) on sm_80 (A100) and sm_90a (H100, the sm90 recipe where it
// applies, and the sm80 recipe forced): D = 64 and 128, partial lists only
// and partial + full lists, lists broadcast over batch and heads, causal,
// and a mask_mod (the variant where full blocks skip the element masks).
// The iterator reads its query block's row of the lists again inside the
// key loop, from coordinates read opaquely, rather than keep it in
// registers (kept, the sm80 engine's D = 128 kernels spilled 8-108 bytes).
// The sm80 recipe forced on sm_90a at D = 128 with full lists (128 x 64
// tiles, at 254-255 registers in the dense kernel too) still spills 4-8
// bytes; those two are checked as they are (--allow-spills), the rest
// spill-free.
//
// RUN: rm -rf %t && flashfuse-compile %s --target=a100 -o %t/a100 | FileCheck %s --check-prefix=A100
// RUN: flashfuse-compile %s --target=h100 -o %t/h100 | FileCheck %s --check-prefix=H100
// RUN: flashfuse-compile %s --target=h100 --recipe=sm80 --allow-spills -o %t/h100-sm80 | FileCheck %s --check-prefix=SM80ON90
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
//
// A100-COUNT-5: ptxas sm_80 flash_fwd_sm80_{{.*}}_bs{{.*}}: {{.*}}, 0/0 bytes spill stores/loads
// The mask_mod op takes the sm90ws forward (flashfuse-compile's default for
// ops with regions on sm_90).
// H100-COUNT-5: ptxas sm_90a flash_fwd_sm{{[89]}}0{{(ws)?}}_{{.*}}_bs{{.*}}: {{.*}}, 0/0 bytes spill stores/loads
// H100-NOT: ptxas
// H100: kernel flash_fwd_sm90ws_bf16_d128_m128n128w8s3_bs128x128f_mod0
// H100: kernel flash_fwd_sm90_bf16_d128_m128n128w8s3_bs128x128f
// SM80ON90-DAG: ptxas sm_90a flash_fwd_sm80_bf16_d128_m128n32w4s2_bs128x128f_mod0: {{.*}}, 0/0 bytes spill stores/loads
// SM80ON90-DAG: ptxas sm_90a flash_fwd_sm80_f16_d64_m128n64w4s2_bs128x128f: {{.*}}, 0/0 bytes spill stores/loads
// SM80ON90-DAG: ptxas sm_90a flash_fwd_sm80_f16_d128_m128n64w4s2_bs128x128: {{.*}}, 0/0 bytes spill stores/loads
// SM80ON90-DAG: ptxas sm_90a flash_fwd_sm80_bf16_d128_m128n64w4s2_causal_bs128x128f: {{.*}}, 8/8 bytes spill stores/loads
// SM80ON90-DAG: ptxas sm_90a flash_fwd_sm80_bf16_d128_m128n64w4s2_bs128x128f: {{.*}}, 4/4 bytes spill stores/loads
//
// MANIFEST-LABEL: kernel flash_fwd_sm90_bf16_d128_m128n128w8s3_bs128x128f
// MANIFEST: kind forward
// MANIFEST: dropout 0
// MANIFEST-NEXT: block_sparse 2
// MANIFEST-NEXT: sparse_block_q 128
// MANIFEST-NEXT: sparse_block_k 128
// MANIFEST-NEXT: params memref:q memref:k memref:v memref:o memref:lse i32:batch {{.*}} i64:seed memref:kv_num_blocks memref:kv_indices i64:kv_num_blocks_stride_b i64:kv_num_blocks_stride_h i64:kv_indices_stride_b i64:kv_indices_stride_h i32:kv_slots memref:full_kv_num_blocks memref:full_kv_indices i64:full_kv_num_blocks_stride_b i64:full_kv_num_blocks_stride_h i64:full_kv_indices_stride_b i64:full_kv_indices_stride_h i32:full_kv_slots

func.func @bf16_d128_full(%q: tensor<2x8x1000x128xbf16>, %n: tensor<2x8x8xi32>, %i: tensor<2x8x8x8xi32>, %fn: tensor<2x8x8xi32>, %fi: tensor<2x8x8x8xi32>) -> tensor<2x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<2x8x8xi32>, tensor<2x8x8x8xi32>) full_blocks(%fn, %fi : tensor<2x8x8xi32>, tensor<2x8x8x8xi32>) : tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16> -> tensor<2x8x1000x128xbf16>
  return %o : tensor<2x8x1000x128xbf16>
}
func.func @f16_d128_partial_broadcast(%q: tensor<2x8x1024x128xf16>, %n: tensor<1x1x8xi32>, %i: tensor<1x1x8x8xi32>) -> tensor<2x8x1024x128xf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>) : tensor<2x8x1024x128xf16>, tensor<2x8x1024x128xf16>, tensor<2x8x1024x128xf16> -> tensor<2x8x1024x128xf16>
  return %o : tensor<2x8x1024x128xf16>
}
func.func @bf16_d128_causal_full(%q: tensor<1x8x1024x128xbf16>, %n: tensor<1x8x8xi32>, %i: tensor<1x8x8x8xi32>, %fn: tensor<1x8x8xi32>, %fi: tensor<1x8x8x8xi32>) -> tensor<1x8x1024x128xbf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x8x8xi32>, tensor<1x8x8x8xi32>) full_blocks(%fn, %fi : tensor<1x8x8xi32>, tensor<1x8x8x8xi32>) {causal = #flash.causal<top_left>} : tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16> -> tensor<1x8x1024x128xbf16>
  return %o : tensor<1x8x1024x128xbf16>
}
func.func @f16_d64_full(%q: tensor<2x4x777x64xf16>, %n: tensor<2x1x7xi32>, %i: tensor<2x1x7x7xi32>, %fn: tensor<2x1x7xi32>, %fi: tensor<2x1x7x7xi32>) -> tensor<2x4x777x64xf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<2x1x7xi32>, tensor<2x1x7x7xi32>) full_blocks(%fn, %fi : tensor<2x1x7xi32>, tensor<2x1x7x7xi32>) : tensor<2x4x777x64xf16>, tensor<2x4x777x64xf16>, tensor<2x4x777x64xf16> -> tensor<2x4x777x64xf16>
  return %o : tensor<2x4x777x64xf16>
}
// Documents of 256 tokens as a mask_mod: partial blocks evaluate it, full
// blocks skip it.
func.func @bf16_d128_mask_mod_full(%q: tensor<1x8x1024x128xbf16>, %n: tensor<1x1x8xi32>, %i: tensor<1x1x8x8xi32>, %fn: tensor<1x1x8xi32>, %fi: tensor<1x1x8x8xi32>) -> tensor<1x8x1024x128xbf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>) full_blocks(%fn, %fi : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>) : tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16> -> tensor<1x8x1024x128xbf16> mask_mod {
  ^bb0(%b: index, %h: index, %qi: index, %kj: index):
    %c = arith.constant 256 : index
    %qd = arith.divui %qi, %c : index
    %kd = arith.divui %kj, %c : index
    %same = arith.cmpi eq, %qd, %kd : index
    flash.yield %same : i1
  }
  return %o : tensor<1x8x1024x128xbf16>
}
