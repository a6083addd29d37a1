"""Hugging Face transformers with attn_implementation="flashfuse" (or the
name flashfuse.hf.register() returns, where transformers reserves names
containing "flash"): small
random-weight Llama (GQA) and GPT-2 models give the logits of the eager
implementation, under FlashAttention's rule against an f32 eager run:
max|ours - f32| <= 2 * max|eager_bf16 - f32| + atol."""


import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import flashfuse.hf  # noqa: E402
from conftest import hf_model  # noqa: E402

pytestmark = pytest.mark.gpu


def _config(arch):
    if arch == "llama":  # GQA: 4 query heads over 2 KV heads, D = 64
        return transformers.LlamaConfig(
            hidden_size=256, intermediate_size=512, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, vocab_size=1000,
            max_position_embeddings=512)
    return transformers.GPT2Config(n_embd=256, n_layer=2, n_head=4,
                                   vocab_size=1000, n_positions=512)


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_logits_match_eager(arch):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    impl = flashfuse.hf.register()
    cfg = _config(arch)
    eager32 = hf_model(cfg, "eager", torch.float32).eval()
    state = eager32.state_dict()
    eager16 = hf_model(cfg, "eager", torch.bfloat16, state).eval()
    ours = hf_model(cfg, impl, torch.bfloat16, state).eval()
    ids = torch.randint(0, cfg.vocab_size, (2, 200), device="cuda")
    with torch.no_grad():
        ref = eager32(ids).logits.float()
        low = eager16(ids).logits.float()
        got = ours(ids).logits.float()
    assert torch.isfinite(got).all()
    err, err_low = (got - ref).abs().max().item(), (low - ref).abs().max().item()
    assert err <= 2 * err_low + 1e-3, (err, err_low)


def _generation_config(arch):
    common = dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                  num_attention_heads=8, num_key_value_heads=2,
                  vocab_size=1000, max_position_embeddings=512)
    if arch == "qwen2":
        return transformers.Qwen2Config(**common)
    return transformers.LlamaConfig(**common)


def _first_difference(got, want, scores, prompt):
    """None when the sequences agree; else (row, step, SDPA's gap between
    its two best logits at that step): a greedy tie broken the other way by
    rounding is not an error, any other difference is."""
    diff = (got != want).nonzero()
    if not len(diff):
        return None
    row, col = (int(x) for x in diff[0])
    step = col - prompt
    top = scores[step][row].float().topk(2).values
    return row, step, float(top[0] - top[1])


def _assert_greedy_matches(got, want, prompt):
    """`got` is the reference generate()'s sequences (`want`, with its
    scores) but for greedy ties its rounding broke the other way."""
    first = _first_difference(got, want.sequences, want.scores, prompt)
    assert first is None or first[2] < 1e-2, (
        f"tokens differ at row {first[0]}, step {first[1]}, where the "
        f"reference's best logit led by {first[2]:.3g}")


@pytest.mark.parametrize("prompt", [24, 6], ids=["prompt24", "prompt6"])
@pytest.mark.parametrize("arch", ["llama", "qwen2"])
def test_static_cache_generation_matches_sdpa(arch, prompt, monkeypatch):
    """Greedy generate() with a StaticCache: the decoding steps run the
    decode kernels over the cache in place (prompts of up to 16 rows too),
    and give SDPA's tokens."""
    from flashfuse import kvcache
    impl = flashfuse.hf.register()
    calls = []
    real = kvcache.attention_with_kvcache

    def counted(*args, **kwargs):
        calls.append(args[0].shape)
        return real(*args, **kwargs)

    monkeypatch.setattr(kvcache, "attention_with_kvcache", counted)
    cfg = _generation_config(arch)
    ref = hf_model(cfg, "sdpa", torch.float16).eval()
    ours = hf_model(cfg, impl, torch.float16, ref.state_dict()).eval()
    ids = torch.randint(1, cfg.vocab_size, (3, prompt), device="cuda")
    # min_new_tokens: no row stops early at a random model's EOS.
    kwargs = dict(attention_mask=torch.ones_like(ids), max_new_tokens=12,
                  min_new_tokens=12, do_sample=False,
                  cache_implementation="static", pad_token_id=0)
    with torch.no_grad():
        want = ref.generate(ids, output_scores=True,
                            return_dict_in_generate=True, **kwargs)
        got = ours.generate(ids, **kwargs)
    decoding_steps = 11 + (prompt <= flashfuse.hf.KVCACHE_MAX_QUERY_ROWS)
    assert len(calls) == cfg.num_hidden_layers * decoding_steps
    _assert_greedy_matches(got, want, prompt)


def _sliding_config(arch, window):
    common = dict(hidden_size=512, intermediate_size=512, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2,
                  vocab_size=1000, max_position_embeddings=512,
                  sliding_window=window)
    if arch == "gemma2":  # D = 256, the logit softcap, layers in turn
        return transformers.Gemma2Config(
            head_dim=256, attn_logit_softcapping=50.0,
            final_logit_softcapping=None, **common)
    if arch == "gemma3":  # D = 256, no softcap, a sliding and a full layer
        return transformers.Gemma3TextConfig(
            head_dim=256, layer_types=["sliding_attention", "full_attention"],
            **common)
    return transformers.MistralConfig(head_dim=128, **common)  # D = 128


