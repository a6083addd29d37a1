// Negative: Q·Kᵀ and softmax, but no second matmul (attention weights only).
// Nothing is rewritten, and explain=true names the step that failed.
// RUN: flashfuse-opt --flash-raise-attention="explain=true" %flashfuse_src_root/test/models/cases/neg_no_pv.linalg.mlir \
// RUN:   2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/neg_no_pv.linalg.mlir \
// RUN:   | FileCheck %s --check-prefix=IR
// RUN: flashfuse-opt --flash-raise-attention="explain=true" %flashfuse_src_root/test/models/cases/neg_no_pv.tosa.mlir \
// RUN:   2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/neg_no_pv.tosa.mlir \
// RUN:   | FileCheck %s --check-prefix=IR

// EXPLAIN: remark: flash-raise-attention: found a softmax but not an attention: P·V: the softmax result does not feed the left operand of a second matmul
// IR-NOT: flash.attention
// IR: func.func
// IR-NOT: flash.attention
