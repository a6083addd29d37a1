#!/usr/bin/env python3
"""The FP8-cache decode and append (docs/KVCACHE.md "FP8 cache") on a GPU,
through the runtime and flashfuse.attention_with_kvcache: runs
python/tests/test_decode_fp8_gpu.py (unless --no-tests), then times one
decode step over an e4m3 cache against the same step over a bf16 cache,
in GB/s of the cache bytes actually read (K and V rows of every sequence's
L keys: 1 byte an element for e4m3, 2 for bf16), medians of CUDA-event
timings of the step captured in a CUDA graph (eager if capture fails; the
row's "timing" says which) after a warm-up; `*_step_us` times the same step with one new row
a sequence appended first (kv_append, quantising into the e4m3 cache).
FLASHFUSE_KERNEL_DIR must hold both the 16-bit decode artifact
(gen_suite.py --decode) and an FP8 one (--decode-fp8, or the library's
--decode-fp8-library).

  scripts/kernels/check_decode_fp8.py [--no-tests] [--out DIR]
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def bench(page_size, b, hq, hkv, length, d, reps=50):
    import torch
    import flashfuse
    from flashfuse import fp8
    dtype = torch.bfloat16
    q = torch.randn(b, 1, hq, d, device="cuda", dtype=dtype)
    if page_size:
        pages = b * length // page_size
        k = torch.randn(pages, page_size, hkv, d, device="cuda", dtype=dtype)
        table = torch.randperm(pages, device="cuda").to(torch.int32).view(
            b, -1).contiguous()
    else:
        k = torch.randn(b, length, hkv, d, device="cuda", dtype=dtype)
        table = None
    v = torch.randn_like(k)
    k8, kd = fp8.quantize_kv_cache(k, batch=b if page_size else None)
    v8, vd = fp8.quantize_kv_cache(v, batch=b if page_size else None)
    lens = torch.full((b,), length, device="cuda", dtype=torch.int32)
    k_new = torch.randn(b, 1, hkv, d, device="cuda", dtype=dtype)
    v_new = torch.randn_like(k_new)

    timing = []

    def time_ms(fn):
        # One call captured in a CUDA graph and replayed, so that the
        # kernels' time is measured rather than the host's: an eager step
        # costs ~100-150 us of Python and runtime checks (PERF.md), more
        # than a decode kernel over 8k keys takes. Eager where capture
        # fails.
        for _ in range(10):
            fn()
        torch.cuda.synchronize()
        try:
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                fn()
            fn = graph.replay
            timing.append("graph")
        except Exception as e:  # noqa: BLE001 - reported in the row
            timing.append(f"eager ({type(e).__name__})")
        for _ in range(10):
            fn()
        start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        end = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        for s, e in zip(start, end):
            s.record()
            fn()
            e.record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in zip(start, end))

    row = {"page_size": page_size, "B": b, "Hq": hq, "Hkv": hkv, "L": length,
           "D": d}
    for name, kc, vc, extra, elem in (
            ("bf16", k, v, {}, 2),
            ("e4m3", k8, v8, {"k_descale": kd, "v_descale": vd}, 1)):
        ms = time_ms(lambda: flashfuse.attention_with_kvcache(
            q, kc, vc, lens, block_table=table, is_causal=True, **extra))
        nbytes = 2 * b * hkv * length * d * elem
        row[f"{name}_us"] = round(ms * 1e3, 1)
        row[f"{name}_GBps"] = round(nbytes / (ms * 1e-3) / 1e9, 1)
        # The last row of each sequence rewritten every repetition.
        step_ms = time_ms(lambda: flashfuse.attention_with_kvcache(
            q, kc, vc, lens - 1, k_new, v_new, table, is_causal=True,
            **extra))
        row[f"{name}_step_us"] = round(step_ms * 1e3, 1)
    row["speedup"] = round(row["bf16_us"] / row["e4m3_us"], 2)
    row["timing"] = sorted(set(timing))
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-tests", action="store_true")
    ap.add_argument("--no-bench", action="store_true")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()
    rc = 0
    if not args.no_tests:
        rc = subprocess.call(
            [sys.executable, "-m", "pytest", "-q", "-rs", "-x",
             str(ROOT / "python" / "tests" / "test_decode_fp8_gpu.py")],
            cwd=ROOT / "python")
    if args.no_bench:
        return rc
    rows = []
    for page in (0, 64):
        for b, length in ((8, 8192), (4, 32768), (1, 131072)):
            try:
                row = bench(page, b, 32, 8, length, 128)
            except Exception as e:  # a missing kernel: say so, go on
                row = {"page_size": page, "B": b, "L": length,
                       "error": str(e).splitlines()[0]}
            rows.append(row)
            print(json.dumps(row), flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "decode_fp8_bench.json"), "w") as f:
        json.dump(rows, f, indent=1)
    return rc


if __name__ == "__main__":
    sys.exit(main())
