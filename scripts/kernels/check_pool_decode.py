#!/usr/bin/env python3
"""flashfuse.attention_with_kvcache(..., cache_batch_idx=...) on the GPU:
contiguous caches that hold a pool of Bc sequences' rows (flash-attn's
cache_batch_idx; docs/KVCACHE.md "A pool of sequences"), sequence b
attending to, and appending its new rows into, pool row cache_batch_idx[b].
Each step is checked three ways: O by FlashAttention's rule (max|O - ref|
<= 2 max|O_pt - ref| + 1e-5, ref in f32, pt in the inputs' dtype) and LSE
against a reference over the gathered rows k_cache[idx]; the pool after
the step bit for bit against torch indexing (only rows idx[b] at [L_b,
L_b + Snew) change, to k_new / v_new); and the same step through the
plain decode over caches gathered before it, which must leave them equal
to the pool's rows. The sweep: D = 64 / 128, bf16 and f16, causal and not,
windows, Snew 0 / 1 / 4, GQA 32/8 and 4/4, lengths 0, 1, block multiples
and the capacity, pools larger than the batch, of its size and smaller
(a row read by two sequences; no new rows there, two sequences appending
to one row being outside the contract). Then the device-side check
(check_inputs=True) of an index outside the pool and of a row that two
appending sequences share, and an index outside the pool unchecked
(nothing read or written outside the pool, the other sequences' answers
unchanged); (--bench) one bf16 step, D = 128, GQA 32/8, B = 16 over a pool
of 32 caches of 8k keys, against the plain decode over the gathered
caches and SDPA after a gather (each warmed up 250 ms, medians over
interleaved repetitions).

The pool's kernels are compiled on first use by flashfuse-compile. The
lent GPU machine has no LLVM: compile here, check there.

    check_pool_decode.py --compile DIR       # where flashfuse-compile is
    check_pool_decode.py --artifacts DIR [--bench]   # on the GPU
    compute-sanitizer python3 check_pool_decode.py --artifacts DIR --quick
    check_pool_decode.py --artifacts DIR --dry-run   # anywhere: each step's
        # arguments checked against its kernels' manifest entries (params,
        # sizes, strides) by the runtime, nothing launched
"""
import argparse, contextlib, json, math, os, sys, types
from typing import NamedTuple
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)

DTYPES = ("bf16", "f16")
# (dtype, D, causal, window, Snew); a step has Sq = max(Snew, 1) queries.
CASES = ([(dt, d, causal, None, 0) for dt in DTYPES for d in (64, 128)
          for causal in (False, True)]
         + [("bf16", 128, True, None, 1), ("f16", 64, True, None, 1),
            ("bf16", 64, True, None, 4), ("f16", 128, True, None, 4),
            ("bf16", 128, False, None, 4),
            ("bf16", 128, True, (64, 0), 1),
            ("f16", 64, False, (32, 8), 0)])
# (Bc, cache_batch_idx, lengths before the step, each cut to leave room
# for the new rows): a pool larger than the batch in another order, one of
# its size, one smaller with a row read by two sequences.
POOLS = [(5, [4, 0, 2], [0, 65, 200]),
         (4, [2, 0, 3, 1], [1, 64, 256, 127]),
         (2, [1, 1, 0], [256, 7, 1])]
HEADS = [(32, 8), (4, 4)]  # (Hq, Hkv)
CAPACITY = 256
# For compute-sanitizer: a step without new rows, one with, a window.
QUICK = [CASES[4], CASES[8], CASES[13]]
# The GPU the dry run's split counts are worked out for (an H100 / H200).
SM_COUNT = 132
SMEM_PER_SM = 228 * 1024


def case_name(case, pool, heads):
    dtype, d, causal, window, snew = case
    bc, idx, _ = pool
    return (f"{dtype}_d{d}{'_causal' if causal else ''}"
            + (f"_w{window[0]}-{window[1]}" if window else "")
            + f"_n{snew}_Bc{bc}_B{len(idx)}_h{heads[0]}-{heads[1]}")


def runs(cases, heads):
    """(case, pool, heads) of a sweep: every pool with every case but a
    pool that names a row twice with new rows (outside the contract)."""
    return [(c, p, h) for c in cases for p in POOLS for h in heads
            if not (c[4] and len(set(p[1])) < len(p[1]))]


