// mask_mod regions: 8-token documents (q_idx / 8 == kv_idx / 8), with and
// without causal.

// RUN: flashfuse-numerics 'lowering=naive dir=fwd Sq=40 Sk=40 D=32 mask_mod=document seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Sq=40 Sk=40 D=32 mask_mod=document seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Sq=40 Sk=40 D=32 mask_mod=document seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Sq=40 Sk=40 D=32 mask_mod=document seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Sq=40 Sk=40 D=32 mask_mod=document causal=tl seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Sq=40 Sk=40 D=32 mask_mod=document causal=tl seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Sq=40 Sk=40 D=32 mask_mod=document causal=tl seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Sq=40 Sk=40 D=32 mask_mod=document causal=tl seed=9' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
