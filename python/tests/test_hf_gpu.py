"""Hugging Face transformers with attn_implementation="flashfuse" (or the
name flashfuse.hf.register() returns, where transformers reserves names
containing "flash"): small
random-weight Llama (GQA) and GPT-2 models give the logits of the eager
implementation, under FlashAttention's rule against an f32 eager run:
max|ours - f32| <= 2 * max|eager_bf16 - f32| + atol."""

import copy

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import flashfuse.hf  # noqa: E402

pytestmark = pytest.mark.gpu


def _config(arch):
    if arch == "llama":  # GQA: 4 query heads over 2 KV heads, D = 64
        return transformers.LlamaConfig(
            hidden_size=256, intermediate_size=512, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, vocab_size=1000,
            max_position_embeddings=512)
    return transformers.GPT2Config(n_embd=256, n_layer=2, n_head=4,
                                   vocab_size=1000, n_positions=512)


def _model(cfg, impl, dtype, state=None):
    # A private config each: transformers records the implementation in the
    # config, which models built from one object would otherwise share.
    m = transformers.AutoModelForCausalLM.from_config(
        copy.deepcopy(cfg), attn_implementation=impl)
    if state is not None:
        m.load_state_dict(state)
    return m.to("cuda", dtype).eval()


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_logits_match_eager(arch):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    impl = flashfuse.hf.register()
    cfg = _config(arch)
    eager32 = _model(cfg, "eager", torch.float32)
    state = eager32.state_dict()
    eager16 = _model(cfg, "eager", torch.bfloat16, state)
    ours = _model(cfg, impl, torch.bfloat16, state)
    ids = torch.randint(0, cfg.vocab_size, (2, 200), device="cuda")
    with torch.no_grad():
        ref = eager32(ids).logits.float()
        low = eager16(ids).logits.float()
        got = ours(ids).logits.float()
    assert torch.isfinite(got).all()
    err, err_low = (got - ref).abs().max().item(), (low - ref).abs().max().item()
    assert err <= 2 * err_low + 1e-3, (err, err_low)
