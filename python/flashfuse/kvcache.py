"""flashfuse.attention_with_kvcache: attention of new queries over a KV cache
(decode), in the spirit of flash-attn's flash_attn_with_kvcache."""

import math

import torch

from . import alibi, rotary
from . import fp8 as fp8_mod
from . import _kvcache_ops as kvops
from . import _kvcache_prefill as prefill
from . import ops  # registers torch.ops.flashfuse.*
from ._env import EnvFlag

# Set to 1 to run the device-side check of the lengths and the page table
# (check_inputs=True) on every call: a debug switch for a whole program.
CHECK_ENV = "FLASHFUSE_CHECK_KVCACHE"
_check_env = EnvFlag(CHECK_ENV)

# A paged cache's page size is compiled into its kernel; page sizes are
# powers of two up to this many rows (vLLM 16, FlashInfer 1-16, flash-attn
# 256). A larger "page" is far more likely a contiguous cache [B, Smax, Hkv,
# D] passed together with a block_table, which would read it as B pages.
MAX_PAGE_SIZE = 1024

_NAME = "flashfuse.attention_with_kvcache"


def _tensor(name, t, dims):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{_NAME}: {name} must be a torch.Tensor, got "
                        f"{type(t).__name__}")
    if t.dim() != len(dims):
        raise ValueError(f"{_NAME}: {name} must be [{', '.join(dims)}], got "
                         f"shape {tuple(t.shape)}")


def _check_cache_dtypes(q, k_cache, v_cache):
    """The caches share q's dtype, or are both float8_e4m3fn (an FP8 cache,
    docs/KVCACHE.md "FP8 cache"); returns whether they are FP8."""
    fp8 = [fp8_mod.is_fp8(t) for t in (k_cache, v_cache)]
    if not any(fp8):
        _check_half("k_cache", k_cache, q.dtype)
        _check_half("v_cache", v_cache, q.dtype)
        return False
    for name, t in (("k_cache", k_cache), ("v_cache", v_cache)):
        if fp8_mod.E5M2 is not None and t.dtype == fp8_mod.E5M2:
            raise TypeError(f"{_NAME}: {name} is float8_e5m2; an FP8 cache "
                            "is float8_e4m3fn (docs/KVCACHE.md)")
    if not all(fp8):
        raise TypeError(f"{_NAME}: k_cache is {k_cache.dtype} and v_cache "
                        f"{v_cache.dtype}; the caches are both "
                        "float8_e4m3fn or both q's dtype")
    return True


def _check_cache_descales(k_descale, v_descale, fp8, b, hkv):
    """flash-attn 3's k_descale / v_descale: f32, [] or [1] (per tensor) or
    [B, Hkv] (per kv head), both given exactly with an FP8 cache; values
    the host can see (CPU tensors) must be positive and finite. Returns
    them as ((tensor, (stride_b, stride_h)), ...) for the launch."""
    given = [n for n, t in (("k_descale", k_descale),
                            ("v_descale", v_descale)) if t is not None]
    if not fp8:
        if given:
            raise ValueError(f"{_NAME}: {' and '.join(given)} are for a "
                             "float8_e4m3fn cache; these caches are 16-bit")
        return None
    if len(given) != 2:
        missing = [n for n in ("k_descale", "v_descale") if n not in given]
        raise ValueError(f"{_NAME}: a float8_e4m3fn cache needs k_descale "
                         "and v_descale (f32, per tensor or [B, Hkv]); "
                         f"missing {', '.join(missing)}. "
                         "flashfuse.fp8.quantize_kv_cache returns them")
    out = []
    for name, t in (("k_descale", k_descale), ("v_descale", v_descale)):
        expected = (f"a float32 tensor of shape [], [1] or [B, Hkv] = "
                    f"[{b}, {hkv}]")
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{_NAME}: {name} must be {expected}; got "
                            f"{type(t).__name__}")
        if t.dtype != torch.float32:
            raise TypeError(f"{_NAME}: {name} must be {expected}; got "
                            f"{t.dtype}")
        shape = tuple(t.shape)
        if shape not in ((), (1,), (b, hkv)):
            raise ValueError(f"{_NAME}: {name} must be {expected}; got "
                             f"shape {list(shape)}")
        # A CUDA tensor's values would cost a synchronisation to read: the
        # caller's promise there, as for the lengths (check_inputs does not
        # cover the descales either).
        if t.device.type == "cpu" and t.numel():
            bad = ~(torch.isfinite(t) & (t > 0))
            if bool(bad.any()):
                where = tuple(int(i) for i in bad.nonzero()[0])
                raise ValueError(
                    f"{_NAME}: {name} must be positive and finite, got "
                    f"{float(t[where] if where else t)} at {list(where)}")
        out.append((t, (0, 0) if shape in ((), (1,))
                    else (t.stride(0), t.stride(1))))
    return tuple(out)


