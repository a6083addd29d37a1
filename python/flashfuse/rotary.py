"""Rotary position embedding of a KV-cache step (flash-attn's `rotary_cos`,
`rotary_sin` and `rotary_interleaved` of flash_attn_with_kvcache):
flashfuse.attention_with_kvcache(..., rotary_cos=..., rotary_sin=...) comes
here before its kernels run.

The rotation is docs/KVCACHE.md "Rotary", the op's: with r = rotary_dim /
2, each pair (x0, x1) of a row, (x[e], x[e + r]) (GPT-NeoX halves) or
(x[2e], x[2e + 1]) (rotary_interleaved, GPT-J), becomes

    (x0 * cos[p, e] - x1 * sin[p, e],  x1 * cos[p, e] + x0 * sin[p, e])

in f32, rounded back to the row's dtype; elements from 2r on are kept. The
new keys' row t sits at position p = cache_seqlens[b] + t (the cache row
it is written to); the query's row i at cache_seqlens[b] + i when causal or
windowed, else every row at cache_seqlens[b] (flash-attn's positions; the
padding rows of a left-padded cache count). Positions are clamped into
[0, R). An eager step runs the rotating kv_append flash-lower-to-gpu
builds for the op (compiled on first use, launched by name with
append_args: the new keys rotated into the cache, q into q_rot), then the
usual decode over q_rot; under torch.compile the rotation is rotate_step's
two elementwise passes (which the compiler may fuse) ahead of the usual
append and decode ops. The runtime's flashfuse_kvcache_append takes no
rotary operands.
"""

import threading

import torch


def check_pair(cos, sin, k_new, name):
    """cos and sin come together, and with k_new."""
    if (cos is None) != (sin is None):
        raise ValueError(f"{name}: rotary_cos and rotary_sin must be given "
                         "together")
    if k_new is None:
        raise ValueError(f"{name}: rotary embedding needs k_new and v_new: it "
                         "rotates the new keys as they are appended (the "
                         "cached ones were rotated when they were)")


def check_tables(cos, sin, q, capacity, name):
    """rotary_dim / 2 after checking cos and sin ([R, rotary_dim / 2] in
    q's dtype, on q's device, R >= the cache's `capacity`) against a
    checked q [B, Sq, Hq, D]."""
    for arg, t in (("rotary_cos", cos), ("rotary_sin", sin)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: {arg} must be a torch.Tensor, got "
                            f"{type(t).__name__}")
        if t.dim() != 2:
            raise ValueError(f"{name}: {arg} must be [R, rotary_dim / 2], got "
                             f"shape {tuple(t.shape)}")
        if t.dtype != q.dtype:
            raise TypeError(f"{name}: {arg} must have q's dtype {q.dtype}, "
                            f"got {t.dtype}")
        if t.device != q.device:
            raise ValueError(f"{name}: {arg} is on {t.device}, q on "
                             f"{q.device}")
    if sin.shape != cos.shape:
        raise ValueError(f"{name}: rotary_sin has shape {tuple(sin.shape)}, "
                         f"rotary_cos {tuple(cos.shape)}; they must match")
    pairs = cos.shape[1]
    if pairs == 0 or 2 * pairs > q.shape[-1]:
        raise ValueError(f"{name}: rotary_dim = {2 * pairs} (twice "
                         f"rotary_cos.shape[1]) must be in [2, D = "
                         f"{q.shape[-1]}]")
    if cos.shape[0] == 0:
        raise ValueError(f"{name}: rotary_cos must hold at least one "
                         "position (positions are clamped into [0, R))")
    if cos.shape[0] < capacity:
        raise ValueError(f"{name}: rotary_cos has {cos.shape[0]} positions "
                         f"but the cache holds {capacity} rows: every row a "
                         "new key can take needs one")
    return pairs


