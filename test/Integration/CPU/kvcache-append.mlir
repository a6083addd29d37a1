// flash.attention_kvcache with new_kv: Snew rows are written at each
// sequence's cache_seqlens[b] (through the page table when paged) before
// the attention, which then sees L_b = cache_seqlens[b] + Snew keys. The
// whole updated caches are compared too (a row written to the wrong place,
// or a clobbered one, fails), including a sequence filled to capacity.

// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=1 Sk=64 D=32 Snew=1 lens=0:10:63 causal=br seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=1 Sk=64 D=32 Snew=1 lens=0:10:63 causal=br seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=4 Sk=64 D=32 Snew=4 lens=0:10:60 causal=br seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=4 Sk=64 D=32 Snew=4 lens=0:10:60 causal=br seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=2 Hkv=2 Sq=3 Sk=80 D=32 Dv=16 Snew=3 lens=0:40:77 causal=br wl=6 layout=bshd dtype=f16 seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=2 Hkv=2 Sq=3 Sk=80 D=32 Dv=16 Snew=3 lens=0:40:77 causal=br wl=6 layout=bshd dtype=f16 seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=8 Hkv=2 Sq=1 Sk=48 D=32 Snew=1 page=16 lens=0:15:16:47 causal=br seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=8 Hkv=2 Sq=1 Sk=48 D=32 Snew=1 page=16 lens=0:15:16:47 causal=br seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=3 Sk=128 D=32 Snew=3 page=64 lens=61:0:125:64 causal=br block_n=64 seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=3 Sk=128 D=32 Snew=3 page=64 lens=61:0:125:64 causal=br block_n=64 seed=11' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=2 Hkv=1 Sq=2 Sk=64 D=32 Snew=2 page=16 lens=14:62 softcap=4 input_scale=3 seed=12' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=2 Hkv=1 Sq=2 Sk=64 D=32 Snew=2 page=16 lens=14:62 softcap=4 input_scale=3 seed=13' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