def decode_variants(case):
    """The runtime variants of the decode kernels a case launches: the
    pool's (its compile holds the pool's kv_append and decode_check too)
    and the plain one of the step over the gathered caches."""
    from flashfuse import _kernels
    from flashfuse import _runtime as rt
    dtype, d, causal, window, _ = case
    return [_kernels.make_variant(
        rt.KIND_DECODE, rt.DTYPE_BF16 if dtype == "bf16" else rt.DTYPE_F16,
        d, d, 2 if causal else 0, window=window is not None, batch_idx=pool)
        for pool in (True, False)]


def compile_all(root, cases=CASES):
    """Every kernel `cases` launch, compiled for h100 into root/h100/<hash>
    as flashfuse's on-demand compile caches them (the FLASHFUSE_KERNEL_DIR
    of --artifacts). The bench's step is CASES[3]'s."""
    os.environ["FLASHFUSE_CACHE_DIR"] = root
    from flashfuse import _compile
    seen = set()
    for case in cases:
        for v in decode_variants(case):
            if v.key() not in seen:
                seen.add(v.key())
                print(v.describe(), _compile.artifact_for(v, (9, 0)),
                      flush=True)


def use_artifacts(root):
    """compile_all's artifacts first in FLASHFUSE_KERNEL_DIR."""
    os.environ["FLASHFUSE_KERNEL_DIR"] = os.pathsep.join(
        [os.path.join(root, "h100")]
        + [p for p in os.environ.get("FLASHFUSE_KERNEL_DIR", "").split(
            os.pathsep) if p])


def step_tensors(case, pool, heads, gen, device="cuda"):
    """One step's inputs: q [B, Sq, Hq, D], the pools k / v [Bc, C, Hkv, D],
    k_new / v_new [B, Snew, Hkv, D] (None without new rows), the lengths
    before the step (`before`, and `seqlens` on the device) and the
    indices `rows`."""
    import torch
    dtype, d, _, _, snew = case
    bc, idx, before = pool
    hq, hkv = heads
    dt = torch.bfloat16 if dtype == "bf16" else torch.float16

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=dt, generator=gen)
    before = [min(n, CAPACITY - snew) for n in before]
    b = len(idx)
    return types.SimpleNamespace(
        q=randn(b, max(snew, 1), hq, d),
        k_pool=randn(bc, CAPACITY, hkv, d), v_pool=randn(bc, CAPACITY, hkv, d),
        k_new=randn(b, snew, hkv, d) if snew else None,
        v_new=randn(b, snew, hkv, d) if snew else None,
        before=before,
        seqlens=torch.tensor(before, dtype=torch.int32, device=device),
        rows=torch.tensor(idx, dtype=torch.int32, device=device))


def check_case(case, pool, heads, gen):
    import torch
    import flashfuse
    from check_and_bench import passes_rule
    from check_decode import reference
    dtype, d, causal, window, snew = case
    s = step_tensors(case, pool, heads, gen)
    win = window or (-1, -1)
    index = s.rows.long()
    k_gathered, v_gathered = s.k_pool[index], s.v_pool[index]
    want_k, want_v = s.k_pool.clone(), s.v_pool.clone()
    for b, (row, n) in enumerate(zip(pool[1], s.before)):
        if snew:
            want_k[row, n:n + snew] = s.k_new[b]
            want_v[row, n:n + snew] = s.v_new[b]
    out, lse = flashfuse.attention_with_kvcache(
        s.q, s.k_pool, s.v_pool, s.seqlens, s.k_new, s.v_new,
        is_causal=causal, window_size=win, return_lse=True,
        check_inputs=True, cache_batch_idx=s.rows)
    plain = flashfuse.attention_with_kvcache(
        s.q, k_gathered, v_gathered, s.seqlens, s.k_new, s.v_new,
        is_causal=causal, window_size=win)
    torch.cuda.synchronize()
    lengths = [n + snew for n in s.before]
    kd, vd = s.k_pool[index].transpose(1, 2), s.v_pool[index].transpose(1, 2)
    mask = "bottom_right" if causal else "none"
    scale = 1 / math.sqrt(d)
    ref, ref_lse = reference(s.q, kd, vd, lengths, scale, mask, win, 0.0,
                             torch.float32)
    pt, _ = reference(s.q, kd, vd, lengths, scale, mask, win, 0.0,
                      s.q.dtype)
    err = (out.float() - ref).abs().max().item()
    err_pt = (pt - ref).abs().max().item()
    seen = torch.isfinite(ref_lse)
    lse_err = (lse - ref_lse)[seen].abs().max().item() if seen.any() else 0.0
    # A row that sees no key (a length 0) has LSE +inf.
    empty_ok = bool((lse[~seen] == float("inf")).all())
    r = dict(case=case_name(case, pool, heads), err=err, err_pt=err_pt,
             lse_err=lse_err, empty_rows=empty_ok,
             pool=torch.equal(s.k_pool, want_k)
             and torch.equal(s.v_pool, want_v),
             gathered=torch.equal(s.k_pool[index], k_gathered)
             and torch.equal(s.v_pool[index], v_gathered),
             # Not required: the plain kernel may have other tiles.
             same_as_plain=torch.equal(out, plain))
    r["ok"] = (passes_rule(err, err_pt, 1e-5) and lse_err < 1e-2
               and empty_ok and r["pool"] and r["gathered"])
    return r


