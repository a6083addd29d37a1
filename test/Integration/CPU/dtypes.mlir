// f16 and bf16 inputs: statistics and accumulation in f32, outputs rounded
// to the input type. Tolerances: 4e-3 for f16 (11 significant bits),
// 2e-2 for bf16 (8 significant bits) of the largest reference value.

// RUN: flashfuse-numerics 'lowering=naive dir=fwd Hq=2 Hkv=1 Sq=113 Sk=203 D=64 dtype=f16 causal=br seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Hq=2 Hkv=1 Sq=113 Sk=203 D=64 dtype=f16 causal=br seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Hq=2 Hkv=1 Sq=113 Sk=203 D=64 dtype=f16 causal=br seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Hq=2 Hkv=1 Sq=113 Sk=203 D=64 dtype=f16 causal=br seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Hq=2 Hkv=1 Sq=113 Sk=203 D=64 dtype=bf16 bias=xxxx seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Hq=2 Hkv=1 Sq=113 Sk=203 D=64 dtype=bf16 bias=xxxx seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Hq=2 Hkv=1 Sq=113 Sk=203 D=64 dtype=bf16 bias=xxxx seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Hq=2 Hkv=1 Sq=113 Sk=203 D=64 dtype=bf16 bias=xxxx seed=9' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
