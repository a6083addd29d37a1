#!/usr/bin/env python3
"""Checks and times the backward kernels of an artifact through the CUDA driver.

Runs backward_preprocess, backward (and backward_dq in deterministic
artifacts) and backward_postprocess as flash-lower-to-gpu launches them
(docs/KERNEL_ABI.md), on fresh random inputs with every output poisoned, and
applies FlashAttention's gradient rule: max|g - g_ref| <= 3 max|g_pt - g_ref|
+ atol, g_ref from torch autograd in f32 on up-cast inputs, g_pt the same in
the kernel's dtype. Deterministic artifacts are run twice and must agree bit
for bit. Dropout: the kept mask is read back from the forward kernel (Q = 0
makes P uniform, V = I makes O show it), its dropped fraction must be within
0.01 of p, and forward and backward are checked against references that use
that mask. Then times the backward against SDPA-flash's backward.
"""
import argparse, ctypes, json, math, os, statistics, sys, time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_and_bench import (Artifact, attention, check, cuda,  # noqa: E402
                             median_ms)

TDT = {"f16": torch.float16, "bf16": torch.bfloat16}


def launch(art, k, named, grid):
    vals = []
    for p in k["params"]:
        kind, name = p.split(":")
        v = named.get(name)
        if kind == "memref":
            vals += [ctypes.c_void_p(v.data_ptr()), ctypes.c_void_p(v.data_ptr()),
                     ctypes.c_int64(0), ctypes.c_int64(v.numel()), ctypes.c_int64(1)]
        elif kind == "tensormap":  # the sm90ws backward's, as the runtime's
            vals.append(art.tensor_map(k, name[:-len("_map")], named, named))
        elif kind == "i32":
            vals.append(ctypes.c_int32(int(v)))
        elif kind == "i64":
            vals.append(ctypes.c_int64(int(v)))
        else:
            vals.append(ctypes.c_float(float(v)))
    ptrs = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.pointer(x), ctypes.c_void_p) for x in vals])
    s = torch.cuda.current_stream().cuda_stream
    check(cuda.cuLaunchKernel(art.funcs[k["name"]], *grid, int(k["threads"]), 1, 1,
                              int(k["smem"]), ctypes.c_void_p(s), ptrs, None),
          "cuLaunchKernel " + k["name"])


def find(art, kind, dtype, d, causal="none", dv=None, **flags):
    for k in art.kernels:
        if (k["kind"] == kind and k["dtype"] == dtype and int(k["head_dim"]) == d
                and int(k["head_dim_v"]) == (d if dv is None else dv)
                and k["causal"] == causal
                and all(int(k[f]) == int(flags.get(f, 0))
                        for f in ("window", "softcap", "bias", "mask", "dropout"))):
            return k
    return None


