// torch-mlir's tm_tensor.attention, raised, computes what the decomposed
// export of the same F.scaled_dot_product_attention computes: default and
// explicit scale, causal, additive and boolean masks, GQA (enable_gqa).
// Nothing lowers tm_tensor ops, so each *_tm fixture (SDPA kept legal) is
// run after raising only, against its decomposed twin run as is, on the
// same random inputs on the CPU.
// RUN: python3 %flashfuse_src_root/scripts/check_raise_numerics.py --opt flashfuse-opt \
// RUN:   %flashfuse_src_root/test/models/cases/sdpa_plain_tm.linalg.mlir=%flashfuse_src_root/test/models/cases/sdpa_plain.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/sdpa_scale_tm.linalg.mlir=%flashfuse_src_root/test/models/cases/sdpa_scale.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/sdpa_causal_tm.linalg.mlir=%flashfuse_src_root/test/models/cases/sdpa_causal.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/sdpa_mask_add_tm.linalg.mlir=%flashfuse_src_root/test/models/cases/sdpa_mask_add.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/sdpa_mask_bool_tm.linalg.mlir=%flashfuse_src_root/test/models/cases/sdpa_mask_bool.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/sdpa_gqa_tm.linalg.mlir=%flashfuse_src_root/test/models/cases/sdpa_gqa.linalg.mlir \
// RUN:   | FileCheck %s
// A reference of another function is told apart (the check can fail).
// RUN: not python3 %flashfuse_src_root/scripts/check_raise_numerics.py --opt flashfuse-opt \
// RUN:   %flashfuse_src_root/test/models/cases/sdpa_scale_tm.linalg.mlir=%flashfuse_src_root/test/models/cases/sdpa_plain.linalg.mlir \
// RUN:   | FileCheck %s --check-prefix=WRONG

// CHECK-NOT: {{BAD|ERROR}}
// CHECK: OK   sdpa_plain_tm.linalg.mlir: 1 attention(s)
// CHECK: OK   sdpa_scale_tm.linalg.mlir: 1 attention(s)
// CHECK: OK   sdpa_causal_tm.linalg.mlir: 1 attention(s)
// CHECK: OK   sdpa_mask_add_tm.linalg.mlir: 1 attention(s)
// CHECK: OK   sdpa_mask_bool_tm.linalg.mlir: 1 attention(s)
// CHECK: OK   sdpa_gqa_tm.linalg.mlir: 1 attention(s)
// CHECK-NOT: {{BAD|ERROR}}

// WRONG: BAD  sdpa_scale_tm.linalg.mlir: 1 attention(s)