def check_device_checks(gen):
    """check_inputs=True names an index outside the pool and a row two
    appending sequences share, and passes a row read by two; an index
    outside the pool, unchecked, writes nothing anywhere and leaves the
    other sequences' answers as with a valid one."""
    import torch
    import flashfuse
    from flashfuse.errors import InvalidArgumentError
    dt, dev = torch.bfloat16, "cuda"

    def ints(*values):
        return torch.tensor(values, dtype=torch.int32, device=dev)

    def randn(*shape):
        return torch.randn(*shape, device=dev, dtype=dt, generator=gen)
    q = randn(3, 1, 32, 128)
    pool, kn = randn(5, 64, 8, 128), randn(3, 1, 8, 128)
    results = []
    for name, new, idx, message in (
            ("check_outside", None, ints(0, 7, 1),
             "cache_batch_idx[1] = 7 is outside the pool [0, 5)"),
            ("check_shared_append", kn, ints(0, 3, 0),
             "cache_batch_idx[2] = 0 is also cache_batch_idx[0]"),
            ("check_shared_read", None, ints(0, 3, 0), None)):
        try:
            flashfuse.attention_with_kvcache(
                q, pool, pool, ints(3, 4, 5), new, new, cache_batch_idx=idx,
                check_inputs=True)
            got = None
        except InvalidArgumentError as e:
            got = str(e)
        ok = got is None if message is None else (got is not None
                                                  and message in got)
        results.append(dict(case=name, got=got, ok=ok))
    k, v = randn(3, 64, 8, 128), randn(3, 64, 8, 128)
    q, kn = q[:2], kn[:2]
    good = flashfuse.attention_with_kvcache(
        q, k.clone(), v.clone(), ints(10, 20), kn, kn,
        cache_batch_idx=ints(2, 0))
    want_k, want_v = k.clone(), v.clone()
    want_k[2, 10], want_v[2, 10] = kn[0, 0], kn[0, 0]
    out = flashfuse.attention_with_kvcache(q, k, v, ints(10, 20), kn, kn,
                                           cache_batch_idx=ints(2, 9))
    torch.cuda.synchronize()
    r = dict(case="unchecked_outside",
             caches=torch.equal(k, want_k) and torch.equal(v, want_v),
             others_same=torch.equal(out[0], good[0]),
             finite=bool(torch.isfinite(out).all()))
    r["ok"] = r["caches"] and r["others_same"] and r["finite"]
    results.append(r)
    return results


class ManifestKernel(NamedTuple):
    """A dry run's kernel: an artifact's manifest entry."""
    directory: str
    index: int

    def entry(self):
        """(the artifact's Manifest, this kernel's KernelInfo)."""
        from flashfuse import _runtime as rt
        manifest = rt.Manifest.open(self.directory)
        return manifest, manifest.kernels()[self.index]


