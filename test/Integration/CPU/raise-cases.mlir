// Raising preserves the function for each attention form, in every
// variant the op takes: attributes (causal both alignments, window,
// softcap, scale), operands (bias, mask, GQA, layouts, 3-D) and regions
// (ALiBi score_mod; document, prefix-LM and window-with-global-tokens
// masks as mask_mod), ALiBi as the alibi operand (causal slope * (j - i),
// BLOOM's slope * j, MPT's |j + 1 - Sk|, symmetric and bottom-right
// |distance|, slopes computed from h, TOSA's constant arange, decode steps
// over a cache, one relative to its position), linalg and TOSA. Before and
// after raising, on the CPU, on the same random inputs.
// RUN: python3 %flashfuse_src_root/scripts/check_raise_numerics.py --opt flashfuse-opt \
// RUN:   %flashfuse_src_root/test/models/cases/sdpa_gqa.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/sdpa_mask_bool.tosa.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/eager_causal_bottom_right.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/eager_window.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/eager_f16_upcast.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/eager_bshd.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/eager_3d.tosa.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/mod_alibi.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/mod_alibi_causal.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/mod_alibi_symmetric.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/mod_alibi_bloom.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/mod_alibi_bottom_right.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/mod_alibi_mpt.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/mod_alibi_slope_formula.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/mod_alibi_decode.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/mod_alibi_decode_relative.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/mod_alibi_causal.tosa.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/mod_softcap.tosa.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/mod_relbias.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/eager_scale_after_bias.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/eager_document_causal.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/eager_prefix_lm.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/eager_window_global.linalg.mlir \
// RUN:   | FileCheck %s

// CHECK-NOT: {{BAD|ERROR}}
// CHECK-COUNT-23: OK
// CHECK-NOT: {{BAD|ERROR}}