def _check_half(name, t, dtype):
    if t.dtype not in (torch.float16, torch.bfloat16):
        raise TypeError(f"{_NAME} supports float16 and bfloat16; {name} is "
                        f"{t.dtype}")
    if dtype is not None and t.dtype != dtype:
        raise TypeError(f"{_NAME}: {name} is {t.dtype} but q is {dtype}; "
                        "q, the caches and k_new/v_new share one dtype")


def _check_per_sequence(name, t, b):
    """An int32 [B] tensor of one value a sequence (the lengths, the
    paddings)."""
    if t.dtype != torch.int32:
        raise TypeError(f"{_NAME}: {name} must be int32, got {t.dtype}")
    if t.shape != (b,):
        raise ValueError(f"{_NAME}: {name} must be [B={b}], got "
                         f"{tuple(t.shape)}")


def _readable_in_place(name, t):
    """The caches are read and written where they are: a copy would cost
    the whole cache per step, so a layout the kernels cannot read is an
    error, not a silent copy. Strides only: data pointers do not exist
    while torch.compile traces, and the runtime checks the base address."""
    elem = t.element_size()
    if t.stride(-1) != 1 and t.shape[-1] > 1:
        raise ValueError(f"{_NAME}: {name} must be contiguous in its last "
                         f"(head) dimension, got strides {tuple(t.stride())}")
    if any(n > 1 and (s * elem) % 16 for n, s in
           zip(t.shape[:-1], t.stride()[:-1])):
        raise ValueError(f"{_NAME}: {name}'s rows must start on 16-byte "
                         f"boundaries (strides {tuple(t.stride())}, "
                         f"{elem}-byte elements); the cache is not copied")


