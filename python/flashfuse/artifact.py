"""Running the kernels of one artifact directory that flashfuse-compile wrote
from a model: `forward(directory, query, key, value)` returns (O, LSE), and
`backward(directory, grad_out, query, key, value, out, lse)` (dQ, dK, dV)
from the artifact's backward sequence.

Made for a model whose attention has a mask_mod over indices only (sliding
window with global tokens, prefix-LM, ...): flashfuse-compile derives its
block-sparse lists at compile time and the artifact carries them
(docs/KERNEL_ABI.md "Block-sparse", `bound` lines), so nothing but Q, K and
V is passed and the runtime fills the lists in; the launch sizes must be the
ones they were derived for (`bound_for`), which is checked here before the
launch (and again by the runtime). Any forward kernel of an artifact
without bias, mask, dropout, varlen or FP8 operands runs the same way; one
whose lists host code computes at run time (a document mask over its ids)
takes them as `block_mask=`.

    o, lse = flashfuse.artifact.forward("out/", q, k, v)

A varlen kernel (a packed batch, docs/KERNEL_ABI.md "Varlen") takes the
packed tensors as their [1, H, total, D] views and the offsets in
`varlen=(cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k)`; its
regions see each sequence as its own batch (FlashOps.td).

A kernel whose score_mod / mask_mod reads values from above its op (per-head
ALiBi slopes, document ids; docs/KERNEL_ABI.md "Values captured by score_mod
and mask_mod") takes them in `captures`, in the order the manifest lists them
(`captures` line, `kernel_info(...).captures`): CUDA tensors of the IR's
element type and rank, Python numbers for scalars.

    o, lse = flashfuse.artifact.forward("out/", q, k, v, captures=[slopes])
    dq, dk, dv = flashfuse.artifact.backward("out/", do, q, k, v, o, lse,
                                             captures=[slopes])

A kernel of an op with ALiBi (`alibi(...)`, variant alibi 1 or 2) takes
its slopes as `alibi_slopes=`, f32 [Hq] or [B, Hq] (flash-attn's; with
varlen B is the number of sequences).

`kernel_info` and `check_sizes` need neither torch nor a GPU.
"""

import os
import threading
from typing import NamedTuple

from . import _kernels
from . import _runtime as rt
from .errors import KernelNotFoundError

_NAME = "flashfuse.artifact"

# (artifact dir, kernel name or None) -> ArtifactKernel: a manifest and its
# list file are read and checked once, not at every launch.
_infos = {}
# _backward_plan's plans by (directory, main kernel, device): the kernel
# search it does is per call otherwise, host time a backward whose GPU time
# is about a millisecond cannot spare.
_plans = {}
_lock = threading.Lock()


class ArtifactKernel(NamedTuple):
    """A forward kernel of an artifact, as its manifest describes it."""
    directory: str
    name: str
    index: int
    variant: rt.Variant
    params: tuple       # (type name, param name), in launch order
    block_m: int        # query rows a block (a tile) of the kernel
    num_bound: int      # params the artifact binds
    bound_for: dict     # {size name: value} the bound lists hold for
    captures: tuple = ()  # (element type, rank; -1: scalar) per captured value


def kernel_info(directory, kernel=None, kind=None):
    """The forward kernel `kernel` (a name) of the artifact in `directory`,
    or its only forward kernel (`kind` rt.KIND_BACKWARD: the backward's
    main kernel, as backward() launches it); ValueError naming the choices
    otherwise, or when the kernel takes inputs forward() / backward() does
    not pass. Read once per directory and kernel."""
    kind = rt.KIND_FORWARD if kind is None else kind
    key = (os.path.realpath(directory), kernel, kind)
    with _lock:
        info = _infos.get(key)
    if info is None:
        info = _read_kernel_info(directory, kernel, kind)
        with _lock:
            _infos[key] = info
    return info


