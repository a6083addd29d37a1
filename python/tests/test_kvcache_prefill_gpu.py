"""attention_with_kvcache's many-row steps (chunked prefill) on the varlen
forward kernels (flashfuse._kvcache_prefill), on a GPU: FlashAttention's
rule against the f32 reference of docs/KVCACHE.md's semantics
(test_decode_gpu.check: ragged lengths with 0, lengths shorter than Sq,
block multiples +-1 and the full capacity; GQA and MHA; causal or not,
a causal window; new rows appended, the cache contents checked; LSE), each
step asserted to have taken that path; the same steps forced onto the
decode kernels (num_splits=1) meet the rule too; paged caches (pages
shuffled, gathered first) from PREFILL_MIN_ROWS_PAGED rows; steps with too
few rows stay on the decode kernels."""

import pytest

torch = pytest.importorskip("torch")

import flashfuse  # noqa: E402
from flashfuse import _kvcache_prefill as prefill  # noqa: E402
from test_decode_gpu import DTYPES, check, poison  # noqa: E402,F401

pytestmark = pytest.mark.gpu

# (B, capacity, total lengths L_b).
BATCHES = [(4, 640, [0, 63, 129, 640]), (2, 1024, [1024, 257])]
# (heads, Sq): 4 x 64 and 1 x 300 packed rows, both at least
# PREFILL_MIN_ROWS.
SHAPES = [((32, 8), 64), ((8, 8), 300)]


@pytest.fixture
def routed(monkeypatch):
    """The shapes of q of every step that took the varlen path."""
    calls, real = [], prefill.attend

    def spy(q, *args, **kwargs):
        calls.append(tuple(q.shape))
        return real(q, *args, **kwargs)

    monkeypatch.setattr(prefill, "attend", spy)
    return calls


@pytest.mark.parametrize("append", [False, True], ids=["cached", "append"])
@pytest.mark.parametrize("batch", BATCHES,
                         ids=lambda x: f"B{x[0]}_C{x[1]}")
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", SHAPES, ids=["gqa", "mha"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
def test_many_rows_run_on_the_varlen_kernel(routed, dtype, d, shape, causal,
                                            batch, append):
    heads, sq = shape
    check(dtype, d, heads, sq, causal, batch, append=append)
    assert routed == [(batch[0], sq, heads[0], d)]


@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
def test_the_decode_kernels_agree_on_the_same_steps(routed, dtype):
    for causal in (False, True):
        check(dtype, 128, (32, 8), 64, causal, BATCHES[0], num_splits=1)
    assert routed == []


def test_causal_window(routed):
    check(torch.bfloat16, 128, (32, 8), 64, True, BATCHES[1],
          window=(300, 0))
    assert len(routed) == int(prefill.applies(
        torch.empty(2, 64, 32, 128, device="cuda", dtype=torch.bfloat16),
        torch.empty(2, 1024, 8, 128, device="cuda", dtype=torch.bfloat16),
        torch.empty(2, 1024, 8, 128, device="cuda", dtype=torch.bfloat16),
        None, None, None, None, None, 0, True, (300, 0), 0.0))


@pytest.mark.parametrize("append", [False, True], ids=["cached", "append"])
@pytest.mark.parametrize("page_size", [16, 64])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_paged_caches_gathered_from_many_rows(routed, causal, page_size,
                                              append):
    # 4 x 256 packed rows: PREFILL_MIN_ROWS_PAGED.
    check(torch.bfloat16, 128, (32, 8), 256, causal, BATCHES[0],
          page_size=page_size, append=append)
    assert routed == [(4, 256, 32, 128)]


def test_few_rows_stay_on_the_decode_kernels(routed):
    check(torch.bfloat16, 128, (32, 8), 64, True, BATCHES[0], page_size=16)
    check(torch.bfloat16, 128, (32, 8), 16, True, BATCHES[0])
    assert routed == []
