#!/usr/bin/env python3
"""Document masks over run-time sequence ids on a GPU: the kernels
flashfuse-compile makes of test/Transforms/DeriveBlockSparsity/
documents-ids-ptxas.mlir, whose mask_mod compares ids[q_idx] and
ids[kv_idx] (the ids a captured value, docs/KERNEL_ABI.md "Values captured
by score_mod and mask_mod"):

- DIR/derived: block-sparse (flash-derive-block-sparsity), the sm90ws
  forward walking key-block lists the caller computes from the ids
  (document_lists below, as the module's host IR does), the mask_mod in
  partial blocks only;
- DIR/dense: every key block, the mask_mod on every score (sm90 forward);
- DIR/bwd, DIR/bwd-dense (optional): the same two ways for the backward,
  from documents-ids-grad-ptxas.mlir (flashfuse.artifact.backward); DIR/
  bwd-ws (optional) the derived one on the sm90ws backward
  (flashfuse-compile --recipe=auto-tma); any other DIR/bwd-NAME is checked
  and timed as one more derived backward (another compiler's, say).

Numerics of both against a PyTorch reference with the mask materialised
(FlashAttention's rule: max|O - ref| <= 2 max|O_pt - ref| + 1e-5, LSE within
1e-3) on odd shapes with documents not aligned to blocks, causal or not.
Then times, at B = 1, H = 16, D = 128, bf16, S = 16k in documents of random
lengths, the derived kernel, the dense one and FlexAttention (torch.compile,
the same mask_mod over the ids and its BlockMask), each warmed up 250 ms,
medians of interleaved repetitions (CUDA events).

    check_documents.py DIR [--quick] [--no-bench]
"""
import argparse, json, math, os, statistics, sys, time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
from flashfuse import _runtime as rt  # noqa: E402
from flashfuse import artifact  # noqa: E402

BLOCK = 128


def random_ids(n, docs, gen):
    """int32 [n]: `docs` documents of random lengths, ids rising."""
    cuts = sorted(gen.sample(range(1, n), min(docs - 1, n - 1))) if n > 1 else []
    ids = torch.zeros(n, dtype=torch.int32)
    for c in cuts:
        ids[c:] += 1
    return ids.cuda()


def element_mask(ids, sq, sk, causal):
    keep = ids[:sq, None] == ids[None, :sk]
    if causal:
        keep &= torch.ones(sq, sk, dtype=torch.bool, device=ids.device).tril()
    return keep


