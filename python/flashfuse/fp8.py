"""FP8 attention forwards (docs/FP8.md, docs/KERNEL_ABI.md "FP8 forwards"):
flashfuse.attention's path for torch.float8_e4m3fn Q, K, V with
flash-attn 3's descale arguments, and `quantize_fp8`, which makes such
inputs from 16-bit ones (with the Hadamard rotation of Q and K where
asked: flashfuse.hadamard, _hadamard_kernel.py).

The argument checks need no GPU (they run before the device check), so
they are tested on any machine; the op itself launches an e4m3 kernel of
the sm90ws recipe through the runtime, like the 16-bit forward (ops.py).
"""

import torch

from . import _kernels
from . import _runtime as rt
from . import ops
from ._transpose import fp8_vt

E4M3 = getattr(torch, "float8_e4m3fn", None)
E5M2 = getattr(torch, "float8_e5m2", None)
# e4m3's largest finite value: quantize_fp8 maps each amax onto it.
E4M3_MAX = 448.0
# O's dtypes an FP8 forward writes (the runtime's out_dtype codes).
OUT_DTYPES = {torch.bfloat16: rt.DTYPE_BF16, torch.float16: rt.DTYPE_F16}
# FP8 tensor cores: sm_89 (Ada) and newer.
_FP8_CAPABILITY = (8, 9)


_FLOAT8 = tuple(t for t in (E4M3, E5M2) if t is not None)


def is_fp8(t):
    """Whether `t` is a float8 tensor (either format): the inputs that take
    this path (e5m2 only to be refused by name)."""
    return isinstance(t, torch.Tensor) and t.dtype in _FLOAT8