class ManifestPlan:
    """rt.DecodePlan's stand-in in a dry run, made from ManifestKernels and
    the same arguments: each launch fills in the addresses it is given and
    checks the arguments against the kernels' manifest entries as the
    runtime's *_check entry points do (every param bound, sizes, strides,
    the pool's fields), then logs (kernel name, its variant's batch_idx)."""

    log = None  # the list of manifest_launches

    def __init__(self, decode, combine, args, append=False):
        from flashfuse import _runtime as rt
        self.kernel, self.combine, self.appends = decode, combine, append
        self.args = rt.DecodeArgs.from_buffer_copy(args)
        # The runtime's split count needs the GPU's; the dry run checks
        # each launch with a workspace of its own instead.
        self.num_splits, self.workspace_bytes = 0, 0

    @classmethod
    def append(cls, append, args):
        return cls(append, None, args, append=True)

    def launch(self, addresses, stream):
        from flashfuse import _runtime as rt
        a = rt.DecodeArgs.from_buffer_copy(self.args)
        fields = {name for name, _ in rt.DecodeArgs._fields_}
        for name, address in zip(rt.DECODE_ADDRESS_FIELDS,
                                 rt.unpack_decode_addresses(addresses)):
            if name in fields:  # not the workspace
                setattr(a, name, address or None)
        manifest, info = self.kernel.entry()
        if self.appends:
            manifest.check_append(self.kernel.index, a)
        else:
            manifest.check_decode(
                self.kernel.index, self.combine.index if self.combine else -1,
                a, SM_COUNT, 1, 0x7000000, 1 << 40)
        self.log.append((info.name.decode(), info.variant.batch_idx))


@contextlib.contextmanager
def manifest_launches():
    """The package's launch code with the GPU's part replaced (the kernels
    by ManifestKernels, found in the artifacts of FLASHFUSE_KERNEL_DIR and
    never compiled; the plans by ManifestPlans; the device's shape by an
    H100's); yields the log of launches. Fresh launch caches, so nothing
    built here outlives it."""
    from flashfuse import _kernels
    from flashfuse import _kvcache_ops as kvops
    from flashfuse import _runtime as rt
    log = []
    plan = type("LoggedPlan", (ManifestPlan,), {"log": log})

    def kernel(device_index, variant, directory=None, capability=None):
        return ManifestKernel(*_kernels.locate(variant, directory))
    with contextlib.ExitStack() as stack:
        for owner, name, value in (
                (kvops, "_capability", lambda index: None),
                (kvops, "_device_shape", lambda index: (SM_COUNT,
                                                        SMEM_PER_SM)),
                (kvops, "_current_stream", lambda index: None),
                (_kernels, "kernel", kernel),
                (rt, "DecodePlan", plan),
                (kvops, "_decode_plans", {}), (kvops, "_aux_kernels", {}),
                (kvops, "_decode_templates", kvops._Templates()),
                (kvops, "_append_templates", kvops._Templates())):
            stack.enter_context(mock.patch.object(owner, name, value))
        yield log


def dry_run_case(case, pool, heads, gen):
    """What check_case launches, on the CPU: the device check's arguments
    and the eager step's append and decode (attention_with_kvcache's after
    its checks) over the pool, then over the gathered caches, each checked
    against its kernels' manifest entries; the pool's kernels must be the
    pool's (batch_idx 1), the gathered step's the plain ones."""
    import torch
    from flashfuse import _kvcache_ops as kvops
    dtype, d, causal, window, snew = case
    s = step_tensors(case, pool, heads, gen, "cpu")
    win = window or (-1, -1)
    gathered = (s.k_pool[s.rows.long()], s.v_pool[s.rows.long()], None)
    with manifest_launches() as log:
        check, a, keep = kvops.device_check_args(
            s.k_pool, s.v_pool, s.seqlens, None, snew, s.q.dtype, s.rows)
        manifest, info = check.entry()
        status = torch.empty(4, dtype=torch.int32)
        manifest.check_device_check(check.index, a, status.data_ptr())
        log.append((info.name.decode(), info.variant.batch_idx))
        for k, v, rows in ((s.k_pool, s.v_pool, s.rows), gathered):
            if snew:
                kvops.kvcache_append_eager(k, v, s.k_new, s.v_new, s.seqlens,
                                           None, cache_batch_idx=rows)
            kvops.attention_kvcache_eager(
                s.q, k, v, s.seqlens, None, snew, 2 if causal else 0,
                1 / math.sqrt(d), *win, 0.0, 0, cache_batch_idx=rows)
    pool_kernels = 2 + bool(snew)  # the check, the append, the decode
    ok = ([bi for _, bi in log[:pool_kernels]] == [1] * pool_kernels
          and [bi for _, bi in log[pool_kernels:]] == [0] * (pool_kernels - 1))
    return dict(case=case_name(case, pool, heads), ok=ok,
                kernels=[name for name, _ in log])


