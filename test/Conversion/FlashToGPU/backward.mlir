// RUN: flashfuse-opt %s -flash-lower-to-gpu | FileCheck %s
// RUN: flashfuse-opt %s -flash-lower-to-gpu="deterministic=true" | FileCheck %s --check-prefix=DET

// GQA (4 query heads over 2 kv heads), causal, D = 64, 64 x 64 tiles, 4 warps.
// The host side launches preprocess, backward and postprocess in that order
// (deterministic: the dQ kernel before postprocess).
// CHECK-LABEL: func.func @grad
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_pre_sm80_f16_d64_m64n64w4s2_causal
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_sm80_f16_d64_m64n64w4s2_causal
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_post_sm80_f16_d64_m64n64w4s2_causal
// DET-LABEL: func.func @grad
// DET: gpu.launch_func @flash_kernels::@flash_bwd_pre_sm80_f16_d64_m64n64w4s2_causal_det
// DET: gpu.launch_func @flash_kernels::@flash_bwd_sm80_f16_d64_m64n64w4s2_causal_det
// DET: gpu.launch_func @flash_kernels::@flash_bwd_dq_sm80_f16_d64_m64n64w4s2_causal_det
// DET: gpu.launch_func @flash_kernels::@flash_bwd_post_sm80_f16_d64_m64n64w4s2_causal_det

// Preprocess: 16-byte chunks of O and dO, 16 rows per pass (128 threads,
// D / 8 = 8 lanes a row), the 4 passes' loads first; Dsum by a butterfly
// over the lanes of a row, the dQ accumulator zeroed with 16-byte stores.
// CHECK-LABEL: gpu.func @flash_bwd_pre_sm80_f16_d64_m64n64w4s2_causal
// CHECK-SAME: kind = "backward_preprocess"
// CHECK-COUNT-8: vector.load {{.*}} {alignment = 16 : i64} : memref<?xf16>, vector<8xf16>
// CHECK-NOT: vector.load
// CHECK-COUNT-3: gpu.shuffle xor
// CHECK: memref.store {{.*}} : memref<?xf32>
// CHECK-COUNT-2: vector.store {{.*}} {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK-COUNT-9: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return

// Main kernel: one loop over the query blocks of the band; per block 5
// products of 32 mma.sync each (Sᵀ, dV, dPᵀ, dK, dQ: (64/16) x (64/16) x 2
// m16n8k16 tiles per warp), then dQ by f32 atomics; dK and dV written after
// the loop.
// CHECK-LABEL: gpu.func @flash_bwd_sm80_f16_d64_m64n64w4s2_causal
// CHECK-SAME: kind = "backward"
// CHECK: nvgpu.device_async_copy
// CHECK: scf.for {{.*}} iter_args
// CHECK: nvgpu.device_async_wait {{.*}} {numGroups = 2 : i32}
// CHECK-COUNT-160: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: memref.atomic_rmw addf
// CHECK: scf.yield
// CHECK-NOT: memref.atomic_rmw
// CHECK: vector.store {{.*}} : memref<?xf16>, vector<2xf16>
// CHECK: gpu.return

// CHECK-LABEL: gpu.func @flash_bwd_post_sm80_f16_d64_m64n64w4s2_causal
// CHECK-SAME: kind = "backward_postprocess"
// CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<?xf32>, vector<8xf32>
// CHECK: arith.truncf {{.*}} : vector<8xf32> to vector<8xf16>
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<?xf16>, vector<8xf16>

// Deterministic: the main kernel computes 4 products and no atomics; the dQ
// kernel walks key blocks (3 products: S, dP, dQ) and stores grad_q.
// DET-LABEL: gpu.func @flash_bwd_sm80_f16_d64_m64n64w4s2_causal_det
// DET-COUNT-128: nvvm.mma.sync
// DET-NOT: nvvm.mma.sync
// DET-NOT: memref.atomic_rmw
// DET-LABEL: gpu.func @flash_bwd_dq_sm80_f16_d64_m64n64w4s2_causal_det
// DET-SAME: kind = "backward_dq"
// DET: scf.for
// DET-COUNT-96: nvvm.mma.sync
// DET-NOT: memref.atomic_rmw
// DET: gpu.return
func.func @grad(%do: tensor<1x4x128x64xf16>, %q: tensor<1x4x128x64xf16>, %k: tensor<1x2x128x64xf16>, %v: tensor<1x2x128x64xf16>, %o: tensor<1x4x128x64xf16>, %lse: tensor<1x4x128xf32>) -> (tensor<1x4x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>, config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128xf32> -> tensor<1x4x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>
  return %dq, %dk, %dv : tensor<1x4x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>
}
