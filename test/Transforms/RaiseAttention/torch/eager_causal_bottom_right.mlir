// Sq = 8 < Sk = 16 with the diagonal at j = i + 8: bottom-right causal.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_causal_bottom_right.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp

// CHECK: flash.attention %arg0, %arg1, %arg2 {causal = #flash.causal<bottom_right>, scale = 2.500000e-01 : f32} : tensor<2x4x8x16xf32>