def rotate(x, cos, sin, positions, interleaved):
    """x [B, S, H, D] with each row's first 2r elements rotated at
    positions [B, S] (any integers; clamped into [0, R)): a new tensor."""
    pairs = cos.shape[1]
    positions = positions.to(torch.long).clamp(0, cos.shape[0] - 1)
    c = cos[positions].float().unsqueeze(2)  # [B, S, 1, r]
    n = sin[positions].float().unsqueeze(2)
    head = x[..., :2 * pairs].float()
    if interleaved:
        x0, x1 = head[..., 0::2], head[..., 1::2]
    else:
        x0, x1 = head[..., :pairs], head[..., pairs:]
    # Two products and their difference (sum), each rounded to f32, as the
    # op defines them (no fused multiply-add).
    y0 = torch.sub(torch.mul(x0, c), torch.mul(x1, n))
    y1 = torch.add(torch.mul(x1, c), torch.mul(x0, n))
    if interleaved:
        y = torch.stack((y0, y1), dim=-1).flatten(-2)
    else:
        y = torch.cat((y0, y1), dim=-1)
    out = x.clone()
    out[..., :2 * pairs] = y.to(x.dtype)
    return out


def rotate_step(q, k_new, cos, sin, cache_seqlens, interleaved,
                query_rows_apart):
    """(q, k_new) rotated at their positions (module docstring);
    cache_seqlens an int or an integer tensor [B]."""
    b, sq, snew = q.shape[0], q.shape[1], k_new.shape[1]
    if isinstance(cache_seqlens, int):
        start = torch.full((b, 1), cache_seqlens, dtype=torch.long,
                           device=q.device)
    else:
        start = cache_seqlens.to(device=q.device, dtype=torch.long).view(b, 1)
    k_pos = start + torch.arange(snew, device=q.device).view(1, snew)
    q_pos = (start + torch.arange(sq, device=q.device).view(1, sq)
             if query_rows_apart else start.expand(b, sq))
    return (rotate(q, cos, sin, q_pos, interleaved),
            rotate(k_new, cos, sin, k_pos, interleaved))


# (KVCacheVariant, device index) -> (artifact directory, kernel name): the
# compile cache's lookup hashes the IR, more host time than a step spares.
_appends = {}
_lock = threading.Lock()
_DTYPE_NAMES = {torch.float16: "f16", torch.bfloat16: "bf16"}


def append_variant(q, k_cache, v_cache, block_table, fp8, pairs,
                   interleaved, causal, windowed, pool=False):
    """The KVCacheVariant whose compile holds the rotating kv_append of a
    step (its decode kernel is not used: the step's comes from the library
    or its own compile); `pool`: the caches are a pool of sequences'
    (cache_batch_idx)."""
    from . import variants
    d, dv = q.shape[-1], v_cache.shape[-1]
    page = k_cache.shape[1] if block_table is not None else 0
    name = (f"rotary_{_DTYPE_NAMES[q.dtype]}_d{d}_dv{dv}_r{2 * pairs}"
            f"{'i' if interleaved else ''}{'_causal' if causal else ''}"
            f"{'_window' if windowed else ''}_p{page}{'_fp8' if fp8 else ''}"
            f"{'_pool' if pool else ''}")
    return variants.KVCacheVariant(
        name, _DTYPE_NAMES[q.dtype], d, dv,
        causal="bottom_right" if causal else None,
        window=(0, 0) if windowed else None, page_size=page,
        kv_dtype="e4m3" if fp8 else "", rotary_dim=2 * pairs,
        rotary_interleaved=interleaved, batch_idx=pool)


def append_kernel(variant, device):
    """(artifact directory, kernel name) of `variant`'s rotating kv_append
    for the GPU of `device`, compiled on first use; KernelNotFoundError
    where nothing can compile it."""
    from . import _compile
    from . import _runtime as rt
    from .errors import KernelNotFoundError
    key = (variant, device.index)
    with _lock:
        found = _appends.get(key)
    if found is not None:
        return found
    try:
        directory = _compile.compile_variant(
            variant, torch.cuda.get_device_capability(device))
    except _compile.Unavailable as e:
        raise KernelNotFoundError(
            f"flashfuse.attention_with_kvcache: the rotary kv_append is "
            f"compiled on first use, and cannot be here: {e}",
            "FLASHFUSE_ERROR_KERNEL_NOT_FOUND") from None
    m = rt.Manifest.open(directory)
    names = [i.name.decode() for i in m.kernels()]
    rotating = [n for i, n in enumerate(names)
                if any(p == "q_rot" for _, p in m.params(i))]
    if len(rotating) != 1:
        raise KernelNotFoundError(
            f"flashfuse.attention_with_kvcache: {directory} has "
            f"{len(rotating)} rotating kv_append kernels",
            "FLASHFUSE_ERROR_KERNEL_NOT_FOUND")
    found = (directory, rotating[0])
    with _lock:
        _appends[key] = found
    return found


