"""B = 1, 512 keys (32/8 heads, D = 128, bf16): one decoding step's latency
(each call synchronised: host issue + GPU) and its back-to-back time (the
host ahead), ours (contiguous, pages of 16 and 64) against SDPA's
backends; 9 interleaved rounds of 400 calls after 250 ms of each method's
own calls, medians. Issue 15's "B = 1, 512 keys latency no worse than
SDPA's" (docs/PERF.md, runs 483-484). Run with the package's environment
(FLASHFUSE_RUNTIME_LIB, FLASHFUSE_KERNEL_DIR with the decode suites,
PYTHONPATH=python)."""
import statistics, time, torch
from flashfuse import bench

def latency(fn, n=400):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn(); torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6

def ahead(fn, n=400):
    s, e = torch.cuda.Event(True), torch.cuda.Event(True)
    torch.cuda.synchronize(); s.record()
    for _ in range(n): fn()
    e.record(); torch.cuda.synchronize()
    return s.elapsed_time(e) / n * 1e3

for page in (64, 0, 16, 64, 0):  # the first (throwaway) and the last pass of 0 and 64 repeat
    r = bench._decode_runners(1, 32, 8, 512, 128, torch.bfloat16, page)
    methods = {k: r[k][0] for k in ("flashfuse", "sdpa", "sdpa-flash", "sdpa-cudnn")}
    for f in methods.values():
        f(); torch.cuda.synchronize()
        t0 = time.time()
        while time.time() - t0 < 0.25: f()
    lat = {k: [] for k in methods}; ah = {k: [] for k in methods}
    for _ in range(9):
        for k, f in methods.items():
            lat[k].append(latency(f)); ah[k].append(ahead(f))
    med = {k: statistics.median(v) for k, v in lat.items()}
    meda = {k: statistics.median(v) for k, v in ah.items()}
    best = min(v for k, v in med.items() if k != "flashfuse")
    besta = min(v for k, v in meda.items() if k != "flashfuse")
    print(f"page {page}: latency us " + " ".join(f"{k} {v:.1f} ({min(lat[k]):.1f}-{max(lat[k]):.1f})" for k, v in med.items())
          + f" | best SDPA / ours {best / med['flashfuse']:.2f}")
    print(f"         back to back us " + " ".join(f"{k} {v:.1f}" for k, v in meda.items())
          + f" | best SDPA / ours {besta / meda['flashfuse']:.2f}")
