"""The Hugging Face integration's decoding path on the CPU: with a
StaticCache, generate()'s decoding steps go to
flashfuse.attention_with_kvcache with the cache read in place and lengths
derived on the device, the prompt and padded batches to flashfuse.attention
with SDPA's mask. The kernels are replaced by PyTorch references of their
contracts (the GPU tests run the kernels), so greedy tokens must be SDPA's."""

import math

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import flashfuse.hf  # noqa: E402
from conftest import varlen_reference  # noqa: E402
from flashfuse import functional, kvcache, varlen  # noqa: E402

try:
    from transformers.masking_utils import AttentionMaskInterface  # noqa: F401
except ImportError:
    pytest.skip("transformers without AttentionMaskInterface",
                allow_module_level=True)


def reference_attention(query, key, value, attn_mask=None, is_causal=False,
                        scale=None, enable_gqa=False, window=None,
                        softcap=None, dropout_p=0.0):
    """flashfuse.attention's contract in PyTorch (bottom-right causal)."""
    assert window is None and not softcap and not dropout_p
    sq, sk = query.shape[2], key.shape[2]
    mask = attn_mask
    if is_causal in ("top_left", "bottom_right"):
        mask = torch.ones(sq, sk, dtype=torch.bool).tril(
            sk - sq if is_causal == "bottom_right" else 0)
    return torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=mask, scale=scale,
        enable_gqa=enable_gqa)


class KVCacheSpy:
    """attention_with_kvcache's contract in PyTorch: sequence b sees its
    first cache_seqlens[b] rows (from row cache_leftpad[b] on), bottom-right
    causal; records its calls (and the paddings in `leftpads`)."""

    def __init__(self):
        self.calls = []
        self.leftpads = []

    def __call__(self, q, k_cache, v_cache, cache_seqlens, k_new=None,
                 v_new=None, block_table=None, *, softmax_scale=None,
                 is_causal=True, window_size=(-1, -1), softcap=0.0,
                 return_lse=False, check_inputs=False, num_splits=0,
                 cache_leftpad=None):
        assert k_new is None and block_table is None and is_causal
        self.calls.append((tuple(q.shape), tuple(k_cache.shape),
                           cache_seqlens.clone()))
        self.leftpads.append(None if cache_leftpad is None
                             else cache_leftpad.tolist())
        # The cache is the model's own tensor, seen as [B, S, H, D].
        assert k_cache.transpose(1, 2).is_contiguous()
        b, sq, hq, d = q.shape
        scale = softmax_scale or 1 / math.sqrt(d)
        outs = []
        for i in range(b):
            n = int(cache_seqlens[i])
            qi = q[i:i + 1].transpose(1, 2)
            ki = k_cache[i:i + 1, :n].transpose(1, 2)
            vi = v_cache[i:i + 1, :n].transpose(1, 2)
            mask = torch.ones(sq, n, dtype=torch.bool).tril(n - sq)
            if cache_leftpad is not None:
                mask[:, :max(int(cache_leftpad[i]), 0)] = False
            outs.append(torch.nn.functional.scaled_dot_product_attention(
                qi, ki, vi, attn_mask=mask, scale=scale, enable_gqa=True))
        return torch.cat(outs).transpose(1, 2)


@pytest.fixture
def spy(monkeypatch):
    s = KVCacheSpy()
    s.varlen = []

    def varlen_spy(*args, **kwargs):
        s.varlen.append(args[3].tolist())  # the packed sequences
        return varlen_reference(*args, **kwargs)

    monkeypatch.setattr(kvcache, "attention_with_kvcache", s)
    monkeypatch.setattr(functional, "attention", reference_attention)
    monkeypatch.setattr(varlen, "varlen_attention", varlen_spy)
    return s


def _config(arch):
    # D = 32: the smallest head dim the decode kernels serve (a smaller one
    # decodes through the forward kernels, test below).
    common = dict(hidden_size=128, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2,
                  vocab_size=97, max_position_embeddings=128)
    if arch == "qwen2":
        return transformers.Qwen2Config(**common)
    return transformers.LlamaConfig(**common)


