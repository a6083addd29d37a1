"""The torch custom ops of attention over a KV cache (docs/KVCACHE.md): the
append of new rows, the decode (split + combine) and the debug check of the
lengths and the page table, and the launch templates eager decoding steps
reuse.

A decoding step at a small batch is host-bound: its kernels take 8-12 us,
while the Python around them took 90 us (run 87). What a launch needs
that depends only on its arguments' shapes, strides, dtypes and scalars
(the kernels, every size and stride of the runtime's argument struct, the
workspace size) is therefore worked out once per signature, in a
DecodeLaunch or AppendLaunch; calling one fills in the addresses of this
step's tensors and launches.
"""

from typing import Optional

import torch

from . import _kernels
from . import _runtime as rt
from .ops import (_DTYPES, _Templates, _aligned, _capability,
                  _current_stream, _meta, _poison, poison_requested)


# (device, variant key, chosen artifact dir or None) -> (decode, combine)
_decode_plans = {}

# An unsplit decode grid of this many waves of one block an SM, or more,
# takes a kernel of its variant whose tiles fit two blocks an SM where an
# artifact has one (the library's <target>-decode-waves): one block's
# prologue and merge then overlap the other's copies, which the library's
# tiles (one block an SM) leave idle between waves (docs/KVCACHE.md,
# "Tiles for grids of several waves"). decode_splits.h's
# FLASHFUSE_DECODE_WAVES_MIN, which flash-select-config applies.
WAVES_MIN = 2


def waves_kernel_dir(infos, groups, sm_count, smem_per_sm):
    """The artifact directory of the kernel to launch among `infos`
    ([(dir, KernelInfo)] of one variant, the first the default): where the
    default's grid, groups(block_m) blocks, runs WAVES_MIN waves or more of
    one block an SM, the first kernel that fits two blocks an SM; where it
    runs fewer, the first that does not (the library's own tiles: more
    keys in flight a block, docs/KVCACHE.md). So the grid picks the class
    of tile and the search order only picks within it: a
    FLASHFUSE_KERNEL_DIR that lists the waves artifact first still takes
    the library's tiles for small grids (docs/PERF.md runs 394-395, where
    it did not: 7-10% less at B = 1 over 64k-128k keys). The default's
    where no kernel is of the class wanted, or the GPU's shape is
    unknown."""
    default_dir, default = infos[0]
    if not sm_count or not smem_per_sm:
        return default_dir

    def fits_twice(info):
        return 0 < info.smem and 2 * info.smem <= smem_per_sm
    waves = groups(default.block_m) >= WAVES_MIN * sm_count
    for directory, info in infos:
        if fits_twice(info) == waves:
            return directory
    return default_dir


def decode_kernel_dir(infos, rows, groups, sm_count, smem_per_sm):
    """The artifact directory of the kernel to launch among `infos`
    ([(dir, KernelInfo)] of one variant, the first the default) for a
    launch of `rows` packed query rows (G * Sq) a kv head: where they fit
    the block of a kernel of fewer than 16 rows (block_m 8, whose rows are
    the n of its products: the library's <target>-decode-rows8,
    docs/KVCACHE.md "Few rows as the products' n"), the kernels of that
    height; otherwise the others, since each block of a kernel reads all of
    K and V. Among those, waves_kernel_dir's choice where `groups` is given
    (the first of them where it is None: the split count is forced)."""
    few = [x for x in infos if x[1].block_m < 16]
    pool = (few if few and rows <= few[0][1].block_m else
            [x for x in infos if x[1].block_m >= 16] or infos)
    if groups is None:
        return pool[0][0]
    return waves_kernel_dir(pool, groups, sm_count, smem_per_sm)


def _device_shape(device_index):
    """(SMs, shared memory per SM in bytes, or 0 where torch does not say)
    of a GPU."""
    props = torch.cuda.get_device_properties(device_index)
    return (props.multi_processor_count,
            getattr(props, "shared_memory_per_multiprocessor", 0))


