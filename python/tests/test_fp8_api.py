"""flashfuse.attention's FP8 path and flashfuse.quantize_fp8 with torch but
no GPU: quantisation round trips, the Vt layout of KERNEL_ABI.md "FP8
forwards", and the argument checks, which all run before the device
check."""

import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch, "float8_e4m3fn"):
    pytest.skip("torch has no float8_e4m3fn", allow_module_level=True)

import flashfuse  # noqa: E402
from flashfuse import fp8  # noqa: E402

E4M3 = torch.float8_e4m3fn


def test_quantize_per_head_round_trip():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 37, 64, dtype=torch.bfloat16)
    x[1, 2] *= 1000  # a head of another magnitude keeps its own scale
    x8, descale = flashfuse.quantize_fp8(x)
    assert x8.dtype == E4M3 and x8.shape == x.shape
    assert descale.dtype == torch.float32 and descale.shape == (2, 3)
    xf = x.float()
    amax = xf.abs().amax(dim=(2, 3))
    torch.testing.assert_close(descale, amax / 448.0)
    back = x8.float() * descale[:, :, None, None]
    # e4m3 keeps 3 mantissa bits: round to nearest is within 2^-4 of a
    # normal value, and within half the smallest subnormal (2^-10, in units
    # of the descale) below the normal range.
    bound = xf.abs() * 2.0 ** -4 + descale[:, :, None, None] * 2.0 ** -10
    assert bool(((back - xf).abs() <= bound).all())
    # Each head's largest magnitude lands on ±448 exactly.
    assert bool((x8.float().abs().amax(dim=(2, 3)) == 448.0).all())


def test_quantize_per_tensor_and_zeros():
    x = torch.zeros(1, 2, 5, 16, dtype=torch.float16)
    x[0, 0, 0, 0] = -3.0
    x8, descale = fp8.quantize_fp8(x, per="tensor")
    assert descale.shape == () and descale.item() == pytest.approx(3.0 / 448)
    assert x8.float()[0, 0, 0, 0].item() == -448.0
    # An all-zero head gets descale 1, not a division by zero.
    _, per_head = fp8.quantize_fp8(x, per="head")
    assert per_head[0, 1].item() == 1.0


@pytest.mark.parametrize("call, error, message", [
    (lambda: fp8.quantize_fp8(torch.zeros(2, 3, 4)), ValueError,
     "expects \\[B, H, S, D\\]"),
    (lambda: fp8.quantize_fp8(torch.zeros(1, 1, 1, 16, dtype=torch.int32)),
     TypeError, "takes bfloat16, float16 or float32"),
    (lambda: fp8.quantize_fp8(torch.zeros(1, 1, 1, 16), per="row"),
     ValueError, "per must be 'head', 'tensor' or 'block'"),
])
def test_quantize_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# fp8_vt_layout.h's key order, spelled out: position p of a group of 32
# holds key 16 p[4] + 8 p[1] + 2 p[3:2] + p[0].
VT_GROUP_KEYS = [0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15,
                 16, 17, 24, 25, 18, 19, 26, 27, 20, 21, 28, 29, 22, 23, 30, 31]


