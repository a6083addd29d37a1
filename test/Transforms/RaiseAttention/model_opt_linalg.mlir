// OPT (2 layers, 4 heads, eager attention): its learned positions are a
// cumsum of the attention mask, which torch-mlir lowers to tm_tensor.scan.
// flashfuse-opt parses the whole export, raises exactly the model's
// attentions around the scan, and leaves the scan as it was.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/opt.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=linalg.batch_matmul

// CHECK: tm_tensor.scan dimension(1) inclusive(true) ins(%{{.*}} : tensor<1x16xf32>) outs(%{{.*}}, %{{.*}} : tensor<1x16xf32>, tensor<1xf32>) {
// CHECK: tm_tensor.yield %{{.*}} : f32
// CHECK-COUNT-2: = flash.attention {{.*}}causal = #flash.causal<top_left>{{.*}} : tensor<1x4x16x16xf32>, tensor<1x16x4x16xf32>, tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
// CHECK-NOT: = flash.attention