def _read_kernel_info(directory, kernel, kind):
    m = rt.Manifest.open(directory)
    infos = m.kernels()
    names = [info.name.decode() for info in infos]
    function = "forward" if kind == rt.KIND_FORWARD else "backward"
    if kernel is not None:
        if kernel not in names:
            raise ValueError(f"{_NAME}: no kernel '{kernel}' in {directory}; "
                             f"it has: {', '.join(names)}")
        index = names.index(kernel)
    else:
        candidates = [i for i, info in enumerate(infos)
                      if info.variant.kind == kind]
        if len(candidates) != 1:
            raise ValueError(
                f"{_NAME}: {directory} has {len(candidates)} {function} kernels"
                + (f" ({', '.join(names[i] for i in candidates)})"
                   if candidates else "")
                + "; name one with kernel=")
        index = candidates[0]
    v = infos[index].variant
    what = [flag for flag in ("bias", "mask") if getattr(v, flag)]
    if v.kind != kind:
        what.insert(0, f"kind {v.describe().split()[0]}")
    if v.dtype == rt.DTYPE_E4M3:
        what.append("FP8 operands")
    if what:
        raise ValueError(f"{_NAME}: kernel '{names[index]}' takes "
                         f"{', '.join(what)}, which {function}() does not "
                         "pass")
    num_bound, bound_for = m.bound(index)
    return ArtifactKernel(str(directory), names[index], index, v,
                          tuple(m.params(index)), infos[index].block_m,
                          num_bound, bound_for,
                          tuple(m.captures(index)))


# The torch dtype of a captured tensor of each IR element type (i1 as
# torch.bool: one byte, 0 or 1, as the kernel's i8 reads it; index as i64).
_CAPTURE_DTYPES = {"i1": "bool", "i8": "int8", "i16": "int16",
                   "i32": "int32", "i64": "int64", "index": "int64",
                   "f16": "float16", "bf16": "bfloat16", "f32": "float32"}


# The most elements a captured tensor may span: the kernels compute its
# offsets in 32 bits (docs/KERNEL_ABI.md "Values captured by score_mod and
# mask_mod").
_MAX_CAPTURE_SPAN = 2**31 - 1


def _capture_args(info, captures, device):
    """The named launch arguments of `captures` for kernel `info`, checked
    against the manifest's types: ValueError / TypeError naming the value."""
    import torch

    from .ops import _span

    captures = tuple(captures or ())
    want = ", ".join(f"{e}" if r < 0 else f"tensor of rank {r} of {e}"
                     for e, r in info.captures) or "none"
    if len(captures) != len(info.captures):
        raise ValueError(f"{_NAME}: '{info.name}' takes {len(info.captures)} "
                         f"captured values ({want}), got {len(captures)}")
    kinds = dict((name, kind) for kind, name in info.params)
    named, keep = {}, []
    for i, ((elt, rank), value) in enumerate(zip(info.captures, captures)):
        name = f"capture{i}"
        if rank < 0:
            if isinstance(value, torch.Tensor) or not isinstance(
                    value, (bool, int, float)):
                raise TypeError(f"{_NAME}: captures[{i}] must be a Python "
                                f"number (the kernel reads a scalar {elt})")
            if elt.startswith("f"):
                named[name] = (rt.PARAM_F32, float(value))
                continue
            if isinstance(value, float) and not value.is_integer():
                raise TypeError(f"{_NAME}: captures[{i}] = {value} is not an "
                                f"integer (the kernel reads a scalar {elt})")
            bits = 64 if elt == "index" else int(elt[1:])
            lo = 0 if bits == 1 else -(1 << (bits - 1))
            if not lo <= int(value) < (1 << bits):
                raise ValueError(f"{_NAME}: captures[{i}] = {value} does not "
                                 f"fit the kernel's {elt}")
            kind = rt.PARAM_I64 if kinds[name] == "i64" else rt.PARAM_I32
            named[name] = (kind, int(value))
            continue
        dtype = getattr(torch, _CAPTURE_DTYPES[elt])
        if (not isinstance(value, torch.Tensor) or value.dim() != rank
                or value.dtype != dtype or value.device != device):
            got = (f"{value.dtype} tensor of rank {value.dim()} on "
                   f"{value.device}" if isinstance(value, torch.Tensor)
                   else type(value).__name__)
            raise TypeError(f"{_NAME}: captures[{i}] must be a {dtype} tensor "
                            f"of rank {rank} on {device}, got {got}")
        if value.numel() == 0:
            raise ValueError(f"{_NAME}: captures[{i}] is empty")
        # The kernel reads the last dimension contiguous from a 16-byte
        # aligned base (the runtime checks the base), and addresses the
        # elements in 32 bits.
        t = value.reshape(1) if rank == 0 else value
        copy = (t.shape[-1] > 1 and t.stride(-1) != 1) or t.data_ptr() % 16
        extent = t.numel() if copy else _span(t)
        if extent > _MAX_CAPTURE_SPAN:
            raise ValueError(f"{_NAME}: captures[{i}] spans {extent} "
                             "elements; the kernels address a captured "
                             f"tensor in 32 bits (at most {_MAX_CAPTURE_SPAN})")
        if copy:
            t = t.clone(memory_format=torch.contiguous_format)
        keep.append(t)
        named[name] = (rt.PARAM_MEMREF, (t.data_ptr(), _span(t)))
        for k in range(rank - 1):
            named[f"{name}_stride_{k}"] = (rt.PARAM_I64, t.stride(k))
    return named, keep