def document_lists(ids, sq, sk, causal):
    """(kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices)
    [1, 1, QB(, KB)] int32 of the mask over 128 x 128 blocks: a block with
    some kept scores is listed, as full where every score of it is kept
    (padding past Sq / Sk counts as not kept, so tail blocks are partial)."""
    qb, kb = -(-sq // BLOCK), -(-sk // BLOCK)
    keep = torch.zeros(qb * BLOCK, kb * BLOCK, dtype=torch.bool,
                       device=ids.device)
    keep[:sq, :sk] = element_mask(ids, sq, sk, causal)
    blocks = keep.view(qb, BLOCK, kb, BLOCK)
    full = blocks.all(3).all(1)
    partial = blocks.any(3).any(1) & ~full

    def lists(member):
        num = member.sum(-1, dtype=torch.int32)
        # The members' indices first, ascending (a stable sort of 0 / 1).
        idx = torch.sort((~member).to(torch.int8), dim=-1, stable=True).indices
        return num[None, None], idx.to(torch.int32)[None, None]

    return lists(partial) + lists(full)


def reference(q, k, v, keep, dtype):
    q, k, v = q.to(dtype), k.to(dtype), v.to(dtype)
    s = (q @ k.transpose(-1, -2)).float() * q.shape[-1] ** -0.5
    s = s.masked_fill(~keep, float("-inf"))
    lse = torch.logsumexp(s, -1)
    p = torch.softmax(s, -1).nan_to_num(0.0)
    return (p.to(dtype) @ v).float(), lse


def kernel_of(directory, causal, kind=rt.KIND_FORWARD):
    m = rt.Manifest.open(directory)
    for info in m.kernels():
        if (info.variant.kind == kind
                and (info.variant.causal != rt.CAUSAL_NONE) == causal):
            return info.name.decode()
    raise SystemExit(f"no {'causal ' if causal else ''}kernel of kind {kind} "
                     f"in {directory}")


def ours_backward(directory, name, do, q, k, v, o, lse, ids, lists):
    return artifact.backward(directory, do, q, k, v, o, lse, kernel=name,
                             captures=[ids], block_mask=lists, check=False)


def derived_backwards(root):
    """The derived backward artifacts under root: bwd, then every bwd-NAME
    but bwd-dense, in name order."""
    names = sorted(f for f in os.listdir(root)
                   if f.startswith("bwd-") and f != "bwd-dense")
    return [f for f in ["bwd"] + names if os.path.isdir(os.path.join(root, f))]


def check_backward(root, shapes, gen):
    """FlashAttention's gradient rule (max|g - g_ref| <= 3 max|g_pt - g_ref|
    + 1e-4, ref by autograd in f32, pt in bf16) for dQ, dK, dV of the
    derived (bwd/) and dense (bwd-dense/) backwards, O and LSE from our
    derived forward."""
    results = []
    for causal in (False, True):
        for b, h, s, docs in shapes:
            q, k, v, do = (torch.randn(b, h, s, 128, device="cuda",
                                       dtype=torch.bfloat16) for _ in range(4))
            ids = random_ids(s, docs, gen)
            keep = element_mask(ids, s, s, causal)
            lists = document_lists(ids, s, s, causal)
            fwd = os.path.join(root, "derived")
            o, lse = ours(fwd, kernel_of(fwd, causal), q, k, v, ids, lists)
            leaves = [t.float().requires_grad_() for t in (q, k, v)]
            g_ref = torch.autograd.grad(reference(*leaves, keep, torch.float32)[0],
                                        leaves, do.float())
            leaves_pt = [t.detach().clone().requires_grad_() for t in (q, k, v)]
            g_pt = torch.autograd.grad(
                reference(*leaves_pt, keep, torch.bfloat16)[0], leaves_pt,
                do.float())
            for flavour in derived_backwards(root) + ["bwd-dense"]:
                d = os.path.join(root, flavour)
                if not os.path.isdir(d):
                    continue
                name = kernel_of(d, causal, rt.KIND_BACKWARD)
                grads = ours_backward(d, name, do, q, k, v, o, lse, ids,
                                      None if flavour == "bwd-dense" else lists)
                torch.cuda.synchronize()
                r = dict(kernel=name, shape=[b, h, s], docs=docs,
                         causal=causal, ok=True)
                for gname, g, gr, gp in zip(("dq", "dk", "dv"), grads, g_ref,
                                            g_pt):
                    err = (g.float() - gr).abs().max().item()
                    err_pt = (gp.float() - gr).abs().max().item()
                    r[gname] = [err, err_pt]
                    r["ok"] &= not math.isnan(err) and err <= 3 * err_pt + 1e-4
                results.append(r)
                if not r["ok"]:
                    print("FAIL", json.dumps(r), flush=True)
    return results


def ours(directory, name, q, k, v, ids, lists):
    return artifact.forward(directory, q, k, v, kernel=name, captures=[ids],
                            block_mask=lists, check=False)


def check(root, shapes, gen):
    results = []
    for causal in (False, True):
        for b, h, s, docs in shapes:
            q, k, v = (torch.randn(b, h, s, 128, device="cuda",
                                   dtype=torch.bfloat16) for _ in range(3))
            ids = random_ids(s, docs, gen)
            keep = element_mask(ids, s, s, causal)
            o_ref, lse_ref = reference(q, k, v, keep, torch.float32)
            o_pt, _ = reference(q, k, v, keep, torch.bfloat16)
            err_pt = (o_pt - o_ref).abs().max().item()
            lists = document_lists(ids, s, s, causal)
            for flavour in ("derived", "dense"):
                d = os.path.join(root, flavour)
                name = kernel_of(d, causal)
                o, lse = ours(d, name, q, k, v, ids,
                              lists if flavour == "derived" else None)
                torch.cuda.synchronize()
                err = (o.float() - o_ref).abs().max().item()
                lse_err = (lse - lse_ref).abs().max().item()
                ok = (not math.isnan(err) and err <= 2 * err_pt + 1e-5
                      and lse_err <= 1e-3)
                r = dict(kernel=name, shape=[b, h, s], docs=docs,
                         causal=causal, err=err, err_pt=err_pt,
                         lse_err=lse_err, ok=ok)
                results.append(r)
                if not ok:
                    print("FAIL", json.dumps(r), flush=True)
    return results


def timed(fns, reps=10, inner=10, warm_s=0.25):
    """{name: median ms of a call}: each warmed up warm_s of its own calls,
    then `reps` interleaved rounds of `inner` calls between two events (the
    host runs ahead of the GPU, so its time per call is not billed)."""
    for fn in fns.values():
        end = time.time() + warm_s
        while time.time() < end:
            fn()
        torch.cuda.synchronize()
    times = {name: [] for name in fns}
    host = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            start, stop = (torch.cuda.Event(enable_timing=True) for _ in range(2))
            start.record()
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            host[name].append((time.perf_counter() - t0) * 1e3 / inner)
            stop.record()
            torch.cuda.synchronize()
            times[name].append(start.elapsed_time(stop) / inner)
    return ({name: statistics.median(t) for name, t in times.items()},
            {name: statistics.median(t) for name, t in host.items()})


def gpu_ms(fn, calls=5):
    """(GPU time of a call in ms, its three longest kernels) by the
    profiler: what the kernels take, without the host's time between
    them."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    events = [e for e in prof.key_averages() if e.self_device_time_total > 0]
    total = sum(e.self_device_time_total for e in events) / 1e3 / calls
    top = sorted(events, key=lambda e: -e.self_device_time_total)[:3]
    return total, [(e.key[:60], e.self_device_time_total / 1e3 / calls)
                   for e in top]


def bench(root, gen, seq=16384, heads=16, docs=12):
    from torch.nn.attention.flex_attention import (create_block_mask,
                                                   flex_attention)
    flex = torch.compile(flex_attention)
    rows = []
    for causal in (False, True):
        q, k, v = (torch.randn(1, heads, seq, 128, device="cuda",
                               dtype=torch.bfloat16) for _ in range(3))
        ids = random_ids(seq, docs, gen)

        def mask_mod(b, h, qi, ki):
            same = ids[qi] == ids[ki]
            return same & (qi >= ki) if causal else same

        block_mask = create_block_mask(mask_mod, None, None, seq, seq,
                                       device="cuda", BLOCK_SIZE=BLOCK)
        lists = document_lists(ids, seq, seq, causal)
        derived, dense = (os.path.join(root, f) for f in ("derived", "dense"))
        nd, nn = kernel_of(derived, causal), kernel_of(dense, causal)
        fns = {
            "derived": lambda: ours(derived, nd, q, k, v, ids, lists),
            "dense": lambda: ours(dense, nn, q, k, v, ids, None),
            "flex": lambda: flex(q, k, v, block_mask=block_mask),
        }
        o_ours = fns["derived"]()[0].float()
        o_flex = fns["flex"]().float()
        kept = element_mask(ids, seq, seq, causal).sum().item()
        ms, host_ms = timed(fns)
        gpu = {name: gpu_ms(fn) for name, fn in fns.items()}
        useful = 4 * heads * 128 * kept  # FLOPs of the kept scores
        row = dict(causal=causal, seq=seq, heads=heads, docs=docs,
                   density=kept / seq / seq,
                   partial_blocks=int(lists[0].sum()),
                   full_blocks=int(lists[2].sum()),
                   ms=ms, host_ms=host_ms, gpu=gpu, tflops={n: useful / t / 1e9 for n, t in ms.items()},
                   flex_over_derived=ms["flex"] / ms["derived"],
                   dense_over_derived=ms["dense"] / ms["derived"],
                   max_diff_vs_flex=(o_ours - o_flex).abs().max().item())
        rows.append(row)
        print(json.dumps(row), flush=True)
        if os.path.isdir(os.path.join(root, "bwd")):
            rows.append(bench_backward(root, q, k, v, ids, lists, causal,
                                       flex, block_mask, useful, derived, nd))
            print(json.dumps(rows[-1]), flush=True)
    return rows


def bench_backward(root, q, k, v, ids, lists, causal, flex, block_mask,
                   useful, fwd_dir, fwd_name):
    """The backward alone (2.5x the forward's useful FLOPs): ours derived
    and dense (O and LSE from our derived forward), FlexAttention's through
    autograd of its compiled forward."""
    do = torch.randn_like(q)
    o, lse = ours(fwd_dir, fwd_name, q, k, v, ids, lists)
    bwd, dense = (os.path.join(root, f) for f in ("bwd", "bwd-dense"))
    nb = kernel_of(bwd, causal, rt.KIND_BACKWARD)
    nn = kernel_of(dense, causal, rt.KIND_BACKWARD)
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    o_flex = flex(*leaves, block_mask=block_mask)
    fns = {
        "derived": lambda: ours_backward(bwd, nb, do, q, k, v, o, lse, ids,
                                         lists),
        "dense": lambda: ours_backward(dense, nn, do, q, k, v, o, lse, ids,
                                       None),
        "flex": lambda: torch.autograd.grad(o_flex, leaves, do,
                                            retain_graph=True),
    }
    for flavour in derived_backwards(root)[1:]:
        d = os.path.join(root, flavour)
        nd = kernel_of(d, causal, rt.KIND_BACKWARD)
        fns["derived" + flavour[3:]] = (
            lambda d=d, nd=nd: ours_backward(d, nd, do, q, k, v, o, lse, ids,
                                             lists))
    g_ours = fns["derived"]()
    g_flex = fns["flex"]()
    ms, host_ms = timed(fns)
    gpu = {name: gpu_ms(fn) for name, fn in fns.items()}
    flops = 2.5 * useful
    return dict(direction="backward", causal=causal, ms=ms, host_ms=host_ms,
                gpu=gpu, tflops={n: flops / t / 1e9 for n, t in ms.items()},
                flex_over_derived=ms["flex"] / ms["derived"],
                dense_over_derived=ms["dense"] / ms["derived"],
                max_diff_vs_flex=[(a.float() - b.float()).abs().max().item()
                                  for a, b in zip(g_ours, g_flex)])


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", help="holds derived/ and dense/")
    ap.add_argument("--quick", action="store_true",
                    help="small shapes only (for compute-sanitizer)")
    ap.add_argument("--no-bench", action="store_true")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()
    import random
    gen = random.Random(11)
    torch.manual_seed(11)
    shapes = [(1, 2, 1, 1), (2, 3, 77, 3), (1, 4, 300, 4), (2, 2, 1000, 5)]
    if not args.quick:
        shapes += [(1, 8, 2048, 7), (1, 2, 2047, 1)]
    results = check(args.root, shapes, gen)
    if os.path.isdir(os.path.join(args.root, "bwd")):
        results += check_backward(args.root, shapes[:5], gen)
    fails = [r for r in results if not r["ok"]]
    print(f"documents: {len(results) - len(fails)}/{len(results)} cases pass "
          "FlashAttention's rule (forward and gradient)", flush=True)
    out = dict(numerics=results)
    if not args.no_bench and not args.quick:
        out["bench"] = bench(args.root, gen)
    with open(os.path.join(args.out, "documents.json"), "w") as f:
        json.dump(out, f, indent=1)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
