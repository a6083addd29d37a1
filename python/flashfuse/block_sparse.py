"""flashfuse.block_sparse_attention: attention over the key blocks that
block-sparse lists name, in FlexAttention's BlockMask layout
(docs/KERNEL_ABI.md "Block-sparse", flash.attention's "Block-sparse"
paragraph in FlashOps.td).

The lists are kv_num_blocks [B', H', QB] and kv_indices [B', H', QB, N]
(int32, B' in {1, B}, H' in {1, Hq}), and optionally full_kv_num_blocks /
full_kv_indices shaped alike: query block qb of (b, h) attends to the key
blocks kv_indices[b, h, qb, :kv_num_blocks[b, h, qb]] through the op's
masks (there is no mask_mod here: a partial block is masked only by the
causal flag and the key-length tail) and to the full blocks without mask
work. A torch FlexAttention BlockMask passes straight through
(`block_mask=`), or the four tensors with `block_size`.

Differentiable: with inputs that require grad, the backward launches the
preprocess, the transposition of the lists (query blocks per key block,
built on the GPU into a workspace), the main backward kernel walking them
and the postprocess, all from the artifact of the forward's variant
(docs/KERNEL_ABI.md "Block-sparse backward"). The transposed lists are
kept for the next steps while the same list tensors come back unmodified
(a training loop passes one BlockMask to every step): the transposition
then runs once, as FlexAttention builds its q-lists once per BlockMask.

The sm90ws forward (Hopper) takes its tiles in tile_order's order (long
rows first, docs/KERNEL_ABI.md "Block-sparse"), and the sm90ws backward's
main kernel its key blocks in key_tile_order's (long columns first), each
computed on the GPU once per list tensors and kept like the transposed
lists; FLASHFUSE_BLOCK_SPARSE_GRID_ORDER=1 keeps the grids' own orders.
"""

import collections
import weakref

import torch

from . import _kernels, ops
from . import _runtime as rt
from .ops import _DTYPES, _capability, _meta, _poison, _readable, _span
from ._env import EnvFlag

_NAME = "flashfuse.block_sparse_attention"

# Set to 1 to check the lists on every call (sorted, in range, disjoint;
# one host synchronisation): a debug switch for a whole program.
CHECK_ENV = "FLASHFUSE_CHECK_BLOCK_SPARSE"
_check_env = EnvFlag(CHECK_ENV)


def _lists_of(block_mask, kv_num_blocks, kv_indices, full_kv_num_blocks,
              full_kv_indices, block_size):
    """(num, idx, full_num, full_idx, (BQ, BK)) from a BlockMask or the four
    tensors."""
    if isinstance(block_mask, (tuple, list)):
        # The four tensors (or the partial pair) in BlockMask's order.
        if len(block_mask) not in (2, 4):
            raise ValueError(f"{_NAME}: block_mask as a tuple is (kv_num_blocks,"
                             " kv_indices[, full_kv_num_blocks, "
                             f"full_kv_indices]), got {len(block_mask)} items")
        tensors = list(block_mask) + [None] * (4 - len(block_mask))
        return _lists_of(None, *tensors, block_size)
    if block_mask is not None:
        if kv_num_blocks is not None or kv_indices is not None:
            raise ValueError(f"{_NAME}: pass either block_mask or the lists, "
                             "not both")
        for attr in ("kv_num_blocks", "kv_indices", "BLOCK_SIZE"):
            if not hasattr(block_mask, attr):
                raise TypeError(f"{_NAME}: block_mask must be a FlexAttention "
                                f"BlockMask (it has no '{attr}')")
        size = block_mask.BLOCK_SIZE
        size = (size, size) if isinstance(size, int) else tuple(size)
        return (block_mask.kv_num_blocks, block_mask.kv_indices,
                getattr(block_mask, "full_kv_num_blocks", None),
                getattr(block_mask, "full_kv_indices", None), size)
    if kv_num_blocks is None or kv_indices is None:
        raise ValueError(f"{_NAME}: needs block_mask, or kv_num_blocks and "
                         "kv_indices")
    if (full_kv_num_blocks is None) != (full_kv_indices is None):
        raise ValueError(f"{_NAME}: full_kv_num_blocks and full_kv_indices "
                         "come together")
    size = (block_size, block_size) if isinstance(block_size, int) \
        else tuple(block_size)
    return kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices, size