def _varlen_args(info, varlen, q, k):
    """(named arguments, tensors to keep alive) of `varlen` = (cu_seqlens_q,
    cu_seqlens_k, max_seqlen_q, max_seqlen_k) for kernel `info` on the
    packed [1, H, total, D] views q and k: the offsets int32 [B + 1] on q's
    device (copied where not contiguous and 16-byte aligned), B >= 1, and
    each max_seqlen in [1, total] (a larger bound is the total). A varlen
    kernel without them, or them without a varlen kernel, is a
    ValueError. The offsets' values are the caller's (the kernels clamp
    them into [0, total]: never an out-of-bounds access)."""
    import torch

    from .ops import _offsets

    if bool(info.variant.varlen) != (varlen is not None):
        raise ValueError(
            f"{_NAME}: kernel '{info.name}' "
            + ("takes a packed batch; pass varlen=(cu_seqlens_q, "
               "cu_seqlens_k, max_seqlen_q, max_seqlen_k)"
               if info.variant.varlen else "takes no varlen="))
    if varlen is None:
        return {}, []
    if len(varlen) != 4:
        raise ValueError(f"{_NAME}: varlen must be (cu_seqlens_q, "
                         "cu_seqlens_k, max_seqlen_q, max_seqlen_k)")
    cu_q, cu_k, max_q, max_k = varlen
    for name, t in (("cu_seqlens_q", cu_q), ("cu_seqlens_k", cu_k)):
        if (not isinstance(t, torch.Tensor) or t.dtype != torch.int32
                or t.dim() != 1 or t.shape[0] < 2 or t.device != q.device):
            raise ValueError(f"{_NAME}: {name} must be an int32 tensor "
                             f"[B + 1] (B >= 1) on {q.device}")
    if cu_q.shape != cu_k.shape:
        raise ValueError(f"{_NAME}: cu_seqlens_q {tuple(cu_q.shape)} and "
                         f"cu_seqlens_k {tuple(cu_k.shape)} differ")
    if q.shape[0] != 1:
        raise ValueError(f"{_NAME}: a packed batch's tensors are [1, H, "
                         f"total, D], got batch {q.shape[0]}")
    named, keep = {}, []
    for name, t in (("cu_seqlens_q", cu_q), ("cu_seqlens_k", cu_k)):
        t = _offsets(t)
        keep.append(t)
        named[name] = (rt.PARAM_MEMREF, (t.data_ptr(), t.shape[0]))
    named["num_seqs"] = (rt.PARAM_I32, cu_q.shape[0] - 1)
    for name, bound, total in (("max_seqlen_q", max_q, q.shape[2]),
                               ("max_seqlen_k", max_k, k.shape[2])):
        if isinstance(bound, bool) or not isinstance(bound, int) or bound < 1:
            raise ValueError(f"{_NAME}: {name} must be an int >= 1, got "
                             f"{bound!r}")
        named[name] = (rt.PARAM_I32, min(bound, total))
    return named, keep