def _generate(model, ids, mask, new):
    # min_new_tokens: no row stops early at a random model's EOS.
    return model.generate(ids, attention_mask=mask, max_new_tokens=new,
                          min_new_tokens=new, do_sample=False,
                          cache_implementation="static", pad_token_id=0)


@pytest.mark.parametrize("arch", ["llama", "qwen2"])
def test_static_cache_decoding_uses_the_kvcache_path(spy, arch, hf_model_pair):
    ref, ours = hf_model_pair(_config(arch))
    # A prompt longer than KVCACHE_MAX_QUERY_ROWS goes to the forward.
    ids = torch.randint(1, 97, (3, 20))
    mask = torch.ones_like(ids)
    want = _generate(ref, ids, mask, 6)
    got = _generate(ours, ids, mask, 6)
    assert torch.equal(got, want)
    # Five decoding steps (the first new token comes from the prompt) in
    # each of two layers, over the whole static cache, the lengths those of
    # the rows written so far.
    assert len(spy.calls) == 2 * 5
    for step in range(5):
        for layer in range(2):
            q_shape, k_shape, lengths = spy.calls[2 * step + layer]
            assert q_shape == (3, 1, 4, 32)
            assert k_shape[0] == 3 and k_shape[2:] == (2, 32)
            assert k_shape[1] > 20 + step
            assert lengths.dtype == torch.int32
            assert lengths.tolist() == [21 + step] * 3


def test_mla_decoding_takes_the_forward_kernels(spy, hf_model_pair,
                                                monkeypatch):
    # DeepSeek-V3's multi-head latent attention hands the attention Q and K
    # of 192 and V of 128: the decode kernels serve D = Dv only, so its
    # steps go to flashfuse.attention (before, they went to
    # attention_with_kvcache, which has no kernel for the pair).
    cfg = transformers.DeepseekV3Config(
        hidden_size=128, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=4, vocab_size=97,
        max_position_embeddings=128, q_lora_rank=None, kv_lora_rank=32,
        qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128,
        first_k_dense_replace=2, n_routed_experts=4, num_experts_per_tok=2,
        n_group=1, topk_group=1, moe_intermediate_size=64)
    ref, ours = hf_model_pair(cfg)
    shapes = []

    def forward_spy(query, key, value, *args, **kwargs):
        shapes.append((query.shape[-1], value.shape[-1], query.shape[2]))
        return reference_attention(query, key, value, *args, **kwargs)
    monkeypatch.setattr(functional, "attention", forward_spy)
    ids = torch.randint(1, 97, (2, 20))
    mask = torch.ones_like(ids)
    assert torch.equal(_generate(ours, ids, mask, 4),
                       _generate(ref, ids, mask, 4))
    assert spy.calls == []
    assert shapes and all(s[:2] == (192, 128) for s in shapes)
    assert [s[2] for s in shapes].count(1) == 2 * 3  # three steps, two layers


def test_short_prompts_into_a_static_cache_use_the_kvcache_path(spy,
                                                                hf_model_pair):
    # A prompt of a few rows into a static cache is a step of several query
    # rows over the cache's first rows: the decode kernels serve it too.
    ref, ours = hf_model_pair(_config("llama"))
    ids = torch.randint(1, 97, (2, 5))
    mask = torch.ones_like(ids)
    assert torch.equal(_generate(ours, ids, mask, 3),
                       _generate(ref, ids, mask, 3))
    assert [c[0][1] for c in spy.calls] == [5, 5, 1, 1, 1, 1]
    assert [c[2].tolist() for c in spy.calls[::2]] == [[5, 5], [6, 6],
                                                       [7, 7]]


