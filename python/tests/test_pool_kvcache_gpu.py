"""attention_with_kvcache(..., cache_batch_idx=...) on the GPU: contiguous
caches holding a pool of Bc sequences, sequence b at pool row
cache_batch_idx[b]. O and LSE by FlashAttention's rule against the
reference over the gathered rows (test_decode_gpu.reference); with new
rows, the whole pool compared bit for bit with torch indexing (only rows
idx[b] at [L_b, L_b + Snew) change); pools larger and smaller than the
batch, a row read by two sequences; the rest of sequence b (length,
cache_leftpad, ALiBi slopes, an FP8 pool's descales) still the batch's
row b; the device-side check of the indices; an index outside the pool
never read or written outside it. The kernels are compiled on first use
(skipped without flashfuse-compile)."""

import math

import pytest

torch = pytest.importorskip("torch")

import flashfuse  # noqa: E402
from flashfuse.errors import InvalidArgumentError  # noqa: E402
from test_decode_gpu import (check_result, lens, reference,  # noqa: E402
                             run_or_skip)

pytestmark = pytest.mark.gpu

# (pool size Bc, indices, lengths before the step): a pool larger than the
# batch in another order, and one smaller with a row read twice (no new
# rows there: two sequences appending to one row is outside the contract).
POOLS = [(5, [4, 0, 2], [0, 65, 200]), (2, [1, 1, 0], [255, 7, 1])]


def step(dtype, d, heads, causal, pool, snew, window=(-1, -1),
         check_inputs=True):
    (hq, hkv), (bc, idx, before) = heads, pool
    b, capacity, sq = len(idx), 256, max(snew, 1)
    q = torch.randn(b, sq, hq, d, device="cuda", dtype=dtype)
    k_pool = torch.randn(bc, capacity, hkv, d, device="cuda", dtype=dtype)
    v_pool = torch.randn_like(k_pool)
    k_new = v_new = None
    if snew:
        k_new = torch.randn(b, snew, hkv, d, device="cuda", dtype=dtype)
        v_new = torch.randn_like(k_new)
    seqlens, rows = lens(*before), lens(*idx)
    want_k, want_v = k_pool.clone(), v_pool.clone()
    for i, (row, n) in enumerate(zip(idx, before)):
        if snew:
            want_k[row, n:n + snew] = k_new[i]
            want_v[row, n:n + snew] = v_new[i]
    out, lse = run_or_skip(lambda: flashfuse.attention_with_kvcache(
        q, k_pool, v_pool, seqlens, k_new, v_new, is_causal=causal,
        window_size=window, return_lse=True, check_inputs=check_inputs,
        cache_batch_idx=rows))
    assert torch.equal(k_pool, want_k) and torch.equal(v_pool, want_v), \
        "pool contents"
    index = rows.long()
    kd, vd = k_pool[index].transpose(1, 2), v_pool[index].transpose(1, 2)
    lengths = [n + snew for n in before]
    scale = 1 / math.sqrt(d)
    ref, ref_lse = reference(q, kd, vd, lengths, scale, causal, window, 0.0,
                             upcast=True)
    low, _ = reference(q, kd, vd, lengths, scale, causal, window, 0.0,
                       upcast=False)
    check_result(out, lse, ref, ref_lse, low, 2, (b, sq, hq, d), dtype)


