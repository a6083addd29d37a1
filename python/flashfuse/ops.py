"""The torch custom ops that run FlashFuse kernels.

Registered through torch.library so that torch.compile traces them as single
ops (with the fake implementations below for shape propagation) instead of
breaking the graph at a ctypes call. The package's own eager calls on plain
tensors run an op's body directly (run_op): the dispatcher's layers cost
more host time than the body and its launch.
"""

import contextlib
import functools
from typing import Optional

import torch

from . import _compile, _kernels
from . import _runtime as rt
from ._env import EnvFlag
from .errors import KernelNotFoundError

_DTYPES = {torch.float16: rt.DTYPE_F16, torch.bfloat16: rt.DTYPE_BF16}


def _output_like(q, head_dim_v, dtype=None):
    """O in q's memory layout: BSHD-in-memory q (heads inner to sequence, as
    models produce) gives a BSHD-in-memory O, so the caller's transpose back
    to [B, S, H, D] is free. `dtype` defaults to q's."""
    b, h, s, _ = q.shape
    if q.stride(1) < q.stride(2):
        return q.new_empty(b, s, h, head_dim_v, dtype=dtype).transpose(1, 2)
    return q.new_empty(b, h, s, head_dim_v, dtype=dtype)


def _variant(kind, q, k, v, bias, mask, causal, window_left, window_right,
             softcap, dropout_p, out_f32=False, varlen=False,
             block_sparse=None):
    """`block_sparse`: (1 or 2, BQ, BK) for a kernel that reads block-sparse
    lists (docs/KERNEL_ABI.md "Block-sparse"), None for a dense one."""
    variant = _kernels.make_variant(
        kind, _DTYPES[q.dtype], q.shape[-1], v.shape[-1], causal,
        window=(window_left, window_right) != (-1, -1), softcap=softcap > 0,
        bias=bias is not None, mask=mask is not None, dropout=dropout_p > 0,
        out_f32=out_f32, varlen=varlen)
    if block_sparse is not None:
        (variant.block_sparse, variant.sparse_block_q,
         variant.sparse_block_k) = block_sparse
    return variant


@functools.lru_cache(maxsize=None)
def _capability(device_index):
    """(major, minor) of a GPU, for kernels compiled on demand; cached, as
    every launch asks for its kernel."""
    return torch.cuda.get_device_capability(device_index)


def _launch_context(device):
    """(context that makes `device` current, its current raw stream) for a
    launch: entering torch.cuda.device and asking torch.cuda.current_stream
    cost more than a decode step's kernels at small batches, so the
    context is a no-op where the device is already current, and the
    stream is read raw where torch exposes it."""
    index = device.index
    context = (contextlib.nullcontext()
               if index is None or index == torch.cuda.current_device()
               else torch.cuda.device(index))
    if _raw_stream is not None:
        return context, _raw_stream(
            torch.cuda.current_device() if index is None else index)
    return context, torch.cuda.current_stream(device).cuda_stream


# torch's (private) current-stream handle without a Stream object; the
# public path where it is missing.
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _current_stream(index):
    """The raw current stream of GPU `index` (for launches through the
    runtime, which makes its own context current)."""
    if _raw_stream is not None:
        return _raw_stream(index)
    return torch.cuda.current_stream(index).cuda_stream


def _torch_attr(path):
    """torch.<path>, or None where this torch lacks it."""
    obj = torch
    for name in path.split("."):
        obj = getattr(obj, name, None)
        if obj is None:
            return None
    return obj


# What would make torch's dispatcher do more than run an op's Python body:
# a torch-function or dispatch mode (FakeTensorMode, FlopCounterMode, ...),
# a functorch transform (vmap, grad), the profiler recording op names, a
# tensor subclass. Private probes; where one is missing every call goes
# through the dispatcher.
_DISPATCH_PROBES = tuple(_torch_attr(p) for p in (
    "_C._len_torch_function_stack", "_C._len_torch_dispatch_stack",
    "_C._functorch.peek_interpreter_stack", "autograd._profiler_enabled",
    "overrides.has_torch_function"))


def _dispatch_free(tensors):
    """Whether torch.ops.flashfuse.<op>(...) would only run the op's body on
    these (non-None) tensors: eager, none of the above. The dispatcher's
    layers (its autograd kernel, the redispatch, the aliasing check, the
    Python boxing of each argument) cost the dense forward 55 us of host
    time a call of its 145 (docs/PERF.md run 382)."""
    if None in _DISPATCH_PROBES or torch.compiler.is_compiling():
        return False
    functions, dispatch, functorch, profiling, overridden = _DISPATCH_PROBES
    return not (functions() or dispatch() or functorch() is not None
                or profiling() or overridden(tensors))


def run_op(op, body, *args):
    """op(*args), where torch's dispatcher would run body(*args) and nothing
    else (_dispatch_free) body(*args) itself. The callers have checked the
    devices: the dispatcher would have refused a CPU tensor."""
    if _dispatch_free(tuple(a for a in args if isinstance(a, torch.Tensor))):
        return body(*args)
    return op(*args)


