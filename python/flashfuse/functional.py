"""flashfuse.attention: scaled_dot_product_attention on FlashFuse kernels."""

import math

import torch

from . import alibi, fp8
from . import ops  # registers torch.ops.flashfuse.*

_CAUSAL = {False: 0, True: 1, "none": 0, "top_left": 1, "bottom_right": 2}


def fold_causal_into_window(causal, window, equal_lengths):
    """(causal, window) of the same mask, as one window where the two share
    their diagonal: causal keeps keys j <= i (top-left), a window (left,
    right) i - left <= j <= i + right, so together they keep i - left <= j
    <= i: window (left, 0) with no causal mask, the kernel library's
    sliding window (Mistral's, which transformers passes as causal with a
    window). Bottom-right causality shares the window's diagonal only where
    each query sequence is as long as its key sequence (`equal_lengths`). A
    window of unbounded left adds nothing to causality."""
    left, right = window
    if causal == 0 or (left < 0 and right < 0):
        return causal, window
    if causal == _CAUSAL["bottom_right"] and not equal_lengths:
        return causal, window
    if left < 0:
        return causal, (-1, -1)
    return _CAUSAL["none"], (left, 0)


def _check_inputs(q, k, v, enable_gqa, fp8_inputs=False):
    """The inputs' structure. The device is _check_device's, called after
    every other check: every mistake but the device is then reported the
    same way on machines with and without a GPU. `fp8_inputs`: the dtypes
    are fp8.check_args' to judge."""
    for name, t in (("query", q), ("key", k), ("value", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"flashfuse.attention: {name} must be a "
                            f"torch.Tensor, got {type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(f"flashfuse.attention expects [B, H, S, D] "
                             f"tensors; {name} has shape {tuple(t.shape)}")
        if not fp8_inputs and t.dtype not in (torch.float16, torch.bfloat16):
            raise TypeError(f"flashfuse.attention supports float16 and "
                            f"bfloat16; {name} is {t.dtype} (float8_e4m3fn "
                            "too, with q_descale, k_descale, v_descale)")
    if not fp8_inputs and not (q.dtype == k.dtype == v.dtype):
        raise TypeError(f"query, key and value must have one dtype; got "
                        f"{q.dtype}, {k.dtype}, {v.dtype}")
    (b, hq, _, d), (bk, hk, sk, dk), (bv, hv, sv, _) = q.shape, k.shape, v.shape
    if not (b == bk == bv) or hk != hv or sk != sv or d != dk:
        raise ValueError(
            f"mismatched shapes: query {tuple(q.shape)}, key "
            f"{tuple(k.shape)}, value {tuple(v.shape)} (need equal batch, "
            "key/value heads and lengths, and query/key head dims)")
    if hq != hk:
        if not enable_gqa:
            raise ValueError(f"query has {hq} heads and key/value {hk}; pass "
                             "enable_gqa=True for grouped-query attention")
        if hq % hk:
            raise ValueError(f"query heads ({hq}) must be a multiple of "
                             f"key/value heads ({hk})")
    if 0 in q.shape or 0 in k.shape or 0 in v.shape:
        raise ValueError("flashfuse.attention does not take empty tensors")


def _check_device(q, k, v):
    for name, t in (("query", q), ("key", k), ("value", v)):
        if t.device.type != "cuda":
            raise ValueError(
                f"flashfuse.attention runs on CUDA tensors; {name} is on "
                f"{t.device}" + ("" if torch.cuda.is_available()
                                 else " and no CUDA GPU is available"))
    if not (q.device == k.device == v.device):
        raise ValueError(f"query, key and value must be on one device; got "
                         f"{q.device}, {k.device}, {v.device}")


def _score_operand(attn_mask, q, k):
    """attn_mask -> (bias f32, mask i8) broadcast views of [B, Hq, Sq, Sk]."""
    if attn_mask is None:
        return None, None
    if not isinstance(attn_mask, torch.Tensor):
        raise TypeError("attn_mask must be a torch.Tensor or None")
    if attn_mask.device != q.device:
        raise ValueError(f"attn_mask is on {attn_mask.device}, query on "
                         f"{q.device}")
    shape = (q.shape[0], q.shape[1], q.shape[2], k.shape[2])
    if attn_mask.dtype == torch.bool:
        # SDPA: True takes part in attention; the ABI's i8 mask: nonzero keeps.
        m = attn_mask.to(torch.int8)
    elif attn_mask.dtype.is_floating_point:
        m = attn_mask.to(torch.float32)
    else:
        raise TypeError(f"attn_mask must be bool or floating point, got "
                        f"{attn_mask.dtype}")
    try:
        m = m.expand(shape) if m.dim() <= 4 else None
    except RuntimeError:
        m = None
    if m is None:
        raise ValueError(f"attn_mask of shape {tuple(attn_mask.shape)} does "
                         f"not broadcast to {shape}")
    return (None, m) if attn_mask.dtype == torch.bool else (m, None)


class _Attention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, bias, mask, causal, scale, window_left,
                window_right, softcap, dropout_p, seed, deterministic):
        # O in the inputs' dtype (out_f32=False): it is what the backward
        # kernels take, and what SDPA returns.
        o, lse = ops.run_op(
            torch.ops.flashfuse.attention_fwd, ops._attention_fwd, q, k, v,
            bias, mask, causal, scale, window_left, window_right, softcap,
            dropout_p, seed, False)
        ctx.save_for_backward(q, k, v, o, lse, bias, mask)
        # The backward regenerates the forward's dropout mask from the same
        # dropout_p and seed (KERNEL_ABI.md, Dropout).
        ctx.options = (causal, scale, window_left, window_right, softcap,
                       dropout_p, seed, deterministic)
        ctx.mark_non_differentiable(lse)
        return o, lse

    @staticmethod
    def backward(ctx, dout, _dlse):
        q, k, v, o, lse, bias, mask = ctx.saved_tensors
        grad_bias = bias is not None and ctx.needs_input_grad[3]
        dq, dk, dv, dbias = ops.run_op(
            torch.ops.flashfuse.attention_bwd, ops._attention_bwd, dout, q, k,
            v, o, lse, bias, mask, *ctx.options, grad_bias)
        return (dq, dk, dv, dbias if grad_bias else None) + (None,) * 9


