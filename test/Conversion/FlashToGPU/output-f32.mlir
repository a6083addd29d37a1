// RUN: flashfuse-opt %s --flash-lower-to-gpu=chip=sm_80 | FileCheck %s

// flash.attention with an f32 O (FlashOps.td's partial results): a kernel
// of its own (`_of32`, `out_f32 = 1` in its manifest) next to the 16-bit
// one of the same variant, taking O as memref<?xf32>. Its epilogue stores
// O / l from the fragments unrounded, two f32 columns (8 bytes) a store,
// instead of staging 16-bit rows through the swizzled Q tile as the 16-bit
// kernel does.

// CHECK-LABEL: func.func @ring_step
// CHECK: memref.alloc() : memref<1x8x300x64xf32>
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm80_bf16_d64_m64n64w4s2_causal_of32
// CHECK-SAME: memref<?xbf16>, %{{.*}} : memref<?xf32>, %{{.*}} : memref<?xf32>, %{{.*}} : i32
// CHECK: memref.alloc() : memref<1x8x300x64xbf16>
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm80_bf16_d64_m64n64w4s2_causal blocks

// CHECK: gpu.func @flash_fwd_sm80_bf16_d64_m64n64w4s2_causal_of32(
// CHECK-SAME: %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: i32
// CHECK-SAME: out_f32 = 1
// The key loop's yield (O accumulators, row max and sum), then the
// epilogue: each of the warp's two fragment rows (mt = 1), under its
// row < Sq check: 8 pairs of columns, then the row's LSE from lane 0 of
// its quad. Nothing goes through shared memory.
// CHECK: scf.yield {{.*}} : vector<2x2xf32>, {{.*}}, f32, f32, f32, f32
// CHECK-NOT: gpu.barrier
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"
// CHECK: scf.if
// CHECK-COUNT-8: vector.store {{.*}} {alignment = 8 : i64} : memref<?xf32>, vector<2xf32>
// CHECK: memref.store {{.*}} : memref<?xf32>
// CHECK: scf.if
// CHECK-COUNT-8: vector.store {{.*}} {alignment = 8 : i64} : memref<?xf32>, vector<2xf32>
// CHECK: memref.store {{.*}} : memref<?xf32>
// CHECK-NOT: vector.store
// CHECK-NOT: vector.load
// CHECK-NOT: llvm.store
// CHECK: gpu.return

// The 16-bit kernel is unchanged: O staged through the Q tile, then copied
// out 16 bytes a lane.
// CHECK: gpu.func @flash_fwd_sm80_bf16_d64_m64n64w4s2_causal(
// CHECK-SAME: %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xf32>, %{{.*}}: i32
// CHECK-NOT: out_f32
// CHECK: scf.yield {{.*}} : vector<2x2xf32>, {{.*}}, f32, f32, f32, f32
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-8: vector.store {{.*}} {alignment = 4 : i64} : memref<20480xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK: gpu.return
#cfg = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>
func.func @ring_step(%q: tensor<1x8x300x64xbf16>, %k: tensor<1x2x300x64xbf16>,
                     %v: tensor<1x2x300x64xbf16>)
    -> (tensor<1x8x300x64xf32>, tensor<1x8x300xf32>, tensor<1x8x300x64xbf16>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<top_left>, config = #cfg}
      : tensor<1x8x300x64xbf16>, tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>
      -> tensor<1x8x300x64xf32>, tensor<1x8x300xf32>
  %o16 = flash.attention %q, %k, %v {causal = #flash.causal<top_left>, config = #cfg}
      : tensor<1x8x300x64xbf16>, tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>
      -> tensor<1x8x300x64xbf16>
  return %o, %lse, %o16 : tensor<1x8x300x64xf32>, tensor<1x8x300xf32>, tensor<1x8x300x64xbf16>
}
