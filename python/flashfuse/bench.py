"""Side-by-side attention benchmark: `python -m flashfuse.bench`.

FlashFuse kernels against PyTorch SDPA's flash, cuDNN and memory-efficient
backends and naive attention, on FlashAttention's benchmark shapes (hidden
2048, batch 16384 / S; ANCHORS.md). Each number is the median of many CUDA
event timings after a warm-up, cycling through several input sets so that
no run finds its inputs in L2. FLOPs: 2 * B * H * Sq * Sk * (D + Dv)
(4 * B * H * Sq * Sk * D where Dv = D), halved if causal; with --backward
the backward pass alone is timed (torch.autograd.grad of each method's own
forward) and counts 2 * B * H * Sq * Sk * (3 D + 2 Dv), 2.5 times the
forward's where Dv = D. With --ring, ring attention across this machine's GPUs
(bench_ring.py). With --decode, one decoding step over a KV cache
(flashfuse.attention_with_kvcache, contiguous and paged) against SDPA's
default, flash and cuDNN choices over the cache, in GB/s of K and V read.
With --varlen, a packed batch of 16 sequences of random lengths
(flashfuse.varlen_attention) against the dense forward on equal lengths of
the same total tokens (bench_varlen.py). With --window W, a sliding window
(each query sees itself and the W keys before it) for the methods that
have one: flashfuse, naive and flex (FlexAttention, compiled); FLOPs then
count exactly the query-key pairs the window keeps.
"""

import argparse
import math
import statistics
import sys
import time

import torch

from . import bench_report
from .errors import FlashFuseError

METHODS = ("flashfuse", "sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "naive",
           "flex")
_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


# With --window W every query sees itself and the W keys before it
# (Mistral's sliding window: causal, window_size (W, 0)); 0 = no window.
# A method that cannot express it raises, and its cells read n/a.


# What a method may raise when it cannot run a shape (no kernel, no
# window, out of memory): its cells read n/a with the reason.
MEASURE_ERRORS = (RuntimeError, ValueError, FlashFuseError,
                  NotImplementedError)


def error_text(e):
    """The first line of an exception's message (its type where it has
    none), short enough for a table's "not measured" list."""
    lines = str(e).strip().splitlines()
    return (lines[0] if lines else type(e).__name__)[:200]


def _no_window(name, window):
    if window:
        raise NotImplementedError(f"{name} has no sliding window")


def _sdpa(backend, window=0):
    from torch.nn.attention import sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention

    def run(q, k, v, causal):
        _no_window("SDPA", window)
        with sdpa_kernel(backend):
            return scaled_dot_product_attention(q, k, v, is_causal=causal)
    return run


def _naive(window=0):
    def run(q, k, v, causal):
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
        i = torch.arange(q.shape[-2], device=q.device)[:, None]
        j = torch.arange(k.shape[-2], device=q.device)[None, :]
        keep = torch.ones_like(i - j, dtype=torch.bool)
        if causal or window:
            keep &= j <= i
        if window:
            keep &= i - j <= window
        scores = scores.masked_fill(~keep, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)
    return run


def _flashfuse(window=0):
    from .functional import attention

    def run(q, k, v, causal):
        if window:  # window (W, 0) keeps no key past the diagonal
            return attention(q, k, v, window=(window, 0))
        return attention(q, k, v, is_causal=causal)
    return run


def _flex(window=0):
    """torch.compile'd FlexAttention with a BlockMask of the same mask
    (made once per shape, outside the timing, as a model would)."""
    from torch.nn.attention.flex_attention import (create_block_mask,
                                                   flex_attention)
    compiled = torch.compile(flex_attention, dynamic=False)
    masks = {}

    def mask_mod(b, h, i, j):
        keep = j <= i
        return keep & (i - j <= window) if window else keep

    def run(q, k, v, causal):
        key = (q.shape[-2], k.shape[-2], q.device)
        if (causal or window) and key not in masks:
            masks[key] = create_block_mask(mask_mod, None, None, q.shape[-2],
                                           k.shape[-2], device=q.device)
        block_mask = masks[key] if (causal or window) else None
        return compiled(q, k, v, block_mask=block_mask)
    return run


