#!/usr/bin/env python3
"""Checks and times the decode kernels (docs/KVCACHE.md) through the CUDA driver.

The kernel developer's harness for kinds `decode`, `decode_combine`,
`kv_append` and `decode_check`,
independent of runtime/ (as check_and_bench.py is for the forward): loads an
artifact with ctypes on libcuda, runs attention over a KV cache on fresh
random inputs with outputs poisoned first, and applies FlashAttention's rule
(max|out - ref| <= 2 * max|out_pt - ref| + atol; ref in f32 from up-cast
inputs, out_pt the same in the kernel's dtype) over ragged lengths (0, 1,
block multiples +-1, full), GQA, Sq > 1, causal, window, softcap, contiguous
and paged caches (pages shuffled) and forced split counts; kv_append against
torch indexing (rows outside the cache skipped) and decode_check's status
for each kind of bad input. With --quick --no-bench it is small enough for
compute-sanitizer (memcheck). Then times one
decode step against SDPA's backends on the shapes of ANCHORS.md, in GB/s of
K and V read, each method warmed up 250 ms, medians over interleaved
repetitions.
"""
import argparse, json, math, os, re, statistics, sys, time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_and_bench import Artifact, attention, median_ms  # noqa: E402

TDT = {"f16": torch.float16, "bf16": torch.bfloat16}

# The chunk of the counters' merge in two levels, read from the header the
# runtime and the kernels take it from.
_SPLITS_H = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                         "runtime", "include", "flashfuse", "decode_splits.h")
with open(_SPLITS_H) as _f:
    MERGE_CHUNK = int(re.search(r"#define FLASHFUSE_DECODE_MERGE_CHUNK (\d+)",
                                _f.read()).group(1))


