// A score_mod region (ALiBi-style: score + 0.5 / (h + 1) * (kv_idx - q_idx)),
// alone and with causal and GQA. Its derivative with respect to the score
// is 1, so the backward lowering accepts it.

// RUN: flashfuse-numerics 'lowering=naive dir=fwd Hq=2 Hkv=1 Sq=33 Sk=47 D=32 score_mod=alibi seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Hq=2 Hkv=1 Sq=33 Sk=47 D=32 score_mod=alibi seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Hq=2 Hkv=1 Sq=33 Sk=47 D=32 score_mod=alibi seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Hq=2 Hkv=1 Sq=33 Sk=47 D=32 score_mod=alibi seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Hq=4 Hkv=2 Sq=47 Sk=33 D=32 score_mod=alibi causal=br seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Hq=4 Hkv=2 Sq=47 Sk=33 D=32 score_mod=alibi causal=br seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Hq=4 Hkv=2 Sq=47 Sk=33 D=32 score_mod=alibi causal=br seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Hq=4 Hkv=2 Sq=47 Sk=33 D=32 score_mod=alibi causal=br seed=9' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
