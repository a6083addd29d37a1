// The Llama decode step of model_llama_decode_linalg.mlir as torch-mlir
// printed it: the cache update (index_copy_) is tm_tensor.scatter, one per
// cache tensor, not rewritten into loops. flashfuse-opt parses it, each
// layer's attention reads the scattered cache and becomes
// flash.attention_kvcache as before, and the scatters stay.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/llama_decode_scatter.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=linalg.batch_matmul

// CHECK-LABEL: func.func @llama_decode_scatter(
// CHECK-COUNT-2: tm_tensor.scatter {dimension_map = array<i64: 0, 1, 2, 3>} unique_indices(true) ins({{.*}} : tensor<64x1x1x1x1xf32>, tensor<64x4xi64>) outs({{.*}} : tensor<2x2x64x16xf32>)
// CHECK: = flash.attention_kvcache {{.*}}: tensor<2x4x1x16xf32>, tensor<2x2x64x16xf32>, tensor<2x2x64x16xf32>, tensor<2xi32> -> tensor<2x4x1x16xf32>
// CHECK-COUNT-2: tm_tensor.scatter {dimension_map = array<i64: 0, 1, 2, 3>} unique_indices(true) ins({{.*}} : tensor<64x1x1x1x1xf32>, tensor<64x4xi64>) outs({{.*}} : tensor<2x2x64x16xf32>)
// CHECK: = flash.attention_kvcache {{.*}}: tensor<2x4x1x16xf32>, tensor<2x2x64x16xf32>, tensor<2x2x64x16xf32>, tensor<2xi32> -> tensor<2x4x1x16xf32>
// CHECK-NOT: {{= flash.attention}}
// CHECK-NOT: tm_tensor.scatter
