// REQUIRES: ptxas
// The decode tiles the package takes for grids of several waves
// (gen_suite.py --decode-waves, docs/KVCACHE.md): 16 packed rows, 64-key
// blocks two deep on four warps that split each block's keys, 69 KiB of
// shared memory. Three such blocks would fit an SM of sm_90 (228 KiB), but
// at D = 128 their registers allow two (decode_splits.h's
// flashfuse_decode_blocks_per_sm): the launch bound says two, and they
// assemble without spills, contiguous and paged (at three, ptxas capped
// them at 168 registers and spilled 40-52 bytes).
//
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 -o %t/h100 | FileCheck %s
//
// CHECK-DAG: kernel flash_decode_bf16_d128_m16n64w4s2_causalbr (smem 70656 bytes)
// CHECK-DAG: ptxas sm_90a flash_decode_bf16_d128_m16n64w4s2_causalbr: {{.*}}, 0/0 bytes spill stores/loads
// CHECK-DAG: ptxas sm_90a flash_decode_bf16_d128_m16n64w4s2_causalbr_page16: {{.*}}, 0/0 bytes spill stores/loads
// CHECK: wrote
//
// RUN: FileCheck %s --check-prefix=BOUND < %t/h100/kernels.ptx
// BOUND: .entry flash_decode_bf16_d128_m16n64w4s2_causalbr(
// BOUND-NOT: .entry
// BOUND: .minnctapersm 2
// BOUND: .entry flash_decode_bf16_d128_m16n64w4s2_causalbr_page16(
// BOUND-NOT: .entry
// BOUND: .minnctapersm 2

func.func @contiguous(%q: tensor<2x32x1x128xbf16>, %k: tensor<2x8x256x128xbf16>, %len: tensor<2xi32>) -> tensor<2x32x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len {causal = #flash.causal<bottom_right>, config = #flash.config<decode, block_m = 16, block_n = 64, warps = 4, stages = 2>}
      : tensor<2x32x1x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2xi32> -> tensor<2x32x1x128xbf16>
  return %o : tensor<2x32x1x128xbf16>
}

func.func @paged(%q: tensor<2x32x1x128xbf16>, %k: tensor<40x16x8x128xbf16>, %len: tensor<2xi32>, %bt: tensor<2x16xi32>) -> tensor<2x32x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<2x16xi32>) {causal = #flash.causal<bottom_right>, config = #flash.config<decode, block_m = 16, block_n = 64, warps = 4, stages = 2>}
      : tensor<2x32x1x128xbf16>, tensor<40x16x8x128xbf16>, tensor<40x16x8x128xbf16>, tensor<2xi32> -> tensor<2x32x1x128xbf16>
  return %o : tensor<2x32x1x128xbf16>
}
