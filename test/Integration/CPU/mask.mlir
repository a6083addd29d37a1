// Boolean mask operands (random, 75% kept) with broadcast dimensions,
// alone and with causal.

// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=2 Hq=2 Hkv=2 Sq=37 Sk=45 D=32 mask=xxxx seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=2 Hq=2 Hkv=2 Sq=37 Sk=45 D=32 mask=xxxx seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=2 Hq=2 Hkv=2 Sq=37 Sk=45 D=32 mask=xxxx seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=2 Hq=2 Hkv=2 Sq=37 Sk=45 D=32 mask=xxxx seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=2 Hq=2 Hkv=2 Sq=37 Sk=45 D=32 mask=1x1x seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=2 Hq=2 Hkv=2 Sq=37 Sk=45 D=32 mask=1x1x seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=2 Hq=2 Hkv=2 Sq=37 Sk=45 D=32 mask=1x1x seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=2 Hq=2 Hkv=2 Sq=37 Sk=45 D=32 mask=1x1x seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=2 Hq=2 Hkv=2 Sq=37 Sk=45 D=32 mask=x1xx causal=br seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=2 Hq=2 Hkv=2 Sq=37 Sk=45 D=32 mask=x1xx causal=br seed=11' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=2 Hq=2 Hkv=2 Sq=37 Sk=45 D=32 mask=x1xx causal=br seed=12' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=2 Hq=2 Hkv=2 Sq=37 Sk=45 D=32 mask=x1xx causal=br seed=13' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
