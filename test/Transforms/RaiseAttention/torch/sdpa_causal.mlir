// is_causal=True: the iota/compare mask becomes the causal attribute, no mask tensor.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/sdpa_causal.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=batch_matmul --implicit-check-not=math.exp
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/sdpa_causal.tosa.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=tosa.matmul --implicit-check-not=tosa.exp

// CHECK: flash.attention %arg0, %arg1, %arg2 {causal = #flash.causal<top_left>, scale = 2.500000e-01 : f32}
// CHECK-NOT: mask(
