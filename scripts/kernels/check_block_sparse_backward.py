#!/usr/bin/env python3
"""Block-sparse backward kernels (gen_suite.py --block-sparse --backward)
on a GPU: dQ, dK, dV against a dense reference with the mask materialised
from the lists, then forward + backward time against FlexAttention
(torch.compile'd flex_attention with the same BlockMask) and against our
dense kernels.

    python3 scripts/kernels/gen_suite.py --block-sparse --backward -o /tmp/bsb.mlir
    flashfuse-compile /tmp/bsb.mlir --target=h100 -o /tmp/bsb-kernels
    FLASHFUSE_KERNEL_DIR=/tmp/bsb-kernels python3 \\
        scripts/kernels/check_block_sparse_backward.py [--numerics-only] \\
        [--seq 16384] [--sanitize]

The transposition (backward_sparse_transpose) alone, exactly: its
workspace against a torch transposition of the same lists (counts, and
each row's query blocks in increasing order up to its count).

Numerics (FlashAttention's rule, DESIGN.md): g_ref from torch autograd in
f32 over the keys the lists keep (check_block_sparse.visible_mask: partial
blocks through causal when asked, full blocks whole, unlisted blocks
nothing), g_pt the same in the inputs' dtype; max|g - g_ref| <= 3 max|g_pt
- g_ref| + 1e-4 for each of dQ, dK, dV, and the forward's O by the
forward's rule (2x). Cases: random lists (empty rows, partial + full, junk
past each row's count that the transposition must ignore), Sq and Sk not
multiples of 128 and Sq != Sk, broadcast lists (B' = 1, H' = 1) and
per-(b, h) ones, GQA, causal, D = 64 / 128, a key block no query lists (dK
= dV = 0 there), structured masks (FlexAttention's create_block_mask of a
document and a sliding-window mask, when FlexAttention is there). Outputs
and scratch are poisoned first (FLASHFUSE_POISON_OUTPUTS=1).

--sanitize runs a few odd shapes only, once each, for compute-sanitizer:

    compute-sanitizer --tool memcheck python3 \\
        scripts/kernels/check_block_sparse_backward.py --sanitize

Throughput (--seq, default 16384, bf16, D = 128, B = 1, H = 16): random
lists at densities 50 / 25 / 10 % (half of the listed blocks full), and the
document, sliding-window + global and prefix-LM (causal, plus the first
quarter of the keys for every query) masks; per case one training step (forward +
backward, torch.autograd.grad of O against a fixed dO) of ours, of
FlexAttention with the same BlockMask (BlockMask.from_kv_blocks for the
random lists: its q-block lists are built once, outside the timing, as
create_block_mask does; ours likewise after the first step, and in the
column "ours+T" transposed again in every step) and of our
dense kernels (all blocks), each warmed for 250 ms, timed with CUDA events
over interleaved repetitions (medians; as check_block_sparse.py: the
device's time of a step with the host ahead, and one step on an idle
stream, 'idle'). Useful FLOP/s counts 3.5 * 4 * B *
H * D per visible (query, key) pair (forward 1x, backward 2.5x). Reported:
useful TFLOP/s of ours and of the dense step, and FlexAttention's time over
ours (target > 1). Exit status 1 when a numerics check fails or a kernel is
missing; the timings are reported, not enforced (docs/PERF.md). Each
case reuses its list tensors across repetitions, so its transposition
runs in the first step only (block_sparse.TransposedLists), as
FlexAttention's q-lists are built once per BlockMask.

--profile prints the device time of each kernel of one training step
(ours: forward, transposition, preprocess, backward, postprocess; and
FlexAttention's) at 50% and 10% random density, with no numerics.
"""
import argparse
import math
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "scripts" / "kernels"))

import torch  # noqa: E402

import flashfuse  # noqa: E402
from flashfuse import _runtime as rt  # noqa: E402
from flashfuse import block_sparse, ops  # noqa: E402
from check_block_sparse import (BLOCK, ODD_SHAPE_CASES, _flex,  # noqa: E402
                                flex_columns, interleaved, medians,
                                random_lists, timed, visible_mask)
from profile_backward_kernels import kernel_times  # noqa: E402