def _aligned(t, address=True):
    """Whether the kernels can read t in place: last dim contiguous, 16-byte
    aligned base (unless not `address`: the strides alone), and every
    walked row starting on a 16-byte boundary."""
    elem = t.element_size()
    if t.shape[-1] > 1 and t.stride(-1) != 1:
        return False
    if address and t.data_ptr() % 16:
        return False
    return all(n == 1 or (s * elem) % 16 == 0
               for n, s in zip(t.shape[:-1], t.stride()[:-1]))


def _readable(t):
    """t, or a contiguous copy where the kernels cannot read it in place.
    Done inside the ops, on real tensors: data pointers do not exist while
    torch.compile traces."""
    if t is None or _aligned(t):
        return t
    if t.dtype in (torch.float32, torch.int8):
        # Bias/mask: a 0-stride broadcast view needs only an aligned base.
        if t.data_ptr() % 16 == 0:
            return t
    return t.contiguous()


# FLASHFUSE_POISON_OUTPUTS=1 (read at every launch: tests set it).
poison_requested = EnvFlag("FLASHFUSE_POISON_OUTPUTS")


def _poison(*tensors):
    """With FLASHFUSE_POISON_OUTPUTS=1, fill outputs with NaN before a launch
    so that elements a kernel fails to write cannot pass a test by holding
    an earlier result (the caching allocator reuses blocks)."""
    if poison_requested():
        for t in tensors:
            if t is not None:
                t.fill_(float("nan"))


def _span(t):
    """Elements reachable from t's data pointer (its memref size)."""
    return 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()) if n > 1)


def _strides4(t):
    return (t.stride(0), t.stride(1), t.stride(2), t.stride(3))


def _meta(t):
    """What a launch template depends on of an optional tensor."""
    return None if t is None else (t.shape, t.stride(), t.dtype)


class _Templates:
    """Launch templates by signature, the oldest dropped first beyond
    `limit` (a growing cache, such as transformers' DynamicCache, gives
    every step a new signature; all layers of a step share it)."""

    def __init__(self, limit=64):
        self.limit = limit
        self.entries = {}

    def get(self, key, build):
        entry = self.entries.get(key)
        if entry is None:
            entry = build()
            if len(self.entries) >= self.limit:
                del self.entries[next(iter(self.entries))]
            self.entries[key] = entry
        return entry


def _attention_fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                  bias: Optional[torch.Tensor], mask: Optional[torch.Tensor],
                  causal: int, scale: float, window_left: int,
                  window_right: int, softcap: float, dropout_p: float,
                  seed: int, out_f32: bool = False
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """(O [B, Hq, Sq, Dv], LSE f32 [B, Hq, Sq]). O is in q's dtype, or with
    out_f32 float32, written unrounded by the f32-output kernel variant:
    the partial results that split-sequence (ring) attention merges by
    their LSE without a 16-bit rounding per part."""
    # Before any copy: the fake's layout.
    o = _output_like(q, v.shape[-1], torch.float32 if out_f32 else None)
    q, k, v, bias, mask = (_readable(t) for t in (q, k, v, bias, mask))
    b, hq, sq, _ = q.shape
    lse = q.new_empty(b, hq, sq, dtype=torch.float32)
    _poison(o, lse)
    key = (q.device.index, _meta(q), _meta(k), _meta(v), _meta(o),
           _meta(bias), _meta(mask), causal, scale, window_left,
           window_right, softcap, dropout_p)
    launch = _forward_launches.get(key, lambda: _DenseForward(
        q, k, v, o, bias, mask, causal, scale, window_left, window_right,
        softcap, dropout_p, out_f32))
    launch(q, k, v, o, lse, bias, mask, seed)
    return o, lse


attention_fwd = torch.library.custom_op(
    "flashfuse::attention_fwd", mutates_args=(),
    device_types="cuda")(_attention_fwd)


class _DenseForward:
    """The dense forward of one signature (_attention_fwd's key): its kernel
    and its ForwardArgs with every size, stride and option set once; a call
    copies them and fills in the addresses and the seed (building them
    cost a call about 25 us of Python, docs/PERF.md run 382)."""

    def __init__(self, q, k, v, o, bias, mask, causal, scale, window_left,
                 window_right, softcap, dropout_p, out_f32):
        variant = _variant(rt.KIND_FORWARD, q, k, v, bias, mask, causal,
                           window_left, window_right, softcap, dropout_p,
                           out_f32)
        self.device = q.device
        self.kernel = _kernels.forward_kernel(
            q.device.index, variant, _capability(q.device.index),
            k.shape[2], q.shape[2])
        a = self.args = rt.forward_args()
        a.dtype = _DTYPES[q.dtype]
        (a.batch, a.heads_q, a.seq_q, a.head_dim) = q.shape
        a.heads_kv, a.seq_k, a.head_dim_v = k.shape[1], k.shape[2], v.shape[-1]
        a.q_stride[:], a.k_stride[:] = _strides4(q), _strides4(k)
        a.v_stride[:], a.o_stride[:] = _strides4(v), _strides4(o)
        if bias is not None:
            a.bias_stride[:] = _strides4(bias)
        if mask is not None:
            a.mask_stride[:] = _strides4(mask)
        a.scale = scale
        a.window_left, a.window_right = window_left, window_right
        a.softcap, a.dropout_p = softcap, dropout_p
        a.out_f32 = int(out_f32)

    def __call__(self, q, k, v, o, lse, bias, mask, seed):
        a = rt.ForwardArgs.from_buffer_copy(self.args)
        a.q, a.k, a.v, a.o, a.lse = (q.data_ptr(), k.data_ptr(), v.data_ptr(),
                                     o.data_ptr(), lse.data_ptr())
        if bias is not None:
            a.bias = bias.data_ptr()
        if mask is not None:
            a.mask = mask.data_ptr()
        a.seed = seed
        context, stream = _launch_context(self.device)
        with context:
            rt.attention_forward(self.kernel, a, stream)


