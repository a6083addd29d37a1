"""flashfuse.attention_with_kvcache over an FP8 (e4m3) cache on a GPU
(docs/KVCACHE.md "FP8 cache"; the decode and kv_append kernels of the
library's <target>-decode-fp8 artifact, scripts/kernels/gen_suite.py
--decode-fp8-library, or of --decode-fp8, or compiled on demand).
Caches made by flashfuse.fp8.quantize_kv_cache (per kv head or per
tensor); the reference is float attention over the dequantised cache
(descale · float(code)), with FlashAttention's rule as test_decode_gpu.py
applies it: max|out - ref| <= 3 * max|out_lowprec - ref| + atol, ref in
f32, out_lowprec the same computation with the dequantised cache and q in
the query dtype. Contiguous and paged (16, 64; pages shuffled) caches, GQA,
ragged lengths with 0 and 1, causal bottom-right, f16 and bf16 queries,
D = 64 and 128, splits automatic and forced. New rows: the codes the
kv_append kernel writes must be torch's quantisation
(x.float() * (1.0 / d)).clamp(-448, 448).to(float8_e4m3fn) byte for byte
(the IEEE reciprocal and product computed on the CPU), every other byte of
the cache unchanged, and the step's attention is checked over the updated
cache as above. Skipped without a GPU or without the FP8-cache kernels
(none in FLASHFUSE_KERNEL_DIR and no flashfuse-compile)."""

import math

import pytest

torch = pytest.importorskip("torch")

import flashfuse  # noqa: E402
from flashfuse import fp8  # noqa: E402
from test_decode_gpu import (UNREAD, appended, check_result,  # noqa: E402
                             dense, make_cache, poison_unread, reference,
                             run_or_skip)

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
          num_splits=0, leftpad=None, slopes=None, unread_nan=False):
    (hq, hkv), (b, capacity, lengths) = heads, batch
    q = torch.randn(b, sq, hq, d, device="cuda", dtype=dtype)
    k16, v16, table = make_cache(b, hkv, capacity, d, dtype, page_size)
    paged = table is not None
    k8, kd = fp8.quantize_kv_cache(k16, per, batch=b if paged else None)
    v8, vd = fp8.quantize_kv_cache(v16, per, batch=b if paged else None)
    assert k8.dtype == fp8.E4M3
    seqlens = torch.tensor(lengths, device="cuda", dtype=torch.int32)
    if unread_nan:
        table = poison_unread((k8, v8), table, lengths, leftpad)
    before_k, before_v = k8.view(torch.uint8).clone(), v8.view(
        torch.uint8).clone()
    pads = (None if leftpad is None else
            torch.tensor(leftpad, device="cuda", dtype=torch.int32))
    out, lse = run_or_skip(lambda: flashfuse.attention_with_kvcache(
        q, k8, v8, seqlens, block_table=table, is_causal=causal,
        return_lse=True, check_inputs=True, num_splits=num_splits,
        k_descale=kd, v_descale=vd, cache_leftpad=pads, alibi_slopes=slopes))
    # The caches are read, never written.
    assert torch.equal(k8.view(torch.uint8), before_k)
    assert torch.equal(v8.view(torch.uint8), before_v)
    kf = dense(dequantize(k8, kd, paged), table, b)
    vf = dense(dequantize(v8, vd, paged), table, b)
    # Zeros where the NaNs are: the semantics never look there, and the
    # reference's products would carry them (0 · NaN).
    kf, vf = kf.nan_to_num(0.0), vf.nan_to_num(0.0)
    scale = 1 / math.sqrt(d)
    ref, ref_lse = reference(q, kf, vf, lengths, scale, causal, (-1, -1),
                             0.0, upcast=True, leftpad=leftpad, slopes=slopes)
    low, _ = reference(q, kf.to(dtype), vf.to(dtype), lengths, scale, causal,
                       (-1, -1), 0.0, upcast=False, leftpad=leftpad,
                       slopes=slopes)
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


