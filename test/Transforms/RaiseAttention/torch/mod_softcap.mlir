// Gemma-2 softcapping 30 * tanh(s / 30): the softcap attribute.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/mod_softcap.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/mod_softcap.tosa.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=tosa.matmul --implicit-check-not=tosa.exp

// CHECK: flash.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f32, softcap = 3.000000e+01 : f32}
// CHECK-NOT: math.tanh
// CHECK-NOT: tosa.tanh
