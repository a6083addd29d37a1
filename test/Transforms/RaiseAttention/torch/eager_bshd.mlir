// BSHD inputs transposed in the model: K and V transposes fold into perms.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_bshd.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_bshd.tosa.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=tosa.matmul --implicit-check-not=tosa.exp

// CHECK: flash.attention %{{.*}}, %arg1, %arg2 {k_perm = array<i64: 0, 2, 1, 3>, scale = 2.500000e-01 : f32, v_perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x16x16xf32>, tensor<2x16x4x16xf32>, tensor<2x16x4x16xf32>
