// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu="chip=sm_90a kernels-only=true" | FileCheck %s
// RUN: not flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a 2>&1 | FileCheck %s --check-prefix=HOST

// The FP8 forward (Sm90Fp8Forward.cpp) on the sm90ws schedule: V goes to
// the kernel as Vᵀ ([B, Hkv, Dv, Sk_pad], keys contiguous: the second
// wgmma reads its B operand K-major; the keys zero-padded to 1024 and
// permuted within groups of 32 as fp8_vt_layout.h says: expanded to
// [G, h, j, t, e], j and t swapped) and the descales follow LSE with their
// [B, H] strides; the manifest names O's dtype. The producer loads Q and K
// in boxes of 128 bytes (e4m3 columns) and Vᵀ from the block's first key;
// the consumers multiply with wgmma m64n128k32 e4m3 (4 k-steps of Q·Kᵀ
// from shared memory, 4 of P·V with P from registers) and convert P with
// cvt.rn.satfinite.e4m3x2.f32 straight into P·V's operands: no shuffle
// between the conversion and the second product.
// HOST: error: 'flash.attention' op recipe 'sm90ws' takes TMA tensor maps by value
// CHECK-LABEL: func.func @fp8_head
// CHECK: tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 24, 0]
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3, 4, 5, 6], [7]] output_shape [2, 2, 32, 2, 2, 4, 2, 128] : tensor<2x2x1024x128xf8E4M3FN> into tensor<2x2x32x2x2x4x2x128xf8E4M3FN>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x2x32x2x2x4x2x128xf8E4M3FN>) outs(%{{.*}} : tensor<2x2x128x32x2x4x2x2xf8E4M3FN>) permutation = [0, 1, 7, 2, 3, 5, 4, 6]
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2], [3, 4, 5, 6, 7]] : tensor<2x2x128x32x2x4x2x2xf8E4M3FN> into tensor<2x2x128x1024xf8E4M3FN>
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm90ws_e4m3_bf16_d128_m128n192w8s2_causalbr
// One descale per tensor (@fp8_tensor): read as a one-element buffer with
// strides 0.
// CHECK: func.func @fp8_tensor
// CHECK: tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm90ws_e4m3_f16_d256_m128n128w8s2
// CHECK: gpu.func @flash_fwd_sm90ws_e4m3_bf16_d128_m128n192w8s2_causalbr(%arg0: memref<?xf8E4M3FN>, %arg1: memref<?xf8E4M3FN>, %arg2: memref<?xf8E4M3FN>, %arg3: memref<?xbf16>, %arg4: memref<?xf32>, %arg5: memref<?xf32>, %arg6: memref<?xf32>, %arg7: memref<?xf32>,
// CHECK-SAME: dtype = "e4m3"
// CHECK-SAME: out_dtype = "bf16"
// CHECK-SAME: params = ["memref:q", "memref:k", "memref:vt", "memref:o", "memref:lse", "memref:q_descale", "memref:k_descale", "memref:v_descale",
// CHECK-SAME: "i64:vt_stride_b", "i64:vt_stride_h", "i64:vt_stride_d",
// CHECK-SAME: "i64:q_descale_stride_b", "i64:q_descale_stride_h", "i64:k_descale_stride_b", "i64:k_descale_stride_h", "i64:v_descale_stride_b", "i64:v_descale_stride_h",
// CHECK-SAME: "tensormap:q_map", "tensormap:k_map", "tensormap:vt_map"]
// CHECK-SAME: smem = 115712
// CHECK: nvvm.setmaxregister {{ *}}decrease 40
// CHECK: scf.for
// CHECK: scf.for
// D = 128 takes blocks of 192 keys, two stages: K in a box of 192 rows of
// one 128-byte swizzle row, Vᵀ in three boxes of 64 keys (64-byte
// swizzle rows) by Dv rows, then Q.
// CHECK: nvgpu.tma.async.load %{{.*}}[%c0{{.*}}, %{{[0-9]+}}, %{{.*}}, %[[BATCH:[0-9]+]]]{{.*}} : <tensor = memref<1x1x192x128xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK-COUNT-3: nvgpu.tma.async.load %{{.*}}[%{{[0-9]+}}, %c0{{.*}}, %{{.*}}, %[[BATCH]]]{{.*}} : <tensor = memref<1x1x128x64xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_64b
// CHECK: nvgpu.tma.async.load %{{.*}}[%c0{{.*}}, %{{.*}}, %{{.*}}, %[[BATCH]]]{{.*}} : <tensor = memref<1x1x128x128xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK: nvvm.setmaxregister {{ *}}increase 232
// CHECK-COUNT-3: memref.load %arg{{[567]}}
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3 {{.*}}, $192, $193, p, 1, 1;
// CHECK: nvvm.convert.f32x2.to.f8x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK-NOT: gpu.shuffle {{ *}}idx
// CHECK-COUNT-6: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{.*}}, {$128, $129, $130, $131}, $132, p, 1, 1;
func.func @fp8_head(%q: tensor<2x8x1000x128xf8E4M3FN>, %k: tensor<2x2x1000x128xf8E4M3FN>,
                    %v: tensor<2x2x1000x128xf8E4M3FN>, %qd: tensor<2x8xf32>,
                    %kd: tensor<2x2xf32>, %vd: tensor<2x2xf32>)
    -> (tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>) {
  %o, %lse = flash.attention %q, %k, %v
      descale(%qd, %kd, %vd : tensor<2x8xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
      {causal = #flash.causal<bottom_right>}
      : tensor<2x8x1000x128xf8E4M3FN>, tensor<2x2x1000x128xf8E4M3FN>,
        tensor<2x2x1000x128xf8E4M3FN>
      -> tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>
  return %o, %lse : tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>
}

func.func @fp8_tensor(%q: tensor<1x4x77x256xf8E4M3FN>, %d: tensor<f32>)
    -> tensor<1x4x77x256xf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      : tensor<1x4x77x256xf8E4M3FN>, tensor<1x4x77x256xf8E4M3FN>, tensor<1x4x77x256xf8E4M3FN>
      -> tensor<1x4x77x256xf16>
  return %o : tensor<1x4x77x256xf16>
}