def check_sizes(info, batch, heads_q, heads_kv, seq_q, seq_k, head_dim,
                head_dim_v):
    """ValueError where a launch of these sizes does not fit the kernel: its
    head dims, whole GQA groups, and the sizes its bound lists were derived
    for."""
    v = info.variant
    if (head_dim, head_dim_v) != (v.head_dim, v.head_dim_v):
        raise ValueError(f"{_NAME}: head dims D={head_dim} Dv={head_dim_v}, "
                         f"but '{info.name}' was compiled for D={v.head_dim} "
                         f"Dv={v.head_dim_v}")
    if heads_kv <= 0 or heads_q % heads_kv:
        raise ValueError(f"{_NAME}: query heads ({heads_q}) must be a "
                         f"multiple of key heads ({heads_kv})")
    sizes = {"batch": batch, "heads_q": heads_q, "seq_q": seq_q,
             "seq_k": seq_k}
    for name, derived in info.bound_for.items():
        if name in sizes and sizes[name] != derived:
            held = ", ".join(f"{k} = {x}" for k, x in info.bound_for.items())
            raise ValueError(
                f"{_NAME}: {name} = {sizes[name]}, but the block-sparse lists "
                f"{info.directory} carries for '{info.name}' were derived for "
                f"{held}; compile the model for these sizes")


def _lists_of(info, block_mask, q=None, k=None, v=None, check=False):
    """The key-block lists of a block-sparse kernel from `block_mask` (a
    FlexAttention BlockMask, or the (kv_num_blocks, kv_indices[,
    full_kv_num_blocks, full_kv_indices]) tuple in the kernel's block size),
    contiguous, their shapes checked (with `check` their values too, one
    synchronisation: the kernels never read out of bounds whatever they
    hold); None where the artifact binds them and the caller passes
    none."""
    variant = info.variant
    if block_mask is None:
        if variant.block_sparse and not info.num_bound:
            raise ValueError(
                f"{_NAME}: kernel '{info.name}' takes its block-sparse lists "
                "from the caller (the artifact does not carry them: they were "
                "not known at compile time); pass block_mask=")
        return None
    if not variant.block_sparse:
        raise ValueError(f"{_NAME}: kernel '{info.name}' walks every key "
                         "block; it takes no block_mask")
    from . import block_sparse as bs

    size = (variant.sparse_block_q, variant.sparse_block_k)
    num, idx, fnum, fidx, given = bs._lists_of(block_mask, None, None, None,
                                               None, size)
    if tuple(given) != size:
        raise ValueError(f"{_NAME}: block_mask has blocks {tuple(given)}, but "
                         f"'{info.name}' was compiled for {size}")
    if (fnum is not None) != (variant.block_sparse == 2):
        raise ValueError(f"{_NAME}: '{info.name}' takes "
                         + ("partial and full lists" if variant.block_sparse == 2
                            else "partial lists only")
                         + ", block_mask has "
                         + ("both" if fnum is not None else "partial only"))
    lists = (num, idx, fnum, fidx)
    bs._check_shapes(q, k, v, lists, size)
    if check:
        bs.check_lists(lists, k.shape[2], size[1])
    return tuple(t.contiguous() if t is not None else None for t in lists)


def _forward_list_args(info, lists, q):
    """(named arguments, what must live through the launch) of a forward
    kernel's `lists`: the pairs and, where the kernel takes one, the tile
    order, long rows first as flashfuse.block_sparse_attention orders them
    (0: the grid's own, where its fields would not fit), kept with the
    lists while the same list tensors come back unmodified."""
    from . import block_sparse as bs
    from . import ops

    named = {}
    bs._list_args(named, "", lists[0], lists[1])
    if lists[2] is not None:
        bs._list_args(named, "full_", lists[2], lists[3])
    keep = []
    if any(name == "kv_tile_order" for _, name in info.params):
        key = (q.shape[0], q.shape[1], q.shape[2], info.block_m,
               info.variant.sparse_block_q, ops._current_stream(q.device.index))
        order = bs._tile_orders.get(lists, *key)
        if order is None:
            order = bs.tile_order(lists, *key[:5])
            bs._tile_orders.put(lists, *key, order)
        named["kv_tile_order"] = (rt.PARAM_I64,
                                  0 if order is None else order.data_ptr())
        keep.append(order)
    return named, keep


