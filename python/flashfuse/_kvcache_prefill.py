"""attention_with_kvcache's many-row steps (chunked prefill, a prompt over a
cached prefix, long speculative drafts) on the varlen forward kernels.

The decode kernels pack a kv head's G * Sq query rows (G query heads a kv
head) into tiles of 8 or 16 rows and read all of the sequence's keys once
per tile: right for a few rows, where the step is bound by reading the
cache, and wrong for hundreds, where each of G * Sq / 16 tiles reads the
whole cache again through mma.sync tiles of 16 rows. From
PREFILL_MIN_ROWS rows on (measured, docs/KVCACHE.md "Many query rows"), a
contiguous cache is read in place as a packed batch by the varlen forward
kernel (128-row wgmma tiles): the cache [B, Smax, Hkv, D] is the packed
keys [B * Smax, Hkv, D], and 2B sequences cover it, sequence 2b being
sequence b's Sq queries over its first L_b keys (L_b its length after
this step's new rows, so the bottom-right causal diagonal and the window
are each sequence's own, as the decode kernels have them) and sequence
2b + 1 the unused rows [b * Smax + L_b, (b + 1) * Smax) with no query. Both
offset tensors are computed on the GPU from the lengths, so nothing
synchronises.

A paged cache is gathered into a contiguous one first (gather_pages), from
PREFILL_MIN_ROWS_PAGED rows on.

Only where the two paths compute the same thing with a kernel an artifact
(the library, or the on-demand compiler's cache) already has: a 16-bit
cache, contiguous with its [B * Smax] rows one strided view, or paged; no
pool, left padding, ALiBi or forced split count; a mask the varlen
kernels take with the decode kernels' diagonal (bottom-right causal with
or without a window, or none). Every other step stays on the decode
kernels."""

import torch

from . import _kernels
from . import _kvcache_ops as kvops
from . import _runtime as rt
from . import ops

# Packed query rows (G * Sq) from which a step runs on the varlen forward
# kernel (docs/KVCACHE.md "Many query rows"; H100, bf16, D = 128, runs
# 539-541): at 256 rows 1.37x the decode path (GQA 32/8 over 8k keys) and
# 1.65x (MHA over 4k); at 128 rows the decode path 1.35x and level.
PREFILL_MIN_ROWS = 256
# The same for a paged cache, which is first gathered into a contiguous one
# (gather_pages: a copy of every page the table names): at 512 rows 1.8x
# the paged decode path; at 256 rows 0.94x (GQA) and 1.34x (MHA).
PREFILL_MIN_ROWS_PAGED = 512

# Variant key and capability -> whether an artifact has the kernel.
_has_kernel = {}


def _varlen_variant(q, v_cache, causal, window, softcap):
    return _kernels.make_variant(
        rt.KIND_FORWARD, ops._DTYPES[q.dtype], q.shape[-1], v_cache.shape[-1],
        causal, window=tuple(window) != (-1, -1), softcap=softcap > 0,
        varlen=True)


def _rows_flatten(t):
    """Whether [B, Smax, H, D] t's first two dims are one strided dim."""
    return t.shape[0] <= 1 or t.stride(0) == t.shape[1] * t.stride(1)