def _decode_kernels(device_index, variant, rows, groups=None):
    """(decode kernel, its decode_combine or None) for `variant`, both from
    the artifact that has the decode kernel (they share the layout of the
    partial results, KERNEL_ABI.md "Decode"); the decode is compiled on
    demand where no artifact has it. Without a combine kernel the runtime
    runs one split, which is correct, only slower for small batches.
    `rows`: the launch's packed query rows a kv head (G * Sq), to choose
    the tiles' height; `groups(block_m)`: the unsplit grid's blocks for a
    kernel of block_m rows, to choose tiles by the grid's waves (None:
    the split count is forced). decode_kernel_dir chooses."""
    capability = _capability(device_index)
    infos = _kernels.kernel_infos(variant, capability)
    directory = None
    if len(infos) > 1:
        # Other tiles only from artifacts built for this GPU (their cubin),
        # not an older arch's PTX that the driver would JIT-compile.
        infos = infos[:1] + [(d, info) for d, info in infos[1:]
                             if _kernels.load_rank(d, capability) == 0]
        directory = decode_kernel_dir(infos, rows, groups,
                                      *_device_shape(device_index))
    key = (device_index, variant.key(), directory)
    plan = _decode_plans.get(key)
    if plan is not None:
        return plan
    if directory is None:
        directory, _ = _kernels.locate(variant, capability=capability)
    decode = _kernels.kernel(device_index, variant, directory)
    combine_variant = _kernels.make_variant(
        rt.KIND_DECODE_COMBINE, variant.dtype, variant.head_dim_v,
        variant.head_dim_v)
    combine = (_kernels.kernel(device_index, combine_variant, directory)
               if _kernels.has_kernel(combine_variant, directory) else None)
    plan = _decode_plans[key] = (decode, combine)
    return plan


def _bhsd_strides(t):
    """[b, h, s, d] element strides of a BSHD tensor ([B, S, H, D]; a paged
    cache [num_pages, page_size, Hkv, D] gives [page, h, row, d], the
    order KERNEL_ABI.md "Decode" takes)."""
    s = t.stride()
    return (s[0], s[2], s[1], s[3])


def _aligned_index(t):
    """An i32 index tensor (lengths, page table) with a contiguous last dim
    on a 16-byte boundary, as the kernels' memrefs need: t itself, or a
    copy (a few bytes per sequence)."""
    if t is None:
        return None
    if t.data_ptr() % 16 == 0 and (t.stride(-1) == 1 or t.shape[-1] == 1):
        return t
    return t.clone(memory_format=torch.contiguous_format)


def _descale_strides(t):
    """(stride_b, stride_h) of a descale: (0, 0) for one factor per tensor
    ([] or [1]), else the [B, Hkv] tensor's element strides."""
    return (0, 0) if t.dim() == 0 or t.numel() == 1 and t.dim() == 1 \
        else (t.stride(0), t.stride(1))


def _cache_layout(a, k_cache, v_cache, batch, block_table, pool=False):
    """Fills the address-free cache fields of DecodeArgs `a` (dtype of an
    FP8 cache, sizes, page geometry, a pool's size, strides), which the
    decode, the append and the check share. `pool`: the contiguous caches
    hold a pool of k_cache.shape[0] sequences, named by cache_batch_idx."""
    if k_cache.dtype in _DTYPES:  # an FP8 cache: the decode sets q's
        a.dtype = _DTYPES[k_cache.dtype]
    a.batch, a.heads_kv = batch, k_cache.shape[2]
    a.head_dim, a.head_dim_v = k_cache.shape[-1], v_cache.shape[-1]
    if block_table is not None:
        a.page_size, a.num_pages = k_cache.shape[1], k_cache.shape[0]
        a.max_pages = block_table.shape[1]
        a.block_table_stride = block_table.stride(0)
    else:
        a.cache_len = k_cache.shape[1]
    if pool:
        a.cache_batch = k_cache.shape[0]
    a.k_stride[:] = _bhsd_strides(k_cache)
    a.v_stride[:] = _bhsd_strides(v_cache)


