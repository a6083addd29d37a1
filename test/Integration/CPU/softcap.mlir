// Softcapping c * tanh(s / c); inputs are scaled so that tanh saturates
// and the backward chain rule (1 - tanh^2) matters.

// RUN: flashfuse-numerics 'lowering=naive dir=fwd Sq=33 Sk=47 D=32 softcap=5 input_scale=3 seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Sq=33 Sk=47 D=32 softcap=5 input_scale=3 seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Sq=33 Sk=47 D=32 softcap=5 input_scale=3 seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Sq=33 Sk=47 D=32 softcap=5 input_scale=3 seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Sq=33 Sk=47 D=32 softcap=30 causal=br bias=xxxx seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Sq=33 Sk=47 D=32 softcap=30 causal=br bias=xxxx seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Sq=33 Sk=47 D=32 softcap=30 causal=br bias=xxxx seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Sq=33 Sk=47 D=32 softcap=30 causal=br bias=xxxx seed=9' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
