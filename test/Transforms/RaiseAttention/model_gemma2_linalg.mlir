// Gemma-2 (2 layers): softcap 50, alternating sliding-window (8) and global layers.
// Exactly the model's attentions are found, the result verifies (it is
// parsed again), and no attention matmul (or, in TOSA, exp) is left behind.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/gemma2.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=linalg.batch_matmul

// CHECK-COUNT-2: = flash.attention {{.*}}softcap = 5.000000e+01 : f32
// CHECK-NOT: = flash.attention