def _cache_addresses(a, k_cache, v_cache, cache_seqlens, block_table,
                     cache_batch_idx=None):
    """Fills the cache's addresses in DecodeArgs `a`; returns the index
    tensors passed (possibly aligned copies), to be kept alive until the
    launch is queued. A copied page table has its own row stride."""
    cache_seqlens = _aligned_index(cache_seqlens)
    block_table = _aligned_index(block_table)
    cache_batch_idx = _aligned_index(cache_batch_idx)
    a.k_cache, a.v_cache = k_cache.data_ptr(), v_cache.data_ptr()
    a.cache_seqlens = cache_seqlens.data_ptr()
    if block_table is not None:
        a.block_table = block_table.data_ptr()
        a.block_table_stride = block_table.stride(0)
    if cache_batch_idx is not None:
        a.cache_batch_idx = cache_batch_idx.data_ptr()
    return cache_seqlens, block_table, cache_batch_idx


def _cache_args(a, k_cache, v_cache, cache_seqlens, block_table,
                cache_batch_idx=None):
    """_cache_layout and _cache_addresses together."""
    _cache_layout(a, k_cache, v_cache, cache_seqlens.shape[0], block_table,
                  cache_batch_idx is not None)
    return _cache_addresses(a, k_cache, v_cache, cache_seqlens, block_table,
                            cache_batch_idx)


def _fp8_cache_layout(a, q_dtype, k_descale, v_descale):
    """The address-free FP8 cache fields of DecodeArgs `a`, which its decode
    and its kv_append share: q's (or the new rows') dtype, kv_dtype e4m3
    and the descales' strides."""
    a.dtype = _DTYPES[q_dtype]
    a.kv_dtype = rt.DTYPE_E4M3
    a.k_descale_stride[:] = _descale_strides(k_descale)
    a.v_descale_stride[:] = _descale_strides(v_descale)


_aux_kernels = {}  # (device, variant key) -> kernel


def _kvcache_kernel(device_index, kind, k_cache, v_cache, paged, dtype=None,
                    kv_dtype=0, pool=False):
    """The kv_append or decode_check kernel of a cache: it depends on the
    dtype (`dtype`, default the cache's), the head dims, the page size,
    whether the cache is a pool of sequences (`pool`) and, for kv_append,
    the cache's kv_dtype only (flash-lower-to-gpu builds both next to every
    decode kernel), so any artifact's will do; compiled on demand where
    none has it."""
    variant = _kernels.make_variant(
        kind, _DTYPES[dtype or k_cache.dtype], k_cache.shape[-1],
        v_cache.shape[-1], page_size=k_cache.shape[1] if paged else 0,
        kv_dtype=kv_dtype, batch_idx=pool)
    key = (device_index, variant.key())
    k = _aux_kernels.get(key)
    if k is None:
        directory, _ = _kernels.locate(variant,
                                       capability=_capability(device_index))
        k = _aux_kernels[key] = _kernels.kernel(device_index, variant,
                                                directory)
    return k


def _restrided(t, strides):
    """A copy of t with element strides `strides` on a fresh (aligned)
    allocation: what a plan bound to those strides reads where t itself
    cannot be read in place."""
    return torch.empty_strided(t.shape, strides, dtype=t.dtype,
                               device=t.device).copy_(t)


def _contiguous_strides(shape):
    strides, n = [], 1
    for size in reversed(shape):
        strides.append(n)
        n *= size
    return tuple(reversed(strides))


def _row_strides(t):
    """The strides a plan reads a [B, S, H, D] tensor (q, k_new, v_new)
    with: t's own where the kernels can read it in place (a contiguous
    last dim, 16-byte rows), else a contiguous copy's."""
    return t.stride() if _aligned(t, address=False) else \
        _contiguous_strides(t.shape)


