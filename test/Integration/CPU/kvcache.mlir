// flash.attention_kvcache over a contiguous cache, through the naive and
// the loops lowering (both by flash-decompose-kvcache), against the
// double-precision reference written from docs/KVCACHE.md. Lengths are
// ragged: 0 (O = 0, LSE = +inf), 1, a 64-key block -1 / exactly / +1, and
// the full capacity; every row past a sequence's length holds random data,
// so a key read past it changes the answer. block_n = 64 puts the block
// boundaries at 64 and 128.

// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=1 Sk=128 D=32 lens=0:1:63:64:65:128 causal=br block_n=64 seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=1 Sk=128 D=32 lens=0:1:63:64:65:128 causal=br block_n=64 seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=1 Sk=128 D=32 lens=0:1:63:64:65:128 block_n=64 seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=1 Sk=128 D=32 lens=0:1:63:64:65:128 block_n=64 seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=2 Hkv=2 Sq=7 Sk=128 D=32 lens=0:5:63:64:65:128 causal=br block_n=64 seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=2 Hkv=2 Sq=7 Sk=128 D=32 lens=0:5:63:64:65:128 causal=br block_n=64 seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=6 Hkv=1 Sq=3 Sk=80 D=64 Dv=32 lens=80:17:33 causal=br dtype=f16 seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=6 Hkv=1 Sq=3 Sk=80 D=64 Dv=32 lens=80:17:33 causal=br dtype=f16 seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=4 Sk=128 D=32 lens=63:64:65:100 causal=br wl=16 block_n=64 seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=4 Sk=128 D=32 lens=63:64:65:100 causal=br wl=16 block_n=64 seed=11' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=2 Hkv=1 Sq=5 Sk=96 D=32 lens=3:40:96 wl=8 wr=2 seed=12' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=2 Hkv=1 Sq=5 Sk=96 D=32 lens=3:40:96 wl=8 wr=2 seed=13' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=2 Sk=64 D=32 lens=31:64 causal=br softcap=5 input_scale=4 scale=0.3 seed=14' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=2 Sk=64 D=32 lens=31:64 causal=br softcap=5 input_scale=4 scale=0.3 seed=15' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=3 Sk=50 D=32 lens=0:49:50 causal=br layout=bshd seed=16' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=3 Sk=50 D=32 lens=0:49:50 causal=br layout=bshd seed=17' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
