#!/usr/bin/env python3
"""flashfuse.attention(..., alibi_slopes=...) on the GPU: FlashAttention's
rule for O (max|O - ref| <= 2 max|O_pt - ref| + 1e-5) and for dQ, dK, dV
(<= 3 max|g_pt - g_ref| + 1e-4) against a reference with flash-attn's bias
(-slopes[h] * |i + Sk - Sq - j|) materialised, in f32 (ref) and in the
inputs' dtype (pt), over odd shapes, GQA, Sq != Sk both ways, the three
causal modes, windows, softcap and both slope layouts ([Hq], [B, Hq]
strided); then (--bench) the forward and the training step against our own
kernels without ALiBi, FlexAttention's ALiBi score_mod and SDPA with the
bias as a float mask.

The kernels are compiled on first use by flashfuse-compile. A machine
without it (the lent GPU machine has no LLVM) runs artifacts compiled
elsewhere by the same code path:

    check_alibi.py --compile DIR          # where flashfuse-compile is
    check_alibi.py --artifacts DIR [--quick] [--bench]   # on the GPU
"""
import argparse, itertools, json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)  # check_documents, also when imported by a test

import torch  # noqa: E402

import flashfuse  # noqa: E402
from flashfuse import _compile, alibi  # noqa: E402
# Medians of interleaved rounds after each method's 250 ms of warm-up.
from check_documents import timed  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}
CAUSAL = {"none": False, "top_left": "top_left", "bottom_right": "bottom_right"}
CAUSAL_CODE = {"none": 0, "top_left": 1, "bottom_right": 2}
SHAPES = [(1, 2, 2, 1, 1), (2, 4, 2, 17, 33), (1, 4, 1, 113, 203),
          (2, 8, 2, 256, 256), (1, 4, 4, 300, 129), (1, 2, 1, 1023, 1024)]
QUICK = [SHAPES[1], SHAPES[2], SHAPES[4]]
# (dtype, D, causal, window, softcap); each over every shape and layout.
CASES = ([(dt, d, c, None, 0.0) for dt in DTYPES for d in (64, 128)
          for c in CAUSAL]
         + [("bf16", d, "none", w, 0.0) for d in (64, 128)
            for w in ((64, 0), (32, 16))]
         + [("bf16", 128, c, None, 30.0) for c in ("none", "top_left")]
         + [("bf16", d, c, None, 0.0) for d in (80, 256)
            for c in ("none", "bottom_right")])


# flashfuse.varlen_attention's ALiBi (python/tests/test_alibi_varlen_gpu.py):
# (dtype, D, causal, window, layout), one kernel pair each.
VARLEN_CASES = [("bf16", 128, "none", None, 1),
                ("bf16", 128, "bottom_right", None, 2),
                ("bf16", 128, "top_left", None, 1),
                ("bf16", 128, "none", (32, 8), 2),
                ("f16", 64, "bottom_right", None, 1)]


# The deterministic backward (an artifact compiled --deterministic):
# (dtype, D, causal, window, softcap, layout, varlen), one backward each.
DETERMINISTIC_CASES = [("bf16", 128, "bottom_right", None, 0.0, 1, False),
                       ("f16", 64, "none", (32, 8), 0.0, 2, False),
                       ("f16", 64, "bottom_right", None, 0.0, 1, True)]


# ALiBi with dropout (python/tests/test_alibi_gpu.py, _varlen_gpu.py):
# (dtype, D, causal, window, softcap, layout, varlen), one kernel pair each.
DROPOUT_CASES = [("bf16", 128, "bottom_right", None, 0.0, 1, False),
                 ("bf16", 128, "bottom_right", None, 0.0, 2, False),
                 ("f16", 64, "bottom_right", None, 0.0, 1, True)]


# Variants the GPU tests run beyond the sweep's: the packed one of
# test_alibi_varlen_gpu.py's one-sequence comparison, with the same tuple
# layout as DETERMINISTIC_CASES (whose forwards those tests run too).
EXTRA_CASES = [("bf16", 64, "top_left", None, 0.0, 1, True)]


