// RUN: flashfuse-opt %s --flash-lower-to-gpu="chip=sm_80 deterministic=true" | FileCheck %s

// The deterministic backward of a block-sparse gradient: the transposed
// lists for the main kernel (which adds no dQ), and the backward_dq kernel
// under the forward's key-block iterator (BlockSparseIterator.h): its block
// owns a query block and walks the key blocks the forward's lists name for
// it, as the forward did, so dQ is summed in a fixed order without atomics.

// CHECK-LABEL: func.func @lists
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_pre_sm80_f16_d64_m64n64w4s2_det blocks
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_bs_transpose_sm80_f16_d64_m64n64w4s2_bs128x128f blocks
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_sm80_f16_d64_m64n64w4s2_det_bs128x128f blocks
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_dq_sm80_f16_d64_m64n64w4s2_det_bs128x128f blocks
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_post_sm80_f16_d64_m64n64w4s2_det blocks

// The main kernel takes the transposed lists and no dq_accum.
// CHECK: gpu.func @flash_bwd_sm80_f16_d64_m64n64w4s2_det_bs128x128f(
// CHECK-SAME: "memref:lse", "memref:delta", "memref:dk"
// CHECK-SAME: "memref:q_num_blocks"

// The dQ kernel: the forward's lists after the scalars; its query block
// qb = mStart / 128 reads its row before the loop and again, from
// coordinates read opaquely, inside it.
// CHECK: gpu.func @flash_bwd_dq_sm80_f16_d64_m64n64w4s2_det_bs128x128f(
// CHECK-SAME: %[[NUM:arg33]]: memref<?xi32>, %[[IDX:arg34]]: memref<?xi32>, %arg35: i64, %arg36: i64, %arg37: i64, %arg38: i64, %arg39: i32, %[[FNUM:arg40]]: memref<?xi32>, %[[FIDX:arg41]]: memref<?xi32>
// CHECK-SAME: block_sparse = 2
// CHECK-SAME: kind = "backward_dq"
// CHECK-SAME: "i64:seed", "memref:kv_num_blocks", "memref:kv_indices"
// CHECK: arith.divui %{{.*}}, %c128 : index
// CHECK: memref.load %[[NUM]]
// CHECK: memref.load %[[FNUM]]
// CHECK: %[[SUM:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: %[[ENTRIES:.*]] = arith.index_cast %[[SUM]] : i32 to index
// CHECK: %[[STEPS:.*]] = arith.muli %[[ENTRIES]], %c2{{.*}} : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[STEPS]] step %c1
// CHECK: llvm.inline_asm has_side_effects {{.*}}"mov.u32 $0, %ctaid.z;"
// CHECK: memref.load %[[NUM]]
// CHECK: memref.load %[[IDX]]
// CHECK: memref.load %[[FIDX]]
// CHECK: gpu.return
func.func @lists(%t: tensor<2x4x300x64xf16>, %lse: tensor<2x4x300xf32>, %n: tensor<1x4x3xi32>, %i: tensor<1x4x3x3xi32>, %fn: tensor<2x1x3xi32>, %fi: tensor<2x1x3x2xi32>) -> tensor<2x4x300x64xf16> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<1x4x3xi32>, tensor<1x4x3x3xi32>)
      full_blocks(%fn, %fi : tensor<2x1x3xi32>, tensor<2x1x3x2xi32>)
      {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>}
      : tensor<2x4x300x64xf16>, tensor<2x4x300x64xf16>, tensor<2x4x300x64xf16>,
        tensor<2x4x300x64xf16>, tensor<2x4x300x64xf16>, tensor<2x4x300xf32>
      -> tensor<2x4x300x64xf16>, tensor<2x4x300x64xf16>, tensor<2x4x300x64xf16>
  return %dq : tensor<2x4x300x64xf16>
}