_forward_launches = _Templates()


@attention_fwd.register_fake
def _(q, k, v, bias, mask, causal, scale, window_left, window_right, softcap,
      dropout_p, seed, out_f32=False):
    b, hq, sq, _ = q.shape
    return (_output_like(q, v.shape[-1], torch.float32 if out_f32 else None),
            q.new_empty(b, hq, sq, dtype=torch.float32))


# The backward launch sequence of docs/KERNEL_ABI.md ("Backward"), in order.
# backward_dq exists only in deterministic artifacts (flashfuse-compile
# --deterministic), whose backward kernel then adds no dQ atomically.
_BACKWARD_SEQUENCE = (rt.KIND_BACKWARD_PREPROCESS, rt.KIND_BACKWARD,
                      rt.KIND_BACKWARD_DQ, rt.KIND_BACKWARD_POSTPROCESS)
_backward_plans = {}  # _backward_plan's key -> plan


def _no_backward(what, variant, detail=""):
    return NotImplementedError(
        f"flashfuse: the kernel artifacts have no {what} for "
        f"'{variant.describe()}', so this attention cannot be differentiated "
        "with FlashFuse kernels; compile its flash.attention_grad "
        "(scripts/kernels/gen_suite.py --backward, flashfuse-compile) or use "
        "torch SDPA for training." + (f"\n{detail}" if detail else ""))


def _backward_dirs(device_index, bwd, dq, deterministic):
    """(artifact dirs with the backward kernel of `bwd`, those of them that
    are deterministic: with a backward_dq kernel). Where none fits,
    flashfuse-compile (if found) compiles the flash.attention_grad on
    demand, deterministic if asked, and that artifact is the one."""
    dirs = [d for d, _ in _kernels.locate_all(bwd,
                                              _capability(device_index))]
    det_dirs = [d for d in dirs if _kernels.has_kernel(dq, d)]
    if dirs and (det_dirs or not deterministic):
        return dirs, det_dirs
    try:
        compiled = _compile.artifact_for(bwd, _capability(device_index),
                                         deterministic)
        return [compiled], ([compiled] if deterministic else [])
    except _compile.Unavailable as e:
        note = f"(not compiled on demand: {e})"
    if not dirs:
        try:
            _kernels.locate(bwd)  # for its list of what the artifacts hold
        except KernelNotFoundError as e:
            raise _no_backward("backward kernel (kind backward)", bwd,
                               f"{e}\n{note}") from None
    raise NotImplementedError(
        "flashfuse: deterministic=True, but no artifact has a "
        f"deterministic backward (kind backward_dq) for '{bwd.describe()}'"
        "; compile one with flashfuse-compile --deterministic (CMake: "
        "-DFLASHFUSE_KERNEL_DETERMINISTIC=ON) or pass deterministic=False."
        " Artifacts with its backward kernel: " + ", ".join(dirs)
        + f"\n{note}")


