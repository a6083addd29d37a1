// flash-lower-to-gpu's launch bound of a decode kernel (nvvm.minctasm,
// PTX's .minnctapersm): the blocks that run at once on an SM of sm_90
// (228 KiB), by their shared memory and, past Dv = 80, at most two by
// their registers (runtime/include/flashfuse/decode_splits.h's
// flashfuse_decode_blocks_per_sm). ptxas keeps 65536 / (128 x bound)
// registers a thread; a bound of three (168) spilled the 70 KB tiles at
// D = 96-128 and none at D = 80.
// RUN: flashfuse-opt %s --flash-lower-to-gpu=chip=sm_90a | FileCheck %s

// D = 32, 128 keys three deep: three blocks by their shared memory.
// CHECK-LABEL: gpu.func @flash_decode_bf16_d32_m16n128w4s3(
// CHECK-SAME: smem = {{[0-9]+}} : i64
// CHECK-SAME: nvvm.minctasm = 3 : i32
func.func @d32_n128s3(%q: tensor<2x32x1x32xbf16>, %k: tensor<2x8x256x32xbf16>, %len: tensor<2xi32>) -> tensor<2x32x1x32xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len {config = #flash.config<decode, block_m = 16, block_n = 128, warps = 4, stages = 3>}
      : tensor<2x32x1x32xbf16>, tensor<2x8x256x32xbf16>, tensor<2x8x256x32xbf16>, tensor<2xi32> -> tensor<2x32x1x32xbf16>
  return %o : tensor<2x32x1x32xbf16>
}

// D = 64, 128 keys three deep: two by their shared memory.
// CHECK-LABEL: gpu.func @flash_decode_bf16_d64_m16n128w4s3(
// CHECK-SAME: smem = {{[0-9]+}} : i64
// CHECK-SAME: nvvm.minctasm = 2 : i32
func.func @d64_n128s3(%q: tensor<2x32x1x64xbf16>, %k: tensor<2x8x256x64xbf16>, %len: tensor<2xi32>) -> tensor<2x32x1x64xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len {config = #flash.config<decode, block_m = 16, block_n = 128, warps = 4, stages = 3>}
      : tensor<2x32x1x64xbf16>, tensor<2x8x256x64xbf16>, tensor<2x8x256x64xbf16>, tensor<2xi32> -> tensor<2x32x1x64xbf16>
  return %o : tensor<2x32x1x64xbf16>
}

// D = 80, 64 keys two deep (69 KiB): three; 168 registers hold it.
// CHECK-LABEL: gpu.func @flash_decode_bf16_d80_m16n64w4s2(
// CHECK-SAME: smem = {{[0-9]+}} : i64
// CHECK-SAME: nvvm.minctasm = 3 : i32
func.func @d80_n64s2(%q: tensor<2x32x1x80xbf16>, %k: tensor<2x8x256x80xbf16>, %len: tensor<2xi32>) -> tensor<2x32x1x80xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len {config = #flash.config<decode, block_m = 16, block_n = 64, warps = 4, stages = 2>}
      : tensor<2x32x1x80xbf16>, tensor<2x8x256x80xbf16>, tensor<2x8x256x80xbf16>, tensor<2xi32> -> tensor<2x32x1x80xbf16>
  return %o : tensor<2x32x1x80xbf16>
}

// D = 96, the same 69 KiB: two, past Dv = 80.
// CHECK-LABEL: gpu.func @flash_decode_bf16_d96_m16n64w4s2(
// CHECK-SAME: smem = {{[0-9]+}} : i64
// CHECK-SAME: nvvm.minctasm = 2 : i32
func.func @d96_n64s2(%q: tensor<2x32x1x96xbf16>, %k: tensor<2x8x256x96xbf16>, %len: tensor<2xi32>) -> tensor<2x32x1x96xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len {config = #flash.config<decode, block_m = 16, block_n = 64, warps = 4, stages = 2>}
      : tensor<2x32x1x96xbf16>, tensor<2x8x256x96xbf16>, tensor<2x8x256x96xbf16>, tensor<2xi32> -> tensor<2x32x1x96xbf16>
  return %o : tensor<2x32x1x96xbf16>
}

// D = 128, 64 keys two deep: two (the tile for grids of several waves).
// CHECK-LABEL: gpu.func @flash_decode_bf16_d128_m16n64w4s2(
// CHECK-SAME: smem = {{[0-9]+}} : i64
// CHECK-SAME: nvvm.minctasm = 2 : i32
func.func @d128_n64s2(%q: tensor<2x32x1x128xbf16>, %k: tensor<2x8x256x128xbf16>, %len: tensor<2xi32>) -> tensor<2x32x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len {config = #flash.config<decode, block_m = 16, block_n = 64, warps = 4, stages = 2>}
      : tensor<2x32x1x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2xi32> -> tensor<2x32x1x128xbf16>
  return %o : tensor<2x32x1x128xbf16>
}

// D = 128, 128 keys two deep (the library's tile): one by its shared memory.
// CHECK-LABEL: gpu.func @flash_decode_bf16_d128_m16n128w4s2(
// CHECK-SAME: smem = {{[0-9]+}} : i64
// CHECK-SAME: nvvm.minctasm = 1 : i32
func.func @d128_n128s2(%q: tensor<2x32x1x128xbf16>, %k: tensor<2x8x256x128xbf16>, %len: tensor<2xi32>) -> tensor<2x32x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len {config = #flash.config<decode, block_m = 16, block_n = 128, warps = 4, stages = 2>}
      : tensor<2x32x1x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2xi32> -> tensor<2x32x1x128xbf16>
  return %o : tensor<2x32x1x128xbf16>
}
