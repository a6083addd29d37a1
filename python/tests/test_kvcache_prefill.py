"""flashfuse._kvcache_prefill without a GPU: which steps of
attention_with_kvcache may take the varlen forward kernel, and the packed
offsets that read a contiguous cache in place (2B sequences: each
sequence's queries over its keys, then the unused rows of its cache
without queries)."""

import pytest

torch = pytest.importorskip("torch")

from flashfuse import _kvcache_prefill as prefill  # noqa: E402

B, SMAX, HKV, D = 2, 1024, 8, 128


def tensors(sq=64, hq=32, dtype=torch.bfloat16, cache_layout="bshd"):
    q = torch.empty(B, sq, hq, D, dtype=dtype)
    if cache_layout == "bshd":
        k = torch.empty(B, SMAX, HKV, D, dtype=dtype)
    else:  # Hugging Face's [B, Hkv, Smax, D], passed transposed
        k = torch.empty(B, HKV, SMAX, D, dtype=dtype).transpose(1, 2)
    return q, k, torch.empty_like(k)


def eligible(q, k, v, **over):
    args = dict(block_table=None, cache_leftpad=None, cache_batch_idx=None,
                k_descale=None, alibi_slopes=None, num_splits=0,
                is_causal=True, window_size=(-1, -1))
    args.update(over)
    return prefill.eligible(q, k, v, **args)


def test_many_rows_over_a_contiguous_cache_are_eligible():
    assert eligible(*tensors())                      # 64 x 4 = 256 rows
    assert eligible(*tensors(), is_causal=False)
    assert eligible(*tensors(), window_size=(100, 0))
    assert eligible(*tensors(sq=256, hq=8))          # MHA, 256 rows
    assert eligible(*tensors(dtype=torch.float16))
    # A paged cache (gathered first) from PREFILL_MIN_ROWS_PAGED rows.
    q, k, v = tensors(sq=128)
    pages = torch.empty(40, 16, HKV, D, dtype=torch.bfloat16)
    assert eligible(q, pages, pages,
                    block_table=torch.zeros(B, 4, dtype=torch.int32))


@pytest.mark.parametrize("over", [
    # 256 rows are too few for a paged cache.
    dict(block_table=torch.zeros(B, 4, dtype=torch.int32)),
    dict(cache_leftpad=torch.zeros(B, dtype=torch.int32)),
    dict(cache_batch_idx=torch.zeros(B, dtype=torch.int32)),
    dict(k_descale=torch.ones(1)),
    dict(alibi_slopes=torch.ones(32)),
    dict(num_splits=1),
    # Without causality the varlen kernels' window is the top-left one.
    dict(is_causal=False, window_size=(100, 0)),
    dict(window_size=(100,)),
    dict(window_size=(1.5, 0)),
], ids=["paged", "leftpad", "pool", "fp8", "alibi", "forced-splits",
        "window-not-causal", "bad-window", "float-window"])
def test_options_the_varlen_path_does_not_take(over):
    assert not eligible(*tensors(), **over)


def test_shapes_the_varlen_path_does_not_take():
    assert not eligible(*tensors(sq=63))             # 252 rows
    assert not eligible(*tensors(sq=255, hq=8))
    # A cache whose [B * Smax] rows are not one strided dim.
    assert not eligible(*tensors(cache_layout="bhsd"))
    q, k, v = tensors(dtype=torch.float32)
    assert not eligible(q, k, v)
    q, k, v = tensors()
    assert not eligible(q, k.half(), v)
    assert not eligible(q[0], k, v)
    assert not eligible(q, k, None)


def test_offsets_pack_each_sequence_then_its_unused_rows():
    keys = torch.tensor([0, 12, 7], dtype=torch.int32)
    cu_q, cu_k = prefill.offsets(keys, 3, 5, 10)
    assert cu_q.dtype == cu_k.dtype == torch.int32
    assert cu_q.tolist() == [0, 5, 5, 10, 10, 15, 15]
    # 12 is past the capacity: clamped to 10, never past the cache.
    assert cu_k.tolist() == [0, 0, 10, 20, 20, 27, 30]
    cu_q, cu_k = prefill.offsets(torch.tensor([-3], dtype=torch.int32), 1,
                                 4, 8)
    assert cu_q.tolist() == [0, 4, 4] and cu_k.tolist() == [0, 0, 8]


def test_pages_gathered_in_table_order_indices_clamped():
    pages = torch.arange(5 * 2 * 1 * 1, dtype=torch.float32).view(5, 2, 1, 1)
    table = torch.tensor([[3, 0], [7, -1]], dtype=torch.int32)
    out = prefill.gather_pages(pages, table)
    assert out.shape == (2, 4, 1, 1)
    # Page 3 then 0; 7 and -1 are outside the table's 5 pages: clamped.
    assert out.flatten().tolist() == [6, 7, 0, 1, 8, 9, 0, 1]
