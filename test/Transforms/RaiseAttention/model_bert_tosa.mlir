// BERT encoder (2 layers): bidirectional, the all-ones padding mask is proven to keep everything.
// Exactly the model's attentions are found, the result verifies (it is
// parsed again), and no attention matmul (or, in TOSA, exp) is left behind.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/bert.tosa.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=tosa.exp

// CHECK-COUNT-2: = flash.attention {{.*}}k_perm = array<i64: 0, 2, 1, 3>
// CHECK-NOT: = flash.attention