def _runners(window=0):
    from torch.nn.attention import SDPBackend
    return {"flashfuse": _flashfuse(window),
            "sdpa-flash": _sdpa(SDPBackend.FLASH_ATTENTION, window),
            "sdpa-cudnn": _sdpa(SDPBackend.CUDNN_ATTENTION, window),
            "sdpa-efficient": _sdpa(SDPBackend.EFFICIENT_ATTENTION, window),
            "naive": _naive(window),
            "flex": _flex(window)}


def time_ms(fn, inputs, warmup, reps, warmup_ms=250.0):
    """Median milliseconds of fn(*inputs[i % len(inputs)]), one event pair
    per call. The warm-up runs at least `warmup` calls and `warmup_ms`
    milliseconds: under its power limit the GPU sets its clock from the
    power the running kernel draws, and a few calls would time fn at the
    clock the previous method left behind (docs/PERF.md, runs 60-62)."""
    start = time.perf_counter()
    i = 0
    while i < warmup or (time.perf_counter() - start) * 1e3 < warmup_ms:
        fn(*inputs[i % len(inputs)])
        i += 1
        if i % max(warmup, 1) == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        starts[i].record()
        fn(*inputs[i % len(inputs)])
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def configs(args):
    for dtype in args.dtypes:
        for d in args.head_dims:
            for s in args.seqlens:
                for causal in args.causal:
                    yield {"dtype": dtype, "head_dim": d,
                           "head_dim_v": args.head_dim_v or d,
                           "heads": args.hidden // d,
                           "batch": max(1, args.tokens // s),
                           "seqlen": s, "causal": causal,
                           "window": args.window}


def visible_pairs(seqlen, causal, window=0):
    """(query, key) pairs a mask keeps: S^2, S^2 / 2 causal (the usual
    convention), or exactly sum_i min(i, W) + 1 with a window of W."""
    if window:
        w = min(window, seqlen - 1)
        return (w + 1) * seqlen - w * (w + 1) // 2
    return seqlen ** 2 / 2 if causal else seqlen ** 2


def flops(c, backward=False):
    """2 FLOPs a multiply-add over the visible pairs: Q Kᵀ (D) and P V
    (Dv) forward; backward S again, dP = dO Vᵀ, dV, dQ and dK, 3 D + 2 Dv
    (2.5x the forward where Dv = D)."""
    d, dv = c["head_dim"], c.get("head_dim_v", c["head_dim"])
    pairs = visible_pairs(c["seqlen"], c["causal"], c.get("window", 0))
    return 2.0 * c["batch"] * c["heads"] * pairs * (
        3 * d + 2 * dv if backward else d + dv)


def _grads(out, q, k, v, dout):
    return torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)


def _backward_inputs(fn, inputs):
    """Per input set: the method's forward output (graph kept), its leaves
    and an upstream gradient, for _grads."""
    sets = []
    for q, k, v, causal in inputs:
        q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
        out = fn(q, k, v, causal)
        sets.append((out, q, k, v, torch.randn_like(out)))
    return sets


def _rotated(methods, r):
    """Round r's order: each round starts one method later, so that no
    method always runs right after the same one (the clock the previous
    kernel left behind; docs/PERF.md, runs 214-216)."""
    r %= max(len(methods), 1)
    return methods[r:] + methods[:r]


