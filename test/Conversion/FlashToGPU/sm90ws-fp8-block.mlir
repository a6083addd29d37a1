// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu="chip=sm_90a kernels-only=true" | FileCheck %s

// Per-block descales in the FP8 forward (Sm90Fp8Forward.cpp; FlashOps.td,
// descale_block_size): a kernel of their own (`_ds<BQ>x<BK>`), whose
// descales take a block stride after their batch and head strides, and
// whose manifest states the block sizes. Q and K per block of 64 and 128
// rows, V per tensor (block stride 0). In the consumers: the warp's
// q_descale block (row / 64, clamped to the last block) once per tile, and
// the last key block's v_descale (under scf.if: a tile with no key block
// reads none); then k_descale of the first block, and in the loop each
// block's k_descale and the v_descales of the previous and current block,
// whose ratio (rcp.approx) rescales O with alpha.
// CHECK-LABEL: func.func @blocks
// On the host: the block strides after each descale's batch and head
// strides, 1 for Q's and K's [B, H, N], 0 for V's one factor.
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm90ws_e4m3_bf16_d128_m128n128w8s3_causalbr_ds64x128
// CHECK-SAME: : i64, %c1_i64 : i64, %{{.*}} : i64, %{{.*}} : i64, %c1_i64{{.*}} : i64, %c0_i64 : i64, %c0_i64{{.*}} : i64, %c0_i64{{.*}} : i64, %cst{{.*}} : f32
// A per-head op keeps the kernel without block strides.
// CHECK-LABEL: func.func @per_head
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm90ws_e4m3_bf16_d128_m128n192w8s2 blocks
// CHECK: gpu.func @flash_fwd_sm90ws_e4m3_bf16_d128_m128n128w8s3_causalbr_ds64x128(
// CHECK-SAME: descale_block_k = 128 : i64, descale_block_q = 64 : i64
// CHECK-SAME: "i64:q_descale_stride_b", "i64:q_descale_stride_h", "i64:q_descale_stride_n", "i64:k_descale_stride_b", "i64:k_descale_stride_h", "i64:k_descale_stride_n", "i64:v_descale_stride_b", "i64:v_descale_stride_h", "i64:v_descale_stride_n"
// CHECK: nvvm.setmaxregister {{ *}}increase
// CHECK: arith.minui
// CHECK: memref.load %arg5
// CHECK: scf.if
// CHECK: memref.load %arg7
// CHECK: memref.load %arg6
// CHECK: scf.for
// CHECK: memref.load %arg6
// CHECK: memref.load %arg7
// CHECK: memref.load %arg7
// CHECK: llvm.nvvm.rcp.approx.ftz.f
func.func @blocks(%q: tensor<2x8x1000x128xf8E4M3FN>, %k: tensor<2x2x1000x128xf8E4M3FN>,
                  %qd: tensor<2x8x16xf32>, %kd: tensor<2x2x8xf32>, %vd: tensor<f32>)
    -> tensor<2x8x1000x128xbf16> {
  %o = flash.attention %q, %k, %k
      descale(%qd, %kd, %vd : tensor<2x8x16xf32>, tensor<2x2x8xf32>, tensor<f32>)
      {descale_block_size = array<i64: 64, 128>, causal = #flash.causal<bottom_right>}
      : tensor<2x8x1000x128xf8E4M3FN>, tensor<2x2x1000x128xf8E4M3FN>,
        tensor<2x2x1000x128xf8E4M3FN> -> tensor<2x8x1000x128xbf16>
  return %o : tensor<2x8x1000x128xbf16>
}

func.func @per_head(%q: tensor<2x8x1000x128xf8E4M3FN>, %d: tensor<2x8xf32>)
    -> tensor<2x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q
      descale(%d, %d, %d : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>)
      : tensor<2x8x1000x128xf8E4M3FN>, tensor<2x8x1000x128xf8E4M3FN>,
        tensor<2x8x1000x128xf8E4M3FN> -> tensor<2x8x1000x128xbf16>
  return %o : tensor<2x8x1000x128xbf16>
}
