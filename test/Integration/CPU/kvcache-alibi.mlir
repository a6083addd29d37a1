// flash.attention_kvcache with alibi_slopes (flash-attn's ALiBi: key j of
// query row i in sequence b gets -slope * |i + L_b - Sq - j|), through the
// naive and the loops lowering, against the double-precision reference
// written from docs/KVCACHE.md. Slopes [Hq] (alibi=1) and [B, Hq]
// (alibi=2), random and different per entry; causal and not (the distance
// on both sides of the diagonal), ragged lengths (0, 1, a 64-key block
// -1 / exactly / +1), new rows, pages in shuffled order, left padding,
// windows, softcap, GQA, several query rows, D != Dv, f16.

// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=1 Sk=128 D=32 lens=40:100:128:65:64:63 causal=br block_n=64 alibi=1 seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=1 Sk=128 D=32 lens=40:100:128:65:64:63 causal=br block_n=64 alibi=2 seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=3 Sk=128 D=32 lens=40:100:0:65:1:70 alibi=2 seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=3 Sk=128 D=32 lens=40:100:0:65:1:70 alibi=1 seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=2 Sk=64 D=32 Snew=1 lens=0:10:63 leftpad=0:9:30 causal=br page=16 alibi=2 seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=2 Sk=64 D=32 Snew=1 lens=0:10:63 leftpad=0:9:30 causal=br page=16 alibi=2 wl=8 softcap=5 seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=2 Hkv=2 Sq=4 Sk=96 D=32 lens=10:50:96 wl=16 wr=4 alibi=1 seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=6 Hkv=1 Sq=3 Sk=80 D=64 Dv=32 lens=80:17:33 dtype=f16 causal=br alibi=1 seed=10' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed

// Over an FP8 cache (the slopes on the dequantised scores; new rows
// quantised on their way in, the whole cache compared code for code).
// RUN: flashfuse-numerics 'lowering=naive op=kvcache cache=e4m3 dtype=bf16 Hq=4 Hkv=2 Sq=2 Sk=64 D=32 Snew=1 lens=0:10:63 causal=br alibi=2 seed=11' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache cache=e4m3 dtype=f16 descale=tensor Hq=8 Hkv=2 Sq=1 Sk=96 D=64 lens=96:1:40 page=16 alibi=1 seed=12' | FileCheck %s
