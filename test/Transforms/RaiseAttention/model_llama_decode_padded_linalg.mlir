// Llama decode step over a StaticCache with left-padded prompts (the
// attention_mask argument [2, 64]): the model's mask is the cache length AND
// a padding mask read from data, which no per-sequence length expresses.
// Both attentions stay dense flash.attention (the mask kept), none becomes
// flash.attention_kvcache, and explain=true says why.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/llama_decode_padded.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=linalg.batch_matmul --implicit-check-not=flash.attention_kvcache
// RUN: flashfuse-opt --flash-raise-attention="explain=true" %flashfuse_src_root/test/models/llama_decode_padded.linalg.mlir \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=WHY

// CHECK-COUNT-2: = flash.attention {{.*}}: tensor<2x4x1x16xf32>, tensor<2x2x64x16xf32>, tensor<2x2x64x16xf32> -> tensor<2x4x1x16xf32>
// CHECK-NOT: {{= flash.attention[^_]}}

// WHY-COUNT-2: remark: flash-raise-attention: dense flash.attention, not flash.attention_kvcache: the mask is not a length mask
// WHY-NOT: remark