def bench(b=16, bc=32, keys=8192, hq=32, hkv=8, d=128):
    """One token's step, bf16, every sequence at `keys` keys: ms and GB/s
    of K and V read by the step over the pool, the plain decode over the
    already gathered caches, and SDPA after gathering them each call."""
    import torch
    import torch.nn.functional as F
    import flashfuse
    from check_documents import timed
    dt = torch.bfloat16
    q = torch.randn(b, 1, hq, d, device="cuda", dtype=dt)
    k_pool = torch.randn(bc, keys, hkv, d, device="cuda", dtype=dt)
    v_pool = torch.randn_like(k_pool)
    rows = torch.randperm(bc, device="cuda")[:b].to(torch.int32)
    index = rows.long()
    k_gathered, v_gathered = k_pool[index], v_pool[index]
    lengths = torch.full((b,), keys, dtype=torch.int32, device="cuda")
    qt = q.transpose(1, 2)
    fns = {
        "pool": lambda: flashfuse.attention_with_kvcache(
            q, k_pool, v_pool, lengths, cache_batch_idx=rows),
        "plain_gathered": lambda: flashfuse.attention_with_kvcache(
            q, k_gathered, v_gathered, lengths),
        "sdpa_gather": lambda: F.scaled_dot_product_attention(
            qt, k_pool[index].transpose(1, 2), v_pool[index].transpose(1, 2),
            enable_gqa=True),
    }
    ms, _ = timed(fns, reps=7)
    gb = 2 * b * keys * hkv * d * 2 / 1e9
    row = dict(b=b, pool=bc, keys=keys,
               **{f"{k}_ms": round(t, 4) for k, t in ms.items()},
               **{f"{k}_GBps": round(gb / (t / 1e3), 1)
                  for k, t in ms.items()})
    row["pool/plain_gathered"] = round(ms["plain_gathered"] / ms["pool"], 3)
    row["pool/sdpa_gather"] = round(ms["sdpa_gather"] / ms["pool"], 3)
    print(json.dumps(row), flush=True)
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--compile", metavar="DIR")
    p.add_argument("--artifacts", metavar="DIR")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--bench", action="store_true")
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args()
    if args.compile:
        compile_all(args.compile)
        return 0
    if args.dry_run and not args.artifacts:
        p.error("--dry-run checks the kernels of --artifacts DIR")
    if args.artifacts:
        use_artifacts(args.artifacts)
    # Outputs NaN before each launch: an element a kernel does not write
    # cannot pass by holding an earlier step's value.
    os.environ["FLASHFUSE_POISON_OUTPUTS"] = "1"
    import torch
    gen = torch.Generator(device="cpu" if args.dry_run else "cuda")
    gen.manual_seed(0)
    cases, heads = (QUICK, HEADS[:1]) if args.quick else (CASES, HEADS)
    check = dry_run_case if args.dry_run else check_case
    results = []

    def record(name, run):
        try:
            found = run()
        except Exception as e:  # one case's failure must not hide the rest
            first = (str(e).splitlines() or [""])[0]
            found = dict(case=name, ok=False,
                         error=f"{type(e).__name__}: {first}")
        for r in found if isinstance(found, list) else [found]:
            results.append(r)
            print(json.dumps(r), flush=True)
    for case, pool, h in runs(cases, heads):
        record(case_name(case, pool, h), lambda: check(case, pool, h, gen))
    if not args.dry_run:
        record("device_checks", lambda: check_device_checks(gen))
    failed = sum(not r["ok"] for r in results)
    print(json.dumps(dict(cases=len(results), failures=failed)), flush=True)
    if args.bench and not args.dry_run:
        os.environ["FLASHFUSE_POISON_OUTPUTS"] = "0"  # no fills timed
        bench()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
