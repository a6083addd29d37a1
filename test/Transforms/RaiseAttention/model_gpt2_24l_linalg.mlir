// GPT-2 with 24 layers: the fixture timed in docs/PERF.md.
// Exactly the model's attentions are found, the result verifies (it is
// parsed again), and no attention matmul (or, in TOSA, exp) is left behind.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/gpt2_24l.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=linalg.batch_matmul

// CHECK-COUNT-24: = flash.attention {{.*}}causal = #flash.causal<top_left>
// CHECK-NOT: = flash.attention
