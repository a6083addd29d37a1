// A model's structured mask gets block skipping with nothing from the
// user: flash-raise-attention turns the torch-style document, prefix-LM and
// sliding-window-with-global-tokens masks into mask_mod regions, and
// flash-derive-block-sparsity gives the ops block lists (computed from the
// sequence ids at run time for the document mask). The raised block-sparse
// ops, through the tiled loops lowering that visits only the listed
// blocks, against the models' own linalg on the same random inputs.
// RUN: python3 %flashfuse_src_root/scripts/check_raise_numerics.py --opt flashfuse-opt \
// RUN:   --pass=--flash-raise-attention --pass="--flash-derive-block-sparsity=block-q=8 block-k=8" \
// RUN:   --count="block_sparse(" --after-lowering=loops \
// RUN:   %flashfuse_src_root/test/models/cases/eager_document_causal.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/eager_prefix_lm.linalg.mlir | FileCheck %s
// RUN: python3 %flashfuse_src_root/scripts/check_raise_numerics.py --opt flashfuse-opt \
// RUN:   --pass=--flash-raise-attention --pass="--flash-derive-block-sparsity=block-q=4 block-k=4" \
// RUN:   --count="block_sparse(" --after-lowering=loops \
// RUN:   %flashfuse_src_root/test/models/cases/eager_window_global.linalg.mlir \
// RUN:   %flashfuse_src_root/test/models/cases/eager_document_causal.linalg.mlir | FileCheck %s --check-prefix=SMALL

// CHECK-NOT: {{BAD|ERROR}}
// CHECK-COUNT-2: OK
// CHECK-NOT: {{BAD|ERROR}}
// SMALL-NOT: {{BAD|ERROR}}
// SMALL-COUNT-2: OK
// SMALL-NOT: {{BAD|ERROR}}
