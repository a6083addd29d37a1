// Falcon, new decoder architecture (2 layers, 4 query / 2 kv heads, RoPE,
// eager attention with an additive causal mask): one fused QKV projection
// grouped per kv head, [B, S, Hkv, G + 2, D], K and V broadcast over their
// group before the rotary embedding. Raised as GQA: K is read as every
// second head of its RoPE result (a strided slice, 2 kv heads), V before its
// broadcast (2 kv heads, BSHD); the mask becomes `causal`.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/falcon_eager.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=linalg.batch_matmul

// CHECK-COUNT-2: = flash.attention {{.*}}causal = #flash.causal<top_left>{{.*}}tensor<1x4x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x16x2x16xf32> -> tensor<1x4x16x16xf32>
// CHECK-NOT: = flash.attention
