// One-layer gpt2 with its weights kept: the fixture
// scripts/check_raise_numerics.py runs before and after raising. Here:
// exactly one attention is found and the result verifies.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/exec_gpt2.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=linalg.batch_matmul

// CHECK-COUNT-1: = flash.attention {{.*}}causal = #flash.causal<top_left>
// CHECK-NOT: = flash.attention