def bench_config(c, args, runners):
    """Rows of one shape: each method's inputs (and, for --backward, its
    forward graphs) made once, then every method timed in `args.rounds`
    interleaved rounds, each after its own warm-up; a row keeps the median
    of its rounds and the rounds themselves (`round_ms`)."""
    dtype = _DTYPES[c["dtype"]]
    shape = (c["batch"], c["heads"], c["seqlen"], c["head_dim"])
    shape_v = shape[:3] + (c.get("head_dim_v", c["head_dim"]),)
    inputs = [tuple(torch.randn(sh, device="cuda", dtype=dtype)
                    for sh in (shape, shape, shape_v)) + (c["causal"],)
              for _ in range(args.rotate)]
    rows = {}
    ready = {}  # method -> (fn, its input sets)
    reference = None
    for method in args.methods:
        row = rows[method] = dict(c, method=method, ms=None, tflops=None,
                                  error=None, round_ms=[])
        scores_gib = (c["batch"] * c["heads"] * c["seqlen"] ** 2 * 4) / 2**30
        if args.backward:  # every input set's graph keeps S, P and dS
            scores_gib *= 3 * args.rotate
        if method == "naive" and scores_gib > args.naive_max_gib:
            row["error"] = f"skipped: needs ~{scores_gib:.0f} GiB of scores"
            continue
        try:
            fn, timed = runners[method], inputs
            if args.backward:
                timed, fn = _backward_inputs(fn, inputs), _grads
                out = fn(*timed[0])[0]  # dQ of the first set
            else:
                out = fn(*inputs[0])
            if method == "sdpa-flash":
                reference = out
            elif method == "flashfuse" and reference is not None:
                row["max_abs_diff_vs_sdpa_flash"] = float(
                    (out.float() - reference.float()).abs().max())
            del out
            ready[method] = (fn, timed)
        except MEASURE_ERRORS as e:
            row["error"] = error_text(e)
            torch.cuda.empty_cache()
    for r in range(args.rounds):
        for method in _rotated([m for m in args.methods if m in ready], r):
            fn, timed = ready[method]
            try:
                rows[method]["round_ms"].append(
                    time_ms(fn, timed, args.warmup, args.reps,
                            args.warmup_ms))
            except MEASURE_ERRORS as e:
                rows[method]["error"] = error_text(e)
                del ready[method]
                torch.cuda.empty_cache()
    for row in rows.values():
        if row["round_ms"] and not row["error"]:
            row["ms"] = statistics.median(row["round_ms"])
            row["tflops"] = flops(c, args.backward) / (row["ms"] * 1e-3) / 1e12
    del inputs, reference, ready
    torch.cuda.empty_cache()
    return list(rows.values())


# ---- --decode: one decoding step over a KV cache ------------------------

# ANCHORS.md's decode shapes (B, Hkv, cache length), GQA 32/8, D = 128,
# and issue 15's latency shape (B = 1, 512 keys).
DECODE_SHAPES = ((16, 8, 8192), (4, 8, 65536), (64, 8, 2048), (1, 8, 131072),
                 (1, 8, 512))
DECODE_LAYOUTS = (0, 16, 64)  # contiguous, then paged with these page sizes
DECODE_METHODS = ("flashfuse", "sdpa", "sdpa-flash", "sdpa-cudnn")
# The same steps replayed from CUDA graphs, as serving stacks run them
# (--decode-methods ... flashfuse-graph sdpa-graph): the GPU time of a step
# without the host's per-call work. flashfuse-unsplit (num_splits=1) is the
# split rule's baseline (decode_splits.h), for tuning it.
DECODE_GRAPH_METHODS = ("flashfuse-graph", "sdpa-graph")
DECODE_TUNING_METHODS = ("flashfuse-unsplit", "flashfuse-unsplit-graph",
                         "sdpa-cudnn-graph")
# ALiBi (BLOOM's and MPT's steps): the same step with the paper's slopes,
# ours through alibi_slopes (kernels compiled on first use), SDPA's default
# backend with the bias as a float mask [B, Hq, 1, L].
DECODE_ALIBI_METHODS = ("flashfuse-alibi", "sdpa-alibi", "flashfuse-alibi-graph",
                        "sdpa-alibi-graph")