# flashfuse.block_sparse_attention(alibi_slopes=)
# (python/tests/test_alibi_block_sparse_gpu.py): (dtype, D, causal, layout,
# lists: 1 partial only, 2 partial and full), one kernel pair each, over
# BLOCK_SPARSE_SHAPES (b, hq, hkv, sq, sk) with random lists of 128 x 128
# blocks (check_block_sparse.random_lists: empty rows, junk past counts).
BLOCK_SPARSE_CASES = [("bf16", 128, "none", 1, 2),
                      ("bf16", 64, "top_left", 2, 2),
                      ("f16", 128, "bottom_right", 1, 1)]
BLOCK_SPARSE_SHAPES = [(2, 4, 2, 300, 520), (1, 4, 4, 256, 256),
                       (1, 2, 1, 129, 700)]


def block_sparse_variant(dtype, d, causal, layout, mode):
    return alibi.kernel_variant(DTYPES[dtype], d, d, CAUSAL_CODE[causal],
                                False, False, layout,
                                sparse=(mode, 128, 128))


def variant_of(dtype, d, causal, window, softcap, layout, varlen=False,
               dropout=False):
    return alibi.kernel_variant(DTYPES[dtype], d, d, CAUSAL_CODE[causal],
                                window is not None, softcap > 0, layout,
                                varlen=varlen, dropout=dropout)


def every_variant():
    return ({variant_of(*case, layout) for case in CASES
             for layout in (1, 2)}
            | {variant_of(dt, d, c, w, 0.0, layout, varlen=True)
               for dt, d, c, w, layout in VARLEN_CASES}
            | {variant_of(*case, dropout=True) for case in DROPOUT_CASES}
            | {variant_of(*case) for case in DETERMINISTIC_CASES + EXTRA_CASES}
            | {block_sparse_variant(*case) for case in BLOCK_SPARSE_CASES})


def compile_all(root, block_sparse_only=False):
    """Compiles every variant's forward and backward for h100 (and the
    deterministic backward of DETERMINISTIC_CASES) into root/cache and
    writes root/index.json ({name|backward[|det]: directory});
    `block_sparse_only`: BLOCK_SPARSE_CASES' alone."""
    os.environ["FLASHFUSE_CACHE_DIR"] = os.path.join(root, "cache")
    index = {}
    chosen = ({block_sparse_variant(*c) for c in BLOCK_SPARSE_CASES}
              if block_sparse_only else every_variant())
    for v in sorted(chosen, key=lambda v: v.name):
        for backward in (False, True):
            d = _compile.compile_variant(v, (9, 0), backward=backward)
            index[f"{v.name}|{int(backward)}"] = os.path.relpath(d, root)
            print(v.name, "backward" if backward else "forward", d,
                  flush=True)
    for case in DETERMINISTIC_CASES if not block_sparse_only else ():
        v = variant_of(*case)
        d = _compile.compile_variant(v, (9, 0), backward=True,
                                     deterministic=True)
        index[f"{v.name}|1|det"] = os.path.relpath(d, root)
        print(v.name, "deterministic backward", d, flush=True)
    with open(os.path.join(root, "index.json"), "w") as f:
        json.dump(index, f, indent=1)


def use_artifacts(root):
    """alibi.artifact_dir answered from root/index.json (compile_all's)."""
    with open(os.path.join(root, "index.json")) as f:
        index = json.load(f)

    def artifact_dir(variant, backward, device, deterministic=False):
        key = f"{variant.name}|{int(backward)}" + ("|det" if deterministic
                                                    else "")
        return os.path.join(root, index[key])

    alibi.artifact_dir = artifact_dir


def slopes_for(b, hq, layout, gen):
    base = flashfuse.alibi_slopes(hq)
    if layout == 1:
        return base.cuda()
    # [B, Hq], a strided view: every other column of a wider tensor.
    wide = torch.rand(b, 2 * hq, generator=gen) * 0.5
    wide[:, ::2] = base
    return wide.cuda()[:, ::2]


