// Fully masked rows: through the mask operand (row 5), through mask_mod
// (row 3), and through bottom-right causal with Sq > Sk. O must be 0, LSE
// +inf, gradients 0 and nothing NaN (outputs are poisoned with NaN first).

// RUN: flashfuse-numerics 'lowering=naive dir=fwd Sq=17 Sk=23 D=32 masked_row=5 seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Sq=17 Sk=23 D=32 masked_row=5 seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Sq=17 Sk=23 D=32 masked_row=5 seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Sq=17 Sk=23 D=32 masked_row=5 seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Sq=17 Sk=23 D=32 mask_mod=drop_row3 seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Sq=17 Sk=23 D=32 mask_mod=drop_row3 seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Sq=17 Sk=23 D=32 mask_mod=drop_row3 seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Sq=17 Sk=23 D=32 mask_mod=drop_row3 seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Sq=40 Sk=9 D=32 causal=br bias=xxxx seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Sq=40 Sk=9 D=32 causal=br bias=xxxx seed=11' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Sq=40 Sk=9 D=32 causal=br bias=xxxx seed=12' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Sq=40 Sk=9 D=32 causal=br bias=xxxx seed=13' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
