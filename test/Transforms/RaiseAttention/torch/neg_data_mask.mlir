// Negative: A mask that depends on the scores themselves (s < mean(s)): neither mask_mod nor a mask operand can express it.
// Nothing is rewritten, and explain=true names the step that failed.
// RUN: flashfuse-opt --flash-raise-attention="explain=true" %flashfuse_src_root/test/models/cases/neg_data_mask.linalg.mlir \
// RUN:   2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/neg_data_mask.linalg.mlir \
// RUN:   | FileCheck %s --check-prefix=IR

// EXPLAIN: remark: flash-raise-attention: found a softmax but not an attention: mask: the mask depends on the scores, which neither mask_mod nor a mask operand can express
// IR-NOT: flash.attention
// IR: func.func
// IR-NOT: flash.attention
