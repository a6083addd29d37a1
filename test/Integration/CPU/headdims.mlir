// The head dims the GPU recipes serve on tiles wider than the head dim
// (docs/config-selection.md): odd multiples of 8 (8, 40), 112 and 160 (80
// is in shapes.mlir), and D != Dv (192 with Dv = 128, DeepSeek MLA's
// prefill), forward and backward, both CPU lowerings, f32, against the
// double-precision reference of flashfuse-numerics, with odd lengths, GQA
// and both causal alignments. The CPU lowerings are generic in D and Dv;
// these cases pin that down for the dims the kernels now take.

// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=17 Sk=33 D=8 seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=17 Sk=33 D=8 seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=17 Sk=33 D=8 seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=17 Sk=33 D=8 seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=2 Hq=4 Hkv=2 Sq=113 Sk=203 causal=br D=40 seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=2 Hq=4 Hkv=2 Sq=113 Sk=203 causal=br D=40 seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=2 Hq=4 Hkv=2 Sq=113 Sk=203 causal=br D=40 seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=2 Hq=4 Hkv=2 Sq=113 Sk=203 causal=br D=40 seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=2 Sq=33 Sk=33 causal=tl D=112 seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=2 Sq=33 Sk=33 causal=tl D=112 seed=11' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=2 Sq=33 Sk=33 causal=tl D=112 seed=12' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=2 Sq=33 Sk=33 causal=tl D=112 seed=13' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=4 Hkv=1 Sq=17 Sk=47 D=160 seed=14' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=4 Hkv=1 Sq=17 Sk=47 D=160 seed=15' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=4 Hkv=1 Sq=17 Sk=47 D=160 seed=16' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=4 Hkv=1 Sq=17 Sk=47 D=160 seed=17' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=113 Sk=64 D=192 Dv=128 seed=18' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=113 Sk=64 D=192 Dv=128 seed=19' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=113 Sk=64 D=192 Dv=128 seed=20' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=113 Sk=64 D=192 Dv=128 seed=21' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=2 Hq=4 Hkv=2 Sq=33 Sk=47 causal=tl D=192 Dv=128 seed=22' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=2 Hq=4 Hkv=2 Sq=33 Sk=47 causal=tl D=192 Dv=128 seed=23' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=2 Hq=4 Hkv=2 Sq=33 Sk=47 causal=tl D=192 Dv=128 seed=24' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=2 Hq=4 Hkv=2 Sq=33 Sk=47 causal=tl D=192 Dv=128 seed=25' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 causal=br D=80 Dv=40 seed=26' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 causal=br D=80 Dv=40 seed=27' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 causal=br D=80 Dv=40 seed=28' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 causal=br D=80 Dv=40 seed=29' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