def _index_strides(table):
    """(strides, copy needed) of a page table for a plan: its own where
    its rows are contiguous, else a contiguous copy's; (None, None) for no
    table."""
    if table is None:
        return None, None
    strides = (table.stride() if table.stride(-1) == 1
               or table.shape[-1] == 1 else _contiguous_strides(table.shape))
    return strides, strides != table.stride()


def _readable_indices(cache_seqlens, block_table, table_strides,
                      table_copy):
    """(lengths, table) a plan can read: the caller's, or copies of
    misaligned or strided ones (the table with the plan's strides, see
    _index_strides). The caller keeps them until the launch is queued."""
    cache_seqlens = _aligned_index(cache_seqlens)
    if block_table is not None and (table_copy or
                                    block_table.data_ptr() % 16):
        block_table = _restrided(block_table, table_strides)
    return cache_seqlens, block_table


class AppendLaunch:
    """The kv_append launch of one signature (KERNEL_ABI.md "Decode"), a
    DecodePlan of the kv_append kernel: writes k_new / v_new into the
    caches at each sequence's length."""

    def __init__(self, k_cache, v_cache, k_new, v_new, cache_seqlens,
                 block_table, k_descale, v_descale, pool=False):
        self.fp8 = k_descale is not None
        self.pool = pool
        self.device_index = k_cache.device.index
        append = _kvcache_kernel(
            k_cache.device.index, rt.KIND_KV_APPEND, k_cache, v_cache,
            block_table is not None, k_new.dtype,
            rt.DTYPE_E4M3 if self.fp8 else 0, pool)
        a = rt.decode_args()
        _cache_layout(a, k_cache, v_cache, cache_seqlens.shape[0],
                      block_table, pool)
        # The table's and the new rows' strides, as DecodeLaunch does q's:
        # their own where the kernel reads them in place, else a copy's.
        self.table_strides, self.table_copy = _index_strides(block_table)
        if block_table is not None:
            a.block_table_stride = self.table_strides[0]
        if self.fp8:
            _fp8_cache_layout(a, k_new.dtype, k_descale, v_descale)
        a.seq_new = k_new.shape[1]
        self.new_strides = []
        for name, t in (("k_new", k_new), ("v_new", v_new)):
            strides = _row_strides(t)
            self.new_strides.append((strides, strides != t.stride()))
            getattr(a, name + "_stride")[:] = (strides[0], strides[2],
                                               strides[1], strides[3])
        self.plan = rt.DecodePlan.append(append, a)

    def __call__(self, k_cache, v_cache, k_new, v_new, cache_seqlens,
                 block_table, k_descale=None, v_descale=None,
                 cache_batch_idx=None):
        rows = []
        for t, (strides, copy) in zip((k_new, v_new), self.new_strides):
            if copy or t.data_ptr() % 16:
                t = _restrided(t, strides)
            rows.append(t)
        cache_seqlens, block_table = _readable_indices(
            cache_seqlens, block_table, self.table_strides, self.table_copy)
        if self.pool:
            cache_batch_idx = _aligned_index(cache_batch_idx)
        fp8 = self.fp8
        self.plan.launch(
            rt.pack_decode_addresses(
                0, k_cache.data_ptr(), v_cache.data_ptr(), 0, 0,
                cache_seqlens.data_ptr(),
                block_table.data_ptr() if block_table is not None else 0,
                rows[0].data_ptr(), rows[1].data_ptr(),
                k_descale.data_ptr() if fp8 else 0,
                v_descale.data_ptr() if fp8 else 0, 0, 0, 0, 0,
                cache_batch_idx.data_ptr() if self.pool else 0),
            _current_stream(self.device_index))


_append_templates = _Templates()


