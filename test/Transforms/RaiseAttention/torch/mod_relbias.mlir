// A relative-position bias [H, S, S] added to the scores: bias operand expanded to rank 4.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/mod_relbias.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/mod_relbias.tosa.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=tosa.matmul --implicit-check-not=tosa.exp

// CHECK: %[[B:.*]] = tensor.expand_shape %arg3 {{\[\[}}0, 1], [2], [3]] output_shape [1, 4, 16, 16] : tensor<4x16x16xf32> into tensor<1x4x16x16xf32>
// CHECK: flash.attention %arg0, %arg1, %arg2 bias(%[[B]] : tensor<1x4x16x16xf32>) {scale = 1.000000e+00 : f32}
