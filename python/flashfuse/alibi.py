"""ALiBi (flash-attn's `alibi_slopes`) on FlashFuse kernels:
flashfuse.attention(..., alibi_slopes=...) comes here.

The bias is flash-attn's: query i and key j of head h get

    score - slopes[h] * |i + Sk - Sq - j|          (slopes[b, h] for [B, Hq])

after the scale and softcap, the distance taken from the bottom-right
diagonal whatever the causal mask's alignment. flash-attn's causal kernels
add slopes[h] * j instead, which differs by a constant a row: the same O,
but its LSE is not this one's.

These kernels are not in the library: the op is a flash.attention with
its `alibi(...)` operand (variants.KernelVariant.alibi; the kernels add the
bias natively, in fused multiply-adds), compiled on first use by
flashfuse-compile (the wheel's, or the source build's) for the GPU and
cached like any variant compiled on demand (flashfuse._compile); the
kernels take the slopes as `alibi_slopes` and run through
flashfuse.artifact. One artifact per (dtype, D, Dv, mask, window, softcap,
slope layout) and pass: the forward's and the backward's are compiled
apart, so inference never waits for a backward.
"""

import threading
from typing import Optional

import torch

from . import _compile, artifact, ops, variants
from .errors import KernelNotFoundError, UnsupportedError

_NAME = "flashfuse.attention"
_DTYPE_NAMES = {torch.float16: "f16", torch.bfloat16: "bf16"}
_CAUSAL_NAMES = {0: None, 1: "top_left", 2: "bottom_right"}

# (KernelVariant, backward, device index) -> artifact directory: the
# compile cache's lookup hashes the IR and stats the compiler, more host
# time than a call can spare.
_artifacts = {}
_lock = threading.Lock()


def alibi_slopes(num_heads, device=None):
    """The ALiBi paper's slopes for `num_heads` heads, float32 [num_heads]
    (what BLOOM and MPT use, and flash-attn's tests): 2^(-8 (h + 1) / n)
    for a power of two n; otherwise those of the power of two m below n,
    then every other slope of 2m heads for the n - m left."""
    if isinstance(num_heads, bool) or not isinstance(num_heads, int) \
            or num_heads <= 0:
        raise ValueError(f"flashfuse.alibi_slopes: num_heads must be a "
                         f"positive int, got {num_heads!r}")

    def powers_of_two(n):
        return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]

    m = 1 << (num_heads.bit_length() - 1)
    slopes = powers_of_two(m) + powers_of_two(2 * m)[0::2][:num_heads - m]
    return torch.tensor(slopes, dtype=torch.float32, device=device)


def check_slopes(slopes, batch, heads_q, name=_NAME):
    """The layout of `slopes` (1: [Hq], 2: [B, Hq]), or TypeError /
    ValueError saying what flash-attn's alibi_slopes must be (`name`: the
    function the messages name). The device is checked with the inputs'
    (check_device)."""
    if not isinstance(slopes, torch.Tensor):
        raise TypeError(f"{name}: alibi_slopes must be a torch.Tensor, got "
                        f"{type(slopes).__name__}")
    if slopes.dtype != torch.float32:
        raise TypeError(f"{name}: alibi_slopes must be float32 (as "
                        f"flash-attn takes them), got {slopes.dtype}")
    if tuple(slopes.shape) == (heads_q,):
        return 1
    if tuple(slopes.shape) == (batch, heads_q):
        return 2
    raise ValueError(f"{name}: alibi_slopes must be [Hq] = [{heads_q}] or "
                     f"[B, Hq] = [{batch}, {heads_q}], got "
                     f"{list(slopes.shape)}")


def refuse(name, slopes, why):
    """flash-attn's alibi_slopes where FlashFuse has no ALiBi: None is
    accepted (code written for flash-attn passes it), anything else is an
    UnsupportedError saying why."""
    if slopes is not None:
        raise UnsupportedError(
            f"{name}: alibi_slopes is not supported here: {why}; "
            "flashfuse.attention takes it", "FLASHFUSE_ERROR_UNSUPPORTED")