def reference(q, k, v, do, slopes, causal, window, softcap, dtype,
              keep_lists=None):
    """(O, dQ, dK, dV) of attention with flash-attn's ALiBi, computed in
    `dtype` (O's matmuls) with the softmax in f32, by autograd;
    `keep_lists`, the keys block-sparse lists keep ([B', H', Sq, Sk])."""
    q, k, v = (t.detach().to(dtype).requires_grad_() for t in (q, k, v))
    b, hq, sq, d = q.shape
    sk = k.shape[2]
    g = hq // k.shape[1]
    kk, vv = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    s = (q @ kk.transpose(-1, -2)).float() * d ** -0.5
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    i = torch.arange(sq, device="cuda")[:, None]
    j = torch.arange(sk, device="cuda")[None, :]
    sl = slopes[None, :] if slopes.dim() == 1 else slopes
    s = s - sl[:, :, None, None] * (i + sk - sq - j).abs()
    keep = torch.ones(sq, sk, dtype=torch.bool, device="cuda")
    if causal == "top_left":
        keep &= j <= i
    elif causal == "bottom_right":
        keep &= j <= i + sk - sq
    if window is not None:
        keep &= (j >= i - window[0]) & (j <= i + window[1])
    if keep_lists is not None:
        keep = keep & keep_lists
    s = s.masked_fill(~keep, float("-inf"))
    p = torch.softmax(s, -1).nan_to_num(0.0)
    o = p.to(dtype) @ vv
    grads = torch.autograd.grad(o, (q, k, v), do.to(dtype))
    return (o.float(),) + tuple(t.float() for t in grads)


def judged(r, ours, ref, pt):
    """`r` with each of O, dQ, dK, dV's max error and the dtype reference's
    in it, and `ok`: FlashAttention's rule (O within 2x the reference's
    error + 1e-5, the gradients 3x + 1e-4)."""
    r["ok"] = True
    for name, x, want, low, slack, factor in zip(
            ("o", "dq", "dk", "dv"), ours, ref, pt,
            (1e-5, 1e-4, 1e-4, 1e-4), (2, 3, 3, 3)):
        err = (x.float() - want).abs().max().item()
        err_pt = (low - want).abs().max().item()
        r[name] = [err, err_pt]
        r["ok"] &= err == err and err <= factor * err_pt + slack
    return r


def random_inputs(shape, d, dt):
    """q, k, v, dO of `shape` (b, hq, hkv, sq, sk) on the GPU."""
    b, hq, hkv, sq, sk = shape
    return [torch.randn(b, h, s, d, device="cuda", dtype=dt)
            for h, s in ((hq, sq), (hkv, sk), (hkv, sk), (hq, sq))]


def check_case(dtype, d, causal, window, softcap, layout, shape, gen,
               deterministic=False):
    b, hq, hkv, sq, sk = shape
    dt = DTYPES[dtype]
    q, k, v, do = random_inputs(shape, d, dt)
    slopes = slopes_for(b, hq, layout, gen)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    o = flashfuse.attention(*leaves, is_causal=CAUSAL[causal],
                            enable_gqa=hq != hkv, window=window,
                            softcap=softcap or None, alibi_slopes=slopes,
                            deterministic=deterministic)
    grads = torch.autograd.grad(o, leaves, do)
    ref = reference(q, k, v, do, slopes, causal, window, softcap,
                    torch.float32)
    pt = reference(q, k, v, do, slopes, causal, window, softcap, dt)
    r = dict(dtype=dtype, d=d, causal=causal, window=window, softcap=softcap,
             layout=layout, shape=shape)
    return judged(r, (o,) + grads, ref, pt)


def check_block_sparse_case(dtype, d, causal, layout, mode, shape, gen):
    """block_sparse_attention(alibi_slopes=)'s O and gradients against the
    reference with the lists' keys materialised."""
    import check_block_sparse as cbs
    b, hq, hkv, sq, sk = shape
    dt = DTYPES[dtype]
    q, k, v, do = random_inputs(shape, d, dt)
    slopes = slopes_for(b, hq, layout, gen)
    n, i, fn, fi = cbs.random_lists(b, hq, sq, sk, 0.6, 0.5, gen)
    lists = (n, i, fn, fi) if mode == 2 else (n, i, None, None)
    keep = cbs.visible_mask(lists, sq, sk, False)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    o = flashfuse.block_sparse_attention(
        *leaves, kv_num_blocks=n, kv_indices=i,
        full_kv_num_blocks=fn if mode == 2 else None,
        full_kv_indices=fi if mode == 2 else None, is_causal=CAUSAL[causal],
        enable_gqa=hq != hkv, alibi_slopes=slopes, check=True)
    grads = torch.autograd.grad(o, leaves, do)
    ref = reference(q, k, v, do, slopes, causal, None, 0.0, torch.float32,
                    keep)
    pt = reference(q, k, v, do, slopes, causal, None, 0.0, dt, keep)
    r = dict(dtype=dtype, d=d, causal=causal, layout=layout, lists=mode,
             shape=shape)
    return judged(r, (o,) + grads, ref, pt)