@pytest.mark.parametrize("cache", ["static", "dynamic"])
def test_left_padded_batches_decode_with_cache_leftpad(spy, hf_model_pair,
                                                       cache):
    # The prompt (19 rows) takes the varlen forward, the batch packed as
    # four sequences (row 1's padding, its tokens); each decoding step the
    # KV-cache path with every sequence's padding as cache_leftpad and the
    # tokens so far as its lengths.
    ref, ours = hf_model_pair(_config("llama"))
    ids = torch.randint(1, 97, (2, 19))
    mask = torch.ones_like(ids)
    mask[1, :3] = 0  # left padding
    ids[1, :3] = 0
    kwargs = dict(attention_mask=mask, max_new_tokens=4, min_new_tokens=4,
                  do_sample=False, cache_implementation=cache,
                  pad_token_id=0)
    want = ref.generate(ids, **kwargs)
    got = ours.generate(ids, **kwargs)
    assert torch.equal(got, want)
    assert spy.varlen == [[0, 0, 19, 22, 38]] * 2
    assert spy.leftpads == [[0, 3]] * (2 * 3)
    assert [c[2].tolist() for c in spy.calls[::2]] == [[20, 20], [21, 21],
                                                       [22, 22]]
    # The next unpadded batch decodes by its positions again.
    spy.calls.clear(), spy.leftpads.clear()
    _generate(ours, ids[:1], mask[:1], 3)
    assert spy.leftpads == [None] * (2 * 2)


def test_other_padding_takes_the_masked_path(spy, hf_model_pair):
    # Right padding (and holes) is not a sequence's first rows: the prompt's
    # check leaves the decoding steps their mask.
    ref, ours = hf_model_pair(_config("llama"))
    ids = torch.randint(1, 97, (2, 19))
    mask = torch.ones_like(ids)
    mask[1, -3:] = 0
    want = _generate(ref, ids, mask, 4)
    got = _generate(ours, ids, mask, 4)
    assert torch.equal(got, want)
    assert spy.calls == []


def test_leftpad_mask_and_its_fallback():
    # _left_padded_step's [1, 1, 2, B'] lengths and paddings (B' = B rounded
    # up to 4: rows 16-byte aligned in a contiguous tensor), and the boolean
    # mask a step that takes the forward rebuilds.
    from flashfuse.hf import (_is_leftpad_mask, _is_lengths_mask,
                              _left_padded_step, _mask_of_leftpad)
    from transformers.masking_utils import (causal_mask_function,
                                            sliding_window_causal_mask_function)
    cfg = type("Config", (), {"_flashfuse_left_padded": True})()
    padding = torch.ones(3, 9, dtype=torch.bool)
    padding[0, :4] = padding[2, :1] = False
    kw = dict(batch_size=3, q_length=1, kv_length=16, q_offset=8,
              kv_offset=0, mask_function=causal_mask_function,
              attention_mask=padding)
    both = _left_padded_step((), kw, cfg)
    assert _is_leftpad_mask(both) and not _is_lengths_mask(both)
    assert both.shape == (1, 1, 2, 4) and both.is_contiguous()
    lengths, pads = both[0, 0, :, :3]
    assert lengths.tolist() == [9] * 3 and pads.tolist() == [4, 0, 1]
    assert pads.data_ptr() % 16 == 0 and lengths.is_contiguous()
    want = torch.zeros(3, 1, 2, 16, dtype=torch.bool)
    for b, p in enumerate([4, 0, 1]):
        want[b, 0, 0, p:8] = want[b, 0, 1, p:9] = True
    assert torch.equal(_mask_of_leftpad(lengths, pads, 2, 16), want)
    # Not a decoding step of a full layer of a left-padded batch: None.
    for change in [dict(mask_function=sliding_window_causal_mask_function(4)),
                   dict(local_size=4), dict(kv_offset=2),
                   dict(q_length=9),  # the prompt
                   dict(q_length=17), dict(attention_mask=None)]:
        assert _left_padded_step((), {**kw, **change}, cfg) is None
    cfg._flashfuse_left_padded = False
    assert _left_padded_step((), kw, cfg) is None