def quantize_fp8(x, per="head", *, hadamard=False, seed=None,
                 block_size=128):
    """(x8, descale): `x` [B, H, S, D] (bf16, f16 or f32) quantised to
    torch.float8_e4m3fn with amax / 448 scaling, so that x ≈ x8 · descale
    (the descale that flashfuse.attention and flash-attn 3 take).
    per="head": one factor per (b, h), descale f32 [B, H]; per="tensor":
    one for the whole tensor, descale f32 []; per="block": one per (b, h)
    and block of `block_size` rows of S (FlashAttention-3's block
    quantisation), descale f32 [B, H, ceil(S / block_size)], for
    flashfuse.attention with descale_block_size (BQ, BK) = the block sizes
    Q's and K/V's were quantised with. A slice of zeros gets
    descale 1 (and zeros). Values round to nearest even; the amax lands
    exactly on ±448, so nothing saturates.

    hadamard=True (Q and K only; docs/FP8.md "Incoherent processing"):
    quantises the rotated rows x·M instead, M = diag(s)·H/√D the random
    orthogonal matrix of `seed` (flashfuse.hadamard), so that
    x8 · descale ≈ x·M and the scales are those of the rotated values.
    D must be 64, 128 or 256. Q and K must be quantised with the SAME
    seed: (QM)(KM)ᵀ = QKᵀ only then, and a mismatch cannot be detected
    (attention silently computes other scores). V is quantised without
    it. On a CUDA sm_89+ GPU with Triton, one kernel rotates and quantises
    (two passes over x: the rotated amax, then the e4m3 values); elsewhere
    torch computes x·M in f32 first."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"quantize_fp8: x must be a torch.Tensor, got "
                        f"{type(x).__name__}")
    if E4M3 is None:
        raise TypeError("quantize_fp8 needs a torch with float8_e4m3fn "
                        f"(this is {torch.__version__})")
    if x.dim() != 4:
        raise ValueError(f"quantize_fp8 expects [B, H, S, D]; x has shape "
                         f"{tuple(x.shape)}")
    if x.dtype not in (torch.bfloat16, torch.float16, torch.float32):
        raise TypeError(f"quantize_fp8 takes bfloat16, float16 or float32; "
                        f"x is {x.dtype}")
    if per not in ("head", "tensor", "block"):
        raise ValueError(f"per must be 'head', 'tensor' or 'block', got "
                         f"{per!r}")
    if per == "block" and (not isinstance(block_size, int)
                           or isinstance(block_size, bool) or block_size <= 0):
        raise ValueError(f"quantize_fp8: block_size must be a positive int, "
                         f"got {block_size!r}")
    if hadamard is not True and hadamard is not False:
        raise TypeError(f"quantize_fp8: hadamard must be True or False, got "
                        f"{hadamard!r}")
    if not hadamard:
        if seed is not None:
            raise ValueError("quantize_fp8: seed is the Hadamard rotation's; "
                             "pass hadamard=True with it (for Q and K)")
        return _quantize(x.float(), per, block_size)
    from . import _hadamard_kernel, hadamard as had
    had.check_head_dim(x.shape[3], "quantize_fp8(hadamard=True)")
    if seed is None:
        raise ValueError("quantize_fp8(hadamard=True) needs seed=, an int: "
                         "pass the same one for Q and K")
    had.check_seed(seed, "quantize_fp8(hadamard=True)")
    # The fused kernel keeps one scale per head or tensor; per block, the
    # rotated rows are quantised by torch.
    if per == "block" or not _hadamard_kernel.usable(x):
        return _quantize(had.hadamard_rotate(x, seed), per, block_size)
    mat = had.signed_hadamard(x.shape[3], seed, x.dtype, x.device)
    amax = _hadamard_kernel.rotated_amax(x, mat)
    descale = _descale_of(amax.amax() if per == "tensor" else amax)
    x8 = torch.empty_like(x, dtype=E4M3)
    return _hadamard_kernel.rotate_scaled(x, mat, descale, x8), descale


def _descale_of(amax):
    """amax / 448, or 1 where the amax is 0 (a slice of zeros), f32."""
    return torch.where(amax > 0, amax / E4M3_MAX, torch.ones_like(amax))


def _quantize(xf, per, block_size=128):
    """quantize_fp8 of an f32 `xf` [B, H, S, D] (the values to quantise,
    rotated already where asked)."""
    if per == "block":
        # Rows padded with zeros to whole blocks: [B, H, N, block, D].
        b, h, s, d = xf.shape
        n = -(-s // block_size)
        padded = torch.nn.functional.pad(xf, (0, 0, 0, n * block_size - s))
        blocks = padded.view(b, h, n, block_size, d)
        descale = _descale_of(blocks.abs().amax(dim=(3, 4), keepdim=True))
        x8 = (blocks / descale).clamp(-E4M3_MAX, E4M3_MAX).to(E4M3)
        x8 = x8.view(b, h, n * block_size, d)[:, :, :s].contiguous()
        return x8, descale.reshape(b, h, n).contiguous()
    dims = (2, 3) if per == "head" else (0, 1, 2, 3)
    descale = _descale_of(xf.abs().amax(dim=dims, keepdim=True))
    # Dividing by the descale (not multiplying by its reciprocal) puts the
    # amax exactly on 448; the clamp only guards against rounding above it,
    # which the cast would turn into NaN (e4m3fn has no infinity).
    x8 = (xf / descale).clamp(-E4M3_MAX, E4M3_MAX).to(E4M3)
    descale = descale.reshape(xf.shape[:2] if per == "head" else ())
    return x8, descale.contiguous()


def quantize_kv_cache(cache, per="head", *, batch=None):
    """(cache8, descale) for flashfuse.attention_with_kvcache's FP8 cache
    (docs/KVCACHE.md "FP8 cache"): `cache` (bf16, f16 or f32) in
    flash-attn's layouts quantised to torch.float8_e4m3fn with amax / 448
    scaling, so that cache ≈ cache8 · descale[b, h].

    Contiguous [B, Smax, Hkv, D] (batch=None): per="head" gives one factor
    per (sequence, kv head), descale f32 [B, Hkv]; per="tensor" one f32 [].
    Paged [num_pages, page_size, Hkv, D] (batch=B): a page may belong to
    any sequence, so per="head" takes one factor per kv head over the
    whole pool and returns it as [B, Hkv] (an expanded view: the same
    factor for every sequence); per="tensor" ignores batch. Every row of
    the tensor is quantised, used or not. A head of zeros gets descale 1.
    Rows appended later are quantised against these descales by the
    append (saturating at ±448), as vLLM's reshape_and_cache does."""
    if not isinstance(cache, torch.Tensor):
        raise TypeError("quantize_kv_cache: cache must be a torch.Tensor, "
                        f"got {type(cache).__name__}")
    if E4M3 is None:
        raise TypeError("quantize_kv_cache needs a torch with float8_e4m3fn "
                        f"(this is {torch.__version__})")
    if cache.dim() != 4:
        raise ValueError("quantize_kv_cache expects [B, Smax, Hkv, D] or "
                         "[num_pages, page_size, Hkv, D]; cache has shape "
                         f"{tuple(cache.shape)}")
    if cache.dtype not in (torch.bfloat16, torch.float16, torch.float32):
        raise TypeError("quantize_kv_cache takes bfloat16, float16 or "
                        f"float32; cache is {cache.dtype}")
    if per not in ("head", "tensor"):
        raise ValueError(f"per must be 'head' or 'tensor', got {per!r}")
    if batch is not None and (isinstance(batch, bool)
                              or not isinstance(batch, int) or batch < 1):
        raise ValueError("quantize_kv_cache: batch (the number of sequences "
                         f"of a paged cache) must be an int >= 1, got "
                         f"{batch!r}")
    xf = cache.float()
    if per == "tensor":
        descale = _descale_of(xf.abs().amax())
    elif batch is None:
        descale = _descale_of(xf.abs().amax(dim=(1, 3)))      # [B, Hkv]
    else:
        descale = _descale_of(xf.abs().amax(dim=(0, 1, 3)))   # [Hkv]
    # As _quantize: dividing puts each amax exactly on 448.
    div = descale if per == "tensor" else (
        descale[:, None, :, None] if batch is None
        else descale[None, None, :, None])
    cache8 = (xf / div).clamp(-E4M3_MAX, E4M3_MAX).to(E4M3)
    if per == "head" and batch is not None:
        descale = descale[None, :].expand(batch, -1)
    return cache8, descale


