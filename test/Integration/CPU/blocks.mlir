// The loops lowering with tile sizes that do not divide the lengths, and
// tiles larger than the sequences.

// RUN: flashfuse-numerics 'lowering=loops dir=fwd Sq=113 Sk=203 D=32 block_m=32 block_n=48 causal=br seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Sq=113 Sk=203 D=32 block_m=32 block_n=48 causal=br seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Sq=17 Sk=23 D=32 block_m=64 block_n=64 wl=4 seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Sq=17 Sk=23 D=32 block_m=64 block_n=64 wl=4 seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Sq=100 Sk=37 D=32 block_m=16 block_n=32 causal=tl bias=xxxx seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Sq=100 Sk=37 D=32 block_m=16 block_n=32 causal=tl bias=xxxx seed=7' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
