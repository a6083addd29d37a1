// flash.attention with an f32 O over f16/bf16 inputs (out=f32): O = acc / l
// straight from the f32 accumulators, never rounded to the inputs' type
// (FlashOps.td: the partial results split-sequence attention merges by
// LSE). The harness holds such an O to the f32 tolerance, 1e-4 of the
// largest reference value (CaseSpec::effectiveTolerance), which an O
// rounded to f16 or bf16 exceeds: the last RUN lines show that the same
// cases with a 16-bit O fail it. Full and causal (top-left, bottom-right),
// GQA, odd lengths, a single query row, fully masked rows (O = 0, LSE =
// +inf exactly) and a packed (varlen) batch, in both CPU lowerings.

// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=2 Hq=4 Hkv=2 Sq=113 Sk=203 D=64 dtype=bf16 out=f32 seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=2 Hq=4 Hkv=2 Sq=113 Sk=203 D=64 dtype=bf16 out=f32 seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Hq=4 Hkv=1 Sq=113 Sk=113 D=128 dtype=bf16 causal=tl out=f32 seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Hq=4 Hkv=1 Sq=113 Sk=113 D=128 dtype=bf16 causal=tl out=f32 seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Hq=6 Hkv=3 Sq=17 Sk=203 D=64 dtype=f16 causal=br out=f32 seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Hq=6 Hkv=3 Sq=17 Sk=203 D=64 dtype=f16 causal=br out=f32 seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Hq=2 Hkv=2 Sq=1 Sk=1023 D=128 dtype=f16 out=f32 layout=bshd seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Hq=2 Hkv=2 Sq=1 Sk=1023 D=128 dtype=f16 out=f32 layout=bshd seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Hq=4 Hkv=2 Sq=33 Sk=47 D=32 dtype=bf16 masked_row=3 out=f32 seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Hq=4 Hkv=2 Sq=33 Sk=47 D=32 dtype=f16 masked_row=5 out=f32 seed=11' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=varlen dir=fwd Hq=4 Hkv=2 D=64 dtype=bf16 lens_q=17:0:40 lens_k=30:5:40 pad=3 causal=br out=f32 seed=12' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen dir=fwd Hq=4 Hkv=2 D=64 dtype=bf16 lens_q=17:0:40 lens_k=30:5:40 pad=3 causal=br out=f32 seed=13' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed

// The f32 tolerance tells an unrounded O from a 16-bit one: the same
// inputs with O in f16 or bf16, held to it, fail on O (and only on O).
// RUN: not flashfuse-numerics 'lowering=loops dir=fwd B=2 Hq=4 Hkv=2 Sq=113 Sk=203 D=64 dtype=bf16 tol=1e-4 seed=3' | FileCheck %s --check-prefix=ROUNDED
// RUN: not flashfuse-numerics 'lowering=naive dir=fwd Hq=6 Hkv=3 Sq=17 Sk=203 D=64 dtype=f16 causal=br tol=1e-4 seed=6' | FileCheck %s --check-prefix=ROUNDED
// ROUNDED: O {{.*}} <-- over tolerance
// ROUNDED-NOT: LSE {{.*}} <-- over tolerance
// ROUNDED: FAIL: case 1

// The harness refuses out=f32 where the op would (O of the gradient and
// of flash.attention_kvcache is the inputs' type).
// RUN: not flashfuse-numerics 'dir=bwd dtype=bf16 out=f32' | FileCheck %s --check-prefix=REFUSED
// REFUSED: error: out=f32 is flash.attention's (op=attention or varlen, dir=fwd)