def check_lengths(seq_q, seq_k, name=_NAME):
    """ValueError for sequences whose ALiBi distances the kernels do not
    compute exactly: variants.ALIBI_MAX_SEQ (2^24) keys or queries and more
    (they take the distance in f32)."""
    longest = max(seq_q, seq_k)
    if longest >= variants.ALIBI_MAX_SEQ:
        raise ValueError(f"{name}: ALiBi takes sequences shorter than "
                         f"{variants.ALIBI_MAX_SEQ} (2^24) keys and queries, "
                         f"got {longest}")


def check_device(slopes, query, name=_NAME):
    if slopes.device != query.device:
        raise ValueError(f"{name}: alibi_slopes is on {slopes.device}, "
                         f"query on {query.device}")


def kernel_variant(dtype, head_dim, head_dim_v, causal, windowed, softcap,
                   layout, varlen=False, dropout=False, sparse=None):
    """The variants.KernelVariant of an ALiBi call: its flags only (window
    sizes, the softcap and dropout's p are the kernels' run-time
    parameters); `varlen` for a packed batch's; `sparse` (1 or 2, BQ, BK)
    for block-sparse lists (block_sparse_attention's)."""
    mask = _CAUSAL_NAMES[causal]
    name = "_".join(
        [f"alibi{'' if layout == 1 else '_bh'}"]
        + (["varlen"] if varlen else []) + [_DTYPE_NAMES[dtype],
         f"d{head_dim}"] + ([f"dv{head_dim_v}"] if head_dim_v != head_dim
                            else [])
        + [mask or "full"] + (["window"] if windowed else [])
        + (["softcap"] if softcap else []) + (["dropout"] if dropout else [])
        + ([f"bs{sparse[0]}_{sparse[1]}x{sparse[2]}"] if sparse else []))
    return variants.KernelVariant(
        name, _DTYPE_NAMES[dtype], head_dim, head_dim_v, causal=mask,
        window=(0, 0) if windowed else None,
        softcap=1.0 if softcap else None, alibi=layout, varlen=varlen,
        dropout=0.1 if dropout else None,
        block_sparse=sparse[0] if sparse else 0,
        sparse_blocks=tuple(sparse[1:]) if sparse else (128, 128))


def artifact_dir(variant, backward, device, deterministic=False):
    """The artifact holding `variant`'s forward (or with `backward` its
    backward sequence, with `deterministic` the one whose dQ kernel adds
    without float atomics) for the GPU of `device`: cached on disk,
    compiled now where it is not. KernelNotFoundError where nothing can
    compile it."""
    key = (variant, backward, deterministic, device.index)
    with _lock:
        directory = _artifacts.get(key)
    if directory is not None:
        return directory
    capability = torch.cuda.get_device_capability(device)
    try:
        directory = _compile.compile_variant(variant, capability,
                                             backward=backward,
                                             deterministic=deterministic)
    except _compile.Unavailable as e:
        raise KernelNotFoundError(
            f"{_NAME}: ALiBi kernels are compiled on first use, and cannot "
            f"be here: {e}. The wheel ships flashfuse-compile; a source "
            "checkout builds it (build/bin), or set FLASHFUSE_COMPILE.",
            "FLASHFUSE_ERROR_KERNEL_NOT_FOUND") from None
    with _lock:
        _artifacts[key] = directory
    return directory


def _alibi_fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
               slopes: torch.Tensor, causal: int, scale: float,
               window_left: int, window_right: int, softcap: float,
               dropout_p: float = 0.0, seed: int = 0
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """(O [B, Hq, Sq, Dv], LSE f32 [B, Hq, Sq]) of the checked call."""
    variant = _variant_of(q, v, slopes, causal, window_left, window_right,
                          softcap, dropout=dropout_p > 0)
    return artifact.forward(artifact_dir(variant, False, q.device), q, k, v,
                            **_launch_arguments(q, k, slopes, scale,
                                                window_left, window_right,
                                                softcap),
                            dropout_p=dropout_p, seed=seed)


