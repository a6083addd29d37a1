"""flashfuse.attention_with_kvcache's FP8-cache arguments (k_cache /
v_cache float8_e4m3fn with k_descale / v_descale, docs/KVCACHE.md "FP8
cache") and flashfuse.fp8.quantize_kv_cache: torch, no GPU. The argument
checks run before the device check, so every message here is the one a
GPU machine gives too."""

import pytest

torch = pytest.importorskip("torch")

import flashfuse  # noqa: E402
from flashfuse import fp8, kvcache  # noqa: E402

E4M3 = getattr(torch, "float8_e4m3fn", None)
E5M2 = getattr(torch, "float8_e5m2", None)
pytestmark = pytest.mark.skipif(E4M3 is None,
                                reason="this torch has no float8_e4m3fn")
BF16 = torch.bfloat16


def fp8_cache(b=2, sq=1, hq=8, hkv=2, d=64, smax=128, per="head"):
    q = torch.zeros(b, sq, hq, d, dtype=BF16)
    k8 = torch.zeros(b, smax, hkv, d, dtype=E4M3)
    shape = (b, hkv) if per == "head" else ()
    return q, k8, torch.zeros_like(k8), torch.ones(shape), torch.ones(shape)


def call(*args, **kwargs):
    return flashfuse.attention_with_kvcache(*args, **kwargs)


def test_valid_fp8_cache_reaches_the_device_check():
    # Everything else is right: what is left is the CPU tensors.
    q, k, v, kd, vd = fp8_cache()
    with pytest.raises(ValueError, match="runs on CUDA tensors; q is on cpu"):
        call(q, k, v, 5, k_descale=kd, v_descale=vd)
    q, k, v, kd, vd = fp8_cache(per="tensor")
    kn = torch.zeros(2, 1, 2, 64, dtype=BF16)
    with pytest.raises(ValueError, match="runs on CUDA tensors"):
        call(q, k, v, 5, kn, kn.clone(), k_descale=kd, v_descale=vd)
    # [1] is per tensor too, and a stride-0 [B, Hkv] (quantize_kv_cache's
    # paged per-head descale) is a [B, Hkv].
    with pytest.raises(ValueError, match="runs on CUDA tensors"):
        call(q, k, v, 5, k_descale=torch.ones(1),
             v_descale=torch.ones(2).expand(2, 2))


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(k_descale=None, v_descale=None), ValueError,
     "a float8_e4m3fn cache needs k_descale and v_descale .*missing "
     "k_descale, v_descale"),
    (dict(v_descale=None), ValueError, "missing v_descale"),
    (dict(k_descale=torch.ones(2, 2, dtype=torch.float64)), TypeError,
     r"k_descale must be a float32 tensor of shape \[\], \[1\] or "
     r"\[B, Hkv\] = \[2, 2\]; got torch.float64"),
    (dict(k_descale=torch.ones(2, 8)), ValueError,
     r"k_descale must be .*; got shape \[2, 8\]"),
    (dict(v_descale=torch.ones(2)), ValueError,
     r"v_descale must be .*; got shape \[2\]"),
    (dict(v_descale=[1.0]), TypeError, "v_descale must be .*; got list"),
    (dict(k_descale=torch.tensor([[1.0, 0.0], [1.0, 1.0]])), ValueError,
     r"k_descale must be positive and finite, got 0.0 at \[0, 1\]"),
    (dict(v_descale=torch.tensor(-2.0)), ValueError,
     r"v_descale must be positive and finite, got -2.0 at \[\]"),
    (dict(k_descale=torch.tensor([float("nan")])), ValueError,
     r"k_descale must be positive and finite, got nan at \[0\]"),
    (dict(k_descale=torch.tensor(float("inf"))), ValueError,
     "k_descale must be positive and finite, got inf"),
])
def test_descale_errors(kwargs, error, message):
    q, k, v, kd, vd = fp8_cache()
    args = dict(k_descale=kd, v_descale=vd)
    args.update(kwargs)
    with pytest.raises(error, match=message):
        call(q, k, v, 5, **args)


def test_descales_with_a_16bit_cache():
    q, k, v, kd, vd = fp8_cache()
    k16, v16 = k.to(BF16), v.to(BF16)
    with pytest.raises(ValueError, match="k_descale and v_descale are for a "
                       "float8_e4m3fn cache; these caches are 16-bit"):
        call(q, k16, v16, 5, k_descale=kd, v_descale=vd)
    with pytest.raises(ValueError, match="v_descale are for a float8"):
        call(q, k16, v16, 5, v_descale=vd)


