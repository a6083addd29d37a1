// Mistral (2 layers, sliding window 4): causal plus window_left = 3.
// Exactly the model's attentions are found, the result verifies (it is
// parsed again), and no attention matmul (or, in TOSA, exp) is left behind.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/mistral.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=linalg.batch_matmul

// CHECK-COUNT-2: = flash.attention {{.*}}window_left = 3 : i64
// CHECK-NOT: = flash.attention