def split_counters(groups, splits):
    """decode_splits.h's flashfuse_decode_split_counters: one counter a row
    group, and past 2 * MERGE_CHUNK splits one a chunk of its splits too."""
    chunks = -(-splits // MERGE_CHUNK) if splits > 2 * MERGE_CHUNK else 0
    return groups * (1 + chunks)


def decode_num_splits(batch, heads_kv, m_blocks, key_blocks, sm_count, blocks_per_sm):
    """runtime/include/flashfuse/decode_splits.h, the rule the runtime and
    flash-select-config use, transcribed for this harness."""
    base = batch * heads_kv * m_blocks
    slots = sm_count * max(blocks_per_sm, 1)
    if base <= 0 or key_blocks <= 0:
        return 1
    return max(min(slots // base, key_blocks // 4, 128), 1)


class Decode:
    """The decode and combine kernels of one variant."""

    def __init__(self, art, dtype, d, causal, page_size=0, window=False, softcap=False):
        def pick(kind, **extra):
            for k in art.kernels:
                if (k["kind"] == kind and k["dtype"] == dtype and int(k["head_dim_v"]) == d
                        and all(str(k.get(f, "0")) == str(v) for f, v in extra.items())):
                    return k
            return None
        self.art = art
        self.kernel = pick("decode", head_dim=d, causal=causal, page_size=page_size,
                           window=int(window), softcap=int(softcap))
        self.combine = pick("decode_combine")
        self.sms = torch.cuda.get_device_properties(0).multi_processor_count

    def prepare(self, q, kc, vc, seqlens, block_table=None, seq_new=0, splits=None,
                scale=None, window=(-1, -1), softcap=0.0, o=None, lse=None, merge=None):
        """q [B, Sq, Hq, D]; a contiguous cache [B, Smax, Hkv, D] or a paged
        one [pages, P, Hkv, D] with block_table [B, max_pages]. Returns
        (launch(), o [B, Sq, Hq, Dv], lse [B, Hq, Sq], splits): launch()
        runs the decode (and combine) kernels with arguments packed once.
        merge: "cluster" (the splits of a row group merge in their
        thread-block cluster, merge_splits 2, KERNEL_ABI.md "Decode"; the
        default where the manifest's cluster_merge allows the split count),
        "kernel" (the decode's last split of a row group merges; the default
        elsewhere where the kernel takes split_arrivals or split_counters)
        or "combine" (merge_splits 0 and the combine kernel). The counters are zeroed here; those of a kernel
        that takes split_arrivals are left at 0 by each launch (as the
        runtime keeps them), split_counters are cleared before each."""
        k = self.kernel
        B, Sq, Hq, D = q.shape
        Hkv, Dv = kc.shape[2], vc.shape[3]
        paged = block_table is not None
        capacity = block_table.shape[1] * kc.shape[1] if paged else kc.shape[1]
        bm, bn = int(k["block_m"]), int(k["block_n"])
        m_blocks = -(-(Hq // Hkv) * Sq // bm)
        if splits is None:
            per_sm = self.art.blocks_per_sm(k)
            splits = decode_num_splits(B, Hkv, m_blocks, -(-capacity // bn), self.sms, per_sm)
        if o is None:
            o = torch.full((B, Sq, Hq, Dv), float("nan"), device=q.device, dtype=q.dtype)
        if lse is None:
            lse = torch.full((B, Hq, Sq), float("nan"), device=q.device, dtype=torch.float32)
        o_part = torch.full((splits * B * Hq * Sq * Dv,), float("nan"), device=q.device)
        lse_part = torch.full((splits * B * Hq * Sq,), float("nan"), device=q.device)
        kept = "memref:split_arrivals" in k["params"]
        in_kernel = kept or "memref:split_counters" in k["params"]
        # The runtime's choice: in a cluster where the kernel can (and the
        # split count is a portable cluster size), else the counters.
        in_cluster = 1 < splits <= min(int(k.get("cluster_merge", 0)), 8)
        merge = merge or ("cluster" if in_cluster else
                          "kernel" if in_kernel else "combine")
        counters = torch.zeros(split_counters(B * Hkv * m_blocks, splits),
                               device=q.device, dtype=torch.int32)
        bufs = {"q": q, "k": kc, "v": vc, "o": o, "lse": lse, "o_partial": o_part,
                "lse_partial": lse_part,
                ("split_arrivals" if kept else "split_counters"): counters,
                "cache_seqlens": seqlens, "block_table": block_table}
        sc = {"batch": B, "heads_q": Hq, "heads_kv": Hkv, "seq_q": Sq, "seq_k": capacity,
              "seq_new": seq_new, "num_splits": splits,
              "merge_splits": {"kernel": 1, "cluster": 2}.get(merge, 0),
              "scale": scale if scale is not None else 1.0 / math.sqrt(D),
              "window_left": window[0], "window_right": window[1], "softcap": softcap}
        # Logical [b, h, s] strides: q and o are BSHD, caches [B|page, S, H, D].
        for name, t in (("q", q), ("o", o)):
            sc.update({f"{name}_stride_b": t.stride(0), f"{name}_stride_h": t.stride(2),
                       f"{name}_stride_s": t.stride(1)})
        for name, t in (("k", kc), ("v", vc)):
            sc.update({f"{name}_stride_b": t.stride(0), f"{name}_stride_h": t.stride(2),
                       f"{name}_stride_s": t.stride(1)})
        if paged:
            sc.update({"num_pages": kc.shape[0], "block_table_stride": block_table.stride(0)})
        packed = self.art.pack(k, bufs, sc)
        rows = int(self.combine["block_m"])
        packed_combine = (self.art.pack(self.combine, bufs, sc)
                          if splits > 1 and merge == "combine" else None)

        def launch_decode():
            if merge == "kernel" and splits > 1 and not kept:
                counters.zero_()  # as the runtime clears them before each launch
            self.art.launch_packed(k, (splits * m_blocks, Hkv, B), packed,
                                   cluster=splits if merge == "cluster" else 1)

        def launch_combine():
            if packed_combine is not None:
                self.art.launch_packed(self.combine, (-(-B * Hq * Sq // rows), 1, 1),
                                       packed_combine)

        def launch():
            launch_decode()
            launch_combine()
        launch.buffers, launch.scalars = bufs, sc  # alive as long as the launcher
        launch.merge = merge
        launch.counters = counters if merge == "kernel" and splits > 1 and kept else None
        # The two kernels alone, for timing each part of a step.
        launch.decode, launch.combine = launch_decode, launch_combine
        return launch, o, lse, splits


def make_cache(B, Hkv, capacity, d, dtype, page_size):
    """(k_cache, v_cache, block_table or None, dense k, dense v [B, Hkv, C, D])."""
    if not page_size:
        kc = torch.randn(B, capacity, Hkv, d, device="cuda", dtype=dtype)
        vc = torch.randn(B, capacity, Hkv, d, device="cuda", dtype=dtype)
        return kc, vc, None, kc.transpose(1, 2), vc.transpose(1, 2)
    max_pages = capacity // page_size
    pages = B * max_pages + 3  # a few pages no sequence uses
    kc = torch.randn(pages, page_size, Hkv, d, device="cuda", dtype=dtype)
    vc = torch.randn(pages, page_size, Hkv, d, device="cuda", dtype=dtype)
    table = torch.randperm(pages, device="cuda")[:B * max_pages].view(B, max_pages).int()
    dense = lambda c: c[table.long()].reshape(B, capacity, Hkv, d).transpose(1, 2)
    return kc, vc, table, dense(kc), dense(vc)


def reference(q, k, v, lengths, scale, causal, window, softcap, dtype):
    """Per sequence: attention of q [Hq, Sq, D] over its first L keys, the
    diagonal bottom-right by its own length. O [B, Sq, Hq, Dv] f32, LSE."""
    outs, lses = [], []
    B, Sq = q.shape[0], q.shape[1]
    for b in range(B):
        L = int(lengths[b])
        qb = q[b].transpose(0, 1)[None]           # [1, Hq, Sq, D]
        kb, vb = k[b, :, :L][None], v[b, :, :L][None]
        i = torch.arange(Sq, device=q.device)[:, None]
        j = torch.arange(L, device=q.device)[None, :]
        diag = i + L - Sq
        keep = torch.ones(Sq, L, dtype=torch.bool, device=q.device)
        if causal == "bottom_right":
            keep &= j <= diag
        if window[0] >= 0:
            keep &= j >= diag - window[0]
        if window[1] >= 0:
            keep &= j <= diag + window[1]
        bias = torch.zeros(Sq, L, device=q.device).masked_fill(~keep, float("-inf"))
        if L == 0:
            Hq, Dv = q.shape[2], v.shape[-1]
            outs.append(torch.zeros(Sq, Hq, Dv, device=q.device))
            lses.append(torch.full((Hq, Sq), float("-inf"), device=q.device))
            continue
        o, lse = attention(qb, kb, vb, scale, "none", None, softcap or None, bias, None, dtype)
        outs.append(o.float()[0].transpose(0, 1))
        lses.append(lse[0])
    return torch.stack(outs), torch.stack(lses)


def check_case(dec, dtype, d, causal, B, Hq, Hkv, Sq, capacity, lengths, page_size=0,
               window=None, softcap=None, splits=None, merge=None):
    tdt = TDT[dtype]
    q = torch.randn(B, Sq, Hq, d, device="cuda", dtype=tdt)
    kc, vc, table, kd, vd = make_cache(B, Hkv, capacity, d, tdt, page_size)
    seqlens = torch.tensor(lengths, device="cuda", dtype=torch.int32)
    scale = 1.0 / math.sqrt(d)
    win = window or (-1, -1)
    launch, o, lse, used = dec.prepare(q, kc, vc, seqlens, table, splits=splits, scale=scale,
                                       window=win, softcap=softcap or 0.0, merge=merge)
    launch()
    counters_ok = True
    if launch.counters is not None:
        # The kernel leaves its counters at 0 (KERNEL_ABI.md "Decode"), so a
        # second launch over them, into NaN outputs, merges again.
        torch.cuda.synchronize()
        counters_ok = bool((launch.counters == 0).all())
        o.fill_(float("nan"))
        lse.fill_(float("nan"))
        launch()
        torch.cuda.synchronize()
        counters_ok = counters_ok and bool((launch.counters == 0).all())
    torch.cuda.synchronize()
    ref, ref_lse = reference(q, kd, vd, lengths, scale, causal, win, softcap, torch.float32)
    pt, _ = reference(q, kd, vd, lengths, scale, causal, win, softcap, tdt)
    err = (o.float() - ref).abs().max().item()
    err_pt = (pt - ref).abs().max().item()
    finite = torch.isfinite(ref_lse)
    lse_err = (lse - ref_lse)[finite].abs().max().item() if finite.any() else 0.0
    empty_ok = bool(torch.all(lse[~finite] == float("inf"))) if (~finite).any() else True
    ok = ((not math.isnan(err)) and err <= 2 * err_pt + 1e-5 and lse_err < 1e-2 and empty_ok
          and counters_ok)
    return dict(kernel=dec.kernel["name"], shape=[B, Hq, Hkv, Sq, capacity, d], lengths=lengths,
                causal=causal, page=page_size, window=window, softcap=softcap, splits=used,
                merge=launch.merge,
                err=err, err_pt=err_pt, lse_err=lse_err, ok=ok)


def sweep(art, dtypes, dims, quick=False):
    results = []
    cases = [  # B, Hq, Hkv, Sq, capacity, lengths
        (3, 8, 8, 1, 256, [0, 1, 200]),
        (3, 32, 8, 1, 512, [63, 64, 65]),
        (2, 32, 8, 4, 320, [320, 129]),
        (1, 64, 8, 1, 4096, [4095]),
        (2, 16, 2, 12, 1024, [1024, 517]),
    ]
    if quick:
        cases = cases[:3]
    for dtype in dtypes:
        for d in dims:
            for causal in ("none", "bottom_right"):
                for page in (0, 16, 64):
                    dec = Decode(art, dtype, d, causal, page)
                    if dec.kernel is None:
                        continue
                    for case in cases:
                        # 20 splits: the counters' merge takes 16 at a
                        # time (Sm80Decode.cpp), so a full and a partial
                        # chunk, and splits with no keys (-inf LSE). 40
                        # and 70: past 32 in two levels, chunks of 16
                        # (two full and one of 8; four and one of 6),
                        # whole chunks without keys at the short lengths.
                        runs = [(None, None), (3, None), (3, "combine"),
                                (20, "kernel"), (40, "kernel"), (70, "kernel")]
                        if int(dec.kernel.get("cluster_merge", 0)):
                            # The counters too, and a cluster of 8.
                            runs += [(3, "kernel"), (8, None)]
                        for splits, merge in runs + ([] if quick else [(1, None)]):
                            results.append(check_case(dec, dtype, d, causal, *case,
                                                      page_size=page, splits=splits,
                                                      merge=merge))
            for kw in (dict(window=(64, 0)), dict(softcap=30.0)):
                for page in (0, 16):  # the library's: contiguous and page 16
                    dec = Decode(art, dtype, d, "bottom_right", page,
                                 window="window" in kw, softcap="softcap" in kw)
                    if dec.kernel is None:
                        continue
                    for case in cases[1:4]:
                        results.append(check_case(dec, dtype, d, "bottom_right", *case,
                                                  page_size=page, **kw))
    return results


def pick_aux(art, kind, dtype, d, page_size):
    """The kv_append or decode_check kernel of a cache (dtype, D, page size)."""
    for k in art.kernels:
        if (k["kind"] == kind and k["dtype"] == dtype and int(k["head_dim"]) == d
                and int(k.get("page_size", 0)) == page_size):
            return k
    return None


def cache_scalars(kc, vc, seqlens, table, seq_new):
    """The scalars kv_append and decode_check share (KERNEL_ABI.md "Decode")."""
    paged = table is not None
    sc = {"batch": seqlens.shape[0], "heads_kv": kc.shape[2], "seq_new": seq_new,
          "seq_k": table.shape[1] * kc.shape[1] if paged else kc.shape[1]}
    for name, t in (("k", kc), ("v", vc)):
        sc.update({f"{name}_stride_b": t.stride(0), f"{name}_stride_h": t.stride(2),
                   f"{name}_stride_s": t.stride(1)})
    if paged:
        sc.update({"num_pages": kc.shape[0], "block_table_stride": table.stride(0)})
    return sc


def run_append(art, k, kc, vc, kn, vn, seqlens, table):
    """kv_append of k_new/v_new [B, Snew, Hkv, D] (any strides) into the caches."""
    B, snew, hkv = kn.shape[:3]
    sc = cache_scalars(kc, vc, seqlens, table, snew)
    for name, t in (("k_new", kn), ("v_new", vn)):
        sc.update({f"{name}_stride_b": t.stride(0), f"{name}_stride_h": t.stride(2),
                   f"{name}_stride_s": t.stride(1)})
    bufs = {"k": kc, "v": vc, "k_new": kn, "v_new": vn, "cache_seqlens": seqlens,
            "block_table": table}
    packed = art.pack(k, bufs, sc)
    art.launch_packed(k, (-(-B * hkv * snew // int(k["block_m"])), 1, 1), packed)
    torch.cuda.synchronize()


def appended(cache, table, new, seqlens):
    """The contract by torch indexing: row t of new[b] at row seqlens[b] + t of
    sequence b; rows whose destination is outside the cache skipped."""
    want = cache.clone()
    for b in range(new.shape[0]):
        for t in range(new.shape[1]):
            n, pos = int(seqlens[b]), int(seqlens[b]) + t
            if n < 0:
                continue
            if table is None:
                if pos < cache.shape[1]:
                    want[b, pos] = new[b, t]
                continue
            P = cache.shape[1]
            if pos < table.shape[1] * P and 0 <= int(table[b, pos // P]) < cache.shape[0]:
                want[int(table[b, pos // P]), pos % P] = new[b, t]
    return want


def append_sweep(art, dtypes, dims, quick=False):
    """kv_append against torch indexing: ragged lengths, Snew 1 and 4, shuffled
    pages, strided new rows, rows outside the cache (beyond the capacity, a
    negative length, a page past the pool) skipped; the whole pool compared."""
    results = []
    for dtype in dtypes:
        tdt = TDT[dtype]
        for d in dims:
            for page in (0, 16, 64):
                k = pick_aux(art, "kv_append", dtype, d, page)
                if k is None:
                    continue
                for snew in (1, 4):
                    for bad in ((False, True) if not quick or snew == 4 else (False,)):
                        B, hkv, cap = 4, 8, 256
                        kc, vc, table, _, _ = make_cache(B, hkv, cap, d, tdt, page)
                        lens = [0, 63, 128 - snew, cap - snew]
                        if bad:  # past the capacity, negative, (paged) page past the pool
                            lens = [cap - 2, -3, 10, 40]
                            if page:
                                table[3, 40 // page] = kc.shape[0]
                        seqlens = torch.tensor(lens, device="cuda", dtype=torch.int32)
                        kv = torch.randn(B, snew, 2, hkv, d, device="cuda", dtype=tdt)
                        kn, vn = kv[:, :, 0], kv[:, :, 1]  # strided views
                        want_k, want_v = appended(kc, table, kn, seqlens), appended(vc, table, vn, seqlens)
                        run_append(art, k, kc, vc, kn, vn, seqlens, table)
                        ok = bool(torch.equal(kc, want_k) and torch.equal(vc, want_v))
                        results.append(dict(kernel=k["name"], snew=snew, lengths=lens,
                                            out_of_cache=bad, ok=ok))
    return results


def run_device_check(art, k, kc, vc, seqlens, table, seq_new):
    status = torch.full((4,), -99, device="cuda", dtype=torch.int32)
    bufs = {"cache_seqlens": seqlens, "block_table": table, "check_status": status}
    packed = art.pack(k, bufs, cache_scalars(kc, vc, seqlens, table, seq_new))
    art.launch_packed(k, (1, 1, 1), packed)
    torch.cuda.synchronize()
    return status.tolist()


def check_sweep(art, dtypes, dims):
    """decode_check's status for each kind of bad input (KERNEL_ABI.md "Decode":
    code, sequence, value, page), the lowest offending sequence first."""
    results = []
    for dtype in dtypes:
        for d in dims:
            for page in (0, 16):
                k = pick_aux(art, "decode_check", dtype, d, page)
                if k is None:
                    continue
                B, cap = 40, 128  # more sequences than one pass of the block's threads
                kc, vc, table, _, _ = make_cache(B, 1, cap, d, TDT[dtype], page)
                pool = kc.shape[0]
                ok_lens = [(7 * b) % (cap - 3) for b in range(B)]

                def case(name, edit, snew, want):
                    lens = list(ok_lens)
                    t = table.clone() if table is not None else None
                    edit(lens, t)
                    seqlens = torch.tensor(lens, device="cuda", dtype=torch.int32)
                    got = run_device_check(art, k, kc, vc, seqlens, t, snew)
                    results.append(dict(kernel=k["name"], case=name, got=got, want=want,
                                        ok=got == want))

                case("valid", lambda l, t: None, 3, [0, 0, 0, 0])
                case("negative", lambda l, t: l.__setitem__(33, -5), 1, [1, 33, -5, 0])
                case("beyond", lambda l, t: l.__setitem__(21, cap - 1), 2, [2, 21, cap - 1, 0])
                case("lowest first", lambda l, t: (l.__setitem__(30, -1), l.__setitem__(12, cap + 1)),
                     0, [2, 12, cap + 1, 0])
                if page:
                    def bad_page(l, t):
                        l[5] = 3 * page  # L = 3 * page + 1: pages 0..3
                        t[5, 3] = pool
                        t[2, cap // page - 1] = -4  # beyond sequence 2's pages: padding
                    case("page past the pool", bad_page, 1, [3, 5, pool, 3])
                    case("negative page", lambda l, t: (l.__setitem__(0, 1), t.__setitem__((0, 0), -2)),
                         0, [3, 0, -2, 0])
                    case("padding only", lambda l, t: t.__setitem__((1, cap // page - 1), -9), 0,
                         [0, 0, 0, 0])
    return results


def gbps(B, Hkv, L, d):
    return 2 * B * Hkv * L * d * 2 / 1e9  # K and V, 2-byte elements; GB per call


def bench(arts, page_size, B, Hq, Hkv, L, d=128, dtype="bf16", reps=3, one_wave=False,
          split_sweep=(), ordered_pages=False):
    """Times the decode of every artifact in `arts` ("ours", "ours1", ...)
    and SDPA's backends on one shape."""
    from torch.nn.attention import sdpa_kernel, SDPBackend
    tdt = TDT[dtype]
    decs = [Decode(a, dtype, d, "bottom_right", page_size) for a in arts]
    if decs[0].kernel is None:
        return None
    dec = decs[0]
    capacity = -(-L // max(page_size, 1)) * max(page_size, 1)
    q = torch.randn(B, 1, Hq, d, device="cuda", dtype=tdt)
    kc, vc, table, kd, vd = make_cache(B, Hkv, capacity, d, tdt, page_size)
    seqlens = torch.full((B,), L, device="cuda", dtype=torch.int32)
    o = torch.empty(B, 1, Hq, d, device="cuda", dtype=tdt)
    lse = torch.empty(B, Hq, 1, device="cuda", dtype=torch.float32)
    qs = q.transpose(1, 2)
    ks, vs = kd[:, :, :L].contiguous(), vd[:, :, :L].contiguous()
    del kd, vd

    def ours(dec):
        return dec.prepare(q, kc, vc, seqlens, table, o=o, lse=lse)[0]

    def sdpa(backend):
        def run():
            if backend is None:
                F.scaled_dot_product_attention(qs, ks, vs, enable_gqa=True)
            else:
                with sdpa_kernel(backend):
                    F.scaled_dot_product_attention(qs, ks, vs, enable_gqa=True)
        return run
    methods = {("ours" + (str(i) if i else "")): ours(x) for i, x in enumerate(decs)
               if x.kernel is not None}
    if table is not None and ordered_pages:
        # The same cache through pages in order (page p of sequence b at
        # b * max_pages + p): the paged layout read as the contiguous one,
        # to tell the lookups' cost from the scattered pages'.
        ordered = torch.arange(table.numel(), device="cuda", dtype=torch.int32).view(table.shape)
        for i, x in enumerate(decs):
            if x.kernel is not None:
                methods["ours" + (str(i) if i else "") + "-ordered"] = x.prepare(
                    q, kc, vc, seqlens, ordered, o=o, lse=lse)[0]
    if any(f"memref:{c}" in dec.kernel["params"] for c in ("split_arrivals", "split_counters")):
        # The same kernel with its splits merged by a second launch, as
        # before the in-kernel merge (run 112).
        launch, _, _, used = dec.prepare(q, kc, vc, seqlens, table, o=o, lse=lse,
                                         merge="combine")
        if used > 1:
            methods["ours-combine"] = launch
    if one_wave:
        # The first kernel with as many splits as fill one wave exactly.
        k = dec.kernel
        per_sm = dec.art.blocks_per_sm(k)
        base = B * Hkv * -(-(Hq // Hkv) // int(k["block_m"]))
        w1 = max(1, min((dec.sms * per_sm) // base, -(-capacity // int(k["block_n"])) // 4, 128))
        methods["ours-1wave"] = dec.prepare(q, kc, vc, seqlens, table, o=o, lse=lse, splits=w1)[0]
    for n in split_sweep:
        # The first kernel at a forced split count, to map speed against it.
        if n <= -(-capacity // int(dec.kernel["block_n"])):
            methods[f"ours-s{n}"] = dec.prepare(q, kc, vc, seqlens, table, o=o, lse=lse,
                                                splits=n)[0]
    methods.update({"sdpa": sdpa(None),
               "sdpa-flash": sdpa(SDPBackend.FLASH_ATTENTION),
               "sdpa-cudnn": sdpa(SDPBackend.CUDNN_ATTENTION),
               "sdpa-efficient": sdpa(SDPBackend.EFFICIENT_ATTENTION)})
    times = {m: [] for m in methods}
    for _ in range(reps):  # interleaved repetitions
        for name, fn in methods.items():
            try:
                times[name].append(median_ms(fn))
            except Exception:
                times[name].append(float("nan"))
    gb = gbps(B, Hkv, L, d)
    res = {"page": page_size, "B": B, "Hq": Hq, "Hkv": Hkv, "L": L, "d": d,
           "splits": dec.prepare(q, kc, vc, seqlens, table, o=o, lse=lse)[3]}
    for name, t in times.items():
        ms = statistics.median(t)
        res[name + "_us"] = ms * 1e3
        res[name + "_GBs"] = gb / (ms / 1e3) if ms == ms else None
    best = max((res[m + "_GBs"] or 0) for m in methods if not m.startswith("ours"))
    res["ratio_best_sdpa"] = (res["ours_GBs"] or 0) / best if best else None
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("artifact")
    ap.add_argument("--alt", action="append", default=[],
                    help="another artifact whose decode kernels are timed beside (ours1, ...)")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--no-bench", action="store_true")
    ap.add_argument("--quick", action="store_true", help="small sweep (for compute-sanitizer)")
    ap.add_argument("--one-wave", action="store_true",
                    help="also time the first artifact with splits filling one wave")
    ap.add_argument("--split-sweep", default="",
                    help="comma-separated split counts at which the first artifact is also timed")
    ap.add_argument("--ordered-pages", action="store_true",
                    help="also time paged caches through a page table in order")
    ap.add_argument("--bench-only", action="store_true", help="skip the numerics sweeps")
    ap.add_argument("--shapes", default="",
                    help="B/Hq/Hkv/L;... instead of the ANCHORS.md shapes")
    ap.add_argument("--pages", default="0,16,64", help="page sizes to time (0: contiguous)")
    ap.add_argument("--dims", default="64,128,256")
    ap.add_argument("--dtypes", default="bf16,f16")
    args = ap.parse_args()
    torch.manual_seed(int(time.time()))
    art = Artifact(args.artifact)
    alts = [Artifact(a) for a in args.alt]
    print(f"device: {torch.cuda.get_device_name()}  kernels: {len(art.kernels)}", flush=True)
    results = ([] if args.bench_only else
               sweep(art, args.dtypes.split(","), [int(x) for x in args.dims.split(",")],
                     quick=args.quick))
    failures = [r for r in results if not r["ok"]]
    for r in failures:
        print("FAIL", json.dumps(r))
    print(f"decode numerics: {len(results) - len(failures)}/{len(results)} cases pass "
          "FlashAttention's rule", flush=True)
    json.dump(results, open(os.path.join(args.out, "decode-numerics.json"), "w"), indent=1)
    dims = [int(x) for x in args.dims.split(",")]
    aux = ([] if args.bench_only else
           append_sweep(art, args.dtypes.split(","), dims, quick=args.quick)
           + check_sweep(art, args.dtypes.split(","), dims))
    aux_fail = [r for r in aux if not r["ok"]]
    for r in aux_fail:
        print("FAIL", json.dumps(r))
    print(f"kv_append / decode_check: {len(aux) - len(aux_fail)}/{len(aux)} cases pass",
          flush=True)
    if not aux and not args.bench_only:
        print("FAIL: the artifact has no kv_append / decode_check kernels", flush=True)
        aux_fail = [None]
    json.dump(aux, open(os.path.join(args.out, "decode-append-check.json"), "w"), indent=1)
    failures += aux_fail
    if args.no_bench:
        return 1 if failures else 0
    # Throwaway shape first: the first timed shape of a process reads low.
    bench([art] + alts, 0, 4, 32, 8, 4096, reps=1)
    rows = []
    shapes = [(16, 32, 8, 8192), (4, 32, 8, 65536), (64, 32, 8, 2048), (1, 64, 8, 131072),
              (1, 32, 8, 512)]
    if args.shapes:
        shapes = [tuple(int(x) for x in s.split("/")) for s in args.shapes.split(";")]
    sweep_splits = [int(x) for x in args.split_sweep.split(",") if x]
    for page in (int(x) for x in args.pages.split(",")):
        for B, Hq, Hkv, L in shapes:
            r = bench([art] + alts, page, B, Hq, Hkv, L, one_wave=args.one_wave,
                      split_sweep=sweep_splits, ordered_pages=args.ordered_pages)
            if r is None:
                continue
            rows.append(r)
            print(f"page={page:3} B={B:3} H={Hq}/{Hkv} L={L:6} splits={r['splits']:3}  "
                  f"ours {r['ours_GBs'] or 0:6.0f} GB/s {r['ours_us']:7.1f} us | sdpa {r['sdpa_GBs'] or 0:6.0f} "
                  f"flash {r['sdpa-flash_GBs'] or 0:6.0f} cudnn {r['sdpa-cudnn_GBs'] or 0:6.0f} "
                  f"eff {r['sdpa-efficient_GBs'] or 0:6.0f} ({r['sdpa_us']:7.1f} us) "
                  f"ratio {r['ratio_best_sdpa'] or 0:.2f}"
                  + "".join(f" | ours{i} {r.get(f'ours{i}_GBs') or 0:6.0f}" for i in range(1, len(alts) + 1))
                  + (f" | 1-wave {r['ours-1wave_GBs'] or 0:6.0f}" if 'ours-1wave_GBs' in r else "")
                  + (f" | combine {r['ours-combine_GBs'] or 0:6.0f}"
                     if 'ours-combine_GBs' in r else "")
                  + "".join(f" | s{n} {r[f'ours-s{n}_GBs'] or 0:6.0f}" for n in sweep_splits
                            if f"ours-s{n}_GBs" in r)
                  + "".join(f" | {m[:-4]} {r[m] or 0:6.0f}" for m in r
                            if m.endswith("-ordered_GBs")),
                  flush=True)
    json.dump(rows, open(os.path.join(args.out, "decode-bench.json"), "w"), indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
