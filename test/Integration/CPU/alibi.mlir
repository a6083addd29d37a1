// flash.attention / flash.attention_grad with `alibi(...)` (flash-attn's
// alibi_slopes: key j of query row i gets -slope * |i + Sk - Sq - j|)
// through the naive and the loops lowering, which fold the bias into the
// score_mod (AlibiScoreMod.h), against the double-precision reference
// written from FlashOps.td. Slopes [Hq] (alibi=1) and [B, Hq] (alibi=2),
// random and different per entry; the three causal modes with Sq < Sk and
// Sq > Sk (the distance is the bottom-right diagonal's whatever the
// alignment), windows, softcap, GQA, BSHD, D != Dv, f16 and bf16, after a
// user's score_mod (both biases), with dropout, and over packed (varlen)
// batches, each sequence's distance from its own diagonal and [B, Hq]
// slopes indexed by the sequence.

// RUN: flashfuse-numerics 'lowering=naive dir=fwd Hq=4 Hkv=2 Sq=33 Sk=47 D=32 alibi=1 seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Hq=4 Hkv=2 Sq=33 Sk=47 D=32 alibi=1 seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Hq=4 Hkv=2 Sq=33 Sk=47 D=32 alibi=1 seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Hq=4 Hkv=2 Sq=33 Sk=47 D=32 alibi=1 seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=2 Hq=4 Hkv=1 Sq=47 Sk=33 D=32 alibi=2 causal=br seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=2 Hq=4 Hkv=1 Sq=47 Sk=33 D=32 alibi=2 causal=br seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=2 Hq=2 Hkv=2 Sq=40 Sk=25 D=32 alibi=2 causal=tl seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=2 Hq=2 Hkv=2 Sq=25 Sk=40 D=32 alibi=1 causal=tl seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd Hq=2 Hkv=1 Sq=30 Sk=30 D=32 alibi=1 wl=6 wr=3 softcap=5 seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd Hq=2 Hkv=1 Sq=30 Sk=30 D=32 alibi=1 causal=br wl=6 softcap=5 seed=11' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Hq=4 Hkv=2 Sq=19 Sk=37 D=64 Dv=32 layout=bshd dtype=bf16 alibi=2 causal=br seed=12' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Hq=4 Hkv=2 Sq=19 Sk=37 D=32 dtype=f16 alibi=1 seed=13' | FileCheck %s
// After a score_mod, which runs first; the gradient of the chain is 1.
// RUN: flashfuse-numerics 'lowering=naive dir=fwd Hq=2 Hkv=1 Sq=33 Sk=47 D=32 score_mod=alibi alibi=2 causal=br seed=14' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Hq=2 Hkv=1 Sq=33 Sk=47 D=32 score_mod=batch_slope alibi=1 seed=15' | FileCheck %s
// With dropout: the bias before the softmax, the keep test after it.
// RUN: flashfuse-numerics 'lowering=loops dir=bwd Hq=4 Hkv=2 Sq=33 Sk=47 D=32 causal=br alibi=1 dropout=0.2 dropout_seed=77 seed=16' | FileCheck %s
// Packed batches: lengths 0, 1 and block multiples +-1, Lq_b > Lk_b and
// the reverse, so that a kernel taking the packed Sk - Sq fails.
// RUN: flashfuse-numerics 'lowering=naive op=varlen Hq=4 Hkv=2 D=32 lens_q=1:15:16:17:0:33:4 lens_k=1:17:16:15:5:31:0 pad=2 alibi=1 seed=17' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen Hq=4 Hkv=2 D=32 lens_q=1:15:16:17:0:33:4 lens_k=1:17:16:15:5:31:0 pad=2 alibi=2 causal=br seed=18' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=varlen dir=bwd Hq=4 Hkv=2 D=32 lens_q=9:17:33:3:1:6 lens_k=5:31:16:0:17:6 causal=br alibi=2 seed=19' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen dir=bwd Hq=2 Hkv=1 D=32 lens_q=20:7:33:1 lens_k=20:12:31:2 wl=4 wr=2 alibi=1 seed=20' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed

// Not with FP8 operands (the verifier says why).
// RUN: not flashfuse-numerics 'dtype=e4m3 Sq=16 Sk=16 D=32 alibi=1' 2>&1 | FileCheck %s --check-prefix=FP8
// FP8: 'alibi_slopes' with FP8 operands is not supported yet