def test_cache_and_query_dtypes():
    q, k, v, kd, vd = fp8_cache()
    with pytest.raises(TypeError, match="k_cache is torch.float8_e4m3fn and "
                       "v_cache torch.bfloat16; the caches are both "
                       "float8_e4m3fn or both q's dtype"):
        call(q, k, v.to(BF16), 5, k_descale=kd, v_descale=vd)
    with pytest.raises(TypeError, match="both float8_e4m3fn"):
        call(q, k.to(BF16), v, 5, k_descale=kd, v_descale=vd)
    with pytest.raises(TypeError, match="FP8 q is flashfuse.attention's"):
        call(q.to(E4M3), k, v, 5, k_descale=kd, v_descale=vd)
    with pytest.raises(TypeError, match="supports float16 and bfloat16; q "
                       "is torch.float32"):
        call(q.float(), k, v, 5, k_descale=kd, v_descale=vd)
    if E5M2 is not None:
        with pytest.raises(TypeError, match="k_cache is float8_e5m2; an FP8 "
                           "cache is float8_e4m3fn"):
            call(q, k.to(E5M2), v.to(E5M2), 5, k_descale=kd, v_descale=vd)


def test_new_rows_stay_in_q_dtype():
    q, k, v, kd, vd = fp8_cache()
    kn = torch.zeros(2, 1, 2, 64, dtype=BF16)
    with pytest.raises(TypeError, match="supports float16 and bfloat16; "
                       "k_new is torch.float8_e4m3fn"):
        call(q, k, v, 5, kn.to(E4M3), kn, k_descale=kd, v_descale=vd)
    with pytest.raises(TypeError, match="v_new is torch.float16 but q is "
                       "torch.bfloat16"):
        call(q, k, v, 5, kn, kn.half(), k_descale=kd, v_descale=vd)


def test_fp8_rows_must_be_16_byte_aligned():
    # Rows are counted in bytes, one per e4m3 element: D = 8 is an 8-byte
    # row, and the kernels copy 16-byte pieces (D = 16 is the least).
    _, k, _, _, _ = fp8_cache(d=8)
    with pytest.raises(ValueError, match="16-byte boundaries .*1-byte "
                       "elements"):
        kvcache._readable_in_place("k_cache", k)
    kvcache._readable_in_place("k_cache", fp8_cache(d=16)[1])


def test_quantize_kv_cache_per_head():
    torch.manual_seed(0)
    cache = torch.randn(3, 40, 2, 64, dtype=BF16)
    cache[1, :, 0] = 0                     # a head of zeros
    cache[2, 5, 1, 7] = 100.0              # an outlier sets its head's amax
    c8, d = fp8.quantize_kv_cache(cache)
    assert c8.dtype == E4M3 and c8.shape == cache.shape
    assert d.dtype == torch.float32 and d.shape == (3, 2)
    amax = cache.float().abs().amax(dim=(1, 3))
    assert torch.equal(d[1, 0], torch.tensor(1.0))
    mask = amax > 0
    assert torch.allclose(d[mask], amax[mask] / 448.0)
    # The amax lands on 448 exactly; e4m3 keeps 3 mantissa bits, so every
    # element is within 2^-4 of itself (relative), plus the subnormal step.
    deq = c8.float() * d[:, None, :, None]
    assert c8.float().abs().amax() == 448.0
    err = (deq - cache.float()).abs()
    bound = cache.float().abs() * 2.0 ** -4 + d[:, None, :, None] * 2.0 ** -9
    assert bool((err <= bound).all())
    assert torch.count_nonzero(c8[1, :, 0].float()) == 0


def test_quantize_kv_cache_per_tensor_and_paged():
    torch.manual_seed(1)
    pool = torch.randn(9, 16, 4, 32, dtype=torch.float16)
    c8, d = fp8.quantize_kv_cache(pool, per="tensor")
    assert d.shape == () and torch.isclose(
        d, pool.float().abs().amax() / 448.0)
    c8, d = fp8.quantize_kv_cache(pool, batch=5)
    # One factor per kv head over the whole pool, the same for every
    # sequence (an expanded view).
    assert d.shape == (5, 4) and d.stride() == (0, 1)
    assert torch.allclose(d[3], pool.float().abs().amax(dim=(0, 1, 3)) / 448)
    deq = c8.float() * d[0][None, None, :, None]
    assert torch.allclose(deq, pool.float(), rtol=2.0 ** -4, atol=1e-3)


@pytest.mark.parametrize("args, kwargs, error, message", [
    (([1.0],), {}, TypeError, "cache must be a torch.Tensor, got list"),
    ((torch.zeros(2, 3, 4),), {}, ValueError, "expects"),
    ((torch.zeros(1, 2, 3, 16, dtype=torch.int32),), {}, TypeError,
     "takes bfloat16, float16 or float32"),
    ((torch.zeros(1, 2, 3, 16),), dict(per="row"), ValueError,
     "per must be 'head' or 'tensor'"),
    ((torch.zeros(1, 2, 3, 16),), dict(batch=0), ValueError,
     "batch .* must be an int >= 1, got 0"),
])
def test_quantize_kv_cache_errors(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        fp8.quantize_kv_cache(*args, **kwargs)
