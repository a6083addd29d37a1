// One-layer Llama decode step with its weights kept (a 32-row cache): the
// fixture raise-decode.mlir runs before and after raising. Here: its one
// attention becomes flash.attention_kvcache and the result verifies.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/exec_llama_decode.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=linalg.batch_matmul

// CHECK-COUNT-1: = flash.attention_kvcache {{.*}}: tensor<2x4x1x8xf32>, tensor<2x2x32x8xf32>, tensor<2x2x32x8xf32>, tensor<2xi32> -> tensor<2x4x1x8xf32>
// CHECK-NOT: {{= flash.attention[^_]}}
