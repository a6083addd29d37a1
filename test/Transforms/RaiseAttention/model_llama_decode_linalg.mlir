// Llama decode step over a StaticCache (2 layers, 4 query / 2 kv heads, a
// batch of 2, one new token, a 64-row cache; SDPA with the boolean mask
// kv_idx <= cache position): each layer's attention becomes
// flash.attention_kvcache over the updated [2, 2, 64, 16] cache with
// cache_seqlens = position + 1 built from the position argument, none stays
// dense, and no attention matmul is left. The result verifies (parsed
// again).
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/llama_decode.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=linalg.batch_matmul

// CHECK-LABEL: func.func @llama_decode(
// CHECK-SAME: %arg1: tensor<1xi64>
// CHECK-COUNT-2: = flash.attention_kvcache {{.*}}: tensor<2x4x1x16xf32>, tensor<2x2x64x16xf32>, tensor<2x2x64x16xf32>, tensor<2xi32> -> tensor<2x4x1x16xf32>
// CHECK-NOT: {{= flash.attention[^_]}}

// The lengths: position + 1 for both sequences, read from %arg1.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/llama_decode.linalg.mlir \
// RUN:   | FileCheck %s --check-prefix=LEN
// LEN: %[[LEN:.*]] = tensor.generate {
// LEN: tensor.extract %arg1[
// LEN: arith.trunci {{.*}} : i64 to i32
// LEN: } : tensor<2xi32>
// LEN: flash.attention_kvcache {{.*}}, %[[LEN]] {scale