def append_args(q, q_rot, k_cache, v_cache, k_new, v_new, lengths,
                block_table, k_descale, v_descale, cos, sin,
                cache_batch_idx=None):
    """The named arguments of a rotating kv_append (docs/KERNEL_ABI.md
    "Decode"): q, q_rot, k_new, v_new [B, S, H, D], caches [B, C, Hkv, D]
    (a pool [Bc, C, Hkv, D] with cache_batch_idx i32 [B]) or pages
    [num_pages, page_size, Hkv, D], lengths i32 [B], FP8 caches (passed as
    bytes) with their descales ([] / [1] or [B, Hkv])."""
    from . import _runtime as rt
    from .ops import _span
    named = {}

    def memref(name, t):
        named[name] = (rt.PARAM_MEMREF, (t.data_ptr(), _span(t)))

    fp8 = k_descale is not None
    k = k_cache.view(torch.uint8) if fp8 else k_cache
    v = v_cache.view(torch.uint8) if fp8 else v_cache
    for name, t in (("k", k), ("v", v), ("k_new", k_new), ("v_new", v_new),
                    ("cache_seqlens", lengths), ("q", q), ("q_rot", q_rot),
                    ("rotary_cos", cos), ("rotary_sin", sin)):
        memref(name, t)
        if t.dim() == 4:  # [b, s, h, d]: logical b, h, s
            for suffix, axis in zip(("b", "h", "s"), (0, 2, 1)):
                named[f"{name}_stride_{suffix}"] = (rt.PARAM_I64,
                                                    t.stride(axis))
    b, sq, hq, _ = q.shape
    capacity = (block_table.shape[1] * k_cache.shape[1]
                if block_table is not None else k_cache.shape[1])
    for name, size in (("batch", b), ("heads_kv", k_cache.shape[2]),
                       ("seq_k", capacity), ("seq_new", k_new.shape[1]),
                       ("heads_q", hq), ("seq_q", sq),
                       ("seq_rotary", cos.shape[0])):
        named[name] = (rt.PARAM_I32, size)
    if block_table is not None:
        memref("block_table", block_table)
        named["num_pages"] = (rt.PARAM_I32, k_cache.shape[0])
        named["block_table_stride"] = (rt.PARAM_I64, block_table.stride(0))
    if cache_batch_idx is not None:
        memref("cache_batch_idx", cache_batch_idx)
        named["cache_batch"] = (rt.PARAM_I32, k_cache.shape[0])
    if fp8:
        for t, d in (("k", k_descale), ("v", v_descale)):
            memref(f"{t}_descale", d)
            per_tensor = d.dim() == 0 or (d.dim() == 1 and d.numel() == 1)
            named[f"{t}_descale_stride_b"] = (
                rt.PARAM_I64, 0 if per_tensor else d.stride(0))
            named[f"{t}_descale_stride_h"] = (
                rt.PARAM_I64, 0 if per_tensor else d.stride(1))
    return named


def fused_append(q, k_cache, v_cache, k_new, v_new, lengths, block_table,
                 k_descale, v_descale, cos, sin, interleaved, causal,
                 windowed, cache_batch_idx=None):
    """Runs the rotating kv_append: the new keys rotated into the caches
    (quantised into an FP8 one), the new values copied, and q rotated into
    the returned q_rot, on q's current stream; the query's rows at their
    own positions when `causal` or `windowed`. Tables, indices and rows
    16-byte aligned with contiguous last dims (the caller's copies)."""
    from . import _kernels
    from . import _runtime as rt
    variant = append_variant(q, k_cache, v_cache, block_table,
                             k_descale is not None, cos.shape[1],
                             interleaved, causal, windowed,
                             cache_batch_idx is not None)
    directory, name = append_kernel(variant, q.device)
    q_rot = torch.empty_like(q)
    named = append_args(q, q_rot, k_cache, v_cache, k_new, v_new, lengths,
                        block_table, k_descale, v_descale, cos, sin,
                        cache_batch_idx)
    handle = _kernels.context(q.device.index).kernel_named(directory, name)
    with torch.cuda.device(q.device):
        rt.kernel_launch(handle, named,
                         torch.cuda.current_stream(q.device).cuda_stream,
                         allow_unused=False)
    return q_rot
