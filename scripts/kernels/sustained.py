#!/usr/bin/env python3
"""Sustained throughput of one forward shape, ours against SDPA's
FlashAttention-2, with the GPU's clock and power sampled while each runs.

check_and_bench.py times 30 calls after a warm-up; a profiler times one
launch on an idle GPU. A chip at its power limit lowers its clock under
load, so a kernel can be faster in isolation yet not over seconds. This
runs each kernel back to back for --seconds, in alternating rounds, and
prints TFLOP/s with the median SM clock and power nvidia-smi saw meanwhile.
"""
import argparse, math, os, statistics, subprocess, sys, time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_and_bench import Artifact  # noqa: E402


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
    ap.add_argument("artifact")
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--dtype", choices=("bf16", "f16"), default="bf16")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    from torch.nn.attention import sdpa_kernel, SDPBackend
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    H, B = 2048 // args.d, 16384 // args.seq
    art = Artifact(args.artifact)
    kern = art.find(args.dtype, args.d, "top_left" if args.causal else "none")
    q, k, v = (torch.randn(B, H, args.seq, args.d, device="cuda", dtype=tdt)
               for _ in range(3))
    o = torch.empty_like(q)
    lse = torch.empty(B, H, args.seq, device="cuda", dtype=torch.float32)
    flops = 4 * B * H * args.seq ** 2 * args.d / (2 if args.causal else 1)

    def ours():
        art.launch(kern, q, k, v, o, lse, 1.0 / math.sqrt(args.d))

    def fa2():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            F.scaled_dot_product_attention(q, k, v, is_causal=args.causal)

    for fn in (ours, fa2):  # warm-up and per-call time
        for _ in range(5):
            fn()
    torch.cuda.synchronize()
    for r in range(args.rounds):
        for name, fn in (("ours", ours), ("sdpa-flash", fa2)):
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
