// f16 model with the softmax in f32: the up-cast and the f32 accumulation with its truncation are absorbed.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_f16_upcast.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp

// CHECK: flash.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f32} : tensor<2x4x16x16xf16>, tensor<2x4x16x16xf16>, tensor<2x4x16x16xf16> -> tensor<2x4x16x16xf16>
// CHECK-NOT: arith.truncf
