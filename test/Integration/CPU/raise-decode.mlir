// Raising a decode step preserves its function: the one-layer Llama decode
// step over a StaticCache (a batch of 2, one new token, random caches, a
// random position, random token ids) runs on the CPU before and after
// flash-raise-attention (its attention becomes flash.attention_kvcache,
// lowered by flash-lower-naive through flash-decompose-kvcache); the
// outputs agree. The driver draws every i64 argument below 32, so the
// position stays inside the 32-row cache; the rows past it hold random
// values that the mask hides in the model and cache_seqlens in the raised
// op (a length off by one changes the output by about 1).
// RUN: python3 %flashfuse_src_root/scripts/check_raise_numerics.py --opt flashfuse-opt \
// RUN:   %flashfuse_src_root/test/models/exec_llama_decode.linalg.mlir \
// RUN:   | FileCheck %s

// CHECK-NOT: {{BAD|ERROR}}
// CHECK: OK   exec_llama_decode.linalg.mlir: 1 attention(s)
// CHECK-NOT: {{BAD|ERROR}}
