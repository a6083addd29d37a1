#!/usr/bin/env python3
"""Where a split decoding step's GPU time goes, node by node.

    profile_decode_splits.py [--shapes PAGE,B,L ...] [--splits N ...]

For each shape (GQA 32/8, D = 128, bf16, one new token, every sequence at
L keys; PAGE 0 = a contiguous cache) and split count (0 = the runtime's
choice, decode_splits.h), one flashfuse.attention_with_kvcache step is
captured in a CUDA graph and replayed: the graph's time per replay (CUDA
events, median of 5 x 200), and from torch.profiler over 50 replays each
node's duration (the split counters' memset, the decode kernel) and the
gap between a step's nodes (medians). Needs the runtime and the decode
kernels (FLASHFUSE_KERNEL_DIR), like the GPU tests.
"""
import argparse
import statistics

import torch
from torch.profiler import ProfilerActivity, profile

from flashfuse.bench import decode_step_tensors, graphed
from flashfuse.kvcache import attention_with_kvcache


def replay_us(graph, reps=200, rounds=5):
    for _ in range(reps):
        graph.replay()
    times = []
    for _ in range(rounds):
        start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        start.record()
        for _ in range(reps):
            graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / reps * 1e3)
    return statistics.median(times)


def timeline(graph, replays=50):
    """({node name: median us}, nodes a step, median gap between a step's
    consecutive nodes in us)."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(replays):
            graph.replay()
        torch.cuda.synchronize()
    events = sorted((e for e in prof.events()
                     if e.device_type == torch.autograd.DeviceType.CUDA),
                    key=lambda e: e.time_range.start)
    durations = {}
    for e in events:
        durations.setdefault(e.name[:40], []).append(
            e.time_range.end - e.time_range.start)
    nodes = max(1, len(events) // replays)
    gaps = [events[i + 1].time_range.start - events[i].time_range.end
            for i in range(len(events) - 1) if (i + 1) % nodes]
    return ({n: statistics.median(v) for n, v in durations.items()}, nodes,
            statistics.median(gaps) if gaps else 0.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shapes", nargs="+",
                    default=["0,1,512", "0,1,2048", "0,1,8192", "0,4,4096",
                             "0,8,2048", "16,1,2048"])
    ap.add_argument("--splits", nargs="+", type=int,
                    default=[1, 0, 2, 4, 8, 16])
    args = ap.parse_args()
    dt, hq, hkv, d = torch.bfloat16, 32, 8, 128
    for spec in args.shapes:
        page, b, length = (int(x) for x in spec.split(","))
        q, k, v, lengths, table = decode_step_tensors(b, hq, hkv, length, d,
                                                      dt, page)
        for splits in args.splits:
            if splits > length // 128:  # more splits than 128-key blocks
                continue
            graph = graphed(lambda: attention_with_kvcache(
                q, k, v, lengths, block_table=table, num_splits=splits))
            total = replay_us(graph)
            nodes, count, gap = timeline(graph)
            desc = "  ".join(f"{n}: {t:.1f}" for n, t in nodes.items())
            print(f"page={page} B={b} L={length} splits={splits or 'auto'}: "
                  f"graph {total:.1f} us | {desc} | nodes/step {count} "
                  f"inner gap {gap:.1f}", flush=True)


if __name__ == "__main__":
    main()
