// One-layer Falcon (new decoder architecture, grouped fused QKV) with its
// weights kept: the fixture scripts/check_raise_numerics.py runs before and
// after raising (test/Integration/CPU/raise-models.mlir). Here: exactly one
// attention is found, as GQA over 2 kv heads, and the result verifies.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/exec_falcon.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=linalg.batch_matmul

// CHECK: tensor.extract_slice {{.*}}[0, 0, 0, 0] [1, 2, 8, 8] [1, 2, 1, 1] : tensor<1x4x8x8xf32> to tensor<1x2x8x8xf32>
// CHECK-COUNT-1: = flash.attention {{.*}}tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x8x2x8xf32> -> tensor<1x4x8x8xf32>
// CHECK-NOT: = flash.attention
