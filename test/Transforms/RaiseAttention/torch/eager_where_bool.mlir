// torch.where(mask, s, -inf) with a data mask: mask operand.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_where_bool.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_where_bool.tosa.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=tosa.matmul --implicit-check-not=tosa.exp

// CHECK: flash.attention %arg0, %arg1, %arg2 mask(%arg3 : tensor<2x1x16x16xi1>) {scale = 2.500000e-01 : f32}
