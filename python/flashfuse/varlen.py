"""flashfuse.varlen_attention: attention over a packed batch of
variable-length sequences, in flash-attn's flash_attn_varlen_func layout."""

import math
import numbers

import torch

from . import alibi
from . import ops  # noqa: F401  (registers torch.ops.flashfuse.*)
from .functional import _CAUSAL, fold_causal_into_window
from .ops import dropout_seed
from ._env import EnvFlag

# Set to 1 to run the host check of the offsets (check_inputs=True) on every
# call: a debug switch for a whole program.
CHECK_ENV = "FLASHFUSE_CHECK_VARLEN"
_check_env = EnvFlag(CHECK_ENV)

_NAME = "flashfuse.varlen_attention"


def _check(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
           enable_gqa, alibi_slopes=None):
    """Every check that needs no GPU and no host synchronisation. Structure
    first, devices last: every mistake but the device is then reported the
    same way on machines with and without a GPU."""
    for name, t, dims in (("q", q, "[total_q, Hq, D]"),
                          ("k", k, "[total_k, Hkv, D]"),
                          ("v", v, "[total_k, Hkv, Dv]")):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{_NAME}: {name} must be a torch.Tensor, got "
                            f"{type(t).__name__}")
        if t.dim() != 3:
            raise ValueError(f"{_NAME}: {name} must be {dims} (flash-attn's "
                             f"varlen layout), got shape {tuple(t.shape)}")
        if t.dtype not in (torch.float16, torch.bfloat16):
            raise TypeError(f"{_NAME} supports float16 and bfloat16; {name} "
                            f"is {t.dtype}")
    if not (q.dtype == k.dtype == v.dtype):
        raise TypeError(f"{_NAME}: q, k and v must have one dtype; got "
                        f"{q.dtype}, {k.dtype}, {v.dtype}")
    (total_q, hq, d), (total_k, hkv, dk) = q.shape, k.shape
    if v.shape[:2] != k.shape[:2] or dk != d:
        raise ValueError(
            f"{_NAME}: mismatched shapes: q {tuple(q.shape)}, k "
            f"{tuple(k.shape)}, v {tuple(v.shape)} (k and v need equal "
            "total_k and heads, k the head dim of q)")
    if hq == 0 or hkv == 0 or d == 0 or v.shape[2] == 0:
        raise ValueError(f"{_NAME} does not take zero heads or head dims: q "
                         f"{tuple(q.shape)}, k {tuple(k.shape)}, v "
                         f"{tuple(v.shape)}")
    if hq != hkv:
        if not enable_gqa:
            raise ValueError(f"{_NAME}: q has {hq} heads and k/v {hkv}; pass "
                             "enable_gqa=True for grouped-query attention")
        if hq % hkv:
            raise ValueError(f"{_NAME}: q's heads ({hq}) must be a multiple "
                             f"of k/v's heads ({hkv})")
    for name, t in (("cu_seqlens_q", cu_seqlens_q),
                    ("cu_seqlens_k", cu_seqlens_k)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{_NAME}: {name} must be an int32 torch.Tensor "
                            f"[B + 1], got {type(t).__name__}")
        if t.dtype != torch.int32:
            raise TypeError(f"{_NAME}: {name} must be int32, got {t.dtype}")
        if t.dim() != 1 or t.shape[0] < 2:
            raise ValueError(f"{_NAME}: {name} must be [B + 1] with B >= 1 "
                             f"sequences, got shape {tuple(t.shape)}")
    if cu_seqlens_q.shape != cu_seqlens_k.shape:
        raise ValueError(
            f"{_NAME}: cu_seqlens_q has {cu_seqlens_q.shape[0]} entries and "
            f"cu_seqlens_k {cu_seqlens_k.shape[0]}; both are [B + 1] for the "
            "same B sequences")
    for name, value, total, rows in (
            ("max_seqlen_q", max_seqlen_q, total_q, "q"),
            ("max_seqlen_k", max_seqlen_k, total_k, "k")):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{_NAME}: {name} must be an int, got "
                            f"{type(value).__name__}")
        if value < 0:
            raise ValueError(f"{_NAME}: {name} = {value} is negative")
    if total_q and not max_seqlen_q:
        raise ValueError(f"{_NAME}: max_seqlen_q = 0 but q has {total_q} "
                         "rows: it must bound the longest query sequence")
    if alibi_slopes is not None:
        alibi.check_slopes(alibi_slopes, cu_seqlens_q.shape[0] - 1, hq,
                           _NAME)
        # No sequence is longer than its bound or the packed total.
        alibi.check_lengths(min(max_seqlen_q, total_q),
                            min(max_seqlen_k, total_k), _NAME)
    tensors = (("q", q), ("k", k), ("v", v), ("cu_seqlens_q", cu_seqlens_q),
               ("cu_seqlens_k", cu_seqlens_k)) + (
                   (("alibi_slopes", alibi_slopes),)
                   if alibi_slopes is not None else ())
    for name, t in tensors:
        if t.device.type != "cuda":
            raise ValueError(
                f"{_NAME} runs on CUDA tensors; {name} is on {t.device}"
                + ("" if torch.cuda.is_available()
                   else " and no CUDA GPU is available"))
    for name, t in tensors:
        if t.device != q.device:
            raise ValueError(f"{_NAME}: {name} is on {t.device} but q on "
                             f"{q.device}")