def append_launch(k_cache, v_cache, k_new, v_new, cache_seqlens,
                  block_table, k_descale=None, v_descale=None, pool=False):
    """The AppendLaunch of these arguments' signature (`pool`: the launch
    takes cache_batch_idx)."""
    key = (k_cache.device, _meta(k_cache), _meta(v_cache), _meta(k_new),
           _meta(v_new), cache_seqlens.shape, _meta(block_table),
           _meta(k_descale), _meta(v_descale), pool)
    return _append_templates.get(key, lambda: AppendLaunch(
        k_cache, v_cache, k_new, v_new, cache_seqlens, block_table,
        k_descale, v_descale, pool))


@torch.library.custom_op("flashfuse::kvcache_append",
                         mutates_args=("k_cache", "v_cache"),
                         device_types="cuda")
def kvcache_append(k_cache: torch.Tensor, v_cache: torch.Tensor,
                   k_new: torch.Tensor, v_new: torch.Tensor,
                   cache_seqlens: torch.Tensor,
                   block_table: Optional[torch.Tensor],
                   k_descale: Optional[torch.Tensor] = None,
                   v_descale: Optional[torch.Tensor] = None,
                   cache_batch_idx: Optional[torch.Tensor] = None) -> None:
    """Writes k_new / v_new [B, Snew, Hkv, D/Dv] into the caches in place at
    rows [cache_seqlens[b], cache_seqlens[b] + Snew) of each sequence b,
    through block_table when paged, into pool row cache_batch_idx[b] where
    given, with the kv_append kernel (a row whose destination is outside
    the cache is skipped). An FP8 cache (float8_e4m3fn) comes with its f32
    k_descale and v_descale, and the rows are stored as e4m3(clamp(x * (1 /
    descale), -448, 448)). The caller (flashfuse.attention_with_kvcache)
    has checked the shapes."""
    kvcache_append_eager(k_cache, v_cache, k_new, v_new, cache_seqlens,
                         block_table, k_descale, v_descale, cache_batch_idx)


def kvcache_append_eager(k_cache, v_cache, k_new, v_new, cache_seqlens,
                         block_table, k_descale=None, v_descale=None,
                         cache_batch_idx=None):
    """The body of flashfuse::kvcache_append, called directly by eager
    decoding steps (the dispatcher's checks of a custom op cost more than
    a small step's kernels; torch.compile still sees the op)."""
    append_launch(k_cache, v_cache, k_new, v_new, cache_seqlens, block_table,
                  k_descale, v_descale, cache_batch_idx is not None)(
        k_cache, v_cache, k_new, v_new, cache_seqlens, block_table,
        k_descale, v_descale, cache_batch_idx)


@kvcache_append.register_fake
def _(k_cache, v_cache, k_new, v_new, cache_seqlens, block_table,
      k_descale=None, v_descale=None, cache_batch_idx=None):
    return None


def device_check_args(k_cache, v_cache, cache_seqlens, block_table,
                      seq_new, dtype=None, cache_batch_idx=None):
    """(decode_check kernel, its DecodeArgs, the index tensors they point
    at, kept until the launch is queued) of kvcache_check: all of it but
    the status buffer and the launch, which need a GPU, so that a dry run
    (scripts/kernels/check_pool_decode.py) can check these arguments
    against the kernel's manifest entry."""
    check = _kvcache_kernel(k_cache.device.index, rt.KIND_DECODE_CHECK,
                            k_cache, v_cache, block_table is not None, dtype,
                            pool=cache_batch_idx is not None)
    a = rt.decode_args()
    keep = _cache_args(a, k_cache, v_cache, cache_seqlens, block_table,
                       cache_batch_idx)
    if dtype is not None:
        a.dtype = _DTYPES[dtype]
    a.seq_new = seq_new
    return check, a, keep


