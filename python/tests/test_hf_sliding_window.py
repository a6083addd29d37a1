"""The Hugging Face integration and sliding windows, on the CPU: for an
unpadded prompt (Mistral's causal sliding window, longer than the window),
transformers' mask function hands flashfuse.attention no mask, and the
attention applies causality with the layer's window (the library's window
kernels, once flashfuse.attention folds the two); a padded prompt, a chunked
mask and a bidirectional one keep SDPA's mask. flashfuse.attention is
replaced by a PyTorch reference of its contract (the GPU tests run the
kernels), so the logits must be SDPA's."""


import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import flashfuse.hf  # noqa: E402
from flashfuse import functional, kvcache  # noqa: E402

try:
    from transformers import masking_utils
    from transformers.masking_utils import (  # noqa: F401
        AttentionMaskInterface, sliding_window_causal_mask_function)
except ImportError:
    pytest.skip("transformers without AttentionMaskInterface or its "
                "sliding-window mask function", allow_module_level=True)

WINDOW = 8


class AttentionSpy:
    """flashfuse.attention's contract for masks, causality (top-left) and
    windows, in PyTorch; records (mask given, is_causal, window) a call."""

    def __init__(self):
        self.calls = []

    def __call__(self, query, key, value, attn_mask=None, is_causal=False,
                 scale=None, enable_gqa=False, window=None, softcap=None,
                 dropout_p=0.0):
        self.calls.append((attn_mask is not None, is_causal, window))
        sq, sk = query.shape[2], key.shape[2]
        i = torch.arange(sq)[:, None]
        j = torch.arange(sk)[None]
        keep = torch.ones(sq, sk, dtype=torch.bool)
        if is_causal in (True, "top_left"):
            keep &= j <= i
        if window is not None:
            left, right = window
            if left >= 0:
                keep &= j >= i - left
            if right >= 0:
                keep &= j <= i + right
        mask = keep if attn_mask is None else attn_mask & keep
        return torch.nn.functional.scaled_dot_product_attention(
            query, key, value, attn_mask=mask, scale=scale,
            enable_gqa=enable_gqa)


class KVCacheSpy:
    """attention_with_kvcache's contract for one new row: sequence b sees
    its first cache_seqlens[b] rows; records (rows, lengths) a call."""

    def __init__(self):
        self.calls = []

    def __call__(self, q, k_cache, v_cache, cache_seqlens, k_new=None,
                 v_new=None, block_table=None, *, softmax_scale=None,
                 is_causal=True, window_size=(-1, -1), softcap=0.0, **kw):
        assert q.shape[1] == 1 and k_new is None and is_causal
        assert window_size == (-1, -1)
        self.calls.append((k_cache.shape[1], cache_seqlens.tolist()))
        outs = []
        for b in range(q.shape[0]):
            n = int(cache_seqlens[b])
            outs.append(torch.nn.functional.scaled_dot_product_attention(
                q[b:b + 1].transpose(1, 2),
                k_cache[b:b + 1, :n].transpose(1, 2),
                v_cache[b:b + 1, :n].transpose(1, 2), scale=softmax_scale,
                enable_gqa=True))
        return torch.cat(outs).transpose(1, 2)


@pytest.fixture
def spy(monkeypatch):
    s = AttentionSpy()
    s.kvcache = KVCacheSpy()
    monkeypatch.setattr(functional, "attention", s)
    monkeypatch.setattr(kvcache, "attention_with_kvcache", s.kvcache)
    return s


def _config():
    return transformers.MistralConfig(
        hidden_size=128, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, vocab_size=97,
        max_position_embeddings=128, sliding_window=WINDOW)


def test_unpadded_prompt_takes_the_window(spy, hf_model_pair):
    ref, ours = hf_model_pair(_config())
    ids = torch.randint(1, 97, (2, 3 * WINDOW + 5))
    mask = torch.ones_like(ids)
    with torch.no_grad():
        want = ref(ids, attention_mask=mask).logits
        got = ours(ids, attention_mask=mask).logits
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
    assert spy.calls and all(
        call == (False, "top_left", (WINDOW - 1, -1)) for call in spy.calls)