def _check(q, k_cache, v_cache, cache_seqlens, k_new, v_new, block_table,
           window_size, softcap, k_descale=None, v_descale=None,
           cache_leftpad=None, cache_batch_idx=None):
    """Every check that needs no GPU and no host synchronisation (but the
    values of CPU descales); returns (capacity, Snew, the descales as
    _check_cache_descales gives them, None for a 16-bit cache)."""
    _tensor("q", q, ("B", "Sq", "Hq", "D"))
    paged = block_table is not None
    pool = cache_batch_idx is not None
    cache_dims = (("num_pages", "page_size", "Hkv", "D") if paged
                  else ("Bc", "Smax", "Hkv", "D") if pool
                  else ("B", "Smax", "Hkv", "D"))
    _tensor("k_cache", k_cache, cache_dims)
    _tensor("v_cache", v_cache, cache_dims[:3] + ("Dv",))
    if fp8_mod.is_fp8(q):
        raise TypeError(f"{_NAME}: q is {q.dtype}; with an FP8 cache q "
                        "stays float16 or bfloat16 (FP8 q is "
                        "flashfuse.attention's)")
    _check_half("q", q, None)
    fp8 = _check_cache_dtypes(q, k_cache, v_cache)
    b, sq, hq, d = q.shape
    if 0 in q.shape:
        raise ValueError(f"{_NAME} does not take an empty q, got shape "
                         f"{tuple(q.shape)}")
    if k_cache.shape[:3] != v_cache.shape[:3] or k_cache.shape[3] != d:
        raise ValueError(
            f"{_NAME}: mismatched shapes: q {tuple(q.shape)}, k_cache "
            f"{tuple(k_cache.shape)}, v_cache {tuple(v_cache.shape)} (the "
            "caches need equal leading dims, and k_cache q's head dim)")
    if v_cache.shape[3] != d:
        # flash-select-config's decode recipe: D = Dv only.
        raise ValueError(
            f"{_NAME}: the decode kernels need v_cache's head dim equal to "
            f"q's, got D = {d}, Dv = {v_cache.shape[3]} (D != Dv, such as "
            "MLA's 192 / 128, runs on flashfuse.attention over the cache's "
            "rows)")
    hkv = k_cache.shape[2]
    if hkv == 0 or hq % hkv:
        raise ValueError(f"{_NAME}: q's heads ({hq}) must be a multiple of "
                         f"the caches' heads ({hkv})")
    descales = _check_cache_descales(k_descale, v_descale, fp8, b, hkv)
    if pool:
        if not isinstance(cache_batch_idx, torch.Tensor):
            raise TypeError(f"{_NAME}: cache_batch_idx must be an int32 "
                            "tensor [B] or None, got "
                            f"{type(cache_batch_idx).__name__}")
        _check_per_sequence("cache_batch_idx", cache_batch_idx, b)
        if paged:
            raise ValueError(
                f"{_NAME}: cache_batch_idx is for a contiguous cache "
                "[Bc, Smax, Hkv, D] (a pool of sequences' rows); a paged "
                "cache names each sequence's pages through its block_table")
    if paged:
        if not isinstance(block_table, torch.Tensor):
            raise TypeError(f"{_NAME}: block_table must be a torch.Tensor "
                            f"or None, got {type(block_table).__name__}")
        if block_table.dtype != torch.int32:
            raise TypeError(f"{_NAME}: block_table must be int32, got "
                            f"{block_table.dtype}")
        if block_table.dim() != 2 or block_table.shape[0] != b:
            raise ValueError(f"{_NAME}: block_table must be [B={b}, "
                             f"max_pages], got {tuple(block_table.shape)}")
        page = k_cache.shape[1]
        if page > MAX_PAGE_SIZE or page & (page - 1):
            raise ValueError(
                f"{_NAME}: with a block_table the caches are paged "
                f"[num_pages, page_size, Hkv, D]; page_size {page} is not a "
                f"power of two <= {MAX_PAGE_SIZE} (a contiguous cache "
                "[B, Smax, Hkv, D] takes block_table=None)")
        if k_cache.shape[0] == 0 or block_table.shape[1] == 0:
            raise ValueError(f"{_NAME}: the paged cache has no pages")
        capacity = block_table.shape[1] * page
    else:
        if pool and k_cache.shape[0] == 0:
            raise ValueError(f"{_NAME}: the pool of caches is empty (Bc = 0)")
        if not pool and k_cache.shape[0] != b:
            raise ValueError(f"{_NAME}: k_cache has batch {k_cache.shape[0]}"
                             f" but q has {b} (a paged cache needs its "
                             "block_table, a pool of sequences its "
                             "cache_batch_idx)")
        capacity = k_cache.shape[1]
        if capacity == 0:
            raise ValueError(f"{_NAME}: the cache has no rows (Smax = 0)")
    if sq > capacity:
        raise ValueError(f"{_NAME}: q has Sq = {sq} rows but the cache holds"
                         f" at most {capacity}")
    if (k_new is None) != (v_new is None):
        raise ValueError(f"{_NAME}: k_new and v_new go together; got only "
                         + ("k_new" if v_new is None else "v_new"))
    snew = 0
    if k_new is not None:
        _tensor("k_new", k_new, ("B", "Snew", "Hkv", "D"))
        _tensor("v_new", v_new, ("B", "Snew", "Hkv", "Dv"))
        # New rows come in q's dtype also for an FP8 cache: the append
        # quantises them with 1 / descale (docs/KVCACHE.md).
        _check_half("k_new", k_new, q.dtype)
        _check_half("v_new", v_new, q.dtype)
        snew = k_new.shape[1]
        if (k_new.shape != (b, snew, hkv, d)
                or v_new.shape != (b, snew, hkv, v_cache.shape[3])):
            raise ValueError(
                f"{_NAME}: k_new {tuple(k_new.shape)} and v_new "
                f"{tuple(v_new.shape)} must be [B={b}, Snew, Hkv={hkv}, D="
                f"{d}] and [B, Snew, Hkv, Dv={v_cache.shape[3]}]")
        if snew > capacity:
            raise ValueError(f"{_NAME}: {snew} new rows exceed the cache's "
                             f"capacity {capacity}")
    if isinstance(cache_seqlens, bool) or not isinstance(
            cache_seqlens, (int, torch.Tensor)):
        raise TypeError(f"{_NAME}: cache_seqlens must be an int or an int32 "
                        f"tensor [B], got {type(cache_seqlens).__name__}")
    if isinstance(cache_seqlens, int):
        if cache_seqlens < 0 or cache_seqlens + snew > capacity:
            raise ValueError(
                f"{_NAME}: cache_seqlens = {cache_seqlens} with {snew} new "
                f"rows is outside the cache's capacity [0, {capacity}]")
    else:
        _check_per_sequence("cache_seqlens", cache_seqlens, b)
    if cache_leftpad is not None:
        if not isinstance(cache_leftpad, torch.Tensor):
            raise TypeError(f"{_NAME}: cache_leftpad must be an int32 tensor "
                            f"[B] or None, got {type(cache_leftpad).__name__}")
        _check_per_sequence("cache_leftpad", cache_leftpad, b)
    if (not isinstance(window_size, (tuple, list)) or len(window_size) != 2
            or any(not isinstance(w, int) or w < -1 for w in window_size)):
        raise ValueError(f"{_NAME}: window_size must be (left, right) ints "
                         f">= -1, got {window_size!r}")
    if not (isinstance(softcap, (int, float)) and math.isfinite(softcap)
            and softcap >= 0):
        raise ValueError(f"{_NAME}: softcap must be >= 0 (0 = off), got "
                         f"{softcap!r}")
    # Devices last: every other mistake is reported the same way on
    # machines with and without a GPU.
    tensors = [("q", q), ("k_cache", k_cache), ("v_cache", v_cache),
               ("k_new", k_new), ("v_new", v_new),
               ("block_table", block_table),
               ("cache_seqlens", cache_seqlens
                if isinstance(cache_seqlens, torch.Tensor) else None),
               ("k_descale", k_descale), ("v_descale", v_descale),
               ("cache_leftpad", cache_leftpad),
               ("cache_batch_idx", cache_batch_idx)]
    for name, t in tensors:
        if t is not None and t.device.type != "cuda":
            raise ValueError(
                f"{_NAME} runs on CUDA tensors; {name} is on {t.device}"
                + ("" if torch.cuda.is_available()
                   else " and no CUDA GPU is available"))
    for name, t in tensors:
        if t is not None and t.device != q.device:
            raise ValueError(f"{_NAME}: {name} is on {t.device} but q on "
                             f"{q.device}")
    for name, t in (("k_cache", k_cache), ("v_cache", v_cache)):
        _readable_in_place(name, t)
    return capacity, snew, descales


