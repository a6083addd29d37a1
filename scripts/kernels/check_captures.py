#!/usr/bin/env python3
"""Checks the forward kernels of artifacts whose score_mod / mask_mod read
values from above their op (docs/KERNEL_ABI.md "Values captured by score_mod
and mask_mod"), compiled from test/Conversion/FlashToGPU/mod-captures-ptxas.mlir,
through flashfuse.artifact.forward(..., captures=...):

- `captures f32/1 f32`: score + alpha * slopes[h] * (kv_idx - q_idx), ALiBi
  over per-head slopes (flash-attn's alibi_slopes, bottom-less causal form)
  scaled by a scalar; the reference adds it as a bias.
- `captures i32/2 i32`: keep key j of row i iff ids[b, i] == ids[b, j] and
  i - j <= reach (a document mask with a reach); the reference masks.

FlashAttention's rule on O (max|O - ref| <= 2 max|O_pt - ref| + 1e-5, ref in
f32, O_pt the same in the kernel's dtype), LSE within 1e-3 of the reference's
and +inf on fully masked rows. Odd shapes, GQA, Sq != Sk, captured tensors
passed as strided views. Run it under compute-sanitizer (--quick) too: the
kernels clamp the indices a region sees into [0, Sq) x [0, Sk), so ids
of exactly max(Sq, Sk) entries are read in bounds.

    check_captures.py ARTIFACT_DIR [ARTIFACT_DIR ...] [--quick]
"""
import argparse, json, math, os, sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
from flashfuse import _runtime as rt  # noqa: E402
from flashfuse import artifact  # noqa: E402

TDT = {rt.DTYPE_F16: torch.float16, rt.DTYPE_BF16: torch.bfloat16}
SHAPES = [(1, 2, 2, 1, 1), (2, 4, 4, 17, 17), (1, 4, 2, 113, 203),
          (2, 8, 2, 256, 256), (1, 4, 1, 1023, 1024), (2, 6, 3, 300, 129)]
QUICK = SHAPES[:3]


def reference(q, k, v, scale, causal, bias, dtype):
    """O (f32) and LSE of softmax(scale q k^T + bias) v computed in dtype
    (bias -inf where masked; causal top-left)."""
    q, k, v = q.to(dtype), k.to(dtype), v.to(dtype)
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    s = (q @ k.transpose(-1, -2)).float() * scale + bias
    if causal:
        sq, sk = s.shape[-2:]
        keep = torch.ones(sq, sk, dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~keep, float("-inf"))
    lse = torch.logsumexp(s, -1)
    p = torch.softmax(s, -1).nan_to_num(0.0)
    return (p.to(dtype) @ v).float(), lse


def case(directory, name, info, shape, gen):
    b, hq, hkv, sq, sk = shape
    d = info.variant.head_dim
    tdt = TDT[info.variant.dtype]
    causal = info.variant.causal != rt.CAUSAL_NONE
    q = torch.randn(b, hq, sq, d, device="cuda", dtype=tdt)
    k = torch.randn(b, hkv, sk, d, device="cuda", dtype=tdt)
    v = torch.randn(b, hkv, sk, d, device="cuda", dtype=tdt)
    rel = (torch.arange(sk, device="cuda")[None, :] -
           torch.arange(sq, device="cuda")[:, None])
    kinds = tuple(info.captures)
    if kinds == (("f32", 1), ("f32", -1)):
        # Every other entry of a longer tensor: a strided view, copied by
        # the package (the kernel reads the last dimension contiguous).
        slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / hq)
                               for h in range(2 * hq)], device="cuda")[::2]
        alpha = float(gen.uniform(0.5, 2.0))
        captures = [slopes, alpha]
        bias = alpha * slopes[None, :, None, None] * rel.float()
    elif kinds == (("i32", 2), ("i32", -1)):
        n = max(sq, sk)
        # Documents of random lengths, ids rising along the sequence; the
        # ids a [B, n] slice of a wider buffer (its row stride passed).
        ids = torch.zeros(b, n + 7, dtype=torch.int32, device="cuda")
        for bi in range(b):
            cuts = sorted(gen.sample(range(1, n), min(3, n - 1))) if n > 1 else []
            for c in cuts:
                ids[bi, c:n] += 1
        ids = ids[:, :n]
        reach = gen.randint(0, n)
        captures = [ids, reach]
        same = ids[:, :sq, None] == ids[:, None, :sk]
        near = (-rel <= reach)[None]
        bias = torch.zeros(b, 1, sq, sk, device="cuda").masked_fill(
            ~(same & near)[:, None], float("-inf"))
    else:
        return None
    scale = d ** -0.5
    o, lse = artifact.forward(directory, q, k, v, kernel=name,
                              captures=captures)
    torch.cuda.synchronize()
    o_ref, lse_ref = reference(q, k, v, scale, causal, bias, torch.float32)
    o_pt, _ = reference(q, k, v, scale, causal, bias, tdt)
    err = (o.float() - o_ref).abs().max().item()
    err_pt = (o_pt - o_ref).abs().max().item()
    dead = torch.isinf(lse_ref)
    lse_err = (lse - lse_ref)[~dead].abs().max().item() if (~dead).any() else 0.0
    dead_ok = bool(torch.all(torch.isinf(lse[dead]) & (lse[dead] > 0)))
    ok = (not math.isnan(err) and err <= 2 * err_pt + 1e-5
          and lse_err <= 1e-3 and dead_ok)
    return dict(kernel=name, shape=list(shape), captures=[list(c) for c in kinds],
                err=err, err_pt=err_pt, lse_err=lse_err,
                masked_rows=int(dead.sum()), ok=ok)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("artifacts", nargs="+")
    ap.add_argument("--quick", action="store_true",
                    help="three odd shapes (for compute-sanitizer)")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()
    import random
    gen = random.Random(7)
    torch.manual_seed(7)
    results = []
    for directory in args.artifacts:
        m = rt.Manifest.open(directory)
        for index, kinfo in enumerate(m.kernels()):
            if kinfo.variant.kind != rt.KIND_FORWARD:
                continue
            name = kinfo.name.decode()
            info = artifact.kernel_info(directory, name)
            for shape in QUICK if args.quick else SHAPES:
                r = case(directory, name, info, shape, gen)
                if r:
                    results.append(r)
                    if not r["ok"]:
                        print("FAIL", json.dumps(r), flush=True)
    fails = [r for r in results if not r["ok"]]
    print(f"captures: {len(results) - len(fails)}/{len(results)} forward cases "
          "pass FlashAttention's rule", flush=True)
    with open(os.path.join(args.out, "captures.json"), "w") as f:
        json.dump(results, f, indent=1)
    return 1 if fails or not results else 0


if __name__ == "__main__":
    sys.exit(main())
