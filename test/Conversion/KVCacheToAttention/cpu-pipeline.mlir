// The named CPU pipeline takes flash.attention_kvcache (paged, with new_kv
// and an LSE) down to the LLVM dialect with either lowering; the numerics
// harness (test/Integration/CPU/kvcache*.mlir) runs the same pipeline.
// RUN: flashfuse-opt %s --flash-cpu-pipeline="lowering=naive" | FileCheck %s
// RUN: flashfuse-opt %s --flash-cpu-pipeline="lowering=loops block-m=16 block-n=16" | FileCheck %s

// CHECK-LABEL: llvm.func @step
// CHECK-NOT: flash.
// CHECK-NOT: tensor.
// CHECK-NOT: scf.
// CHECK: llvm.return
func.func @step(%q: tensor<2x4x1x32xf32>, %kp: tensor<9x16x2x32xf32>,
                %vp: tensor<9x16x2x32xf32>, %lens: tensor<2xi32>,
                %bt: tensor<2x4xi32>, %kn: tensor<2x2x1x32xf32>,
                %vn: tensor<2x2x1x32xf32>)
    -> (tensor<2x4x1x32xf32>, tensor<2x4x1xf32>, tensor<9x16x2x32xf32>,
        tensor<9x16x2x32xf32>) {
  %o, %lse, %kc, %vc = flash.attention_kvcache %q, %kp, %vp, %lens
      block_table(%bt : tensor<2x4xi32>)
      new_kv(%kn, %vn : tensor<2x2x1x32xf32>, tensor<2x2x1x32xf32>)
      {causal = #flash.causal<bottom_right>, window_left = 32 : i64}
      : tensor<2x4x1x32xf32>, tensor<9x16x2x32xf32>, tensor<9x16x2x32xf32>,
        tensor<2xi32>
      -> tensor<2x4x1x32xf32>, tensor<2x4x1xf32>, tensor<9x16x2x32xf32>,
         tensor<9x16x2x32xf32>
  return %o, %lse, %kc, %vc
      : tensor<2x4x1x32xf32>, tensor<2x4x1xf32>, tensor<9x16x2x32xf32>,
        tensor<9x16x2x32xf32>
}
