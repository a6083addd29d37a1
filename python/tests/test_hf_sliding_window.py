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
from conftest import varlen_reference  # noqa: E402
from flashfuse import functional, kvcache, varlen  # noqa: E402
from test_numerics_gpu import keep_mask  # noqa: E402

try:
    from transformers import masking_utils
    from transformers.masking_utils import (  # noqa: F401
        AttentionMaskInterface, sliding_window_causal_mask_function)
except ImportError:
    pytest.skip("transformers without AttentionMaskInterface or its "
                "sliding-window mask function", allow_module_level=True)

WINDOW = 8


class AttentionSpy:
    """flashfuse.attention's contract for masks, causality and windows
    (KERNEL_ABI.md's keep_mask), in PyTorch; records (mask given,
    is_causal, window) a call."""

    def __init__(self):
        self.calls = []

    def __call__(self, query, key, value, attn_mask=None, is_causal=False,
                 scale=None, enable_gqa=False, window=None, softcap=None,
                 dropout_p=0.0):
        self.calls.append((attn_mask is not None, is_causal, window))
        keep = keep_mask(query.shape[2], key.shape[2], is_causal, window,
                         query.device)
        mask = keep if attn_mask is None else attn_mask & keep
        return _attend(query, key, value, mask, scale, softcap)