def test_lengths_need_positions_and_a_short_step():
    from flashfuse.hf import _kvcache_lengths

    class Module:
        config = type("Config", (), {"_flashfuse_unpadded": True})()

    q = torch.zeros(2, 4, 1, 32)
    k = torch.zeros(2, 2, 32, 32)
    pos = torch.tensor([[7]])
    mask = torch.ones(2, 1, 1, 32, dtype=torch.bool)
    lengths = _kvcache_lengths(Module(), q, k, k, mask, None, 0.0, True,
                               {"position_ids": pos})
    assert lengths.tolist() == [8, 8] and lengths.dtype == torch.int32
    for args in [(mask, 4096, 0.0, True, {"position_ids": pos}),  # window
                 (mask, None, 0.1, True, {"position_ids": pos}),  # dropout
                 (mask, None, 0.0, False, {"position_ids": pos}),  # encoder
                 (mask, None, 0.0, True, {})]:  # no positions
        assert _kvcache_lengths(Module(), q, k, k, *args) is None
    # A step as long as the keys is a prompt, not a decoding step.
    assert _kvcache_lengths(Module(), torch.zeros(2, 4, 32, 32), k, k, None,
                            None, 0.0, True,
                            {"position_ids": torch.arange(32)[None]}) is None
    # Head dims the decode kernels do not serve (16, odd multiples of 8)
    # take the forward kernels.
    for d in (16, 40):
        kd = torch.zeros(2, 2, 32, d)
        assert _kvcache_lengths(Module(), torch.zeros(2, 4, 1, d), kd, kd,
                                mask, None, 0.0, True,
                                {"position_ids": pos}) is None
    # So do D != Dv (DeepSeek's MLA: 192 / 128; the decode kernels serve D
    # = Dv), also for a window layer's one-row step without a mask.
    q192, k192 = torch.zeros(2, 4, 1, 192), torch.zeros(2, 2, 32, 192)
    v128 = torch.zeros(2, 2, 32, 128)
    assert _kvcache_lengths(Module(), q192, k192, k192, mask, None, 0.0, True,
                            {"position_ids": pos}) is not None
    assert _kvcache_lengths(Module(), q192, k192, v128, mask, None, 0.0, True,
                            {"position_ids": pos}) is None
    assert _kvcache_lengths(Module(), q192, k192, v128, None, 64, 0.0, True,
                            {"position_ids": pos}) is None
    Module.config._flashfuse_unpadded = False
    assert _kvcache_lengths(Module(), q, k, k, mask, None, 0.0, True,
                            {"position_ids": pos}) is None


def test_dynamic_cache_decoding_uses_the_kvcache_path(spy, hf_model_pair):
    # A DynamicCache holds exactly the rows written: transformers passes no
    # mask for one unpadded query row, and the lengths are the keys'.
    ref, ours = hf_model_pair(_config("llama"))
    ids = torch.randint(1, 97, (2, 20))
    kwargs = dict(attention_mask=torch.ones_like(ids), max_new_tokens=4,
                  min_new_tokens=4, do_sample=False, pad_token_id=0)
    assert torch.equal(ours.generate(ids, **kwargs),
                       ref.generate(ids, **kwargs))
    assert len(spy.calls) == 2 * 3
    for q_shape, k_shape, lengths in spy.calls:
        assert q_shape[1] == 1 and lengths.tolist() == [k_shape[1]] * 2


def test_left_padded_prompt_with_gradients_keeps_the_mask(spy,
                                                          hf_model_pair):
    # A forward that trains (the varlen route is for inference) runs the
    # masked forward with the mask the paddings describe: SDPA's logits on
    # every token.
    # Prompts of 19 rows (the varlen route) and 9 (the decode kernels').
    ref, ours = hf_model_pair(_config("llama"))
    for rows in (19, 9):
        ids = torch.randint(1, 97, (2, rows))
        mask = torch.ones_like(ids)
        mask[1, :3] = 0
        want = ref(ids, attention_mask=mask).logits
        got = ours(ids, attention_mask=mask).logits
        assert got.requires_grad
        assert spy.varlen == [] and spy.calls == []
        torch.testing.assert_close(got[0], want[0])
        torch.testing.assert_close(got[1, 3:], want[1, 3:])