def _variant_of(q, v, slopes, causal, window_left, window_right, softcap,
                varlen=False, dropout=False):
    return kernel_variant(q.dtype, q.shape[-1], v.shape[-1], causal,
                          (window_left, window_right) != (-1, -1),
                          softcap > 0, slopes.dim(), varlen=varlen,
                          dropout=dropout)


def _launch_arguments(q, k, slopes, scale, window_left, window_right,
                      softcap):
    """artifact.forward's / backward's keyword arguments."""
    windowed = (window_left, window_right) != (-1, -1)
    return dict(scale=scale,
                window=(window_left, window_right) if windowed else None,
                softcap=softcap if softcap > 0 else None,
                alibi_slopes=slopes.contiguous())


# torch.compile traces the launches as single ops (flashfuse.ops' pattern):
# the artifact search and ctypes calls stay out of its graphs.
alibi_fwd = torch.library.custom_op(
    "flashfuse::alibi_fwd", mutates_args=(), device_types="cuda")(_alibi_fwd)


@alibi_fwd.register_fake
def _(q, k, v, slopes, causal, scale, window_left, window_right, softcap,
      dropout_p=0.0, seed=0):
    b, hq, sq, _ = q.shape
    return (q.new_empty(b, hq, sq, v.shape[-1]),
            q.new_empty(b, hq, sq, dtype=torch.float32))


def _alibi_bwd(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
               v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor,
               slopes: torch.Tensor, causal: int, scale: float,
               window_left: int, window_right: int, softcap: float,
               deterministic: bool = False, dropout_p: float = 0.0,
               seed: int = 0
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dQ, dK, dV) of the checked call's forward (O, LSE); dropout_p and
    seed the forward's."""
    variant = _variant_of(q, v, slopes, causal, window_left, window_right,
                          softcap, dropout=dropout_p > 0)
    return artifact.backward(artifact_dir(variant, True, q.device,
                                          deterministic),
                             dout.contiguous(), q, k, v, out, lse,
                             **_launch_arguments(q, k, slopes, scale,
                                                 window_left, window_right,
                                                 softcap),
                             dropout_p=dropout_p, seed=seed)


alibi_bwd = torch.library.custom_op(
    "flashfuse::alibi_bwd", mutates_args=(), device_types="cuda")(_alibi_bwd)


@alibi_bwd.register_fake
def _(dout, q, k, v, out, lse, slopes, causal, scale, window_left,
      window_right, softcap, deterministic=False, dropout_p=0.0, seed=0):
    return tuple(ops._grad_like(t) for t in (q, k, v))


class _AlibiAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, slopes, options, deterministic, dropout):
        o, lse = ops.run_op(alibi_fwd, _alibi_fwd, q, k, v, slopes, *options,
                            *dropout)
        ctx.save_for_backward(q, k, v, o, lse, slopes)
        ctx.options, ctx.deterministic = options, deterministic
        ctx.dropout = dropout
        return o

    @staticmethod
    def backward(ctx, dout):
        q, k, v, o, lse, slopes = ctx.saved_tensors
        dq, dk, dv = ops.run_op(alibi_bwd, _alibi_bwd, dout, q, k, v, o, lse,
                                slopes, *ctx.options, ctx.deterministic,
                                *ctx.dropout)
        return dq, dk, dv, None, None, None, None