@pytest.mark.parametrize("pool", POOLS, ids=["larger", "smaller"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("heads", [(4, 4), (32, 8)], ids=["mha", "gqa"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_decode_over_a_pool(dtype, d, heads, causal, pool):
    step(dtype, d, heads, causal, pool, snew=0)


@pytest.mark.parametrize("snew", [1, 4])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_new_rows_go_to_the_named_rows(dtype, d, snew):
    step(dtype, d, (32, 8), True, POOLS[0], snew)


def test_window_and_eager_steps_reuse_their_launches():
    """A window, and the second step of one signature (a cached plan) with
    other indices: each step reads its own."""
    step(torch.bfloat16, 128, (32, 8), True, POOLS[0], 1, window=(64, 0))
    for pool in ((5, [1, 3, 0], [10, 20, 30]), (5, [2, 2, 4], [5, 6, 7])):
        step(torch.bfloat16, 128, (32, 8), True, pool, 0, check_inputs=False)


def test_device_check_names_an_index_outside_the_pool():
    kc = torch.randn(4, 64, 2, 64, device="cuda", dtype=torch.float16)
    q = torch.randn(3, 1, 8, 64, device="cuda", dtype=torch.float16)

    def checked(seqlens, idx, new_rows=None):
        return run_or_skip(lambda: flashfuse.attention_with_kvcache(
            q, kc, kc, seqlens, new_rows, new_rows,
            cache_batch_idx=lens(*idx), check_inputs=True))

    seqlens = lens(3, 4, 5)
    with pytest.raises(InvalidArgumentError,
                       match=r"cache_batch_idx\[1\] = 7 is outside the pool "
                             r"\[0, 4\)"):
        checked(seqlens, (0, 7, 1))
    with pytest.raises(InvalidArgumentError,
                       match=r"cache_batch_idx\[0\] = -1 is outside"):
        checked(seqlens, (-1, 7, 1))
    # Two sequences appending to one row; reading one row twice is valid.
    kn = torch.randn(3, 1, 2, 64, device="cuda", dtype=torch.float16)
    with pytest.raises(InvalidArgumentError,
                       match=r"cache_batch_idx\[2\] = 0 is also "
                             r"cache_batch_idx\[0\]: sequences 0 and 2 "
                             r"would both append their 1 new rows"):
        checked(seqlens, (0, 3, 0), kn)
    checked(seqlens, (0, 3, 0))
    # A length is checked before the sequence's index.
    with pytest.raises(InvalidArgumentError,
                       match=r"cache_seqlens\[1\] = 65 plus 0 new rows"):
        checked(lens(3, 65, 5), (0, 7, 1))


def test_indices_outside_the_pool_stay_inside_it():
    """Unchecked, an index outside [0, Bc) gives a wrong answer for its
    sequence only: its new rows are not written anywhere, the other
    sequences' rows and answers are as with valid indices."""
    dt = torch.bfloat16
    pool = torch.randn(3, 64, 2, 64, device="cuda", dtype=dt)
    kc, vc = pool.clone(), pool.clone() * 0.5
    q = torch.randn(2, 1, 8, 64, device="cuda", dtype=dt)
    kn = torch.randn(2, 1, 2, 64, device="cuda", dtype=dt)
    good = run_or_skip(lambda: flashfuse.attention_with_kvcache(
        q, kc.clone(), vc.clone(), lens(10, 20), kn, kn,
        cache_batch_idx=lens(2, 0)))
    before_k, before_v = kc.clone(), vc.clone()
    out = run_or_skip(lambda: flashfuse.attention_with_kvcache(
        q, kc, vc, lens(10, 20), kn, kn, cache_batch_idx=lens(2, 9)))
    torch.cuda.synchronize()
    before_k[2, 10], before_v[2, 10] = kn[0, 0], kn[0, 0]
    assert torch.equal(kc, before_k) and torch.equal(vc, before_v)
    torch.testing.assert_close(out[0], good[0], rtol=0, atol=0)
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("interleaved", [False, True])
def test_rotary_step_over_a_pool(interleaved):
    """Rotary tables with a pool: the new keys land rotated in the named
    rows (bit for bit those of the same step over the gathered caches),
    and O meets the rule against the reference over the rotated query."""
    from flashfuse import rotary
    dt, d, b, bc, capacity = torch.bfloat16, 128, 3, 5, 256
    q = torch.randn(b, 1, 8, d, device="cuda", dtype=dt)
    k_pool = torch.randn(bc, capacity, 2, d, device="cuda", dtype=dt)
    v_pool = torch.randn_like(k_pool)
    k_new = torch.randn(b, 1, 2, d, device="cuda", dtype=dt)
    v_new = torch.randn_like(k_new)
    angle = torch.rand(capacity, 32, device="cuda") * 6.3
    cos, sin = angle.cos().to(dt), angle.sin().to(dt)
    idx, seqlens = lens(4, 0, 2), lens(0, 77, 200)
    k_gathered = k_pool[idx.long()].clone()
    v_gathered = v_pool[idx.long()].clone()
    out, lse = run_or_skip(lambda: flashfuse.attention_with_kvcache(
        q, k_pool, v_pool, seqlens, k_new, v_new, rotary_cos=cos,
        rotary_sin=sin, rotary_interleaved=interleaved, return_lse=True,
        cache_batch_idx=idx))
    flashfuse.attention_with_kvcache(
        q, k_gathered, v_gathered, seqlens, k_new, v_new, rotary_cos=cos,
        rotary_sin=sin, rotary_interleaved=interleaved)
    assert torch.equal(k_pool[idx.long()], k_gathered)
    assert torch.equal(v_pool[idx.long()], v_gathered)
    q_rot, _ = rotary.rotate_step(q, k_new, cos, sin, seqlens, interleaved,
                                  True)
    kd, vd = k_gathered.transpose(1, 2), v_gathered.transpose(1, 2)
    lengths = [1, 78, 201]
    scale = 1 / math.sqrt(d)
    ref, ref_lse = reference(q_rot, kd, vd, lengths, scale, True,
                             (-1, -1), 0.0, upcast=True)
    low, _ = reference(q_rot, kd, vd, lengths, scale, True, (-1, -1), 0.0,
                       upcast=False)
    check_result(out, lse, ref, ref_lse, low, 2, (b, 1, 8, d), dt)


@pytest.mark.parametrize("fp8_cache", [False, True], ids=["bf16", "fp8"])
def test_the_rest_of_a_sequence_is_the_batchs_row(fp8_cache):
    """Over a pool, sequence b reads pool row idx[b] and everything else of
    it from the batch's row b: its length, its first row (cache_leftpad),
    its ALiBi slopes [B, Hq] and, over an FP8 pool, its descales [B, Hkv]
    (each named row quantised with its sequence's). O by the rule against
    the reference over the gathered rows with those of row b."""
    dt, d, hq, hkv, bc, capacity = torch.bfloat16, 128, 32, 8, 5, 256
    idx, lengths, pads = [4, 0, 2], [40, 65, 200], [3, 0, 17]
    rows = lens(*idx).long()
    q = torch.randn(3, 1, hq, d, device="cuda", dtype=dt)
    k_pool = torch.randn(bc, capacity, hkv, d, device="cuda", dtype=dt)
    v_pool = torch.randn_like(k_pool)
    slopes = torch.rand(3, hq, device="cuda") * 0.3 + 0.01
    kd, vd = k_pool[rows], v_pool[rows]  # [B, C, Hkv, D]
    descales, factor = {}, 2
    if fp8_cache:
        from flashfuse import fp8
        from test_decode_fp8_gpu import dequantize  # skips without e4m3
        k8, k_ds = fp8.quantize_kv_cache(kd, "head")
        v8, v_ds = fp8.quantize_kv_cache(vd, "head")
        k_pool, v_pool = k_pool.to(fp8.E4M3), v_pool.to(fp8.E4M3)
        # Through bytes: index_put has no float8 kernel in every torch.
        k_pool.view(torch.uint8)[rows] = k8.view(torch.uint8)
        v_pool.view(torch.uint8)[rows] = v8.view(torch.uint8)
        kd, vd = dequantize(k8, k_ds, False), dequantize(v8, v_ds, False)
        descales, factor = dict(k_descale=k_ds, v_descale=v_ds), 3
    out, lse = run_or_skip(lambda: flashfuse.attention_with_kvcache(
        q, k_pool, v_pool, lens(*lengths), return_lse=True,
        check_inputs=True, cache_leftpad=lens(*pads), alibi_slopes=slopes,
        cache_batch_idx=lens(*idx), **descales))
    kd, vd = kd.transpose(1, 2), vd.transpose(1, 2)
    scale = 1 / math.sqrt(d)
    ref, ref_lse = reference(q, kd, vd, lengths, scale, True, (-1, -1), 0.0,
                             upcast=True, leftpad=pads, slopes=slopes)
    low, _ = reference(q, kd.to(dt), vd.to(dt), lengths, scale, True,
                       (-1, -1), 0.0, upcast=False, leftpad=pads,
                       slopes=slopes)
    check_result(out, lse, ref, ref_lse, low, factor, (3, 1, hq, d), dt)