def _backward_plan(device_index, variant_args, deterministic, varlen=False,
                   block_sparse=None, seq_k=None):
    """[(kernel handle, its param names)] to launch in order, all from one
    artifact: the kernels share buffers whose meaning depends on how the
    artifact was compiled (a deterministic backward writes no dq_accum), so
    they cannot be mixed across artifacts. NotImplementedError names the
    missing kind. `varlen`: a packed batch's sequence, whose main and dQ
    kernels are varlen ones and whose preprocess and postprocess are the
    dense ones (docs/KERNEL_ABI.md "Varlen"). `block_sparse` (1 or 2, BQ,
    BK): the sequence of block-sparse attention, with the transposition
    of the lists before the main kernel, whose preprocess and postprocess
    are the dense ones too (docs/KERNEL_ABI.md "Block-sparse backward").
    `seq_k`: the key length, below _kernels.sm90ws_backward_min_keys of
    which the sm90 backward is taken over an sm90ws one (None: any
    length)."""
    q, _, v, bias, mask, causal, window_left, window_right, softcap, \
        dropout_p = variant_args
    # The sm90ws backward from sm90ws_backward_min_keys keys on: below them
    # its one 384-thread block per SM lost to the sm90 kernel (0.6-0.94x at
    # 512-1k keys, causal, docs/PERF.md runs 144 and 147); at D = 64 and
    # 128 the kernels of today win from 1024 keys (runs 311, 316).
    prefer_ws = (seq_k is None
                 or seq_k >= _kernels.sm90ws_backward_min_keys(q.shape[-1]))
    # What the variants below depend on, without building them (four
    # make_variant calls cost a step ~50 us of Python, docs/PERF.md run 203).
    key = (device_index, q.dtype, q.shape[-1], v.shape[-1], causal,
           (window_left, window_right) != (-1, -1), softcap > 0,
           bias is not None, mask is not None, dropout_p > 0, varlen,
           block_sparse, deterministic, prefer_ws)
    plan = _backward_plans.get(key)
    if plan is not None:
        return plan
    per_sequence = (rt.KIND_BACKWARD, rt.KIND_BACKWARD_DQ)
    sequence = _BACKWARD_SEQUENCE
    if block_sparse is not None:
        sequence = (rt.KIND_BACKWARD_PREPROCESS,
                    rt.KIND_BACKWARD_SPARSE_TRANSPOSE) + sequence[1:]
    reads_lists = per_sequence + (rt.KIND_BACKWARD_SPARSE_TRANSPOSE,)
    variants = {kind: _variant(
                    kind, *variant_args,
                    varlen=varlen and kind in per_sequence,
                    block_sparse=block_sparse if kind in reads_lists else None)
                for kind in sequence}
    bwd = variants[rt.KIND_BACKWARD]
    dirs, det_dirs = _backward_dirs(device_index, bwd,
                                    variants[rt.KIND_BACKWARD_DQ],
                                    deterministic)
    # Not asked to be deterministic: prefer the atomic-dQ artifact (one
    # kernel fewer); a deterministic one computes the same gradients.
    atomic_dirs = [d for d in dirs if d not in det_dirs]
    # Of those, the sm90ws backward's (a TMA producer warpgroup feeding the
    # sm90 backward's products; <target>-bwd-ws) where one has the variant:
    # 1.01-1.24x the sm90 kernels at 2k-16k keys (docs/PERF.md, run 144);
    # below sm90ws_backward_min_keys keys another artifact's where there is
    # one.
    ws = _kernels.sm90ws_dir(bwd, capability=_capability(device_index))
    if ws in atomic_dirs:
        atomic_dirs.remove(ws)
        atomic_dirs.insert(0 if prefer_ws else len(atomic_dirs), ws)
    directory = (det_dirs[0] if deterministic or not atomic_dirs
                 else atomic_dirs[0])
    plan = []
    for kind in sequence:
        v = variants[kind]
        if kind == rt.KIND_BACKWARD_DQ and directory not in det_dirs:
            continue
        try:
            _, index = _kernels.locate(v, directory)
        except KernelNotFoundError:
            raise _no_backward(
                f"{v.describe().split()[0]} kernel in {directory} (it has "
                "the backward kernel but not this step of the sequence)",
                bwd) from None
        plan.append((_kernels.kernel(device_index, v, directory),
                     _kernels.param_names(directory, index)))
    _backward_plans[key] = plan
    return plan


def dropout_seed(dropout_p):
    """The seed of one call's dropout (0 without): drawn from torch's CPU
    generator, so that torch.manual_seed makes dropout reproducible, and
    given to the backward, which draws the same mask again."""
    return int(torch.randint(0, 2**62, (1,)).item()) if dropout_p > 0 else 0


def _grad_like(t):
    """A gradient buffer with t's layout when the kernels can write that
    layout (so BSHD-in-memory inputs get BSHD-in-memory gradients), else
    contiguous. Decided from sizes and strides only, so the fake gives the
    same layout as the real op."""
    g = torch.empty_like(t)
    elem = g.element_size()
    if (g.shape[-1] > 1 and g.stride(-1) != 1) or any(
            n > 1 and (st * elem) % 16 for n, st in
            zip(g.shape[:-1], g.stride()[:-1])):
        g = torch.empty(t.shape, dtype=t.dtype, device=t.device)
    return g


def _grad_bias_like(q, k):
    """dBias as the kernels write it: f32 [B, Hq, Sq, Sk] contiguous (the
    autograd of the caller's broadcast sums it back to the bias's shape)."""
    b, hq, sq, _ = q.shape
    return q.new_empty(b, hq, sq, k.shape[2], dtype=torch.float32)


def _attention_bwd(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                  v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor,
                  bias: Optional[torch.Tensor], mask: Optional[torch.Tensor],
                  causal: int, scale: float, window_left: int,
                  window_right: int, softcap: float, dropout_p: float,
                  seed: int, deterministic: bool, grad_bias: bool
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                             torch.Tensor]:
    """(dQ, dK, dV, dBias) by the kernel sequence of KERNEL_ABI.md
    "Backward"; dBias is empty unless grad_bias. dropout_p and seed must be
    the forward's, so that the kernels regenerate its dropout mask."""
    plan = _backward_plan(
        q.device.index, (q, k, v, bias, mask, causal, window_left,
                         window_right, softcap, dropout_p), deterministic,
        seq_k=k.shape[2])
    params = frozenset().union(*(names for _, names in plan))
    if grad_bias and "dbias" not in params:
        raise NotImplementedError(
            "flashfuse: the backward kernels for this attention do not "
            "compute dBias (no 'dbias' param), so a float attn_mask that "
            "requires grad cannot be differentiated; detach it or compile "
            "the bias variant's flash.attention_grad with grad_bias")
    # Outputs in the inputs' layouts, before any copy below (the fake's).
    grad_q, grad_k, grad_v = _grad_like(q), _grad_like(k), _grad_like(v)
    dout, q, k, v, out, bias, mask = (
        _readable(t) for t in (dout, q, k, v, out, bias, mask))
    dbias = _launch_backward(
        plan, dout, q, k, v, out, lse, bias, mask, grad_q, grad_k, grad_v,
        scale, window_left, window_right, softcap, dropout_p, seed)
    if not grad_bias:
        dbias = q.new_empty(0, dtype=torch.float32)
    return grad_q, grad_k, grad_v, dbias