def attention(q, k, v, slopes, causal, scale, window, softcap,
              deterministic=False, dropout_p=0.0):
    """O of the checked call (functional.attention's checks and folding
    done, check_slopes' too): the forward alone where nothing needs a
    gradient, else through autograd (slopes get none, as in flash-attn);
    `deterministic`: the backward of an artifact compiled --deterministic
    (a dQ kernel without float atomics); `dropout_p`: dropout as
    flashfuse.attention's, on kernels compiled with it."""
    options = (int(causal), float(scale), int(window[0]), int(window[1]),
               float(softcap))
    dropout = (float(dropout_p), ops.dropout_seed(dropout_p))
    if not (torch.is_grad_enabled()
            and any(t.requires_grad for t in (q, k, v))):
        return ops.run_op(alibi_fwd, _alibi_fwd, q, k, v, slopes,
                          *options, *dropout)[0]
    return _AlibiAttention.apply(q, k, v, slopes, options,
                                 bool(deterministic), dropout)


# ---- packed (varlen) batches: flashfuse.varlen_attention(alibi_slopes=) ---

def _varlen_launch(q, k, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                   max_seqlen_k, slopes, scale, window_left, window_right,
                   softcap):
    """artifact.forward's / backward's keyword arguments of a packed call:
    the dense call's and the offsets (the kernels take each sequence's Lk_b
    - Lq_b from them)."""
    args = _launch_arguments(q, k, slopes, scale, window_left, window_right,
                             softcap)
    args.update(varlen=(cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                        max_seqlen_k))
    return args


def _alibi_varlen_fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                      cu_seqlens_q: torch.Tensor, cu_seqlens_k: torch.Tensor,
                      max_seqlen_q: int, max_seqlen_k: int,
                      slopes: torch.Tensor, causal: int, scale: float,
                      window_left: int, window_right: int, softcap: float,
                      dropout_p: float = 0.0, seed: int = 0
                      ) -> tuple[torch.Tensor, torch.Tensor]:
    """(O [total_q, Hq, Dv], LSE f32 [Hq, total_q]) of the checked packed
    call (flashfuse.varlen_attention's layouts)."""
    total_q, hq, _ = q.shape
    if total_q == 0 or k.shape[0] == 0:
        # No (query, key) pair: every row is fully masked.
        return (q.new_zeros(total_q, hq, v.shape[-1]),
                q.new_full((hq, total_q), float("inf"), dtype=torch.float32))
    variant = _variant_of(q, v, slopes, causal, window_left, window_right,
                          softcap, varlen=True, dropout=dropout_p > 0)
    o, lse = artifact.forward(
        artifact_dir(variant, False, q.device),
        *(ops._packed_view(t) for t in (q, k, v)),
        **_varlen_launch(q, k, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                         max_seqlen_k, slopes, scale, window_left,
                         window_right, softcap),
        dropout_p=dropout_p, seed=seed)
    return o[0].transpose(0, 1), lse[0]


alibi_varlen_fwd = torch.library.custom_op(
    "flashfuse::alibi_varlen_fwd", mutates_args=(),
    device_types="cuda")(_alibi_varlen_fwd)


@alibi_varlen_fwd.register_fake
def _(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
      slopes, causal, scale, window_left, window_right, softcap,
      dropout_p=0.0, seed=0):
    total_q, hq, _ = q.shape
    return (q.new_empty(total_q, hq, v.shape[-1]),
            q.new_empty(hq, total_q, dtype=torch.float32))


def _alibi_varlen_bwd(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                      v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor,
                      cu_seqlens_q: torch.Tensor, cu_seqlens_k: torch.Tensor,
                      max_seqlen_q: int, max_seqlen_k: int,
                      slopes: torch.Tensor, causal: int, scale: float,
                      window_left: int, window_right: int, softcap: float,
                      deterministic: bool = False, dropout_p: float = 0.0,
                      seed: int = 0
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dQ, dK, dV) of _alibi_varlen_fwd's (O, LSE), in q's, k's and v's
    layouts; dropout_p and seed the forward's."""
    if q.shape[0] == 0 or k.shape[0] == 0:
        return tuple(torch.zeros_like(t) for t in (q, k, v))
    variant = _variant_of(q, v, slopes, causal, window_left, window_right,
                          softcap, varlen=True, dropout=dropout_p > 0)
    dq, dk, dv = artifact.backward(
        artifact_dir(variant, True, q.device, deterministic),
        *(ops._packed_view(t) for t in (dout.contiguous(), q, k, v, out)),
        lse.unsqueeze(0),
        **_varlen_launch(q, k, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                         max_seqlen_k, slopes, scale, window_left,
                         window_right, softcap),
        dropout_p=dropout_p, seed=seed)
    return tuple(g[0].transpose(0, 1) for g in (dq, dk, dv))


