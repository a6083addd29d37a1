// One-layer llama with its weights kept: the fixture
// scripts/check_raise_numerics.py runs before and after raising. Here:
// exactly one attention is found and the result verifies.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/exec_llama.tosa.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=tosa.exp

// CHECK-COUNT-1: = flash.attention {{.*}}tensor<1x2x8x8xf32>
// CHECK-NOT: = flash.attention
