#!/usr/bin/env python3
"""Block-sparse forward kernels (gen_suite.py --block-sparse) on a GPU:
numerics against a dense reference with the mask materialised from the
lists, then throughput against the dense kernel and against FlexAttention
(torch.compile'd flex_attention with the same BlockMask).

    python3 scripts/kernels/gen_suite.py --block-sparse -o /tmp/bs.mlir
    flashfuse-compile /tmp/bs.mlir --target=h200 -o /tmp/bs-kernels
    FLASHFUSE_KERNEL_DIR=/tmp/bs-kernels python3 \\
        scripts/kernels/check_block_sparse.py [--numerics-only] [--seq 16384]

Numerics (FlashAttention's rule, DESIGN.md): with out_ref the f32
attention over the keys the lists keep (partial blocks: causal when
asked; full blocks: whole; unlisted: none) and out_pt the same computation
in the inputs' dtype, max|out - out_ref| <= 2 max|out_pt - out_ref| + 1e-5.
Cases: random lists (empty rows, partial + full, junk past each row's
count), lengths not multiples of 128, broadcast lists, GQA, D = 64 / 128,
and BlockMasks of document, sliding-window + global and prefix-LM masks
made by FlexAttention's create_block_mask. Outputs are poisoned first.

Throughput (--seq, default 16384, bf16, D = 128, B = 1, H = 16): random
lists at densities 50 / 25 / 10 % and the three masks; per case the
block-sparse kernel, the dense kernel (all blocks, no lists) and
flex_attention, each warmed for 250 ms, timed with CUDA events over
interleaved repetitions (medians; the order rotated every repetition):
each repetition times 8 calls issued
back to back behind a GPU sleep, so that the host runs ahead (the
device's time of a call, as python -m flashfuse.bench times; the ratios
use it), and one call issued to an idle stream (the host's issue time
included; printed beside as 'idle'). Useful FLOP/s counts 4 * B * H * D per
visible (query, key) pair of the listed blocks (every key of a full
block, the kept ones of a partial one), the dense kernel's all Sq * Sk.
Reported: useful TFLOP/s of both, their ratio (target >= 0.9), and
FlexAttention's time over ours (target >= 1.2). Exit status 1 when a
numerics check fails or a kernel is missing; the throughput targets are
reported, not enforced (they are measurements, PERF.md).
"""
import argparse
import math
import os
import pathlib
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402

import flashfuse  # noqa: E402
from flashfuse.block_sparse import check_lists  # noqa: E402

BLOCK = 128


