// GPT-2 (2 layers): causal SDPA from transformers' sdpa attention; c_attn split by slices.
// Exactly the model's attentions are found, the result verifies (it is
// parsed again), and no attention matmul (or, in TOSA, exp) is left behind.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/gpt2.tosa.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=tosa.exp

// CHECK-COUNT-2: = flash.attention {{.*}}causal = #flash.causal<top_left>
// CHECK-NOT: = flash.attention
