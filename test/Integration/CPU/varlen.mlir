// flash.attention (and its gradient, at the end) over a packed (varlen)
// batch, through the naive and the loops lowering (both by the per-sequence
// mask_mod of DecomposeVarlen.cpp), against the double-precision reference
// that cuts each sequence's slices out and runs the dense reference on them
// with that sequence's own lengths (VarlenReference.cpp). Every case packs sequences of different lengths:
// 1, the 16-row tiles -1 / exactly / +1 (the harness's default block_m =
// block_n = 16, and 64-row tiles with block_n = 64), 0 queries and 0 keys
// (O = 0, LSE = +inf), and `pad` rows after the last sequence that no
// sequence owns (O = 0, LSE = +inf; their keys must stay invisible). Q, K
// and V are random everywhere, so a key read across a sequence boundary
// changes the answer.

// Ragged lengths, GQA, no mask beyond the sequences.
// RUN: flashfuse-numerics 'lowering=naive op=varlen Hq=4 Hkv=2 D=32 lens_q=1:15:16:17:0:33:4 lens_k=1:17:16:15:5:31:0 pad=2 seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen Hq=4 Hkv=2 D=32 lens_q=1:15:16:17:0:33:4 lens_k=1:17:16:15:5:31:0 pad=2 seed=3' | FileCheck %s
// Causal top-left with Sq != Sk in each sequence.
// RUN: flashfuse-numerics 'lowering=naive op=varlen Hq=4 Hkv=2 D=32 lens_q=5:17:32:1:15 lens_k=9:15:33:1:40 causal=tl seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen Hq=4 Hkv=2 D=32 lens_q=5:17:32:1:15 lens_k=9:15:33:1:40 causal=tl seed=5' | FileCheck %s
// Causal bottom-right by each sequence's own lengths, Lq < Lk and Lq > Lk
// (the first rows of the latter see no key), and a sequence without keys.
// RUN: flashfuse-numerics 'lowering=naive op=varlen Hq=4 Hkv=2 D=32 lens_q=9:17:33:3:1:6 lens_k=5:31:16:0:17:6 causal=br pad=1 seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen Hq=4 Hkv=2 D=32 lens_q=9:17:33:3:1:6 lens_k=5:31:16:0:17:6 causal=br pad=1 seed=7' | FileCheck %s
// A sliding window alone (top-left), and with causal bottom-right.
// RUN: flashfuse-numerics 'lowering=naive op=varlen Hq=2 Hkv=1 D=32 lens_q=20:7:33:1 lens_k=20:12:31:2 wl=4 wr=2 seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen Hq=2 Hkv=1 D=32 lens_q=20:7:33:1 lens_k=20:12:31:2 wl=4 wr=2 seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=varlen Hq=4 Hkv=2 D=32 lens_q=17:3:40 lens_k=33:16:40 causal=br wl=8 seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen Hq=4 Hkv=2 D=32 lens_q=17:3:40 lens_k=33:16:40 causal=br wl=8 seed=11' | FileCheck %s
// Softcap with large scores and an explicit scale.
// RUN: flashfuse-numerics 'lowering=naive op=varlen Hq=4 Hkv=2 D=32 lens_q=15:1:17 lens_k=16:33:17 softcap=5 input_scale=4 scale=0.3 causal=br seed=12' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen Hq=4 Hkv=2 D=32 lens_q=15:1:17 lens_k=16:33:17 softcap=5 input_scale=4 scale=0.3 causal=br seed=13' | FileCheck %s
// flash-attn's packed layout ([total, H, D] as [1, total, H, D]), MQA and
// Dv != D.
// RUN: flashfuse-numerics 'lowering=naive op=varlen Hq=6 Hkv=1 D=64 Dv=32 layout=bshd lens_q=1:16:17:0 lens_k=3:15:17:4 causal=tl pad=2 seed=14' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen Hq=6 Hkv=1 D=64 Dv=32 layout=bshd lens_q=1:16:17:0 lens_k=3:15:17:4 causal=tl pad=2 seed=15' | FileCheck %s
// f16 and bf16 inputs (f32 statistics and accumulation).
// RUN: flashfuse-numerics 'lowering=naive op=varlen dtype=f16 Hq=4 Hkv=2 D=64 lens_q=15:33:1 lens_k=17:31:5 causal=br seed=16' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen dtype=f16 Hq=4 Hkv=2 D=64 lens_q=15:33:1 lens_k=17:31:5 causal=br seed=17' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive op=varlen dtype=bf16 Hq=4 Hkv=4 D=32 lens_q=16:2:31 lens_k=16:40:1 wl=5 seed=18' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen dtype=bf16 Hq=4 Hkv=4 D=32 lens_q=16:2:31 lens_k=16:40:1 wl=5 seed=19' | FileCheck %s
// 64-row key tiles: sequences of 63, 64 and 65 keys, so that sequence
// boundaries fall inside, on and just past a tile's edge.
// RUN: flashfuse-numerics 'lowering=loops op=varlen Hq=2 Hkv=2 D=32 lens_q=31:32:33 lens_k=63:64:65 causal=br block_m=32 block_n=64 seed=20' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen Hq=2 Hkv=2 D=32 lens_q=63:1:65 lens_k=65:64:63 block_m=32 block_n=64 seed=21' | FileCheck %s
// A single sequence is the dense op.
// RUN: flashfuse-numerics 'lowering=naive op=varlen Hq=2 Hkv=1 D=32 lens_q=37 lens_k=53 causal=br seed=22' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen Hq=2 Hkv=1 D=32 lens_q=37 lens_k=53 causal=br seed=23' | FileCheck %s
// score_mod and mask_mod over a packed batch: b is the sequence, q_idx /
// kv_idx are its local indices (the reference runs each sequence as a
// dense batch of one whose regions see b = the sequence's index);
// batch_slope's bias depends on b, h and j - i, drop_row3 masks each
// sequence's fourth row, document each sequence's 8-token documents.
// RUN: flashfuse-numerics 'lowering=naive op=varlen Hq=4 Hkv=2 D=32 lens_q=5:17:32:1:15 lens_k=9:15:33:1:40 causal=br score_mod=batch_slope mask_mod=drop_row3 pad=2 seed=32' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen Hq=4 Hkv=2 D=32 lens_q=5:17:32:1:15 lens_k=9:15:33:1:40 causal=br score_mod=batch_slope mask_mod=drop_row3 pad=2 seed=33' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen dtype=bf16 Hq=4 Hkv=2 D=32 lens_q=20:0:17:33 lens_k=20:5:16:40 score_mod=alibi mask_mod=document softcap=5 input_scale=4 seed=34' | FileCheck %s
// The gradient (flash.attention_grad with the same operands): dQ, dK, dV
// of each sequence against the dense reference's on its slices; pad rows
// and the rows of a sequence without keys get zero gradients.
// RUN: flashfuse-numerics 'lowering=naive dir=bwd op=varlen Hq=4 Hkv=2 D=32 lens_q=1:15:16:17:0:5 lens_k=1:17:16:15:5:0 pad=2 seed=24' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd op=varlen Hq=4 Hkv=2 D=32 lens_q=1:15:16:17:0:5 lens_k=1:17:16:15:5:0 pad=2 seed=25' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd op=varlen Hq=4 Hkv=2 D=32 lens_q=9:17:33:3 lens_k=5:31:16:0 causal=br seed=26' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd op=varlen Hq=4 Hkv=2 D=32 lens_q=9:17:33:3 lens_k=5:31:16:0 causal=br seed=27' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd op=varlen Hq=6 Hkv=1 D=64 Dv=32 layout=bshd lens_q=20:7:1 lens_k=20:12:2 causal=tl wl=4 softcap=5 input_scale=4 seed=28' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd op=varlen Hq=6 Hkv=1 D=64 Dv=32 layout=bshd lens_q=20:7:1 lens_k=20:12:2 causal=tl wl=4 softcap=5 input_scale=4 seed=29' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd op=varlen dtype=bf16 Hq=4 Hkv=2 D=32 lens_q=15:33:1 lens_k=17:31:5 causal=br seed=30' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd op=varlen dtype=f16 Hq=4 Hkv=2 D=32 lens_q=15:33:1 lens_k=17:31:5 wl=3 wr=1 seed=31' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd op=varlen Hq=4 Hkv=2 D=32 lens_q=9:17:33:3 lens_k=5:31:16:0 causal=br score_mod=batch_slope mask_mod=drop_row3 pad=1 seed=35' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd op=varlen dtype=bf16 Hq=4 Hkv=2 D=32 lens_q=15:33:1 lens_k=17:31:5 score_mod=batch_slope mask_mod=document seed=36' | FileCheck %s