def _attend(q, k, v, keep, scale, softcap):
    """Softmax attention of [B, H, S, D] tensors (K and V heads shared by
    groups of query heads) over the keys `keep` allows, with the softcap;
    the spies' reference."""
    k = k.repeat_interleave(q.shape[1] // k.shape[1], 1)
    v = v.repeat_interleave(q.shape[1] // v.shape[1], 1)
    s = q @ k.transpose(-1, -2) * (scale or q.shape[-1] ** -0.5)
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    # A row with no key (a padded query) gets zeros, as SDPA gives it.
    p = s.masked_fill(~keep, float("-inf")).softmax(-1).nan_to_num(0.0)
    return p @ v


class KVCacheSpy:
    """attention_with_kvcache's contract: sequence b sees its first
    cache_seqlens[b] rows (from row cache_leftpad[b] on), bottom-right
    causal, with the softcap; records (rows, lengths) a call, and the
    paddings in `leftpads`."""

    def __init__(self):
        self.calls = []
        self.leftpads = []

    def __call__(self, q, k_cache, v_cache, cache_seqlens, k_new=None,
                 v_new=None, block_table=None, *, softmax_scale=None,
                 is_causal=True, window_size=(-1, -1), softcap=0.0,
                 cache_leftpad=None, **kw):
        assert k_new is None and is_causal
        assert window_size == (-1, -1)
        self.calls.append((k_cache.shape[1], cache_seqlens.tolist()))
        self.leftpads.append(None if cache_leftpad is None
                             else cache_leftpad.tolist())
        outs = []
        for b in range(q.shape[0]):
            n = int(cache_seqlens[b])
            sq = q.shape[1]  # bottom-right causal
            keep = torch.ones(sq, n, dtype=torch.bool).tril(n - sq)
            if cache_leftpad is not None:
                keep[:, :max(int(cache_leftpad[b]), 0)] = False
            outs.append(_attend(
                q[b:b + 1].transpose(1, 2),
                k_cache[b:b + 1, :n].transpose(1, 2),
                v_cache[b:b + 1, :n].transpose(1, 2), keep,
                softmax_scale, softcap))
        return torch.cat(outs).transpose(1, 2)


@pytest.fixture
def spy(monkeypatch):
    s = AttentionSpy()
    s.kvcache = KVCacheSpy()
    monkeypatch.setattr(functional, "attention", s)
    monkeypatch.setattr(kvcache, "attention_with_kvcache", s.kvcache)
    monkeypatch.setattr(varlen, "varlen_attention", varlen_reference)
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


def _static_generate_matches(ref, ours, new, padding=0, prompt=5,
                             cache="static"):
    """Greedy generate() of `new` tokens with a StaticCache (or `cache`)
    from two prompts of `prompt` tokens (the second left-padded by
    `padding`): ours must give the reference's tokens."""
    ids = torch.randint(1, 97, (2, prompt))
    mask = torch.ones_like(ids)
    mask[1, :padding] = 0
    ids[1, :padding] = 0
    kwargs = dict(attention_mask=mask, max_new_tokens=new,
                  min_new_tokens=new, do_sample=False, pad_token_id=0,
                  cache_implementation=cache)
    with torch.no_grad():
        assert torch.equal(ours.generate(ids, **kwargs),
                           ref.generate(ids, **kwargs))


def test_static_cache_steps_take_the_kvcache_path(spy, hf_model_pair):
    """A StaticCache's sliding layers are buffers of a window of rows, for
    which transformers builds a mask on every step: before the buffer
    fills, the first rows written; then, rolled, all of them. Both are the
    layer's first rows, so the steps read the buffer in place with those
    lengths, and every token is SDPA's."""
    _static_generate_matches(*hf_model_pair(_config()), 9)
    # Eight steps (the first token comes from the prompt), two layers each,
    # over the whole buffer: rows 6, 7, then all 8 once it is full.
    steps = [6, 7] + [WINDOW] * 6
    assert spy.kvcache.calls == [(WINDOW, [n, n]) for n in steps
                                 for _ in range(2)]
    # The prompt (5 rows at the start of the 8-row buffer) needs no mask:
    # top-left causality with the window leaves the unset rows out.
    assert spy.calls == [(False, "top_left", (WINDOW - 1, -1))] * 2


def test_static_cache_padded_steps_take_cache_leftpad(spy, hf_model_pair):
    """A left-padded batch's steps over a StaticCache's sliding buffer:
    the lengths as unpadded, and the padding's rows of the buffer (the
    padding's positions less the buffer's first, kv_offset, once it rolls)
    as cache_leftpad; the prompt, 5 rows inside the window, too."""
    _static_generate_matches(*hf_model_pair(_config()), 6, padding=2)
    # The prompt (5 rows), then steps at positions 5..9: the buffer fills
    # (rows 6, 7, 8), then rolls (kv_offset 1, 2).
    assert spy.kvcache.calls == [(WINDOW, [n, n]) for n in (5, 6, 7, 8, 8, 8)
                                 for _ in range(2)]
    assert spy.kvcache.leftpads == [[-k, 2 - k] for k in (0, 0, 0, 0, 1, 2)
                                    for _ in range(2)]
    assert not spy.calls


def test_dynamic_cache_padded_steps_take_cache_leftpad(spy, hf_model_pair):
    """The same over transformers' dynamic sliding layers, past the
    window: the padding leaves the buffer as it rolls."""
    _static_generate_matches(*hf_model_pair(_config()), 8, padding=3,
                             prompt=6, cache="dynamic")
    # The prompt (6 rows), then steps at positions 6..12; the buffer holds
    # positions kv_offset on.
    offsets = [0] + [max(p - WINDOW + 1, 0) for p in range(6, 13)]
    lengths = [6] + [p + 1 - k for p, k in zip(range(6, 13), offsets[1:])]
    assert spy.kvcache.leftpads == [[-k, 3 - k] for k in offsets
                                    for _ in range(2)]
    assert [n for _, (n, _) in spy.kvcache.calls] == [
        n for n in lengths for _ in range(2)]


def test_gemma2_static_cache_steps(spy, hf_model_pair):
    """Gemma-2: full and sliding layers in turn, the logit softcap: the
    sliding layers' steps (and the full layers', by their positions) go to
    the KV-cache path with the softcap; every token that of transformers'
    eager attention (Gemma-2 has no SDPA path)."""
    if not hasattr(transformers, "Gemma2Config"):
        pytest.skip("this transformers lacks Gemma-2")
    cfg = transformers.Gemma2Config(
        hidden_size=128, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=32,
        vocab_size=97, max_position_embeddings=128, sliding_window=WINDOW,
        attn_logit_softcapping=5.0, final_logit_softcapping=None)
    _static_generate_matches(*hf_model_pair(cfg, reference="eager"), 7)
    sliding = [c for c in spy.kvcache.calls if c[0] == WINDOW]
    assert [c[1] for c in sliding] == [[n, n] for n in (6, 7, 8, 8, 8, 8)]
    # The prompt: the sliding layer's without a mask (its window, top-left
    # over the buffer), the full layer's over its cache's first rows.
    assert spy.calls == [(False, "top_left", (WINDOW - 1, -1))]
    assert spy.kvcache.calls[0][1] == [5, 5] != spy.kvcache.calls[0][0]


@pytest.mark.parametrize("changes, unpadded, rows", [
    # a static sliding layer's buffer of WINDOW rows, not yet full
    (dict(q_offset=5, kv_offset=0), True, 6),
    (dict(q_offset=WINDOW - 1, kv_offset=0), True, WINDOW),
    # full (rolled): every row
    (dict(q_offset=40, kv_offset=41 - WINDOW), True, WINDOW),
    (dict(q_offset=5, kv_offset=0), False, 0),       # padded
    (dict(q_offset=40, kv_offset=0), True, 0),       # rows past the buffer
    (dict(q_offset=40, kv_offset=40 - WINDOW), True, 0),
    (dict(kv_length=WINDOW + 1, q_offset=5), True, 0),  # more than a window
    (dict(q_length=2, q_offset=5), True, 0),         # two rows
    (dict(local_size=None, q_offset=5), True, 0),    # no window
    (dict(q_offset=torch.tensor(5)), True, 0),       # traced offsets
    (dict(q_offset=5, mask_function=masking_utils.causal_mask_function),
     True, 0),                                       # another mask function
])
def test_sliding_prefix_rows(changes, unpadded, rows):
    kwargs = _sdpa_mask_kwargs(q_length=1, kv_length=WINDOW,
                               allow_is_causal_skip=False,
                               device=torch.device("cpu"))
    kwargs.update(changes)
    assert flashfuse.hf._sliding_prefix_rows((), kwargs, unpadded) == rows


def test_lengths_mask():
    """_mask's count of first rows stands for the boolean mask that keeps
    them (where a step takes the general path), and no SDPA mask is taken
    for one."""
    hf = flashfuse.hf
    lengths = torch.tensor([3, 5], dtype=torch.int32).view(-1, 1, 1, 1)
    assert hf._is_lengths_mask(lengths)
    for other in (torch.ones(2, 1, 1, 8, dtype=torch.bool),
                  torch.zeros(2, 1, 1, 1), lengths.view(-1), None):
        assert not hf._is_lengths_mask(other)
    keep = hf._mask_of_lengths(lengths, 8, "cpu")
    assert keep.shape == (2, 1, 1, 8)
    assert keep.sum(-1).flatten().tolist() == [3, 5]
    assert keep[1, 0, 0].tolist() == [True] * 5 + [False] * 3
    # One row over a static layer's 8-row buffer at position 5: _mask
    # returns the count, 6, for each sequence.
    got = hf._mask(**_sdpa_mask_kwargs(
        q_length=1, kv_length=WINDOW, q_offset=5, batch_size=2,
        allow_is_causal_skip=False, device=torch.device("cpu")))
    assert hf._is_lengths_mask(got) and got.flatten().tolist() == [6, 6]


def test_dropout_step_takes_the_mask_of_the_lengths(monkeypatch):
    """A step the KV-cache path does not take (dropout) gets the boolean
    mask of _mask's count."""
    seen = {}

    def fake_attention(q, k, v, attn_mask=None, **kw):
        seen["mask"] = attn_mask
        return torch.zeros_like(q)

    monkeypatch.setattr(functional, "attention", fake_attention)
    q = torch.randn(2, 4, 1, 32)
    k = torch.randn(2, 2, WINDOW, 32)
    lengths = torch.tensor([3, 8], dtype=torch.int32).view(-1, 1, 1, 1)
    flashfuse.hf.attention_forward(torch.nn.Module(), q, k, k, lengths,
                                   dropout=0.1, sliding_window=WINDOW)
    assert seen["mask"].shape == (2, 1, 1, WINDOW)
    assert seen["mask"].sum(-1).flatten().tolist() == [3, 8]


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
    (dict(kv_length=30, q_offset=10), True, False),   # cache rows before it
    # a prompt at the start of a static cache, its later rows unset
    (dict(kv_length=30), True, True),
    (dict(kv_length=10), True, False),             # fewer keys than rows
    (dict(local_size=None), True, False),          # no window
    # a layer without a window: a causal prompt at the start of a static
    # cache, and not a step
    (dict(local_size=None, kv_length=30,
          mask_function=masking_utils.causal_mask_function), True, True),
    (dict(local_size=None, kv_length=30,
          mask_function=masking_utils.causal_mask_function), False, False),
    (dict(local_size=None, q_length=1, kv_length=30, q_offset=29,
          mask_function=masking_utils.causal_mask_function), True, False),
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


def _sdpa_keep(**kwargs):
    """transformers' SDPA mask for these arguments as a [Sq, Skv] boolean
    (its None: what its SDPA call applies then, is_causal (top-left) for
    several rows, every key for one)."""
    kwargs = dict(kwargs, batch_size=1, device=torch.device("cpu"))
    mask = masking_utils.sdpa_mask(**kwargs)
    if mask is None:
        keep = torch.ones(kwargs["q_length"], kwargs["kv_length"],
                          dtype=torch.bool)
        return keep.tril() if kwargs["q_length"] > 1 else keep
    return mask[0, 0]


@pytest.mark.parametrize("window", [4, 8, None])
def test_maskless_decisions_match_transformers_masks(window):
    """Over every small (q_length, kv_length, q_offset, kv_offset): where
    _window_serves drops the mask, the keys the attention then keeps
    (causality with the window: top-left for a prompt, the one row's own
    band for a step) are SDPA's mask's; where _sliding_prefix_rows returns
    n, the mask keeps exactly the first n keys. Without a window (a full
    layer, transformers' causal mask), prompts only."""
    fn = (sliding_window_causal_mask_function(window) if window
          else masking_utils.causal_mask_function)
    served = prefixes = 0
    span = 2 * (window or 6) + 2
    for q_length in (1, 2, 3, 5):
        for kv_length in range(1, span):
            for q_offset in range(0, span):
                for kv_offset in range(0, q_offset + 2):
                    kwargs = dict(q_length=q_length, kv_length=kv_length,
                                  q_offset=q_offset, kv_offset=kv_offset,
                                  local_size=window, mask_function=fn)
                    skip = dict(kwargs, allow_is_causal_skip=True)
                    keep = _sdpa_keep(**skip)
                    if flashfuse.hf._window_serves((), skip, True):
                        served += 1
                        i = torch.arange(q_length)[:, None]
                        j = torch.arange(kv_length)[None]
                        if q_length == 1:  # the row is the last key
                            i = i + kv_length - 1
                        want = (j <= i) & ((j > i - window) if window
                                           else True)
                        assert torch.equal(keep, want), kwargs
                    step = dict(kwargs, allow_is_causal_skip=False,
                                device=torch.device("cpu"))
                    n = flashfuse.hf._sliding_prefix_rows((), step, True)
                    if n:
                        prefixes += 1
                        want = torch.arange(kv_length) < n
                        assert torch.equal(_sdpa_keep(**step)[0], want), \
                            kwargs
    assert served and bool(prefixes) == bool(window)
