"""`python -m flashfuse.bench --ring`: ring attention across the GPUs of
this machine against one GPU.

One process per GPU (NCCL, NVLink multicast off). For each sequence length
every rank holds random zig-zag-sized shards and runs ring_attention
forward, and forward + backward; the time of a step is the slowest rank's
median over CUDA event timings after a 250 ms warm-up. Beside it: the same
pairs with no transfer ("compute only": each rank's own shard stands in for
the one it would have received), whose ratio to the ring's time says how
much of the communication stays hidden; rank 0's profile of one step gives
the NCCL kernels' time and the share of it that ran while an attention
kernel ran. The one-GPU baseline is flashfuse.attention over the whole
sequence on GPU 0 (skipped where it does not fit). Scaling efficiency =
(one-GPU time / ring time) / GPUs.
"""

import json
import os
import tempfile

import torch

from . import distributed as ring
from .bench import time_ms


class _ComputeOnlyRing:
    """The ring's schedule without transfers: a shift hands back what it
    was given (same shapes, so the same pairs run)."""

    def __init__(self, rank, world):
        self.world, self.ranks = world, [rank]

    def shift(self, lanes):
        return lanes

    def wait(self, handle):
        return handle


def _step(run, backward):
    def call(q, k, v, dout):
        if not backward:
            return run(q, k, v)
        leaves = [t.detach().requires_grad_() for t in (q, k, v)]
        out = run(*leaves)
        return torch.autograd.grad(out, leaves, dout)
    return call


def _ring_runner(ring_obj, causal, scale):
    def run(q, k, v):
        return ring._RingAttention.apply(ring_obj, causal, scale, False,
                                         q, k, v)[0]
    return run


def _overlap(prof):
    """(NCCL kernel ms, share of it overlapped by other kernels) of one
    profiled step."""
    kernels = [(e.name, e.time_range.start, e.time_range.end)
               for e in prof.events()
               if e.device_type == torch.autograd.DeviceType.CUDA]
    comm = [(s, e) for n, s, e in kernels if "nccl" in n.lower()]
    busy = sorted((s, e) for n, s, e in kernels if "nccl" not in n.lower())
    merged = []
    for s, e in busy:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    total = sum(e - s for s, e in comm)
    hidden = sum(max(0, min(e, me) - max(s, ms))
                 for s, e in comm for ms, me in merged)
    return total / 1e3, (hidden / total if total else None)