// Dropout: each sequence draws keep(seed, b, h, i', j') at its index b and
// local indices (FlashOps.td), which the reference gives each sequence's
// dense case; the sequences start at rows that are not multiples of 8 or
// 16, so the packed indices would draw other octets (and fail).
// RUN: flashfuse-numerics 'lowering=naive op=varlen Hq=4 Hkv=2 D=32 lens_q=5:17:33:1:0:9 lens_k=9:15:33:1:4:0 causal=br pad=2 dropout=0.2 dropout_seed=0x5eed1234abcd seed=37' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen Hq=4 Hkv=2 D=32 lens_q=5:17:33:1:0:9 lens_k=9:15:33:1:4:0 causal=br pad=2 dropout=0.2 dropout_seed=0x5eed1234abcd seed=38' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops op=varlen dtype=bf16 Hq=2 Hkv=1 D=64 layout=bshd lens_q=20:7:33 lens_k=20:12:31 wl=4 softcap=5 dropout=0.5 dropout_seed=7 seed=39' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd op=varlen Hq=4 Hkv=2 D=32 lens_q=5:17:33:1:0 lens_k=9:15:33:1:4 causal=br pad=1 dropout=0.2 dropout_seed=0x5eed1234abcd seed=40' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd op=varlen Hq=4 Hkv=2 D=32 lens_q=5:17:33:1:0 lens_k=9:15:33:1:4 causal=br pad=1 dropout=0.2 dropout_seed=0x5eed1234abcd seed=41' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd op=varlen dtype=f16 Hq=4 Hkv=4 D=32 lens_q=15:33:1 lens_k=17:31:5 score_mod=batch_slope dropout=0.3 dropout_seed=99 seed=42' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed
