// flash.attention_kvcache with rotary_cos / rotary_sin (flash-attn's rotary
// embedding in flash_attn_with_kvcache): key_new's row t is rotated at cache
// row cache_seqlens[b] + t before it is appended, the query at
// cache_seqlens[b] + i when causal or windowed, else every row at
// cache_seqlens[b]; through the naive and the loops lowering, against the
// reference written from docs/KVCACHE.md. GPT-NeoX halves and GPT-J
// interleaved pairs, rotary_dim below D (the tail untouched) and equal to
// it, tables with more rows than the cache, ragged lengths (0, 1, the
// capacity's last row), paged caches with shuffled pages, left padding,
// GQA, several new rows, layouts, f16 and bf16, and an FP8 cache (the
// rotated row is what is quantised, code for code). The caches are
// compared whole, so a new row rotated at the wrong position fails.

// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=1 Sk=64 D=32 Snew=1 lens=0:20:63 causal=br rotary=half seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=1 Sk=64 D=32 Snew=1 lens=0:20:63 causal=br rotary=interleaved seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=1 Sq=3 Sk=64 D=32 Snew=3 lens=1:30:61 causal=br rotary=half rotary_dim=16 rotary_rows=100 seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=2 Sk=64 D=32 Snew=2 lens=5:40:9 rotary=interleaved rotary_dim=8 seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=2 Hkv=2 Sq=2 Sk=64 D=32 Snew=2 lens=5:40:9 wl=8 rotary=half layout=bshd seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=1 Sk=64 D=32 Snew=1 lens=0:10:63 leftpad=0:9:30 causal=br page=16 rotary=half seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=2 Sk=64 D=64 Dv=32 Snew=2 lens=3:33:62 causal=br page=16 dtype=bf16 rotary=interleaved rotary_dim=32 seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=1 Sk=64 D=32 Snew=1 lens=7:12:50 causal=br dtype=f16 rotary=half alibi=1 softcap=5 seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache Hq=4 Hkv=2 Sq=1 Sk=64 D=32 Snew=1 lens=7:12:50 causal=br dtype=bf16 cache=e4m3 descale=head rotary=half seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache Hq=4 Hkv=2 Sq=2 Sk=64 D=32 Snew=2 lens=0:31:62 causal=br page=16 dtype=f16 cache=e4m3 descale=tensor rotary=interleaved rotary_dim=16 seed=11' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed

// The harness holds the op's rules.
// RUN: not flashfuse-numerics 'op=kvcache Sk=64 D=32 lens=3:4 rotary=half' 2>&1 | FileCheck %s --check-prefix=RULES
// RUN: not flashfuse-numerics 'op=kvcache Sk=64 D=32 Snew=1 lens=3:4 rotary=half rotary_dim=34' 2>&1 | FileCheck %s --check-prefix=RULES
// RUN: not flashfuse-numerics 'op=kvcache Sk=64 D=32 Snew=1 lens=3:4 rotary=half rotary_rows=63' 2>&1 | FileCheck %s --check-prefix=RULES
// RULES: rotary needs Snew > 0, an even rotary_dim in (0, D] and rotary_rows >= Sk
// RUN: not flashfuse-numerics 'op=attention Sk=64 D=32 rotary=half' 2>&1 | FileCheck %s --check-prefix=OP
// OP: lens, leftpad, rotary, batch_idx, Snew, page and cache=e4m3 need op=kvcache
