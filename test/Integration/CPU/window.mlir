// Sliding windows: left only, right only, both, and a causal sliding window
// (bottom-right, Sq != Sk). With the loops lowering, key blocks outside the
// band are skipped by the loop bounds, so a wrong bound shows up here.

// RUN: flashfuse-numerics 'lowering=naive dir=fwd Sq=113 Sk=203 D=32 wl=16 seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Sq=113 Sk=203 D=32 wl=16 seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Sq=113 Sk=203 D=32 wl=16 seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Sq=113 Sk=203 D=32 wl=16 seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Sq=113 Sk=203 D=32 wr=8 seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Sq=113 Sk=203 D=32 wr=8 seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Sq=113 Sk=203 D=32 wr=8 seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Sq=113 Sk=203 D=32 wr=8 seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Sq=64 Sk=64 D=32 wl=5 wr=3 seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Sq=64 Sk=64 D=32 wl=5 wr=3 seed=11' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Sq=64 Sk=64 D=32 wl=5 wr=3 seed=12' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Sq=64 Sk=64 D=32 wl=5 wr=3 seed=13' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Sq=50 Sk=90 D=32 causal=br wl=20 seed=14' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Sq=50 Sk=90 D=32 causal=br wl=20 seed=15' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Sq=50 Sk=90 D=32 causal=br wl=20 seed=16' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Sq=50 Sk=90 D=32 causal=br wl=20 seed=17' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Sq=90 Sk=50 D=32 causal=tl wl=7 wr=30 seed=18' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Sq=90 Sk=50 D=32 causal=tl wl=7 wr=30 seed=19' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Sq=90 Sk=50 D=32 causal=tl wl=7 wr=30 seed=20' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Sq=90 Sk=50 D=32 causal=tl wl=7 wr=30 seed=21' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
