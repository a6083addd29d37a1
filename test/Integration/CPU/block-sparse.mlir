// Block-sparse flash.attention (and its gradient, at the end) through the
// naive and the loops lowering (DecomposeBlockSparse.cpp: the lists as a
// mask_mod; the loops forward walks only the listed key blocks) against
// the double-precision reference, which reads the lists one slot at a time
// and materialises the mask (Reference.cpp). The lists are random per
// seed: each key block of a row listed with probability `density`, as full
// with probability `full`, rows empty with probability `empty_rows`, and
// junk (out-of-range indices, -1, repeats) in the slots past each row's
// count. Sq and Sk are not multiples of the block sizes, so the last query
// and key blocks are short.

// Partial and full blocks, GQA, 16 x 16 blocks, short last blocks.
// RUN: flashfuse-numerics 'lowering=naive B=2 Hq=4 Hkv=2 Sq=37 Sk=53 D=32 sparse=16x16 density=0.5 full=0.3 seed=1' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops B=2 Hq=4 Hkv=2 Sq=37 Sk=53 D=32 sparse=16x16 density=0.5 full=0.3 seed=2' | FileCheck %s
// Causal: the band holds in every block, full blocks (listed anywhere,
// across and above the diagonal too) included.
// RUN: flashfuse-numerics 'lowering=naive B=1 Hq=2 Hkv=1 Sq=40 Sk=40 D=32 sparse=8x8 density=0.6 full=0.5 causal=tl seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops B=1 Hq=2 Hkv=1 Sq=40 Sk=40 D=32 sparse=8x8 density=0.6 full=0.5 causal=tl seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops B=1 Hq=2 Hkv=1 Sq=23 Sk=61 D=32 sparse=8x16 density=0.5 full=0.5 causal=br wl=20 seed=5' | FileCheck %s
// Lists broadcast over the batch, the heads, or both.
// RUN: flashfuse-numerics 'lowering=naive B=2 Hq=2 Hkv=2 Sq=33 Sk=47 D=32 sparse=16x8 sparse_bcast=11 seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops B=2 Hq=2 Hkv=2 Sq=33 Sk=47 D=32 sparse=16x8 sparse_bcast=1x seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops B=3 Hq=2 Hkv=1 Sq=33 Sk=47 D=32 sparse=16x8 sparse_bcast=x1 seed=8' | FileCheck %s
// A mask_mod (documents of 8 tokens) that partial blocks apply and full
// blocks skip (the lists' promise, here false: the reference follows the
// contract, not the mask_mod), with and without full blocks, and a window.
// RUN: flashfuse-numerics 'lowering=naive B=1 Hq=2 Hkv=2 Sq=50 Sk=50 D=32 sparse=16x16 full=0 density=0.7 mask_mod=document seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops B=1 Hq=2 Hkv=2 Sq=50 Sk=50 D=32 sparse=16x16 full=0 density=0.7 mask_mod=document wl=6 seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive B=1 Hq=2 Hkv=2 Sq=50 Sk=50 D=32 sparse=16x16 full=0.5 density=0.7 mask_mod=document seed=22' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops B=1 Hq=2 Hkv=2 Sq=50 Sk=50 D=32 sparse=16x16 full=0.5 density=0.7 mask_mod=document causal=tl seed=23' | FileCheck %s
// Every row empty: O = 0 and LSE = +inf everywhere; every block listed
// (full or partial): the dense op.
// RUN: flashfuse-numerics 'lowering=naive B=1 Hq=2 Hkv=1 Sq=20 Sk=30 D=32 sparse=8x8 empty_rows=1 seed=11' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops B=1 Hq=2 Hkv=1 Sq=20 Sk=30 D=32 sparse=8x8 empty_rows=1 seed=12' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops B=1 Hq=2 Hkv=1 Sq=45 Sk=45 D=32 sparse=16x16 density=1 empty_rows=0 full=0.5 causal=tl seed=13' | FileCheck %s
// Key tiles smaller than and not dividing the key blocks (block_n = 12 in
// 32-key blocks; block_m is the query block's 16), and one bigger.
// RUN: flashfuse-numerics 'lowering=loops B=1 Hq=2 Hkv=2 Sq=40 Sk=90 D=32 sparse=16x32 block_n=12 seed=14' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops B=1 Hq=2 Hkv=2 Sq=40 Sk=90 D=32 sparse=16x8 block_n=24 seed=15' | FileCheck %s
// 16-bit inputs, softcap, a score_mod (applied in full blocks too), a
// bias, dropout, BSHD.
// RUN: flashfuse-numerics 'lowering=naive dtype=bf16 B=1 Hq=4 Hkv=2 Sq=33 Sk=41 D=64 sparse=16x16 softcap=5 input_scale=4 score_mod=alibi seed=16' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dtype=f16 B=1 Hq=4 Hkv=2 Sq=33 Sk=41 D=64 sparse=16x16 softcap=5 input_scale=4 score_mod=alibi layout=bshd seed=17' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops B=2 Hq=2 Hkv=2 Sq=30 Sk=30 D=32 sparse=8x8 bias=1x1x dropout=0.2 seed=18' | FileCheck %s
// The gradient (flash.attention_grad with the same lists): dQ, dK, dV
// against the reference's with the same materialised mask.
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=2 Hq=4 Hkv=2 Sq=37 Sk=53 D=32 sparse=16x16 seed=19' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=2 Hq=4 Hkv=2 Sq=37 Sk=53 D=32 sparse=16x16 causal=tl seed=20' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd dtype=bf16 B=1 Hq=2 Hkv=1 Sq=40 Sk=33 D=32 sparse=8x16 full=0 mask_mod=document sparse_bcast=1x seed=21' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