def _alibi_args(info, slopes, batch, heads_q, device):
    """The named `alibi_slopes` argument of an ALiBi kernel (variant alibi
    1: [Hq], 2: [B, Hq]; `batch` the sequences of a packed call), checked;
    {} for a kernel without ALiBi, which must not be given slopes."""
    import torch

    from .ops import _span

    layout = info.variant.alibi
    if slopes is None:
        if layout:
            raise ValueError(f"{_NAME}: '{info.name}' has ALiBi; pass "
                             "alibi_slopes=")
        return {}
    if not layout:
        raise ValueError(f"{_NAME}: alibi_slopes given, but '{info.name}' "
                         "has no ALiBi")
    want = (heads_q,) if layout == 1 else (batch, heads_q)
    if (not isinstance(slopes, torch.Tensor) or slopes.dtype != torch.float32
            or tuple(slopes.shape) != want or slopes.device != device
            or not slopes.is_contiguous()):
        raise ValueError(f"{_NAME}: '{info.name}' takes alibi_slopes as a "
                         f"contiguous float32 tensor {list(want)} on {device}")
    return {"alibi_slopes": (rt.PARAM_MEMREF, (slopes.data_ptr(),
                                               _span(slopes)))}


def _launch_inputs(info, tensors, window, softcap, captures, block_mask,
                   check, alibi_slopes=None, sequences=None):
    """What forward() and backward() check and pass alike: (the [B, H, S,
    D] tensors of `tensors`, query, key, value first, as the kernels can
    read them; (window_left, window_right); the named arguments of the
    captured values; what must live through the launch; the lists of
    `block_mask`, or None)."""
    import torch

    from .ops import _DTYPES, _readable

    v = info.variant
    for name, t in zip(("query", "key", "value", "out", "grad_out"), tensors):
        if not isinstance(t, torch.Tensor) or t.dim() != 4 or not t.is_cuda:
            raise ValueError(f"{_NAME}: {name} must be a CUDA tensor "
                             "[B, H, S, D]")
        if _DTYPES.get(t.dtype) != v.dtype:
            raise TypeError(f"{_NAME}: {name} is {t.dtype}, but "
                            f"'{info.name}' was compiled for "
                            f"{v.describe().split()[1]}")
    readable = tuple(_readable(t) for t in tensors)
    q, k, val = readable[:3]
    b, hq, sq, d = q.shape
    if (tuple(k.shape[:3]) != tuple(val.shape[:3]) or k.shape[0] != b
            or k.shape[-1] != d):
        raise ValueError(f"{_NAME}: mismatched shapes: query {tuple(q.shape)}, "
                         f"key {tuple(k.shape)}, value {tuple(val.shape)}")
    for name, t in zip(("out", "grad_out"), readable[3:]):
        if tuple(t.shape) != (b, hq, sq, val.shape[-1]):
            raise ValueError(f"{_NAME}: {name} is {tuple(t.shape)}, expected "
                             f"{(b, hq, sq, val.shape[-1])}")
    # Lists of the caller's replace the bound ones and their sizes.
    check_sizes(info if block_mask is None else info._replace(bound_for={}),
                b, hq, k.shape[1], sq, k.shape[2], d, val.shape[-1])
    if window is None:
        window = (info.bound_for.get("window_left", -1),
                  info.bound_for.get("window_right", -1))
        if v.window and "window_left" not in info.bound_for:
            raise ValueError(f"{_NAME}: '{info.name}' has a window; pass "
                             "window=(left, right)")
    if v.softcap and softcap is None:
        raise ValueError(f"{_NAME}: '{info.name}' has a softcap; pass softcap=")
    named, keep = _capture_args(info, captures, q.device)
    named.update(_alibi_args(info, alibi_slopes,
                             b if sequences is None else sequences, hq,
                             q.device))
    lists = None
    if block_mask is not None:
        from .block_sparse import _check_env
        lists = _lists_of(info, block_mask, q, k, val,
                          check=_check_env() if check is None else check)
    return readable, window, named, keep, lists


def _sequences(varlen):
    """The number of packed sequences of `varlen` (forward()'s), or None
    (also for a malformed one, which _varlen_args then refuses)."""
    try:
        return int(varlen[0].shape[0]) - 1
    except (TypeError, AttributeError, IndexError):
        return None