def check_requested(check_inputs):
    """check_inputs=True, or FLASHFUSE_CHECK_KVCACHE=1 in the environment
    (every call), turns the device-side check on."""
    return bool(check_inputs) or _check_env()


def attention_with_kvcache(q, k_cache, v_cache, cache_seqlens, k_new=None,
                           v_new=None, block_table=None, *,
                           softmax_scale=None, is_causal=True,
                           window_size=(-1, -1), softcap=0.0,
                           return_lse=False, check_inputs=False,
                           num_splits=0, k_descale=None, v_descale=None,
                           cache_leftpad=None, alibi_slopes=None,
                           rotary_cos=None, rotary_sin=None,
                           rotary_interleaved=False, cache_batch_idx=None):
    """Attention of q over a KV cache, like flash-attn's
    flash_attn_with_kvcache, on FlashFuse's decode kernels.

    q [B, Sq, Hq, D] (Sq new query rows per sequence: 1 for decoding, more
    for speculative or chunked steps); the caches either contiguous
    k_cache [B, Smax, Hkv, D] and v_cache [B, Smax, Hkv, Dv], or paged
    [num_pages, page_size, Hkv, D] with block_table i32 [B, max_pages]
    (page p of sequence b holds its rows [p * page_size, (p + 1) *
    page_size)); Hq a multiple of Hkv (GQA/MQA); Dv = D (the decode
    kernels' only pair: ValueError otherwise). cache_seqlens (int, or i32
    tensor [B]): the valid rows of each sequence's cache before this step.
    k_new, v_new [B, Snew, Hkv, D/Dv] (optional, together): written into
    the caches in place at rows [cache_seqlens[b], cache_seqlens[b] + Snew)
    (through the page table when paged) by the kv_append kernel before
    attending, so that sequence b attends to its first
    L_b = cache_seqlens[b] + Snew keys. A new row whose destination is
    outside the cache is not written (never clamped onto another
    sequence's rows).

    cache_leftpad (i32 tensor [B], optional; flash-attn's name): the first
    row of each sequence's cache, for a left-padded batch (Hugging Face's
    padding_side="left", which ends every prompt at the same row): sequence
    b attends to its keys [cache_leftpad[b], L_b) only. Any value is
    valid: a negative one hides nothing, one of L_b or more every key (out
    is 0 there). New rows still go to cache_seqlens[b]. Contiguous and
    paged caches alike (flash-attn takes it for contiguous ones only).

    is_causal aligns the causal mask to the bottom right of each sequence
    (query i sees keys j <= i + L_b - Sq), as flash-attn does;
    window_size=(left, right) keeps keys within that distance of the same
    diagonal (-1 = unbounded); softcap > 0 applies softcap * tanh(s /
    softcap). num_splits, as in flash-attn: 0 lets the runtime choose how
    many blocks share each sequence's keys (runtime/include/flashfuse/
    decode_splits.h), n >= 1 forces n (and keeps the step on the decode
    kernels). A step of many query rows (G * Sq >= 256, G = Hq / Hkv:
    chunked prefill, a prompt over a cached prefix) over a contiguous
    16-bit cache runs on the varlen forward kernels instead, which read
    the cache in place (a paged one is gathered first, from 512 rows;
    flashfuse._kvcache_prefill, docs/KVCACHE.md "Many query rows"): same
    semantics; a pool, left padding, ALiBi or an FP8 cache keep a step on
    the decode kernels. Returns out [B, Sq, Hq, Dv] and,
    with return_lse, also the
    f32 log-sum-exp [B, Hq, Sq] (+inf for a row that sees no key, whose out
    is 0). Nothing is copied: q, the caches and the output are passed to
    the kernel with their strides.

    Shapes, dtypes, devices and lengths known on the host are checked
    before anything runs (ValueError/TypeError). Lengths and the page table
    stay on the GPU: with check_inputs=True, or with the environment
    variable FLASHFUSE_CHECK_KVCACHE=1 (every call), the decode_check
    kernel validates them there before anything is written, and a negative
    length, L_b beyond the cache's capacity or a page index outside
    [0, num_pages) among a sequence's pages [0, ceil(L_b / page_size))
    raises flashfuse.errors.InvalidArgumentError (a ValueError) naming the
    first offending sequence, e.g. "cache_seqlens[3] = 5000 plus 1 new rows
    exceeds the cache capacity 4096". The check reads 16 bytes back, so it
    synchronises the stream: a debug option. Unchecked, such input gives a
    wrong answer, never an out-of-bounds access.

    FP8 cache (flash-attn 3's names; docs/KVCACHE.md "FP8 cache"): k_cache
    and v_cache both torch.float8_e4m3fn with k_descale and v_descale, f32
    of shape [] / [1] (per tensor) or [B, Hkv] (per kv head), so that
    K = k_descale[b, h] * float(k_cache) (V likewise); q, k_new, v_new and
    out stay float16 or bfloat16.
    flashfuse.fp8.quantize_kv_cache makes such a cache from a 16-bit one.
    The arguments are checked (descales missing, given for a 16-bit cache,
    of the wrong dtype or shape, or, when on the CPU, not positive and
    finite). k_new/v_new (q's dtype) are quantised into the cache as
    e4m3(clamp(float(x) * (1 / descale), -448, 448)), rounded to nearest
    even, with the f32 reciprocal of their (b, h) descale, so the step
    attends to the quantised new rows like every older one (bit-identical
    to the CPU lowerings' codes). The FP8-cache kernels need an sm_89+ GPU
    (L4, H100, H200); the kernel library holds them for h100/h200 and they
    are compiled on demand like any other variant.

    `alibi_slopes` (flash-attn's argument): f32 [Hq] or [B, Hq] on q's
    device (flashfuse.alibi_slopes(Hq) gives the ALiBi paper's); query row
    i of head h in sequence b then adds -slope * |i + L_b - Sq - j| to key
    j's score (flash-attn's bias: the distance from each sequence's own
    bottom-right diagonal, causal or not), over 16-bit and FP8 caches
    alike. The ALiBi decode kernels are compiled on demand.

    `rotary_cos`, `rotary_sin` (flash-attn's arguments, together, with
    k_new): [R, rotary_dim / 2] in q's dtype, R at least the cache's
    capacity; k_new's row t is rotated at position cache_seqlens[b] + t
    before it is appended, q's row i at cache_seqlens[b] + i when causal
    or windowed, else at cache_seqlens[b]; `rotary_interleaved` pairs
    elements (2e, 2e + 1) (GPT-J) instead of (e, e + rotary_dim / 2)
    (GPT-NeoX). flashfuse.rotary has the details.

    `cache_batch_idx` (flash-attn's argument): i32 [B] on q's device; the
    contiguous caches are then a pool k_cache [Bc, Smax, Hkv, D] (v_cache
    likewise) of Bc sequences' rows, Bc any size, and sequence b attends
    to, and appends k_new into, pool row cache_batch_idx[b]; its length,
    padding, slopes and descales are still the batch's row b (rotary
    positions too: cache_seqlens[b] + t). Not with a block_table (a paged
    cache names its pages). An index outside [0, Bc), or one row named
    twice while appending, is outside the contract: the decode clamps the
    index into the pool and the append skips its rows (never a write
    outside the pool); check_inputs=True reports both ("cache_batch_idx[1]
    = 9 is outside the pool [0, 8)", "cache_batch_idx[2] = 4 is also
    cache_batch_idx[0]: ..."). Its kernels are compiled on demand.
    """
    # Scalars first, then the tensors (whose device is checked last).
    if isinstance(num_splits, bool) or not isinstance(num_splits, int) \
            or num_splits < 0:
        raise ValueError(f"{_NAME}: num_splits must be an int >= 0 (0 = "
                         f"automatic), got {num_splits!r}")
    if not isinstance(is_causal, bool):
        raise ValueError(f"{_NAME}: is_causal must be a bool, got "
                         f"{is_causal!r}")
    if softmax_scale is not None and not math.isfinite(float(softmax_scale)):
        raise ValueError(f"{_NAME}: softmax_scale must be finite, got "
                         f"{softmax_scale!r}")
    if rotary_cos is not None or rotary_sin is not None:
        if not isinstance(rotary_interleaved, bool):
            raise ValueError(f"{_NAME}: rotary_interleaved must be a bool, "
                             f"got {rotary_interleaved!r}")
        rotary.check_pair(rotary_cos, rotary_sin, k_new, _NAME)
        if not torch.compiler.is_compiling():
            return _fused_rotary_step(
                q, k_cache, v_cache, cache_seqlens, k_new, v_new,
                block_table, softmax_scale, is_causal, window_size, softcap,
                return_lse, check_inputs, num_splits, k_descale, v_descale,
                cache_leftpad, alibi_slopes, rotary_cos, rotary_sin,
                rotary_interleaved, cache_batch_idx)
        # Under torch.compile: two elementwise passes the compiler can fuse,
        # then the append and decode ops (q, the caches and k_new checked
        # before the tables are read against them, and again, rotated, below).
        capacity, _, _ = _check(q, k_cache, v_cache, cache_seqlens, k_new,
                                v_new, block_table, window_size, softcap,
                                k_descale, v_descale, cache_leftpad,
                                cache_batch_idx)
        rotary.check_tables(rotary_cos, rotary_sin, q, capacity, _NAME)
        windowed = tuple(window_size) != (-1, -1)
        q, k_new = rotary.rotate_step(
            q, k_new, rotary_cos, rotary_sin, cache_seqlens,
            rotary_interleaved, is_causal or windowed)
    elif rotary_interleaved:
        raise ValueError(f"{_NAME}: rotary_interleaved needs rotary_cos and "
                         "rotary_sin")
    # Eager steps call the launches directly: the dispatcher's checks of a
    # custom op (alias analysis, autograd wrapping) took more host time than
    # a small step's kernels (run 87). torch.compile still goes through the
    # ops, and so does a q that needs a gradient (the op has no backward:
    # asking for one raises, rather than a silently detached result).
    eager = (not torch.compiler.is_compiling()
             and not (getattr(q, "requires_grad", False)
                      and torch.is_grad_enabled()))
    key = (_step_key(q, k_cache, v_cache, cache_seqlens, k_new, v_new,
                     block_table, softmax_scale, is_causal, window_size,
                     softcap, num_splits, k_descale, v_descale,
                     cache_leftpad, alibi_slopes, cache_batch_idx)
           if eager and not check_requested(check_inputs) else None)
    step = _steps.entries.get(key) if key is not None else None
    if step is not None:
        lengths = (step.lengths if step.lengths is not None
                   else cache_seqlens)
        return step(q, k_cache, v_cache, lengths, k_new, v_new, block_table,
                    k_descale, v_descale, return_lse, cache_leftpad,
                    alibi_slopes, cache_batch_idx)
    _, snew, descales, slopes_layout, scale, lengths, k_ds, v_ds = \
        _prepare(q, k_cache, v_cache, cache_seqlens, k_new, v_new,
                 block_table, softmax_scale, window_size, softcap,
                 check_inputs, k_descale, v_descale, cache_leftpad,
                 alibi_slopes, cache_batch_idx)
    if prefill.applies(q, k_cache, v_cache, block_table, cache_leftpad,
                       cache_batch_idx, k_descale, alibi_slopes, num_splits,
                       is_causal, window_size, softcap):
        # Hundreds of query rows: the varlen forward kernel over the cache
        # (flashfuse._kvcache_prefill).
        if not eager:
            return prefill.attend(q, k_cache, v_cache, lengths, k_new, v_new,
                                  block_table, snew, scale, is_causal,
                                  window_size, softcap, return_lse)
        step = prefill.PrefillStep(
            q, k_cache, v_cache, lengths, k_new, v_new, block_table, snew,
            scale, is_causal, window_size, softcap,
            lengths if isinstance(cache_seqlens, int) else None)
        if key is not None:
            _steps.get(key, lambda: step)
        return step(q, k_cache, v_cache, lengths, k_new, v_new, block_table,
                    k_ds, v_ds, return_lse)
    causal = 2 if is_causal else 0
    window_left, window_right = int(window_size[0]), int(window_size[1])
    pool = cache_batch_idx is not None
    if eager:
        step = _Step(
            kvops.append_launch(k_cache, v_cache, k_new, v_new, lengths,
                                block_table, k_ds, v_ds, pool)
            if k_new is not None else None,
            kvops.decode_launch(q, k_cache, v_cache, lengths, block_table,
                                snew, causal, scale, window_left,
                                window_right, float(softcap), num_splits,
                                k_ds, v_ds, cache_leftpad is not None,
                                slopes_layout, pool),
            lengths if isinstance(cache_seqlens, int) else None)
        if key is not None:
            _steps.get(key, lambda: step)
        return step(q, k_cache, v_cache, lengths, k_new, v_new, block_table,
                    k_ds, v_ds, return_lse, cache_leftpad, alibi_slopes,
                    cache_batch_idx)
    if k_new is not None:
        # An FP8 cache's append quantises the rows with the descales.
        torch.ops.flashfuse.kvcache_append(
            k_cache, v_cache, k_new, v_new, lengths, block_table, k_ds, v_ds,
            cache_batch_idx)
    out, lse = torch.ops.flashfuse.attention_kvcache(
        q, k_cache, v_cache, lengths, block_table, snew, causal, scale,
        window_left, window_right, float(softcap), num_splits, k_ds, v_ds,
        cache_leftpad, alibi_slopes, cache_batch_idx)
    return (out, lse) if return_lse else out


