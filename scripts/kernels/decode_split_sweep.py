#!/usr/bin/env python3
"""Decode steps at forced split counts beside SDPA, graph-replayed.

    SHAPES="HQ/HKV/L/PAGE,..." [SPLITS=0,32,..] [B=1] [HD=128] [ROUNDS=3]
    [WARM_MS=100] [COLD=1] [TAG=..] decode_split_sweep.py

For each shape (bf16, one new token, every sequence at L keys; PAGE 0 = a
contiguous cache) SDPA (default, cuDNN, FlashAttention-2 backends) and
flashfuse.attention_with_kvcache at each split count (0: the runtime's),
each replayed from a CUDA graph, ROUNDS interleaved rounds, us a step.
Each forced count is first checked against one split (2e-2). COLD=1 puts
enough copies of the caches in each graph that a replay's working set is
4x the GPU's L2 (bench.decode_cold_copies), so every step reads its
cache from HBM; otherwise one cache is replayed, which stays in L2 below
about 50 MB. The kernels are
FLASHFUSE_KERNEL_DIR's (one library a process to compare tiles).
docs/PERF.md runs 568-570.
"""
import os
import statistics
import time
import torch
from flashfuse.bench import decode_cold_copies, decode_step_tensors, graphed
from flashfuse.kvcache import attention_with_kvcache
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.functional import scaled_dot_product_attention as sdpa

D = int(os.environ.get("HD", "128"))
B = int(os.environ.get("B", "1"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
WARM = float(os.environ.get("WARM_MS", "100")) / 1e3
SPLITS = [int(x) for x in os.environ.get("SPLITS", "0,32,64,96,128").split(",")]
SHAPES = [tuple(int(y) for y in x.split("/")) for x in os.environ["SHAPES"].split(",")]
tag = os.environ.get("TAG", "")

def time_us(fn, reps=100, rounds=5):
    end = time.perf_counter() + WARM
    while time.perf_counter() < end:
        fn()
    ts = []
    for _ in range(rounds):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            fn()
        b.record(); b.synchronize()
        ts.append(a.elapsed_time(b) / reps * 1e3)
    return statistics.median(ts)

COLD = int(os.environ.get("COLD", "0"))


def graphed_in_turn(fns):
    """(one CUDA graph of every fn in turn, how many)."""
    def in_turn():
        for f in fns:
            f()
    return graphed(in_turn), len(fns)


for hq, hkv, L, page in SHAPES:
    gb = 2 * B * hkv * L * D * 2 / 1e3
    # COLD: enough copies of the caches that a replay's working set is
    # 4x the L2, so each step reads its cache from HBM (as bench.py's
    # --decode-cold).
    n = decode_cold_copies(B, hkv, L, D, torch.bfloat16) if COLD else 1
    sets = [decode_step_tensors(B, hq, hkv, L, D, torch.bfloat16, page) for _ in range(n)]
    q, k, v, lengths, table = sets[0]
    sks = [(st[0].transpose(1, 2), torch.randn(B, hkv, L, D, device="cuda", dtype=torch.bfloat16),
            torch.randn(B, hkv, L, D, device="cuda", dtype=torch.bfloat16)) for st in sets]
    def sd(backend):
        def one(qs, ks, vs):
            def run():
                if backend is None:
                    return sdpa(qs, ks, vs, enable_gqa=True)
                with sdpa_kernel(backend):
                    return sdpa(qs, ks, vs, enable_gqa=True)
            return run
        return [one(*t) for t in sks]
    meths = {}
    for name, be in (("sdpa", None), ("cudnn", SDPBackend.CUDNN_ATTENTION), ("fa2", SDPBackend.FLASH_ATTENTION)):
        try:
            meths[name] = graphed_in_turn(sd(be))
        except Exception as e:
            print("skip", name, e)
    ref = attention_with_kvcache(q, k, v, lengths, block_table=table, num_splits=1).float()
    for s in SPLITS:
        fns = [lambda s=s, st=st: attention_with_kvcache(st[0], st[1], st[2], st[3], block_table=st[4], num_splits=s)
               for st in sets]
        try:
            err = (fns[0]().float() - ref).abs().max().item()
            meths[f"s{s}"] = graphed_in_turn(fns)
            if err > 2e-2:
                print(f"  ERR s{s} {err}")
        except Exception as e:
            print("skip", s, str(e)[:200])
    times = {m: [] for m in meths}
    for _ in range(ROUNDS):
        for m, (g, calls) in meths.items():
            times[m].append(time_us(g.replay, reps=max(5, 100 // calls)) / calls)
    med = {m: statistics.median(t) for m, t in times.items()}
    best_sdpa = min(med[m] for m in ("sdpa", "cudnn", "fa2") if m in med)
    row = " ".join(f"{m}={t:.1f}" for m, t in med.items())
    ours = {m: t for m, t in med.items() if m.startswith("s") and m[1:].isdigit()}
    bm = min(ours, key=ours.get)
    print(f"{tag}{' cold' if COLD else ''} B{B} {hq}/{hkv} L{L} p{page}: {row} | bestSDPA {best_sdpa:.1f} ({gb/best_sdpa:.0f} GB/s) s0/sdpa {best_sdpa/med['s0']:.2f} best {bm} {best_sdpa/ours[bm]:.2f}", flush=True)
