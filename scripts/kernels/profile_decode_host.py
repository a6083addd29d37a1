#!/usr/bin/env python3
"""Where the host time of one Python decoding step goes.

    profile_decode_host.py [--calls N] [--shapes B,Hkv,L ...] [--page P]
                           [--new-rows] [--layers] [--kernels]

For each shape (GQA 32/Hkv, D = 128, bf16, one new token, every sequence at
L keys): the wall time per call of flashfuse.attention_with_kvcache and of
SDPA (default backend, enable_gqa) issued back to back (N calls, one
synchronisation at the end: what a decode loop without CUDA graphs sees),
the device time of one call alone (CUDA events), and a cProfile of the
flashfuse calls (top functions by own time). Needs FLASHFUSE_KERNEL_DIR
(or a compiler) and the runtime, like the tests.
"""
import argparse
import cProfile
import io
import pstats
import statistics
import time

import torch
from torch.nn.functional import scaled_dot_product_attention

from flashfuse.bench import decode_step_tensors
from flashfuse.kvcache import attention_with_kvcache


def per_call_us(fn, calls):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def device_us(fn, reps=50):
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        a, b = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    return statistics.median(times)


def layers(q, k, v, lengths, table, calls):
    """Host time per call of what attention_with_kvcache runs: its
    DecodeLaunch (outputs, workspace, addresses, the runtime call) and the
    runtime's flashfuse_decode_plan_launch alone (addresses made once:
    their checks and the launches)."""
    from flashfuse import _kvcache_ops as kvops
    from flashfuse import _runtime as rt
    launch = kvops.decode_launch(q, k, v, lengths, table, 0, 2,
                                 q.shape[-1] ** -0.5, -1, -1, 0.0, 0)
    o, lse = launch(q, k, v, lengths, table)
    nbytes = launch.workspace_bytes
    workspace = torch.empty(max(nbytes, 16), dtype=torch.uint8,
                            device=q.device)
    addresses = rt.decode_addresses(
        q=q.data_ptr(), k_cache=k.data_ptr(), v_cache=v.data_ptr(),
        o=o.data_ptr(), lse=lse.data_ptr(), cache_seqlens=lengths.data_ptr(),
        block_table=table.data_ptr() if table is not None else None,
        workspace=workspace.data_ptr() if nbytes else None,
        workspace_bytes=nbytes)
    stream = torch.cuda.current_stream().cuda_stream
    for name, fn in (
            ("DecodeLaunch", lambda: launch(q, k, v, lengths, table)),
            ("runtime decode_plan_launch",
             lambda: launch.plan.launch(addresses, stream))):
        print(f"  {name:32s} {per_call_us(fn, calls):7.1f} us/call",
              flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--shapes", nargs="+",
                    default=["1,8,512", "16,8,8192", "64,8,2048"])
    ap.add_argument("--page", type=int, default=0)
    ap.add_argument("--new-rows", action="store_true",
                    help="each flashfuse step appends one new row (k_new, "
                         "v_new) before attending, as flash-attn's "
                         "flash_attn_with_kvcache does; the lengths stay "
                         "put, so every step writes the same row")
    ap.add_argument("--profile", type=int, default=25,
                    help="cProfile rows for the first shape (0: none)")
    ap.add_argument("--layers", action="store_true",
                    help="for the first shape, the host time of each layer "
                         "below attention_with_kvcache: the launch template "
                         "alone and the runtime's C calls alone")
    ap.add_argument("--kernels", action="store_true",
                    help="the device time of each kernel of the first shape "
                         "(torch.profiler)")
    args = ap.parse_args()
    dev, dt, hq, d = "cuda", torch.bfloat16, 32, 128
    for i, spec in enumerate(args.shapes):
        b, hkv, length = (int(x) for x in spec.split(","))
        q, k, v, lengths, table = decode_step_tensors(b, hq, hkv, length, d,
                                                      dt, args.page)
        qs = q.transpose(1, 2)
        ks = torch.randn(b, hkv, length, d, device=dev, dtype=dt)
        vs = torch.randn_like(ks)

        k_new = v_new = None
        if args.new_rows:
            lengths -= 1
            k_new = torch.randn(b, 1, hkv, d, device=dev, dtype=dt)
            v_new = torch.randn_like(k_new)

        def ours():
            return attention_with_kvcache(q, k, v, lengths, k_new, v_new,
                                          block_table=table)

        def sdpa():
            return scaled_dot_product_attention(qs, ks, vs, enable_gqa=True)

        row = {}
        for _ in range(3):  # interleaved; medians
            for name, fn in (("flashfuse", ours), ("sdpa", sdpa)):
                row.setdefault(name, []).append(
                    (per_call_us(fn, args.calls), device_us(fn)))
        for name, vals in row.items():
            wall = statistics.median(v[0] for v in vals)
            gpu = statistics.median(v[1] for v in vals)
            print(f"B={b} Hkv={hkv} L={length} page={args.page} {name:10s} "
                  f"back-to-back {wall:7.1f} us/call, alone on the device "
                  f"{gpu:7.1f} us", flush=True)
        if i == 0 and args.layers:
            layers(q, k, v, lengths, table, args.calls)
        if i == 0 and args.kernels:
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CUDA]) as kprof:
                for _ in range(50):
                    ours()
                torch.cuda.synchronize()
            print(kprof.key_averages().table(sort_by="cuda_time_total",
                                             row_limit=8))
        if i == 0 and args.profile:
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(args.calls):
                ours()
            torch.cuda.synchronize()
            prof.disable()
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(
                args.profile)
            print(out.getvalue())


if __name__ == "__main__":
    main()
