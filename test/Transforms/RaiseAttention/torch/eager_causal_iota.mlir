// masked_fill(~(j <= i), -inf) from arange: causal attribute.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_causal_iota.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/eager_causal_iota.tosa.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=tosa.matmul --implicit-check-not=tosa.exp

// CHECK: flash.attention %arg0, %arg1, %arg2 {causal = #flash.causal<top_left>, scale = 2.500000e-01 : f32}
