// Dropout with a fixed seed: the lowerings' Philox4x32-10 keep test must
// agree with the reference's plain C++ Philox bit for bit (any disagreement
// changes a probability by 1/(1-p), far above the tolerance). The backward
// pass recomputes the same keep mask.

// RUN: flashfuse-numerics 'lowering=naive dir=fwd Sq=33 Sk=47 D=32 dropout=0.1 dropout_seed=42 seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Sq=33 Sk=47 D=32 dropout=0.1 dropout_seed=42 seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Sq=33 Sk=47 D=32 dropout=0.1 dropout_seed=42 seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Sq=33 Sk=47 D=32 dropout=0.1 dropout_seed=42 seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Hq=2 Hkv=1 Sq=33 Sk=47 D=32 dropout=0.5 dropout_seed=0x123456789abcdef causal=br seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Hq=2 Hkv=1 Sq=33 Sk=47 D=32 dropout=0.5 dropout_seed=0x123456789abcdef causal=br seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Hq=2 Hkv=1 Sq=33 Sk=47 D=32 dropout=0.5 dropout_seed=0x123456789abcdef causal=br seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Hq=2 Hkv=1 Sq=33 Sk=47 D=32 dropout=0.5 dropout_seed=0x123456789abcdef causal=br seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=2 Sq=20 Sk=20 D=32 dropout=0.3 dropout_seed=7 bias=1x1x seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=2 Sq=20 Sk=20 D=32 dropout=0.3 dropout_seed=7 bias=1x1x seed=11' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=2 Sq=20 Sk=20 D=32 dropout=0.3 dropout_seed=7 bias=1x1x seed=12' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=2 Sq=20 Sk=20 D=32 dropout=0.3 dropout_seed=7 bias=1x1x seed=13' | FileCheck %s

// With a score_mod (flash-attn's dropout_p with alibi_slopes): the region's
// bias before the softmax, the keep test after it.
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Hq=4 Hkv=2 Sq=33 Sk=47 D=32 causal=br score_mod=alibi dropout=0.2 dropout_seed=77 seed=60' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Hq=4 Hkv=2 Sq=33 Sk=47 D=32 causal=br score_mod=alibi dropout=0.2 dropout_seed=77 seed=61' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
