// RUN: flashfuse-opt %s --flash-lower-to-gpu=chip=sm_80 --split-input-file | FileCheck %s

// One causal f16 D=64 op: a kernel in the flash_kernels gpu.module with the
// FA2 building blocks, and a launch on the host in its place.

// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: func.func @causal
// CHECK-NOT: flash.attention
// CHECK-DAG: bufferization.to_buffer %{{.*}} read_only
// CHECK-DAG: memref.alloc() : memref<2x4x200x64xf16>
// CHECK-DAG: memref.alloc() : memref<2x4x200xf32>
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm80_f16_d64_m64n64w4s2_causal
// CHECK-SAME: dynamic_shared_memory_size
// CHECK: bufferization.to_tensor
// CHECK: gpu.module @flash_kernels [#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">]
// CHECK: gpu.func @flash_fwd_sm80_f16_d64_m64n64w4s2_causal(
// CHECK-SAME: kernel
// CHECK-SAME: causal = "top_left"
// CHECK-SAME: smem = 41984
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// D = 64: the tiles are 128-byte swizzled (Swizzle.h), one 1-D view of
// Q (64 x 64) and two K/V stages (2 x 2 x 64 x 64) from the first 1024-byte
// boundary (1024 bytes of slack in smem).
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.view {{.*}} to memref<20480xf16, #gpu.address_space<workgroup>>
// The Q tile and the first K/V block go in flight before the loop: Q
// chunk by chunk, K and V under one branch on whether the block lies below
// Sk: a whole block from a raw address stepped per pass with no checks,
// the last block of a sequence with each pass's row checked (src-size).
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK: scf.if
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK: } else {
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait
// Q's A operands are loaded once, before the key loop.
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: scf.for
// The prefetch of the next block (the same branch), then the wait for this
// one.
// CHECK: scf.if
// CHECK: nvvm.cp.async.shared.global
// CHECK: } else {
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait {{.*}} {numGroups = 1 : i32}
// CHECK: gpu.barrier
// S = Q K^T: 4 k-steps x 8 key tiles of m16n8k16.
// CHECK-COUNT-32: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32)
// The masked branch (causal diagonal, tail of Sk) and the plain one.
// CHECK: scf.if
// CHECK: arith.select
// Online softmax: quad reductions of the row max, exp2 on the FFMA.
// CHECK: gpu.shuffle xor
// CHECK: llvm.intr.fma
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// O is rescaled unconditionally at D = 64 (no warp vote).
// CHECK-NOT: nvvm.vote.sync
// O += P V, V through ldmatrix.trans: 4 k-steps x 8 dv tiles.
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK-COUNT-32: nvvm.mma.sync
// CHECK: gpu.barrier
// CHECK: scf.yield
// Epilogue: O / l and LSE. O is staged through the Q tile once every warp
// is done with the tiles: each pair of output columns one 4-byte store
// into the warp's own swizzled rows (at the element's own alignment LLVM
// would split it in two), the LSE straight to global memory.
// CHECK: gpu.barrier
// CHECK-NOT: scf.yield
// CHECK: llvm.inline_asm has_side_effects {{.*}} "mov.u32 $0, %tid.x;"
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"
// CHECK-COUNT-8: vector.store {{.*}} {alignment = 4 : i64} : memref<20480xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK: memref.store
// Then the warp's 16 rows go out 16 bytes a lane, 4 rows a pass, under one
// branch on whether the block's rows all lie below Sq: unchecked, or each
// pass's row checked.
// CHECK: nvvm.bar.warp.sync
// CHECK: scf.if
// CHECK-COUNT-4: vector.load {{.*}} {alignment = 16 : i64} : memref<20480xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK-NEXT: llvm.inttoptr
// CHECK-NEXT: llvm.store {{.*}} {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<1>
// CHECK: } else {
// CHECK-COUNT-4: scf.if
// CHECK: gpu.return
func.func @causal(%q: tensor<2x4x200x64xf16>, %k: tensor<2x2x300x64xf16>, %v: tensor<2x2x300x64xf16>) -> (tensor<2x4x200x64xf16>, tensor<2x4x200xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<top_left>, config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<2x4x200x64xf16>, tensor<2x2x300x64xf16>, tensor<2x2x300x64xf16> -> tensor<2x4x200x64xf16>, tensor<2x4x200xf32>
  return %o, %lse : tensor<2x4x200x64xf16>, tensor<2x4x200xf32>
}

// -----

// Ops with the same spec share one kernel; a different dtype, head dim or
// variant gets its own. bf16 selects the bf16 mma; a bias adds its buffer.

// CHECK-LABEL: func.func @shared
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm80_bf16_d128_m128n64w4s2
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm80_bf16_d128_m128n64w4s2
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm80_bf16_d128_m128n64w4s2_bias
// CHECK: gpu.module @flash_kernels
// CHECK-COUNT-1: gpu.func @flash_fwd_sm80_bf16_d128_m128n64w4s2(
// CHECK: multiplicandAPtxType = #nvvm.mma_type<bf16>
// D = 128 at 128 x 64 skips the O rescale when no row maximum of the warp
// moved: a vote and a branch around the multiplies.
// CHECK: nvvm.vote.sync all
// CHECK: scf.if
// CHECK: scf.yield
// CHECK: arith.mulf
// CHECK: gpu.func @flash_fwd_sm80_bf16_d128_m128n64w4s2_bias(
// CHECK-SAME: %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: i32
// CHECK-NOT: gpu.func
#cfg = #flash.config<sm80, block_m = 128, block_n = 64, warps = 4, stages = 2>
func.func @shared(%q: tensor<1x2x64x128xbf16>, %b: tensor<1x1x64x64xf32>) -> (tensor<1x2x64x128xbf16>, tensor<1x2x64x128xbf16>, tensor<1x2x64x128xbf16>) {
  %0 = flash.attention %q, %q, %q {config = #cfg} : tensor<1x2x64x128xbf16>, tensor<1x2x64x128xbf16>, tensor<1x2x64x128xbf16> -> tensor<1x2x64x128xbf16>
  %1 = flash.attention %0, %q, %q {config = #cfg, scale = 0.5 : f32} : tensor<1x2x64x128xbf16>, tensor<1x2x64x128xbf16>, tensor<1x2x64x128xbf16> -> tensor<1x2x64x128xbf16>
  %2 = flash.attention %q, %q, %q bias(%b : tensor<1x1x64x64xf32>) {config = #cfg} : tensor<1x2x64x128xbf16>, tensor<1x2x64x128xbf16>, tensor<1x2x64x128xbf16> -> tensor<1x2x64x128xbf16>
  return %0, %1, %2 : tensor<1x2x64x128xbf16>, tensor<1x2x64x128xbf16>, tensor<1x2x64x128xbf16>
}

// -----

// BSHD operands: the perms pick the strides; the kernel is the same.
// CHECK-LABEL: func.func @bshd
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm80_f16_d64_m128n64w4s2_window
// CHECK: gpu.func @flash_fwd_sm80_f16_d64_m128n64w4s2_window(
func.func @bshd(%q: tensor<2x100x8x64xf16>) -> tensor<2x100x8x64xf16> {
  %o = flash.attention %q, %q, %q {q_perm = array<i64: 0, 2, 1, 3>, k_perm = array<i64: 0, 2, 1, 3>, v_perm = array<i64: 0, 2, 1, 3>, window_left = 16 : i64, window_right = 0 : i64, config = #flash.config<sm80, block_m = 128, block_n = 64, warps = 4, stages = 2>} : tensor<2x100x8x64xf16>, tensor<2x100x8x64xf16>, tensor<2x100x8x64xf16> -> tensor<2x100x8x64xf16>
  return %o : tensor<2x100x8x64xf16>
}
