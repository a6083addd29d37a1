// s * |s|: no attribute expresses it, so it stays a score_mod of the raw scores.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/mod_square.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp

// CHECK: flash.attention %arg0, %arg1, %arg2 {scale = 1.000000e+00 : f32}
// CHECK-SAME: score_mod
// CHECK: ^bb0(%[[S:.*]]: f32,
// CHECK: math.absf
// CHECK: flash.yield
