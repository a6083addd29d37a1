#!/usr/bin/env python3
"""Sustained throughput of one forward shape, ours against SDPA's
FlashAttention-2, with the GPU's clock and power sampled while each runs.

check_and_bench.py times 30 calls after a warm-up; a profiler times one
launch on an idle GPU. A chip at its power limit lowers its clock under
load, so a kernel can be faster in isolation yet not over seconds. This
runs each kernel back to back for --seconds, in alternating rounds, and
prints TFLOP/s with the median SM clock and power nvidia-smi saw meanwhile.
"""
import argparse, os, statistics, subprocess, sys, time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_forward import Problem, add_shape_arguments  # noqa: E402


def start_sampler(seconds):
    """nvidia-smi printing the SM clock and power every 50 ms for `seconds`."""
    return subprocess.Popen(
        ["timeout", str(seconds), "nvidia-smi", "--query-gpu=clocks.sm,power.draw",
         "--format=csv,noheader,nounits", "-lms", "50"],
        stdout=subprocess.PIPE, text=True)


def samples_of(sampler):
    out = sampler.communicate()[0]
    return [tuple(float(x) for x in l.split(",")) for l in out.splitlines() if "," in l]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    add_shape_arguments(ap)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    p = Problem(args)
    ours, fa2, flops = p.ours, p.sdpa, p.flops
    for fn in (ours, fa2):  # warm-up
        for _ in range(5):
            fn()
    torch.cuda.synchronize()
    for r in range(args.rounds):
        for name, fn in (("ours", ours), (f"sdpa-{args.backend}", fa2)):
            # Enough calls for --seconds at the isolated speed.
            t0 = time.time(); fn(); torch.cuda.synchronize()
            calls = max(10, int(args.seconds / max(time.time() - t0, 1e-4)))
            sampler = start_sampler(args.seconds)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(calls):
                fn()
            end.record(); torch.cuda.synchronize()
            samples = samples_of(sampler)
            ms = start.elapsed_time(end) / calls
            clk = statistics.median(s[0] for s in samples) if samples else float("nan")
            pwr = statistics.median(s[1] for s in samples) if samples else float("nan")
            print(f"round {r} {name:10s} {args.dtype} d={args.d} S={args.seq} "
                  f"causal={int(args.causal)} calls {calls:5d} {flops / ms / 1e9:7.1f} TFLOP/s "
                  f"sm clock {clk:6.0f} MHz power {pwr:6.1f} W", flush=True)


if __name__ == "__main__":
    main()