def random_lists(b, h, sq, sk, density, full_fraction, gen, bq=BLOCK,
                 bk=BLOCK, empty_rows=0.1):
    """Sorted random lists [b, h, QB(, KB)] on the GPU, junk past each
    row's count (out-of-range and repeated indices the kernel must not
    read)."""
    qb, kb = -(-sq // bq), -(-sk // bk)
    keep = torch.rand(b, h, qb, kb, generator=gen) < density
    keep &= (torch.rand(b, h, qb, 1, generator=gen) >= empty_rows)
    full = keep & (torch.rand(b, h, qb, kb, generator=gen) < full_fraction)
    partial = keep & ~full

    def pack(member):
        count = member.sum(-1).to(torch.int32)
        order = torch.argsort((~member).to(torch.int8), dim=-1, stable=True)
        junk = torch.where(torch.arange(kb) % 2 == 0, kb + 7, -3)
        idx = torch.where(torch.arange(kb) < count.unsqueeze(-1),
                          order, junk.expand_as(order)).to(torch.int32)
        return count.cuda(), idx.cuda()

    n, i = pack(partial)
    fn, fi = pack(full)
    return n, i, fn, fi


def visible_mask(lists, sq, sk, causal, bq=BLOCK, bk=BLOCK, b=1, h=1,
                 mask_mod=None):
    """The keys the lists keep, [B', H', Sq, Sk] bool (FlashOps.td
    "Block-sparse"): full blocks whole, partial blocks through mask_mod and
    causal, unlisted blocks nothing; causal holds everywhere."""
    num, idx, fnum, fidx = lists
    qb, kb = -(-sq // bq), -(-sk // bk)

    def member(n, i):
        used = torch.arange(i.shape[-1], device=i.device) < n.unsqueeze(-1)
        m = torch.zeros(*i.shape[:3], kb + 1, dtype=torch.bool,
                        device=i.device)
        safe = torch.where(used & (i >= 0) & (i < kb), i.long(), kb)
        m.scatter_(-1, safe, True)
        return m[..., :kb]

    def expand(m):
        m = m.repeat_interleave(bq, 2)[:, :, :sq]
        return m.repeat_interleave(bk, 3)[:, :, :, :sk]

    part = expand(member(num, idx))
    keep = part.clone()
    rows = torch.arange(sq, device=num.device).view(-1, 1)
    cols = torch.arange(sk, device=num.device).view(1, -1)
    if mask_mod is not None:
        keep &= mask_mod(rows, cols)
    if fnum is not None:
        keep |= expand(member(fnum, fidx))
    if causal:
        keep &= cols <= rows
    return keep


def reference(q, k, v, keep, dtype):
    """Attention over `keep` (broadcast [B', H', Sq, Sk]) computed in
    `dtype` (f32: out_ref; the inputs' dtype: out_pt); rows without a key
    give 0."""
    g = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(g, 1).to(dtype)
    v = v.repeat_interleave(g, 1).to(dtype)
    s = (q.to(dtype) @ k.transpose(-1, -2)) * (q.shape[-1] ** -0.5)
    s = s.masked_fill(~keep, float("-inf"))
    p = torch.softmax(s.float(), -1).nan_to_num(0.0).to(dtype)
    return (p @ v).float()


def check_case(name, b, hq, hkv, sq, sk, d, dtype, lists, causal):
    gen = torch.Generator(device="cuda").manual_seed(abs(hash(name)) % 2**31)
    q = torch.randn(b, hq, sq, d, device="cuda", dtype=dtype, generator=gen)
    k = torch.randn(b, hkv, sk, d, device="cuda", dtype=dtype, generator=gen)
    v = torch.randn(b, hkv, sk, d, device="cuda", dtype=dtype, generator=gen)
    os.environ["FLASHFUSE_POISON_OUTPUTS"] = "1"
    # check=False: the junk past each row's count must be ignored by the
    # kernel, not refused by the host check (which reads only the counts'
    # entries, so it would pass them too).
    out = flashfuse.block_sparse_attention(
        q, k, v, lists, is_causal=causal, enable_gqa=hq != hkv, check=False)
    keep = visible_mask(tuple(lists) + (None,) * (4 - len(lists)), sq, sk,
                        causal)
    ref = reference(q, k, v, keep, torch.float32)
    pt = reference(q, k, v, keep, dtype)
    err = (out.float() - ref).abs().max().item()
    bound = 2 * (pt - ref).abs().max().item() + 1e-5
    ok = math.isfinite(err) and err <= bound
    print(f"{'ok  ' if ok else 'FAIL'} {name}: max err {err:.3e} "
          f"(bound {bound:.3e})")
    return ok


# The odd-shape sweep of the forward check and the backward one
# (check_block_sparse_backward.py): (name, B, Hq, Hkv, Sq, Sk, D, density,
# full fraction, causal, list broadcast (B', H')).
ODD_SHAPE_CASES = [
    ("random d128", 2, 4, 2, 1000, 1300, 128, 0.5, 0.3, False, (2, 4)),
    ("random d64 causal", 1, 4, 4, 777, 777, 64, 0.6, 0.4, True, (1, 4)),
    ("partial only", 2, 2, 1, 513, 257, 128, 0.5, 0.0, False, (2, 2)),
    ("broadcast gqa", 2, 8, 2, 384, 640, 128, 0.3, 0.5, False, (1, 1)),
    ("empty rows", 1, 2, 2, 300, 300, 64, 0.0, 0.0, False, (1, 2)),
    ("one key", 1, 2, 2, 129, 1, 128, 1.0, 0.5, False, (1, 2)),
    # D = 256: two key tiles of 64 per sparse block (flash-select-config).
    ("random d256", 2, 4, 2, 1000, 1300, 256, 0.5, 0.3, False, (2, 4)),
    ("random d256 causal", 1, 2, 2, 777, 777, 256, 0.6, 0.0, True, (1, 2)),
]


def numerics():
    gen = torch.Generator().manual_seed(0)
    failures = 0
    for name, b, hq, hkv, sq, sk, d, dens, full, causal, (lb, lh) in \
            ODD_SHAPE_CASES:
        for dtype in (torch.float16, torch.bfloat16):
            n, i, fn, fi = random_lists(lb, lh, sq, sk, dens, full, gen)
            lists = (n, i) if full == 0 else (n, i, fn, fi)
            try:
                failures += not check_case(f"{name} {dtype}", b, hq, hkv, sq,
                                           sk, d, dtype, lists, causal)
                # The host check accepts what the generator makes.
                check_lists(tuple(lists) + (None,) * (4 - len(lists)), sk,
                            BLOCK)
            except Exception as e:  # a missing kernel, a bad launch
                failures += 1
                print(f"FAIL {name} {dtype}: {type(e).__name__}: {e}")
    return failures


def _flex():
    try:
        from torch.nn.attention.flex_attention import (create_block_mask,
                                                       flex_attention)
    except ImportError:
        return None
    return create_block_mask, torch.compile(flex_attention, dynamic=False)


def masks(seq):
    """mask_mods whose partial blocks the flag-only kernels get right are
    not all of them: the kernels here take no mask_mod from Python, so the
    timing compares block structure (FlexAttention evaluates its mask_mod
    in partial blocks, a cost ours does not pay: the ratio then flatters
    us by that much, printed as such)."""
    doc = torch.arange(seq, device="cuda") // 2048  # documents of 2k tokens
    window, glob, prefix = 1024, 256, seq // 4
    return {
        "document": lambda b, h, q, k: doc[q] == doc[k],
        "sliding+global": lambda b, h, q, k: ((q - k).abs() <= window)
        | (k < glob) | (q < glob),
        "prefix-lm": lambda b, h, q, k: (k <= q) | (k < prefix),
    }


def timed(fn, warm_ms=250.0, calls=8):
    """Runs fn for warm_ms of wall time, then returns a timing closure
    giving (ahead, idle) in ms: `ahead`, the median of `calls` calls
    issued back to back behind a short GPU sleep, one event pair each, so
    that the host runs ahead of the GPU as in a training loop (the device's
    time of a call, as `python -m flashfuse.bench` times); `idle`, one call
    issued to an idle stream, the host's issue time included (what a caller
    waiting on each result sees)."""
    start, end = torch.cuda.Event(True), torch.cuda.Event(True)
    start.record()
    while True:
        fn()
        end.record()
        end.synchronize()
        if start.elapsed_time(end) >= warm_ms:
            break
    starts = [torch.cuda.Event(True) for _ in range(calls)]
    ends = [torch.cuda.Event(True) for _ in range(calls)]

    def once():
        start.record()
        fn()
        end.record()
        end.synchronize()
        idle = start.elapsed_time(end)
        torch.cuda._sleep(2_000_000)  # ~1 ms: the host queues ahead of it
        for a, b in zip(starts, ends):
            a.record()
            fn()
            b.record()
        ends[-1].synchronize()
        ahead = statistics.median(a.elapsed_time(b)
                                  for a, b in zip(starts, ends))
        return ahead, idle
    return once


def interleaved(timers, reps):
    """{key: [(ahead, idle), ...]} of each timing closure in `timers`,
    `reps` times in turn, the order rotated by one every repetition: a
    method that always ran right after the same other one would inherit
    the clock that one leaves (a long dense call at full power, runs
    214-215)."""
    keys = list(timers)
    samples = {key: [] for key in keys}
    for r in range(reps):
        for key in keys[r % len(keys):] + keys[:r % len(keys)]:
            samples[key].append(timers[key]())
    return samples


def medians(samples):
    """{key: (ahead, idle)} medians of {key: [(ahead, idle), ...]}."""
    return {key: tuple(statistics.median(x[i] for x in s) for i in (0, 1))
            for key, s in samples.items() if s}


def flex_columns(med):
    """The table's last five columns from `medians`: FlexAttention's ms
    and its time over ours with the host ahead, then ours, Flex's and the
    ratio on an idle stream ('-' without FlexAttention)."""
    ours, flex = med["ours"], med.get("flex")
    if not flex:
        return f"{'-':>8} {'-':>9} {ours[1]:9.3f} {'-':>9} {'-':>9}"
    return (f"{flex[0]:8.3f} {flex[0] / ours[0]:9.2f} {ours[1]:9.3f} "
            f"{flex[1]:9.3f} {flex[1] / ours[1]:9.2f}")


def throughput(seq, reps):
    flex = _flex()
    b, h, d, dtype = 1, 16, 128, torch.bfloat16
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(b, h, seq, d, device="cuda", dtype=dtype)
               for _ in range(3))
    cases = []
    for density in (0.5, 0.25, 0.1):
        lists = random_lists(1, 1, seq, seq, density, 0.5, gen, empty_rows=0)
        cases.append((f"random {int(density * 100)}%", lists, None))
    if flex is not None:
        create_block_mask, _ = flex
        for name, mod in masks(seq).items():
            bm = create_block_mask(mod, None, None, seq, seq, device="cuda")
            cases.append((name, bm, mod))
    dense_time = timed(lambda: flashfuse.attention(q, k, v))
    print("ms: the device's time of a call with the host ahead; 'idle': "
          "one call on an idle stream, the host's issue time included")
    print(f"{'case':16} {'ours ms':>8} {'dense ms':>8} {'useful TF/s':>11} "
          f"{'dense TF/s':>10} {'ratio':>6} {'flex ms':>8} {'flex/ours':>9} "
          f"{'idle ours':>9} {'idle flex':>9} {'flex/ours':>9}")
    for name, mask, mod in cases:
        if isinstance(mask, tuple):
            lists = mask
        else:
            lists = (mask.kv_num_blocks, mask.kv_indices,
                     mask.full_kv_num_blocks, mask.full_kv_indices)
        # rows [Sq, 1] and cols [1, Sk]: the mask_mods broadcast to
        # [Sq, Sk].
        keep = visible_mask(lists, seq, seq, False, mask_mod=(
            (lambda r, c: mod(0, 0, r, c)) if mod else None))
        pairs = keep.sum().item()
        ours_fn = (lambda lists=lists: flashfuse.block_sparse_attention(
            q, k, v, lists, check=False))
        ours = timed(ours_fn)
        flex_t = None
        if flex is not None and mod is not None:
            _, flex_attention = flex
            flex_t = timed(lambda mask=mask: flex_attention(q, k, v,
                                                            block_mask=mask))
        timers = {"ours": ours, "dense": dense_time}
        if flex_t:
            timers["flex"] = flex_t
        med = medians(interleaved(timers, reps))
        ours_ms, dense_ms = med["ours"][0], med["dense"][0]
        useful = 4 * b * h * d * pairs / (ours_ms * 1e-3) / 1e12
        dense_tf = 4 * b * h * d * seq * seq / (dense_ms * 1e-3) / 1e12
        print(f"{name:16} {ours_ms:8.3f} {dense_ms:8.3f} "
              f"{useful:11.1f} {dense_tf:10.1f} {useful / dense_tf:6.2f} "
              + flex_columns(med))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--numerics-only", action="store_true")
    ap.add_argument("--seq", type=int, default=16384)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("check_block_sparse: no CUDA device", file=sys.stderr)
        return 2
    failures = numerics()
    print(f"check_block_sparse: {failures} numerics failures")
    if not args.numerics_only and not failures:
        throughput(args.seq, args.reps)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
