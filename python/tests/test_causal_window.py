"""A causal mask with a sliding window on the same diagonal reaches the
kernels as that window alone (flashfuse.functional.fold_causal_into_window):
the kernel library's sliding-window kernels, where a causal window kernel
would need compiling (Mistral's window, which transformers passes as causal
with a window). Torch, no GPU: the launches are replaced."""

import pytest

torch = pytest.importorskip("torch")

import flashfuse  # noqa: E402
from flashfuse import functional, varlen  # noqa: E402
from flashfuse.functional import _CAUSAL, fold_causal_into_window  # noqa: E402

NONE, TOP, BOTTOM = _CAUSAL["none"], _CAUSAL["top_left"], _CAUSAL["bottom_right"]


@pytest.mark.parametrize("causal, window, equal, want", [
    # causal and i - l <= j <= i + r keep i - l <= j <= i
    (TOP, (1023, -1), True, (NONE, (1023, 0))),
    (TOP, (1023, -1), False, (NONE, (1023, 0))),
    (TOP, (64, 5), True, (NONE, (64, 0))),
    (TOP, (0, 0), False, (NONE, (0, 0))),
    # bottom-right causality: the window's diagonal only where Sq = Sk
    (BOTTOM, (100, -1), True, (NONE, (100, 0))),
    (BOTTOM, (100, -1), False, (BOTTOM, (100, -1))),
    # an unbounded left adds nothing to causality
    (TOP, (-1, 7), True, (TOP, (-1, -1))),
    (BOTTOM, (-1, 0), False, (BOTTOM, (-1, 0))),
    # nothing to fold
    (NONE, (100, -1), True, (NONE, (100, -1))),
    (NONE, (100, 3), False, (NONE, (100, 3))),
    (TOP, (-1, -1), True, (TOP, (-1, -1))),
])
def test_fold(causal, window, equal, want):
    assert fold_causal_into_window(causal, window, equal) == want


def test_fold_keeps_the_mask():
    """Element by element, the folded (causal, window) keeps what the two
    did, for Sq < Sk, = and >."""
    def keep(causal, window, sq, sk):
        i = torch.arange(sq)[:, None]
        j = torch.arange(sk)[None]
        off = sk - sq if causal == BOTTOM else 0
        k = torch.ones(sq, sk, dtype=torch.bool)
        if causal != NONE:
            k &= j <= i + off
        left, right = window
        if left >= 0:
            k &= j >= i + off - left
        if right >= 0:
            k &= j <= i + off + right
        return k

    for sq, sk in ((5, 9), (9, 9), (9, 5)):
        for causal in (TOP, BOTTOM):
            for window in ((3, -1), (3, 2), (-1, 2), (0, 0)):
                folded = fold_causal_into_window(causal, window, sq == sk)
                assert torch.equal(keep(causal, window, sq, sk),
                                   keep(*folded, sq, sk)), (causal, window)


def _captured_attention(monkeypatch, **kwargs):
    seen = {}

    def run_op(op, body, q, k, v, bias, mask, causal, scale, left, right,
               *rest):
        seen.update(causal=causal, window=(left, right))
        return (q, None)

    monkeypatch.setattr(functional, "_check_device", lambda *a: None)
    monkeypatch.setattr(functional.ops, "run_op", run_op)
    q = torch.zeros(1, 4, 16, 64, dtype=torch.bfloat16)
    k = torch.zeros(1, 4, kwargs.pop("sk", 16), 64, dtype=torch.bfloat16)
    flashfuse.attention(q, k, k, **kwargs)
    return seen


def test_attention_passes_the_folded_window(monkeypatch):
    assert _captured_attention(monkeypatch, is_causal=True,
                               window=(4095, -1)) == {
        "causal": NONE, "window": (4095, 0)}
    assert _captured_attention(monkeypatch, is_causal="bottom_right",
                               window=(8, -1), sk=32) == {
        "causal": BOTTOM, "window": (8, -1)}
    assert _captured_attention(monkeypatch, is_causal=True) == {
        "causal": TOP, "window": (-1, -1)}


def test_varlen_folds_only_over_one_offsets_tensor(monkeypatch):
    seen = []

    def apply(q, k, v, cu_q, cu_k, max_q, max_k, causal, scale, left, right,
              *rest):
        seen.append((causal, (left, right)))
        return q, None

    monkeypatch.setattr(varlen, "_check", lambda *a: None)
    monkeypatch.setattr(varlen._VarlenAttention, "apply", apply)
    q = torch.zeros(30, 4, 64, dtype=torch.float16)
    cu = torch.tensor([0, 10, 30], dtype=torch.int32)
    flashfuse.varlen_attention(q, q, q, cu, cu, 20, 20,
                               is_causal="bottom_right", window=(4, -1))
    flashfuse.varlen_attention(q, q, q, cu, cu.clone(), 20, 20,
                               is_causal="bottom_right", window=(4, -1))
    flashfuse.varlen_attention(q, q, q, cu, cu.clone(), 20, 20,
                               is_causal=True, window=(4, -1))
    assert seen == [(NONE, (4, 0)), (BOTTOM, (4, -1)), (NONE, (4, 0))]
