"""attention_with_kvcache's many-row steps (chunked prefill) on the decode
kernels against the varlen forward kernels (flashfuse._kvcache_prefill),
contiguous and over pages of 16 (shuffled), the varlen path on its
sm90ws kernel and (-sm90) on the sm90 one, each path forced by the
thresholds and kept in kvcache's cache of checked steps by a scale of its
own; SDPA with causal_lower_right beside them. bf16, D = 128, Hkv = 8,
every sequence at L keys; max error against SDPA in f32.
    python3 scripts/kernels/bench_kvcache_prefill.py B HQ L SQ[,SQ...]
(docs/PERF.md runs 539-541, 545)."""
import statistics, sys, time
import torch
sys.path.insert(0, "python")
import flashfuse
from flashfuse import _kernels, _kvcache_prefill as prefill
from torch.nn.attention.bias import causal_lower_right
import torch.nn.functional as F

def timed(fn, budget=0.08):
    fn(); torch.cuda.synchronize()
    t0 = time.perf_counter(); n = 0
    while time.perf_counter() - t0 < 0.02: fn(); n += 1
    torch.cuda.synchronize()
    reps = max(3, int(budget / ((time.perf_counter() - t0) / n)))
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(reps): fn()
    e1.record(); torch.cuda.synchronize()
    return e0.elapsed_time(e1) / reps

def warm(fn):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.25: fn()
    torch.cuda.synchronize()

torch.manual_seed(0)
B, Hq, Hkv, D, L = int(sys.argv[1]), int(sys.argv[2]), 8, 128, int(sys.argv[3])
SQS = [int(x) for x in sys.argv[4].split(",")]
kc = torch.randn(B, L, Hkv, D, device="cuda", dtype=torch.bfloat16)
vc = torch.randn(B, L, Hkv, D, device="cuda", dtype=torch.bfloat16)
lens = torch.full((B,), L, dtype=torch.int32, device="cuda")
# paged, page 16, shuffled
P = 16; npages = B * L // P
perm = torch.randperm(npages, device="cuda")
bt = perm.view(B, L // P).to(torch.int32)
kp = torch.empty(npages, P, Hkv, D, device="cuda", dtype=torch.bfloat16)
vp = torch.empty_like(kp)
kp[bt.flatten().long()] = kc.reshape(B * L // P, P, Hkv, D)
vp[bt.flatten().long()] = vc.reshape(B * L // P, P, Hkv, D)
kh = kc.transpose(1, 2); vh = vc.transpose(1, 2)
for sq in SQS:
    q = torch.randn(B, sq, Hq, D, device="cuda", dtype=torch.bfloat16)
    qh = q.transpose(1, 2)
    flop = 4 * B * Hq * sq * (L - sq / 2) * D
    def forced(rows, **kw):
        def f():
            old = prefill.PREFILL_MIN_ROWS, prefill.PREFILL_MIN_ROWS_PAGED
            prefill.PREFILL_MIN_ROWS = prefill.PREFILL_MIN_ROWS_PAGED = rows
            # "-sm90": the varlen path on <target>-varlen's sm90 kernel,
            # not the sm90ws one the capacity would take (the step keeps
            # the kernel it looked up first).
            old_ws = _kernels.sm90ws_varlen_min_mean_keys
            if kw.get("sm90"):
                _kernels.sm90ws_varlen_min_mean_keys = lambda *a: 1 << 30
            # Each method its own softmax_scale, so kvcache's cache of checked
            # steps keeps one step per method (the key includes the scale).
            try: return flashfuse.attention_with_kvcache(q, *kw["args"], lens, block_table=kw.get("bt"), is_causal=True, softmax_scale=kw["scale"])
            finally:
                prefill.PREFILL_MIN_ROWS, prefill.PREFILL_MIN_ROWS_PAGED = old
                _kernels.sm90ws_varlen_min_mean_keys = old_ws
        return f
    ms = {
        "decode": forced(1 << 30, args=(kc, vc), scale=D ** -0.5),
        "varlen": forced(1, args=(kc, vc), scale=D ** -0.5 * (1 + 2 ** -20)),
        "decode-p16": forced(1 << 30, args=(kp, vp), bt=bt, scale=D ** -0.5 * (1 + 2 ** -19)),
        "varlen-p16": forced(1, args=(kp, vp), bt=bt, scale=D ** -0.5 * (1 + 2 ** -18)),
        "varlen-sm90": forced(1, args=(kc, vc), scale=D ** -0.5 * (1 + 2 ** -17), sm90=True),
        "varlen-sm90-p16": forced(1, args=(kp, vp), bt=bt, scale=D ** -0.5 * (1 + 2 ** -16), sm90=True),
        "sdpa": lambda: F.scaled_dot_product_attention(qh, kh, vh, attn_mask=causal_lower_right(sq, L), enable_gqa=True),
    }
    ref = ms["sdpa"]().transpose(1, 2).float()
    low = F.scaled_dot_product_attention(qh.float(), kh.float(), vh.float(), attn_mask=causal_lower_right(sq, L), enable_gqa=True).transpose(1, 2)
    errs = {}
    for k, f in ms.items():
        try:
            o = f()
            o = o.transpose(1, 2) if k in ("prefill", "sdpa") else o
            errs[k] = (o.float() - low).abs().max().item()
            warm(f)
        except Exception as e:
            errs[k] = f"ERR {type(e).__name__}: {str(e)[:120]}"
    ok = {k: f for k, f in ms.items() if not isinstance(errs[k], str)}
    times = {k: [] for k in ok}
    for r in range(3):
        for k in (list(ok)[r % len(ok):] + list(ok)[:r % len(ok)]):
            times[k].append(timed(ok[k]))
    line = [f"Sq={sq}:"]
    for k in ms:
        if k in ok:
            t = statistics.median(times[k])
            line.append(f"{k} {t:.3f} ms {flop / t / 1e9:.0f} TF/s (err {errs[k]:.2e})")
        else:
            line.append(f"{k} {errs[k]}")
    print("  ".join(line), flush=True)