def _dropout_args(info, dropout_p, seed):
    """The dropout_p and seed arguments: p in [0, 1), and above 0 only for
    a kernel with dropout (`dropout 1`), whose keep test draws at seed;
    the backward must be given the forward's p and seed."""
    p = float(dropout_p)
    if not 0.0 <= p < 1.0:
        raise ValueError(f"{_NAME}: dropout_p must be in [0, 1), got {p}")
    if p and not info.variant.dropout:
        raise ValueError(f"{_NAME}: dropout_p = {p}, but '{info.name}' has "
                         "no dropout")
    return p, int(seed)


def forward(directory, query, key, value, *, kernel=None, scale=None,
            window=None, softcap=None, captures=None, block_mask=None,
            check=None, varlen=None, dropout_p=0.0, seed=0,
            alibi_slopes=None):
    """(O [B, Hq, Sq, Dv], LSE f32 [B, Hq, Sq]) of the artifact's forward
    kernel (kernel_info) on CUDA tensors [B, H, S, D] of its dtype; O is
    float32 for an `out_f32 1` kernel, else of that dtype. `scale`
    defaults to 1/sqrt(D); `window` (left, right) is needed by a `window 1`
    kernel unless its bound lists record it, `softcap` by a `softcap 1`
    kernel; `captures`, the values its score_mod / mask_mod read from above
    the op, by a kernel with a `captures` line (the module's docstring);
    `block_mask`, its key-block lists (a FlexAttention BlockMask or the
    lists' tuple, flashfuse.block_sparse_attention's), by a block-sparse
    kernel whose lists the artifact does not carry (lists host code
    computes at run time, such as a document mask's over its ids), whose
    values `check` (default: FLASHFUSE_CHECK_BLOCK_SPARSE=1) checks before
    the launch, as flashfuse.block_sparse_attention does; `varlen`, a
    varlen kernel's offsets and bounds (the module's docstring), with
    which O is allocated in the packed layout ([1, Hq, total, Dv] over a
    [total, Hq, Dv] tensor) and the LSE is [1, Hq, total]; `dropout_p` and
    `seed`, a `dropout 1` kernel's (0: none dropped); `alibi_slopes`, an
    ALiBi kernel's (the module's docstring)."""
    info = kernel_info(directory, kernel)
    dropout_p, seed = _dropout_args(info, dropout_p, seed)
    if block_mask is None:
        _lists_of(info, None)  # refuses a kernel that needs lists

    import torch

    from .ops import _poison, _span

    (q, k, val), window, named, keep, lists = _launch_inputs(
        info, (query, key, value), window, softcap, captures, block_mask,
        check, alibi_slopes, _sequences(varlen))
    if lists is not None:
        listed, ordered = _forward_list_args(info, lists, q)
        named.update(listed)
        keep += ordered
    packed, offsets = _varlen_args(info, varlen, q, k)
    packed.pop("max_seqlen_k", None)  # the forward's grid is over queries
    named.update(packed)
    keep += offsets
    b, hq, sq, d = q.shape
    # An `out_f32 1` kernel writes O unrounded, 4 bytes an element.
    o_dtype = torch.float32 if info.variant.out_f32 else q.dtype
    o = (q.new_empty(sq, hq, val.shape[-1], dtype=o_dtype).unsqueeze(0)
         .transpose(1, 2) if varlen is not None
         else q.new_empty(b, hq, sq, val.shape[-1], dtype=o_dtype))
    lse = q.new_empty(b, hq, sq, dtype=torch.float32)
    _poison(o, lse)
    for name, t in (("q", q), ("k", k), ("v", val), ("o", o), ("lse", lse)):
        named[name] = (rt.PARAM_MEMREF, (t.data_ptr(), _span(t)))
    for name, t in (("q", q), ("k", k), ("v", val), ("o", o)):
        for axis, suffix in enumerate(("b", "h", "s")):
            named[f"{name}_stride_{suffix}"] = (rt.PARAM_I64, t.stride(axis))
    for name, size in (("batch", b), ("heads_q", hq), ("heads_kv", k.shape[1]),
                       ("seq_q", sq), ("seq_k", k.shape[2]),
                       ("window_left", window[0]),
                       ("window_right", window[1])):
        named[name] = (rt.PARAM_I32, size)
    named["scale"] = (rt.PARAM_F32, d ** -0.5 if scale is None else scale)
    named["softcap"] = (rt.PARAM_F32, softcap or 0.0)
    named["dropout_p"] = (rt.PARAM_F32, dropout_p)
    named["seed"] = (rt.PARAM_I64, seed)
    # Without block_mask the lists are not passed: the runtime fills the
    # bound params in.
    handle = _kernels.context(q.device.index).kernel_named(info.directory,
                                                           info.name)
    with torch.cuda.device(q.device):
        rt.kernel_launch(handle, named,
                         torch.cuda.current_stream(q.device).cuda_stream,
                         allow_unused=False)
    return o, lse


