// flash.attention_kvcache with cache_batch_idx (flash-attn's: sequence b's
// rows are row cache_batch_idx[b] of a contiguous pool of Bc sequences'
// caches), through the naive and the loops lowering, against the reference
// written from docs/KVCACHE.md. Pools larger than the batch (rows no
// sequence names keep their random values, so a read of the wrong row
// fails), indices in any order, one row named twice when nothing is
// appended, new rows written into the named rows (the whole pool is
// compared), lengths 0, 1 and the capacity, left padding, causal and not,
// windows, ALiBi, rotary, GQA, layouts, f16 and an FP8 pool.

// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=1 Sk=64 D=32 lens=40:0:64 batch_idx=4:0:2 cache_batch=5 causal=br seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=1 Sk=64 D=32 lens=40:1:64 batch_idx=3:3:1 cache_batch=4 causal=br seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=2 Sk=64 D=32 Snew=2 lens=40:0:62 batch_idx=2:5:0 cache_batch=6 causal=br seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=1 Sq=3 Sk=64 D=32 Snew=1 lens=13:50:7 leftpad=2:40:0 batch_idx=1:2:0 causal=br wl=8 seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=2 Hkv=2 Sq=2 Sk=64 D=32 lens=10:33 batch_idx=1:0 cache_batch=3 alibi=2 layout=bshd seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=1 Sk=64 D=32 Snew=1 lens=5:60 batch_idx=0:2 cache_batch=3 causal=br rotary=half dtype=f16 seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=1 Sk=64 D=32 Snew=1 lens=7:31:62 batch_idx=2:0:3 cache_batch=4 causal=br dtype=bf16 cache=e4m3 descale=head seed=8' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed

// The harness holds the op's contract: indices in the pool, distinct where
// rows are appended, and a contiguous cache.
// RUN: not flashfuse-numerics 'op=kvcache Sk=64 D=32 lens=3:4 batch_idx=0:2' 2>&1 | FileCheck %s --check-prefix=RULES
// RUN: not flashfuse-numerics 'op=kvcache Sk=64 D=32 Snew=1 lens=3:4 batch_idx=1:1 cache_batch=3' 2>&1 | FileCheck %s --check-prefix=RULES
// RUN: not flashfuse-numerics 'op=kvcache Sk=64 D=32 lens=3:4 page=16 batch_idx=0:1' 2>&1 | FileCheck %s --check-prefix=RULES
// RULES: batch_idx=I0:I1:.. needs one index per length, each in [0, cache_batch), distinct with Snew > 0, and a contiguous cache
// RUN: not flashfuse-numerics 'op=kvcache Sk=64 D=32 lens=3:4 cache_batch=3' 2>&1 | FileCheck %s --check-prefix=POOL
// POOL: cache_batch needs batch_idx