@pytest.mark.parametrize("sk", [1, 16, 17, 32, 33, 203])
def test_prepare_vt(sk):
    v8, _ = fp8.quantize_fp8(torch.randn(2, 3, sk, 32))
    vt = fp8.prepare_vt(v8)
    pad = -(-sk // 32) * 32
    assert vt.dtype == E4M3 and vt.shape == (2, 3, 32, pad)
    assert vt.is_contiguous()
    bytes_ = vt.view(torch.uint8)
    src = v8.view(torch.uint8)
    for pos in range(pad):
        key = pos // 32 * 32 + VT_GROUP_KEYS[pos % 32]
        if key < sk:
            assert torch.equal(bytes_[..., pos], src[:, :, key, :]), pos
        else:  # the padding is zeros
            assert not bool(bytes_[..., pos].any()), pos


def _fp8_qkv(b=2, hq=4, hkv=2, sq=17, sk=33, d=64, requires_grad=False):
    q, qd = fp8.quantize_fp8(torch.randn(b, hq, sq, d))
    k, kd = fp8.quantize_fp8(torch.randn(b, hkv, sk, d))
    v, vd = fp8.quantize_fp8(torch.randn(b, hkv, sk, d))
    return (q, k, v), dict(q_descale=qd, k_descale=kd, v_descale=vd)


def test_valid_fp8_arguments_reach_the_device_check():
    # Everything but the device is right: the error is the CPU tensors'.
    qkv, descales = _fp8_qkv()
    with pytest.raises(ValueError, match="runs on CUDA tensors; query is on "
                                         "cpu"):
        flashfuse.attention(*qkv, **descales, enable_gqa=True)


@pytest.mark.parametrize("edit, error, message", [
    (lambda qkv, d: d.pop("k_descale"), ValueError,
     "need q_descale, k_descale and v_descale .*missing k_descale"),
    (lambda qkv, d: d.update(q_descale=d["q_descale"].half()), TypeError,
     "q_descale must be a float32 tensor .* got torch.float16"),
    (lambda qkv, d: d.update(v_descale=torch.ones(2, 4)), ValueError,
     "v_descale must be a float32 tensor of shape \\[\\], \\[1\\], "
     "\\[B, H\\] = \\[2, 2\\] or \\[B, H, ceil\\(S / block\\)\\] = "
     "\\[2, 2, 1\\]; got shape \\[2, 4\\]"),
    (lambda qkv, d: d.update(q_descale=torch.ones(3)), ValueError,
     "q_descale must be .*\\[B, H\\] = \\[2, 4\\], .* or \\[B, Hkv\\] = \\[2, 2\\]"
     "; got shape \\[3\\]"),
    (lambda qkv, d: d.update(k_descale=[1.0]), TypeError,
     "k_descale must be a float32 tensor.*got list"),
    (lambda qkv, d: d.update(out_dtype=torch.float32), TypeError,
     "out_dtype must be torch.bfloat16 or torch.float16"),
    (lambda qkv, d: d.update(attn_mask=torch.ones(17, 33, dtype=torch.bool)),
     ValueError, "FP8 attention takes no attn_mask"),
    (lambda qkv, d: d.update(dropout_p=0.1), ValueError,
     "FP8 attention takes no dropout"),
])
def test_fp8_argument_errors(edit, error, message):
    qkv, descales = _fp8_qkv()
    edit(qkv, descales)
    with pytest.raises(error, match=message):
        flashfuse.attention(*qkv, **descales, enable_gqa=True)


def test_fp8_dtype_errors():
    (q, k, v), descales = _fp8_qkv(hq=2)
    with pytest.raises(TypeError, match="value is float8_e5m2; FP8 attention "
                                        "takes float8_e4m3fn only"):
        flashfuse.attention(q, k, v.to(torch.float8_e5m2), **descales)
    with pytest.raises(TypeError, match="needs query, key and value all "
                                        "float8_e4m3fn"):
        flashfuse.attention(q, k, v.float().bfloat16(), **descales)
    # Descales without FP8 inputs would be silently ignored otherwise.
    h = torch.zeros(2, 2, 17, 64, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="are for float8_e4m3fn inputs; "
                                         "query is torch.bfloat16"):
        flashfuse.attention(h, h, h, q_descale=torch.ones(()))


def test_fp8_is_forward_only():
    (q, k, v), descales = _fp8_qkv(hq=2)
    q = q.float().requires_grad_().to(E4M3)  # a float8 tensor in a graph
    with pytest.raises(RuntimeError, match="query requires grad, but FP8 "
                                           "attention is forward only"):
        flashfuse.attention(q, k, v, **descales)


def test_descale_forms():
    """What the kernel is given for each accepted descale form: the tensor
    and its (b, h) strides (0, 0 per tensor)."""
    (q, k, v), d = _fp8_qkv(b=2, hq=4, hkv=2)
    per_kv_head = torch.arange(4, dtype=torch.float32).reshape(2, 2) + 1
    ((qt, qs), (kt, ks), (vt, vs)), blocks = fp8.check_args(
        q, k, v, per_kv_head, torch.ones(1), torch.ones(2, 2).t(),
        torch.bfloat16, None, 0.0)
    # flash-attn 3's q_descale per kv head, expanded over each group of two
    # query heads.
    assert qt.shape == (2, 4) and qs == (4, 1, 0)
    assert qt.tolist() == [[1, 1, 2, 2], [3, 3, 4, 4]]
    assert ks == (0, 0, 0)
    # Any strides of a [B, H] view are read in place.
    assert vs == (1, 2, 0)
    assert blocks == (0, 0)


def test_per_block_descales():
    """Per-block descales: [B, H, ceil(S / block)] with descale_block_size,
    mixed with per-tensor ones; the kernel's (BQ, BK) come back with them,
    and block sizes the kernels cannot take are refused by name."""
    (q, k, v), d = _fp8_qkv(b=2, hq=4, hkv=2)
    sq, sk = q.shape[2], k.shape[2]
    qd = torch.ones(2, 4, -(-sq // 64))
    kd = torch.ones(2, 2, -(-sk // 128))
    ((qt, qs), (kt, ks), (vt, vs)), blocks = fp8.check_args(
        q, k, v, qd, kd, torch.ones(()), torch.bfloat16, None, 0.0,
        descale_block_size=(64, 128))
    assert blocks == (64, 128)
    assert qs == (4 * qd.shape[2], qd.shape[2], 1)
    assert ks == (2 * kd.shape[2], kd.shape[2], 1) and vs == (0, 0, 0)
    with pytest.raises(ValueError, match=r"k_descale must be .*\[B, H, "
                                         r"ceil\(S / block\)\]"):
        fp8.check_args(q, k, v, qd, torch.ones(2, 2, 99), kd,
                       torch.bfloat16, None, 0.0,
                       descale_block_size=(64, 128))
    with pytest.raises(ValueError, match="BK of 128"):
        fp8.check_args(q, k, v, qd, torch.ones(2, 2, -(-sk // 64)),
                       torch.ones(()), torch.bfloat16, None, 0.0,
                       descale_block_size=(64, 64))
    with pytest.raises(ValueError, match="two positive ints"):
        fp8.check_args(q, k, v, qd, kd, kd, torch.bfloat16, None, 0.0,
                       descale_block_size=(64,))


def test_quantize_per_block():
    """quantize_fp8(per="block"): one descale per block of rows (a short
    last block), x ≈ x8 · descale within e4m3's rounding, each block's
    amax on 448."""
    torch.manual_seed(0)
    x = torch.randn(2, 3, 200, 64)
    x[:, :, 150:] *= 100  # the last blocks far larger
    x8, descale = flashfuse.quantize_fp8(x, per="block", block_size=64)
    assert x8.dtype == E4M3 and x8.shape == x.shape
    assert descale.shape == (2, 3, 4)
    rows = torch.arange(200) // 64
    step = descale[:, :, rows, None]
    deq = x8.float() * step
    # e4m3 rounding: half an ulp of 3 mantissa bits for normal codes, half
    # of the subnormal step 2^-9 of the block's scale below them.
    assert torch.all((deq - x).abs() <= 2 ** -4 * x.abs() + 2 ** -10 * step)
    amax = x8.float().abs().view(2, 3, 200, 64)
    for n in range(4):
        assert torch.all(amax[:, :, 64 * n:64 * (n + 1)].amax(dim=(2, 3))
                         == 448)
    with pytest.raises(ValueError, match="block_size must be a positive int"):
        flashfuse.quantize_fp8(x, per="block", block_size=0)


def test_fp8_custom_op_has_a_fake():
    # torch.compile traces the FP8 op through its fake: O in out_dtype with
    # Vt's Dv, in q's layout.
    q = torch.empty(2, 100, 8, 128, dtype=E4M3, device="meta").transpose(1, 2)
    k = torch.empty(2, 2, 300, 128, dtype=E4M3, device="meta")
    vt = torch.empty(2, 2, 64, 304, dtype=E4M3, device="meta")
    d = torch.empty((), dtype=torch.float32, device="meta")
    o, lse = torch.ops.flashfuse.attention_fp8_fwd(
        q, k, vt, d, d, d, [0] * 9, [0, 0], 0, 0.1, -1, -1, 0.0,
        torch.float16)
    assert o.shape == (2, 8, 100, 64) and o.dtype == torch.float16
    assert o.transpose(1, 2).is_contiguous()
    assert lse.shape == (2, 8, 100) and lse.dtype == torch.float32