def _backward_plan(info, device_index):
    """_plan_backward's plan, kept per artifact, kernel and device."""
    key = (info.directory, info.name, device_index)
    with _lock:
        plan = _plans.get(key)
    if plan is None:
        plan = _plan_backward(info, device_index)
        with _lock:
            _plans[key] = plan
    return plan


def _deterministic_dq_kernel(info):
    """(name, param names) of the backward_dq kernel that goes with the
    deterministic main kernel `info` (one without dq_accum:
    docs/KERNEL_ABI.md "Backward"): the artifact's backward_dq kernel of the
    same variant and the same captured values, found by those rather than
    by the variant alone, since a score_mod / mask_mod kernel inlines
    regions that no variant names. ValueError unless there is exactly
    one."""
    m = rt.Manifest.open(info.directory)
    main = rt.Variant.from_buffer_copy(info.variant)
    found = []
    for index, kernel in enumerate(m.kernels()):
        v = rt.Variant.from_buffer_copy(kernel.variant)
        if v.kind != rt.KIND_BACKWARD_DQ:
            continue
        v.kind = rt.KIND_BACKWARD
        if v.key() == main.key() and tuple(m.captures(index)) == \
                info.captures:
            found.append((kernel.name.decode(),
                          frozenset(n for _, n in m.params(index))))
    if len(found) != 1:
        listed = f": {', '.join(n for n, _ in found)}" if found else ""
        raise ValueError(
            f"{_NAME}: the backward kernel '{info.name}' is deterministic (it "
            f"leaves dQ to a backward_dq kernel), and {info.directory} has "
            f"{len(found)} backward_dq kernels of its variant{listed}")
    return found[0]


def _plan_backward(info, device_index):
    """[(kind, (kernel handle, its param names))] of the backward sequence whose
    main kernel `info` is (docs/KERNEL_ABI.md "Backward", "Block-sparse
    backward"): the preprocess, the lists' transposition where the kernel
    is block-sparse, the main kernel (by name: a score_mod / mask_mod's is
    no variant's), the dQ kernel where the main kernel is a deterministic
    one's (_deterministic_dq_kernel), and the postprocess, all of its
    artifact; the steps that do not inline the regions are found by their
    variants, the main kernel's with the kind (and, row by row, no lists)
    of theirs."""
    plan = []
    context = _kernels.context(device_index)
    for kind in (rt.KIND_BACKWARD_PREPROCESS,
                 rt.KIND_BACKWARD_SPARSE_TRANSPOSE, rt.KIND_BACKWARD,
                 rt.KIND_BACKWARD_DQ, rt.KIND_BACKWARD_POSTPROCESS):
        if kind == rt.KIND_BACKWARD:
            handle = context.kernel_named(info.directory, info.name)
            plan.append((kind, (handle, frozenset(n for _, n in info.params))))
            continue
        if kind == rt.KIND_BACKWARD_DQ:
            if any(n == "dq_accum" for _, n in info.params):
                continue  # the main kernel adds dQ atomically
            name, params = _deterministic_dq_kernel(info)
            plan.append((kind, (context.kernel_named(info.directory, name),
                                params)))
            continue
        if kind == rt.KIND_BACKWARD_SPARSE_TRANSPOSE and \
                not info.variant.block_sparse:
            continue
        v = rt.Variant.from_buffer_copy(info.variant)
        v.kind = kind
        # A packed batch's preprocess and postprocess are the dense ones,
        # row by row over the packed tensors; they read no scores, so an
        # ALiBi backward's are the plain ones.
        v.varlen = 0
        v.alibi = 0
        if kind != rt.KIND_BACKWARD_SPARSE_TRANSPOSE:
            v.block_sparse = v.sparse_block_q = v.sparse_block_k = 0
        try:
            _, index = _kernels.locate(v, info.directory)
        except KernelNotFoundError:
            raise ValueError(
                f"{_NAME}: {info.directory} has the backward kernel "
                f"'{info.name}' but no {v.describe().split()[0]} kernel of "
                "its variant") from None
        plan.append((kind, (_kernels.kernel(device_index, v, info.directory),
                            _kernels.param_names(info.directory, index))))
    return plan


