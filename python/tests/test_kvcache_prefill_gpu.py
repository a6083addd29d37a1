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
from flashfuse import _runtime as rt  # noqa: E402
from test_decode_gpu import (DTYPES, check, check_result,  # noqa: E402
                             poison, reference)  # noqa: F401

pytestmark = pytest.mark.gpu

# (B, capacity, total lengths L_b).
BATCHES = [(4, 640, [0, 63, 129, 640]), (2, 1024, [1024, 257])]
# (heads, Sq): 4 x 64 and 1 x 300 packed rows, both at least
# PREFILL_MIN_ROWS.
SHAPES = [((32, 8), 64), ((8, 8), 300)]


@pytest.fixture
def routed(monkeypatch):
    """(packed sequences, packed query rows, Hq, D) of every varlen launch:
    a step that took the path launches 2B sequences of B * Sq rows."""
    calls, real = [], rt.attention_forward_varlen

    def spy(kernel, a, p, stream):
        calls.append((p.num_seqs, a.seq_q, a.heads_q, a.head_dim))
        return real(kernel, a, p, stream)

    monkeypatch.setattr(rt, "attention_forward_varlen", spy)
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
    b = batch[0]
    assert routed == [(2 * b, b * sq, heads[0], d)]


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
    # 4 x 128 packed rows: PREFILL_MIN_ROWS_PAGED.
    check(torch.bfloat16, 128, (32, 8), 128, causal, BATCHES[0],
          page_size=page_size, append=append)
    assert routed == [(8, 4 * 128, 32, 128)]


@pytest.mark.parametrize("append", [False, True], ids=["cached", "append"])
@pytest.mark.parametrize("page_size", [0, 16, 64],
                         ids=["contiguous", "page16", "page64"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_unread_rows_and_table_entries_stay_unread(routed, causal, page_size,
                                                   append):
    """NaN in every cache row past a sequence's length and in the pages no
    sequence names, garbage in the table past each sequence's pages
    (test_decode_gpu.poison_unread): neither the gather nor the varlen
    kernel lets them in."""
    check(torch.bfloat16, 128, (32, 8), 128, causal, BATCHES[0],
          page_size=page_size, append=append, unread_nan=True)
    assert routed == [(8, 4 * 128, 32, 128)]


def test_few_rows_stay_on_the_decode_kernels(routed):
    check(torch.bfloat16, 128, (32, 8), 64, True, BATCHES[0], page_size=16)
    check(torch.bfloat16, 128, (32, 8), 16, True, BATCHES[0])
    assert routed == []


def test_steps_of_one_signature_reuse_their_launches(routed):
    """Eager steps of one signature, unchecked, so that kvcache keeps the
    first one's launches for the next (other lengths, other tensors); then
    a step whose q needs a gradient (through the ops, as under
    torch.compile). Each within the rule."""
    k = torch.randn(2, 1024, 8, 128, device="cuda", dtype=torch.bfloat16)
    v = torch.randn_like(k)
    kd, vd = k.transpose(1, 2), v.transpose(1, 2)
    for n, grad in (([700, 1024], False), ([64, 0], False),
                    ([500, 129], True)):
        q = torch.randn(2, 128, 32, 128, device="cuda",
                        dtype=torch.bfloat16)
        seqlens = torch.tensor(n, device="cuda", dtype=torch.int32)
        out, lse = flashfuse.attention_with_kvcache(
            q.requires_grad_(grad), k, v, seqlens, return_lse=True)
        ref, ref_lse = reference(q.detach(), kd, vd, n, 128 ** -0.5, True,
                                 (-1, -1), 0.0, upcast=True)
        low, _ = reference(q.detach(), kd, vd, n, 128 ** -0.5, True,
                           (-1, -1), 0.0, upcast=False)
        check_result(out.detach(), lse, ref, ref_lse, low, 2, q.shape,
                     torch.bfloat16)
    assert routed == [(4, 256, 32, 128)] * 3


@pytest.mark.parametrize("d", [64, 128])
def test_nan_in_unwritten_cache_rows_stays_there(routed, d):
    """A cache's rows past each sequence's length (never written: NaN here,
    as torch.empty may leave them) are read by the varlen kernel's last key
    block of the sequence (on the sm90ws kernel, whose tensor maps span the
    whole cache, not zero-filled): P = 0 there must not let them in (0 ·
    NaN), on either kernel the capacity takes."""
    k = torch.randn(2, 1024, 8, d, device="cuda", dtype=torch.bfloat16)
    v = torch.randn_like(k)
    n = [100, 700]
    for i, length in enumerate(n):
        k[i, length:] = float("nan")
        v[i, length:] = float("nan")
    # The reference's own products would carry the NaNs (0 · NaN): it reads
    # zeros there, which the semantics never look at.
    kd, vd = (torch.nan_to_num(t, nan=0.0).transpose(1, 2) for t in (k, v))
    q = torch.randn(2, 128, 32, d, device="cuda", dtype=torch.bfloat16)
    seqlens = torch.tensor(n, device="cuda", dtype=torch.int32)
    out, lse = flashfuse.attention_with_kvcache(q, k, v, seqlens,
                                                return_lse=True)
    ref, ref_lse = reference(q, kd, vd, n, d ** -0.5, True, (-1, -1), 0.0,
                             upcast=True)
    low, _ = reference(q, kd, vd, n, d ** -0.5, True, (-1, -1), 0.0,
                       upcast=False)
    check_result(out, lse, ref, ref_lse, low, 2, q.shape, torch.bfloat16)
    assert routed == [(4, 256, 32, d)]