# A pool of sequences (cache_batch_idx, contiguous layouts only): the same
# step over a pool of 2B caches, each sequence at a shuffled row of it
# (its kernels compiled on first use); the same K and V bytes read.
DECODE_POOL_METHODS = ("flashfuse-pool", "flashfuse-pool-graph")


def decode_gb(batch, heads_kv, length, head_dim, elem=2):
    """GB of K and V one decoding step reads."""
    return 2 * batch * heads_kv * length * head_dim * elem / 1e9


def graphed(fn):
    """fn captured once in a CUDA graph (after a warm-up call on a side
    stream, which loads the kernels and fills the caches a capture may not
    touch); returns the graph."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph


def decode_step_tensors(batch, heads_q, heads_kv, length, head_dim, dtype,
                        page_size, sq=1):
    """(q [B, sq, Hq, D], k_cache, v_cache, lengths, block_table or None) of
    one decoding step on the GPU with every sequence at `length` keys: a
    flash-attn-layout cache [B, L, Hkv, D], or paged [B * pages, page_size,
    Hkv, D] with its pages shuffled when page_size > 0."""
    dev = "cuda"
    q = torch.randn(batch, sq, heads_q, head_dim, device=dev, dtype=dtype)
    lengths = torch.full((batch,), length, device=dev, dtype=torch.int32)
    if page_size:
        max_pages = -(-length // page_size)
        k = torch.randn(batch * max_pages, page_size, heads_kv, head_dim,
                        device=dev, dtype=dtype)
        table = torch.randperm(batch * max_pages, device=dev).view(
            batch, max_pages).to(torch.int32)
    else:
        k = torch.randn(batch, length, heads_kv, head_dim, device=dev,
                        dtype=dtype)
        table = None
    return q, k, torch.randn_like(k), lengths, table


def _decode_step_runners(batch, heads_q, heads_kv, length, head_dim, dtype,
                         page_size, methods=(), sq=1):
    """{method: fn} for one decoding step with every sequence at `length`
    keys, over input tensors of its own: flashfuse over a flash-attn-layout
    cache (paged with its pages shuffled when page_size > 0), SDPA over a
    [B, Hkv, L, D] cache with enable_gqa (what models hand it), default
    backend choice or one forced. `sq` > 1 query rows a sequence (chunked
    prefill) attend with the bottom-right causal mask, SDPA's through
    causal_lower_right."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention

    from .kvcache import attention_with_kvcache

    dev = "cuda"
    q, k, v, lengths, table = decode_step_tensors(
        batch, heads_q, heads_kv, length, head_dim, dtype, page_size, sq)
    runners = {"flashfuse": lambda: attention_with_kvcache(
        q, k, v, lengths, block_table=table),
        "flashfuse-unsplit": lambda: attention_with_kvcache(
            q, k, v, lengths, block_table=table, num_splits=1)}
    if any("alibi" in m for m in methods) and sq == 1:
        from .alibi import alibi_slopes
        slopes = alibi_slopes(heads_q, device=dev)
        runners["flashfuse-alibi"] = lambda: attention_with_kvcache(
            q, k, v, lengths, block_table=table, alibi_slopes=slopes)
        # flash-attn's bias of the one new row (i = Sq - 1 = 0, L_b = L).
        keys = torch.arange(length, device=dev)
        bias = (-slopes[:, None] * (length - 1 - keys)).to(dtype)
        bias = bias[None, :, None, :].expand(batch, heads_q, 1, length)
    if any("pool" in m for m in methods) and not page_size:
        # K and V pools apart: one tensor for both would read V's rows
        # from L2 after K's and time half the bytes.
        pool_k, pool_v = (torch.randn(2 * batch, *k.shape[1:], device=dev,
                                      dtype=dtype) for _ in range(2))
        rows = torch.randperm(2 * batch, device=dev)[:batch].to(torch.int32)
        runners["flashfuse-pool"] = lambda: attention_with_kvcache(
            q, pool_k, pool_v, lengths, cache_batch_idx=rows)
    qs = q.transpose(1, 2)
    ks = torch.randn(batch, heads_kv, length, head_dim, device=dev,
                     dtype=dtype)
    vs = torch.randn_like(ks)

    mask = None
    if sq > 1:
        from torch.nn.attention.bias import causal_lower_right
        mask = causal_lower_right(sq, length)

    def sdpa(backend):
        def run():
            if backend is None:
                return scaled_dot_product_attention(
                    qs, ks, vs, attn_mask=mask, enable_gqa=True)
            with sdpa_kernel(backend):
                return scaled_dot_product_attention(
                    qs, ks, vs, attn_mask=mask, enable_gqa=True)
        return run
    runners["sdpa"] = sdpa(None)
    runners["sdpa-flash"] = sdpa(SDPBackend.FLASH_ATTENTION)
    runners["sdpa-cudnn"] = sdpa(SDPBackend.CUDNN_ATTENTION)
    if "flashfuse-alibi" in runners:
        runners["sdpa-alibi"] = lambda: scaled_dot_product_attention(
            qs, ks, vs, attn_mask=bias, enable_gqa=True)
    return runners