def _prepare(q, k_cache, v_cache, cache_seqlens, k_new, v_new, block_table,
             softmax_scale, window_size, softcap, check_inputs, k_descale,
             v_descale, cache_leftpad, alibi_slopes, cache_batch_idx=None):
    """What a fully checked step needs: (capacity, Snew, descales, the
    slopes' layout, the scale, the lengths tensor, and the descale tensors
    the kernels read), after _check, the slopes' check and, when asked,
    the device-side check of lengths and pages."""
    capacity, snew, descales = _check(q, k_cache, v_cache, cache_seqlens,
                                      k_new, v_new, block_table, window_size,
                                      softcap, k_descale, v_descale,
                                      cache_leftpad, cache_batch_idx)
    slopes_layout = _check_alibi(alibi_slopes, q)
    scale = (1.0 / math.sqrt(q.shape[-1]) if softmax_scale is None
             else float(softmax_scale))
    if isinstance(cache_seqlens, int):
        lengths = torch.full((q.shape[0],), cache_seqlens, dtype=torch.int32,
                             device=q.device)
    else:
        lengths = cache_seqlens
    if check_requested(check_inputs):
        kvops.kvcache_check(k_cache, v_cache, lengths, block_table, snew,
                            q.dtype, cache_batch_idx)
    k_ds, v_ds = ((None, None) if descales is None
                  else (descales[0][0], descales[1][0]))
    return capacity, snew, descales, slopes_layout, scale, lengths, k_ds, v_ds


