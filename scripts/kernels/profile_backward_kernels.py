#!/usr/bin/env python3
"""Where a backward pass's GPU time goes, kernel by kernel: flashfuse's
(preprocess, main, postprocess) against torch.compile'd FlexAttention's on
the same mask, through torch.profiler. A causal or sliding-window mask
(--window W: each query sees itself and the W keys before it).

  python scripts/kernels/profile_backward_kernels.py --seqlen 8192 --window 1024
"""
import argparse
import collections
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
from flashfuse import bench  # noqa: E402


def kernel_times(fn, iters):
    """{kernel name: (calls, total us)} of `iters` calls of fn, after two
    warm-up calls (compilation, kernel loading)."""
    fn()
    fn()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
    out = collections.defaultdict(lambda: [0, 0.0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            out[e.name][0] += 1
            out[e.name][1] += e.device_time_total
    return {k: (n // iters, t / iters) for k, (n, t) in out.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seqlen", type=int, default=8192)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--window", type=int, default=0)
    ap.add_argument("--iters", type=int, default=10)
    args = ap.parse_args()
    b, h = max(1, args.tokens // args.seqlen), args.hidden // args.head_dim
    shape = (b, h, args.seqlen, args.head_dim)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    dout = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
    runners = bench._runners(args.window)
    c = {"batch": b, "heads": h, "head_dim": args.head_dim,
         "seqlen": args.seqlen, "causal": True, "window": args.window}
    flop = bench.flops(c, backward=True)
    for method in ("flashfuse", "flex"):
        out = runners[method](q, k, v, True)
        times = kernel_times(
            lambda: torch.autograd.grad(out, (q, k, v), dout,
                                        retain_graph=True), args.iters)
        total = sum(t for _, t in times.values())
        print(f"{method}: {total:8.1f} us of kernels per backward, "
              f"{flop / (total * 1e-6) / 1e12:6.1f} TFLOP/s")
        for name, (n, t) in sorted(times.items(), key=lambda x: -x[1][1]):
            print(f"  {t:8.1f} us  {100 * t / total:5.1f}%  x{n}  {name[:90]}")


if __name__ == "__main__":
    main()
