// Additive bias with every kind of broadcast over [B, Hq, Sq, Sk]; the
// backward pass also checks dBias, summed over the broadcast dimensions.

// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=xxxx seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=xxxx seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=xxxx seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=xxxx seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=1x1x seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=1x1x seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=1x1x seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=1x1x seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=11x1 seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=11x1 seed=11' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=11x1 seed=12' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=11x1 seed=13' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=x11x seed=14' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=x11x seed=15' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=x11x seed=16' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=x11x seed=17' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=1111 seed=18' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=1111 seed=19' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=1111 seed=20' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=2 Hq=2 Hkv=1 Sq=37 Sk=45 D=32 bias=1111 seed=21' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