def _aligned_table(t):
    """A rotary table with contiguous rows on a 16-byte boundary, as the
    kernel's 16-byte loads need: t itself, or a copy."""
    if t.is_contiguous() and t.data_ptr() % 16 == 0:
        return t
    copy = torch.empty(t.numel() + 8, dtype=t.dtype, device=t.device)
    offset = (-copy.data_ptr() // t.element_size()) % 8
    out = copy[offset:offset + t.numel()].view(t.shape)
    out.copy_(t)
    return out


def _aligned_rows(t):
    """A [B, S, H, D] tensor the kv_append reads in 16-byte pieces: t
    itself where its rows are 16-byte aligned with a contiguous last dim,
    else a copy."""
    strides = kvops._row_strides(t)
    if strides != t.stride() or t.data_ptr() % 16:
        return kvops._restrided(t, strides)
    return t


def _fused_rotary_step(q, k_cache, v_cache, cache_seqlens, k_new, v_new,
                       block_table, softmax_scale, is_causal, window_size,
                       softcap, return_lse, check_inputs, num_splits,
                       k_descale, v_descale, cache_leftpad, alibi_slopes,
                       cos, sin, interleaved, cache_batch_idx=None):
    """A checked step with rotary tables: the rotating kv_append (the new
    keys rotated into the cache, q into q_rot; flashfuse.rotary), then the
    decode over q_rot (the varlen kernel for many rows, as without
    rotary)."""
    capacity, snew, _, _, scale, lengths, k_ds, v_ds = _prepare(
        q, k_cache, v_cache, cache_seqlens, k_new, v_new, block_table,
        softmax_scale, window_size, softcap, check_inputs, k_descale,
        v_descale, cache_leftpad, alibi_slopes, cache_batch_idx)
    rotary.check_tables(cos, sin, q, capacity, _NAME)
    windowed = tuple(window_size) != (-1, -1)
    q_rot = rotary.fused_append(
        _aligned_rows(q), k_cache, v_cache, _aligned_rows(k_new),
        _aligned_rows(v_new), kvops._aligned_index(lengths),
        kvops._aligned_index(block_table), k_ds, v_ds, _aligned_table(cos),
        _aligned_table(sin), interleaved, is_causal, windowed,
        kvops._aligned_index(cache_batch_idx))
    if prefill.applies(q_rot, k_cache, v_cache, block_table, cache_leftpad,
                       cache_batch_idx, k_descale, alibi_slopes, num_splits,
                       is_causal, window_size, softcap):
        # Many rows: the varlen kernel over the cache, whose new rows the
        # rotating append has written.
        return prefill.attend(q_rot, k_cache, v_cache, lengths, None, None,
                              block_table, snew, scale, is_causal,
                              window_size, softcap, return_lse)
    out, lse = torch.ops.flashfuse.attention_kvcache(
        q_rot, k_cache, v_cache, lengths, block_table, snew,
        2 if is_causal else 0, scale, int(window_size[0]),
        int(window_size[1]), float(softcap), num_splits, k_ds, v_ds,
        cache_leftpad, alibi_slopes, cache_batch_idx)
    return (out, lse) if return_lse else out


def _check_alibi(slopes, q):
    """The slopes' layout (0: none, 1: [Hq], 2: [B, Hq]) after checking
    them against q [B, Sq, Hq, D]."""
    if slopes is None:
        return 0
    layout = alibi.check_slopes(slopes, q.shape[0], q.shape[2], _NAME)
    alibi.check_device(slopes, q, _NAME)
    return layout


class _Step:
    """The launches of an eager step whose arguments' signature has been
    checked (and, for an int cache_seqlens, its lengths tensor)."""

    __slots__ = ("append", "decode", "lengths")

    def __init__(self, append, decode, lengths):
        self.append, self.decode, self.lengths = append, decode, lengths

    def __call__(self, q, k_cache, v_cache, lengths, k_new, v_new,
                 block_table, k_descale, v_descale, return_lse,
                 cache_leftpad=None, alibi_slopes=None, cache_batch_idx=None):
        if self.append is not None:
            # An FP8 cache's append quantises the rows with the descales.
            self.append(k_cache, v_cache, k_new, v_new, lengths, block_table,
                        k_descale, v_descale, cache_batch_idx)
        out, lse = self.decode(q, k_cache, v_cache, lengths, block_table,
                               k_descale, v_descale, want_lse=return_lse,
                               cache_leftpad=cache_leftpad,
                               alibi_slopes=alibi_slopes,
                               cache_batch_idx=cache_batch_idx)
        return (out, lse) if return_lse else out


# Checked signatures of eager steps -> their _Step: a decoding loop calls
# with the same shapes, strides, dtypes and scalars every layer and step,
# and _check alone took a third of a small step's host time.
_steps = kvops._Templates()


def _step_key(q, k_cache, v_cache, cache_seqlens, k_new, v_new, block_table,
              softmax_scale, is_causal, window_size, softcap, num_splits,
              k_descale, v_descale, cache_leftpad=None, alibi_slopes=None,
              cache_batch_idx=None):
    """Everything _check and the launches depend on, hashable, or None where
    the step is checked in full every call: values the check reads (CPU
    descales) or arguments it would reject by type. Each tensor gives its
    size, strides, dtype and device, an absent one None, so equal keys
    have the same tensors present. One flat tuple built in one expression:
    its build and hash are a small step's host time (nested lists and
    torch.Size hashes cost twice as much, run 239)."""
    tensor = torch.Tensor
    if not (type(q) is tensor and type(k_cache) is tensor
            and type(v_cache) is tensor):
        return None
    if type(cache_seqlens) is int:
        lengths = cache_seqlens
    elif type(cache_seqlens) is tensor:
        lengths = (cache_seqlens.size(), cache_seqlens.stride(),
                   cache_seqlens.dtype, cache_seqlens.get_device())
    else:
        return None
    if type(window_size) not in (tuple, list) or len(window_size) != 2:
        return None
    left, right = window_size
    if type(left) is not int or type(right) is not int \
            or type(softcap) not in (int, float) \
            or (softmax_scale is not None
                and type(softmax_scale) not in (int, float)):
        return None
    if k_new is None and v_new is None and block_table is None \
            and k_descale is None and v_descale is None \
            and cache_leftpad is None and alibi_slopes is None \
            and cache_batch_idx is None:
        optional = None  # the usual decoding step
    else:
        optional = []
        for t in (k_new, v_new, block_table, k_descale, v_descale,
                  cache_leftpad, alibi_slopes, cache_batch_idx):
            if t is None:
                optional.append(None)
            elif type(t) is tensor:
                optional.append((t.size(), t.stride(), t.dtype,
                                 t.get_device()))
            else:
                return None
        for t in (k_descale, v_descale):
            if t is not None and t.device.type == "cpu":
                return None
        optional = tuple(optional)
    return (q.size(), q.stride(), q.dtype, q.get_device(),
            k_cache.size(), k_cache.stride(), k_cache.dtype,
            k_cache.get_device(),
            v_cache.size(), v_cache.stride(), v_cache.dtype,
            v_cache.get_device(),
            lengths, optional, softmax_scale, is_causal, softcap, num_splits,
            left, right)