attention_bwd = torch.library.custom_op(
    "flashfuse::attention_bwd", mutates_args=(),
    device_types="cuda")(_attention_bwd)


# dq_accum's rows: Sq rounded up to this (docs/KERNEL_ABI.md "Backward").
DQ_ACCUM_ROW_MULTIPLE = 128


def _launch_backward(plan, dout, q, k, v, out, lse, bias, mask, grad_q,
                     grad_k, grad_v, scale, window_left, window_right,
                     softcap, dropout_p=0.0, seed=0, extra=None,
                     integers=()):
    """Launches `plan` (KERNEL_ABI.md "Backward") on [B, H, S, D] views the
    kernels can read in place, writing grad_q, grad_k, grad_v; allocates
    the f32 scratch it needs and returns dBias (None unless the plan
    computes it). `extra`: more named arguments ({name: (type, value)}),
    such as block-sparse lists and their workspace; `integers`: (name,
    value) pairs of integer arguments (named in `extra` too) that change
    from call to call without making the launch another signature, such
    as the block-sparse tile order's address."""
    extra = extra or {}
    tensors = (dout, q, k, v, out, lse, bias, mask, grad_q, grad_k, grad_v)
    # The runtime's kernel handles (ctypes, unhashable) live as long as the
    # process (_kernels caches them): their ids name them.
    key = (tuple(id(kernel) for kernel, _ in plan),
           tuple(_meta(t) for t in tensors), scale, window_left,
           window_right, softcap, dropout_p,
           tuple((name, ptype, value[1] if ptype == rt.PARAM_MEMREF
                  else value) for name, (ptype, value) in extra.items()))
    launch = _backward_launches.get(key, lambda: _BackwardLaunch(
        plan, *tensors, scale, window_left, window_right, softcap, dropout_p,
        extra))
    return launch(*tensors, seed, extra, integers)


def _writes_key_grads(plan, hq, hkv):
    """Whether the plan's main kernel (the one that lists both grad_k and
    lse) writes grad_k / grad_v itself: it lists grad_k and Hq = Hkv
    (docs/KERNEL_ABI.md "Backward"). The dK / dV slices are then unused."""
    return hq == hkv and any("grad_k" in names and "lse" in names
                             for _, names in plan)


