// RUN: flashfuse-opt %s --flash-lower-to-gpu="chip=sm_90a kernels-only=true" | FileCheck %s

// FP8 key blocks whose Vᵀ rows are whole 32-byte swizzle rows only (160
// and 224 keys: KernelSpec::tmaSwizzleBytes). The producer loads Vᵀ in
// boxes of 32 keys by Dv rows through maps of the 32-byte swizzle (five
// and seven a stage), K in one box of block_n rows of the 128-byte one (of
// the 64-byte one at D = 64); P·V's descriptors say swizzle mode 3 (bits
// 62-63) with 8-row groups 256 bytes apart (bits 32-45): 0xC000001000010000,
// with the leading offset 1 (bits 16-29), is -4611685949707845632 as an
// i64; each of its k-steps (32 keys) is the next box, Dv * 32 bytes on.

// CHECK-LABEL: gpu.func @flash_fwd_sm90ws_e4m3_bf16_d128_m128n224w8s2(
// CHECK: nvgpu.tma.async.load {{.*}} : <tensor = memref<1x1x224x128xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK-COUNT-7: nvgpu.tma.async.load {{.*}} : <tensor = memref<1x1x128x32xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_32b
// CHECK-NOT: swizzle_32b
// CHECK: nvgpu.tma.async.load {{.*}} : <tensor = memref<1x1x128x128xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n224k32.f32.e4m3.e4m3
// CHECK: arith.constant -4611685949707845632 : i64
// CHECK-COUNT-7: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{.*}}, {$128, $129, $130, $131}, $132, p, 1, 1;
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
func.func @fp8_d128_n224(%q: tensor<2x8x1000x128xf8E4M3FN>, %k: tensor<2x2x1000x128xf8E4M3FN>,
                         %v: tensor<2x2x1000x128xf8E4M3FN>, %qd: tensor<2x8xf32>,
                         %kd: tensor<2x2xf32>, %vd: tensor<2x2xf32>)
    -> (tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>) {
  %o, %lse = flash.attention %q, %k, %v
      descale(%qd, %kd, %vd : tensor<2x8xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
      {config = #flash.config<sm90ws, block_m = 128, block_n = 224, warps = 8, stages = 2>}
      : tensor<2x8x1000x128xf8E4M3FN>, tensor<2x2x1000x128xf8E4M3FN>,
        tensor<2x2x1000x128xf8E4M3FN>
      -> tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>
  return %o, %lse : tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>
}

// D = 64 on three consumer warpgroups (192 query rows), 160 keys: P·V is
// five k-steps of m64n64k32.
// CHECK-LABEL: gpu.func @flash_fwd_sm90ws_e4m3_bf16_d64_m192n160w12s3(
// CHECK: nvgpu.tma.async.load {{.*}} : <tensor = memref<1x1x160x64xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_64b
// CHECK-COUNT-5: nvgpu.tma.async.load {{.*}} : <tensor = memref<1x1x64x32xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_32b
// CHECK-NOT: swizzle_32b
// CHECK: nvgpu.tma.async.load {{.*}} : <tensor = memref<1x1x192x64xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_64b
// CHECK-COUNT-2: wgmma.mma_async.sync.aligned.m64n160k32.f32.e4m3.e4m3
// CHECK: arith.constant -4611685949707845632 : i64
// CHECK-COUNT-5: wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {{.*}}, {$64, $65, $66, $67}, $68, p, 1, 1;
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
func.func @fp8_d64_n160(%q: tensor<1x4x777x64xf8E4M3FN>, %d: tensor<f32>)
    -> tensor<1x4x777x64xbf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      {config = #flash.config<sm90ws, block_m = 192, block_n = 160, warps = 12, stages = 3>}
      : tensor<1x4x777x64xf8E4M3FN>, tensor<1x4x777x64xf8E4M3FN>, tensor<1x4x777x64xf8E4M3FN>
      -> tensor<1x4x777x64xbf16>
  return %o : tensor<1x4x777x64xbf16>
}
