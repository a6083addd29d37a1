// REQUIRES: ptxas
// The decode kernels of flash.attention_kvcache assemble without spills for
// sm_80 and sm_90a: 16 packed rows (G = 16; at 8 or fewer sm_90 takes
// block_m 8, decode-swapped-ptxas.mlir) with the four warps splitting each
// 128-key block, contiguous and paged caches (page by page at D = 128),
// causal, window, softcap, and
// D = 256 at 64 rows of 32 keys; each variant with its combine kernel. They
// run the sm80 engine's mma.sync and stream K/V with cp.async.
//
// RUN: rm -rf %t && flashfuse-compile %s --target=a100 -o %t/a100 | FileCheck %s --check-prefix=A100
// RUN: flashfuse-compile %s --target=h100 -o %t/h100 | FileCheck %s --check-prefix=H100
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
// RUN: grep -c "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" %t/h100/kernels.ptx | FileCheck %s --check-prefix=NONZERO
// RUN: grep -c "cp.async.cg.shared.global" %t/h100/kernels.ptx | FileCheck %s --check-prefix=NONZERO
//
// A100-COUNT-6: ptxas sm_80 flash_decode_{{.*}}, 0/0 bytes spill stores/loads
// A100: wrote
// H100-DAG: ptxas sm_90a flash_decode_bf16_d128_m16n128w4s2_causalbr: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_bf16_d128_m16n128w4s2_causalbr_page16: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_bf16_d128_m16n128w4s2_causalbr_window_softcap_page64: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_bf16_d256_m64n32w4s3_page16: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_combine_bf16_d128_m4n0w4s0: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_combine_bf16_d256_m4n0w4s0: {{.*}}, 0/0 bytes spill stores/loads
// Each decode kernel's kv_append and decode_check (KERNEL_ABI.md "Decode"):
// 16-byte copies (ld/st.global.v4) and a shared-memory 64-bit atomic min.
// H100-DAG: ptxas sm_90a flash_kv_append_bf16_d128_m4n0w4s0: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_kv_append_bf16_d128_m4n0w4s0_page16: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_kv_append_bf16_d256_m4n0w4s0_page16: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_check_bf16_d128_m256n0w8s0_page64: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_decode_check_bf16_d128_m256n0w8s0: {{.*}}, 0/0 bytes spill stores/loads
// RUN: grep -c "st.global.v4.b32" %t/h100/kernels.ptx | FileCheck %s --check-prefix=NONZERO
// RUN: grep -c "atom.shared.min.s64" %t/h100/kernels.ptx | FileCheck %s --check-prefix=NONZERO
// The decode's last split of a row group counts itself in behind a
// GPU-scope fence with a global atomic increment that wraps at
// num_splits - 1 (the group's last count leaves the counter at 0 for the
// next launch), then merges the group's rows.
// RUN: grep -c "atom.global.inc.u32" %t/h100/kernels.ptx | FileCheck %s --check-prefix=NONZERO
// RUN: not grep "atom.global.add.u32" %t/h100/kernels.ptx
// RUN: grep -c "membar.gl" %t/h100/kernels.ptx | FileCheck %s --check-prefix=NONZERO
// On sm_90 a launch in clusters of num_splits blocks merges the splits
// over distributed shared memory instead (merge_splits 2): a cluster
// barrier publishes each block's partial rows, the blocks read each
// other's through mapa, and a second barrier keeps them alive until read.
// sm_80 has no clusters: its kernels neither do it nor say they can.
// RUN: grep -c "barrier.cluster.arrive.aligned" %t/h100/kernels.ptx | FileCheck %s --check-prefix=NONZERO
// RUN: grep -c "barrier.cluster.wait.aligned" %t/h100/kernels.ptx | FileCheck %s --check-prefix=NONZERO
// RUN: grep -c "mapa.shared::cluster" %t/h100/kernels.ptx | FileCheck %s --check-prefix=NONZERO
// RUN: grep -c "ld.shared::cluster.v4" %t/h100/kernels.ptx | FileCheck %s --check-prefix=NONZERO
// RUN: not grep "cluster" %t/a100/kernels.ptx %t/a100/manifest.txt
//
// MANIFEST-LABEL: kernel flash_decode_bf16_d128_m16n128w4s2_causalbr_page16
// MANIFEST: kind decode
// MANIFEST: causal bottom_right
// MANIFEST: page_size 16
// MANIFEST: cluster_merge 8
// MANIFEST: params memref:q memref:k memref:v memref:o memref:lse memref:o_partial memref:lse_partial memref:split_arrivals memref:cache_seqlens memref:block_table {{.*}} i32:num_pages i64:block_table_stride i32:num_splits i32:merge_splits
// MANIFEST-LABEL: kernel flash_kv_append_bf16_d128_m4n0w4s0_page16
// MANIFEST: kind kv_append
// MANIFEST: block_n 0
// MANIFEST: page_size 16
// MANIFEST: params memref:k memref:v memref:k_new memref:v_new memref:cache_seqlens memref:block_table
// MANIFEST-LABEL: kernel flash_decode_check_bf16_d128_m256n0w8s0_page16
// MANIFEST: kind decode_check
// MANIFEST: threads 256
// MANIFEST: page_size 16
// MANIFEST: params memref:cache_seqlens memref:block_table memref:check_status
// NONZERO: {{^[1-9][0-9]*$}}

func.func @contiguous(%q: tensor<2x128x1x128xbf16>, %k: tensor<2x8x256x128xbf16>, %len: tensor<2xi32>) -> tensor<2x128x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len {causal = #flash.causal<bottom_right>}
      : tensor<2x128x1x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2xi32> -> tensor<2x128x1x128xbf16>
  return %o : tensor<2x128x1x128xbf16>
}

func.func @paged(%q: tensor<2x128x1x128xbf16>, %k: tensor<40x16x8x128xbf16>, %len: tensor<2xi32>, %bt: tensor<2x16xi32>) -> tensor<2x128x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<2x16xi32>) {causal = #flash.causal<bottom_right>}
      : tensor<2x128x1x128xbf16>, tensor<40x16x8x128xbf16>, tensor<40x16x8x128xbf16>, tensor<2xi32> -> tensor<2x128x1x128xbf16>
  return %o : tensor<2x128x1x128xbf16>
}

func.func @window_softcap(%q: tensor<2x128x1x128xbf16>, %k: tensor<10x64x8x128xbf16>, %len: tensor<2xi32>, %bt: tensor<2x4xi32>) -> tensor<2x128x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<2x4xi32>) {causal = #flash.causal<bottom_right>, window_left = 64 : i64, window_right = 0 : i64, softcap = 30.0 : f32}
      : tensor<2x128x1x128xbf16>, tensor<10x64x8x128xbf16>, tensor<10x64x8x128xbf16>, tensor<2xi32> -> tensor<2x128x1x128xbf16>
  return %o : tensor<2x128x1x128xbf16>
}

func.func @d256(%q: tensor<2x8x1x256xbf16>, %k: tensor<40x16x8x256xbf16>, %len: tensor<2xi32>, %bt: tensor<2x16xi32>) -> tensor<2x8x1x256xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<2x16xi32>)
      : tensor<2x8x1x256xbf16>, tensor<40x16x8x256xbf16>, tensor<40x16x8x256xbf16>, tensor<2xi32> -> tensor<2x8x1x256xbf16>
  return %o : tensor<2x8x1x256xbf16>
}
