// Llama (2 layers, 4 query / 2 kv heads, RoPE): GQA read without the repeat.
// Exactly the model's attentions are found, the result verifies (it is
// parsed again), and no attention matmul (or, in TOSA, exp) is left behind.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/llama.tosa.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=tosa.exp

// CHECK-COUNT-2: = flash.attention {{.*}}tensor<1x2x16x16xf32>
// CHECK-NOT: = flash.attention