def test_padded_prompt_keeps_the_mask(spy, hf_model_pair):
    ref, ours = hf_model_pair(_config())
    ids = torch.randint(1, 97, (2, 3 * WINDOW + 5))
    mask = torch.ones_like(ids)
    mask[1, :4] = 0
    with torch.no_grad():
        want = ref(ids, attention_mask=mask).logits
        got = ours(ids, attention_mask=mask).logits
    torch.testing.assert_close(got[0], want[0], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(got[1, 4:], want[1, 4:], atol=1e-5, rtol=1e-5)
    assert spy.calls and all(given for given, _, _ in spy.calls)


def _chunked(chunk):
    # transformers 5 takes the batch's left padding too.
    fn = masking_utils.chunked_causal_mask_function
    if "left_padding" in fn.__code__.co_varnames:
        return fn(chunk, torch.zeros(1, dtype=torch.long))
    return fn(chunk)


@pytest.mark.parametrize("make, expected", [
    (lambda w: masking_utils.sliding_window_causal_mask_function(w), True),
    (lambda w: masking_utils.causal_mask_function, False),
    (lambda w: _chunked(w), False),
    (lambda w: masking_utils.sliding_window_bidirectional_mask_function(w),
     False),
])
def test_only_the_sliding_causal_mask_is_recognised(make, expected):
    # (A window of 1 is also a chunk of 1: the same mask.)
    for window in (2, 4, 4096):
        try:
            fn = make(window)
        except (AttributeError, TypeError):
            pytest.skip("this transformers lacks the mask function")
        assert flashfuse.hf._is_sliding_causal(fn, window) is expected


def test_generate_matches_sdpa(spy, hf_model_pair):
    """Greedy decoding over transformers' sliding-window cache layers: the
    prompt without a mask, the steps on the KV-cache path over the layer's
    rows, every token SDPA's."""
    ref, ours = hf_model_pair(_config())
    ids = torch.randint(1, 97, (2, 3 * WINDOW + 5))
    kwargs = dict(attention_mask=torch.ones_like(ids), max_new_tokens=6,
                  min_new_tokens=6, do_sample=False, pad_token_id=0)
    with torch.no_grad():
        want = ref.generate(ids, **kwargs)
        got = ours.generate(ids, **kwargs)
    assert torch.equal(got, want)
    assert spy.calls[0] == (False, "top_left", (WINDOW - 1, -1))
    # The steps read the sliding cache layer's rows in place, every one.
    assert spy.kvcache.calls and all(
        lengths == [rows] * 2 for rows, lengths in spy.kvcache.calls)
    assert max(rows for rows, _ in spy.kvcache.calls) <= WINDOW


def _sdpa_mask_kwargs(**changes):
    kwargs = dict(q_length=20, kv_length=20, q_offset=0, kv_offset=0,
                  local_size=WINDOW, allow_is_causal_skip=True,
                  mask_function=sliding_window_causal_mask_function(WINDOW))
    kwargs.update(changes)
    return kwargs


@pytest.mark.parametrize("changes, unpadded, serves", [
    ({}, True, True),                              # a prompt of its own keys
    ({}, False, False),                            # padded
    (dict(allow_is_causal_skip=False), True, False),  # something added
    (dict(kv_length=30, kv_offset=0), True, False),   # cache rows before it
    (dict(local_size=None), True, False),          # no window
    # one row, the last of at most a window of keys (a sliding cache layer)
    (dict(q_length=1, kv_length=WINDOW, q_offset=40, kv_offset=41 - WINDOW),
     True, True),
    (dict(q_length=1, kv_length=WINDOW + 1, q_offset=40,
          kv_offset=40 - WINDOW), True, False),    # a key outside the window
    (dict(q_length=1, kv_length=5, q_offset=40, kv_offset=0), True, False),
    (dict(q_length=2, kv_length=WINDOW, q_offset=40, kv_offset=42 - WINDOW),
     True, False),                                 # bottom-right rows
    (dict(q_offset=torch.tensor(0)), True, False),  # a static cache's offset
])
def test_window_serves(changes, unpadded, serves):
    assert flashfuse.hf._window_serves(
        (), _sdpa_mask_kwargs(**changes), unpadded) is serves