def reference_transpose(n, i, sq, sk):
    """The transposed pair of docs/KERNEL_ABI.md "Block-sparse backward"
    from the forward pair (n [B', H', QB], i [B', H', QB, N]): counts
    [B', H', KB] and, per row, the query blocks listing kb, increasing."""
    qb, kb = -(-sq // BLOCK), -(-sk // BLOCK)
    used = torch.arange(i.shape[-1], device=i.device) < \
        n.clamp(0, i.shape[-1]).unsqueeze(-1)
    member = torch.zeros(*i.shape[:3], kb + 1, dtype=torch.bool,
                         device=i.device)
    member.scatter_(-1, torch.where(used & (i >= 0) & (i < kb), i.long(), kb),
                    True)
    member = member[..., :kb].transpose(2, 3)  # [B', H', KB, QB]
    counts = member.sum(-1).to(torch.int32)
    order = torch.argsort((~member).to(torch.int8), dim=-1, stable=True)
    return counts, order.to(torch.int32)


def check_transpose(name, b, hq, sq, sk, lists):
    """Runs the artifact's backward_sparse_transpose kernel alone and
    compares its workspace with reference_transpose, exactly (the slots
    past each count are not part of the contract)."""
    q = torch.zeros(b, hq, sq, 128, device="cuda", dtype=torch.bfloat16)
    mode = 2 if len(lists) == 4 else 1
    plan = ops._backward_plan(
        q.device.index, (q, q, q, None, None, 0, -1, -1, 0.0, 0.0),
        deterministic=False, block_sparse=(mode, BLOCK, BLOCK))
    kernel = plan[1][0]  # after the preprocess
    full = tuple(t.contiguous() for t in lists) + (None,) * (4 - len(lists))
    named, workspace = block_sparse._backward_list_args(full, sq, sk,
                                                        (BLOCK, BLOCK))
    for key, value in (("batch", b), ("heads_q", hq), ("seq_q", sq),
                       ("seq_k", sk)):
        named[key] = (rt.PARAM_I32, value)
    for t in workspace:
        t.fill_(-7)  # unwritten counts show
    rt.kernel_launch(kernel, named, torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    ok = True
    for pair, (t_num, t_idx) in enumerate(zip(workspace[::2],
                                              workspace[1::2])):
        counts, order = reference_transpose(full[2 * pair], full[2 * pair + 1],
                                            sq, sk)
        ok &= torch.equal(t_num, counts)
        used = torch.arange(order.shape[-1], device=order.device) < \
            counts.unsqueeze(-1)
        ok &= torch.equal(torch.where(used, t_idx, -1),
                          torch.where(used, order, -1))
    print(f"{'ok  ' if ok else 'FAIL'} transpose {name}")
    return ok


def reference_grads(q, k, v, do, keep, dtype):
    """(O, dQ, dK, dV) of attention over `keep` by torch autograd, computed
    in `dtype` (f32: the reference; the inputs' dtype: the same computation
    rounded as the kernels' inputs are); rows without a key give O = 0 and
    no gradient."""
    q, k, v = (t.detach().to(dtype).requires_grad_() for t in (q, k, v))
    g = q.shape[1] // k.shape[1]
    kk, vv = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    s = (q @ kk.transpose(-1, -2)) * (q.shape[-1] ** -0.5)
    s = s.masked_fill(~keep, float("-inf"))
    p = torch.softmax(s.float(), -1).nan_to_num(0.0).to(dtype)
    o = p @ vv
    dq, dk, dv = torch.autograd.grad(o, (q, k, v), do.to(dtype))
    return tuple(t.float() for t in (o, dq, dk, dv))


def run_ours(q, k, v, do, lists, causal):
    q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
    o = flashfuse.block_sparse_attention(
        q, k, v, lists, is_causal=causal, enable_gqa=q.shape[1] != k.shape[1],
        check=False)
    dq, dk, dv = torch.autograd.grad(o, (q, k, v), do)
    return tuple(t.float() for t in (o, dq, dk, dv))


def check_case(name, b, hq, hkv, sq, sk, d, dtype, lists, causal,
               zero_key_blocks=()):
    gen = torch.Generator(device="cuda").manual_seed(abs(hash(name)) % 2**31)
    q = torch.randn(b, hq, sq, d, device="cuda", dtype=dtype, generator=gen)
    k = torch.randn(b, hkv, sk, d, device="cuda", dtype=dtype, generator=gen)
    v = torch.randn(b, hkv, sk, d, device="cuda", dtype=dtype, generator=gen)
    do = torch.randn(b, hq, sq, d, device="cuda", dtype=dtype, generator=gen)
    os.environ["FLASHFUSE_POISON_OUTPUTS"] = "1"
    full = tuple(lists) + (None,) * (4 - len(lists))
    keep = visible_mask(full, sq, sk, causal)
    ours = run_ours(q, k, v, do, lists, causal)
    ref = reference_grads(q, k, v, do, keep, torch.float32)
    pt = reference_grads(q, k, v, do, keep, dtype)
    ok, parts = True, []
    for what, x, r, p, factor, atol in zip(
            ("O", "dQ", "dK", "dV"), ours, ref, pt, (2, 3, 3, 3),
            (1e-5, 1e-4, 1e-4, 1e-4)):
        err = (x - r).abs().max().item()
        bound = factor * (p - r).abs().max().item() + atol
        good = math.isfinite(err) and err <= bound
        ok &= good
        parts.append(f"{what} {err:.2e}/{bound:.2e}{'' if good else ' !'}")
    for kb in zero_key_blocks:
        # No query block lists it: its keys' gradients are exactly zero.
        rows = slice(kb * BLOCK, min((kb + 1) * BLOCK, sk))
        zero = all(t[:, :, rows].abs().max().item() == 0 for t in ours[2:])
        ok &= zero
        parts.append(f"key block {kb} zero: {zero}")
    print(f"{'ok  ' if ok else 'FAIL'} {name}: " + ", ".join(parts))
    return ok


def unlisted_key_block(lists, kb):
    """The lists with key block kb removed from every row (the rows stay
    sorted: it is dropped and the rest shift left)."""
    out = []
    for n, i in zip(lists[::2], lists[1::2]):
        used = torch.arange(i.shape[-1], device=i.device) < n.unsqueeze(-1)
        hit = used & (i == kb)
        keepers = used & ~hit
        order = torch.argsort((~keepers).to(torch.int8), dim=-1, stable=True)
        i2 = torch.gather(i, -1, order)
        out += [keepers.sum(-1).to(torch.int32), i2.contiguous()]
    return tuple(out)


def structured(seq_q, seq_k, which):
    """A FlexAttention BlockMask (create_block_mask) and its mask_mod, or
    None without FlexAttention."""
    flex = _flex()
    if flex is None:
        return None
    create_block_mask, _ = flex
    if which == "document":
        doc = torch.arange(max(seq_q, seq_k), device="cuda") // 300

        def mod(b, h, q, k):
            return doc[q] == doc[k]
    else:
        def mod(b, h, q, k):
            return ((q - k).abs() <= 200) | (k < 64)
    return create_block_mask(mod, None, None, seq_q, seq_k, device="cuda"), mod


def numerics(sanitize=False):
    gen = torch.Generator().manual_seed(0)
    failures = 0
    # The forward check's sweep (D <= 128: D = 256 has no backward
    # kernel), and a causal case with Sq < Sk (the transposed band starts
    # past the first key blocks).
    cases = [c for c in ODD_SHAPE_CASES if c[6] <= 128] + [
        ("causal sq<sk", 1, 2, 2, 200, 700, 128, 0.7, 0.5, True, (1, 1)),
    ]
    if sanitize:  # odd shapes, each once
        cases = [c for c in cases if c[0] in ("random d128", "one key",
                                              "broadcast gqa", "empty rows")]
    dtypes = (torch.bfloat16,) if sanitize else (torch.float16,
                                                 torch.bfloat16)
    for name, b, hq, hkv, sq, sk, d, dens, full, causal, (lb, lh) in cases:
        for dtype in dtypes:
            n, i, fn, fi = random_lists(lb, lh, sq, sk, dens, full, gen)
            lists = (n, i) if full == 0 else (n, i, fn, fi)
            try:
                failures += not check_case(f"{name} {dtype}", b, hq, hkv, sq,
                                           sk, d, dtype, lists, causal)
            except Exception as e:  # a missing kernel, a bad launch
                failures += 1
                print(f"FAIL {name} {dtype}: {type(e).__name__}: {e}")
    # The transposition alone, exactly: per-(b, h) and broadcast lists,
    # junk past the counts, lengths not multiples of the block.
    for name, b, hq, sq, sk, (lb, lh) in (
            ("per-head", 2, 4, 1000, 1300, (2, 4)),
            ("broadcast", 2, 8, 384, 640, (1, 1)),
            ("batch-broadcast", 3, 2, 129, 7000, (1, 2))):
        n, i, fn, fi = random_lists(lb, lh, sq, sk, 0.5, 0.3, gen)
        try:
            failures += not check_transpose(name, b, hq, sq, sk,
                                            (n, i, fn, fi))
        except Exception as e:
            failures += 1
            print(f"FAIL transpose {name}: {type(e).__name__}: {e}")
    if sanitize:
        return failures
    def guarded(label, cases):
        """Failures of the named cases (a callable returning their
        count), an exception counting as one."""
        try:
            return cases()
        except Exception as e:  # a missing kernel, a bad launch
            print(f"FAIL {label}: {type(e).__name__}: {e}")
            return 1

    def case_640(name, lists, zero_key_blocks=()):
        return not check_case(name, 1, 2, 2, 640, 640, 128, torch.bfloat16,
                              lists, False, zero_key_blocks=zero_key_blocks)

    # A key block that no query block lists: dK = dV = 0 on its keys.
    n, i, fn, fi = random_lists(1, 2, 640, 640, 0.8, 0.4, gen, empty_rows=0)
    lists = unlisted_key_block((n, i, fn, fi), 2)
    failures += guarded("unlisted key block", lambda: case_640(
        "unlisted key block", lists, zero_key_blocks=(2,)))

    # The same list tensors again (the transposed lists kept from the step
    # before, block_sparse.TransposedLists), then rewritten in place with
    # key block 2 dropped: the version counter must invalidate the kept
    # transposition, or key block 2 keeps its gradients.
    def reused():
        lists = random_lists(1, 2, 640, 640, 0.8, 0.4, gen, empty_rows=0)
        bad = case_640("first lists", lists) + case_640("reused lists", lists)
        for t, new in zip(lists, unlisted_key_block(lists, 2)):
            t.copy_(new)
        return bad + case_640("rewritten lists", lists, zero_key_blocks=(2,))
    failures += guarded("reused lists", reused)
    # Structured BlockMasks (their partial blocks need the mask_mod, which
    # the Python entry point does not take: the kernels' partial blocks keep
    # every key, and so does the reference, which reads the same lists).
    for which in ("document", "sliding"):
        made = structured(1000, 1000, which)
        if made is None:
            print(f"skip {which}: no FlexAttention")
            continue
        bm, _ = made
        lists = (bm.kv_num_blocks, bm.kv_indices, bm.full_kv_num_blocks,
                 bm.full_kv_indices)
        failures += guarded(which, lambda lists=lists: not check_case(
            f"{which} blockmask", 1, 4, 4, 1000, 1000, 128, torch.bfloat16,
            lists, False))
    return failures


def flex_block_mask(lists, seq):
    """FlexAttention's BlockMask of our lists (mask_mod None keeps every key
    of a partial block, as our kernels do without one); None where this
    PyTorch has no BlockMask.from_kv_blocks."""
    try:
        from torch.nn.attention.flex_attention import BlockMask
    except ImportError:
        return None
    n, i, fn, fi = lists
    try:
        return BlockMask.from_kv_blocks(n, i, fn, fi, BLOCK_SIZE=BLOCK,
                                        seq_lengths=(seq, seq))
    except TypeError:  # older signatures
        return BlockMask.from_kv_blocks(n, i, fn, fi, BLOCK_SIZE=BLOCK)


# The timed shapes: B = 1, H = 16, D = 128, bf16, S = --seq.
BENCH_B, BENCH_H, BENCH_D = 1, 16, 128


def bench_inputs(seq):
    """Q, K, V (requiring grad) of the timed shapes and step(attn): one
    training step, attn() and the gradients of its output against a fixed
    dO."""
    q, k, v, do = (torch.randn(BENCH_B, BENCH_H, seq, BENCH_D, device="cuda",
                               dtype=torch.bfloat16) for _ in range(4))
    q, k, v = (t.requires_grad_() for t in (q, k, v))

    def step(attn):
        o = attn()
        return torch.autograd.grad(o, (q, k, v), do)
    return q, k, v, step


def throughput(seq, reps):
    flex = _flex()
    gen = torch.Generator().manual_seed(1)
    q, k, v, step = bench_inputs(seq)
    cases = []
    for density in (0.5, 0.25, 0.1):
        lists = random_lists(1, 1, seq, seq, density, 0.5, gen, empty_rows=0)
        cases.append((f"random {int(density * 100)}%", lists,
                      flex_block_mask(lists, seq) if flex else None, None))
    if flex is not None:
        create_block_mask, _ = flex
        doc = torch.arange(seq, device="cuda") // 2048
        prefix = seq // 4
        mods = {"document": lambda b_, h_, q_, k_: doc[q_] == doc[k_],
                "sliding+global": lambda b_, h_, q_, k_:
                ((q_ - k_).abs() <= 1024) | (k_ < 256) | (q_ < 256),
                "prefix-lm": lambda b_, h_, q_, k_: (k_ <= q_) | (k_ < prefix)}
        for name, mod in mods.items():
            bm = create_block_mask(mod, None, None, seq, seq, device="cuda")
            lists = (bm.kv_num_blocks, bm.kv_indices, bm.full_kv_num_blocks,
                     bm.full_kv_indices)
            cases.append((name, lists, bm, mod))

    dense = timed(lambda: step(lambda: flashfuse.attention(q, k, v)))
    print("ms: the device's time of a step with the host ahead; 'idle': "
          "one step on an idle stream, the host's issue time included")
    print(f"{'case':16} {'ours ms':>8} {'ours+T':>8} {'dense ms':>8} "
          f"{'useful TF/s':>11} "
          f"{'dense TF/s':>10} {'flex ms':>8} {'flex/ours':>9} "
          f"{'idle ours':>9} {'idle flex':>9} {'flex/ours':>9}")
    for name, lists, bm, mod in cases:
        # The pairs the lists keep; the structured masks' partial blocks
        # through their mask_mod (what FlexAttention computes there; ours,
        # without a mask_mod, computes the whole block: the useful rate
        # counts only the kept pairs).
        keep = visible_mask(lists, seq, seq, False, mask_mod=(
            (lambda r, c: mod(0, 0, r, c)) if mod else None))
        pairs = keep.sum().item()
        del keep
        ours = timed(lambda lists=lists: step(
            lambda: flashfuse.block_sparse_attention(q, k, v, lists,
                                                     check=False)))

        def transposing(lists=lists):
            block_sparse._transposed.clear()
            return step(lambda: flashfuse.block_sparse_attention(
                q, k, v, lists, check=False))
        ours_t = timed(transposing)
        flex_t = None
        if flex is not None and bm is not None:
            _, flex_attention = flex
            flex_t = timed(lambda bm=bm: step(
                lambda: flex_attention(q, k, v, block_mask=bm)))
        timers = {"ours": ours, "ours_t": ours_t, "dense": dense}
        if flex_t:
            timers["flex"] = flex_t
        med = medians(interleaved(timers, reps))
        ours_ms = med["ours"][0]
        flops = 3.5 * 4 * BENCH_B * BENCH_H * BENCH_D
        useful = flops * pairs / (ours_ms * 1e-3) / 1e12
        dense_tf = flops * seq * seq / (med["dense"][0] * 1e-3) / 1e12
        print(f"{name:16} {ours_ms:8.3f} {med['ours_t'][0]:8.3f} "
              f"{med['dense'][0]:8.3f} "
              f"{useful:11.1f} {dense_tf:10.1f} " + flex_columns(med))


def profile(seq):
    """--profile: one training step's kernels, ours and FlexAttention's,
    at 50% and 10% random density (same shapes as the throughput)."""
    flex = _flex()
    gen = torch.Generator().manual_seed(1)
    q, k, v, step = bench_inputs(seq)

    for density in (0.5, 0.1):
        lists = random_lists(1, 1, seq, seq, density, 0.5, gen, empty_rows=0)
        runs = {"ours": lambda: step(lambda: flashfuse.block_sparse_attention(
            q, k, v, lists, check=False))}
        if flex is not None:
            bm = flex_block_mask(lists, seq)
            runs["flex"] = lambda bm=bm: step(
                lambda: flex[1](q, k, v, block_mask=bm))
        for who, fn in runs.items():
            times = {name: us for name, (_, us) in kernel_times(fn, 5).items()}
            total = sum(times.values())
            print(f"{who} {int(density * 100)}%: {total:.0f} us of kernels")
            for name, t in sorted(times.items(), key=lambda x: -x[1])[:8]:
                print(f"  {t:9.1f} us  {name[:100]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--numerics-only", action="store_true")
    ap.add_argument("--sanitize", action="store_true",
                    help="a few odd shapes once each, for compute-sanitizer")
    ap.add_argument("--seq", type=int, default=16384)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--profile", action="store_true",
                    help="per-kernel device times of one step (ours and "
                         "FlexAttention's), no numerics")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("check_block_sparse_backward: no CUDA device", file=sys.stderr)
        return 2
    if args.profile:
        profile(args.seq)
        return 0
    failures = numerics(sanitize=args.sanitize)
    print(f"check_block_sparse_backward: {failures} numerics failures")
    if not (args.numerics_only or args.sanitize) and not failures:
        throughput(args.seq, args.reps)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