def check(shapes, gen):
    results = []
    for case in CASES:
        for layout in (1, 2):
            for shape in shapes:
                if case[1] in (80, 256) and shape[3] > 300:
                    continue  # the sm80-recipe backwards: keep the sweep short
                r = check_case(*case, layout, shape, gen)
                results.append(r)
                if not r["ok"]:
                    print("FAIL", json.dumps(r), flush=True)
    bad = sum(not r["ok"] for r in results)
    print(json.dumps(dict(cases=len(results), failures=bad)), flush=True)
    return results


def bench(seqs=(2048, 8192), heads=16, d=128):
    from torch.nn.attention.flex_attention import (create_block_mask,
                                                   flex_attention)
    flex = torch.compile(flex_attention)
    rows = []
    for seq, causal in itertools.product(seqs, (False, True)):
        b = 16384 // seq
        q, k, v, do = (torch.randn(b, heads, seq, d, device="cuda",
                                   dtype=torch.bfloat16) for _ in range(4))
        slopes = slopes_for(b, heads, 1, None)
        i = torch.arange(seq, device="cuda")
        bias = (-slopes[:, None, None] * (i[:, None] - i[None, :]).abs())
        if causal:
            bias = bias.masked_fill(i[None, :] > i[:, None], float("-inf"))
        bias = bias.to(torch.bfloat16)[None]

        def score_mod(score, bb, h, qi, ki):
            return score - slopes[h] * (qi - ki).abs()

        mask = (create_block_mask(lambda bb, h, qi, ki: qi >= ki, None, None,
                                  seq, seq, device="cuda")
                if causal else None)
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        sdpa = torch.nn.functional.scaled_dot_product_attention
        fwd = {
            "alibi": lambda: flashfuse.attention(q, k, v, is_causal=causal,
                                                 alibi_slopes=slopes),
            "plain": lambda: flashfuse.attention(q, k, v, is_causal=causal),
            "flex": lambda: flex(q, k, v, score_mod=score_mod,
                                 block_mask=mask),
            "sdpa_bias": lambda: sdpa(q, k, v, attn_mask=bias),
        }
        outs = {n: f().float() for n, f in fwd.items()}
        diff = {n: (outs["alibi"] - outs[n]).abs().max().item()
                for n in ("flex", "sdpa_bias")}

        def step(f):
            return lambda: torch.autograd.grad(f(*leaves), leaves, do)

        steps = {
            "alibi": step(lambda a, bb, c: flashfuse.attention(
                a, bb, c, is_causal=causal, alibi_slopes=slopes)),
            "plain": step(lambda a, bb, c: flashfuse.attention(
                a, bb, c, is_causal=causal)),
            "flex": step(lambda a, bb, c: flex(a, bb, c, score_mod=score_mod,
                                               block_mask=mask)),
            "sdpa_bias": step(lambda a, bb, c: sdpa(a, bb, c,
                                                    attn_mask=bias)),
        }
        flops = 4 * b * heads * seq * seq * d / (2 if causal else 1)
        for what, fns, mult in (("forward", fwd, 1.0), ("step", steps, 3.5)):
            ms = timed(fns, reps=7, inner=5)[0]
            row = dict(what=what, seq=seq, batch=b, causal=causal, ms=ms,
                       tflops={n: mult * flops / t / 1e9
                               for n, t in ms.items()},
                       over_alibi={n: t / ms["alibi"] for n, t in ms.items()})
            if what == "forward":
                row["max_diff"] = diff
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--compile", metavar="DIR")
    ap.add_argument("--block-sparse-only", action="store_true",
                    help="with --compile: BLOCK_SPARSE_CASES' kernels only")
    ap.add_argument("--artifacts", metavar="DIR")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--no-check", action="store_true")
    args = ap.parse_args()
    if args.compile:
        compile_all(args.compile, args.block_sparse_only)
        return 0
    if args.artifacts:
        use_artifacts(args.artifacts)
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    failures = 0
    if not args.no_check:
        results = check(QUICK if args.quick else SHAPES, gen)
        failures = sum(not r["ok"] for r in results)
    if args.bench:
        bench()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
