// Llama's repeat_kv (unsqueeze, expand, reshape) is dropped: K/V keep 2 heads.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_gqa_repeat.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_gqa_repeat.tosa.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=tosa.matmul --implicit-check-not=tosa.exp

// CHECK: flash.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f32} : tensor<2x4x16x16xf32>, tensor<2x2x16x16xf32>, tensor<2x2x16x16xf32> -> tensor<2x4x16x16xf32>