def decode_cold_copies(batch, heads_kv, length, head_dim, dtype):
    """How many input sets a cold decode step cycles through: enough that
    the K and V a method reads over them are 4x the GPU's L2, so that a
    step finds none of its cache there, as in a model whose other layers'
    caches and weights pass through L2 between two steps of one layer (at
    most 1024). A cache larger than that needs one."""
    l2 = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()),
                 "L2_cache_size", 0) or 50 * 2**20
    size = 2 * batch * heads_kv * length * head_dim * dtype.itemsize
    return max(1, min(1024, -(-4 * l2 // size)))


def _decode_runners(batch, heads_q, heads_kv, length, head_dim, dtype,
                    page_size, methods=(), sq=1, copies=1):
    """{method: (fn, args)} where one call of fn runs `copies` decoding
    steps, each over an input set of its own (_decode_step_runners), in
    turn: 1 where each cache is larger than L2, decode_cold_copies to time
    caches smaller than that as a model reads them, not from L2. A method
    "<m>-graph" among `methods` is <m>'s steps replayed from one CUDA
    graph."""
    sets = [_decode_step_runners(batch, heads_q, heads_kv, length, head_dim,
                                 dtype, page_size, methods, sq)
            for _ in range(copies)]

    def in_turn(steps):
        if len(steps) == 1:
            return steps[0]

        def run():
            for step in steps:
                step()
        return run
    runners = {m: (in_turn([one[m] for one in sets]), ()) for m in sets[0]}
    for method in methods:
        if method.endswith("-graph") and method[:-len("-graph")] in runners:
            steps = runners[method[:-len("-graph")]][0]
            runners[method] = (graphed(steps).replay, ())
    return runners


def bench_decode_shape(shape, page_size, args):
    """Rows of one decode shape: each method timed `args.decode_rounds`
    times, interleaved with the others (each time after its own
    args.warmup_ms warm-up), its median kept; GB/s of K and V read and the
    ratio of flashfuse to the best SDPA method."""
    batch, heads_kv, length = shape
    dtype = _DTYPES[args.dtypes[0]]
    copies = (decode_cold_copies(batch, heads_kv, length, args.decode_head_dim,
                                 dtype) if args.decode_cold else 1)
    runners = _decode_runners(batch, args.decode_heads_q, heads_kv, length,
                              args.decode_head_dim, dtype, page_size,
                              args.decode_methods, args.decode_sq, copies)
    times = {m: [] for m in args.decode_methods}
    errors = {}
    for _ in range(args.decode_rounds):
        for method in args.decode_methods:
            if method in errors:
                continue
            if method not in runners:
                # A pool of a paged cache; ALiBi's bias of many rows.
                errors[method] = ("contiguous caches only" if page_size
                                  else "one query row only")
                continue
            fn, fn_args = runners[method]
            try:
                times[method].append(time_ms(fn, [fn_args], args.warmup,
                                             args.reps, args.warmup_ms)
                                     / copies)
            except MEASURE_ERRORS as e:
                errors[method] = error_text(e)
                torch.cuda.empty_cache()
    gb = decode_gb(batch, heads_kv, length, args.decode_head_dim)
    sq = args.decode_sq
    # Bottom-right causal: row i of sq sees length - sq + 1 + i keys.
    flop = (4 * batch * args.decode_heads_q * args.decode_head_dim
            * (sq * length - sq * (sq - 1) // 2))
    rows = []
    for method in args.decode_methods:
        ms = statistics.median(times[method]) if times[method] else None
        rows.append({"batch": batch, "heads_q": args.decode_heads_q,
                     "heads_kv": heads_kv, "seqlen": length,
                     "head_dim": args.decode_head_dim, "sq": sq,
                     "dtype": args.dtypes[0], "page_size": page_size,
                     "method": method, "ms": ms, "copies": copies,
                     "gbps": gb / (ms * 1e-3) if ms else None,
                     "tflops": flop / (ms * 1e9) if ms else None,
                     "error": errors.get(method)})
    del runners
    torch.cuda.empty_cache()
    return rows


def decode_throwaway_shape(args):
    """The throwaway decode shape: B = 4 over 4096 keys with the first
    shape's KV heads, which divide --decode-heads-q (parse_args checks)."""
    return (4, args.decode_shapes[0][1], 4096)


def run_decode(args):
    """--decode: a throwaway shape first (the first timed shape of a
    process reads low), then every shape and layout."""
    bench_decode_shape(decode_throwaway_shape(args), 0, args)
    rows = []
    for page_size in args.decode_layouts:
        for shape in args.decode_shapes:
            rows.extend(bench_decode_shape(shape, page_size, args))
    return rows


def _decode_shape(text):
    """"B/HKV/L" -> (B, HKV, L), each a positive int."""
    try:
        shape = tuple(int(x) for x in text.split("/"))
    except ValueError:
        shape = ()
    if len(shape) != 3 or min(shape) < 1:
        raise argparse.ArgumentTypeError(
            f"a decode shape is B/HKV/L of positive ints, got {text!r}")
    return shape


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m flashfuse.bench",
                                description=__doc__.splitlines()[0])
    p.add_argument("--dtypes", nargs="+", default=["bf16", "fp16"],
                   choices=sorted(_DTYPES))
    p.add_argument("--head-dims", nargs="+", type=int, default=[64, 128])
    p.add_argument("--head-dim-v", type=int, default=None,
                   help="V's and O's head dim for every D (default: D; at "
                        "most D): DeepSeek's MLA prefill is --head-dims 192 "
                        "--head-dim-v 128")
    p.add_argument("--seqlens", nargs="+", type=int,
                   default=[512, 1024, 2048, 4096, 8192, 16384])
    p.add_argument("--causal", nargs="+", default=["no", "yes"],
                   choices=["no", "yes"])
    p.add_argument("--methods", nargs="+",
                   default=[m for m in METHODS if m != "flex"],
                   choices=METHODS,
                   help="flex (torch.compile'd FlexAttention, causal and "
                        "window masks as BlockMasks) is not timed by default: "
                        "it compiles per shape")
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--tokens", type=int, default=16384,
                   help="batch = tokens / seqlen")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--warmup-ms", type=float, default=250.0,
                   help="run each method at least this long before timing it")
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--rounds", type=int, default=1,
                   help="interleaved repetitions of every method on each "
                        "shape, each after its own warm-up: the table gives "
                        "their median and the range of ours over the others "
                        "(short sequences swing by a third between "
                        "repetitions: use 3 or more for a number to report)")
    p.add_argument("--rotate", type=int, default=3,
                   help="input sets cycled through (defeats L2 reuse)")
    p.add_argument("--naive-max-gib", type=float, default=16.0)
    p.add_argument("--window", type=int, default=0,
                   help="sliding window: each query sees itself and the W "
                        "keys before it (window_size (W, 0), causal); 0 = "
                        "none. Methods without windows read n/a")
    p.add_argument("--backward", action="store_true",
                   help="time the backward pass (2.5x the forward FLOPs)")
    p.add_argument("--decode", action="store_true",
                   help="time one decoding step over a KV cache "
                        "(flashfuse.attention_with_kvcache against SDPA) on "
                        "ANCHORS.md's decode shapes, in GB/s of K and V")
    p.add_argument("--decode-layouts", nargs="+", type=int,
                   default=list(DECODE_LAYOUTS),
                   help="cache layouts: 0 = contiguous, else page sizes")
    p.add_argument("--decode-methods", nargs="+",
                   default=list(DECODE_METHODS),
                   choices=(DECODE_METHODS + DECODE_GRAPH_METHODS
                            + DECODE_TUNING_METHODS + DECODE_ALIBI_METHODS
                            + DECODE_POOL_METHODS))
    p.add_argument("--decode-shapes", nargs="+", type=_decode_shape,
                   default=list(DECODE_SHAPES), metavar="B/HKV/L",
                   help="batch / kv heads / cache length of each shape "
                        "(default: ANCHORS.md's and B = 1 at 512 keys)")
    p.add_argument("--decode-heads-q", type=int, default=32)
    p.add_argument("--decode-head-dim", type=int, default=128)
    p.add_argument("--decode-sq", type=int, default=1,
                   help="query rows a sequence: 1 decodes; hundreds time "
                        "chunked prefill (bottom-right causal), reported "
                        "in TFLOP/s")
    p.add_argument("--decode-cold", action="store_true",
                   help="time each decode step over caches not in L2: "
                        "steps cycle through enough input sets that their "
                        "caches are 4x the L2 (small caches otherwise "
                        "stay there from step to step)")
    p.add_argument("--decode-rounds", type=int, default=3,
                   help="interleaved repetitions of every method (median)")
    p.add_argument("--varlen", action="store_true",
                   help="a packed batch of variable-length sequences "
                        "(flashfuse.varlen_attention) against the dense "
                        "forward on equal lengths of the same total tokens "
                        "(causal unless --causal no; the first of --dtypes)")
    p.add_argument("--varlen-seqs", type=int, default=16)
    p.add_argument("--varlen-min", type=int, default=128)
    p.add_argument("--varlen-max", type=int, default=4096)
    p.add_argument("--varlen-seed", type=int, default=15,
                   help="the default draws 31660 tokens, 175..4081 a "
                        "sequence")
    p.add_argument("--varlen-heads", type=int, default=16)
    p.add_argument("--varlen-head-dim", type=int, default=128)
    p.add_argument("--varlen-rounds", type=int, default=3,
                   help="interleaved repetitions of both methods (median)")
    p.add_argument("--varlen-backward", action="store_true",
                   help="with --varlen: time a training step (forward and "
                        "backward, 3.5x the forward's FLOPs) on both sides")
    p.add_argument("--ring", action="store_true",
                   help="ring attention (flashfuse.distributed) across the "
                        "GPUs of this machine against one GPU: tokens/s, "
                        "scaling efficiency, communication overlap "
                        "(causal unless --causal no)")
    p.add_argument("--ring-gpus", type=int, default=0,
                   help="GPUs in the ring (default: all)")
    p.add_argument("--ring-seqlens", nargs="+", type=int,
                   default=[32768, 131072])
    p.add_argument("--ring-batch", type=int, default=1)
    p.add_argument("--ring-heads", type=int, default=32)
    p.add_argument("--ring-heads-kv", type=int, default=32)
    p.add_argument("--ring-head-dim", type=int, default=128)
    p.add_argument("--ring-normal-priority", action="store_true",
                   help="NCCL on normal-priority streams (default: high, "
                        "docs/RING.md)")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--png", help="plot TFLOP/s vs sequence length here")
    args = p.parse_args(argv)
    args.causal = [c == "yes" for c in args.causal]
    if args.window < 0:
        p.error("--window must be >= 0")
    if args.rounds < 1:
        p.error("--rounds must be >= 1")
    if args.head_dim_v is not None and not (
            0 < args.head_dim_v <= min(args.head_dims)):
        p.error(f"--head-dim-v must be positive and at most every D, got "
                f"{args.head_dim_v} with --head-dims {args.head_dims}")
    if args.window:  # a sliding window is causal
        args.causal = [True]
    if args.decode:
        uneven = [f"{b}/{hkv}/{length}" for b, hkv, length in args.decode_shapes
                  if args.decode_heads_q % hkv]
        if args.decode_heads_q < 1 or uneven:
            p.error(f"--decode-heads-q ({args.decode_heads_q}) must be a "
                    f"positive multiple of every shape's kv heads; not of "
                    f"{', '.join(uneven) or 'any'}")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if not torch.cuda.is_available():
        print("flashfuse.bench: no CUDA GPU available", file=sys.stderr)
        return 2
    if args.ring:
        from . import bench_ring
        cfg, rows = bench_ring.run_ring(args)
        print(bench_ring.table(cfg, rows))
        if args.json:
            bench_report.write_json(args.json, {
                "device": torch.cuda.get_device_name(),
                "torch": torch.__version__, **cfg}, rows)
        return 0
    if args.varlen:
        from . import bench_varlen
        cfg, rows = bench_varlen.run_varlen(args, time_ms,
                                            _DTYPES[args.dtypes[0]])
        print(bench_varlen.table(cfg, rows))
        if args.json:
            bench_report.write_json(args.json, {
                "device": torch.cuda.get_device_name(),
                "torch": torch.__version__, **cfg}, rows)
        return 0
    if args.decode:
        # One dtype: bf16 unless --dtypes names another first.
        if args.dtypes == ["bf16", "fp16"]:
            args.dtypes = ["bf16"]
        rows = run_decode(args)
        meta = {"device": torch.cuda.get_device_name(),
                "torch": torch.__version__, "warmup": args.warmup,
                "warmup_ms": args.warmup_ms, "reps": args.reps,
                "rounds": args.decode_rounds,
                "gbps": "2*B*Hkv*L*D*2 bytes of K and V per step"}
        print(bench_report.decode_table(rows, args.decode_methods))
        if args.json:
            bench_report.write_json(args.json, meta, rows)
        return 0
    runners = _runners(args.window)
    todo = list(configs(args))
    try:
        from tqdm import tqdm
        todo_iter = tqdm(todo, desc="configs", file=sys.stderr)
    except ImportError:
        todo_iter = todo
    # A throwaway shape first: the first shape a process times reads low
    # (the clock and the caches of a fresh process).
    if todo:
        bench_config(todo[0], argparse.Namespace(**{**vars(args),
                                                     "rounds": 1}), runners)
    rows = []
    for c in todo_iter:
        rows.extend(bench_config(c, args, runners))
    meta = {"device": torch.cuda.get_device_name(),
            "torch": torch.__version__, "warmup": args.warmup,
            "warmup_ms": args.warmup_ms,
            "reps": args.reps, "rotate": args.rotate,
            "rounds": args.rounds,
            "window": args.window,
            "flops": "2*B*H*(D+Dv)*(visible query-key pairs: S*S, halved "
                     "if causal, exact with a window)"
                     + (", backward 2*B*H*(3D+2Dv)*pairs" if args.backward
                        else "")}
    pass_name = "backward" if args.backward else "forward"
    print(bench_report.table(rows, args.methods, pass_name))
    if args.json:
        bench_report.write_json(args.json, meta, rows)
    if args.png:
        bench_report.plot(args.png, meta, rows, args.methods, pass_name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
