"""The torch custom ops that run FlashFuse kernels.

Registered through torch.library so that torch.compile traces them as single
ops (with the fake implementations below for shape propagation) instead of
breaking the graph at a ctypes call.
"""

import os
from typing import Optional

import torch

from . import _kernels
from . import _runtime as rt
from .errors import KernelNotFoundError

_DTYPES = {torch.float16: rt.DTYPE_F16, torch.bfloat16: rt.DTYPE_BF16}


def _output_like(q, head_dim_v):
    """O in q's memory layout: BSHD-in-memory q (heads inner to sequence, as
    models produce) gives a BSHD-in-memory O, so the caller's transpose back
    to [B, S, H, D] is free."""
    b, h, s, _ = q.shape
    if q.stride(1) < q.stride(2):
        return q.new_empty(b, s, h, head_dim_v).transpose(1, 2)
    return q.new_empty(b, h, s, head_dim_v)


def _variant(kind, q, k, v, bias, mask, causal, window_left, window_right,
             softcap, dropout_p):
    return _kernels.make_variant(
        kind, _DTYPES[q.dtype], q.shape[-1], v.shape[-1], causal,
        window=(window_left, window_right) != (-1, -1), softcap=softcap > 0,
        bias=bias is not None, mask=mask is not None, dropout=dropout_p > 0)


def _aligned(t):
    """Whether the kernels can read t in place: last dim contiguous, 16-byte
    aligned base, and every walked row starting on a 16-byte boundary."""
    elem = t.element_size()
    if t.shape[-1] > 1 and t.stride(-1) != 1:
        return False
    if t.data_ptr() % 16:
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


def _poison(*tensors):
    """With FLASHFUSE_POISON_OUTPUTS=1, fill outputs with NaN before a launch
    so that elements a kernel fails to write cannot pass a test by holding
    an earlier result (the caching allocator reuses blocks)."""
    if os.environ.get("FLASHFUSE_POISON_OUTPUTS") == "1":
        for t in tensors:
            t.fill_(float("nan"))


def _span(t):
    """Elements reachable from t's data pointer (its memref size)."""
    return 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()) if n > 1)


def _strides4(t):
    return (t.stride(0), t.stride(1), t.stride(2), t.stride(3))


@torch.library.custom_op("flashfuse::attention_fwd", mutates_args=(),
                         device_types="cuda")
def attention_fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                  bias: Optional[torch.Tensor], mask: Optional[torch.Tensor],
                  causal: int, scale: float, window_left: int,
                  window_right: int, softcap: float, dropout_p: float,
                  seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    variant = _variant(rt.KIND_FORWARD, q, k, v, bias, mask, causal,
                       window_left, window_right, softcap, dropout_p)
    kernel = _kernels.kernel(q.device.index, variant)
    o = _output_like(q, v.shape[-1])  # before any copy: the fake's layout
    q, k, v, bias, mask = (_readable(t) for t in (q, k, v, bias, mask))
    b, hq, sq, d = q.shape
    lse = q.new_empty(b, hq, sq, dtype=torch.float32)
    _poison(o, lse)
    a = rt.forward_args()
    a.dtype = _DTYPES[q.dtype]
    a.q, a.k, a.v, a.o, a.lse = (t.data_ptr() for t in (q, k, v, o, lse))
    a.batch, a.heads_q, a.seq_q, a.head_dim = b, hq, sq, d
    a.heads_kv, a.seq_k, a.head_dim_v = k.shape[1], k.shape[2], v.shape[-1]
    a.q_stride[:], a.k_stride[:] = _strides4(q), _strides4(k)
    a.v_stride[:], a.o_stride[:] = _strides4(v), _strides4(o)
    if bias is not None:
        a.bias, a.bias_stride[:] = bias.data_ptr(), _strides4(bias)
    if mask is not None:
        a.mask, a.mask_stride[:] = mask.data_ptr(), _strides4(mask)
    a.scale = scale
    a.window_left, a.window_right = window_left, window_right
    a.softcap, a.dropout_p, a.seed = softcap, dropout_p, seed
    with torch.cuda.device(q.device):
        rt.attention_forward(kernel, a,
                             torch.cuda.current_stream(q.device).cuda_stream)
    return o, lse


@attention_fwd.register_fake
def _(q, k, v, bias, mask, causal, scale, window_left, window_right, softcap,
      dropout_p, seed):
    b, hq, sq, _ = q.shape
    return (_output_like(q, v.shape[-1]),
            q.new_empty(b, hq, sq, dtype=torch.float32))


