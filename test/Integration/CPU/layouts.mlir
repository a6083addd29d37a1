// Operand layouts through q_perm / k_perm / v_perm: BSHD, and a layout with
// the head dim before the sequence ([B, H, D, S]); also Dv != D.

// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=2 Hq=4 Hkv=2 Sq=37 Sk=29 D=32 Dv=24 layout=bshd causal=br seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=2 Hq=4 Hkv=2 Sq=37 Sk=29 D=32 Dv=24 layout=bshd causal=br seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=2 Hq=4 Hkv=2 Sq=37 Sk=29 D=32 Dv=24 layout=bshd causal=br seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=2 Hq=4 Hkv=2 Sq=37 Sk=29 D=32 Dv=24 layout=bshd causal=br seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Hq=2 Hkv=1 Sq=37 Sk=29 D=32 Dv=48 layout=bhds bias=xxxx seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Hq=2 Hkv=1 Sq=37 Sk=29 D=32 Dv=48 layout=bhds bias=xxxx seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Hq=2 Hkv=1 Sq=37 Sk=29 D=32 Dv=48 layout=bhds bias=xxxx seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Hq=2 Hkv=1 Sq=37 Sk=29 D=32 Dv=48 layout=bhds bias=xxxx seed=9' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