@pytest.mark.parametrize("page_size", [0, 16], ids=["contiguous", "page16"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
def test_fp8_decode_left_padded(dtype, page_size):
    # cache_leftpad over an FP8 cache (kernels compiled on demand, or
    # skipped where no compiler is found).
    check(dtype, 128, (32, 8), 4, True, (4, 512, [300, 512, 129, 40]),
          page_size, leftpad=[0, -5, 128, 40])


@pytest.mark.parametrize("layout", [1, 2])
@pytest.mark.parametrize("page_size", [0, 16], ids=["contiguous", "page16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
def test_fp8_decode_with_alibi(dtype, causal, page_size, layout):
    # ALiBi's slopes over an FP8 cache (kernels compiled on demand), the
    # paper's for [Hq], scaled per sequence for [B, Hq].
    slopes = flashfuse.alibi_slopes(32).cuda()
    if layout == 2:
        slopes = slopes[None] * torch.tensor([[1.0], [0.5], [2.0]],
                                             device="cuda")
    check(dtype, 128, (32, 8), 2, causal, (3, 512, [2, 65, 512]), page_size,
          slopes=slopes)


@pytest.mark.parametrize("num_splits", [0, 3], ids=["auto", "s3"])
@pytest.mark.parametrize("page_size", [0, 16, 64],
                         ids=["contiguous", "page16", "page64"])
@pytest.mark.parametrize("d", [64, 128])
def test_fp8_decode_unread_rows_stay_unread(d, page_size, num_splits):
    """e4m3's NaN (0x7f) in every cache row past a sequence's length and in
    the pages no sequence names, garbage in the table past its pages
    (test_decode_gpu.poison_unread)."""
    check(torch.bfloat16, d, (32, 8), 4, True, UNREAD, page_size,
          num_splits=num_splits, unread_nan=True)


def descales(b, hkv, per):
    """Per (b, h) factors that differ from each other (a wrong b or h
    stride picks another one), or one per tensor."""
    if per == "tensor":
        return (torch.tensor(1 / 48, device="cuda"),
                torch.tensor(1 / 80, device="cuda"))
    return tuple((torch.rand(b, hkv, device="cuda") + 0.5) / s
                 for s in (48, 80))


def quantized(new, descale):
    """torch's e4m3 codes of new rows [B, Snew, Hkv, D] with the descale of
    their (b, h): (x.float() * (1.0 / d)).clamp(-448, 448), rounded to
    nearest even; the f32 reciprocal and product on the CPU (IEEE, as the
    kernel's rcp.rn and mul.rn)."""
    d = descale.cpu()
    d = d.reshape(()) if d.numel() == 1 else d[:, None, :, None]
    x = (new.float().cpu() * (1.0 / d)).clamp(-448, 448)
    return x.to(fp8.E4M3).to("cuda")


def new_rows(b, snew, hkv, d, dtype):
    """Random rows with outliers that saturate (|x| / descale > 448) and a
    few exact zeros and negative zeros."""
    x = torch.randn(b, snew, hkv, d, device="cuda", dtype=dtype) * 3
    x[0, 0, 0, :4] = torch.tensor([1e4, -1e4, 0.0, -0.0], dtype=dtype,
                                    device="cuda")
    x[-1, -1, -1, -2:] = torch.tensor([30.0, -25.0], dtype=dtype,
                                     device="cuda")
    return x


def codes(t):
    return t.view(torch.uint8)


@pytest.mark.parametrize("per", ["head", "tensor"])
@pytest.mark.parametrize("page_size", [0, 16, 64],
                         ids=["contiguous", "page16", "page64"])
@pytest.mark.parametrize("snew", [1, 4], ids=["snew1", "snew4"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
def test_fp8_append_kernel_matches_torch(dtype, d, snew, page_size, per):
    # The kv_append kernel alone: ragged lengths (empty, mid-page, ending on
    # a page boundary, filling the cache), shuffled pages with spares; the
    # whole pool is compared byte for byte, so a row written anywhere else,
    # or a code rounded differently, fails.
    b, hkv, capacity = 4, 8, 256
    k16, v16, table = make_cache(b, hkv, capacity, d, dtype, page_size)
    k8, v8 = k16.float().to(fp8.E4M3), v16.float().to(fp8.E4M3)
    kd, vd = descales(b, hkv, per)
    seqlens = torch.tensor([0, 63, 128 - snew, capacity - snew],
                           device="cuda", dtype=torch.int32)
    k_new, v_new = (new_rows(b, snew, hkv, d, dtype) for _ in range(2))
    want_k = appended(codes(k8), table, codes(quantized(k_new, kd)), seqlens)
    want_v = appended(codes(v8), table, codes(quantized(v_new, vd)), seqlens)
    run_or_skip(lambda: torch.ops.flashfuse.kvcache_append(
        k8, v8, k_new, v_new, seqlens, table, kd, vd))
    torch.cuda.synchronize()
    assert torch.equal(codes(k8), want_k), "K codes"
    assert torch.equal(codes(v8), want_v), "V codes"


@pytest.mark.parametrize("per", ["head", "tensor"])
@pytest.mark.parametrize("page_size", [0, 16, 64],
                         ids=["contiguous", "page16", "page64"])
@pytest.mark.parametrize("snew", [1, 3], ids=["snew1", "snew3"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
def test_fp8_step_with_new_rows(dtype, d, snew, page_size, per):
    # attention_with_kvcache with k_new/v_new: the rows quantised into the
    # cache at [cache_seqlens[b], L_b), then attended to with the rest
    # (Sq = Snew new query rows, causal bottom-right, GQA 32/8).
    b, hq, hkv, capacity = 3, 32, 8, 512
    lengths = [snew, 65, 512]  # L_b, new rows included
    q = torch.randn(b, snew, hq, d, device="cuda", dtype=dtype)
    k16, v16, table = make_cache(b, hkv, capacity, d, dtype, page_size)
    k8, v8 = k16.float().to(fp8.E4M3), v16.float().to(fp8.E4M3)
    kd, vd = descales(b, hkv, per)
    seqlens = torch.tensor([n - snew for n in lengths], device="cuda",
                           dtype=torch.int32)
    k_new, v_new = (new_rows(b, snew, hkv, d, dtype) for _ in range(2))
    want_k = appended(codes(k8), table, codes(quantized(k_new, kd)), seqlens)
    want_v = appended(codes(v8), table, codes(quantized(v_new, vd)), seqlens)
    out, lse = run_or_skip(lambda: flashfuse.attention_with_kvcache(
        q, k8, v8, seqlens, k_new, v_new, table, is_causal=True,
        return_lse=True, check_inputs=True, k_descale=kd, v_descale=vd))
    assert torch.equal(codes(k8), want_k), "K codes"
    assert torch.equal(codes(v8), want_v), "V codes"

    def dequantized(c8, descale):  # [B, Hkv, C, D] in f32
        x = dense(c8.float(), table, b)
        if descale.numel() == 1:
            return x * descale.reshape(())
        return x * descale[:, :, None, None]

    kf, vf = dequantized(k8, kd), dequantized(v8, vd)
    scale = 1 / math.sqrt(d)
    ref, ref_lse = reference(q, kf, vf, lengths, scale, True, (-1, -1), 0.0,
                             upcast=True)
    low, _ = reference(q, kf.to(dtype), vf.to(dtype), lengths, scale, True,
                       (-1, -1), 0.0, upcast=False)
    check_result(out, lse, ref, ref_lse, low, 3, (b, snew, hq, d), dtype)
