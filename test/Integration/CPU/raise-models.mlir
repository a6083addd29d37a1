// Raising preserves the function: one-layer GPT-2 and Llama (GQA, RoPE),
// linalg and TOSA, and Falcon (GQA from a grouped fused QKV, linalg), run
// on the CPU before and after flash-raise-attention (+ flash-lower-naive) on
// the same random token ids; the outputs agree.
// RUN: python3 %flashfuse_src_root/scripts/check_raise_numerics.py --opt flashfuse-opt \
// RUN:   %flashfuse_src_root/test/models/exec_gpt2.linalg.mlir %flashfuse_src_root/test/models/exec_gpt2.tosa.mlir \
// RUN:   %flashfuse_src_root/test/models/exec_llama.linalg.mlir %flashfuse_src_root/test/models/exec_llama.tosa.mlir \
// RUN:   %flashfuse_src_root/test/models/exec_falcon.linalg.mlir \
// RUN:   | FileCheck %s

// CHECK-NOT: {{BAD|ERROR}}
// CHECK: OK   exec_gpt2.linalg.mlir: 1 attention(s)
// CHECK: OK   exec_gpt2.tosa.mlir: 1 attention(s)
// CHECK: OK   exec_llama.linalg.mlir: 1 attention(s)
// CHECK: OK   exec_llama.tosa.mlir: 1 attention(s)
// CHECK: OK   exec_falcon.linalg.mlir: 1 attention(s)
// CHECK-NOT: {{BAD|ERROR}}
