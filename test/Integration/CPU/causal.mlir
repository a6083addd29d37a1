// Causal masks with both alignments where Sq != Sk. Bottom-right with
// Sq = 128 > Sk = 64 masks the first 64 query rows entirely: O = 0 and
// LSE = +inf there, and their gradients are 0.

// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=2 Sq=17 Sk=17 D=32 causal=tl seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=2 Sq=17 Sk=17 D=32 causal=tl seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=2 Sq=17 Sk=17 D=32 causal=tl seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=2 Sq=17 Sk=17 D=32 causal=tl seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=2 Sq=113 Sk=203 D=32 causal=tl seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=2 Sq=113 Sk=203 D=32 causal=tl seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=2 Sq=113 Sk=203 D=32 causal=tl seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=2 Sq=113 Sk=203 D=32 causal=tl seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=2 Sq=128 Sk=64 D=32 causal=tl seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=2 Sq=128 Sk=64 D=32 causal=tl seed=11' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=2 Sq=128 Sk=64 D=32 causal=tl seed=12' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=2 Sq=128 Sk=64 D=32 causal=tl seed=13' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=2 Sq=17 Sk=17 D=32 causal=br seed=14' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=2 Sq=17 Sk=17 D=32 causal=br seed=15' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=2 Sq=17 Sk=17 D=32 causal=br seed=16' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=2 Sq=17 Sk=17 D=32 causal=br seed=17' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=2 Sq=113 Sk=203 D=32 causal=br seed=18' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=2 Sq=113 Sk=203 D=32 causal=br seed=19' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=2 Sq=113 Sk=203 D=32 causal=br seed=20' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=2 Sq=113 Sk=203 D=32 causal=br seed=21' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=2 Sq=128 Sk=64 D=32 causal=br seed=22' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=2 Sq=128 Sk=64 D=32 causal=br seed=23' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=2 Sq=128 Sk=64 D=32 causal=br seed=24' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=2 Sq=128 Sk=64 D=32 causal=br seed=25' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
