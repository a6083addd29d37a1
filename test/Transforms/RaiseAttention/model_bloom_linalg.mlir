// BLOOM (2 layers): its ALiBi bias (slopes x key positions, under the causal
// mask) becomes the alibi operand, the mask the causal attribute.
// Exactly the model's attentions are found, the result verifies (it is
// parsed again), and no attention matmul (or, in TOSA, exp) is left behind.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/bloom.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=linalg.batch_matmul

// CHECK-COUNT-2: = flash.attention {{.*}} alibi(%{{.*}} : tensor<4xf32>) {causal = #flash.causal<top_left>
// CHECK-NOT: score_mod
// CHECK-NOT: = flash.attention
