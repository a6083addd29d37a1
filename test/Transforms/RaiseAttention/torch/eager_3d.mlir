// bmm on [B*H, S, D]: operands get unit batch dims, the output is collapsed back.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_3d.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_3d.tosa.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=tosa.matmul --implicit-check-not=tosa.exp

// CHECK: %[[Q:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1], [2], [3]] output_shape [1, 8, 16, 16]
// CHECK: %[[O:.*]] = flash.attention %[[Q]], %{{.*}}, %{{.*}} {scale = 2.500000e-01 : f32} : tensor<1x8x16x16xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[O]] {{\[\[}}0, 1], [2], [3]] : tensor<1x8x16x16xf32> into tensor<8x16x16xf32>
// CHECK: return %[[C]]