alibi_varlen_bwd = torch.library.custom_op(
    "flashfuse::alibi_varlen_bwd", mutates_args=(),
    device_types="cuda")(_alibi_varlen_bwd)


@alibi_varlen_bwd.register_fake
def _(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
      max_seqlen_k, slopes, causal, scale, window_left, window_right,
      softcap, deterministic=False, dropout_p=0.0, seed=0):
    return tuple(torch.empty_like(t) for t in (q, k, v))


class _AlibiVarlenAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, cu_seqlens_q, cu_seqlens_k, slopes, sizes,
                options, deterministic, dropout):
        o, lse = alibi_varlen_fwd(q, k, v, cu_seqlens_q, cu_seqlens_k,
                                  *sizes, slopes, *options, *dropout)
        ctx.mark_non_differentiable(lse)
        ctx.save_for_backward(q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k,
                              slopes)
        ctx.sizes, ctx.options = sizes, options
        ctx.deterministic, ctx.dropout = deterministic, dropout
        return o, lse

    @staticmethod
    def backward(ctx, dout, _dlse):
        q, k, v, o, lse, cu_q, cu_k, slopes = ctx.saved_tensors
        dq, dk, dv = alibi_varlen_bwd(dout, q, k, v, o, lse, cu_q, cu_k,
                                      *ctx.sizes, slopes, *ctx.options,
                                      ctx.deterministic, *ctx.dropout)
        return dq, dk, dv, None, None, None, None, None, None, None


def varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                     max_seqlen_k, slopes, causal, scale, window, softcap,
                     deterministic=False, dropout_p=0.0):
    """(O [total_q, Hq, Dv], LSE [Hq, total_q]) of a checked packed call
    (flashfuse.varlen_attention's checks and folding done, check_slopes'
    too, B the number of sequences): flash-attn's varlen ALiBi, the
    distance |i' + Lk_b - Lq_b - j'| in each sequence's own indices, on a
    varlen kernel compiled on first use. Differentiable in q, k, v.
    `dropout_p`: varlen_attention's dropout (each sequence's own index and
    local indices)."""
    sizes = (int(max_seqlen_q), int(max_seqlen_k))
    options = (int(causal), float(scale), int(window[0]), int(window[1]),
               float(softcap))
    dropout = (float(dropout_p), ops.dropout_seed(dropout_p))
    if not (torch.is_grad_enabled()
            and any(t.requires_grad for t in (q, k, v))):
        return alibi_varlen_fwd(q, k, v, cu_seqlens_q, cu_seqlens_k, *sizes,
                                slopes, *options, *dropout)
    return _AlibiVarlenAttention.apply(q, k, v, cu_seqlens_q, cu_seqlens_k,
                                       slopes, sizes, options,
                                       bool(deterministic), dropout)


# ---- block-sparse lists: flashfuse.block_sparse_attention(alibi_slopes=) --

def _block_mask(num, idx, fnum, fidx):
    return (num, idx) if fnum is None else (num, idx, fnum, fidx)


def _alibi_bs_fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                  num: torch.Tensor, idx: torch.Tensor,
                  fnum: Optional[torch.Tensor], fidx: Optional[torch.Tensor],
                  slopes: torch.Tensor, causal: int, scale: float,
                  block_q: int, block_k: int
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """(O [B, Hq, Sq, Dv], LSE f32 [B, Hq, Sq]) over the listed key blocks
    (block_sparse_attention's checked call)."""
    variant = _block_sparse_variant(q, v, slopes, causal, fnum, block_q,
                                    block_k)
    return artifact.forward(
        artifact_dir(variant, False, q.device), q, k, v, scale=scale,
        block_mask=_block_mask(num, idx, fnum, fidx),
        alibi_slopes=slopes.contiguous())