def kvcache_check(k_cache, v_cache, cache_seqlens, block_table, seq_new,
                  dtype=None, cache_batch_idx=None):
    """The debug check of the lengths and the page table on the GPU (the
    decode_check kernel, KERNEL_ABI.md "Decode"): raises
    InvalidArgumentError (a ValueError) naming the first sequence whose
    cache_seqlens[b] < 0, cache_seqlens[b] + seq_new > capacity, or (paged)
    one of whose pages [0, ceil(L_b / page_size)) is outside [0,
    num_pages), or whose pool row cache_batch_idx[b] (where given) is
    outside [0, k_cache.shape[0]) or, with seq_new > 0, an earlier
    sequence's too. One 16-byte read-back: it synchronises
    the current stream. `dtype`: the queries' (for an FP8 cache, whose
    check kernel reads lengths and pages only and is any 16-bit
    decode's)."""
    check, a, keep = device_check_args(k_cache, v_cache, cache_seqlens,
                                       block_table, seq_new, dtype,
                                       cache_batch_idx)
    status = torch.empty(4, dtype=torch.int32, device=k_cache.device)
    stream = torch.cuda.current_stream(k_cache.device).cuda_stream
    with torch.cuda.device(k_cache.device):
        rt.decode_check_on_device(check, a, status.data_ptr(), stream)
    del keep


def _kvcache_outputs(q, head_dim_v):
    b, sq, hq, _ = q.shape
    return (q.new_empty(b, sq, hq, head_dim_v),
            q.new_empty(b, hq, sq, dtype=torch.float32))


