// Dropout on P (keep mask, divide by 1 - p) as a training graph carries it.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/dropout.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp

// CHECK: %[[SEED:.*]] = arith.constant 0 : i64
// CHECK: flash.attention %arg0, %arg1, %arg2 seed(%[[SEED]]) {dropout_p = 1.000000e-01 : f32, scale = 2.500000e-01 : f32}
