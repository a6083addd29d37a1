"""flashfuse.attention_with_kvcache over an FP8 (e4m3) cache on a GPU
(docs/KVCACHE.md "FP8 cache"; the decode kernel of flashfuse-compile
--experimental-fp8-kvcache, scripts/kernels/gen_suite.py --decode-fp8).
Caches made by flashfuse.fp8.quantize_kv_cache (per kv head or per
tensor); the reference is float attention over the dequantised cache
(descale · float(code)), with FlashAttention's rule as test_decode_gpu.py
applies it: max|out - ref| <= 3 * max|out_lowprec - ref| + atol, ref in
f32, out_lowprec the same computation with the dequantised cache and q in
the query dtype. Contiguous and paged (16, 64; pages shuffled) caches, GQA,
ragged lengths with 0 and 1, causal bottom-right, f16 and bf16 queries,
D = 64 and 128, splits automatic and forced. Skipped without a GPU or
without the FP8-cache kernels in FLASHFUSE_KERNEL_DIR."""

import math

import pytest

torch = pytest.importorskip("torch")

import flashfuse  # noqa: E402
from flashfuse import fp8  # noqa: E402
from test_decode_gpu import (check_result, dense, make_cache,  # noqa: E402
                             reference, run_or_skip)

pytestmark = pytest.mark.gpu

if fp8.E4M3 is None:
    pytest.skip("this torch has no float8_e4m3fn", allow_module_level=True)

DTYPES = [torch.float16, torch.bfloat16]
# (B, capacity, total lengths L_b): ragged with 0 and 1, one full cache.
BATCHES = [(3, 512, [0, 65, 512]), (3, 512, [1, 63, 64]),
           (1, 1024, [1024])]


@pytest.fixture(autouse=True)
def poison(monkeypatch):
    monkeypatch.setenv("FLASHFUSE_POISON_OUTPUTS", "1")


def dequantize(c8, descale, paged):
    """descale · float(c8) in f32, in the cache's own layout."""
    x = c8.float()
    if descale.dim() == 0 or descale.numel() == 1:
        return x * descale.reshape(())
    if paged:  # quantize_kv_cache: one factor per kv head over the pool
        return x * descale[0][None, None, :, None]
    return x * descale[:, None, :, None]


def check(dtype, d, heads, sq, causal, batch, page_size=0, per="head",
          num_splits=0):
    (hq, hkv), (b, capacity, lengths) = heads, batch
    q = torch.randn(b, sq, hq, d, device="cuda", dtype=dtype)
    k16, v16, table = make_cache(b, hkv, capacity, d, dtype, page_size)
    paged = table is not None
    k8, kd = fp8.quantize_kv_cache(k16, per, batch=b if paged else None)
    v8, vd = fp8.quantize_kv_cache(v16, per, batch=b if paged else None)
    assert k8.dtype == fp8.E4M3
    seqlens = torch.tensor(lengths, device="cuda", dtype=torch.int32)
    before_k, before_v = k8.view(torch.uint8).clone(), v8.view(
        torch.uint8).clone()
    out, lse = run_or_skip(lambda: flashfuse.attention_with_kvcache(
        q, k8, v8, seqlens, block_table=table, is_causal=causal,
        return_lse=True, check_inputs=True, num_splits=num_splits,
        k_descale=kd, v_descale=vd))
    # The caches are read, never written.
    assert torch.equal(k8.view(torch.uint8), before_k)
    assert torch.equal(v8.view(torch.uint8), before_v)
    kf = dense(dequantize(k8, kd, paged), table, b)
    vf = dense(dequantize(v8, vd, paged), table, b)
    scale = 1 / math.sqrt(d)
    ref, ref_lse = reference(q, kf, vf, lengths, scale, causal, (-1, -1),
                             0.0, upcast=True)
    low, _ = reference(q, kf.to(dtype), vf.to(dtype), lengths, scale, causal,
                       (-1, -1), 0.0, upcast=False)
    check_result(out, lse, ref, ref_lse, low, 3, (b, sq, hq, d), dtype)


@pytest.mark.parametrize("batch", BATCHES,
                         ids=lambda x: f"B{x[0]}_C{x[1]}_" + "-".join(
                             map(str, x[2])))
@pytest.mark.parametrize("page_size", [0, 16, 64],
                         ids=["contiguous", "page16", "page64"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("heads", [(8, 8), (32, 8)], ids=["mha", "gqa"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
def test_fp8_decode_matches_reference(dtype, d, heads, causal, page_size,
                                      batch):
    check(dtype, d, heads, 1, causal, batch, page_size)


@pytest.mark.parametrize("page_size", [0, 16], ids=["contiguous", "page16"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
def test_fp8_decode_several_query_rows(dtype, d, page_size):
    # Sq = 4, causal bottom-right: query i sees keys j <= i + L_b - 4.
    check(dtype, d, (32, 8), 4, True, (3, 512, [4, 65, 512]), page_size)


@pytest.mark.parametrize("page_size", [0, 64], ids=["contiguous", "page64"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
def test_fp8_decode_per_tensor_descale(dtype, page_size):
    check(dtype, 128, (32, 8), 1, True, (3, 512, [0, 1, 512]), page_size,
          per="tensor")


@pytest.mark.parametrize("num_splits", [1, 2, 3, 7])
@pytest.mark.parametrize("page_size", [0, 16], ids=["contiguous", "page16"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
def test_fp8_decode_forced_splits(dtype, page_size, num_splits):
    # Splits that see no key (L = 1 over 7 splits) merge to the same answer.
    check(dtype, 128, (32, 8), 1, True, (3, 1024, [1, 65, 1024]), page_size,
          num_splits=num_splits)


def test_fp8_new_rows_refused():
    from flashfuse.errors import UnsupportedError
    q = torch.randn(2, 1, 8, 64, device="cuda", dtype=torch.bfloat16)
    k8, kd = fp8.quantize_kv_cache(
        torch.randn(2, 128, 2, 64, device="cuda", dtype=torch.bfloat16))
    v8, vd = fp8.quantize_kv_cache(
        torch.randn(2, 128, 2, 64, device="cuda", dtype=torch.bfloat16))
    kn = torch.randn(2, 1, 2, 64, device="cuda", dtype=torch.bfloat16)
    lens = torch.tensor([5, 100], dtype=torch.int32, device="cuda")
    with pytest.raises(UnsupportedError, match="no kv_append"):
        flashfuse.attention_with_kvcache(q, k8, v8, lens, kn, kn.clone(),
                                         k_descale=kd, v_descale=vd)
