// ALiBi: slope[h] * (j - i) from iota becomes a score_mod reading the slopes.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/mod_alibi.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp

// CHECK: flash.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f32}
// CHECK-SAME: score_mod
// CHECK: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %[[H:.*]]: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK: tensor.extract %{{.*}}[%[[H]]] : tensor<4xf32>
// CHECK-DAG: arith.index_cast %[[J]]
// CHECK-DAG: arith.index_cast %[[I]]
// CHECK: %[[R:.*]] = arith.addf %[[S]], %{{.*}} : f32
// CHECK: flash.yield %[[R]]