@pytest.mark.parametrize("cache", ["static", "static-eager", "dynamic"])
@pytest.mark.parametrize("arch", ["mistral", "gemma2", "gemma3"])
def test_sliding_window_generation_matches(arch, cache, monkeypatch):
    """Greedy generate() past the sliding window (a prompt of 20, window
    24, 14 new tokens): with a StaticCache every decoding step of every
    layer runs the decode kernels (the sliding layers' over their buffer
    of a window, before and after it fills), with the dynamic cache too;
    the prompts run maskless (the window kernels: Mistral's D = 128,
    Gemma-2's D = 256 with its softcap, Gemma-3's D = 256); the tokens are
    those of transformers' own attention (SDPA; eager for Gemma-2, which
    has no SDPA path). "static" as generate() runs it by default on CUDA (the
    decoding steps compiled), "static-eager" with compilation off."""
    from flashfuse import kvcache
    impl = flashfuse.hf.register()
    calls = []
    real = kvcache.attention_with_kvcache

    def counted(*args, **kwargs):
        calls.append((args[0].shape[1], args[1].shape[1]))
        return real(*args, **kwargs)

    monkeypatch.setattr(kvcache, "attention_with_kvcache", counted)
    cfg = _sliding_config(arch, 24)
    ref = hf_model(cfg, "eager" if arch == "gemma2" else "sdpa",
                   torch.bfloat16).eval()
    ours = hf_model(cfg, impl, torch.bfloat16, ref.state_dict()).eval()
    ids = torch.randint(1, cfg.vocab_size, (2, 20), device="cuda")
    kwargs = dict(attention_mask=torch.ones_like(ids), max_new_tokens=14,
                  min_new_tokens=14, do_sample=False, pad_token_id=0,
                  cache_implementation=cache.split("-")[0],
                  disable_compile=cache == "static-eager")
    with torch.no_grad():
        want = ref.generate(ids, output_scores=True,
                            return_dict_in_generate=True, **kwargs)
        got = ours.generate(ids, **kwargs)
    assert [q for q, _ in calls] == [1] * (cfg.num_hidden_layers * 13)
    if cache != "dynamic" and arch == "mistral":  # every layer sliding
        assert {rows for _, rows in calls} == {24}
    _assert_greedy_matches(got, want, 20)


@pytest.mark.parametrize("cache", ["dynamic", "static-eager", "static"])
@pytest.mark.parametrize("arch, head_dim", [("llama", 64), ("llama", 128),
                                            ("gemma2", 128), ("gemma2", 256)])
def test_padded_batch_generation_matches_sdpa(arch, head_dim, cache,
                                              monkeypatch):
    """Greedy generate() of a left-padded batch (prompts of 20 and 13
    tokens): the prompt runs the library's masked forwards (bf16; Llama D =
    64 and 128, Gemma-2 D = 128 and 256 with its softcap and a window of
    16); every decoding step runs the decode kernels with each sequence's
    padding as cache_leftpad (also in the steps generate() compiles over a
    StaticCache, whose masks it builds outside them; a sliding layer's
    padding shifted by its buffer's first position); the tokens are
    transformers' own (SDPA; eager for Gemma-2) under the tie rule."""
    from flashfuse import kvcache
    impl = flashfuse.hf.register()
    calls = []
    real = kvcache.attention_with_kvcache

    def counted(*args, **kwargs):
        pad = kwargs.get("cache_leftpad")
        # Traced (a compiled step) once per compile: no values to read.
        calls.append(None if pad is None else "traced"
                     if torch.compiler.is_compiling() else pad.tolist())
        return real(*args, **kwargs)

    monkeypatch.setattr(kvcache, "attention_with_kvcache", counted)
    common = dict(hidden_size=4 * head_dim, intermediate_size=512,
                  num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=head_dim, vocab_size=1000,
                  max_position_embeddings=512)
    cfg = (transformers.Gemma2Config(
        sliding_window=16, attn_logit_softcapping=50.0,
        final_logit_softcapping=None, **common) if arch == "gemma2"
        else transformers.LlamaConfig(**common))
    ref = hf_model(cfg, "eager" if arch == "gemma2" else "sdpa",
                   torch.bfloat16).eval()
    ours = hf_model(cfg, impl, torch.bfloat16, ref.state_dict()).eval()
    ids = torch.randint(1, cfg.vocab_size, (2, 20), device="cuda")
    mask = torch.ones_like(ids)
    ids[1, :7], mask[1, :7] = 0, 0
    kwargs = dict(attention_mask=mask, max_new_tokens=12, min_new_tokens=12,
                  do_sample=False, pad_token_id=0,
                  cache_implementation=cache.split("-")[0],
                  disable_compile=cache != "static")
    with torch.no_grad():
        want = ref.generate(ids, output_scores=True,
                            return_dict_in_generate=True, **kwargs)
        got = ours.generate(ids, **kwargs)
    if cache == "static":  # compiled steps replay without Python
        assert calls and all(c == "traced" or c[1] - c[0] == 7
                             for c in calls)
    elif arch == "gemma2":
        # Layer 0 slides: its buffer holds positions p - 15 on at step p.
        assert calls == [pads for p in range(20, 31)
                         for pads in ([15 - p, 22 - p], [0, 7])]
    else:
        assert calls == [[0, 7]] * (cfg.num_hidden_layers * 11)
    _assert_greedy_matches(got, want, 20)
