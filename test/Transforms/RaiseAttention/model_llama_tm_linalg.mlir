// Llama (2 layers, 4 query / 2 kv heads, RoPE) exported with
// aten.scaled_dot_product_attention kept legal: torch-mlir's output holds
// tm_tensor.attention (Q, K, V and the boolean causal mask collapsed to
// [B*H, S, *], K and V repeated to 4 heads). flashfuse-opt parses it, and
// each becomes flash.attention: causal (the mask is a band), GQA over the
// 2 kv heads (the repeat dropped), scale taken from the op.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/llama_tm.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=tm_tensor.attention
// The module as exported parses and verifies.
// RUN: flashfuse-opt %flashfuse_src_root/test/models/llama_tm.linalg.mlir | FileCheck %s --check-prefix=PARSE

// CHECK-COUNT-2: = flash.attention {{.*}}{causal = #flash.causal<top_left>, scale = 2.500000e-01 : f32, v_perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x16x2x16xf32> -> tensor<1x4x16x16xf32>
// CHECK-NOT: = flash.attention

// PARSE-COUNT-2: = tm_tensor.attention {scale = 2.500000e-01 : f64} ins({{.*}} : tensor<4x16x16xf32>, tensor<4x16x16xf32>, tensor<4x16x16xf32>, tensor<4x16x16xi1>) outs({{.*}} : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
// PARSE-NOT: tm_tensor.attention
