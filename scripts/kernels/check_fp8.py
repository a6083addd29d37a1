#!/usr/bin/env python3
"""Checks and times the FP8 (e4m3) forwards of an artifact (gen_suite.py
--fp8, flashfuse-compile --target=h100) on an H100/H200, launching them
through the CUDA driver with check_and_bench.py's Artifact (which encodes
the q, k and vt tensor maps itself, KERNEL_ABI.md "FP8 forwards").

For every e4m3 kernel of the manifest:
 (a) numerics: random bf16 Q, K, V quantised per head (flashfuse.quantize_fp8),
     the kernel's O against a float64 reference of docs/FP8.md's spec from
     the dequantised inputs (P quantised to e4m3 against the FINAL row
     maximum, as the CPU lowerings do), by FlashAttention's rule as
     FlashAttention-3 applies it to FP8 (FP8_RULE_MULTIPLE):
     max|O - O_ref| <= 3 max|O_pt - O_ref| + 1e-3, O_pt the kernels'
     algorithm in low precision (fp8_online_pt: bf16 products, P quantised
     against the running maximum of each block_n keys), and the mean
     |O - O_ref| at most 1.5x O_pt's (FP8_MEAN_MULTIPLE); the LSE (natural
     log of the unquantised sum, m + log l) within 1e-2. Outputs are
     poisoned with NaN first.
 (b) error against the unquantised inputs: RMSE of O against the f32
     attention of the original bf16 Q, K, V, beside the RMSE of the bf16
     kernel of --baseline (or, without one, SDPA in bf16) on the same
     inputs: the metric of FlashAttention-3's paper (FA3_PAPER_RMSE), on
     standard-normal inputs and on the paper's inputs with outliers. With
     --hadamard also the RMSE with incoherent processing (Q and K quantised
     by quantize_fp8(hadamard=True), V as before; docs/FP8.md) on the same
     inputs, and a table of the two beside the paper's figures.
 (c) throughput: TFLOP/s of the FP8 kernel (alone, and with the per-call Vt
     copy flashfuse.attention makes), the bf16 sm90ws kernel of --baseline,
     and SDPA's flash and cuDNN backends in bf16, B·S = 16k tokens, hidden
     2048; each method warmed up 250 ms, medians over interleaved
     repetitions.

usage: check_fp8.py ARTIFACT [--baseline BF16_ARTIFACT] [--quick] [--no-bench | --bench-only]
                    [--hadamard [--rmse-only]] [--seqs 2048,8192,16384] [--reps 3]
                    [--json FILE] [--out DIR] [--seed N]
Exits non-zero if a numerics case fails.
"""
import argparse, json, math, os, pathlib, re, statistics, sys, time

import torch
import torch.nn.functional as F

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "python"))
from check_and_bench import (Artifact, interleaved_tflops, keep_mask,  # noqa: E402
                             median_ms, reference)
from flashfuse.fp8 import E4M3_MAX, prepare_vt, quantize_fp8  # noqa: E402

E4M3 = torch.float8_e4m3fn
OUT = {"bf16": torch.bfloat16, "f16": torch.float16}
# docs/FP8.md: P is scaled by 256 (a power of two: no rounding) before its
# e4m3 rounding, so that small probabilities stay normal numbers.
P_SCALE = 256.0
# RMSE of O against an FP64 reference, FlashAttention-3 paper (Shah et al.
# 2024), Table 3: inputs N(0, 1) + N(0, 100) * Bernoulli(0.001) (outliers),
# as recalled here -- TODO(check against the paper before quoting):
FA3_PAPER_RMSE = {"baseline fp16": 3.2e-4, "fa2 fp16": 1.9e-4,
                  "fa3 fp16": 1.9e-4, "baseline fp8": 2.4e-2,
                  "fa3 fp8": 9.1e-3,
                  "fa3 fp8 without block quantization": 9.3e-3,
                  "fa3 fp8 without incoherent processing": 2.4e-2}
# Odd shapes (B, Hq, Hkv, Sq, Sk): single rows and keys, lengths around the
# 128-row tiles, Sq != Sk, and GQA 32/8.
ODD = [(1, 2, 2, 1, 1), (2, 4, 4, 17, 17), (1, 4, 2, 127, 129),
       (1, 4, 2, 129, 127), (1, 2, 1, 1, 1000), (1, 32, 8, 1000, 1000),
       (2, 4, 2, 1000, 17)]
