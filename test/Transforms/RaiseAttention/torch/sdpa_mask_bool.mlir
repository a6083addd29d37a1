// A boolean attn_mask (where(m, 0, -inf) added) is a mask operand.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/sdpa_mask_bool.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/sdpa_mask_bool.tosa.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=tosa.matmul --implicit-check-not=tosa.exp

// CHECK: flash.attention %arg0, %arg1, %arg2 mask(%arg3 : tensor<2x1x16x16xi1>) {scale = 2.500000e-01 : f32}