def _backward_kernels(device_index, variant_args):
    """(preprocess kernel or None, backward kernel); NotImplementedError when
    the artifacts have no backward kernel for the variant."""
    bwd = _variant(rt.KIND_BACKWARD, *variant_args)
    try:
        kernel = _kernels.kernel(device_index, bwd)
    except KernelNotFoundError as e:
        raise NotImplementedError(
            "flashfuse: the kernel artifacts have no backward kernel (kind "
            f"backward) for '{bwd.describe()}', so this attention cannot be "
            "differentiated yet; compile an artifact with backward kernels or "
            f"use torch SDPA for training.\n{e}") from None
    pre = _variant(rt.KIND_BACKWARD_PREPROCESS, *variant_args)
    pre_kernel = (_kernels.kernel(device_index, pre)
                  if _kernels.has_kernel(pre) else None)
    return pre_kernel, kernel


@torch.library.custom_op("flashfuse::attention_bwd", mutates_args=(),
                         device_types="cuda")
def attention_bwd(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                  v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor,
                  bias: Optional[torch.Tensor], mask: Optional[torch.Tensor],
                  causal: int, scale: float, window_left: int,
                  window_right: int, softcap: float, dropout_p: float,
                  seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    pre, kernel = _backward_kernels(
        q.device.index, (q, k, v, bias, mask, causal, window_left,
                         window_right, softcap, dropout_p))
    dout, q, k, v, out, bias, mask = (
        _readable(t) for t in (dout, q, k, v, out, bias, mask))
    b, hq, sq, d = q.shape
    hkv, sk, dv = k.shape[1], k.shape[2], v.shape[-1]
    f32 = torch.float32
    # KERNEL_ABI.md "Backward": dQ is accumulated atomically in f32; dK/dV
    # are written per query head and summed over each GQA group here.
    delta = q.new_empty(b, hq, sq, dtype=f32)
    dq_accum = q.new_zeros(b, hq, sq, d, dtype=f32)
    dk_heads = q.new_empty(b, hq, sk, d)
    dv_heads = q.new_empty(b, hq, sk, dv)
    _poison(delta, dk_heads, dv_heads)
    named = {}
    for name, t in (("q", q), ("k", k), ("v", v), ("o", out), ("do", dout),
                    ("lse", lse), ("delta", delta), ("dq_accum", dq_accum),
                    ("dk", dk_heads), ("dv", dv_heads), ("bias", bias),
                    ("mask", mask)):
        if t is None:
            continue
        named[name] = (rt.PARAM_MEMREF, (t.data_ptr(), _span(t)))
    for name, t in (("q", q), ("k", k), ("v", v), ("o", out), ("do", dout)):
        for axis, suffix in enumerate(("b", "h", "s")):
            named[f"{name}_stride_{suffix}"] = (rt.PARAM_I64, t.stride(axis))
    for name, t in (("bias", bias), ("mask", mask)):
        if t is not None:
            for axis, suffix in enumerate(("b", "h", "q", "k")):
                named[f"{name}_stride_{suffix}"] = (rt.PARAM_I64, t.stride(axis))
    for name, value in (("batch", b), ("heads_q", hq), ("heads_kv", hkv),
                        ("seq_q", sq), ("seq_k", sk), ("window_left", window_left),
                        ("window_right", window_right)):
        named[name] = (rt.PARAM_I32, value)
    for name, value in (("scale", scale), ("softcap", softcap),
                        ("dropout_p", dropout_p)):
        named[name] = (rt.PARAM_F32, value)
    named["seed"] = (rt.PARAM_I64, seed)
    stream = torch.cuda.current_stream(q.device).cuda_stream
    with torch.cuda.device(q.device):
        if pre is not None:
            rt.kernel_launch(pre, named, stream)
        else:
            # delta_i = sum_d dO_id * O_id, what the preprocess kernel computes.
            delta.copy_((dout.to(f32) * out.to(f32)).sum(-1))
        rt.kernel_launch(kernel, named, stream)
    group = hq // hkv
    dk = dk_heads.view(b, hkv, group, sk, d).sum(2, dtype=f32).to(q.dtype)
    dvv = dv_heads.view(b, hkv, group, sk, dv).sum(2, dtype=f32).to(q.dtype)
    return dq_accum.to(q.dtype), dk, dvv


@attention_bwd.register_fake
def _(dout, q, k, v, out, lse, bias, mask, causal, scale, window_left,
      window_right, softcap, dropout_p, seed):
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