def _backward_scratch(plan, q, k, v, grad_k, grad_v):
    """{name: tensor} of the f32 scratch KERNEL_ABI.md asks for: delta =
    rowsum(dO * O); dQ accumulated atomically (atomic artifacts); dK/dV one
    slice per query head, summed over each GQA group by the postprocess,
    except where the main kernel takes grad_k (the sm90 dense one) and
    there is no GQA: it writes grad_k / grad_v itself, and dk / dv go
    unused; dBias where the plan computes it."""
    params = frozenset().union(*(names for _, names in plan))
    b, hq, sq, d = q.shape
    hkv, sk, dv = k.shape[1], k.shape[2], v.shape[-1]
    f32 = torch.float32
    scratch = {"delta": q.new_empty(b, hq, sq, dtype=f32)}
    if _writes_key_grads(plan, hq, hkv):
        scratch["dk"], scratch["dv"] = grad_k, grad_v
    else:
        scratch["dk"] = q.new_empty(b, hq, sk, d)
        scratch["dv"] = q.new_empty(b, hq, sk, dv)
    if "dbias" in params:
        scratch["dbias"] = _grad_bias_like(q, k)
    if "dq_accum" in params:
        # Sq rounded up to 128 rows: the sm90 kernels' dQ tiles cover whole
        # query blocks (KERNEL_ABI.md "Backward").
        rows = -(-sq // DQ_ACCUM_ROW_MULTIPLE) * DQ_ACCUM_ROW_MULTIPLE
        if "dq_accum" in plan[0][1]:  # the preprocess zeroes it
            scratch["dq_accum"] = q.new_empty(b, hq, rows, d, dtype=f32)
        else:
            scratch["dq_accum"] = q.new_zeros(b, hq, rows, d, dtype=f32)
    return scratch


def _backward_tensors(dout, q, k, v, out, lse, bias, mask, grad_q, grad_k,
                      grad_v, scratch):
    """The backward's memref arguments, by name (None where absent)."""
    return (("q", q), ("k", k), ("v", v), ("o", out), ("do", dout),
            ("lse", lse), ("delta", scratch["delta"]),
            ("dq_accum", scratch.get("dq_accum")), ("dk", scratch["dk"]),
            ("dv", scratch["dv"]), ("dbias", scratch.get("dbias")),
            ("grad_q", grad_q), ("grad_k", grad_k), ("grad_v", grad_v),
            ("bias", bias), ("mask", mask))


class _BackwardLaunch:
    """The launches of one backward signature (_launch_backward's key):
    every size, stride and scalar packed once (rt.ArgTemplate); a call
    allocates the scratch, fills in the addresses and the seed, and
    launches the plan's kernels."""

    def __init__(self, plan, dout, q, k, v, out, lse, bias, mask, grad_q,
                 grad_k, grad_v, scale, window_left, window_right, softcap,
                 dropout_p, extra):
        self.plan = plan
        scratch = _backward_scratch(plan, q, k, v, grad_k, grad_v)
        named = {}
        for name, t in _backward_tensors(dout, q, k, v, out, lse, bias, mask,
                                         grad_q, grad_k, grad_v, scratch):
            if t is not None:
                named[name] = (rt.PARAM_MEMREF, (t.data_ptr(), _span(t)))
        for name, t in (("q", q), ("k", k), ("v", v), ("o", out),
                        ("do", dout), ("grad_q", grad_q), ("grad_k", grad_k),
                        ("grad_v", grad_v)):
            for axis, suffix in enumerate(("b", "h", "s")):
                named[f"{name}_stride_{suffix}"] = (rt.PARAM_I64,
                                                    t.stride(axis))
        for name, t in (("bias", bias), ("mask", mask)):
            if t is not None:
                for axis, suffix in enumerate(("b", "h", "q", "k")):
                    named[f"{name}_stride_{suffix}"] = (rt.PARAM_I64,
                                                        t.stride(axis))
        b, hq, sq, _ = q.shape
        for name, value in (("batch", b), ("heads_q", hq),
                            ("heads_kv", k.shape[1]), ("seq_q", sq),
                            ("seq_k", k.shape[2]),
                            ("window_left", window_left),
                            ("window_right", window_right)):
            named[name] = (rt.PARAM_I32, value)
        for name, value in (("scale", scale), ("softcap", softcap),
                            ("dropout_p", dropout_p)):
            named[name] = (rt.PARAM_F32, value)
        named["seed"] = (rt.PARAM_I64, 0)
        named.update(extra)
        # Every kernel takes the names it lists from this one set (the
        # runtime binds by name and computes each kind's grid).
        self.args = rt.ArgTemplate(named)

    def __call__(self, dout, q, k, v, out, lse, bias, mask, grad_q, grad_k,
                 grad_v, seed, extra, integers=()):
        scratch = _backward_scratch(self.plan, q, k, v, grad_k, grad_v)
        _poison(grad_q, grad_k, grad_v, scratch["delta"], scratch["dk"],
                scratch["dv"], scratch.get("dbias"))
        if "dq_accum" in self.plan[0][1]:
            _poison(scratch.get("dq_accum"))
        addresses = [(name, t.data_ptr()) for name, t in _backward_tensors(
            dout, q, k, v, out, lse, bias, mask, grad_q, grad_k, grad_v,
            scratch) if t is not None]
        addresses += [(name, value[0]) for name, (ptype, value)
                      in extra.items() if ptype == rt.PARAM_MEMREF]
        args = self.args.fill(addresses, (("seed", seed),) + tuple(integers))
        # All on torch's current stream, so the buffers above are ordered
        # with the launches.
        context, stream = _launch_context(q.device)
        with context:
            for kernel, _ in self.plan:
                rt.launch_packed(kernel, args, stream)
        return scratch.get("dbias")


_backward_launches = _Templates()


@attention_bwd.register_fake
def _(dout, q, k, v, out, lse, bias, mask, causal, scale, window_left,
      window_right, softcap, dropout_p, seed, deterministic, grad_bias):
    return (_grad_like(q), _grad_like(k), _grad_like(v),
            _grad_bias_like(q, k) if grad_bias
            else q.new_empty(0, dtype=torch.float32))


# ---- packed variable-length batches (docs/KERNEL_ABI.md "Varlen") ----------

def _packed_view(t):
    """flash-attn's [total, H, D] as the kernels' [1, H, total, D] (a view:
    read or written in place, like BSHD views in attention_fwd)."""
    return t.unsqueeze(0).transpose(1, 2)


def _offsets(t):
    """cu_seqlens as the kernels read them: contiguous int32 on a 16-byte
    boundary; a copy (a few bytes per sequence) where it is not."""
    if t.is_contiguous() and t.data_ptr() % 16 == 0:
        return t
    return t.clone(memory_format=torch.contiguous_format)


def _varlen_outputs(q, head_dim_v):
    total_q, hq, _ = q.shape
    return (q.new_empty(total_q, hq, head_dim_v),
            q.new_empty(hq, total_q, dtype=torch.float32))


@torch.library.custom_op("flashfuse::varlen_attention_fwd", mutates_args=(),
                         device_types="cuda")
def varlen_attention_fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                         cu_seqlens_q: torch.Tensor,
                         cu_seqlens_k: torch.Tensor, max_seqlen_q: int,
                         max_seqlen_k: int, causal: int, scale: float,
                         window_left: int, window_right: int, softcap: float,
                         dropout_p: float = 0.0, seed: int = 0
                         ) -> tuple[torch.Tensor, torch.Tensor]:
    """(O [total_q, Hq, Dv], LSE f32 [Hq, total_q]) of the packed batch
    q [total_q, Hq, D], k [total_k, Hkv, D], v [total_k, Hkv, Dv] whose
    sequence i owns rows [cu_seqlens_q[i], cu_seqlens_q[i + 1]) of q and
    [cu_seqlens_k[i], cu_seqlens_k[i + 1]) of k and v, with the varlen
    forward kernel (grid over max_seqlen_q). dropout_p > 0 drops P's
    entries by the keep test at (seed, sequence, head, local row, local
    key) (FlashOps.td), on a kernel compiled on first use where the
    library has none. The caller (flashfuse.varlen_attention) has checked
    the shapes."""
    o, lse = _varlen_outputs(q, v.shape[-1])
    total_q, hq, d = q.shape
    total_k, hkv, dv = v.shape
    if total_q == 0:
        return o, lse
    if total_k == 0 or max_seqlen_q <= 0:
        # No key anywhere (or no query row in any sequence): every row is
        # fully masked, O = 0 and LSE = +inf, with no kernel to launch.
        o.zero_()
        lse.fill_(float("inf"))
        return o, lse
    variant = _kernels.make_variant(
        rt.KIND_FORWARD, _DTYPES[q.dtype], d, dv, causal,
        window=(window_left, window_right) != (-1, -1), softcap=softcap > 0,
        dropout=dropout_p > 0, varlen=True)
    num_seqs = cu_seqlens_q.shape[0] - 1
    walks = rt.packed_batch_walks(total_q, total_k, num_seqs, max_seqlen_q,
                                  max_seqlen_k, causal)
    kernel = _kernels.varlen_forward_kernel(
        q.device.index, variant, _capability(q.device.index),
        total_k / max(num_seqs, 1), walks)
    _poison(o, lse)
    a, p, keep = varlen_launch_args(q, k, v, o, lse, cu_seqlens_q,
                                    cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                    scale, window_left, window_right, softcap,
                                    dropout_p, seed)
    context, stream = _launch_context(q.device)
    with context:
        rt.attention_forward_varlen(kernel, a, p, stream)
    del keep
    return o, lse