def run_backward(art, kerns, t, scale, window, softcap, p, seed, poison=True,
                 only=None):
    """Launches the backward kernels on dict t of tensors; returns grads.
    Outputs are NaN-poisoned for the checks; timing passes poison=False so
    that the fills (as much memory traffic as the postprocess) are not
    billed to the kernels. `only` limits the launches to those kernel roles
    ("pre", "bwd", "dq", "post"), for per-kernel timing."""
    q, k, v = t["q"], t["k"], t["v"]
    B, Hq, Sq, D = q.shape
    Hkv, Sk, Dv = k.shape[1], k.shape[2], v.shape[3]
    f32 = torch.float32
    named = dict(t)
    def out(shape, dtype):
        return (torch.full(shape, float("nan"), device="cuda", dtype=dtype) if poison
                else torch.empty(shape, device="cuda", dtype=dtype))
    rows = -(-Sq // 128) * 128  # KERNEL_ABI.md "Backward": dq_accum's rows
    named.update(delta=out((B, Hq, Sq), f32), dq_accum=out((B, Hq, rows, D), f32),
                 dk=out((B, Hq, Sk, D), q.dtype), dv=out((B, Hq, Sk, Dv), q.dtype),
                 grad_q=out(q.shape, q.dtype), grad_k=out(k.shape, k.dtype),
                 grad_v=out(v.shape, v.dtype))
    if "bias" in t:
        named["dbias"] = torch.full_like(t["bias"], float("nan"))
        st = t["bias"].stride()
        named.update(bias_stride_b=st[0], bias_stride_h=st[1], bias_stride_q=st[2], bias_stride_k=st[3])
    named.update(batch=B, heads_q=Hq, heads_kv=Hkv, seq_q=Sq, seq_k=Sk, scale=scale,
                 window_left=window[0], window_right=window[1], softcap=softcap,
                 dropout_p=p, seed=seed)
    for n in ("q", "k", "v", "o", "do", "grad_q", "grad_k", "grad_v"):
        st = named[n].stride()
        named.update({f"{n}_stride_b": st[0], f"{n}_stride_h": st[1], f"{n}_stride_s": st[2]})
    bm, bn = int(kerns["pre"]["block_m"]), int(kerns["bwd"]["block_n"])
    grids = dict(pre=((Sq + bm - 1) // bm, Hq, B), bwd=((Sk + bn - 1) // bn, Hq, B),
                 dq=((Sq + bm - 1) // bm, Hq, B), post=((max(Sq, Sk) + bm - 1) // bm, Hq, B))
    for role in ("pre", "bwd", "dq", "post"):
        if kerns.get(role) and (only is None or role in only):
            launch(art, kerns[role], named, grids[role])
    return named


def kernels_for(art, dtype, d, causal, dv=None, **flags):
    ks = {n: find(art, kind, dtype, d, causal, dv=dv, **flags) for n, kind in
          (("pre", "backward_preprocess"), ("bwd", "backward"), ("dq", "backward_dq"),
           ("post", "backward_postprocess"))}
    return ks if ks["bwd"] else None


def check_case(art, dtype, d, causal, B, Hq, Hkv, Sq, Sk, window=None, softcap=None,
               with_bias=False, p=0.0, drop=None, seed=0, twice=False, alibi=None, dv=None,
               alibi_slopes=False, documents=False):
    """alibi: the artifact's kernels compile in the score_mod
    score + alibi * (kv_idx - q_idx); the references add it as a constant
    bias. alibi_slopes: their score_mod reads per-head slopes from above the
    op, score + slopes[h] * (kv_idx - q_idx) (KERNEL_ABI.md "Values captured
    by score_mod and mask_mod"), passed as `capture0`. documents: their
    mask_mod keeps ids[q_idx] == ids[kv_idx] over captured i32 ids
    (test/Transforms/DeriveBlockSparsity/documents-ids-grad-ptxas.mlir),
    up to four documents of random lengths; the references mask by a bias
    of -inf."""
    flags = dict(window=window is not None, softcap=softcap is not None, bias=with_bias,
                 dropout=p > 0)
    dv = d if dv is None else dv
    kerns = kernels_for(art, dtype, d, causal, dv=dv, **flags)
    if kerns is None:
        return None
    tdt = TDT[dtype]
    q = torch.randn(B, Hq, Sq, d, device="cuda", dtype=tdt)
    k = torch.randn(B, Hkv, Sk, d, device="cuda", dtype=tdt)
    v = torch.randn(B, Hkv, Sk, dv, device="cuda", dtype=tdt)
    do = torch.randn(B, Hq, Sq, dv, device="cuda", dtype=tdt)
    bias = torch.randn(B, Hq, Sq, Sk, device="cuda") if with_bias else None
    scale = 1.0 / math.sqrt(d)
    leaves = [x.float().requires_grad_() for x in (q, k, v)] + \
             ([bias.clone().requires_grad_()] if with_bias else [])
    ref_bias = leaves[3] if with_bias else None
    if alibi is not None:
        rel = (torch.arange(Sk, device="cuda")[None, :] -
               torch.arange(Sq, device="cuda")[:, None]).float()
        ref_bias = (alibi * rel).expand(B, Hq, Sq, Sk)
    slopes = None
    if alibi_slopes:
        slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / Hq) for h in range(Hq)],
                              device="cuda")
        rel = (torch.arange(Sk, device="cuda")[None, :] -
               torch.arange(Sq, device="cuda")[:, None]).float()
        ref_bias = (slopes[:, None, None] * rel).expand(B, Hq, Sq, Sk)
    ids = None
    if documents:
        # Documents start below min(Sq, Sk): every query's document has
        # keys (no fully masked row, whose reference gradient is NaN).
        n = max(Sq, Sk)
        cuts = torch.randint(1, max(min(Sq, Sk), 2), (3,), device="cuda")
        ids = (torch.arange(n, device="cuda")[:, None] >= cuts[None, :]).sum(1)
        ids = ids.to(torch.int32)
        keep = ids[:Sq, None] == ids[None, :Sk]
        ref_bias = torch.zeros(Sq, Sk, device="cuda").masked_fill(
            ~keep, -math.inf).expand(B, Hq, Sq, Sk)
    o_ref, lse_ref = attention(*leaves[:3], scale, causal, window, softcap,
                               ref_bias, drop, torch.float32)
    g_ref = torch.autograd.grad(o_ref, leaves, do.float())
    leaves_pt = [x.detach().clone().requires_grad_() for x in (q, k, v)] + \
                ([bias.clone().requires_grad_()] if with_bias else [])
    o_pt, _ = attention(*leaves_pt[:3], scale, causal, window, softcap,
                        leaves_pt[3] if with_bias else ref_bias, drop, tdt)
    g_pt = torch.autograd.grad(o_pt, leaves_pt, do)
    t = dict(q=q, k=k, v=v, o=o_pt.detach().to(tdt).contiguous(), do=do,
             lse=lse_ref.detach().float().contiguous())
    if with_bias:
        t["bias"] = bias
    if slopes is not None:
        t["capture0"] = slopes
    if ids is not None:
        t["capture0"] = ids
    named = run_backward(art, kerns, t, scale, window or (-1, -1), softcap or 0.0, p, seed)
    torch.cuda.synchronize()
    outs = [named["grad_q"], named["grad_k"], named["grad_v"]] + ([named["dbias"]] if with_bias else [])
    res = dict(kernel=kerns["bwd"]["name"], shape=[B, Hq, Hkv, Sq, Sk, d, dv], causal=causal,
               ok=True)
    for name, g, gr, gp in zip(("dq", "dk", "dv", "dbias"), outs, g_ref, g_pt):
        err = (g.float() - gr).abs().max().item()
        err_pt = (gp.float() - gr).abs().max().item()
        ok = (not math.isnan(err)) and err <= 3 * err_pt + 1e-4
        res[name] = [err, err_pt]
        res["ok"] &= ok
    if twice:
        again = run_backward(art, kerns, t, scale, window or (-1, -1), softcap or 0.0, p, seed)
        torch.cuda.synchronize()
        same = all(torch.equal(again[n], named[n]) for n in ("grad_q", "grad_k", "grad_v"))
        res["bit_identical"] = same
        res["ok"] &= same
    return res


def dropout_mask(art, dtype, p, seed, B, H, Sq, Sk):
    """The forward kernel's kept mask, read back: Q = 0 gives P = 1/Sk, V = I
    makes O[i, j] = keep(i, j) / ((1 - p) Sk)."""
    k = find(art, "forward", dtype, 64, dropout=1)
    assert Sk == 64
    tdt = TDT[dtype]
    q = torch.zeros(B, H, Sq, 64, device="cuda", dtype=tdt)
    kk = torch.randn(B, H, Sk, 64, device="cuda", dtype=tdt)
    v = torch.eye(64, device="cuda", dtype=tdt).expand(B, H, 64, 64).contiguous()
    o = torch.full((B, H, Sq, 64), float("nan"), device="cuda", dtype=tdt)
    lse = torch.empty(B, H, Sq, device="cuda")
    named = dict(q=q, k=kk, v=v, o=o, lse=lse, batch=B, heads_q=H, heads_kv=H, seq_q=Sq,
                 seq_k=Sk, scale=0.125, window_left=-1, window_right=-1, softcap=0.0,
                 dropout_p=p, seed=seed)
    for n in ("q", "k", "v", "o"):
        st = named[n].stride()
        named.update({f"{n}_stride_b": st[0], f"{n}_stride_h": st[1], f"{n}_stride_s": st[2]})
    bm = int(k["block_m"])
    launch(art, k, named, ((Sq + bm - 1) // bm, H, B))
    torch.cuda.synchronize()
    kept = o.float() > 0.5 / ((1 - p) * Sk)
    return kept, o


def check_dropout(art, dtype, results):
    p, seed = 0.17, 0x1234_5678_9ABC_DEF0 & ((1 << 63) - 1)
    B, H, Sq, Sk = 2, 4, 512, 64
    kept, o = dropout_mask(art, dtype, p, seed, B, H, Sq, Sk)
    frac = 1.0 - kept.float().mean().item()
    z = kept.float() / (1 - p)
    # The forward reproduces O = (P Z) V exactly on that input.
    fwd_err = (o.float() - z / Sk).abs().max().item()
    r = check_case(art, dtype, 64, "none", B, H, H, Sq, Sk, p=p, drop=z, seed=seed)
    r.update(dropped_fraction=frac, forward_err=fwd_err)
    r["ok"] &= abs(frac - p) <= 0.01 and fwd_err < 1e-2
    results.append(r)


def bench(art, dtype, d, causal, S, hidden=2048, tokens=16384, with_sdpa=True):
    from torch.nn.attention import sdpa_kernel, SDPBackend
    tdt = TDT[dtype]
    H, B = hidden // d, tokens // S
    cz = "top_left" if causal else "none"
    kerns = kernels_for(art, dtype, d, cz)
    q, k, v, do = (torch.randn(B, H, S, d, device="cuda", dtype=tdt) for _ in range(4))
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        qq, kk2, vv = (x.clone().requires_grad_() for x in (q, k, v))
        o = F.scaled_dot_product_attention(qq, kk2, vv, is_causal=causal)
        def sdpa():
            torch.autograd.grad(o, (qq, kk2, vv), do, retain_graph=True)
    # The saved LSE, from SDPA-flash's own forward (natural log, f32).
    lse = torch.ops.aten._scaled_dot_product_flash_attention(
        q, k, v, 0.0, causal, False, scale=1 / math.sqrt(d))[1]
    t = dict(q=q, k=k, v=v, o=o.detach().contiguous(), do=do, lse=lse.float().contiguous())
    def ours(only=None):
        run_backward(art, kerns, t, 1 / math.sqrt(d), (-1, -1), 0.0, 0.0, 0,
                     poison=False, only=only)
    flops = 2.5 * 4 * B * H * S * S * d / (2 if causal else 1)
    res = dict(dtype=dtype, d=d, S=S, causal=causal)
    for name, fn in (("ours", ours), ("sdpa-flash", sdpa))[:2 if with_sdpa else 1]:
        try:
            res[name] = flops / median_ms(fn, iters=20, warmup=3) / 1e9
        except Exception as e:
            res[name] = None
            res[name + "-error"] = str(e)[:200]
    # Milliseconds of each launch alone (the inputs the previous launches
    # left are valid for the next): where the time goes.
    res["ms"] = {role: median_ms(lambda: ours({role}), iters=20, warmup=3)
                 for role in ("pre", "bwd", "dq", "post") if kerns.get(role)}
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("artifact")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--deterministic", action="store_true")
    ap.add_argument("--quick", action="store_true",
                    help="the odd shapes only (for compute-sanitizer)")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--no-check", action="store_true",
                    help="skip the numerics (tile exploration; never for a result)")
    ap.add_argument("--no-sdpa", action="store_true",
                    help="do not time SDPA-flash (already timed in the same run)")
    ap.add_argument("--bench-dtypes", default="bf16,f16")
    ap.add_argument("--bench-seqs", default="2048,8192")
    ap.add_argument("--bench-dims", default="64,128")
    ap.add_argument("--alibi", type=float,
                    help="the artifact's kernels add score_mod "
                         "ALIBI * (kv_idx - q_idx) (checked as a bias)")
    ap.add_argument("--alibi-slopes", action="store_true",
                    help="the artifact's kernels add score_mod "
                         "slopes[h] * (kv_idx - q_idx) over a captured [Hq] "
                         "tensor (test/Conversion/FlashToGPU/"
                         "mod-captures-ptxas.mlir)")
    ap.add_argument("--documents", action="store_true",
                    help="the artifact's kernels keep ids[q_idx] == "
                         "ids[kv_idx] over captured i32 ids (test/Transforms/"
                         "DeriveBlockSparsity/documents-ids-grad-ptxas.mlir "
                         "compiled with --no-derive-block-sparsity)")
    args = ap.parse_args()
    torch.manual_seed(int(time.time()))
    art = Artifact(args.artifact)
    print(f"device: {torch.cuda.get_device_name()}  kernels: {len(art.kernels)}", flush=True)
    results = []
    shapes = [(1, 2, 2, 1, 1), (2, 4, 4, 17, 17), (1, 4, 2, 113, 203), (1, 2, 2, 128, 64),
              (1, 2, 1, 1, 239), (1, 4, 1, 1023, 1024), (2, 8, 2, 256, 256)]
    if args.quick:
        shapes = [(1, 2, 2, 1, 1), (2, 4, 4, 17, 17), (1, 4, 2, 113, 203)]
    # Every (D, Dv) of the artifact's backward kernels: the default
    # library's and the --headdims suite's alike.
    dims = sorted({(int(k["head_dim"]), int(k["head_dim_v"])) for k in art.kernels
                   if k["kind"] == "backward"}, key=lambda p: (p[0] != p[1], p))
    for dtype in () if args.no_check else ("f16", "bf16"):
        for d, dv in dims:
            for causal in ("none", "top_left", "bottom_right"):
                for shp in shapes:
                    r = check_case(art, dtype, d, causal, *shp, twice=args.deterministic,
                                   alibi=args.alibi, dv=dv,
                                   alibi_slopes=args.alibi_slopes,
                                   documents=args.documents)
                    if r: results.append(r)
        for shp in shapes[2:]:
            for d, kw in ((128, dict(window=(64, 0))), (64, dict(softcap=30.0)),
                          (64, dict(with_bias=True)),
                          (256, dict(window=(64, 0))),
                          (256, dict(softcap=30.0)),
                          (192, dict(window=(64, 0), dv=128)),
                          (192, dict(softcap=30.0, dv=128))):
                r = check_case(art, dtype, d, "none", *shp, twice=args.deterministic, **kw)
                if r: results.append(r)
        if find(art, "forward", dtype, 64, dropout=1):
            check_dropout(art, dtype, results)
    fails = [r for r in results if not r["ok"]]
    for r in fails:
        print("FAIL", json.dumps(r))
    print(f"numerics: {len(results) - len(fails)}/{len(results)} backward cases pass "
          "FlashAttention's gradient rule", flush=True)
    for r in results:
        if "dropped_fraction" in r:
            print("dropout", json.dumps(r), flush=True)
    json.dump(results, open(os.path.join(args.out, "numerics_bwd.json"), "w"), indent=1)
    if args.bench:
        rows = []
        for dtype in args.bench_dtypes.split(","):
            for d in (int(x) for x in args.bench_dims.split(",")):
                for causal in (False, True):
                    for S in (int(x) for x in args.bench_seqs.split(",")):
                        r = bench(art, dtype, d, causal, S, with_sdpa=not args.no_sdpa)
                        rows.append(r)
                        print(f"bwd {dtype:4} d={d:3} S={S:5} causal={int(causal)}  ours {r['ours'] or 0:6.1f}  "
                              f"flash {r.get('sdpa-flash') or 0:6.1f}  ratio "
                              f"{(r['ours'] or 0) / (r.get('sdpa-flash') or 1):.2f}  ms "
                              + " ".join(f"{k} {v:.3f}" for k, v in r["ms"].items()), flush=True)
        json.dump(rows, open(os.path.join(args.out, "bench_bwd.json"), "w"), indent=1)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
