#!/usr/bin/env python3
"""flashfuse.attention_with_kvcache(..., alibi_slopes=...) on the GPU: the
ALiBi decode kernels (flash.attention_kvcache's alibi operand) against a
reference with flash-attn's bias (-slope[b, h] * |i + L_b - Sq - j|, the
distance from each sequence's own bottom-right diagonal) materialised,
by FlashAttention's rule for O (max|O - ref| <= 2 max|O_pt - ref| + 1e-5,
ref in f32, pt in the inputs' dtype): ragged lengths (0, 1, block
multiples +-1, the capacity), contiguous and paged caches (pages in
shuffled order), new rows appended, left padding, causal and not, windows,
softcap, GQA, several query rows, D = 64/80/128/256, f16 and bf16,
slopes [Hq] and [B, Hq] (strided); then (--bench) one decoding step's K/V
read rate against the same kernels without ALiBi and SDPA with the bias
as a float mask.

The kernels are compiled on first use by flashfuse-compile. A machine
without it (the lent GPU machine has no LLVM) runs artifacts compiled
elsewhere by the same code path:

    check_alibi_decode.py --compile DIR      # where flashfuse-compile is
    check_alibi_decode.py --artifacts DIR [--quick] [--bench]   # on the GPU
"""
import argparse, json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)

DTYPES = ("bf16", "f16")
# (dtype, D, Dv, causal, window, softcap, page size, leftpad, Snew); each
# over both slope layouts.
CASES = ([(dt, 128, 128, True, None, 0.0, 0, False, 0) for dt in DTYPES]
         + [("bf16", 128, 128, False, None, 0.0, 0, False, 0),
            ("bf16", 128, 128, True, None, 0.0, 16, False, 1),
            ("f16", 64, 64, True, None, 0.0, 64, False, 0),
            ("bf16", 128, 128, True, None, 0.0, 0, True, 1),
            ("bf16", 128, 128, False, (64, 8), 0.0, 0, False, 0),
            ("bf16", 128, 128, True, (96, 0), 30.0, 16, False, 0),
            ("f16", 256, 256, True, None, 0.0, 0, False, 0),
            ("bf16", 80, 80, True, None, 0.0, 0, False, 0)])
# (B, Hq, Hkv, Sq, capacity, lengths before the step).
SHAPES = [(6, 8, 2, 1, 320, [0, 1, 63, 64, 65, 300]),
          (3, 32, 8, 1, 1024, [1024, 517, 128]),
          (4, 4, 4, 3, 256, [3, 129, 255, 40]),
          (2, 16, 2, 8, 512, [200, 511])]
QUICK = SHAPES[:2]


def runtime_variant(case, layout):
    from flashfuse import _kernels
    from flashfuse import _runtime as rt
    dtype, d, dv, causal, window, softcap, page, leftpad, _ = case
    return _kernels.make_variant(
        rt.KIND_DECODE, rt.DTYPE_BF16 if dtype == "bf16" else rt.DTYPE_F16,
        d, dv, 2 if causal else 0, window=window is not None,
        softcap=softcap > 0, page_size=page, leftpad=leftpad, alibi=layout)


def compile_all(root):
    """Every case's decode kernel, compiled for h100 into root/h100/<hash>
    as flashfuse's on-demand compile caches them (the FLASHFUSE_KERNEL_DIR
    of --artifacts)."""
    os.environ["FLASHFUSE_CACHE_DIR"] = root
    from flashfuse import _compile
    seen = set()
    for case in CASES:
        for layout in (1, 2):
            v = runtime_variant(case, layout)
            if v.describe() in seen:
                continue
            seen.add(v.describe())
            print(v.describe(), _compile.artifact_for(v, (9, 0)), flush=True)


