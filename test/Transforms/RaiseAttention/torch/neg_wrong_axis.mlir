// Negative: softmax over the query axis (dim -2) of Q·Kᵀ.
// Nothing is rewritten, and explain=true names the step that failed.
// RUN: flashfuse-opt --flash-raise-attention="explain=true" %flashfuse_src_root/test/models/cases/neg_wrong_axis.linalg.mlir \
// RUN:   2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/neg_wrong_axis.linalg.mlir \
// RUN:   | FileCheck %s --check-prefix=IR
// RUN: flashfuse-opt --flash-raise-attention="explain=true" %flashfuse_src_root/test/models/cases/neg_wrong_axis.tosa.mlir \
// RUN:   2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/neg_wrong_axis.tosa.mlir \
// RUN:   | FileCheck %s --check-prefix=IR

// EXPLAIN: remark: flash-raise-attention: found a softmax but not an attention: softmax: the softmax is over dim 2, not the last (key) dim
// IR-NOT: flash.attention
// IR: func.func
// IR-NOT: flash.attention
