// BLOOM (2 layers): ALiBi bias (slopes x positions) in score_mod, causal attribute.
// Exactly the model's attentions are found, the result verifies (it is
// parsed again), and no attention matmul (or, in TOSA, exp) is left behind.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/bloom.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=linalg.batch_matmul

// CHECK-COUNT-2: = flash.attention {{.*}}score_mod
// CHECK-NOT: = flash.attention
