// Causal and i - j < 4: a sliding window of 3 keys left of the diagonal.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_window.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp

// CHECK: flash.attention %arg0, %arg1, %arg2 {causal = #flash.causal<top_left>, scale = 2.500000e-01 : f32, window_left = 3 : i64}
