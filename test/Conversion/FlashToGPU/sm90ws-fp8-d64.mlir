// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu="chip=sm_90a kernels-only=true" | FileCheck %s

// The FP8 forward at D = 64 (Sm90Fp8Forward.cpp, docs/FP8.md): a Q or K row
// is 64 bytes, so those tiles take the 64-byte swizzle. The producer loads
// them in boxes of one whole row (64 e4m3 columns) through maps of that
// swizzle, Vᵀ in boxes of 128 keys through the 128-byte one; S = Q·Kᵀ is
// two k-steps of wgmma m64n128k32 whose descriptors say swizzle mode 2
// (bits 62-63) with 8-row groups 512 bytes apart (bits 32-45):
// 0x8000002000010000, with the leading offset 1 (bits 16-29), is
// -9223371899415756800 as an i64. P·V is four k-steps of m64n64k32.
// Without a mask, 192 query rows on three consumer warpgroups (SelectConfig's
// fp8Config), Q one box of 192 rows.
// CHECK: gpu.func @flash_fwd_sm90ws_e4m3_bf16_d64_m192n128w12s4(
// CHECK-SAME: smem = 78848
// CHECK: nvgpu.tma.async.load {{.*}} : <tensor = memref<1x1x128x64xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_64b
// CHECK: nvgpu.tma.async.load {{.*}} : <tensor = memref<1x1x64x128xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK: nvgpu.tma.async.load {{.*}} : <tensor = memref<1x1x192x64xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_64b
// CHECK: arith.constant -9223371899415756800 : i64
// CHECK-COUNT-2: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{.*}}, $128, $129, p, 1, 1;
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: m64n128k32
// CHECK: nvvm.wgmma.wait.group.sync.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {{.*}}, {$64, $65, $66, $67}, $68, p, 1, 1;
func.func @fp8_d64(%q: tensor<2x8x1000x64xf8E4M3FN>, %k: tensor<2x2x1000x64xf8E4M3FN>,
                   %v: tensor<2x2x1000x64xf8E4M3FN>, %qd: tensor<2x8xf32>,
                   %kd: tensor<2x2xf32>, %vd: tensor<2x2xf32>)
    -> (tensor<2x8x1000x64xbf16>, tensor<2x8x1000xf32>) {
  %o, %lse = flash.attention %q, %k, %v
      descale(%qd, %kd, %vd : tensor<2x8xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
      : tensor<2x8x1000x64xf8E4M3FN>, tensor<2x2x1000x64xf8E4M3FN>,
        tensor<2x2x1000x64xf8E4M3FN>
      -> tensor<2x8x1000x64xbf16>, tensor<2x8x1000xf32>
  return %o, %lse : tensor<2x8x1000x64xbf16>, tensor<2x8x1000xf32>
}
