// Grouped-query and multi-query attention: q head h reads kv head h / G;
// dK and dV sum over the G query heads of each kv head.

// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=2 Hq=4 Hkv=1 Sq=33 Sk=47 D=32 seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=2 Hq=4 Hkv=1 Sq=33 Sk=47 D=32 seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=2 Hq=4 Hkv=1 Sq=33 Sk=47 D=32 seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=2 Hq=4 Hkv=1 Sq=33 Sk=47 D=32 seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=2 Hq=4 Hkv=2 Sq=33 Sk=47 D=32 causal=tl seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=2 Hq=4 Hkv=2 Sq=33 Sk=47 D=32 causal=tl seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=2 Hq=4 Hkv=2 Sq=33 Sk=47 D=32 causal=tl seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=2 Hq=4 Hkv=2 Sq=33 Sk=47 D=32 causal=tl seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=6 Hkv=3 Sq=20 Sk=20 D=64 bias=1xxx seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=6 Hkv=3 Sq=20 Sk=20 D=64 bias=1xxx seed=11' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=6 Hkv=3 Sq=20 Sk=20 D=64 bias=1xxx seed=12' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=6 Hkv=3 Sq=20 Sk=20 D=64 bias=1xxx seed=13' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