class DecodeLaunch:
    """The decode launch of one signature (KERNEL_ABI.md "Decode"): a
    DecodePlan of the decode kernel and its combine, made from every size,
    stride and scalar (the split count depends on the host-visible sizes
    and the GPU only, not on the lengths on the device), so that a call
    allocates O, LSE and the workspace and passes the runtime the
    addresses."""

    def __init__(self, q, k_cache, v_cache, cache_seqlens, block_table,
                 seq_new, causal, scale, window_left, window_right, softcap,
                 num_splits, k_descale=None, v_descale=None, leftpad=False,
                 alibi=0, pool=False):
        paged = block_table is not None
        dv = v_cache.shape[-1]
        self.fp8 = k_descale is not None
        self.leftpad = leftpad
        self.alibi = alibi
        self.pool = pool
        variant = _kernels.make_variant(
            rt.KIND_DECODE, _DTYPES[q.dtype], q.shape[-1], dv, causal,
            window=(window_left, window_right) != (-1, -1),
            softcap=softcap > 0,
            page_size=k_cache.shape[1] if paged else 0,
            kv_dtype=rt.DTYPE_E4M3 if self.fp8 else 0, leftpad=leftpad,
            alibi=alibi, batch_idx=pool)
        b, sq, hq, _ = q.shape
        hkv = k_cache.shape[2]
        # The split rule's unsplit grid: (batch, kv head, block of the
        # kv head's hq / hkv * sq packed query rows).
        groups = (None if num_splits else
                  lambda block_m: b * hkv * -(-(hq // hkv * sq) // block_m))
        decode, combine = _decode_kernels(q.device.index, variant,
                                          hq // hkv * sq, groups)
        self.device_index = q.device.index
        self.o_shape, self.lse_shape = (b, sq, hq, dv), (b, hq, sq)
        # The strides the plan is bound to: q's and the table's own where
        # the kernels can read them in place, else those of the copy a
        # call then makes (_restrided); a call whose tensor is misaligned
        # copies it too.
        self.q_strides = _row_strides(q)
        self.q_copy = self.q_strides != q.stride()
        self.table_strides, self.table_copy = _index_strides(block_table)
        a = rt.decode_args()
        _cache_layout(a, k_cache, v_cache, cache_seqlens.shape[0],
                      block_table, pool)
        if paged:
            a.block_table_stride = self.table_strides[0]
        if self.fp8:
            # The cache's dtype is the kernel's kv_dtype; q and O keep theirs.
            _fp8_cache_layout(a, q.dtype, k_descale, v_descale)
        a.heads_q, a.seq_q, a.seq_new = hq, sq, seq_new
        a.q_stride[:] = (self.q_strides[0], self.q_strides[2],
                         self.q_strides[1], self.q_strides[3])
        a.o_stride[:] = (sq * hq * dv, dv, hq * dv, 1)  # O is contiguous
        a.scale = scale
        a.window_left, a.window_right = window_left, window_right
        a.softcap = softcap
        a.num_splits = num_splits
        self.plan = rt.DecodePlan(decode, combine, a)
        self.workspace_bytes = self.plan.workspace_bytes
        # Where the caller does not want the LSE, the kernels write it to
        # a buffer of this template's that nothing reads: concurrent
        # launches (streams, graphs) may overwrite each other's there
        # harmlessly, and a step allocates its output and workspace only.
        self.lse_numel = b * hq * sq
        self.discarded_lse = None

    def __call__(self, q, k_cache, v_cache, cache_seqlens, block_table,
                 k_descale=None, v_descale=None, want_lse=True,
                 cache_leftpad=None, alibi_slopes=None, cache_batch_idx=None):
        """(O, LSE) of this step; LSE None unless `want_lse`."""
        o = q.new_empty(self.o_shape)
        if self.leftpad:
            cache_leftpad = _aligned_index(cache_leftpad)
        if self.pool:
            cache_batch_idx = _aligned_index(cache_batch_idx)
        if self.alibi and (not alibi_slopes.is_contiguous()
                           or alibi_slopes.data_ptr() % 16):
            # The kernels read the slopes as one contiguous, aligned array.
            alibi_slopes = alibi_slopes.clone(
                memory_format=torch.contiguous_format)
        if self.q_copy or q.data_ptr() % 16:
            q = _restrided(q, self.q_strides)
        cache_seqlens, block_table = _readable_indices(
            cache_seqlens, block_table, self.table_strides, self.table_copy)
        if want_lse:
            lse = q.new_empty(self.lse_shape, dtype=torch.float32)
            lse_address = lse.data_ptr()
        else:
            lse = None
            if self.discarded_lse is None:
                self.discarded_lse = q.new_empty(self.lse_numel,
                                                 dtype=torch.float32)
            lse_address = self.discarded_lse.data_ptr()
        nbytes = self.workspace_bytes
        # From torch's caching allocator on the launch stream: reused by
        # the next step without a synchronisation.
        workspace = (torch.empty(nbytes, dtype=torch.uint8, device=q.device)
                     if nbytes else None)
        if poison_requested():
            _poison(o, lse, workspace.view(torch.float32)
                    if workspace is not None else None)
        fp8 = self.fp8
        self.plan.launch(
            rt.pack_decode_addresses(
                q.data_ptr(), k_cache.data_ptr(), v_cache.data_ptr(),
                o.data_ptr(), lse_address,
                cache_seqlens.data_ptr(),
                block_table.data_ptr() if block_table is not None else 0,
                0, 0,
                k_descale.data_ptr() if fp8 else 0,
                v_descale.data_ptr() if fp8 else 0,
                workspace.data_ptr() if nbytes else 0, nbytes,
                cache_leftpad.data_ptr() if self.leftpad else 0,
                alibi_slopes.data_ptr() if self.alibi else 0,
                cache_batch_idx.data_ptr() if self.pool else 0),
            _current_stream(self.device_index))
        # The inputs and the workspace stay referenced until the launch is
        # queued; the caching allocator orders their reuse on the stream.
        del workspace
        return o, lse


_decode_templates = _Templates()


def decode_launch(q, k_cache, v_cache, cache_seqlens, block_table, seq_new,
                  causal, scale, window_left, window_right, softcap,
                  num_splits, k_descale=None, v_descale=None,
                  leftpad=False, alibi=0, pool=False):
    """The DecodeLaunch of these arguments' signature (`leftpad`: the
    launch takes cache_leftpad; `alibi` 1 or 2: alibi_slopes of [Hq] or
    [B, Hq]; `pool`: cache_batch_idx)."""
    key = (q.device, _meta(q), _meta(k_cache), _meta(v_cache),
           cache_seqlens.shape, _meta(block_table), seq_new, causal, scale,
           window_left, window_right, softcap, num_splits, _meta(k_descale),
           _meta(v_descale), leftpad, alibi, pool)
    return _decode_templates.get(key, lambda: DecodeLaunch(
        q, k_cache, v_cache, cache_seqlens, block_table, seq_new, causal,
        scale, window_left, window_right, softcap, num_splits, k_descale,
        v_descale, leftpad, alibi, pool))


@torch.library.custom_op("flashfuse::attention_kvcache", mutates_args=(),
                         device_types="cuda")
def attention_kvcache(q: torch.Tensor, k_cache: torch.Tensor,
                      v_cache: torch.Tensor, cache_seqlens: torch.Tensor,
                      block_table: Optional[torch.Tensor], seq_new: int,
                      causal: int, scale: float, window_left: int,
                      window_right: int, softcap: float, num_splits: int,
                      k_descale: Optional[torch.Tensor] = None,
                      v_descale: Optional[torch.Tensor] = None,
                      cache_leftpad: Optional[torch.Tensor] = None,
                      alibi_slopes: Optional[torch.Tensor] = None,
                      cache_batch_idx: Optional[torch.Tensor] = None
                      ) -> tuple[torch.Tensor, torch.Tensor]:
    """(O [B, Sq, Hq, Dv], LSE f32 [B, Hq, Sq]) of q [B, Sq, Hq, D] over
    the caches (contiguous [B, C, Hkv, D], or paged [num_pages, page_size,
    Hkv, D] through block_table i32 [B, max_pages]), sequence b attending
    to its first cache_seqlens[b] + seq_new rows (from row
    cache_leftpad[b] on, where given), its keys split between
    num_splits blocks (0: the runtime chooses). The caches are read in
    place; the caller (flashfuse.attention_with_kvcache) has checked the
    shapes and appended the new rows (kvcache_append). An FP8 cache
    (float8_e4m3fn) comes with its f32 k_descale and v_descale; ALiBi
    with its f32 slopes [Hq] or [B, Hq]; contiguous caches that hold a
    pool of sequences (dim 0 the pool's size) with cache_batch_idx i32
    [B], sequence b's row of the pool."""
    return attention_kvcache_eager(q, k_cache, v_cache, cache_seqlens,
                                   block_table, seq_new, causal, scale,
                                   window_left, window_right, softcap,
                                   num_splits, k_descale, v_descale,
                                   cache_leftpad, alibi_slopes,
                                   cache_batch_idx)


def attention_kvcache_eager(q, k_cache, v_cache, cache_seqlens, block_table,
                            seq_new, causal, scale, window_left,
                            window_right, softcap, num_splits,
                            k_descale=None, v_descale=None,
                            cache_leftpad=None, alibi_slopes=None,
                            cache_batch_idx=None):
    """The body of flashfuse::attention_kvcache, called directly by eager
    decoding steps (see kvcache_append_eager). With an FP8 (e4m3) cache,
    k_descale and v_descale (f32, [] / [1] or [B, Hkv], on q's device) are
    the caller's, checked by flashfuse.attention_with_kvcache."""
    return decode_launch(
        q, k_cache, v_cache, cache_seqlens, block_table, seq_new, causal,
        scale, window_left, window_right, softcap, num_splits, k_descale,
        v_descale, cache_leftpad is not None,
        0 if alibi_slopes is None else alibi_slopes.dim(),
        cache_batch_idx is not None)(
            q, k_cache, v_cache, cache_seqlens, block_table, k_descale,
            v_descale, cache_leftpad=cache_leftpad, alibi_slopes=alibi_slopes,
            cache_batch_idx=cache_batch_idx)


@attention_kvcache.register_fake
def _(q, k_cache, v_cache, cache_seqlens, block_table, seq_new, causal, scale,
      window_left, window_right, softcap, num_splits, k_descale=None,
      v_descale=None, cache_leftpad=None, alibi_slopes=None,
      cache_batch_idx=None):
    return _kvcache_outputs(q, v_cache.shape[-1])
