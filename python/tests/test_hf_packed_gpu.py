"""transformers' packed batches on the GPU kernels (flashfuse.hf and
hf_packed): padding-free training (DataCollatorWithFlattening's
cu_seq_lens) on the varlen forward and backward, logits and gradients under
FlashAttention's rule against each sequence run alone in f32 eager; and
continuous batching (generate_batch) choosing greedy tokens within a bf16
model's error of the f32 reference."""


import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import flashfuse.hf  # noqa: E402
from conftest import hf_model  # noqa: E402
from flashfuse import varlen  # noqa: E402

pytestmark = pytest.mark.gpu


def _config(head_dim):
    return transformers.LlamaConfig(
        hidden_size=4 * head_dim, intermediate_size=512, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, vocab_size=1000,
        max_position_embeddings=1024)


def _run_alone(model, ids):
    """Each sequence through `model` alone: logits concatenated, and the
    loss of their squares' mean backpropagated."""
    logits = torch.cat([model(x[None]).logits[0] for x in ids]).float()
    logits.square().mean().backward()
    return logits


@pytest.mark.parametrize("offsets", [True, False],
                         ids=["cu_seq_lens", "position_ids"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_padding_free_training_matches_eager(head_dim, offsets, monkeypatch):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    calls = []
    real = varlen.varlen_attention

    def counted(*args, **kwargs):
        calls.append(args[0].shape)
        return real(*args, **kwargs)
    monkeypatch.setattr(varlen, "varlen_attention", counted)
    impl = flashfuse.hf.register()
    cfg = _config(head_dim)
    torch.manual_seed(0)
    eager32 = hf_model(cfg, "eager", torch.float32)
    state = eager32.state_dict()
    eager16 = hf_model(cfg, "eager", torch.bfloat16, state)
    ours = hf_model(cfg, impl, torch.bfloat16, state)
    lengths = [37, 200, 1, 129, 64]
    ids = [torch.randint(0, cfg.vocab_size, (n,), device="cuda")
           for n in lengths]
    cu = torch.tensor([0] + lengths, device="cuda").cumsum(0).to(torch.int32)
    positions = torch.cat([torch.arange(n, device="cuda") for n in lengths])
    # Offsets as DataCollatorWithFlattening(return_flash_attn_kwargs=True)
    # gives them, or position_ids alone (its default; transformers builds
    # their mask without a cache only).
    extra = (dict(cu_seq_lens_q=cu, cu_seq_lens_k=cu.clone(),
                  max_length_q=max(lengths), max_length_k=max(lengths))
             if offsets else {})
    got = ours(torch.cat(ids)[None], position_ids=positions[None],
               use_cache=False, **extra).logits[0].float()
    got.square().mean().backward()
    assert len(calls) == cfg.num_hidden_layers  # the varlen kernels, alone
    ref = _run_alone(eager32, ids)
    low = _run_alone(eager16, ids)
    err = (got - ref).abs().max().item()
    err_low = (low - ref).abs().max().item()
    assert torch.isfinite(got).all() and err <= 2 * err_low + 1e-3, \
        (err, err_low)
    for (name, p), p32, p16 in zip(ours.named_parameters(),
                                   eager32.parameters(),
                                   eager16.parameters()):
        e = (p.grad.float() - p32.grad).abs().max().item()
        e16 = (p16.grad.float() - p32.grad).abs().max().item()
        assert e <= 2 * e16 + 1e-4, (name, e, e16)


def _request_order(result):
    """transformers names requests req_0, req_1, ... in the order given."""
    return int(result.request_id.rsplit("_", 1)[-1])


def _regret(model32, model16, prompt, tokens):
    """Teacher-forced over prompt + tokens: (the largest gap between the
    f32 model's best logit and that of the token chosen, over the generated
    positions; the bf16 model's largest logit error there)."""
    ids = torch.tensor([prompt + tokens], device="cuda")
    rows = slice(len(prompt) - 1, ids.shape[1] - 1)
    with torch.no_grad():
        ref = model32(ids).logits[0, rows].float()
        low = model16(ids).logits[0, rows].float()
    chosen = ref.gather(1, ids[0, len(prompt):, None])[:, 0]
    return ((ref.max(1).values - chosen).max().item(),
            (low - ref).abs().max().item())


def test_continuous_batching_tokens_are_greedy():
    """generate_batch on FlashFuse (prompts and chunks on the varlen
    kernels): every token is the greedy choice within the error a bf16
    model has, teacher-forced against the f32 eager model (a random model's
    logits are too close for token-for-token equality with another
    implementation: SDPA's continuous batching and its own generate()
    part within a few tokens)."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    impl = flashfuse.hf.register()
    cfg = _config(64)
    torch.manual_seed(0)
    eager32 = hf_model(cfg, "eager", torch.float32).eval()
    state = eager32.state_dict()
    eager16 = hf_model(cfg, "eager", torch.bfloat16, state).eval()
    ours = hf_model(cfg, impl, torch.bfloat16, state).eval()
    if not hasattr(ours, "generate_batch"):
        pytest.skip("this transformers has no continuous batching")
    prompts = [torch.randint(0, cfg.vocab_size, (n,)).tolist()
               for n in (5, 130, 17, 300, 64, 1)]
    config = transformers.GenerationConfig(
        max_new_tokens=24, do_sample=False, eos_token_id=-1, pad_token_id=0)
    try:
        out = ours.generate_batch(
            inputs=prompts, generation_config=config,
            continuous_batching_config=transformers.ContinuousBatchingConfig(
                block_size=32, num_blocks=256, max_batch_tokens=512))
    except ValueError as e:
        if "not supported for continuous batching" not in str(e):
            raise
        pytest.skip(f"this transformers' continuous batching: {e}")
    results = sorted(out.values(), key=_request_order)
    assert len(results) == len(prompts)
    for prompt, r in zip(prompts, results):
        assert len(r.generated_tokens) == 24
        regret, err16 = _regret(eager32, eager16, prompt, r.generated_tokens)
        assert regret <= 4 * err16 + 1e-3, (len(prompt), regret, err16)
