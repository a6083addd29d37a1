// RUN: flashfuse-opt %s -flash-lower-to-gpu -split-input-file | FileCheck %s
// grad_bias of a broadcast bias: the main kernel writes dBias = dS full-size
// ([B, Hq, Sq, Sk], f32), the launch sequence then sums it over the bias'
// size-1 dimensions and converts it to the bias' element type (the CPU
// lowerings' semantics, test/Integration/CPU).

// A per-head, per-key bias [1, Hq, 1, Sk] over [2, 4, 64, 64]: batch and
// query rows are summed.
// CHECK-LABEL: func.func @per_head_key
// CHECK: memref.alloc() : memref<2x4x64x64xf32>
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_sm80_f16_d64_m64n64w4s2_bias_dbias
// CHECK: %[[FULL:.*]] = bufferization.to_tensor {{.*}} : memref<2x4x64x64xf32> to tensor<2x4x64x64xf32>
// CHECK: %[[INIT:.*]] = linalg.fill {{.*}} -> tensor<4x64xf32>
// CHECK: %[[SUM:.*]] = linalg.reduce ins(%[[FULL]] : tensor<2x4x64x64xf32>) outs(%[[INIT]] : tensor<4x64xf32>) dimensions = [0, 2]
// CHECK: arith.addf
// CHECK: %[[DB:.*]] = tensor.expand_shape %[[SUM]] {{\[}}[0, 1, 2], [3]] output_shape [1, 4, 1, 64] : tensor<4x64xf32> into tensor<1x4x1x64xf32>
// CHECK: return %[[DB]]
func.func @per_head_key(%do: tensor<2x4x64x64xf16>, %lse: tensor<2x4x64xf32>, %bias: tensor<1x4x1x64xf32>) -> tensor<1x4x1x64xf32> {
  %dq, %dk, %dv, %db = flash.attention_grad %do, %do, %do, %do, %do, %lse bias(%bias : tensor<1x4x1x64xf32>) {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64xf32> -> tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<1x4x1x64xf32>
  return %db : tensor<1x4x1x64xf32>
}

// -----

// A scalar f16 bias: everything is summed, then truncated.
// CHECK-LABEL: func.func @scalar
// CHECK: linalg.reduce {{.*}} outs({{.*}} : tensor<f32>) dimensions = [0, 1, 2, 3]
// CHECK: %[[E:.*]] = tensor.expand_shape {{.*}} [] output_shape [1, 1, 1, 1] : tensor<f32> into tensor<1x1x1x1xf32>
// CHECK: %[[T:.*]] = arith.truncf %[[E]] : tensor<1x1x1x1xf32> to tensor<1x1x1x1xf16>
// CHECK: return %[[T]]
func.func @scalar(%do: tensor<2x4x64x64xf16>, %lse: tensor<2x4x64xf32>, %bias: tensor<1x1x1x1xf16>) -> tensor<1x1x1x1xf16> {
  %dq, %dk, %dv, %db = flash.attention_grad %do, %do, %do, %do, %do, %lse bias(%bias : tensor<1x1x1x1xf16>) {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64xf32> -> tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<1x1x1x1xf16>
  return %db : tensor<1x1x1x1xf16>
}

// -----

// A full-size bias needs no reduction.
// CHECK-LABEL: func.func @full
// CHECK-NOT: linalg.reduce
// CHECK: return
func.func @full(%do: tensor<2x4x64x64xf16>, %lse: tensor<2x4x64xf32>, %bias: tensor<2x4x64x64xf32>) -> tensor<2x4x64x64xf32> {
  %dq, %dk, %dv, %db = flash.attention_grad %do, %do, %do, %do, %do, %lse bias(%bias : tensor<2x4x64x64xf32>) {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64xf32> -> tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf32>
  return %db : tensor<2x4x64x64xf32>
}