# FlashAttention's rule for the FP8 forwards: the multiple of O_pt's
# maximum error FlashAttention-3's tests allow FP8 (hopper/test_flash_attn.py:
# 3, where 16-bit inputs get 2). The maximum is decided by where P's e4m3
# rounding flips: one step of a probability of a short row (17 keys) times a
# large V moves an output by ~0.1, and ours and O_pt flip in different places
# (their scores differ in the last bits: e4m3 products against bf16 ones).
# Run 329 (H200, 12 seeds x the odd shapes x 29 kernels): max-error ratios
# up to 2.10 (the D = 256 causal kernels, 17 x 17), never above 3, while the
# kernels' MEAN error was 0.06-0.34x O_pt's (median) and at most 1.07x. The
# mean bound keeps the check sharp against a systematic error (a wrong
# descale, a misplaced key block), which raises every output's error.
FP8_RULE_MULTIPLE = 3
FP8_MEAN_MULTIPLE = 1.5
HIDDEN, TOKENS = 2048, 16384
API = False  # --api
# The seed of the Hadamard rotation of Q and K (--hadamard): any; Q and K
# must share it.
HADAMARD_SEED = 19


def fp8_kernels(art):
    return [k for k in art.kernels
            if k["kind"] == "forward" and k["dtype"] == "e4m3"]


def plain_kernels(kernels):
    """The kernels without a window or softcap: those the RMSE table and the
    timings cover (window and softcap kernels meet the rule only)."""
    return [k for k in kernels
            if str(k.get("window", "0")) == "0" and str(k.get("softcap", "0")) == "0"]


def make_inputs(B, Hq, Hkv, Sq, Sk, d, outliers=False):
    """bf16 Q, K, V: standard normal, or FlashAttention-3's inputs with
    outliers, N(0, 1) + N(0, 100) * Bernoulli(0.001)."""
    def one(*shape):
        x = torch.randn(*shape, device="cuda")
        if outliers:
            x += 10.0 * torch.randn_like(x) * (torch.rand_like(x) < 1e-3)
        return x.bfloat16()
    return one(B, Hq, Sq, d), one(B, Hkv, Sk, d), one(B, Hkv, Sk, d)


def descale_blocks(kern):
    """(BQ, BK) of a kernel of per-block descales, None for the others."""
    if "descale_block_k" not in kern:
        return None
    return int(kern["descale_block_q"]), int(kern["descale_block_k"])


def quantised(q, k, v, hadamard=False, blocks=None):
    """Per-head e4m3 inputs: (q8, k8, v8, vt, (qd, kd, vd)); with
    `hadamard`, Q and K rotated by one seed's M first (V never is); with
    `blocks` (BQ, BK), one descale per block of BQ query rows and of BK
    keys (FlashAttention-3's block quantisation)."""
    rot = dict(hadamard=True, seed=HADAMARD_SEED) if hadamard else {}
    per = lambda rows: (dict(per="block", block_size=rows) if blocks
                        else {})
    bq, bk = blocks or (0, 0)
    q8, qd = quantize_fp8(q, **rot, **per(bq))
    k8, kd = quantize_fp8(k, **rot, **per(bk))
    v8, vd = quantize_fp8(v, **per(bk))
    return q8, k8, v8, prepare_vt(v8), (qd, kd, vd)


def launch_fp8(art, kern, q8, k8, vt, o, lse, descales, scale, window=(-1, -1),
               softcap=0.0):
    """One launch of an e4m3 kernel (KERNEL_ABI.md "FP8 forwards"): Vt and
    contiguous descales, per head [B, H] (strides H, 1) or per block
    [B, H, N] (H N, N, 1; a kernel of per-block descales)."""
    art.launch_named(kern, *fp8_launch_args(kern, q8, k8, vt, o, lse, descales,
                                            scale, window, softcap))


def prepared_fp8(art, kern, *args, **kwargs):
    """A closure launching as launch_fp8(art, kern, *args, **kwargs), its
    parameter array (two tensor maps) packed once, for the benchmarks: a
    launch_named call costs 0.27-0.45 ms of Python, more than the 2k
    kernels run (docs/PERF.md run 380)."""
    return art.prepared_named(kern, *fp8_launch_args(kern, *args, **kwargs))


