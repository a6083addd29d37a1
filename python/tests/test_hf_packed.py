"""The Hugging Face integration's packed batches on the CPU: padding-free
training (cu_seq_lens in the model's keyword arguments) goes to
flashfuse.varlen_attention; continuous batching (generate_batch, a paged
cache) to the varlen kernels and, for decode-only steps, to
flashfuse.attention_with_kvcache over the cache's pages. The kernels are
replaced by PyTorch references of their contracts (test_hf_gpu.py runs the
kernels), so outputs must be SDPA's."""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import flashfuse.hf  # noqa: E402
from conftest import varlen_reference  # noqa: E402
from flashfuse import hf_packed, kvcache, varlen  # noqa: E402
from flashfuse.errors import (KernelNotFoundError,  # noqa: E402
                              UnsupportedError)


def paged_kvcache_reference(q, k_cache, v_cache, cache_seqlens, k_new=None,
                            v_new=None, block_table=None, *,
                            softmax_scale=None, is_causal=True,
                            window_size=(-1, -1), softcap=0.0, **kwargs):
    """attention_with_kvcache's contract over a paged cache in PyTorch: the
    new rows written at cache_seqlens[b] through the block table, then
    sequence b attends to its first cache_seqlens[b] + Snew keys,
    bottom-right causal, within the window."""
    assert block_table is not None and is_causal and not kwargs.get(
        "cache_leftpad")
    b, sq, hq, d = q.shape
    page = k_cache.shape[1]
    snew = 0 if k_new is None else k_new.shape[1]
    out = q.new_zeros(b, sq, hq, v_cache.shape[-1])
    for i in range(b):
        n = int(cache_seqlens[i])
        for t in range(snew):
            pos = n + t
            slot = int(block_table[i, pos // page])
            k_cache[slot, pos % page] = k_new[i, t]
            v_cache[slot, pos % page] = v_new[i, t]
        length = n + snew
        rows = [int(block_table[i, j // page]) * page + j % page
                for j in range(length)]
        keys = k_cache.reshape(-1, *k_cache.shape[2:])[rows]
        values = v_cache.reshape(-1, *v_cache.shape[2:])[rows]
        packed = varlen_reference(
            q[i], keys, values, torch.tensor([0, sq]),
            torch.tensor([0, length]), sq, length, is_causal="bottom_right",
            scale=softmax_scale, window=window_size, softcap=softcap)
        out[i] = packed
    return out


class Calls:
    """Counts the calls of each kernel entry point, running its reference."""

    def __init__(self):
        self.varlen = 0
        self.paged = []

    def run_varlen(self, *args, **kwargs):
        self.varlen += 1
        return varlen_reference(*args, **kwargs)

    def run_paged(self, q, k_cache, v_cache, *args, **kwargs):
        self.paged.append((tuple(q.shape), tuple(k_cache.shape)))
        return paged_kvcache_reference(q, k_cache, v_cache, *args, **kwargs)


@pytest.fixture
def calls(monkeypatch):
    c = Calls()
    monkeypatch.setattr(varlen, "varlen_attention", c.run_varlen)
    monkeypatch.setattr(kvcache, "attention_with_kvcache", c.run_paged)
    return c


def _llama():
    return transformers.LlamaConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, vocab_size=101,
        max_position_embeddings=256)


def _packed(lengths, vocab, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = [torch.randint(0, vocab, (n,), generator=g) for n in lengths]
    cu = torch.tensor([0] + list(lengths)).cumsum(0).to(torch.int32)
    positions = torch.cat([torch.arange(n) for n in lengths])
    return ids, cu, positions


def _assert_as_alone(logits, ours, ref, ids):
    """The packed row's logits, and every parameter's gradient of their
    squares' mean, are those of the sequences run one by one through
    `ref`."""
    expected = torch.cat([ref(x[None]).logits[0] for x in ids])
    torch.testing.assert_close(logits, expected, atol=1e-4, rtol=1e-4)
    logits.square().mean().backward()
    expected.square().mean().backward()
    for (name, p), q in zip(ours.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, atol=1e-4, rtol=1e-3,
                                   msg=name)


def test_padding_free_training_takes_varlen(calls, hf_model_pair):
    """DataCollatorWithFlattening's batch (one row of packed sequences with
    cu_seq_lens): each sequence's logits and the gradients are those of the
    sequences run one by one through SDPA."""
    ref, ours = hf_model_pair(_llama())
    lengths = (5, 9, 1, 12)
    ids, cu, positions = _packed(lengths, 101)
    ours.train()
    logits = ours(
        torch.cat(ids)[None], position_ids=positions[None],
        cu_seq_lens_q=cu, cu_seq_lens_k=cu, max_length_q=max(lengths),
        max_length_k=max(lengths)).logits[0]
    assert calls.varlen == 2  # one call a layer, no dense forward
    _assert_as_alone(logits, ours, ref, ids)


def test_packed_bounds_from_offsets(calls):
    """Bounds transformers leaves out (or gives as tensors) are read from
    the offsets; a batch of more than one row is refused."""
    q = torch.randn(1, 4, 7, 16)
    k = torch.randn(1, 2, 7, 16)
    cu = torch.tensor([0, 3, 7], dtype=torch.int32)
    module = torch.nn.Module()
    out = hf_packed.packed_forward(
        module, q, k, k, None, None, None, True, 0.0,
        {"cu_seq_lens_q": cu, "cu_seq_lens_k": cu,
         "max_length_q": torch.tensor(4)})
    assert out.shape == (1, 7, 4, 16) and calls.varlen == 1
    with pytest.raises(ValueError, match="one row of tokens"):
        hf_packed.packed_forward(
            module, q.expand(2, -1, -1, -1), k, k, None, None, None, True,
            0.0, {"cu_seq_lens_q": cu, "cu_seq_lens_k": cu})
    assert hf_packed.packed_forward(module, q, k, k, None, None, None, True,
                                    0.0, {}) is None


def test_packed_training_step_passes_its_dropout(calls, monkeypatch):
    """Padding-free training with attention dropout reaches the varlen
    kernels with the module's p; a paged cache's decode has no dropout."""
    q = torch.randn(1, 4, 7, 16)
    k = torch.randn(1, 2, 7, 16)
    cu = torch.tensor([0, 3, 7], dtype=torch.int32)
    seen = []

    def spy(*args, **kwargs):
        seen.append(kwargs.get("dropout_p"))
        return calls.run_varlen(*args, **kwargs)

    monkeypatch.setattr(varlen, "varlen_attention", spy)
    hf_packed.packed_forward(torch.nn.Module(), q, k, k, None, None, None,
                             True, 0.1,
                             {"cu_seq_lens_q": cu, "cu_seq_lens_k": cu})
    assert seen == [0.1]
    with pytest.raises(NotImplementedError, match="dropout"):
        hf_packed.packed_forward(
            torch.nn.Module(), q, k, k, None, None, None, True, 0.1,
            {"cu_seq_lens_q": cu, "cu_seq_lens_k": cu,
             "block_table": torch.zeros(2, 1, dtype=torch.int32)})


@pytest.mark.parametrize("page,expected", [(16, 16), (32, 16), (48, 16),
                                           (64, 64), (128, 64), (24, 24)])
def test_cache_pages_spread_to_library_sizes(page, expected):
    """A cache of P-row pages is read as pages of 64 or 16 rows where P is
    a multiple of one; entry p of the table becomes p * r .. p * r + r - 1,
    and an unallocated -1 stays out of range."""
    k = torch.arange(10 * page * 2 * 4, dtype=torch.float32).view(
        10, page, 2, 4)
    table = torch.tensor([[3, 7, -1], [9, 0, 2]], dtype=torch.int32)
    kp, vp, t = hf_packed.paged_cache_pages(k, k, table)
    assert kp.shape[1] == expected and t.dtype == torch.int32
    flat = k.view(-1, 2, 4)
    for b in range(2):
        for j in range(2 * page):
            if table[b, j // page] < 0:
                assert t[b, j // expected] < 0
                continue
            got = kp[t[b, j // expected], j % expected]
            torch.testing.assert_close(
                got, flat[int(table[b, j // page]) * page + j % page])


@pytest.mark.parametrize("page", [32, 64])
def test_decode_step_writes_and_attends(calls, page):
    """A decode-only step: the new row lands at each sequence's length
    through the table, and the output is attention over the sequence's
    keys (with the new one), whatever the page order."""
    torch.manual_seed(0)
    hq, hkv, d, pages = 4, 2, 16, 12
    lengths = [1, page + 3, 2 * page]  # keys with this step's row
    table = torch.tensor([[5, -1, -1], [2, 9, -1], [11, 0, 7]],
                         dtype=torch.int32)
    k_cache = torch.randn(pages, page, hkv, d)
    v_cache = torch.randn(pages, page, hkv, d)
    k_before, v_before = k_cache.clone(), v_cache.clone()
    q = torch.randn(1, hq, 3, d)
    k_new = torch.randn(1, hkv, 3, d)
    v_new = torch.randn(1, hkv, 3, d)
    cu = torch.tensor([0] + lengths).cumsum(0).to(torch.int32)
    out = hf_packed.decode_step(q, k_new, v_new, cu, table, k_cache,
                                v_cache, 0.25, None, None)
    assert out.shape == (1, 3, hq, d) and len(calls.paged) == 1
    for b, n in enumerate(lengths):
        rows = [(int(table[b, j // page]), j % page) for j in range(n)]
        keys = torch.stack([k_before[p, r] for p, r in rows[:-1]]
                           + [k_new[0, :, b]])
        values = torch.stack([v_before[p, r] for p, r in rows[:-1]]
                             + [v_new[0, :, b]])
        p, r = rows[-1]
        torch.testing.assert_close(k_cache[p, r], k_new[0, :, b])
        torch.testing.assert_close(v_cache[p, r], v_new[0, :, b])
        s = torch.einsum("hd,khd->hk", q[0, :, b],
                         keys.repeat_interleave(2, 1)) * 0.25
        want = torch.einsum("hk,khd->hd", s.softmax(-1),
                            values.repeat_interleave(2, 1))
        torch.testing.assert_close(out[0, b], want, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="one query row per sequence"):
        hf_packed.decode_step(q[:, :, :2], k_new, v_new, cu, table, k_cache,
                              v_cache, 0.25, None, None)


def test_attention_sinks_refused():
    """gpt-oss's sinks (s_aux) are refused by name, not ignored."""
    q = torch.randn(1, 4, 3, 16)
    with pytest.raises(UnsupportedError, match="s_aux"):
        flashfuse.hf.attention_forward(
            torch.nn.Module(), q, q, q, None, s_aux=torch.zeros(4))


def _request_order(result):
    """transformers names requests req_0, req_1, ... in the order given."""
    return int(result.request_id.rsplit("_", 1)[-1])


def cb_config():
    """A small paged cache (pages of 32 rows, as transformers' decode path
    would read as two pages of 16): transformers sizes it from the free
    memory otherwise, gigabytes on a large machine."""
    return transformers.ContinuousBatchingConfig(
        block_size=32, num_blocks=64, max_batch_tokens=256)


def _continuous_batching(model, prompts, tokens):
    config = transformers.GenerationConfig(
        max_new_tokens=tokens, do_sample=False, eos_token_id=-1,
        pad_token_id=0)
    if not hasattr(model, "generate_batch"):
        pytest.skip("this transformers has no continuous batching")
    try:
        out = model.generate_batch(inputs=prompts, generation_config=config,
                                   continuous_batching_config=cb_config())
    except ValueError as e:
        # transformers >= 5.2x takes only its own implementations and hub
        # flash kernels for continuous batching (5.17 takes registered
        # ones too: the GPU run covers it).
        if "not supported for continuous batching" not in str(e):
            raise
        pytest.skip(f"this transformers' continuous batching: {e}")
    return sorted(out.values(), key=_request_order)


def _assert_batching_as_sdpa(hf_model_pair):
    """generate_batch over three prompts of different lengths gives SDPA's
    greedy tokens."""
    ref, ours = hf_model_pair(_llama())
    ids, _, _ = _packed((7, 3, 12), 101, seed=1)
    prompts = [x.tolist() for x in ids]
    want = _continuous_batching(ref, prompts, 6)
    got = _continuous_batching(ours, prompts, 6)
    assert [r.generated_tokens for r in got] == \
        [r.generated_tokens for r in want]


def test_continuous_batching_matches_sdpa(calls, hf_model_pair):
    """generate_batch over prompts of different lengths: the same greedy
    tokens as SDPA's continuous batching, with the prompts and chunks on
    the varlen kernels and the decode-only steps on the paged decode
    kernels."""
    _assert_batching_as_sdpa(hf_model_pair)
    # Prompts on the varlen kernels; decode-only steps read the paged cache
    # in place (pages of 32 rows read as pages of 16).
    assert calls.varlen > 0 and calls.paged
    assert all(cache[1] == 16 for _, cache in calls.paged)


def test_position_ids_alone_take_varlen(calls, hf_model_pair):
    """DataCollatorWithFlattening's default batch (position_ids restarting
    at each sequence, no offsets): transformers' mask is found causal
    within each sequence and replaced by their offsets, so the varlen
    kernels run; logits and gradients are each sequence's alone."""
    ref, ours = hf_model_pair(_llama())
    lengths = (6, 1, 11, 4)
    ids, _, positions = _packed(lengths, 101, seed=3)
    ours.train()
    # (transformers builds the packed sequences' mask only without a
    # cache: use_cache=False, as training sets it.)
    logits = ours(torch.cat(ids)[None], position_ids=positions[None],
                  use_cache=False).logits[0]
    assert calls.varlen == 2
    _assert_as_alone(logits, ours, ref, ids)


def test_packed_documents_only_for_their_exact_mask(monkeypatch):
    """packed_documents gives the offsets of a mask causal within runs
    (and document_mask gives that mask back), and None for one run, a
    window that cuts a run, a span that sees ahead, or a padded row."""
    monkeypatch.setattr(hf_packed, "_ROWS_AT_A_TIME", 3)  # several blocks
    offsets = torch.tensor([0, 2, 7, 8], dtype=torch.int32)
    mask = hf_packed.document_mask(offsets, 8)
    marker = hf_packed.packed_documents(mask)
    assert marker.flashfuse_max_length == 5
    got, longest = hf_packed.documents_offsets(marker)
    assert got.tolist() == [0, 2, 7, 8] and longest == 5
    one = torch.ones(8, 8, dtype=torch.bool).tril().view(1, 1, 8, 8)
    assert hf_packed.packed_documents(one) is None
    window = mask.clone()
    window[0, 0, 6, 2] = False  # the third run's last row sees 4 keys back
    assert hf_packed.packed_documents(window) is None
    ahead = mask.clone()
    ahead[0, 0, 3, 4] = True
    assert hf_packed.packed_documents(ahead) is None
    assert hf_packed.packed_documents(mask.expand(2, 1, 8, 8)) is None
    assert hf_packed.documents_offsets(mask) is None


def test_position_ids_alone_on_sliding_layers(calls, hf_model_pair):
    """A sliding-window model whose packed sequences are all within its
    window: the mask is causal within each, so the varlen kernels run
    without a window (which would cut none of them)."""
    seen = []

    def spy(*args, window=None, **kwargs):
        seen.append(window)
        return calls.run_varlen(*args, window=window, **kwargs)
    varlen.varlen_attention = spy  # restored by the calls fixture
    cfg = transformers.MistralConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, vocab_size=101,
        max_position_embeddings=256, sliding_window=8)
    ref, ours = hf_model_pair(cfg)
    ids, _, positions = _packed((6, 1, 8, 4), 101, seed=4)
    ours.train()
    logits = ours(torch.cat(ids)[None], position_ids=positions[None],
                  use_cache=False).logits[0]
    assert calls.varlen == 2 and seen == [(-1, -1)] * 2  # unbounded
    _assert_as_alone(logits, ours, ref, ids)


def test_continuous_batching_without_decode_kernels(calls, hf_model_pair,
                                                    monkeypatch):
    """Where no decode kernel serves the head dim, the decode-only steps
    take transformers' gathered keys and the varlen kernels: SDPA's
    tokens still."""
    def no_kernel(*args, **kwargs):
        calls.paged.append(None)
        raise KernelNotFoundError("no decode kernel (test)")
    monkeypatch.setattr(kvcache, "attention_with_kvcache", no_kernel)
    _assert_batching_as_sdpa(hf_model_pair)
    assert calls.paged  # tried, refused, then gathered
