// flash.attention_kvcache over an FP8 (f8E4M3FN) cache with k/v descales
// (docs/KVCACHE.md "FP8 cache") in both CPU lowerings against the
// harness's double reference of the dequantised cache
// (K = k_descale[b, h / G] * K8, V likewise; attention in f32, O in Q's
// type). Cache codes span e4m3's range (|x| <= 448) with random positive
// descales, per kv head or per tensor. Ragged lengths including 0, 1 and
// block multiples +-1 (block_n 16 or 64), shuffled pages (16 and 64 rows),
// GQA, f16 and bf16 queries, causal, a window and a softcap, BSHD.
//
// With new rows (Snew > 0), the rows are quantised into the cache as they
// are appended, e4m3(clamp(x * (1 / d), -448, 448)); the whole updated
// caches must equal the reference's code for code (their tolerance is 0),
// so a row quantised without its descale, unsaturated or written to the
// wrong place fails. The new rows' magnitudes make some of them saturate.

// Contiguous, no new rows.
// RUN: flashfuse-numerics 'lowering=naive op=kvcache cache=e4m3 dtype=bf16 Hq=4 Hkv=2 Sq=1 Sk=64 D=32 lens=0:1:15:16:17:64 causal=br seed=1' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache cache=e4m3 dtype=bf16 Hq=4 Hkv=2 Sq=1 Sk=64 D=32 lens=0:1:15:16:17:64 causal=br seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache cache=e4m3 dtype=f16 descale=tensor Hq=8 Hkv=1 Sq=3 Sk=130 D=64 lens=3:63:64:65:129 seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache cache=e4m3 dtype=f16 descale=tensor Hq=8 Hkv=1 Sq=3 Sk=130 D=64 lens=3:63:64:65:129 block_n=64 seed=4' | FileCheck %s
// With new rows, contiguous (one sequence filled to capacity), BSHD.
// RUN: flashfuse-numerics 'lowering=naive op=kvcache cache=e4m3 dtype=bf16 Hq=4 Hkv=2 Sq=1 Sk=64 D=32 Snew=1 lens=0:10:63 causal=br seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache cache=e4m3 dtype=bf16 Hq=4 Hkv=2 Sq=1 Sk=64 D=32 Snew=1 lens=0:10:63 causal=br seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache cache=e4m3 dtype=f16 Hq=2 Hkv=2 Sq=3 Sk=80 D=32 Dv=16 Snew=3 lens=0:40:77 causal=br wl=6 layout=bshd seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache cache=e4m3 dtype=f16 Hq=2 Hkv=2 Sq=3 Sk=80 D=32 Dv=16 Snew=3 lens=0:40:77 causal=br wl=6 layout=bshd seed=8' | FileCheck %s
// Paged (pages handed out in a shuffled order, spare pages nobody owns),
// with and without new rows, per head and per tensor, GQA 4 and 8.
// RUN: flashfuse-numerics 'lowering=naive op=kvcache cache=e4m3 dtype=bf16 Hq=8 Hkv=2 Sq=1 Sk=48 D=32 page=16 lens=0:1:16:47 causal=br seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache cache=e4m3 dtype=bf16 Hq=8 Hkv=2 Sq=1 Sk=48 D=32 page=16 lens=0:1:16:47 causal=br seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache cache=e4m3 dtype=bf16 Hq=8 Hkv=1 Sq=1 Sk=48 D=32 Snew=1 page=16 lens=0:15:16:47 causal=br seed=11' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache cache=e4m3 dtype=bf16 Hq=8 Hkv=1 Sq=1 Sk=48 D=32 Snew=1 page=16 lens=0:15:16:47 causal=br seed=12' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=kvcache cache=e4m3 dtype=f16 descale=tensor Hq=4 Hkv=2 Sq=3 Sk=128 D=32 Snew=3 page=64 lens=61:0:125:64 causal=br block_n=64 seed=13' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache cache=e4m3 dtype=f16 descale=tensor Hq=4 Hkv=2 Sq=3 Sk=128 D=32 Snew=3 page=64 lens=61:0:125:64 causal=br block_n=64 seed=14' | FileCheck %s
// A softcap with large scores, so that the cap bites.
// RUN: flashfuse-numerics 'lowering=naive op=kvcache cache=e4m3 dtype=bf16 Hq=2 Hkv=1 Sq=2 Sk=64 D=32 Snew=2 page=16 lens=14:62 softcap=4 input_scale=3 seed=15' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=kvcache cache=e4m3 dtype=bf16 Hq=2 Hkv=1 Sq=2 Sk=64 D=32 Snew=2 page=16 lens=14:62 softcap=4 input_scale=3 seed=16' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed

// The descales are visible: the same cases with the reference's descales
// made per tensor (its first factor) while the op reads them per head fail
// on O, and a reference that appends new rows without quantising them
// fails on the caches. (ref_descale and ref_quantize exist for these
// counter-cases only.)
// RUN: not flashfuse-numerics 'lowering=naive op=kvcache cache=e4m3 dtype=bf16 Hq=4 Hkv=2 Sq=1 Sk=64 D=32 lens=0:1:15:16:17:64 causal=br ref_descale=first seed=1' | FileCheck %s --check-prefix=DESCALE
// RUN: not flashfuse-numerics 'lowering=loops op=kvcache cache=e4m3 dtype=bf16 Hq=8 Hkv=2 Sq=1 Sk=48 D=32 page=16 lens=0:1:16:47 causal=br ref_descale=first seed=10' | FileCheck %s --check-prefix=DESCALE
// DESCALE: O {{.*}} <-- over tolerance
// DESCALE: FAIL: case 1
// RUN: not flashfuse-numerics 'lowering=naive op=kvcache cache=e4m3 dtype=bf16 Hq=4 Hkv=2 Sq=1 Sk=64 D=32 Snew=1 lens=0:10:63 causal=br ref_quantize=0 seed=5' | FileCheck %s --check-prefix=UNQUANTISED
// RUN: not flashfuse-numerics 'lowering=loops op=kvcache cache=e4m3 dtype=bf16 Hq=8 Hkv=1 Sq=1 Sk=48 D=32 Snew=1 page=16 lens=0:15:16:47 causal=br ref_quantize=0 seed=12' | FileCheck %s --check-prefix=UNQUANTISED
// UNQUANTISED: Kc {{.*}} <-- over tolerance
// UNQUANTISED: Vc {{.*}} <-- over tolerance
// UNQUANTISED: FAIL: case 1

// The harness runs the op inside its contract; the verifier's refusals are
// lit-tested in test/Dialect/Flash/invalid-kvcache-fp8.mlir.
// RUN: not flashfuse-numerics 'op=kvcache cache=e4m3 dtype=f32 lens=3' | FileCheck %s --check-prefix=F32
// RUN: not flashfuse-numerics 'cache=e4m3 dtype=bf16' | FileCheck %s --check-prefix=NOTKV
// F32: error: cache=e4m3 takes dtype=f16 or bf16
// NOTKV: error: lens, leftpad, rotary, batch_idx, Snew, page and cache=e4m3 need
