// flash.attention_kvcache lowers to the split-KV decode kernel and, where
// the config splits the keys, the combine kernel after it, over buffers the
// host code allocates for the splits' partial results (docs/KVCACHE.md,
// docs/KERNEL_ABI.md "Decode"). The combine kernel is built even where one
// split needs none, so that the artifact serves other sizes.
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a | FileCheck %s

// B = 4 over a 64k cache: 4 splits (decode_splits.h), so the host allocates
// 4 x B x Hq x Sq rows of partial O (Dv f32 each) and LSE, launches
// 4 x 1 x Hkv x B decode blocks, then ceil(B x Hq x Sq / 4) combine blocks.
// G = 4 packed rows: a block of 8 (the rows as the products' n).
// CHECK-LABEL: func.func @contiguous
// CHECK: memref.alloc({{.*}}) : memref<?xf32>
// CHECK: memref.alloc({{.*}}) : memref<?xf32>
// CHECK: gpu.launch_func @flash_kernels::@flash_decode_bf16_d128_m8n128w4s2_causalbr
// CHECK: gpu.launch_func @flash_kernels::@flash_decode_combine_bf16_d128_m4n0w4s0
func.func @contiguous(%q: tensor<4x32x1x128xbf16>, %k: tensor<4x8x65536x128xbf16>,
                      %len: tensor<4xi32>) -> (tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>) {
  %o, %lse = flash.attention_kvcache %q, %k, %k, %len {causal = #flash.causal<bottom_right>}
      : tensor<4x32x1x128xbf16>, tensor<4x8x65536x128xbf16>, tensor<4x8x65536x128xbf16>, tensor<4xi32>
      -> tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>
  return %o, %lse : tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>
}

// One split: no combine launch.
// CHECK-LABEL: func.func @paged
// CHECK: gpu.launch_func @flash_kernels::@flash_decode_f16_d64_m16n128w4s3_page16
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @paged(%q: tensor<64x8x1x64xf16>, %k: tensor<1024x16x8x64xf16>,
                 %len: tensor<64xi32>, %bt: tensor<64x16xi32>) -> tensor<64x8x1x64xf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<64x16xi32>)
      : tensor<64x8x1x64xf16>, tensor<1024x16x8x64xf16>, tensor<1024x16x8x64xf16>, tensor<64xi32>
      -> tensor<64x8x1x64xf16>
  return %o : tensor<64x8x1x64xf16>
}

// CHECK: gpu.module @flash_kernels
// CHECK: gpu.func @flash_decode_bf16_d128_m8n128w4s2_causalbr(
// CHECK-SAME: flash.manifest = {{{.*}}kind = "decode"{{.*}}page_size = 0
// CHECK: gpu.func @flash_decode_combine_bf16_d128_m4n0w4s0(
// CHECK-SAME: kind = "decode_combine"
// CHECK: gpu.func @flash_decode_f16_d64_m16n128w4s3_page16(
// CHECK-SAME: page_size = 16
// The pages under a block's rows are looked up once for its K and V
// copies (docs/PERF.md run 259): 8 pages of 16 rows a 128-key block, at
// three copy sites (the 3-stage ring's two prologue blocks and the key
// loop's), each in its checked and unchecked form, so 48 loads of the page
// table (%arg9), where K and V looking their pages up apart made 96.
// CHECK-COUNT-48: memref.load %arg9[
// CHECK-NOT: memref.load %arg9[
// CHECK: gpu.return
// CHECK: gpu.func @flash_decode_combine_f16_d64_m4n0w4s0(