def varlen_launch_args(q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k,
                       max_seqlen_q, max_seqlen_k, scale, window_left,
                       window_right, softcap, dropout_p=0.0, seed=0):
    """(ForwardArgs, VarlenArgs, tensors to keep alive until the launch is
    queued) of a packed batch: q, k, v, o [total, H, D] as the kernels'
    [1, H, total, D] views (copies only where the kernels cannot read them
    in place), lse [Hq, total_q], the offsets contiguous and 16-byte
    aligned. Needs no GPU (python/tests/test_varlen_api.py checks it with
    CPU tensors against the runtime's checks)."""
    total_q, hq, d = q.shape
    total_k, hkv, dv = v.shape
    qv, kv, vv = (_readable(_packed_view(t)) for t in (q, k, v))
    ov = _packed_view(o)
    cu_q, cu_k = _offsets(cu_seqlens_q), _offsets(cu_seqlens_k)
    a = rt.forward_args()
    a.dtype = _DTYPES[q.dtype]
    a.q, a.k, a.v, a.o, a.lse = (t.data_ptr() for t in (qv, kv, vv, ov, lse))
    a.batch, a.heads_q, a.seq_q, a.head_dim = 1, hq, total_q, d
    a.heads_kv, a.seq_k, a.head_dim_v = hkv, total_k, dv
    a.q_stride[:], a.k_stride[:] = _strides4(qv), _strides4(kv)
    a.v_stride[:], a.o_stride[:] = _strides4(vv), _strides4(ov)
    a.scale = scale
    a.window_left, a.window_right, a.softcap = window_left, window_right, softcap
    a.dropout_p, a.seed = dropout_p, seed
    p = rt.varlen_args()
    p.cu_seqlens_q, p.cu_seqlens_k = cu_q.data_ptr(), cu_k.data_ptr()
    p.num_seqs = cu_q.shape[0] - 1
    p.max_seqlen_q, p.max_seqlen_k = max_seqlen_q, max_seqlen_k
    return a, p, (qv, kv, vv, cu_q, cu_k)


@varlen_attention_fwd.register_fake
def _(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal,
      scale, window_left, window_right, softcap, dropout_p=0.0, seed=0):
    return _varlen_outputs(q, v.shape[-1])


def _varlen_grads(q, k, v):
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


@torch.library.custom_op("flashfuse::varlen_attention_bwd", mutates_args=(),
                         device_types="cuda")