def _block_sparse_variant(q, v, slopes, causal, fnum, block_q, block_k):
    sparse = (1 if fnum is None else 2, int(block_q), int(block_k))
    return kernel_variant(q.dtype, q.shape[-1], v.shape[-1], causal, False,
                          False, slopes.dim(), sparse=sparse)


alibi_bs_fwd = torch.library.custom_op(
    "flashfuse::alibi_block_sparse_fwd", mutates_args=(),
    device_types="cuda")(_alibi_bs_fwd)


@alibi_bs_fwd.register_fake
def _(q, k, v, num, idx, fnum, fidx, slopes, causal, scale, block_q,
      block_k):
    b, hq, sq, _ = q.shape
    return (q.new_empty(b, hq, sq, v.shape[-1]),
            q.new_empty(b, hq, sq, dtype=torch.float32))


def _alibi_bs_bwd(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                  v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor,
                  num: torch.Tensor, idx: torch.Tensor,
                  fnum: Optional[torch.Tensor], fidx: Optional[torch.Tensor],
                  slopes: torch.Tensor, causal: int, scale: float,
                  block_q: int, block_k: int, deterministic: bool = False
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dQ, dK, dV) over the same lists (transposed by the backward)."""
    variant = _block_sparse_variant(q, v, slopes, causal, fnum, block_q,
                                    block_k)
    return artifact.backward(
        artifact_dir(variant, True, q.device, deterministic),
        dout.contiguous(), q, k, v, out, lse, scale=scale,
        block_mask=_block_mask(num, idx, fnum, fidx),
        alibi_slopes=slopes.contiguous())


alibi_bs_bwd = torch.library.custom_op(
    "flashfuse::alibi_block_sparse_bwd", mutates_args=(),
    device_types="cuda")(_alibi_bs_bwd)


@alibi_bs_bwd.register_fake
def _(dout, q, k, v, out, lse, num, idx, fnum, fidx, slopes, causal, scale,
      block_q, block_k, deterministic=False):
    return tuple(ops._grad_like(t) for t in (q, k, v))


class _AlibiBlockSparseAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, lists, slopes, options, deterministic):
        o, lse = ops.run_op(alibi_bs_fwd, _alibi_bs_fwd, q, k, v, *lists,
                            slopes, *options)
        ctx.save_for_backward(q, k, v, o, lse, slopes,
                              *(t for t in lists if t is not None))
        ctx.options, ctx.deterministic = options, deterministic
        return o

    @staticmethod
    def backward(ctx, dout):
        q, k, v, o, lse, slopes, *saved = ctx.saved_tensors
        lists = tuple(saved) + (None,) * (4 - len(saved))
        dq, dk, dv = ops.run_op(alibi_bs_bwd, _alibi_bs_bwd, dout, q, k, v,
                                o, lse, *lists, slopes, *ctx.options,
                                ctx.deterministic)
        return dq, dk, dv, None, None, None, None


def block_sparse_attention(q, k, v, lists, size, slopes, causal, scale,
                           deterministic=False):
    """O of a checked block_sparse_attention call with flash-attn's ALiBi
    (its lists contiguous, `size` their (BQ, BK), check_slopes' checks
    done): the block-sparse kernels with the `alibi(...)` operand, compiled
    on first use like the dense ALiBi ones. Differentiable in q, k, v (the
    slopes and lists get no gradient)."""
    options = (int(causal), float(scale), int(size[0]), int(size[1]))
    if not (torch.is_grad_enabled()
            and any(t.requires_grad for t in (q, k, v))):
        return ops.run_op(alibi_bs_fwd, _alibi_bs_fwd, q, k, v, *lists,
                          slopes, *options)[0]
    return _AlibiBlockSparseAttention.apply(q, k, v, lists, slopes, options,
                                            bool(deterministic))