def eligible(q, k_cache, v_cache, block_table, cache_leftpad,
             cache_batch_idx, k_descale, alibi_slopes, num_splits, is_causal,
             window_size):
    """Whether the step's shapes and options allow the varlen path (what
    `applies` asks before looking for the kernel; no device needed).
    Called before the step's checks: anything unexpected answers False,
    and the decode path reports it."""
    if (cache_leftpad is not None or cache_batch_idx is not None
            or k_descale is not None or alibi_slopes is not None
            or num_splits != 0):
        return False
    if not all(type(t) is torch.Tensor and t.dim() == 4
               for t in (q, k_cache, v_cache)):
        return False
    paged = block_table is not None
    if paged and not (type(block_table) is torch.Tensor
                      and block_table.dim() == 2):
        return False
    if (type(window_size) not in (tuple, list) or len(window_size) != 2
            or not all(type(w) is int for w in window_size)):
        return False
    if (q.dtype not in (torch.float16, torch.bfloat16)
            or k_cache.dtype != q.dtype or v_cache.dtype != q.dtype):
        return False
    b, sq, hq, _ = q.shape
    hkv = k_cache.shape[2]
    rows = PREFILL_MIN_ROWS_PAGED if paged else PREFILL_MIN_ROWS
    if hkv == 0 or hq % hkv or sq * (hq // hkv) < rows:
        return False
    if not paged and not (_rows_flatten(k_cache) and _rows_flatten(v_cache)):
        return False
    # The packed key count is an i32 of the kernels' arguments.
    capacity = (block_table.shape[1] * k_cache.shape[1] if paged
                else k_cache.shape[1])
    if b * capacity >= 2**31:
        return False
    # The varlen kernels' window without causality is centred on the
    # top-left diagonal; the decode kernels' on the bottom-right one.
    return bool(is_causal) or tuple(window_size) == (-1, -1)


def applies(q, k_cache, v_cache, block_table, cache_leftpad,
            cache_batch_idx, k_descale, alibi_slopes, num_splits, is_causal,
            window_size, softcap):
    """Whether this step runs on the varlen forward kernel: `eligible`, on
    a GPU, and an artifact has the kernel (never compiled on demand for
    this: the decode kernels serve every step)."""
    if not eligible(q, k_cache, v_cache, block_table, cache_leftpad,
                    cache_batch_idx, k_descale, alibi_slopes, num_splits,
                    is_causal, window_size):
        return False
    if not q.is_cuda or type(softcap) not in (int, float):
        return False
    variant = _varlen_variant(q, v_cache, 2 if is_causal else 0,
                              tuple(window_size), float(softcap))
    capability = ops._capability(q.device.index)
    key = (variant.key(), capability)
    found = _has_kernel.get(key)
    if found is None:
        found = _has_kernel[key] = bool(
            _kernels.locate_all(variant, capability))
    return found


def _empty_offsets(batch, sq, smax, device):
    """(cu_seqlens_q, cu_seqlens_k with every key count 0): both i32
    [2B + 1], the second offsets' odd entries waiting for the counts."""
    step = torch.arange(batch + 1, device=device, dtype=torch.int32)
    cu_q = torch.empty(2 * batch + 1, device=device, dtype=torch.int32)
    cu_q[0::2] = step * sq
    cu_q[1::2] = step[1:] * sq
    cu_k = torch.empty_like(cu_q)
    cu_k[0::2] = step * smax
    cu_k[1::2] = step[:-1] * smax
    return cu_q, cu_k


def _with_keys(cu_k, keys, smax):
    """cu_k with sequence b's key count (clamped into [0, Smax]) added to
    its odd entry 2b + 1: a new tensor, the argument unchanged."""
    cu_k = cu_k.clone()
    cu_k[1::2] += keys.to(torch.int32).clamp(0, smax)
    return cu_k


def offsets(keys, batch, sq, smax):
    """(cu_seqlens_q, cu_seqlens_k) i32 [2B + 1] of the 2B packed sequences
    (module docstring), `keys` i32 [B] each sequence's key count after the
    step, clamped into [0, Smax] (a length past the capacity is outside
    the contract: a wrong answer, never a read past the cache)."""
    cu_q, cu_k = _empty_offsets(batch, sq, smax, keys.device)
    return cu_q, _with_keys(cu_k, keys, smax)


def gather_pages(pages, block_table):
    """A paged cache [num_pages, P, Hkv, D] as the contiguous [B, max_pages
    * P, Hkv, D] its table names, page indices clamped into [0, num_pages)
    as the decode kernels clamp them (an index outside is a wrong answer,
    never a read outside the pages)."""
    b, max_pages = block_table.shape
    index = block_table.flatten().clamp(0, pages.shape[0] - 1).long()
    gathered = pages.index_select(0, index)
    return gathered.view(b, max_pages * pages.shape[1], *pages.shape[2:])


def _cache_rows(k_cache, v_cache, block_table):
    """The caches as contiguous [B, Smax, Hkv, D] ones: themselves, or
    gathered from their pages."""
    if block_table is None:
        return k_cache, v_cache
    return (gather_pages(k_cache, block_table),
            gather_pages(v_cache, block_table))


def _unpacked(o, lse, b, sq, return_lse):
    """The varlen kernel's O [B * Sq, Hq, Dv] and LSE [Hq, B * Sq] as the
    decode path returns them: O [B, Sq, Hq, Dv], LSE [B, Hq, Sq]."""
    hq, dv = o.shape[1], o.shape[2]
    out = o.view(b, sq, hq, dv)
    if not return_lse:
        return out
    return out, lse.view(hq, b, sq).transpose(0, 1).contiguous()


def attend(q, k_cache, v_cache, lengths, k_new, v_new, block_table, snew,
           scale, is_causal, window_size, softcap, return_lse):
    """The checked step (kvcache._prepare has run): this step's new rows
    appended, then the varlen forward over the cache, read in place where
    contiguous, gathered from its pages (gather_pages) where paged."""
    if k_new is not None:
        torch.ops.flashfuse.kvcache_append(
            k_cache, v_cache, k_new, v_new, lengths, block_table, None, None,
            None)
    k_cache, v_cache = _cache_rows(k_cache, v_cache, block_table)
    b, sq, hq, d = q.shape
    smax = k_cache.shape[1]
    cu_q, cu_k = offsets(lengths + snew, b, sq, smax)
    o, lse = torch.ops.flashfuse.varlen_attention_fwd(
        q.reshape(b * sq, hq, d), k_cache.flatten(0, 1),
        v_cache.flatten(0, 1), cu_q, cu_k, sq, smax, 2 if is_causal else 0,
        float(scale), int(window_size[0]), int(window_size[1]),
        float(softcap))
    return _unpacked(o, lse, b, sq, return_lse)


class PrefillStep:
    """The launches of an eager many-row step whose signature has been
    checked (kvcache._steps keeps it, as it keeps the decode path's _Step):
    the kv_append launch, the varlen kernel and the offsets of zero-length
    sequences looked up once, so that a call adds the lengths and launches
    (torch.compile and steps that need a gradient go through `attend`'s
    ops instead). Called as kvcache._Step is."""

    __slots__ = ("append", "kernel", "cu_q", "cu_k", "snew", "scale",
                 "window", "softcap", "lengths")

    def __init__(self, q, k_cache, v_cache, lengths, k_new, v_new,
                 block_table, snew, scale, is_causal, window_size, softcap,
                 int_lengths):
        self.append = (kvops.append_launch(k_cache, v_cache, k_new, v_new,
                                           lengths, block_table)
                       if k_new is not None else None)
        variant = _varlen_variant(q, v_cache, 2 if is_causal else 0,
                                  tuple(window_size), float(softcap))
        index = q.device.index
        smax = (block_table.shape[1] * k_cache.shape[1]
                if block_table is not None else k_cache.shape[1])
        # The lengths are on the GPU: the capacity stands for the keys of
        # the sequences with queries (attend's custom op, like any packed
        # batch, judges by its keys over its 2B sequences: half of it).
        self.kernel = _kernels.varlen_forward_kernel(
            index, variant, ops._capability(index), smax)
        self.cu_q, self.cu_k = _empty_offsets(q.shape[0], q.shape[1], smax,
                                              q.device)
        self.snew, self.scale = snew, float(scale)
        self.window = (int(window_size[0]), int(window_size[1]))
        self.softcap = float(softcap)
        self.lengths = int_lengths

    def __call__(self, q, k_cache, v_cache, lengths, k_new, v_new,
                 block_table, k_descale, v_descale, return_lse,
                 cache_leftpad=None, alibi_slopes=None, cache_batch_idx=None):
        if self.append is not None:
            self.append(k_cache, v_cache, k_new, v_new, lengths, block_table)
        k_cache, v_cache = _cache_rows(k_cache, v_cache, block_table)
        b, sq, hq, d = q.shape
        smax, dv = k_cache.shape[1], v_cache.shape[-1]
        keys = lengths + self.snew if self.snew else lengths
        cu_k = _with_keys(self.cu_k, keys, smax)
        qp = q.reshape(b * sq, hq, d)
        o = q.new_empty(b * sq, hq, dv)
        lse = q.new_empty(hq, b * sq, dtype=torch.float32)
        ops._poison(o, lse)
        a, p, keep = ops.varlen_launch_args(
            qp, k_cache.flatten(0, 1), v_cache.flatten(0, 1), o, lse,
            self.cu_q, cu_k, sq, smax, self.scale, self.window[0],
            self.window[1], self.softcap)
        context, stream = ops._launch_context(q.device)
        with context:
            rt.attention_forward_varlen(self.kernel, a, p, stream)
        del keep
        return _unpacked(o, lse, b, sq, return_lse)