def varlen_attention_bwd(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                         v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor,
                         cu_seqlens_q: torch.Tensor,
                         cu_seqlens_k: torch.Tensor, max_seqlen_q: int,
                         max_seqlen_k: int, causal: int, scale: float,
                         window_left: int, window_right: int, softcap: float,
                         deterministic: bool, dropout_p: float = 0.0,
                         seed: int = 0
                         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dQ, dK, dV) of varlen_attention_fwd, in the layouts of q, k, v
    ([total, H, D]), by flashfuse_attention_backward_varlen (KERNEL_ABI.md
    "Varlen backward"): the varlen main kernel (one block per key block of
    the longest key sequence, head and sequence) and, deterministic, the
    varlen dQ kernel, between the dense preprocess and postprocess over
    the packed rows. The scratch (Dsum, dq_accum, the per-query-head dK/dV
    slices) is sized by the totals: a sequence's rows sit in it where they
    sit in q (k), with no padding. `lse` is the forward's [Hq, total_q];
    dropout_p and seed are the forward's, whose mask the kernels draw
    again."""
    grad_q, grad_k, grad_v = _varlen_grads(q, k, v)
    total_q, hq, d = q.shape
    total_k, hkv, dv = v.shape
    if total_q == 0 or total_k == 0 or max_seqlen_q <= 0 or max_seqlen_k <= 0:
        # No (query, key) pair in any sequence: nothing reaches a gradient.
        for g in (grad_q, grad_k, grad_v):
            g.zero_()
        return grad_q, grad_k, grad_v
    plan = _backward_plan(
        q.device.index, (q, k, v, None, None, causal, window_left,
                         window_right, softcap, dropout_p), deterministic,
        varlen=True)
    # (preprocess, backward, backward_dq or None, postprocess), as the
    # entry point takes them; the plan has backward_dq only when the
    # backward leaves dQ to it.
    handles = [h for h, _ in plan]
    if len(handles) == 3:
        handles.insert(2, None)
    atomic = "dq_accum" in plan[1][1]
    writes_key_grads = _writes_key_grads(plan, hq, hkv)
    a, p, keep = varlen_backward_args(
        dout, q, k, v, out, lse, grad_q, grad_k, grad_v, cu_seqlens_q,
        cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale, window_left,
        window_right, softcap, atomic, writes_key_grads, dropout_p, seed)
    _poison(grad_q, grad_k, grad_v, *keep[-4:])
    context, stream = _launch_context(q.device)
    with context:
        rt.attention_backward_varlen(handles, a, p, stream)
    del keep  # alive until the launches are queued
    return grad_q, grad_k, grad_v


def varlen_backward_args(dout, q, k, v, out, lse, grad_q, grad_k, grad_v,
                         cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                         max_seqlen_k, scale, window_left, window_right,
                         softcap, atomic, writes_key_grads=False,
                         dropout_p=0.0, seed=0):
    """(BackwardArgs, VarlenArgs, tensors to keep alive until the launches
    are queued, the f32 and dtype scratch last) of a packed batch's
    backward: every [total, H, D] tensor as the kernels' [1, H, total, D]
    view (copies only where the kernels cannot read it in place), lse
    [Hq, total_q], the scratch allocated here (dq_accum only for an
    atomic artifact; the per-query-head dK / dV slices only where the
    main kernel does not write grad_k / grad_v itself, which
    `writes_key_grads` says: it lists grad_k and Hq = Hkv), the offsets
    as varlen_launch_args takes them. Needs no GPU
    (python/tests/test_varlen_api.py checks it against the runtime's
    checks)."""
    total_q, hq, d = q.shape
    total_k, hkv, dv = v.shape
    dov, qv, kv, vv, ov = (_readable(_packed_view(t))
                           for t in (dout, q, k, v, out))
    gq, gk, gv = (_packed_view(t) for t in (grad_q, grad_k, grad_v))
    lse = lse.contiguous()
    f32 = torch.float32
    delta = q.new_empty(1, hq, total_q, dtype=f32)
    dq_accum = (q.new_empty(1, hq, total_q, d, dtype=f32) if atomic
                else None)
    if writes_key_grads:  # unused by the kernels (KERNEL_ABI.md "Backward")
        dk_heads, dv_heads = gk, gv
    else:
        dk_heads = q.new_empty(1, hq, total_k, d)
        dv_heads = q.new_empty(1, hq, total_k, dv)
    a = rt.backward_args()
    a.dtype = _DTYPES[q.dtype]
    a.q, a.k, a.v, a.o, a.dout = (t.data_ptr() for t in (qv, kv, vv, ov, dov))
    a.lse = lse.data_ptr()
    a.grad_q, a.grad_k, a.grad_v = (t.data_ptr() for t in (gq, gk, gv))
    a.delta, a.dk, a.dv = (t.data_ptr() for t in (delta, dk_heads, dv_heads))
    a.dq_accum = dq_accum.data_ptr() if dq_accum is not None else None
    a.batch, a.heads_q, a.heads_kv = 1, hq, hkv
    a.seq_q, a.seq_k, a.head_dim, a.head_dim_v = total_q, total_k, d, dv
    for field, t in (("q_stride", qv), ("k_stride", kv), ("v_stride", vv),
                     ("o_stride", ov), ("do_stride", dov),
                     ("grad_q_stride", gq), ("grad_k_stride", gk),
                     ("grad_v_stride", gv)):
        getattr(a, field)[:] = _strides4(t)
    a.scale = scale
    a.window_left, a.window_right, a.softcap = window_left, window_right, softcap
    a.dropout_p, a.seed = dropout_p, seed
    cu_q, cu_k = _offsets(cu_seqlens_q), _offsets(cu_seqlens_k)
    p = rt.varlen_args()
    p.cu_seqlens_q, p.cu_seqlens_k = cu_q.data_ptr(), cu_k.data_ptr()
    p.num_seqs = cu_q.shape[0] - 1
    p.max_seqlen_q, p.max_seqlen_k = max_seqlen_q, max_seqlen_k
    keep = (dov, qv, kv, vv, ov, lse, cu_q, cu_k,
            delta, dq_accum, dk_heads, dv_heads)
    return a, p, keep


@varlen_attention_bwd.register_fake
def _(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
      max_seqlen_k, causal, scale, window_left, window_right, softcap,
      deterministic, dropout_p=0.0, seed=0):
    return _varlen_grads(q, k, v)


# The KV-cache ops live in their own module, which builds on the helpers
# above; importing it here registers them with the rest.
from . import _kvcache_ops  # noqa: E402,F401
