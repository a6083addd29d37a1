#!/usr/bin/env python3
"""Times attention with dropout: flashfuse.attention against SDPA's flash
backend (FlashAttention-2), forward alone and forward + backward through
autograd (the training step), bf16, hidden 2048, B = 16384 / S.

    bench_dropout.py [ROUNDS] [METHOD:P,...]

METHOD is ours or fa2, P the dropout probability (default
ours:0.0,ours:0.1,fa2:0.0,fa2:0.1). Each (method, p, step) is warmed up for
250 ms of its own calls, then 20 calls are timed between two events; the
medians over ROUNDS interleaved rounds are printed, in ms and TFLOP/s
(4 B H S^2 D, halved if causal, x3.5 for the step). The package's kernels
come from FLASHFUSE_KERNEL_DIR (docs/PERF.md, runs 369-372).
"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import flashfuse


def timeit(fn, reps=20):
    end = time.time() + 0.25
    while time.time() < end:
        fn()
    torch.cuda.synchronize()
    start, stop = (torch.cuda.Event(enable_timing=True) for _ in range(2))
    start.record()
    for _ in range(reps):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / reps


def flops(b, h, s, d, causal, step):
    return 4 * b * h * s * s * d / (2 if causal else 1) * (3.5 if step else 1)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    spec = sys.argv[2] if len(sys.argv) > 2 else "ours:0.0,ours:0.1,fa2:0.0,fa2:0.1"
    pairs = [(m, float(p)) for m, p in (x.split(":") for x in spec.split(","))]
    dt = torch.bfloat16
    x = torch.randn(2, 8, 1024, 64, device="cuda", dtype=dt)  # throwaway shape
    flashfuse.attention(x, x, x)
    F.scaled_dot_product_attention(x, x, x)
    for d, s, causal in [(d, s, c) for d in (64, 128) for s in (2048, 8192)
                         for c in (False, True)]:
        h, b = 2048 // d, 16384 // s
        q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dt,
                               requires_grad=True) for _ in range(3))
        do = torch.randn(b, h, s, d, device="cuda", dtype=dt)

        def call(method, p, step):
            def ours():
                return flashfuse.attention(q, k, v, is_causal=causal, dropout_p=p)

            def fa2():
                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    return F.scaled_dot_product_attention(
                        q, k, v, is_causal=causal, dropout_p=p)

            forward = ours if method == "ours" else fa2

            def fn():
                o = forward()
                if step:
                    torch.autograd.grad(o, (q, k, v), do)
            return fn

        times = {}
        for _ in range(rounds):
            for method, p in pairs:
                for step in (False, True):
                    times.setdefault((method, p, step), []).append(
                        timeit(call(method, p, step)))
        line = f"D={d} S={s} causal={int(causal)}:"
        for step in (False, True):
            for method, p in pairs:
                ms = statistics.median(times[(method, p, step)])
                tf = flops(b, h, s, d, causal, step) / ms / 1e9
                line += (f" {method}-{'step' if step else 'fwd'}@p{p}"
                         f"={ms:.3f}ms/{tf:.0f}TF")
        print(line, flush=True)


if __name__ == "__main__":
    main()