def check_offsets(cu_seqlens_q, cu_seqlens_k, total_q, total_k, max_seqlen_q,
                  max_seqlen_k):
    """The full check of the offsets (check_inputs=True), on a host copy of
    them (one synchronisation): each starts at 0, never decreases and ends
    at its total, and no sequence is longer than its max_seqlen. Raises
    ValueError naming the first offending entry."""
    for name, cu, total, bound, bound_name in (
            ("cu_seqlens_q", cu_seqlens_q, total_q, max_seqlen_q,
             "max_seqlen_q"),
            ("cu_seqlens_k", cu_seqlens_k, total_k, max_seqlen_k,
             "max_seqlen_k")):
        values = cu.tolist()
        if values[0] != 0:
            raise ValueError(f"{_NAME}: {name}[0] = {values[0]}; the "
                             "offsets start at 0")
        for i in range(1, len(values)):
            length = values[i] - values[i - 1]
            if length < 0:
                raise ValueError(
                    f"{_NAME}: {name}[{i}] = {values[i]} < {name}[{i - 1}] = "
                    f"{values[i - 1]}; the offsets must not decrease")
            if length > bound:
                raise ValueError(
                    f"{_NAME}: sequence {i - 1} has {length} rows ({name}"
                    f"[{i}] - {name}[{i - 1}]), more than {bound_name} = "
                    f"{bound}")
        if values[-1] != total:
            raise ValueError(
                f"{_NAME}: {name}[-1] = {values[-1]} but the packed tensor "
                f"has {total} rows; the last offset is the total")


def check_requested(check_inputs):
    """check_inputs=True, or FLASHFUSE_CHECK_VARLEN=1 in the environment
    (every call), turns the host check of the offsets on."""
    return bool(check_inputs) or _check_env()


class _VarlenAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                max_seqlen_k, causal, scale, window_left, window_right,
                softcap, deterministic, dropout_p, seed):
        o, lse = torch.ops.flashfuse.varlen_attention_fwd(
            q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
            causal, scale, window_left, window_right, softcap, dropout_p,
            seed)
        ctx.mark_non_differentiable(lse)
        ctx.save_for_backward(q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k)
        ctx.args = (max_seqlen_q, max_seqlen_k, causal, scale, window_left,
                    window_right, softcap, deterministic, dropout_p, seed)
        return o, lse

    @staticmethod
    def backward(ctx, dout, _dlse):
        # LSE is not differentiable (marked above): its gradient is ignored,
        # as flash-attn does.
        q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k = ctx.saved_tensors
        dq, dk, dv = torch.ops.flashfuse.varlen_attention_bwd(
            dout, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, *ctx.args)
        return (dq, dk, dv) + (None,) * 12


def varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                     max_seqlen_k, is_causal=False, scale=None, window=None,
                     softcap=None, enable_gqa=True, return_lse=False,
                     check_inputs=False, deterministic=False,
                     alibi_slopes=None, dropout_p=0.0):
    """Attention over a packed batch of B variable-length sequences, in the
    layout of flash-attn's flash_attn_varlen_func, on FlashFuse's varlen
    forward kernel (docs/KERNEL_ABI.md "Varlen").

    q [total_q, Hq, D], k [total_k, Hkv, D], v [total_k, Hkv, Dv]: CUDA
    float16/bfloat16 tensors, the sequences packed one after another along
    the first dimension (read in place through their strides, as the
    [1, H, total, D] view; a non-contiguous last dim or misaligned rows are
    copied). cu_seqlens_q, cu_seqlens_k: int32 CUDA tensors [B + 1] of
    cumulative offsets: sequence i owns rows [cu_seqlens_q[i],
    cu_seqlens_q[i + 1]) of q and [cu_seqlens_k[i], cu_seqlens_k[i + 1])
    of k and v; a length may be 0 (a sequence without keys gives O = 0 and
    LSE = +inf for its rows). max_seqlen_q, max_seqlen_k: ints bounding
    every sequence's length (max_seqlen_q sizes the grid; a bound above
    the total is taken as the total).

    Attention never crosses sequences: each sequence is its own
    flashfuse.attention, with the same options. `is_causal` is False, True
    or "top_left" (j <= i in each sequence's own indices), or "bottom_right"
    (j <= i + Lk_i - Lq_i; flash-attn's causal=True is this one); equal
    lengths make them the same. `window=(left, right)` keeps keys within
    that distance of the diagonal (-1 = unbounded; the diagonal is the
    bottom-right one only with is_causal="bottom_right"), `softcap` applies
    softcap * tanh(score / softcap), `scale` defaults to 1 / sqrt(D).
    Hq a multiple of Hkv is grouped-query attention, which flash-attn takes
    without a flag: enable_gqa=False makes Hq != Hkv an error instead.
    Returns O [total_q, Hq, Dv] and, with return_lse, also the f32
    log-sum-exp [Hq, total_q] (flash-attn's softmax_lse layout).

    Checks: shapes, dtypes, devices, B (both offsets [B + 1]) and the
    max_seqlens (>= 0; max_seqlen_q >= 1 when q has rows) are checked on
    the host before anything runs (TypeError/ValueError), at no cost to the
    GPU. The offsets themselves stay on the GPU, as in
    flash-attn, which does not check them: check_inputs=True (or the
    environment variable FLASHFUSE_CHECK_VARLEN=1, every call) copies them
    to the host (a synchronisation: a debug option, off by default) and
    raises ValueError unless each starts at 0, never decreases, ends at
    total_q / total_k, and no sequence is longer than max_seqlen_q /
    max_seqlen_k. Unchecked, offsets outside [0, total] are clamped by the
    kernel (a wrong answer, never an out-of-bounds access), and query rows
    of a sequence longer than max_seqlen_q or past cu_seqlens_q[-1] are
    left unwritten.

    Backward: differentiable in q, k and v (autograd; LSE is not), on the
    varlen backward kernels (docs/KERNEL_ABI.md "Varlen"), with the same
    per-sequence masks. Gradient rows of tokens that no sequence owns
    (past cu_seqlens[-1]) or of a sequence longer than its max_seqlen are
    left unspecified, as the forward leaves such rows of O.
    `deterministic=True` (or torch's deterministic mode) uses an artifact
    with a deterministic dQ kernel (no float atomics; flashfuse-compile
    --deterministic) and raises NotImplementedError if there is none.

    `dropout_p` (flash-attn's argument) drops each probability with that
    chance and scales the kept ones by 1 / (1 - dropout_p), as
    flashfuse.attention does, the keep test drawn at each sequence's own
    index and local indices (FlashOps.td: a sequence draws the same mask
    wherever it is packed); one seed a call from torch's generator
    (torch.manual_seed reproduces it), which the backward reuses. The
    library has no varlen dropout kernels: they are compiled on first use
    by flashfuse-compile and cached (flashfuse._compile).

    `alibi_slopes` (flash-attn's argument): float32 [Hq] or [B, Hq]
    slopes (B the number of sequences) of the bias
    -slope * |i' + Lk_i - Lq_i - j'| added to every score, in each
    sequence's own indices and lengths, as flash-attn's varlen ALiBi
    (and flashfuse.attention's). These kernels are not in the library:
    a packed flash.attention whose score_mod reads the slopes and each
    sequence's Lk - Lq is compiled on first use by flashfuse-compile and
    cached (flashfuse.alibi); differentiable too, deterministically with
    deterministic=True (that op compiled --deterministic).
    """
    if is_causal not in _CAUSAL:
        raise ValueError(f"{_NAME}: is_causal must be a bool, 'top_left' or "
                         f"'bottom_right', got {is_causal!r}")
    if window is None:
        window = (-1, -1)
    if (not isinstance(window, (tuple, list)) or len(window) != 2
            or any(isinstance(w, bool) or not isinstance(w, numbers.Integral)
                   or w < -1 for w in window)):
        raise ValueError(f"{_NAME}: window must be (left, right) ints >= -1,"
                         f" got {window!r}")
    softcap = float(softcap or 0.0)
    if not (math.isfinite(softcap) and softcap >= 0):
        raise ValueError(f"{_NAME}: softcap must be positive, got {softcap}")
    if scale is not None and not math.isfinite(float(scale)):
        raise ValueError(f"{_NAME}: scale must be finite, got {scale!r}")
    dropout_p = float(dropout_p)
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"{_NAME}: dropout_p must be in [0, 1), got "
                         f"{dropout_p}")
    _check(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
           enable_gqa, alibi_slopes)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    if check_requested(check_inputs):
        check_offsets(cu_seqlens_q, cu_seqlens_k, q.shape[0], k.shape[0],
                      max_seqlen_q, max_seqlen_k)
    # No sequence is longer than the packed tensor: a larger bound (a
    # model's maximum length, say) means the total.
    max_seqlen_q = min(int(max_seqlen_q), q.shape[0])
    max_seqlen_k = min(int(max_seqlen_k), k.shape[0])
    deterministic = bool(deterministic) or (
        torch.are_deterministic_algorithms_enabled()
        and not torch.is_deterministic_algorithms_warn_only_enabled())
    # One offsets tensor for both: every sequence's queries are its keys.
    causal, window = fold_causal_into_window(
        _CAUSAL[is_causal], (int(window[0]), int(window[1])),
        cu_seqlens_q is cu_seqlens_k)
    if alibi_slopes is not None:
        o, lse = alibi.varlen_attention(
            q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
            alibi_slopes, causal, float(scale), window, softcap,
            deterministic, dropout_p)
        return (o, lse) if return_lse else o
    o, lse = _VarlenAttention.apply(
        q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
        causal, float(scale), window[0], window[1], softcap, deterministic,
        dropout_p, dropout_seed(dropout_p))
    return (o, lse) if return_lse else o
