// A float attn_mask is an additive bias operand, already rank 4.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/sdpa_mask_add.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/sdpa_mask_add.tosa.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=tosa.matmul --implicit-check-not=tosa.exp

// CHECK: flash.attention %arg0, %arg1, %arg2 bias(%arg3 : tensor<1x1x16x16xf32>) {scale = 2.500000e-01 : f32}
