// A 16-bit attention computed in f32 on up-casts (PyTorch's CPU SDPA, as
// torch-mlir exports it) is raised at f16 (narrow-upcasts): run on the CPU
// before and after flash-raise-attention (+ flash-lower-naive) on the same
// random inputs, the f16 outputs agree within the checker's tolerance.
// RUN: python3 %flashfuse_src_root/scripts/check_raise_numerics.py --opt flashfuse-opt \
// RUN:   %flashfuse_src_root/test/models/cases/sdpa_f16_upcast.linalg.mlir | FileCheck %s

// CHECK-NOT: {{BAD|ERROR}}
// CHECK: OK   sdpa_f16_upcast.linalg.mlir: 1 attention(s)