def backward(directory, grad_out, query, key, value, out, lse, *,
             kernel=None, scale=None, window=None, softcap=None,
             captures=None, block_mask=None, check=None, varlen=None,
             dropout_p=0.0, seed=0, alibi_slopes=None):
    """(dQ, dK, dV) of the artifact's backward (kernel_info with kind
    rt.KIND_BACKWARD names its main kernel: the only one, or `kernel`) for
    the forward's `out` and `lse` (forward()'s results), on CUDA tensors
    [B, H, S, D] of its dtype: the preprocess, the transposition of the
    lists (block-sparse kernels), the main kernel and the postprocess, as
    flash-lower-to-gpu launches them. `scale`, `window`, `softcap`,
    `captures`, `block_mask` and `alibi_slopes` as for forward(); the lists are transposed
    once while the same list tensors come back unmodified, as
    flashfuse.block_sparse_attention's backward keeps them. An artifact
    compiled --deterministic also launches its dQ kernel after the main
    one (no float atomics: the same inputs give bit-identical gradients).
    `varlen` as for forward(): a packed batch's main kernel (and dQ
    kernel) runs per sequence, between the dense preprocess and
    postprocess over the packed rows (docs/KERNEL_ABI.md "Varlen
    backward"). `dropout_p` and `seed`: the forward's, whose mask the
    kernels draw again."""
    info = kernel_info(directory, kernel, kind=rt.KIND_BACKWARD)
    dropout_p, seed = _dropout_args(info, dropout_p, seed)
    if block_mask is None:
        _lists_of(info, None)  # refuses a kernel that needs lists

    import torch

    from . import block_sparse as bs
    from . import ops

    (q, k, val, o, dout), window, extra, _keep_alive, lists = _launch_inputs(
        info, (query, key, value, out, grad_out), window, softcap, captures,
        block_mask, check, alibi_slopes, _sequences(varlen))
    if (not isinstance(lse, torch.Tensor) or lse.dtype != torch.float32
            or tuple(lse.shape) != tuple(q.shape[:3]) or lse.device != q.device):
        raise ValueError(f"{_NAME}: lse must be a float32 tensor "
                         f"{tuple(q.shape[:3])} on {q.device}")
    packed, offsets = _varlen_args(info, varlen, q, k)
    extra.update(packed)
    steps = dict(_backward_plan(info, q.device.index))
    seq_q, seq_k = q.shape[2], k.shape[2]
    integers = ()
    transposed = None
    if lists is not None:
        size = (info.variant.sparse_block_q, info.variant.sparse_block_k)
        stream = ops._launch_context(q.device)[1]
        transposed = bs._transposed.get(lists, seq_q, seq_k, size, stream)
        listed, workspace = bs._backward_list_args(lists, seq_q, seq_k, size,
                                                   transposed)
        extra.update(listed)
        if transposed is not None:  # transposed by an earlier call
            del steps[rt.KIND_BACKWARD_SPARSE_TRANSPOSE]
        if any(n == "kv_tile_order" for _, n in info.params):
            extra["kv_tile_order"] = (rt.PARAM_I64, 0)
            integers = (("kv_tile_order", bs._key_tile_order(
                lists, q.shape[:2], seq_k, steps[rt.KIND_BACKWARD][0],
                size[1], stream)),)
    plan = list(steps.values())  # in the sequence's order
    grad_q, grad_k, grad_v = (ops._grad_like(t) for t in (query, key, value))
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    ops._launch_backward(plan, dout, q, k, val, o, lse.contiguous(), None,
                         None, grad_q, grad_k, grad_v, scale, window[0],
                         window[1], softcap or 0.0, dropout_p, seed,
                         extra=extra, integers=integers)
    del offsets  # alive until the launches are queued
    if lists is not None and transposed is None:
        bs._transposed.put(lists, seq_q, seq_k, size, stream, workspace)
    return grad_q, grad_k, grad_v
