// flash.attention_kvcache over a paged cache (block_table): the pool's
// pages are handed out in a random order, and a few spare pages that no
// sequence owns hold random data, so a wrong page index changes the
// answer. Page sizes 16 and 64; lengths 0, 1, page and block multiples +-1,
// full capacity; GQA, window, softcap, bf16, Sq > 1.

// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=8 Hkv=2 Sq=1 Sk=64 D=32 page=16 lens=0:1:15:16:17:64 causal=br seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=8 Hkv=2 Sq=1 Sk=64 D=32 page=16 lens=0:1:15:16:17:64 causal=br seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=3 Sk=128 D=32 page=64 lens=1:63:64:65:127:128 causal=br block_n=64 seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=3 Sk=128 D=32 page=64 lens=1:63:64:65:127:128 causal=br block_n=64 seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=2 Hkv=1 Sq=4 Sk=96 D=32 Dv=16 page=16 lens=90:7:48 causal=br wl=20 seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=2 Hkv=1 Sq=4 Sk=96 D=32 Dv=16 page=16 lens=90:7:48 causal=br wl=20 seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=4 Sq=2 Sk=128 D=64 page=64 lens=100:128 softcap=8 input_scale=3 dtype=bf16 seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=4 Sq=2 Sk=128 D=64 page=64 lens=100:128 softcap=8 input_scale=3 dtype=bf16 seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=2 Sk=48 D=32 page=16 lens=30:47 layout=bshd causal=br spare_pages=5 seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=2 Sk=48 D=32 page=16 lens=30:47 layout=bshd causal=br spare_pages=5 seed=11' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