def _worker(rank, world, init_file, out_file, cfg):
    import torch.distributed as dist
    ring.multicast_off_environment()
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"file://{init_file}",
                            rank=rank, world_size=world,
                            device_id=torch.device("cuda", rank),
                            pg_options=ring.nccl_options(
                                cfg["high_priority"]))
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[cfg["dtype"]]
    b, hq, hkv, d = cfg["batch"], cfg["heads"], cfg["heads_kv"], cfg["head_dim"]
    causal, scale = cfg["causal"], d ** -0.5
    rows = []

    def slowest(ms):
        t = torch.tensor([ms], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return t.item()

    def timed(fn, inputs):
        dist.barrier()
        return slowest(time_ms(fn, inputs, cfg["warmup"], cfg["reps"],
                               cfg["warmup_ms"]))

    for seqlen in cfg["seqlens"]:
        s_local = seqlen // world
        inputs = [tuple(torch.randn(b, h, s_local, d, device="cuda",
                                    dtype=dtype) for h in (hq, hkv, hkv, hq))
                  for _ in range(2)]
        row = {"seqlen": seqlen, "gpus": world}
        for backward in (False, True):
            key = "fwd_bwd" if backward else "fwd"
            row[f"{key}_ms"] = timed(_step(_ring_runner(
                ring._ProcessGroupRing(None), causal, scale), backward), inputs)
            row[f"{key}_compute_ms"] = timed(_step(_ring_runner(
                _ComputeOnlyRing(rank, world), causal, scale), backward),
                inputs)
        step = _step(_ring_runner(ring._ProcessGroupRing(None), causal,
                                  scale), True)
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            step(*inputs[0])
            torch.cuda.synchronize()
        row["nccl_ms"], row["nccl_hidden"] = _overlap(prof)
        del inputs
        torch.cuda.empty_cache()
        dist.barrier()
        if rank == 0:
            row.update(_single_gpu(cfg, seqlen, dtype))
            rows.append(row)
        dist.barrier()
    if rank == 0:
        with open(out_file, "w") as f:
            json.dump(rows, f)
    dist.destroy_process_group()


def _single_gpu(cfg, seqlen, dtype):
    from .functional import attention
    b, hq, hkv, d = cfg["batch"], cfg["heads"], cfg["heads_kv"], cfg["head_dim"]
    out = {}
    try:
        inputs = [tuple(torch.randn(b, h, seqlen, d, device="cuda",
                                    dtype=dtype) for h in (hq, hkv, hkv, hq))]

        def run(q, k, v):
            return attention(q, k, v, is_causal=cfg["causal"],
                             enable_gqa=hq != hkv)
        for backward in (False, True):
            key = "fwd_bwd" if backward else "fwd"
            out[f"{key}_1gpu_ms"] = time_ms(_step(run, backward), inputs,
                                            cfg["warmup"], cfg["reps"],
                                            cfg["warmup_ms"])
    except torch.OutOfMemoryError:
        out["error"] = "one GPU: out of memory"
    torch.cuda.empty_cache()
    return out


def run_ring(args):
    import torch.multiprocessing as mp
    world = args.ring_gpus or torch.cuda.device_count()
    cfg = {"dtype": args.dtypes[0], "batch": args.ring_batch,
           "heads": args.ring_heads, "heads_kv": args.ring_heads_kv,
           "head_dim": args.ring_head_dim, "causal": args.causal[-1],
           "seqlens": args.ring_seqlens, "warmup": args.warmup,
           "warmup_ms": args.warmup_ms, "reps": args.reps,
           "high_priority": not args.ring_normal_priority}
    for s in cfg["seqlens"]:
        if s % (2 * world):
            raise SystemExit(f"--ring-seqlens: {s} is not divisible by "
                             f"{2 * world} (zig-zag shards over {world} GPUs)")
    ring.multicast_off_environment()
    with tempfile.TemporaryDirectory() as tmp:
        out_file = os.path.join(tmp, "rows.json")
        mp.spawn(_worker, args=(world, os.path.join(tmp, "init"), out_file,
                                cfg), nprocs=world, join=True)
        with open(out_file) as f:
            rows = json.load(f)
    for row in rows:
        tokens = cfg["batch"] * row["seqlen"]
        for key in ("fwd", "fwd_bwd"):
            row[f"{key}_tokens_per_s"] = tokens / row[f"{key}_ms"] * 1e3
            row[f"{key}_hidden"] = row[f"{key}_compute_ms"] / row[f"{key}_ms"]
            one = row.get(f"{key}_1gpu_ms")
            row[f"{key}_speedup"] = one / row[f"{key}_ms"] if one else None
            row[f"{key}_efficiency"] = (row[f"{key}_speedup"] / world
                                        if one else None)
    return cfg, rows


def table(cfg, rows):
    head = (f"ring attention, {rows[0]['gpus'] if rows else '?'} GPUs, "
            f"{cfg['dtype']}, B={cfg['batch']}, H={cfg['heads']}/"
            f"{cfg['heads_kv']}, D={cfg['head_dim']}, "
            f"{'causal' if cfg['causal'] else 'non-causal'}, NCCL on a "
            f"{'high' if cfg['high_priority'] else 'normal'}-priority "
            "stream")
    lines = [head, "| S | pass | ms | tokens/s | 1 GPU ms | speedup | "
             "efficiency | compute-only / ring |",
             "|---|---|---|---|---|---|---|---|"]
    fmt = lambda x, f: "-" if x is None else format(x, f)
    for r in rows:
        for key, name in (("fwd", "fwd"), ("fwd_bwd", "fwd+bwd")):
            lines.append(
                f"| {r['seqlen']} | {name} | {r[f'{key}_ms']:.2f} | "
                f"{r[f'{key}_tokens_per_s']:.0f} | "
                f"{fmt(r.get(f'{key}_1gpu_ms'), '.2f')} | "
                f"{fmt(r[f'{key}_speedup'], '.2f')} | "
                f"{fmt(r[f'{key}_efficiency'], '.2f')} | "
                f"{r[f'{key}_hidden']:.2f} |")
        hidden = r["nccl_hidden"]
        lines.append(f"|   | NCCL kernels in one fwd+bwd step: "
                     f"{r['nccl_ms']:.2f} ms, "
                     f"{fmt(None if hidden is None else 100 * hidden, '.0f')}"
                     f"% overlapped by attention kernels (rank 0) |||||||")
    return "\n".join(lines)