def prepare_vt(v):
    """Vt for an FP8 kernel (KERNEL_ABI.md "FP8 forwards"): `v` e4m3
    [B, Hkv, Sk, Dv] as a contiguous [B, Hkv, Dv, Sk_pad], Sk_pad = Sk
    rounded up to a multiple of 32, the keys of each group of 32 in the
    kernels' order (fp8_vt_layout.h) and the padding zeros. One copy: the
    kernel's second product reads its B operand K-major (keys contiguous),
    so V is transposed once here rather than in every block."""
    # Through uint8 views: float8 elements are bytes, and byte kernels
    # exist on every torch that has float8.
    return fp8_vt(v.view(torch.uint8)).view(v.dtype)


def _descale(name, t, batch, heads, blocks, group=1):
    """`t` as (f32 tensor, (stride_b, stride_h, stride_n)) the kernel reads
    at [b * stride_b + h * stride_h + n * stride_n]: shape [] or [1] (one
    factor per tensor), [batch, heads], with `group` > 1 (q_descale)
    [batch, heads / group], flash-attn 3's q_descale per kv head, expanded
    over each group of query heads, or per block [batch, heads, blocks]
    (the sequence's ceil(S / block) blocks). TypeError/ValueError
    otherwise."""
    shapes = ["[]", "[1]", f"[B, H] = [{batch}, {heads}]",
              f"[B, H, ceil(S / block)] = [{batch}, {heads}, {blocks}]"]
    if group > 1:
        shapes.append(f"[B, Hkv] = [{batch}, {heads // group}]")
    expected = f"a float32 tensor of shape {', '.join(shapes[:-1])} or " \
               f"{shapes[-1]}"
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"flashfuse.attention: {name} must be {expected}; "
                        f"got {type(t).__name__}")
    if t.dtype != torch.float32:
        raise TypeError(f"flashfuse.attention: {name} must be {expected}; "
                        f"got {t.dtype}")
    shape = tuple(t.shape)
    if shape in ((), (1,)):
        return t, (0, 0, 0)
    if shape == (batch, heads, blocks):
        return t, (t.stride(0), t.stride(1), t.stride(2))
    if group > 1 and shape == (batch, heads // group):
        t = t.repeat_interleave(group, dim=1)
    elif shape != (batch, heads):
        raise ValueError(f"flashfuse.attention: {name} must be {expected}; "
                         f"got shape {list(shape)}")
    return t, (t.stride(0), t.stride(1), 0)


def check_args(q, k, v, q_descale, k_descale, v_descale, out_dtype,
               attn_mask, dropout_p, descale_block_size=(128, 128)):
    """Checks what flashfuse.attention is given for FP8 inputs (q, k, v
    already [B, H, S, D] tensors of one shape family): e4m3 everywhere,
    descales present and well formed, an O dtype the kernels write,
    nothing the FP8 forward lacks. Returns the three (descale, strides)
    pairs and the (BQ, BK) of per-block descales ((0, 0) when none is per
    block). Needs no GPU."""
    for name, t in (("query", q), ("key", k), ("value", v)):
        if E5M2 is not None and t.dtype == E5M2:
            raise TypeError(f"flashfuse.attention: {name} is float8_e5m2; "
                            "FP8 attention takes float8_e4m3fn only "
                            "(docs/FP8.md)")
        if t.dtype != E4M3:
            raise TypeError("flashfuse.attention: FP8 attention needs query, "
                            "key and value all float8_e4m3fn; got "
                            f"{q.dtype}, {k.dtype}, {v.dtype}")
        if t.requires_grad:
            raise RuntimeError(
                f"flashfuse.attention: {name} requires grad, but FP8 "
                "attention is forward only (no FP8 backward kernel); detach "
                "the inputs or train in bf16/f16")
    missing = [n for n, t in (("q_descale", q_descale),
                              ("k_descale", k_descale),
                              ("v_descale", v_descale)) if t is None]
    if missing:
        raise ValueError("flashfuse.attention: float8_e4m3fn inputs need "
                         "q_descale, k_descale and v_descale (f32, per "
                         f"tensor or per head); missing {', '.join(missing)}."
                         " flashfuse.quantize_fp8 returns them")
    if out_dtype not in OUT_DTYPES:
        raise TypeError("flashfuse.attention: out_dtype must be "
                        f"torch.bfloat16 or torch.float16, got {out_dtype}")
    if attn_mask is not None:
        raise ValueError("flashfuse.attention: FP8 attention takes no "
                         "attn_mask (no FP8 kernel has a bias or mask)")
    if dropout_p:
        raise ValueError("flashfuse.attention: FP8 attention takes no "
                         "dropout (it is forward only)")
    if (not isinstance(descale_block_size, (tuple, list))
            or len(descale_block_size) != 2
            or any(not isinstance(s, int) or isinstance(s, bool) or s <= 0
                   for s in descale_block_size)):
        raise ValueError("flashfuse.attention: descale_block_size must be "
                         "(BQ, BK), two positive ints; got "
                         f"{descale_block_size!r}")
    bq, bk = descale_block_size
    b, hq, hkv = q.shape[0], q.shape[1], k.shape[1]
    sq, sk = q.shape[2], k.shape[2]
    descales = (
        _descale("q_descale", q_descale, b, hq, -(-sq // bq), group=hq // hkv),
        _descale("k_descale", k_descale, b, hkv, -(-sk // bk)),
        _descale("v_descale", v_descale, b, hkv, -(-sk // bk)))
    per_block = any(t.dim() == 3 for t, _ in descales)
    if per_block and (bq % 16 or bk % 128):
        raise ValueError("flashfuse.attention: per-block descales need "
                         "descale_block_size (BQ, BK) with BQ a multiple of 16 "
                         "and BK of 128 (one factor per warp's rows and per "
                         f"key tile of the kernels); got ({bq}, {bk})")
    return descales, ((bq, bk) if per_block else (0, 0))


def check_device(q, descales):
    """The GPU side of the checks: descales on q's device, and a GPU with
    FP8 tensor cores."""
    for name, (t, _) in zip(("q_descale", "k_descale", "v_descale"),
                            descales):
        if t.device != q.device:
            raise ValueError(f"flashfuse.attention: {name} is on {t.device}, "
                             f"query on {q.device}")
    capability = ops._capability(q.device.index)
    if tuple(capability) < _FP8_CAPABILITY:
        from .errors import UnsupportedError
        raise UnsupportedError(
            "flashfuse: FP8 attention needs FP8 tensor cores (sm_89 or "
            f"newer); this GPU is sm_{capability[0]}{capability[1]}",
            "FLASHFUSE_ERROR_UNSUPPORTED")


def _aligned_descale(t):
    # The runtime passes descales as memrefs, whose base must be 16-byte
    # aligned; a fresh allocation is.
    return t if t.data_ptr() % 16 == 0 else t.clone()


def _attention_fp8_fwd(q: torch.Tensor, k: torch.Tensor, vt: torch.Tensor,
                      q_descale: torch.Tensor, k_descale: torch.Tensor,
                      v_descale: torch.Tensor, descale_strides: list[int],
                      descale_blocks: list[int],
                      causal: int, scale: float, window_left: int,
                      window_right: int, softcap: float,
                      out_dtype: torch.dtype
                      ) -> tuple[torch.Tensor, torch.Tensor]:
    """(O [B, Hq, Sq, Dv] in out_dtype, LSE f32 [B, Hq, Sq]) of e4m3 q, k
    and Vt (prepare_vt), descales with their (b, h, block) strides in
    descale_strides (q's, k's, v's) and the (BQ, BK) of per-block ones in
    descale_blocks ([0, 0]: none)."""
    dv = vt.shape[2]
    variant = _kernels.make_variant(
        rt.KIND_FORWARD, rt.DTYPE_E4M3, q.shape[-1], dv, causal,
        window=(window_left, window_right) != (-1, -1), softcap=softcap > 0,
        out_dtype=OUT_DTYPES[out_dtype], descale_blocks=descale_blocks)
    kernel = _kernels.kernel(q.device.index, variant,
                             capability=ops._capability(q.device.index))
    o = ops._output_like(q, dv, out_dtype)
    q, k = ops._readable(q), ops._readable(k)
    b, hq, sq, d = q.shape
    lse = q.new_empty(b, hq, sq, dtype=torch.float32)
    ops._poison(o, lse)
    a = rt.forward_args()
    a.dtype, a.out_dtype = rt.DTYPE_E4M3, OUT_DTYPES[out_dtype]
    a.q, a.k, a.v, a.o, a.lse = (t.data_ptr() for t in (q, k, vt, o, lse))
    a.batch, a.heads_q, a.seq_q, a.head_dim = b, hq, sq, d
    a.heads_kv, a.seq_k, a.head_dim_v = k.shape[1], k.shape[2], dv
    a.q_stride[:], a.k_stride[:] = ops._strides4(q), ops._strides4(k)
    a.v_stride[:], a.o_stride[:] = ops._strides4(vt), ops._strides4(o)
    descales = [_aligned_descale(t) for t in (q_descale, k_descale, v_descale)]
    a.q_descale, a.k_descale, a.v_descale = (t.data_ptr() for t in descales)
    a.q_descale_stride[:] = descale_strides[0:2]
    a.k_descale_stride[:] = descale_strides[3:5]
    a.v_descale_stride[:] = descale_strides[6:8]
    a.q_descale_stride_block = descale_strides[2]
    a.k_descale_stride_block = descale_strides[5]
    a.v_descale_stride_block = descale_strides[8]
    a.scale = scale
    a.window_left, a.window_right = window_left, window_right
    a.softcap = softcap
    context, stream = ops._launch_context(q.device)
    with context:
        rt.attention_forward(kernel, a, stream)
    return o, lse


attention_fp8_fwd = torch.library.custom_op(
    "flashfuse::attention_fp8_fwd", mutates_args=(),
    device_types="cuda")(_attention_fp8_fwd)


@attention_fp8_fwd.register_fake
def _(q, k, vt, q_descale, k_descale, v_descale, descale_strides,
      descale_blocks, causal, scale, window_left, window_right, softcap,
      out_dtype):
    b, hq, sq, _ = q.shape
    return (ops._output_like(q, vt.shape[2], out_dtype),
            q.new_empty(b, hq, sq, dtype=torch.float32))


def attention(q, k, v, descales, blocks, out_dtype, causal, scale,
              window_left, window_right, softcap):
    """O of the FP8 forward for checked arguments (check_args'
    `descales` and `blocks`): Vt prepared, then the custom op."""
    vt = prepare_vt(v)
    strides = [s for _, st in descales for s in st]
    o, _ = ops.run_op(
        torch.ops.flashfuse.attention_fp8_fwd, _attention_fp8_fwd, q, k, vt,
        *(t for t, _ in descales), strides, list(blocks), causal, scale,
        window_left, window_right, softcap, out_dtype)
    return o