def _check_shapes(q, k, v, lists, size):
    num, idx, fnum, fidx = lists
    for name, t in (("query", q), ("key", k), ("value", v)):
        if not isinstance(t, torch.Tensor) or t.dim() != 4:
            raise ValueError(f"{_NAME}: {name} must be a [B, H, S, D] tensor")
        if t.dtype not in _DTYPES:
            raise TypeError(f"{_NAME}: {name} is {t.dtype}; float16 and "
                            "bfloat16 are supported")
    b, hq, sq, _ = q.shape
    bq, bk = size
    if bq <= 0 or bk <= 0:
        raise ValueError(f"{_NAME}: block sizes must be positive, got {size}")
    qb = -(-sq // bq)
    for nname, n, iname, i in (("kv_num_blocks", num, "kv_indices", idx),
                               ("full_kv_num_blocks", fnum, "full_kv_indices",
                                fidx)):
        if n is None:
            continue
        for name, t, rank in ((nname, n, 3), (iname, i, 4)):
            if not isinstance(t, torch.Tensor) or t.dtype != torch.int32:
                raise TypeError(f"{_NAME}: {name} must be an int32 tensor")
            if t.dim() != rank:
                raise ValueError(f"{_NAME}: {name} must have rank {rank}, got "
                                 f"shape {tuple(t.shape)}")
            if t.device != q.device:
                raise ValueError(f"{_NAME}: {name} is on {t.device}, query "
                                 f"on {q.device}")
        if (n.shape[0] not in (1, b) or n.shape[1] not in (1, hq)
                or n.shape[2] != qb):
            raise ValueError(
                f"{_NAME}: {nname} must be [B or 1, Hq or 1, QB] = [{b} or 1, "
                f"{hq} or 1, {qb}] (QB = ceil(Sq / {bq})), got "
                f"{tuple(n.shape)}")
        if tuple(i.shape[:3]) != tuple(n.shape):
            raise ValueError(f"{_NAME}: {iname} must be [{', '.join(map(str, n.shape))}, N],"
                             f" got {tuple(i.shape)}")


def check_lists(lists, seq_k, block_k):
    """The lists' contract, on their device (one synchronisation): counts in
    [0, N], each row's first count entries in [0, KB) and strictly
    increasing, and no block both partial and full. Raises ValueError naming
    the first offending (list, b, h, qb)."""
    num, idx, fnum, fidx = lists
    kb = -(-seq_k // block_k)
    rows = {}
    for name, n, i in (("kv", num, idx), ("full_kv", fnum, fidx)):
        if n is None:
            continue
        slots = i.shape[-1]
        bad_count = (n < 0) | (n > slots)
        if bool(bad_count.any()):
            at = tuple(int(x) for x in bad_count.nonzero()[0])
            raise ValueError(f"{_NAME}: {name}_num_blocks{list(at)} = "
                             f"{int(n[at])} is outside [0, {slots}]")
        used = (torch.arange(slots, device=i.device) < n.unsqueeze(-1).long())
        out = used & ((i < 0) | (i >= kb))
        if bool(out.any()):
            at = tuple(int(x) for x in out.nonzero()[0])
            raise ValueError(f"{_NAME}: {name}_indices{list(at)} = "
                             f"{int(i[at])} is outside [0, {kb}) (KB = "
                             f"ceil({seq_k} / {block_k}))")
        if slots > 1:
            pair = used[..., 1:]
            unsorted = pair & (i[..., 1:] <= i[..., :-1])
            if bool(unsorted.any()):
                at = tuple(int(x) for x in unsorted.nonzero()[0])
                raise ValueError(f"{_NAME}: {name}_indices{list(at[:3])} is "
                                 "not strictly increasing in its first "
                                 f"{name}_num_blocks entries (at slot "
                                 f"{at[3] + 1})")
        # Each row as a membership mask over KB blocks (bounded: indices are
        # in range here).
        member = torch.zeros(*i.shape[:3], kb + 1, dtype=torch.bool,
                             device=i.device)
        member.scatter_(-1, torch.where(used, i.long(), kb), True)
        rows[name] = member[..., :kb]
    if len(rows) == 2:
        both = rows["kv"] & rows["full_kv"]
        if bool(both.any()):
            at = tuple(int(x) for x in both.nonzero()[0])
            raise ValueError(f"{_NAME}: key block {at[3]} is listed both as "
                             f"partial and as full for (b, h, qb) = "
                             f"{at[:3]}")


def _list_args(named, prefix, n, i, family="kv"):
    """The kernel arguments of one list pair (contiguous n [B', H', R], i
    [B', H', R, slots]): `family` "kv" for the forward's lists, "q" for the
    transposed ones."""
    pre = f"{prefix}{family}_"
    named[f"{pre}num_blocks"] = (rt.PARAM_MEMREF, (n.data_ptr(), _span(n)))
    named[f"{pre}indices"] = (rt.PARAM_MEMREF, (i.data_ptr(), _span(i)))
    for name, t in (("num_blocks", n), ("indices", i)):
        for axis, suffix in ((0, "b"), (1, "h")):
            stride = 0 if t.shape[axis] == 1 else t.stride(axis)
            named[f"{pre}{name}_stride_{suffix}"] = (rt.PARAM_I64, stride)
    named[f"{pre}slots"] = (rt.PARAM_I32, i.shape[-1])


def _backward_list_args(lists, seq_q, seq_k, size, transposed=None):
    """The backward's list arguments: the forward's lists (read by the
    transpose kernel) and, per pair, the workspace the transpose kernel
    fills with the transposed pair: counts [B', H', KB] and indices
    [B', H', KB, QB] int32, the forward pair's B' and H'
    (docs/KERNEL_ABI.md "Block-sparse backward"). `transposed`: a
    workspace already filled for these lists (_transposed), passed
    instead of a new one."""
    bq, bk = size
    qb, kb = -(-seq_q // bq), -(-seq_k // bk)
    named, workspace = {}, []
    given = iter(transposed or ())
    for prefix, n, i in (("", lists[0], lists[1]), ("full_", lists[2],
                                                    lists[3])):
        if n is None:
            continue
        _list_args(named, prefix, n, i)
        if transposed is not None:
            t_num, t_idx = next(given), next(given)
        else:
            b_, h_ = n.shape[:2]
            t_num = n.new_empty(b_, h_, kb)
            t_idx = n.new_empty(b_, h_, kb, qb)
            if ops.poison_requested():
                # Counts the transposition failed to write would walk every
                # slot, of indices past QB: a wrong gradient, never a read
                # out of bounds.
                t_num.fill_(2**31 - 1)
                t_idx.fill_(2**31 - 1)
        _list_args(named, prefix, t_num, t_idx, family="q")
        workspace += [t_num, t_idx]
    return named, workspace


class ListsCache:
    """What was derived from recent lists (the backward's transposed lists,
    the forward's tile order), reused while the list tensors are the same
    objects, unmodified since (torch's version counter: any in-place write
    bumps it), for the same `key` (sizes, device, stream: whatever else the
    value depends on). `capacity` entries, the least recently used dropped
    first."""

    def __init__(self, capacity=4):
        self.capacity = capacity
        self._entries = collections.OrderedDict()

    @staticmethod
    def _key(lists, key):
        present = tuple(t for t in lists if t is not None)
        return (tuple(id(t) for t in present), str(present[0].device)) + key

    def get(self, lists, *key):
        """The value put for `lists` and `key`, or None."""
        key = self._key(lists, key)
        entry = self._entries.get(key)
        if entry is None:
            return None
        refs, versions, value = entry
        present = [t for t in lists if t is not None]
        # id() may be reused by a new tensor once the old one is freed: the
        # weak references tell the same objects apart.
        if any(r() is not t or t._version != v
               for r, v, t in zip(refs, versions, present)):
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return value

    def put(self, lists, *key_and_value):
        """Keeps the last argument for `lists` and the key before it."""
        *key, value = key_and_value
        # Entries whose lists are gone can never be hit again.
        for k in [k for k, (refs, _, _) in self._entries.items()
                  if any(r() is None for r in refs)]:
            del self._entries[k]
        present = [t for t in lists if t is not None]
        key = self._key(lists, tuple(key))
        self._entries[key] = ([weakref.ref(t) for t in present],
                              [t._version for t in present], value)
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def clear(self):
        self._entries.clear()


# The transposed lists of recent backward steps, by (Sq, Sk, block size,
# stream): each holds B' x H' x KB x (QB + 1) int32 per list pair (1 MiB per
# head at 16k keys and 128 x 128 blocks).
_transposed = ListsCache()
# The tile orders of recent forwards (tile_order), by (B, Hq, Sq, block_m,
# BQ, stream): B x Hq x ceil(Sq / block_m) int32 each; and of backwards
# (key_tile_order), by ("keys", B, Hq, Sk, block_n, BK, stream).
_tile_orders = ListsCache(capacity=8)

# Set to 1 to launch the sm90ws forward's tiles and the sm90ws backward's
# key blocks in the grids' orders instead of tile_order's and
# key_tile_order's (an A/B switch for timing, and the tests' baseline).
GRID_ORDER_ENV = "FLASHFUSE_BLOCK_SPARSE_GRID_ORDER"
_grid_order_env = EnvFlag(GRID_ORDER_ENV)

# A row this many times as long as the mean (listed blocks, partial and
# full) goes ahead of every other tile in tile_order.
_LONG_ROW_RATIO = 2


def tile_order(lists, batch, heads_q, seq_q, block_m, block_q):
    """The order the blocks of a forward that takes `kv_tile_order`
    (docs/KERNEL_ABI.md "Block-sparse") take their tiles in: int32
    [B * Hq * ceil(Sq / block_m)] on the lists' device, entry i the tile of
    the i-th block the hardware launches, (batch << 24) | (head << 16) |
    query block; None where a field would not fit (B or Hq above 256, more
    than 65536 query blocks), for the grid's own order.

    One block a tile, the hardware starts blocks in launch order as SMs
    free up, so a long tile launched late finishes after every other: with
    a sliding window and global tokens, the global query rows of the last
    heads ran alone for a fifth of the call (docs/PERF.md run 412). Longest
    first, but where it keeps L2's reuse: the rows more than twice as long
    as the mean go ahead of all the others, longest first; the rest stay
    head-major (the blocks running together share their heads' K and V),
    longest first within a head (a causal or prefix-LM BlockMask's last
    rows are its longest). Computed on the GPU, no synchronisation."""
    tiles_m = -(-seq_q // block_m)
    if batch > 256 or heads_q > 256 or tiles_m > 65536:
        return None
    num, idx, fnum, fidx = lists
    shape = (batch, heads_q, num.shape[-1])
    # A row's length as the kernel walks it: each count clamped into
    # [0, slots] (KERNEL_ABI.md "Block-sparse"; flashfuse-compile's
    # tileOrderOf does the same for compile-time lists).
    counts = num.expand(shape).clamp(0, idx.shape[-1])
    if fnum is not None:
        counts = counts + fnum.expand(shape).clamp(0, fidx.shape[-1])
    # A list row covers block_q // block_m kernel query blocks.
    counts = counts.repeat_interleave(block_q // block_m, dim=-1)
    return _order_by_length(counts[..., :tiles_m])


def key_tile_order(lists, batch, heads_q, seq_k, block_n, block_k):
    """tile_order's order for the block-sparse backward's main kernel, whose
    tiles are key blocks (of block_n keys; a block's column of the lists
    is its walk): int32 [B * Hq * ceil(Sk / block_n)], entry (batch << 24)
    | (head << 16) | key block; None where a field would not fit. A key
    block's length is how many query blocks list it, partial or full
    (what the transposition writes, counted here from the forward's lists
    so that the order needs no result of the transposition): a sliding
    window with global tokens has the global keys' long columns as the
    forward has the global queries' long rows."""
    tiles_n = -(-seq_k // block_n)
    if batch > 256 or heads_q > 256 or tiles_n > 65536:
        return None
    key_blocks = -(-seq_k // block_k)
    counts = None
    for num, idx in ((lists[0], lists[1]), (lists[2], lists[3])):
        if num is None:
            continue
        slots = idx.shape[-1]
        listed = (torch.arange(slots, device=idx.device)
                  < num.clamp(0, slots).unsqueeze(-1))
        listed &= (idx >= 0) & (idx < key_blocks)
        # Entries not listed count into a bin past the last key block.
        bins = torch.where(listed, idx, key_blocks).to(torch.int64)
        column = torch.zeros(*idx.shape[:2], key_blocks + 1,
                             dtype=torch.int64, device=idx.device)
        column.scatter_add_(-1, bins.flatten(2), listed.flatten(2).long())
        column = column[..., :key_blocks].expand(batch, heads_q, key_blocks)
        counts = column if counts is None else counts + column
    counts = counts.repeat_interleave(block_k // block_n, dim=-1)
    return _order_by_length(counts[..., :tiles_n])


def _order_by_length(counts):
    """The launch order of tiles [B, Hq, T] of `counts` listed blocks each
    (tile_order's policy), encoded (batch << 24) | (head << 16) | tile."""
    _, heads_q, tiles = counts.shape
    c = counts.reshape(-1).to(torch.int64)
    position = torch.arange(c.numel(), device=c.device)
    span = c.max() + 1
    longest_first = span - 1 - c
    long_row = c * c.numel() > _LONG_ROW_RATIO * c.sum()
    head_major = (1 + position // tiles) * span + longest_first
    tile = torch.argsort(torch.where(long_row, longest_first, head_major),
                         stable=True)
    block = tile % tiles
    head = (tile // tiles) % heads_q
    batch_index = tile // (tiles * heads_q)
    return ((batch_index << 24) | (head << 16) | block).to(torch.int32)


def block_sparse_attention(query, key, value, block_mask=None, *,
                           kv_num_blocks=None, kv_indices=None,
                           full_kv_num_blocks=None, full_kv_indices=None,
                           block_size=128, is_causal=False, scale=None,
                           enable_gqa=False, check=None, deterministic=False,
                           alibi_slopes=None):
    """O [B, Hq, Sq, Dv] of attention over the listed key blocks (module
    docstring). `check` (default: FLASHFUSE_CHECK_BLOCK_SPARSE=1) runs
    check_lists before the launch; the kernel itself never reads out of
    bounds, whatever the lists hold. `deterministic=True` (or torch's
    deterministic mode) makes the backward use a deterministic artifact
    (flashfuse-compile --deterministic: dQ without atomics).
    `alibi_slopes` (flash-attn's name, float32 [Hq] or [B, Hq]) adds
    flash-attn's ALiBi bias -slope * |i + Sk - Sq - j| to every visible
    score (flashfuse.alibi): FlexAttention's BlockMask with its ALiBi
    score_mod, on kernels compiled on first use."""
    num, idx, fnum, fidx, size = _lists_of(
        block_mask, kv_num_blocks, kv_indices, full_kv_num_blocks,
        full_kv_indices, block_size)
    lists = (num, idx, fnum, fidx)
    _check_shapes(query, key, value, lists, size)
    if query.shape[1] != key.shape[1] and not enable_gqa:
        raise ValueError(f"{_NAME}: query has {query.shape[1]} heads and key "
                         f"{key.shape[1]}; pass enable_gqa=True")
    if key.shape[1] == 0 or query.shape[1] % key.shape[1]:
        raise ValueError(f"{_NAME}: query's heads ({query.shape[1]}) must be "
                         f"a multiple of key's ({key.shape[1]})")
    if (tuple(key.shape[:3]) != tuple(value.shape[:3])
            or query.shape[-1] != key.shape[-1]
            or query.shape[0] != key.shape[0]):
        raise ValueError(f"{_NAME}: mismatched shapes: query "
                         f"{tuple(query.shape)}, key {tuple(key.shape)}, value "
                         f"{tuple(value.shape)}")
    if is_causal not in (False, True, "top_left", "bottom_right"):
        raise ValueError(f"{_NAME}: is_causal must be a bool, 'top_left' or "
                         f"'bottom_right', got {is_causal!r}")
    if alibi_slopes is not None:
        from . import alibi
        alibi.check_slopes(alibi_slopes, query.shape[0], query.shape[1],
                           name=_NAME)
        alibi.check_lengths(query.shape[2], key.shape[2], name=_NAME)
    if query.device.type != "cuda":
        raise ValueError(f"{_NAME} runs on CUDA tensors; query is on "
                         f"{query.device}")
    if check is None:
        check = _check_env()
    if check:
        check_lists(lists, key.shape[2], size[1])
    causal = {False: 0, True: 1, "top_left": 1, "bottom_right": 2}[is_causal]
    scale = scale if scale is not None else query.shape[-1] ** -0.5
    lists = tuple(t.contiguous() if t is not None else None for t in lists)
    mode = 2 if lists[2] is not None else 1
    sparse = (mode,) + tuple(size)
    deterministic = bool(deterministic) or (
        torch.are_deterministic_algorithms_enabled()
        and not torch.is_deterministic_algorithms_warn_only_enabled())
    if alibi_slopes is not None:
        alibi.check_device(alibi_slopes, query, name=_NAME)
        return alibi.block_sparse_attention(query, key, value, lists, size,
                                            alibi_slopes, causal, scale,
                                            deterministic)
    if torch.is_grad_enabled() and any(
            t.requires_grad for t in (query, key, value)):
        return _BlockSparseAttention.apply(query, key, value, lists, sparse,
                                           causal, scale, deterministic)
    return _forward(query, key, value, lists, sparse, causal, scale)[0]


def _forward(query, key, value, lists, sparse, causal, scale):
    """(O, LSE) by the block-sparse forward kernel of `sparse` = (1 or 2,
    BQ, BK) over contiguous lists."""
    q, k, v = (_readable(t) for t in (query, key, value))
    key_ = (q.device.index, _meta(q), _meta(k), _meta(v),
            tuple(_meta(t) for t in lists), sparse, causal, scale)
    launch = _forward_launches.get(key_, lambda: _ForwardLaunch(
        q, k, v, lists, sparse, causal, scale))
    return launch(q, k, v, lists)


def _list_addresses(lists):
    """(name, address) of the forward lists' memref arguments, as
    _list_args names them."""
    out = []
    for prefix, n, i in (("", lists[0], lists[1]), ("full_", lists[2],
                                                    lists[3])):
        if n is not None:
            out += [(f"{prefix}kv_num_blocks", n.data_ptr()),
                    (f"{prefix}kv_indices", i.data_ptr())]
    return out


class _ForwardLaunch:
    """The block-sparse forward of one signature (_forward's key): its
    kernel and every size, stride and scalar packed once (rt.ArgTemplate);
    a call allocates O and LSE, fills in the addresses and launches."""

    def __init__(self, q, k, v, lists, sparse, causal, scale):
        variant = rt.Variant(rt.KIND_FORWARD, _DTYPES[q.dtype], q.shape[-1],
                             v.shape[-1], causal)
        (variant.block_sparse, variant.sparse_block_q,
         variant.sparse_block_k) = sparse
        capability = _capability(q.device.index)
        self.kernel = _kernels.kernel(q.device.index, variant,
                                      capability=capability)
        directory, index = _kernels.locate(variant, capability=capability)
        # (B, Hq, Sq, block_m, BQ) where the kernel takes a tile order.
        self.order = None
        if "kv_tile_order" in _kernels.param_names(directory, index):
            self.order = (q.shape[0], q.shape[1], q.shape[2],
                          _kernels.info(directory, index).block_m, sparse[1])
        o, lse = self._outputs(q, v)
        named = {}
        for name, t in (("q", q), ("k", k), ("v", v), ("o", o),
                        ("lse", lse)):
            named[name] = (rt.PARAM_MEMREF, (t.data_ptr(), _span(t)))
        for name, t in (("q", q), ("k", k), ("v", v), ("o", o)):
            for axis, suffix in ((0, "b"), (1, "h"), (2, "s")):
                named[f"{name}_stride_{suffix}"] = (rt.PARAM_I64,
                                                    t.stride(axis))
        b, hq, sq, _ = q.shape
        for name, value_ in (("batch", b), ("heads_q", hq),
                             ("heads_kv", k.shape[1]), ("seq_q", sq),
                             ("seq_k", k.shape[2]), ("window_left", -1),
                             ("window_right", -1)):
            named[name] = (rt.PARAM_I32, value_)
        named["scale"] = (rt.PARAM_F32, scale)
        named["softcap"] = (rt.PARAM_F32, 0.0)
        named["dropout_p"] = (rt.PARAM_F32, 0.0)
        named["seed"] = (rt.PARAM_I64, 0)
        _list_args(named, "", lists[0], lists[1])
        if lists[2] is not None:
            _list_args(named, "full_", lists[2], lists[3])
        if self.order is not None:
            named["kv_tile_order"] = (rt.PARAM_I64, 0)
        self.args = rt.ArgTemplate(named)

    @staticmethod
    def _outputs(q, v):
        b, hq, sq, _ = q.shape
        return (q.new_empty(b, hq, sq, v.shape[-1]),
                q.new_empty(b, hq, sq, dtype=torch.float32))

    def _tile_order(self, lists, stream):
        """The address of tile_order's order for `lists` (kept in
        _tile_orders while they are), 0 for the grid's own."""
        if self.order is None or _grid_order_env():
            return 0
        order = _tile_orders.get(lists, *self.order, stream)
        if order is None:
            order = tile_order(lists, *self.order)
            _tile_orders.put(lists, *self.order, stream, order)
        return 0 if order is None else order.data_ptr()

    def __call__(self, q, k, v, lists):
        o, lse = self._outputs(q, v)
        _poison(o, lse)
        context, stream = ops._launch_context(q.device)
        integers = ()
        if self.order is not None:
            integers = (("kv_tile_order", self._tile_order(lists, stream)),)
        args = self.args.fill(
            [("q", q.data_ptr()), ("k", k.data_ptr()), ("v", v.data_ptr()),
             ("o", o.data_ptr()), ("lse", lse.data_ptr())]
            + _list_addresses(lists), integers)
        with context:
            rt.launch_packed(self.kernel, args, stream, allow_unused=False)
        return o, lse


_forward_launches = ops._Templates()


def _backward(dout, query, key, value, out, lse, lists, sparse, causal,
              scale, deterministic=False):
    """(dQ, dK, dV) by the block-sparse backward sequence: the dense
    backward's launcher (ops._launch_backward) with the transposition of
    the lists before the main kernel."""
    plan = ops._backward_plan(
        query.device.index,
        (query, key, value, None, None, causal, -1, -1, 0.0, 0.0),
        deterministic=deterministic, block_sparse=sparse)
    grad_q, grad_k, grad_v = (ops._grad_like(t) for t in (query, key, value))
    dout, q, k, v, out = (_readable(t) for t in (dout, query, key, value, out))
    seq_q, seq_k, size = q.shape[2], k.shape[2], sparse[1:]
    stream = ops._launch_context(q.device)[1]
    transposed = _transposed.get(lists, seq_q, seq_k, size, stream)
    extra, workspace = _backward_list_args(lists, seq_q, seq_k, size,
                                           transposed)
    if transposed is not None:
        # The sequence of _backward_plan(block_sparse=...) is preprocess,
        # transposition, main kernel, ...: the lists are transposed already.
        plan = plan[:1] + plan[2:]
    integers = ()
    main = [kernel for kernel, names in plan if "kv_tile_order" in names]
    if main:
        extra["kv_tile_order"] = (rt.PARAM_I64, 0)
        integers = (("kv_tile_order",
                     _key_tile_order(lists, q.shape[:2], seq_k, main[0],
                                     size[1], stream)),)
    ops._launch_backward(plan, dout, q, k, v, out, lse, None, None, grad_q,
                         grad_k, grad_v, scale, -1, -1, 0.0, extra=extra,
                         integers=integers)
    if transposed is None:
        _transposed.put(lists, seq_q, seq_k, size, stream, workspace)
    return grad_q, grad_k, grad_v


def _key_tile_order(lists, batch_heads, seq_k, kernel, block_k, stream):
    """The address of key_tile_order's order for the backward's main
    `kernel` over `lists` (kept in _tile_orders while they are), 0 for the
    grid's own."""
    if _grid_order_env():
        return 0
    key = ("keys",) + tuple(batch_heads) + (
        seq_k, rt.kernel_info(kernel).block_n, block_k, stream)
    order = _tile_orders.get(lists, *key)
    if order is None:
        order = key_tile_order(lists, *key[1:-1])
        _tile_orders.put(lists, *key, order)
    return 0 if order is None else order.data_ptr()


class _BlockSparseAttention(torch.autograd.Function):
    """block_sparse_attention with autograd: the forward saves O and LSE,
    the backward recomputes P block by block over the same lists."""

    @staticmethod
    def forward(ctx, query, key, value, lists, sparse, causal, scale,
                deterministic):
        o, lse = _forward(query, key, value, lists, sparse, causal, scale)
        ctx.save_for_backward(query, key, value, o, lse,
                              *(t for t in lists if t is not None))
        ctx.sparse, ctx.causal, ctx.scale = sparse, causal, scale
        ctx.deterministic = deterministic
        return o

    @staticmethod
    def backward(ctx, dout):
        query, key, value, o, lse, *saved = ctx.saved_tensors
        lists = tuple(saved) + (None,) * (4 - len(saved))
        grads = _backward(dout, query, key, value, o, lse, lists, ctx.sparse,
                          ctx.causal, ctx.scale, ctx.deterministic)
        return grads + (None,) * 5