def check_case(case, layout, shape, gen):
    import torch
    import flashfuse
    dtype, d, dv, causal, window, softcap, page, leftpad, snew = case
    dt = torch.bfloat16 if dtype == "bf16" else torch.float16
    b, hq, hkv, sq, cap, lens = shape
    lens = [min(n, cap - snew) for n in lens]
    dev = "cuda"
    q = torch.randn(b, sq, hq, d, device=dev, dtype=dt, generator=gen)
    kd = torch.randn(b, cap, hkv, d, device=dev, dtype=dt, generator=gen)
    vd = torch.randn(b, cap, hkv, dv, device=dev, dtype=dt, generator=gen)
    seqlens = torch.tensor(lens, dtype=torch.int32, device=dev)
    k_new = v_new = None
    if snew:
        k_new = torch.randn(b, snew, hkv, d, device=dev, dtype=dt,
                            generator=gen)
        v_new = torch.randn(b, snew, hkv, dv, device=dev, dtype=dt,
                            generator=gen)
    pad = None
    if leftpad:
        pad = torch.tensor([min(n // 3, n) for n in lens], dtype=torch.int32,
                           device=dev)
    # Slopes different per entry, positive, as the model's would be.
    slopes = torch.rand(b, 2 * hq, device=dev, generator=gen) * 0.3 + 0.01
    slopes = slopes[0, :hq].contiguous() if layout == 1 else slopes[:, ::2]
    if page:
        pages = cap // page
        order = torch.randperm(b * pages + 3, device=dev, generator=gen)
        table = order[:b * pages].view(b, pages).to(torch.int32)
        kc = torch.zeros(b * pages + 3, page, hkv, d, device=dev, dtype=dt)
        vc = torch.zeros(b * pages + 3, page, hkv, dv, device=dev, dtype=dt)
        kc[table.long()] = kd.view(b, pages, page, hkv, d)
        vc[table.long()] = vd.view(b, pages, page, hkv, dv)
    else:
        table, kc, vc = None, kd, vd
    o = flashfuse.attention_with_kvcache(
        q, kc, vc, seqlens, k_new, v_new, block_table=table,
        is_causal=causal, window_size=window or (-1, -1), softcap=softcap,
        cache_leftpad=pad, alibi_slopes=slopes)
    if page:  # the caches as the step left them, dense again
        kd = kc[table.long()].reshape(b, cap, hkv, d)
        vd = vc[table.long()].reshape(b, cap, hkv, dv)
    ref = reference(q, kd, vd, lens, snew, pad, slopes, causal, window,
                    softcap, torch.float32)
    pt = reference(q, kd, vd, lens, snew, pad, slopes, causal, window,
                   softcap, dt)
    err = (o.float() - ref).abs().max().item()
    err_pt = (pt - ref).abs().max().item()
    ok = err == err and err <= 2 * err_pt + 1e-5
    return dict(case=case, layout=layout, shape=shape[:5], err=err,
                err_pt=err_pt, ok=ok)


def reference(q, k, v, lens, snew, pad, slopes, causal, window, softcap,
              dtype):
    """O [B, Sq, Hq, Dv] of every sequence's first L_b = lens[b] + snew
    keys, the matmuls in `dtype` and the softmax in f32."""
    import torch
    b, sq, hq, d = q.shape
    g = hq // k.shape[2]
    out = torch.zeros(b, sq, hq, v.shape[-1], device=q.device)
    sl = slopes[None, :].expand(b, hq) if slopes.dim() == 1 else slopes
    for s in range(b):
        n = lens[s] + snew
        if n == 0:
            continue
        qs = q[s].transpose(0, 1).to(dtype)             # [Hq, Sq, D]
        ks = k[s, :n].transpose(0, 1).to(dtype).repeat_interleave(g, 0)
        vs = v[s, :n].transpose(0, 1).to(dtype).repeat_interleave(g, 0)
        sc = (qs @ ks.transpose(-1, -2)).float() * d ** -0.5
        if softcap:
            sc = softcap * torch.tanh(sc / softcap)
        i = torch.arange(sq, device=q.device)[:, None]
        j = torch.arange(n, device=q.device)[None, :]
        diag = i + n - sq
        sc = sc - sl[s][:, None, None] * (diag - j).abs()
        keep = torch.ones(sq, n, dtype=torch.bool, device=q.device)
        if pad is not None:
            keep &= j >= int(pad[s])
        if causal:
            keep &= j <= diag
        if window is not None:
            keep &= (j >= diag - window[0]) & (j <= diag + window[1])
        p = torch.softmax(sc.masked_fill(~keep, float("-inf")), -1)
        out[s] = (p.nan_to_num(0.0).to(dtype) @ vs).float().transpose(0, 1)
    return out


def check(shapes):
    import torch
    gen = torch.Generator(device="cuda").manual_seed(0)
    results = []
    for case in CASES:
        for layout in (1, 2):
            for shape in shapes:
                if case[1] == 256 and shape[4] > 512:
                    continue
                r = check_case(case, layout, shape, gen)
                results.append(r)
                if not r["ok"]:
                    print("FAIL", json.dumps(r), flush=True)
    bad = sum(not r["ok"] for r in results)
    print(json.dumps(dict(cases=len(results), failures=bad)), flush=True)
    return results


def bench(shapes=((16, 8192), (64, 2048), (4, 65536), (1, 131072)),
          hq=32, hkv=8, d=128):
    """One token's step, bf16: GB/s of K and V read by ours with and
    without ALiBi, and SDPA's default backend with the bias as a float
    mask (what a model without a fused ALiBi decode computes)."""
    import torch
    import torch.nn.functional as F
    import flashfuse
    from check_documents import timed
    dt = torch.bfloat16
    slopes = flashfuse.alibi_slopes(hq).cuda()
    rows = []
    for b, n in shapes:
        q = torch.randn(b, 1, hq, d, device="cuda", dtype=dt)
        kc = torch.randn(b, n, hkv, d, device="cuda", dtype=dt)
        vc = torch.randn(b, n, hkv, d, device="cuda", dtype=dt)
        lens = torch.full((b,), n, dtype=torch.int32, device="cuda")
        j = torch.arange(n, device="cuda")
        bias = (-slopes[:, None] * (n - 1 - j).abs()).to(dt)
        bias = bias[None, :, None, :].expand(b, hq, 1, n)
        qt, kt, vt = (t.transpose(1, 2) for t in (q, kc, vc))
        fns = {
            "alibi": lambda: flashfuse.attention_with_kvcache(
                q, kc, vc, lens, alibi_slopes=slopes),
            "plain": lambda: flashfuse.attention_with_kvcache(q, kc, vc,
                                                              lens),
            "sdpa_bias": lambda: F.scaled_dot_product_attention(
                qt, kt, vt, attn_mask=bias, enable_gqa=True),
        }
        ms, _ = timed(fns, reps=7)
        gb = 2 * b * n * hkv * d * 2 / 1e9
        row = dict(b=b, keys=n, **{k: round(gb / (t / 1e3), 1)
                                    for k, t in ms.items()})
        row["alibi/plain"] = round(ms["plain"] / ms["alibi"], 3)
        row["alibi/sdpa_bias"] = round(ms["sdpa_bias"] / ms["alibi"], 3)
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compile", metavar="DIR")
    ap.add_argument("--artifacts", metavar="DIR")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--bench", action="store_true")
    args = ap.parse_args()
    if args.compile:
        compile_all(args.compile)
        return 0
    if args.artifacts:
        os.environ["FLASHFUSE_KERNEL_DIR"] = os.pathsep.join(
            [os.path.join(args.artifacts, "h100")]
            + [p for p in os.environ.get("FLASHFUSE_KERNEL_DIR", "").split(
                os.pathsep) if p])
    results = check(QUICK if args.quick else SHAPES)
    if args.bench:
        bench()
    return 1 if any(not r["ok"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