def attention(query, key, value, attn_mask=None, is_causal=False, scale=None,
              enable_gqa=False, window=None, softcap=None, dropout_p=0.0,
              deterministic=False, q_descale=None, k_descale=None,
              v_descale=None, out_dtype=torch.bfloat16, block_mask=None,
              block_size=128, descale_block_size=(128, 128),
              alibi_slopes=None):
    """torch.nn.functional.scaled_dot_product_attention on FlashFuse kernels.

    query [B, Hq, Sq, D], key [B, Hkv, Sk, D], value [B, Hkv, Sk, Dv]: CUDA
    float16/bfloat16 tensors with any strides (views of BSHD memory are read
    in place; a non-contiguous last dim or misaligned rows are copied).
    Beyond SDPA: `is_causal` may also be "top_left" (what True means) or
    "bottom_right"; `window=(left, right)` restricts each query to keys
    within that distance of its diagonal (-1 = unbounded; the diagonal is
    j = i, or j = i + Sk - Sq with is_causal="bottom_right"; a causal mask
    with a window runs as the window (left, 0) alone, the library's
    sliding-window kernels, where the two diagonals agree); `softcap`
    applies softcap * tanh(score / softcap). Returns O [B, Hq, Sq, Dv]; the
    row log-sum-exp is kept for the backward pass.

    The backward pass runs FlashFuse's backward kernels (NotImplementedError
    naming the variant where the artifacts have none). A float attn_mask
    that requires grad gets dBias where its kernels compute it. With
    `deterministic=True`, or under torch.use_deterministic_algorithms(True),
    it uses deterministic artifacts (flashfuse-compile --deterministic: no
    float atomics, bit-identical gradients) and fails if there are none.

    FP8 (forward only; docs/FP8.md): query, key and value may be
    torch.float8_e4m3fn with flash-attn 3's `q_descale`, `k_descale`,
    `v_descale`, float32 dequantisation factors of shape [] or [1] (per
    tensor) or [B, H] (per head: H = Hq for q_descale, Hkv for k and v;
    q_descale may be [B, Hkv] as flash-attn 3 passes it, and is then
    expanded over each group of query heads), such that Q ≈ q_descale · Q8
    (flashfuse.quantize_fp8 makes them; with hadamard=True and one seed
    for Q and K, Q8 and K8 are of Q·M and K·M, which have Q's and K's
    scores). Any of them may instead be per block of the sequence
    (FlashAttention-3's block quantisation; quantize_fp8(per="block")):
    [B, H, ceil(S / BQ)] for q_descale and [B, Hkv, ceil(Sk / BK)] for k
    and v, with `descale_block_size` = (BQ, BK), default (128, 128); the
    GPU kernels take BQ a multiple of 16 and BK of 128. O is `out_dtype`, bfloat16 or
    float16. The kernels read V transposed (Vt [B, Hkv, Dv, Sk_pad], the
    keys contiguous and padded with zeros to a multiple of 16: the layout
    KERNEL_ABI.md "FP8 forwards" gives the FP8 kernels), so V is copied
    once into that layout per call. FP8 takes no attn_mask or dropout,
    and inputs that require grad are refused (there is no FP8 backward).

    `block_mask` (a torch FlexAttention BlockMask, or its tensors
    (kv_num_blocks, kv_indices[, full_kv_num_blocks, full_kv_indices])
    with `block_size`) restricts each query block to the key blocks it
    lists: flashfuse.block_sparse_attention (differentiable: its backward
    walks the same lists, transposed on the GPU), with is_causal and scale
    (no attn_mask, window, softcap or dropout).

    `alibi_slopes` (flash-attn's name): float32 [Hq] or [B, Hq] slopes of
    ALiBi, which subtracts slopes[h] * |i + Sk - Sq - j| from the score of
    query i and key j (after scale and softcap; the distance from the
    bottom-right diagonal, as flash-attn has it), with is_causal, window,
    softcap, dropout_p and block_mask (no attn_mask or FP8). Differentiable in
    query, key and value, deterministically too (an artifact compiled
    --deterministic, whose dQ kernel adds without float atomics). Its
    kernels are compiled by flashfuse-compile on first use and cached
    (flashfuse.alibi).
    """
    if alibi_slopes is not None and (
            attn_mask is not None
            or any(t is not None for t in (q_descale, k_descale, v_descale))
            or any(fp8.is_fp8(t) for t in (query, key, value))):
        raise ValueError("flashfuse.attention: alibi_slopes goes with "
                         "is_causal, scale, window, softcap, dropout_p and "
                         "block_mask only (no attn_mask or FP8 inputs)")
    if block_mask is not None:
        if (attn_mask is not None or window is not None or softcap
                or dropout_p):
            raise ValueError("flashfuse.attention: block_mask goes with "
                             "is_causal and scale only (no attn_mask, window, "
                             "softcap or dropout_p)")
        from .block_sparse import block_sparse_attention
        return block_sparse_attention(query, key, value, block_mask,
                                      block_size=block_size,
                                      is_causal=is_causal, scale=scale,
                                      enable_gqa=enable_gqa,
                                      alibi_slopes=alibi_slopes)
    fp8_inputs = any(fp8.is_fp8(t) for t in (query, key, value))
    _check_inputs(query, key, value, enable_gqa, fp8_inputs)
    if is_causal not in _CAUSAL:
        raise ValueError(f"is_causal must be a bool, 'top_left' or "
                         f"'bottom_right', got {is_causal!r}")
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    if window is None:
        window = (-1, -1)
    if (not isinstance(window, (tuple, list)) or len(window) != 2
            or any(int(w) < -1 for w in window)):
        raise ValueError(f"window must be (left, right) with entries >= -1, "
                         f"got {window!r}")
    causal, window = fold_causal_into_window(
        _CAUSAL[is_causal], (int(window[0]), int(window[1])),
        query.shape[-2] == key.shape[-2])
    softcap = float(softcap or 0.0)
    if softcap < 0:
        raise ValueError(f"softcap must be positive, got {softcap}")
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p}")
    if fp8_inputs:
        descales, blocks = fp8.check_args(
            query, key, value, q_descale, k_descale, v_descale, out_dtype,
            attn_mask, dropout_p, descale_block_size)
        _check_device(query, key, value)
        fp8.check_device(query, descales)
        return fp8.attention(query, key, value, descales, blocks, out_dtype,
                             causal, float(scale),
                             int(window[0]), int(window[1]), softcap)
    if any(t is not None for t in (q_descale, k_descale, v_descale)):
        raise ValueError("flashfuse.attention: q_descale, k_descale and "
                         "v_descale are for float8_e4m3fn inputs; query is "
                         f"{query.dtype}")
    deterministic = bool(deterministic) or (
        torch.are_deterministic_algorithms_enabled()
        and not torch.is_deterministic_algorithms_warn_only_enabled())
    if alibi_slopes is not None:
        alibi.check_slopes(alibi_slopes, query.shape[0], query.shape[1])
        alibi.check_lengths(query.shape[2], key.shape[2])
        _check_device(query, key, value)
        alibi.check_device(alibi_slopes, query)
        return alibi.attention(query, key, value, alibi_slopes, causal,
                               float(scale), window, softcap, deterministic,
                               dropout_p)
    _check_device(query, key, value)
    bias, mask = _score_operand(attn_mask, query, key)
    seed = ops.dropout_seed(dropout_p)
    args = (query, key, value, bias, mask, causal, float(scale),
            int(window[0]), int(window[1]), softcap, float(dropout_p), seed)
    if not (torch.is_grad_enabled() and any(
            t is not None and t.requires_grad for t in (query, key, value,
                                                        bias))):
        # Nothing to differentiate: the forward op alone, without the
        # autograd Function's bookkeeping (about 20 us a call).
        return ops.run_op(torch.ops.flashfuse.attention_fwd,
                          ops._attention_fwd, *args, False)[0]
    o, _ = _Attention.apply(*args, deterministic)
    return o
