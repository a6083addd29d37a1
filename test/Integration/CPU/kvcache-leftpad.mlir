// flash.attention_kvcache with cache_leftpad (a left-padded batch: each
// sequence's first row), through the naive and the loops lowering, against
// the double-precision reference written from docs/KVCACHE.md. The
// paddings are ragged: 0, negative (hides nothing), a 64-key block -1 /
// exactly / +1, the length itself and past it (no visible key: O = 0,
// LSE = +inf); the rows below each sequence's first hold random data, so
// a padded key attended to changes the answer. Contiguous and paged
// (shuffled pages), with new rows, a window and several query rows.

// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=1 Sk=128 D=32 lens=40:100:128:65:64:70 leftpad=0:-3:63:64:65:70 causal=br block_n=64 seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=1 Sk=128 D=32 lens=40:100:128:65:64:70 leftpad=0:-3:63:64:65:70 causal=br block_n=64 seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=2 Hkv=2 Sq=5 Sk=96 D=32 lens=10:50:96 leftpad=7:3:95 causal=br seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=2 Hkv=2 Sq=5 Sk=96 D=32 lens=10:50:96 leftpad=7:3:95 causal=br seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=1 Sk=64 D=32 Snew=1 lens=0:10:63 leftpad=0:9:30 causal=br page=16 seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=1 Sk=64 D=32 Snew=1 lens=0:10:63 leftpad=0:9:30 causal=br page=16 seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=2 Sk=128 D=32 lens=63:100:128 leftpad=50:90:10 causal=br wl=16 seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=2 Sk=128 D=32 lens=63:100:128 leftpad=50:90:10 causal=br wl=16 softcap=5 seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=6 Hkv=1 Sq=3 Sk=80 D=64 Dv=32 lens=80:17:33 leftpad=79:16:0 dtype=f16 seed=10' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed

// A leftpad list must match the lengths, and belongs to op=kvcache.
// RUN: not flashfuse-numerics 'op=kvcache Sk=64 D=32 lens=3:4 leftpad=1' 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: leftpad=P0:P1:... needs one entry per length
// RUN: not flashfuse-numerics 'op=attention Sk=64 D=32 leftpad=1' 2>&1 | FileCheck %s --check-prefix=OP
// OP: lens, leftpad, rotary, batch_idx, Snew, page and cache=e4m3 need