def fp8_launch_args(kern, q8, k8, vt, o, lse, descales, scale, window=(-1, -1),
                    softcap=0.0):
    """(grid, bufs, scalars) of launch_fp8."""
    B, Hq, Sq, _ = q8.shape
    Hkv, Sk = k8.shape[1], k8.shape[2]
    bufs = {"q": q8, "k": k8, "vt": vt, "o": o, "lse": lse}
    scal = {"batch": B, "heads_q": Hq, "heads_kv": Hkv, "seq_q": Sq, "seq_k": Sk,
            "scale": scale, "window_left": window[0], "window_right": window[1],
            "softcap": softcap, "dropout_p": 0.0, "seed": 0}
    for name, t, dims in (("q", q8, "bhs"), ("k", k8, "bhs"), ("vt", vt, "bhd"),
                          ("o", o, "bhs")):
        scal.update({f"{name}_stride_{c}": t.stride(i) for i, c in enumerate(dims)})
    for name, t in zip(("q_descale", "k_descale", "v_descale"), descales):
        bufs[name] = t
        strides = t.stride() + (0,) * (3 - t.dim())
        for c, st in zip("bhn", strides):
            scal[f"{name}_stride_{c}"] = st
    bm = int(kern["block_m"])
    return ((Sq + bm - 1) // bm, Hq, B), bufs, scal


def per_row(descale, rows, block):
    """A descale [B, H] or [B, H, N] (blocks of `block` rows) as factors
    [B, H, 1 or rows, 1]."""
    if descale.dim() == 2:
        return descale[:, :, None, None]
    return descale[:, :, torch.arange(rows, device=descale.device) // block,
                   None]


def dequantised(q8, k8, v8, descales, stats, compute, blocks=None):
    """Q, K, V times their descales in `stats` (per block of `blocks` =
    (BQ, BK) rows where they are [B, H, N]), rounded to `compute`, K and V
    repeated over each GQA group."""
    bq, bk = blocks or (0, 0)
    qd, kd, vd = (per_row(t, x.shape[2], rows).to(stats)
                  for t, x, rows in zip(descales, (q8, k8, v8), (bq, bk, bk)))
    G = q8.shape[1] // k8.shape[1]
    q = (q8.to(stats) * qd).to(compute)
    k = (k8.to(stats) * kd).repeat_interleave(G, dim=1).to(compute)
    v = (v8.to(stats) * vd).repeat_interleave(G, dim=1).to(compute)
    return q, k, v


def fp8_spec(q8, k8, v8, descales, scale, causal, compute, window=None,
             softcap=0.0, blocks=None):
    """docs/FP8.md's forward for one batch entry's heads, P quantised against
    the final row maximum: (O f64/f32, LSE) with the products in `compute`
    (float64 for O_ref, bfloat16 for O_pt: dequantised inputs rounded to
    bf16, bf16 matmuls) and the softmax statistics in f64 / f32."""
    stats = torch.float64 if compute == torch.float64 else torch.float32
    q, k, v = dequantised(q8, k8, v8, descales, stats, compute, blocks)
    s = (q @ k.transpose(-1, -2)).to(stats) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    keep = keep_mask(q.shape[2], k.shape[2], causal, window, q.device)
    s = s.masked_fill(~keep, float("-inf"))
    m = s.amax(dim=-1, keepdim=True)
    m_safe = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    p = torch.exp(s - m_safe)
    l = p.sum(dim=-1, keepdim=True)
    p8 = (P_SCALE * p).clamp(max=E4M3_MAX).to(E4M3)
    o = (p8.to(compute) @ v).to(stats) / (P_SCALE * l)
    o = torch.where(l > 0, o, torch.zeros_like(o))  # a row with no key: 0
    return o, (m_safe + torch.log(l)).squeeze(-1)


def fp8_online_pt(q8, k8, v8, descales, scale, causal, block_n, window=None,
                  softcap=0.0, blocks=None):
    """O_pt of FlashAttention's rule for the kernels: their algorithm in
    low precision. The kernels quantise P against the RUNNING row maximum
    (online softmax over key blocks of `block_n`), so a P8 can land one
    e4m3 step away from the reference's, which quantises against the final
    maximum; fp8_spec in bf16 has the reference's P8 bit for bit, and its
    error holds only bf16 rounding (the rule compared a one-row case's
    online rounding against that and failed it, run 178). This is the
    online computation: bf16 products, f32 statistics, P8 of 256 p against
    the maximum so far, the accumulator rescaled when the maximum grows."""
    q, k, v = dequantised(q8, k8, v8, descales, torch.float32, torch.bfloat16,
                          blocks)
    Sq, Sk = q.shape[2], k.shape[2]
    keep = keep_mask(Sq, Sk, causal, window, q.device)
    m = torch.full(q.shape[:3] + (1,), float("-inf"), device=q.device)
    l = torch.zeros_like(m)
    acc = torch.zeros(q.shape[:3] + (v.shape[3],), device=q.device)
    for j in range(0, Sk, block_n):
        s = (q @ k[:, :, j:j + block_n].transpose(-1, -2)).float() * scale
        if softcap:
            s = softcap * torch.tanh(s / softcap)
        s = s.masked_fill(~keep[..., j:j + block_n], float("-inf"))
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
        m_safe = torch.where(torch.isfinite(m_new), m_new, torch.zeros_like(m_new))
        alpha = torch.exp(m - m_safe)
        p = torch.exp(s - m_safe)
        p8 = (P_SCALE * p).clamp(max=E4M3_MAX).to(E4M3)
        acc = acc * alpha + (p8.bfloat16() @ v[:, :, j:j + block_n]).float()
        l = l * alpha + p.sum(dim=-1, keepdim=True)
        m = m_new
    o = acc / (P_SCALE * l)
    return torch.where(l > 0, o, torch.zeros_like(o))


# Bytes of float64 scores the reference holds at once (a few copies of them
# live during its softmax).
REF_SCORE_BYTES = 1 << 31


def reference_slices(B, Hq, Hkv, Sq, Sk, max_batches):
    """(batch entry, query heads, kv heads) slices the reference runs on:
    whole GQA groups, as many kv heads as keep the scores of one slice
    within REF_SCORE_BYTES; the first `max_batches` entries where given."""
    G = Hq // Hkv
    per_kv = max(1, REF_SCORE_BYTES // (G * Sq * Sk * 8))
    for b in range(B if max_batches is None else min(B, max_batches)):
        for h in range(0, Hkv, per_kv):
            e = min(Hkv, h + per_kv)
            yield b, slice(h * G, e * G), slice(h, e)


# Per-block descale kernels see inputs whose blocks of rows differ in
# magnitude (Q and K x 1/1.25, 1, 1.25 by block; V x 1/4, 1, 4), so that a
# factor read for the wrong block shows. Q's and K's stay mild: Hopper's
# e4m3 wgmma accumulates with fewer bits than f32 (a relative error of
# about 2^-13 of the summed product magnitudes), which LSE's absolute
# tolerance sees on large scores (run 185: x2 gave LSE errors of 1.2e-2 at
# D = 256).
BLOCK_MAGNITUDES = (1.25, 4.0)


def check_case(art, kern, B, Hq, Hkv, Sq, Sk, max_batches=None,
               magnitudes=None):
    """FlashAttention's rule for one kernel and shape; the reference runs
    on slices of batch entries and heads (reference_slices), over the first
    `max_batches` entries only where given (the kernel runs on all).
    `magnitudes` (QK base, V base, rows) scales the inputs' blocks of rows
    as BLOCK_MAGNITUDES does for per-block kernels (the default), for any
    kernel."""
    d, out = int(kern["head_dim"]), OUT[kern["out_dtype"]]
    causal = kern["causal"]
    # The sizes of a window kernel are launch parameters: 64 keys to the
    # left of the diagonal (as gen_suite.py's variant), none to the right.
    window = (64, 0) if str(kern.get("window", "0")) == "1" else None
    softcap = 30.0 if str(kern.get("softcap", "0")) == "1" else 0.0
    q, k, v = make_inputs(B, Hq, Hkv, Sq, Sk, d)
    blocks = descale_blocks(kern)
    if blocks and magnitudes is None:
        magnitudes = BLOCK_MAGNITUDES + (blocks[1],)
    if magnitudes:
        qk_base, v_base, rows = magnitudes
        for t, base in ((q, qk_base), (k, qk_base), (v, v_base)):
            t *= base ** (torch.arange(t.shape[2], device=t.device) // rows % 3
                          - 1)[:, None].to(t.dtype)
    q8, k8, v8, vt, descales = quantised(q, k, v, blocks=blocks)
    o = torch.full((B, Hq, Sq, d), float("nan"), device="cuda", dtype=out)
    lse = torch.full((B, Hq, Sq), float("nan"), device="cuda")
    scale = 1.0 / math.sqrt(d)
    launch_fp8(art, kern, q8, k8, vt, o, lse, descales, scale, window or (-1, -1), softcap)
    torch.cuda.synchronize()
    err = err_pt = lse_err = 0.0
    # Mean |O - O_ref| of ours and of O_pt: P's e4m3 rounding makes the
    # maximum a matter of where one rounding flips (one e4m3 step of a large
    # probability times a large V moves an output by ~0.1), the mean shows
    # whether the kernel's errors are those of the algorithm.
    abs_sum = abs_sum_pt = 0.0
    count = 0
    for b, hq, hkv in reference_slices(B, Hq, Hkv, Sq, Sk, max_batches):
        bs = slice(b, b + 1)
        one = (q8[bs, hq], k8[bs, hkv], v8[bs, hkv])
        ds = (descales[0][bs, hq], descales[1][bs, hkv], descales[2][bs, hkv])
        ref, ref_lse = fp8_spec(*one, ds, scale, causal, torch.float64, window,
                                softcap, blocks)
        pt = fp8_online_pt(*one, ds, scale, causal, int(kern["block_n"]),
                           window, softcap, blocks)
        diff = (o[bs, hq].double() - ref).abs()
        diff_pt = (pt.double() - ref).abs()
        err = max(err, diff.max().item())
        err_pt = max(err_pt, diff_pt.max().item())
        abs_sum += diff.sum().item()
        abs_sum_pt += diff_pt.sum().item()
        count += diff.numel()
        rows = torch.isfinite(ref_lse)  # a row without keys has no LSE
        if rows.any():
            lse_err = max(lse_err, (lse[bs, hq].double() - ref_lse)[rows]
                          .abs().max().item())
    mean_err, mean_err_pt = abs_sum / count, abs_sum_pt / count
    ok = (not math.isnan(err) and err <= FP8_RULE_MULTIPLE * err_pt + 1e-3
          and mean_err <= FP8_MEAN_MULTIPLE * mean_err_pt + 1e-4
          and lse_err < 1e-2)
    result = dict(kernel=kern["name"], shape=[B, Hq, Hkv, Sq, Sk, d], err=err,
                  err_pt=err_pt, lse_err=lse_err, ok=ok,
                  mean_err=mean_err, mean_err_pt=mean_err_pt)
    if API and Sq == Sk:
        # The package's path (flashfuse.attention: its own Vt copy, descale
        # strides and kernel lookup in FLASHFUSE_KERNEL_DIR) must give this
        # kernel's output bit for bit: asked for the kernel's own causal
        # alignment (at Sq == Sk both mask the same keys, but their kernels
        # may have different tiles, so different rounding).
        import flashfuse
        o_api = flashfuse.attention(
            q8, k8, v8, is_causal=False if causal == "none" else causal,
            scale=scale,
            enable_gqa=Hq != Hkv, window=window, softcap=softcap or None,
            q_descale=descales[0],
            k_descale=descales[1], v_descale=descales[2], out_dtype=out,
            descale_block_size=blocks or (128, 128))
        torch.cuda.synchronize()
        result["api_equal"] = bool(torch.equal(o_api, o))
        result["ok"] = ok and result["api_equal"]
    return result


def f32_attention(q, k, v, causal):
    """O (f32) of the unquantised inputs, one batch entry at a time."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    return torch.cat([reference(q[b:b + 1], k[b:b + 1], v[b:b + 1], scale,
                                causal)[0] for b in range(q.shape[0])])


def rmse(a, b):
    return (a.float() - b.float()).pow(2).mean().sqrt().item()


def error_vs_unquantised(art, kern, baseline, B, H, S, outliers,
                         hadamard=False):
    """(b): RMSE of the FP8 kernel's O and of the bf16 kernel's (or SDPA's)
    against the f32 attention of the bf16 inputs before quantisation; with
    `hadamard`, also the FP8 kernel's on the same inputs with Q and K
    rotated before quantisation ("fp8+hadamard")."""
    d, causal = int(kern["head_dim"]), kern["causal"]
    q, k, v = make_inputs(B, H, H, S, S, d, outliers)
    truth = f32_attention(q, k, v, causal)
    o = torch.empty(B, H, S, d, device="cuda", dtype=OUT[kern["out_dtype"]])
    lse = torch.empty(B, H, S, device="cuda")
    res = {}
    for name, rotate in (("fp8", False), ("fp8+hadamard", True))[:1 + hadamard]:
        # (QM)(KM)ᵀ = QKᵀ: the same kernel and scale, only the inputs differ.
        q8, k8, _, vt, descales = quantised(q, k, v, hadamard=rotate,
                                            blocks=descale_blocks(kern))
        launch_fp8(art, kern, q8, k8, vt, o, lse, descales, 1.0 / math.sqrt(d))
        res[name] = rmse(o, truth)
    base = baseline and find_bf16(baseline, d, causal)
    o16 = torch.empty(B, H, S, d, device="cuda", dtype=torch.bfloat16)
    if base:
        baseline.launch(base, q, k, v, o16, lse, 1.0 / math.sqrt(d))
        res["bf16-kernel"] = base["name"]
    else:  # equal lengths: top-left and bottom-right causal agree
        o16 = F.scaled_dot_product_attention(q, k, v, is_causal=causal != "none")
        res["bf16-kernel"] = "sdpa"
    res["bf16"] = rmse(o16, truth)
    return res


def hadamard_table(rows):
    """(b)'s results as the table "baseline FP8 vs + Hadamard" (markdown),
    our rows measured here, the paper's as recalled (FA3_PAPER_RMSE)."""
    out = ["| kernel | inputs | fp8 | fp8 + Hadamard | ratio | bf16 |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['kernel']} | {r['inputs']} | {r['fp8']:.2e} | "
                   f"{r['fp8+hadamard']:.2e} | "
                   f"{r['fp8+hadamard'] / r['fp8']:.2f} | "
                   f"{r['bf16']:.2e} ({r['bf16-kernel']}) |")
    paper = FA3_PAPER_RMSE
    out += ["", "FlashAttention-3 paper, outlier inputs, AS RECALLED (not "
            "checked against the paper; their reference is FP64, their "
            "shapes and scaling granularity may differ from ours):",
            f"  baseline fp8 {paper['baseline fp8']:.1e}, fa3 fp8 without "
            f"block quantization (incoherent processing only) "
            f"{paper['fa3 fp8 without block quantization']:.1e}, fa3 fp8 "
            f"without incoherent processing "
            f"{paper['fa3 fp8 without incoherent processing']:.1e}, fa3 fp8 "
            f"{paper['fa3 fp8']:.1e}. FlashFuse has no block quantization "
            "(docs/FP8.md): compare our two columns with the first two."]
    return "\n".join(out)


def quantise_ms(S, d, reps):
    """Median ms of quantising Q and K (B·S = 16k tokens, hidden 2048,
    bf16) per head, without and with the Hadamard rotation, interleaved
    `reps` times."""
    H, B = HIDDEN // d, TOKENS // S
    q, k, _ = make_inputs(B, H, H, S, S, d)
    rot = dict(hadamard=True, seed=HADAMARD_SEED)
    plain, rotated = [], []
    for _ in range(reps):
        plain.append(median_ms(lambda: (quantize_fp8(q), quantize_fp8(k))))
        rotated.append(median_ms(
            lambda: (quantize_fp8(q, **rot), quantize_fp8(k, **rot))))
    return statistics.median(plain), statistics.median(rotated)


def find_bf16(baseline, d, causal):
    """The baseline's bf16 forward of the same head dim and mask (for S_q =
    S_k, causal top_left computes what bottom_right does)."""
    for c in (causal, "top_left" if causal == "bottom_right" else causal):
        k = baseline.find("bf16", d, c)
        if k:
            return k
    return None


def bench(art, kern, baseline, S, reps):
    """(c) for one kernel and sequence length."""
    from torch.nn.attention import sdpa_kernel, SDPBackend
    d, causal = int(kern["head_dim"]), kern["causal"] != "none"
    H, B = HIDDEN // d, TOKENS // S
    scale = 1.0 / math.sqrt(d)
    # Three input sets in rotation, so that repeated runs do not hit L2 only.
    sets = []
    for _ in range(3):
        q, k, v = make_inputs(B, H, H, S, S, d)
        sets.append(((q, k, v), quantised(q, k, v)))
    o8 = torch.empty(B, H, S, d, device="cuda", dtype=OUT[kern["out_dtype"]])
    o16 = torch.empty(B, H, S, d, device="cuda", dtype=torch.bfloat16)
    lse = torch.empty(B, H, S, device="cuda")
    it = [0]
    # Every launch packed once per input set (prepared_fp8): the timed calls
    # are the kernels', not the script's Python.
    fp8_calls = [prepared_fp8(art, kern, q8, k8, vt, o8, lse, ds, scale)
                 for _, (q8, k8, _, vt, ds) in sets]

    def nxt():
        it[0] += 1
        return it[0] % 3

    def fp8():
        fp8_calls[nxt()]()

    def fp8_with_vt():  # what flashfuse.attention does per call: Vt, then O
        i = nxt()
        prepare_vt(sets[i][1][2])  # the set's own Vt already holds this
        fp8_calls[i]()

    def sdpa(backend):
        def run():
            (q, k, v), _ = sets[nxt()]
            with sdpa_kernel(backend):
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return run

    methods = [("fp8", fp8), ("fp8+vt", fp8_with_vt)]
    res = {"kernel": kern["name"], "d": d, "S": S, "B": B, "H": H,
           "causal": kern["causal"], "out": kern["out_dtype"]}
    base = baseline and find_bf16(baseline, d, kern["causal"])
    if base:
        bf16_calls = [baseline.prepared(base, q, k, v, o16, lse, scale)
                      for (q, k, v), _ in sets]

        def bf16():
            bf16_calls[nxt()]()
        methods.append(("bf16", bf16))
        res["bf16-kernel"] = base["name"]
    methods += [("sdpa-flash", sdpa(SDPBackend.FLASH_ATTENTION)),
                ("sdpa-cudnn", sdpa(SDPBackend.CUDNN_ATTENTION))]
    flops = 4 * B * H * S * S * d / (2 if causal else 1)
    res.update(interleaved_tflops(methods, flops, reps, res))
    return res


def bench_block_descales(art, kern, S, reps):
    """The cost of per-block descales: kernel `kern` (a _ds one) and its
    per-head counterpart (the same name without the _ds suffix) timed in
    interleaved repetitions on the same inputs, each with its own
    descales (per block, per head)."""
    base_name = re.sub(r"_ds\d+x\d+$", "", kern["name"])
    head = next(k for k in art.kernels if k["name"] == base_name)
    d, causal = int(kern["head_dim"]), kern["causal"] != "none"
    H, B = HIDDEN // d, TOKENS // S
    scale = 1.0 / math.sqrt(d)
    q, k, v = make_inputs(B, H, H, S, S, d)
    per_head = quantised(q, k, v)
    per_block = quantised(q, k, v, blocks=descale_blocks(kern))
    o = torch.empty(B, H, S, d, device="cuda", dtype=OUT[kern["out_dtype"]])
    lse = torch.empty(B, H, S, device="cuda")

    def run(kernel, inputs):
        q8, k8, _, vt, ds = inputs
        return prepared_fp8(art, kernel, q8, k8, vt, o, lse, ds, scale)

    res = {"kernel": kern["name"], "per_head_kernel": head["name"], "d": d,
           "S": S, "causal": kern["causal"]}
    flops = 4 * B * H * S * S * d / (2 if causal else 1)
    res.update(interleaved_tflops([("per-head", run(head, per_head)),
                                   ("per-block", run(kern, per_block))],
                                  flops, reps, res))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("artifact")
    ap.add_argument("--baseline", default=None,
                    help="a bf16 sm90ws artifact (gen_suite.py --sm90ws): its "
                         "kernels are the bf16 side of (b) and (c)")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--json", default=None, help="write every result here")
    ap.add_argument("--quick", action="store_true",
                    help="the odd shapes only, no (b) (for compute-sanitizer)")
    ap.add_argument("--no-bench", action="store_true")
    ap.add_argument("--bench-only", action="store_true",
                    help="(c) only: no numerics or RMSE")
    ap.add_argument("--seqs", default="2048,8192,16384")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--profile", type=int, default=0, metavar="S",
                    help="for a profiler: launch the first non-causal D = 128 "
                         "kernel 5 times at sequence length S (16k tokens, "
                         "hidden 2048), nothing else")
    ap.add_argument("--hadamard", action="store_true",
                    help="(b) also with incoherent processing: Q and K "
                         "quantised by quantize_fp8(hadamard=True), then the "
                         "table baseline FP8 vs + Hadamard; (c) also times "
                         "the quantisation of Q and K with and without it")
    ap.add_argument("--rmse-only", action="store_true",
                    help="(b) only: no numerics (a) or timing (c)")
    ap.add_argument("--kernels", default=None, metavar="REGEX",
                    help="only the e4m3 kernels whose name matches (re.search), "
                         "e.g. _ds for those of per-block descales")
    ap.add_argument("--block-cost", action="store_true",
                    help="(c) for per-block descale kernels only: each timed "
                         "against its per-head counterpart, interleaved")
    ap.add_argument("--api", action="store_true",
                    help="also run flashfuse.attention on every Sq == Sk case "
                         "(FLASHFUSE_KERNEL_DIR set to ARTIFACT) and require its O "
                         "to equal the direct launch's bit for bit")
    ap.add_argument("--seed", type=int, default=None,
                    help="the inputs' random seed (default: the time); two "
                         "artifacts checked with one seed see the same "
                         "inputs, so equal errors in --json show equal "
                         "outputs")
    args = ap.parse_args()
    # --block-cost is a timing of its own: no numerics or RMSE.
    args.bench_only = args.bench_only or args.block_cost
    global API
    API = args.api
    if API:
        # The package must find these kernels, not another library's.
        os.environ["FLASHFUSE_KERNEL_DIR"] = os.path.abspath(args.artifact)
    torch.manual_seed(int(time.time()) if args.seed is None else args.seed)
    art = Artifact(args.artifact)
    baseline = Artifact(args.baseline) if args.baseline else None
    kernels = [k for k in fp8_kernels(art)
               if not args.kernels or re.search(args.kernels, k["name"])]
    if not kernels:
        print(f"{args.artifact}: no e4m3 forward kernels", file=sys.stderr)
        return 2
    print(f"device: {torch.cuda.get_device_name()}  e4m3 kernels: {len(kernels)}",
          flush=True)
    if args.profile:
        kern = next(k for k in kernels
                    if int(k["head_dim"]) == 128 and k["causal"] == "none")
        S, H = args.profile, HIDDEN // 128
        q, k, v = make_inputs(TOKENS // S, H, H, S, S, 128)
        q8, k8, _, vt, ds = quantised(q, k, v)
        o = torch.empty(q.shape, device="cuda", dtype=OUT[kern["out_dtype"]])
        lse = torch.empty(q.shape[:3], device="cuda")
        for _ in range(5):
            launch_fp8(art, kern, q8, k8, vt, o, lse, ds, 1 / math.sqrt(128))
        torch.cuda.synchronize()
        print(f"profiled {kern['name']} at S = {S}")
        return 0
    seqs = [int(s) for s in args.seqs.split(",")]
    results = {"numerics": [], "rmse": [], "bench": []}
    failures = 0
    if args.rmse_only and (args.quick or args.bench_only):
        ap.error("--rmse-only runs (b), which --quick and --bench-only skip")
    for kern in kernels if not (args.bench_only or args.rmse_only) else []:
        d = int(kern["head_dim"])
        shapes = list(ODD)
        if not args.quick:
            # B·S = 16k tokens, hidden 2048; the reference checks one batch
            # entry (float64 scores of S x S per head).
            shapes += [(TOKENS // S, HIDDEN // d, HIDDEN // d, S, S) for S in seqs]
        for shp in shapes:
            r = check_case(art, kern, *shp, max_batches=None if shp in ODD else 1)
            results["numerics"].append(r)
            failures += not r["ok"]
            api = ("" if "api_equal" not in r else
                   "  api equal" if r["api_equal"] else "  API DIFFERS")
            print(("ok  " if r["ok"] else "FAIL") + f" {kern['name']} {shp}: err "
                  f"{r['err']:.2e} (pt {r['err_pt']:.2e}) mean "
                  f"{r['mean_err']:.2e} (pt {r['mean_err_pt']:.2e}) lse "
                  f"{r['lse_err']:.1e}"
                  + api, flush=True)
    n = len(results["numerics"])
    if n:
        print(f"numerics: {n - failures}/{n} cases pass FlashAttention's rule",
              flush=True)
    if not args.quick and not args.bench_only:
        print("RMSE vs f32 attention of the unquantised inputs (B=4, H=16, S=2048, "
              "per-head scales); FA3 paper (as recalled, unchecked):",
              json.dumps(FA3_PAPER_RMSE), flush=True)
        # Quantisation error on plain and causal attention, as
        # FlashAttention-3's table.
        for kern in plain_kernels(kernels):
            for outliers in (False, True):
                r = error_vs_unquantised(art, kern, baseline, 4, 16, 2048, outliers,
                                         hadamard=args.hadamard)
                r.update(kernel=kern["name"], inputs="outliers" if outliers else "normal")
                results["rmse"].append(r)
                rot = (f"  fp8+hadamard {r['fp8+hadamard']:.2e}"
                       if args.hadamard else "")
                print(f"  {kern['name']:40} {r['inputs']:8} fp8 {r['fp8']:.2e}{rot}  "
                      f"bf16 ({r['bf16-kernel']}) {r['bf16']:.2e}", flush=True)
        if args.hadamard:
            print(hadamard_table(results["rmse"]), flush=True)
    if args.hadamard and not args.no_bench and not args.rmse_only:
        print("quantising Q and K (ms, bf16, 16k tokens, hidden 2048): per head, "
              "+ Hadamard", flush=True)
        for d in sorted({int(k["head_dim"]) for k in kernels}):
            for S in seqs:
                plain, rotated = quantise_ms(S, d, args.reps)
                results["bench"].append({"quantise": "q+k", "d": d, "S": S,
                                         "plain_ms": plain, "hadamard_ms": rotated})
                print(f"  D={d:3} S={S:5}  {plain:.3f}  {rotated:.3f}", flush=True)
    if args.block_cost:
        print("TFLOP/s, per-block descales against per-head ones "
              "(interleaved)", flush=True)
        for kern in [k for k in kernels if descale_blocks(k)]:
            for S in seqs:
                r = bench_block_descales(art, kern, S, args.reps)
                results["bench"].append(r)
                ratio = (r["per-block"] / r["per-head"]
                         if r.get("per-block") and r.get("per-head") else 0)
                print(f"  {kern['name']:52} S={S:5}  per-head "
                      f"{r.get('per-head') or 0:6.1f}  per-block "
                      f"{r.get('per-block') or 0:6.1f}  ({ratio:.3f})",
                      flush=True)
    elif not args.no_bench and not args.rmse_only:
        print("TFLOP/s", flush=True)
        # Against the baseline's forward of the same causal mask: window
        # and softcap kernels have no counterpart there.
        for kern in plain_kernels(kernels):
            for S in seqs:
                r = bench(art, kern, baseline, S, args.reps)
                results["bench"].append(r)
                cols = "  ".join(f"{m} {r.get(m) or 0:6.1f}" for m in
                                 ("fp8", "fp8+vt", "bf16", "sdpa-flash", "sdpa-cudnn")
                                 if m in r)
                print(f"  {kern['name']:40} S={S:5}  {cols}", flush=True)
    path = args.json or os.path.join(args.out, "fp8.json")
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        json.dump(results, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
