// (S + bias) / 4: the scale moves before the bias, the bias is scaled in score_mod.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_scale_after_bias.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp

// CHECK: flash.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f32}
// CHECK-SAME: score_mod
// CHECK: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %[[Q:.*]]: index, %[[K:.*]]: index):
// CHECK: %[[B:.*]] = tensor.extract %arg3[%{{.*}}, %{{.*}}, %[[Q]], %[[K]]] : tensor<1x1x16x16xf32>
// CHECK: %[[BS:.*]] = arith.mulf %[[B]], %{{.*}} : f32
// CHECK: %[[R:.*]] = arith.addf %[[S]], %[[BS]] : f32
// CHECK: flash.yield %[[R]] : f32
