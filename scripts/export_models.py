#!/usr/bin/env python3
"""Regenerates the model fixtures in test/models/ (CI does not run this).

Each model is a small Hugging Face `transformers` configuration with random
weights, exported through `torch_mlir.fx.export_and_import` to
linalg-on-tensors (and a few to TOSA).  Weights are elided when printing
(`dense_resource<__elided__>`), so the fixtures stay small while keeping the
exact op structure torch-mlir emits; flash-raise-attention never looks at
weight values.

torch-mlir's wheels are built on a newer MLIR than the one FlashFuse uses, so
the text is printed in generic form where needed and `mend()` rewrites what
MLIR 22 does not parse.

Setup (outside the repository):
    python3 -m venv /tmp/venv-models
    /tmp/venv-models/bin/pip install torch torch-mlir transformers
    /tmp/venv-models/bin/python scripts/export_models.py [names...]
"""
import os
import re
import sys

import torch
import transformers as tf
from torch_mlir import fx

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "models")
SEQ = 16
torch.manual_seed(0)


class Wrap(torch.nn.Module):
    """Returns one tensor so that the exported function has one result."""

    def __init__(self, model, field="last_hidden_state", **extra):
        super().__init__()
        self.model, self.field, self.extra = model, field, extra

    def forward(self, x):
        out = self.model(x, **self.extra)
        return getattr(out, self.field)


class Decode(torch.nn.Module):
    """One decode step over a Hugging Face StaticCache: `ids` [B, 1] new
    tokens at position `pos` [1] (the rows already in the cache), the caches
    of each layer as arguments (k0, v0, k1, v1, ...: [B, Hkv, Smax, D]).

    A real decoder keeps the cache as state that the step mutates in place;
    an exported function takes it as arguments instead, so the cache is
    built here from them (a clone, which the model then updates with
    index_copy_ at `pos`, as in generation) and its length set to `pos`.
    The model builds its own mask from the cache (keys j <= pos) and
    attends over the whole [B, Hkv, Smax, D] cache; that is the IR that
    flash-raise-attention must recognise as flash.attention_kvcache."""

    def __init__(self, model, max_cache_len):
        super().__init__()
        self.model, self.max_cache_len = model, max_cache_len

    def forward(self, ids, pos, *caches):
        return self.step(ids, pos, None, caches)

    def step(self, ids, pos, attention_mask, caches):
        cfg = self.model.config
        cache = tf.StaticCache(config=cfg, max_cache_len=self.max_cache_len)
        cache.early_initialization(
            ids.shape[0], cfg.num_key_value_heads,
            cfg.hidden_size // cfg.num_attention_heads, torch.float32,
            ids.device)
        for i, layer in enumerate(cache.layers):
            layer.keys = caches[2 * i].clone()
            layer.values = caches[2 * i + 1].clone()
            layer.cumulative_length = pos.clone()
        return self.model(ids, attention_mask=attention_mask, cache=cache,
                          use_cache=True).last_hidden_state


class DecodePadded(Decode):
    """Decode with a padding mask [B, Smax] (left-padded prompts): the
    model's mask is then the length mask AND data, which no per-sequence
    length expresses."""

    def forward(self, ids, pos, attention_mask, *caches):
        return self.step(ids, pos, attention_mask, caches)


def decode_step(model, batch=2, max_cache_len=64, pos=5):
    """A Decode module and its example inputs: `batch` sequences, one new
    token each, `pos` rows already cached."""
    cfg = model.config
    d = cfg.hidden_size // cfg.num_attention_heads
    caches = [torch.randn(batch, cfg.num_key_value_heads, max_cache_len, d)
              for _ in range(2 * cfg.num_hidden_layers)]
    return (Decode(model, max_cache_len),
            (torch.randint(0, 64, (batch, 1)), torch.tensor([pos]), *caches))


def decode_step_padded(model, batch=2, max_cache_len=64, pos=5):
    """decode_step with a padding mask: sequence 1 starts 2 rows late."""
    module, (ids, position, *caches) = decode_step(model, batch,
                                                   max_cache_len, pos)
    mask = torch.ones(batch, max_cache_len, dtype=torch.int64)
    mask[1, :2] = 0
    return (DecodePadded(model, max_cache_len),
            (ids, position, mask, *caches))


def ids(vocab=100):
    return torch.randint(0, vocab, (1, SEQ))


def models():
    """name -> (module, example inputs, output types); tiny configs."""
    common = dict(vocab_size=100, hidden_size=64, intermediate_size=128,
                  num_attention_heads=4, num_hidden_layers=2)
    m = {}
    m["gpt2"] = lambda: (Wrap(tf.GPT2Model(tf.GPT2Config(
        vocab_size=100, n_embd=64, n_head=4, n_layer=2, n_positions=64))),
        (ids(),), ["linalg-on-tensors", "tosa"])
    m["gpt2_24l"] = lambda: (Wrap(tf.GPT2Model(tf.GPT2Config(
        vocab_size=100, n_embd=64, n_head=4, n_layer=24, n_positions=64))),
        (ids(),), ["linalg-on-tensors"])
    m["bert"] = lambda: (Wrap(tf.BertModel(tf.BertConfig(
        max_position_embeddings=64, **common), add_pooling_layer=False)),
        (ids(),), ["linalg-on-tensors", "tosa"])
    m["llama"] = lambda: (Wrap(tf.LlamaModel(tf.LlamaConfig(
        num_key_value_heads=2, max_position_embeddings=64, **common))),
        (ids(),), ["linalg-on-tensors", "tosa"])
    m["mistral"] = lambda: (Wrap(tf.MistralModel(tf.MistralConfig(
        num_key_value_heads=2, sliding_window=4, max_position_embeddings=64,
        **common))), (ids(),), ["linalg-on-tensors"])
    m["t5"] = lambda: (Wrap(tf.T5EncoderModel(tf.T5Config(
        vocab_size=100, d_model=64, d_kv=16, d_ff=128, num_heads=4,
        num_layers=2, relative_attention_num_buckets=8))),
        (ids(),), ["linalg-on-tensors"])
    m["gemma2"] = lambda: (Wrap(tf.Gemma2Model(tf.Gemma2Config(
        num_key_value_heads=2, head_dim=16, max_position_embeddings=64,
        attn_logit_softcapping=50.0, sliding_window=8, **common))),
        (ids(),), ["linalg-on-tensors"])
    m["bloom"] = lambda: (Wrap(tf.BloomModel(tf.BloomConfig(
        vocab_size=100, hidden_size=64, n_head=4, n_layer=2))),
        (ids(),), ["linalg-on-tensors"])
    # Falcon's new decoder architecture: one fused QKV projection grouped
    # per KV head ([B, S, Hkv, Hq/Hkv + 2, D]: the group's query heads, then
    # its K, then its V), K and V broadcast over the group in the model.
    falcon = dict(vocab_size=100, hidden_size=64, num_attention_heads=4,
                  num_kv_heads=2, new_decoder_architecture=True, alibi=False,
                  num_hidden_layers=2, max_position_embeddings=64)
    m["falcon"] = lambda: (Wrap(tf.FalconModel(tf.FalconConfig(**falcon))),
                           (ids(),), ["linalg-on-tensors"])
    m["falcon_eager"] = lambda: (Wrap(tf.FalconModel(tf.FalconConfig(
        attn_implementation="eager", **falcon))), (ids(),),
        ["linalg-on-tensors"])
    # torch-mlir's own tm_tensor ops left in linalg-on-tensors output (its
    # backend contract allows them): OPT's positions are a cumsum of the
    # attention mask (tm_tensor.scan) next to its eager attention; llama_tm
    # keeps aten.scaled_dot_product_attention legal (TM_LEGAL below), which
    # torch-mlir lowers to tm_tensor.attention. Both are exported as is.
    m["opt"] = lambda: (Wrap(tf.OPTModel(tf.OPTConfig(
        vocab_size=100, hidden_size=64, ffn_dim=128, num_attention_heads=4,
        num_hidden_layers=2, max_position_embeddings=64,
        word_embed_proj_dim=64, attn_implementation="eager"))),
        (ids(),), ["linalg-on-tensors"])
    m["llama_tm"] = lambda: (Wrap(tf.LlamaModel(tf.LlamaConfig(
        attn_implementation="sdpa", num_key_value_heads=2,
        max_position_embeddings=64, **common))),
        (ids(),), ["linalg-on-tensors"])
    m["vit"] = lambda: (Wrap(tf.ViTModel(tf.ViTConfig(
        image_size=16, patch_size=4, num_channels=3, **{
            k: v for k, v in common.items() if k != "vocab_size"}),
        add_pooling_layer=False)),
        (torch.randn(1, 3, 16, 16),), ["linalg-on-tensors"])
    # Executable: one layer with its weights kept, for the numerics check
    # (scripts/check_raise_numerics.py) before and after raising.
    tiny = dict(vocab_size=64, hidden_size=32, intermediate_size=64,
                num_attention_heads=4, num_hidden_layers=1,
                max_position_embeddings=32)
    m["exec_gpt2"] = lambda: (Wrap(tf.GPT2Model(tf.GPT2Config(
        vocab_size=64, n_embd=32, n_head=4, n_layer=1, n_positions=32))),
        (torch.randint(0, 64, (1, 8)),), ["linalg-on-tensors", "tosa"])
    m["exec_llama"] = lambda: (Wrap(tf.LlamaModel(tf.LlamaConfig(
        num_key_value_heads=2, **tiny))),
        (torch.randint(0, 64, (1, 8)),), ["linalg-on-tensors", "tosa"])
    m["exec_falcon"] = lambda: (Wrap(tf.FalconModel(tf.FalconConfig(
        vocab_size=64, hidden_size=32, num_attention_heads=4, num_kv_heads=2,
        new_decoder_architecture=True, alibi=False, num_hidden_layers=1,
        max_position_embeddings=32))),
        (torch.randint(0, 64, (1, 8)),), ["linalg-on-tensors"])
    # Decode steps over a static KV cache (one new token per sequence, a
    # batch of 2, a 64-row cache). Llama through SDPA (boolean mask), Qwen2
    # through its eager attention (additive float mask). torch-mlir's TOSA
    # backend cannot lower the cache update (aten.index_put.hacked_twin is
    # illegal there), so these are linalg-on-tensors only.
    decoder = dict(vocab_size=64, hidden_size=64, intermediate_size=128,
                   num_attention_heads=4, num_key_value_heads=2,
                   num_hidden_layers=2, max_position_embeddings=64)
    m["llama_decode"] = lambda: decode_step(tf.LlamaModel(tf.LlamaConfig(
        attn_implementation="sdpa", **decoder))) + (["linalg-on-tensors"],)
    m["qwen2_decode"] = lambda: decode_step(tf.Qwen2Model(tf.Qwen2Config(
        attn_implementation="eager", **decoder))) + (["linalg-on-tensors"],)
    # Left-padded prompts: the mask is the length AND a padding mask read
    # from data; stays dense flash.attention (not a length per sequence).
    m["llama_decode_padded"] = lambda: decode_step_padded(tf.LlamaModel(
        tf.LlamaConfig(attn_implementation="sdpa", **decoder))) + (
        ["linalg-on-tensors"],)
    # The same decode step with torch-mlir's tm_tensor.scatter (the cache
    # update) kept as it printed it, not rewritten into loops.
    m["llama_decode_scatter"] = m["llama_decode"]
    # Executable (weights kept): one layer, for the numerics check.
    m["exec_llama_decode"] = lambda: decode_step(tf.LlamaModel(tf.LlamaConfig(
        attn_implementation="sdpa", **dict(tiny, num_key_value_heads=2))),
        max_cache_len=32) + (["linalg-on-tensors"],)
    return m


# --- Small cases: one attention form each (test/models/cases/) -------------
B, H, HKV, S, D = 2, 4, 2, 16, 16


def qkv(hk=H, s_q=S, dtype=torch.float32):
    return (torch.randn(B, H, s_q, D, dtype=dtype),
            torch.randn(B, hk, S, D, dtype=dtype),
            torch.randn(B, hk, S, D, dtype=dtype))


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def scores(q, k):
    return torch.matmul(q, k.transpose(-1, -2))


def causal_iota(s_q, s_k):
    i = torch.arange(s_q).unsqueeze(-1)
    j = torch.arange(s_k).unsqueeze(0)
    return j <= i


def alibi(q, k, v):
    slopes = torch.tensor([2.0 ** -(i + 1) for i in range(H)]).view(1, H, 1, 1)
    rel = (torch.arange(S).view(1, S) - torch.arange(S).view(S, 1)).float()
    s = scores(q, k) / 4.0 + slopes * rel
    return torch.matmul(torch.softmax(s, -1), v)


def repeat_kv(x, n):
    b, h, s, d = x.shape
    return x[:, :, None, :, :].expand(b, h, n, s, d).reshape(b, h * n, s, d)


def cases():
    """name -> (fn, inputs, output types)."""
    F = torch.nn.functional
    both = ["linalg-on-tensors", "tosa"]
    lin = ["linalg-on-tensors"]
    mask_f = torch.randn(1, 1, S, S)
    mask_b = torch.rand(B, 1, S, S) > 0.2
    c = {
        # F.scaled_dot_product_attention in its variants.
        "sdpa_plain": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v), qkv(), both),
        "sdpa_causal": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), qkv(), both),
        "sdpa_scale": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3), qkv(), both),
        "sdpa_mask_add": (lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), qkv() + (mask_f,), both),
        "sdpa_mask_bool": (lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), qkv() + (mask_b,), both),
        "sdpa_gqa": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True), qkv(HKV), both),
        # Attention written out in model code.
        "eager_div": (lambda q, k, v: torch.matmul(torch.softmax(scores(q, k) / 4.0, -1), v), qkv(), both),
        "eager_mul": (lambda q, k, v: torch.matmul(torch.softmax(scores(q, k) * 0.25, -1), v), qkv(), both),
        "eager_scale_q": (lambda q, k, v: torch.matmul(torch.softmax(scores(q * 0.25, k), -1), v), qkv(), both),
        "eager_scale_after_bias": (lambda q, k, v, m: torch.matmul(torch.softmax((scores(q, k) + m) / 4.0, -1), v), qkv() + (mask_f,), lin),
        "eager_decomposed": (lambda q, k, v: torch.matmul(
            (lambda s: (lambda e: e / e.sum(-1, keepdim=True))(torch.exp(s - s.amax(-1, keepdim=True))))(scores(q, k) / 4.0), v), qkv(), both),
        "eager_f16_upcast": (lambda q, k, v: torch.matmul(torch.softmax((scores(q, k) / 4.0).float(), -1).to(torch.float16), v), qkv(dtype=torch.float16), lin),
        "eager_causal_iota": (lambda q, k, v: torch.matmul(torch.softmax(
            (scores(q, k) / 4.0).masked_fill(~causal_iota(S, S), float("-inf")), -1), v), qkv(), both),
        "eager_causal_tril": (lambda q, k, v: torch.matmul(torch.softmax(
            torch.where(torch.tril(torch.ones(S, S, dtype=torch.bool)), scores(q, k) / 4.0, torch.tensor(float("-inf"))), -1), v), qkv(), lin),
        "eager_causal_bottom_right": (lambda q, k, v: torch.matmul(torch.softmax(
            (scores(q, k) / 4.0).masked_fill(torch.arange(S).view(1, S) > torch.arange(8).view(8, 1) + (S - 8), float("-inf")), -1), v), qkv(s_q=8), lin),
        "eager_window": (lambda q, k, v: torch.matmul(torch.softmax(
            (scores(q, k) / 4.0).masked_fill(~(causal_iota(S, S) & (torch.arange(S).view(S, 1) - torch.arange(S).view(1, S) < 4)), float("-inf")), -1), v), qkv(), lin),
        "eager_where_bool": (lambda q, k, v, m: torch.matmul(torch.softmax(
            torch.where(m, scores(q, k) / 4.0, torch.tensor(float("-inf"))), -1), v), qkv() + (mask_b,), both),
        "eager_gqa_repeat": (lambda q, k, v: torch.matmul(torch.softmax(
            scores(q, repeat_kv(k, H // HKV)) / 4.0, -1), repeat_kv(v, H // HKV)), qkv(HKV), both),
        "eager_bshd": (lambda q, k, v: torch.matmul(torch.softmax(
            scores(q.transpose(1, 2), k.transpose(1, 2)) / 4.0, -1), v.transpose(1, 2)).transpose(1, 2),
            tuple(t.transpose(1, 2).contiguous() for t in qkv()), both),
        "eager_3d": (lambda q, k, v: torch.bmm(torch.softmax(torch.bmm(q, k.transpose(1, 2)) / 4.0, -1), v),
            tuple(t.reshape(B * H, S, D) for t in qkv()), both),
        # Score modifications.
        "mod_alibi": (alibi, qkv(), lin),
        "mod_softcap": (lambda q, k, v: torch.matmul(torch.softmax(
            torch.tanh(scores(q, k) / 4.0 / 30.0) * 30.0, -1), v), qkv(), both),
        "mod_relbias": (lambda q, k, v, bias: torch.matmul(torch.softmax(
            scores(q, k) + bias, -1), v), qkv() + (torch.randn(H, S, S),), both),
        "mod_square": (lambda q, k, v: torch.matmul(torch.softmax(
            (lambda s: s * s.abs())(scores(q, k) / 4.0), -1), v), qkv(), lin),
        "dropout": (lambda q, k, v, keep: torch.matmul(
            torch.softmax(scores(q, k) / 4.0, -1) * keep.float() / 0.9, v), qkv() + (torch.rand(B, H, S, S) < 0.9,), lin),
        # Not attention: must not be rewritten.
        "neg_classifier": (lambda x, w: torch.softmax(torch.matmul(x, w), -1), (torch.randn(B, D), torch.randn(D, 10)), both),
        "neg_unrelated_matmuls": (lambda a, b, c, d: torch.matmul(a, b) + torch.softmax(torch.matmul(c, d), -1),
            (torch.randn(S, D), torch.randn(D, S), torch.randn(S, D), torch.randn(D, S)), lin),
        "neg_no_pv": (lambda q, k: torch.softmax(scores(q, k) / 4.0, -1), qkv()[:2], both),
        "neg_wrong_axis": (lambda q, k, v: torch.matmul(torch.softmax(scores(q, k) / 4.0, -2), v), qkv(), both),
        "neg_data_mask": (lambda q, k, v: torch.matmul(torch.softmax(
            (lambda s: s.masked_fill(s < s.mean(-1, keepdim=True), float("-inf")))(scores(q, k) / 4.0), -1), v), qkv(), lin),
    }
    # The SDPA cases once more with aten.scaled_dot_product_attention kept
    # legal: torch-mlir's tm_tensor.attention, compared on the CPU after
    # raising against the decomposed export above (nothing runs tm_tensor).
    for name in [n for n in c if n.startswith("sdpa_") and n != "sdpa_f16_upcast"]:
        fn, inputs, _ = c[name]
        c[name + "_tm"] = (fn, inputs, lin)
    return c


def export_case(name, fn, args, kinds):
    for kind in kinds:
        m = fx.export_and_import(Fn(fn), *args, output_type=kind, func_name=name,
                                 **export_options(name))
        suffix = "linalg" if kind == "linalg-on-tensors" else kind
        path = os.path.join(OUT, "cases", f"{name}.{suffix}.mlir")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(f"// Generated by scripts/export_models.py ({name}, {kind}).\n")
            f.write(mend(m.operation.get_asm(),
                         keep_tm_tensor=name.endswith("_tm")))
        print(path, os.path.getsize(path))


# Models exported with aten.scaled_dot_product_attention kept legal, so that
# torch-mlir lowers it to tm_tensor.attention instead of decomposing it (and
# every case named *_tm).
TM_LEGAL = {"llama_tm"}
# Models whose tm_tensor ops stay as torch-mlir printed them (the fixtures
# of flashfuse-opt reading whole torch-mlir output).
KEEP_TM = {"opt", "llama_tm", "llama_decode_scatter"}


def export_options(name):
    """Extra fx.export_and_import arguments: for TM_LEGAL models, SDPA stays
    one op through the FX decompositions and torch-mlir's own."""
    if name not in TM_LEGAL and not name.endswith("_tm"):
        return {}
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table
    table = {op: fn for op, fn in get_decomposition_table().items()
             if "scaled_dot_product" not in str(op)}
    return dict(decomposition_table=table,
                backend_legal_ops=["aten.scaled_dot_product_attention"])


def mend(text, keep_tm_tensor=False):
    """Rewrites what a newer MLIR prints and MLIR 22 does not parse.
    flashfuse-opt reads tm_tensor ops (its own definitions of them); the
    scatter is still rewritten into loops where a fixture must run on the CPU
    (nothing lowers tm_tensor ops), unless `keep_tm_tensor`."""
    return text if keep_tm_tensor else mend_scatter(text)


SCATTER = re.compile(
    r"^(?P<ind> *)(?P<res>%[\w.]+) = tm_tensor\.scatter "
    r"\{dimension_map = array<i64: (?P<dims>[\d, ]+)>\} unique_indices\(true\) "
    r"ins\((?P<upd>%[\w.]+), (?P<idx>%[\w.]+) : (?P<updty>tensor<[^>]+>), "
    r"(?P<idxty>tensor<[^>]+>)\) outs\((?P<dst>%[\w.]+) : (?P<dstty>tensor<[^>]+>)\) \{\n"
    r" *\^bb0\((?P<new>%\w+): \w+, %\w+: \w+\):\n"
    r" *tm_tensor\.yield (?P=new) : \w+\n"
    r" *\} -> tensor<[^>]+>\n", re.M)


def mend_scatter(text):
    """torch-mlir lowers index_put / index_copy (the KV-cache update of a
    static cache) to `tm_tensor.scatter`, which is torch-mlir's own dialect,
    not MLIR's. The form it emits for index_put writes one element per index
    row (updates [N, 1, ..., 1], indices [N, rank], every dim mapped, unique
    indices, the region yielding the update): that is exactly a loop over
    the N rows that inserts each element, written here with scf.for,
    tensor.extract and tensor.insert so the fixture parses and runs with
    MLIR 22. Any other scatter form is an error, not a guess."""
    count = [0]

    def loop(m):
        n = count[0]
        count[0] += 1
        ind, res = m["ind"], m["res"]
        dims = [int(d) for d in m["dims"].split(",")]
        upd_shape = [int(d) for d in re.findall(r"(\d+)x", m["updty"])]
        idx_shape = [int(d) for d in re.findall(r"(\d+)x", m["idxty"])]
        rank = len(re.findall(r"(\d+)x", m["dstty"]))
        if (dims != list(range(rank)) or idx_shape[1:] != [rank] or
                upd_shape[1:] != [1] * rank or upd_shape[0] != idx_shape[0]):
            raise ValueError("tm_tensor.scatter form not handled: " + m[0])
        p = f"%scatter{n}_"
        idx_elt = m["idxty"].rsplit("x", 1)[1].rstrip(">")
        body = [f"{ind}{p}c0 = arith.constant 0 : index",
                f"{ind}{p}c1 = arith.constant 1 : index",
                f"{ind}{p}n = arith.constant {upd_shape[0]} : index",
                f"{ind}{res} = scf.for {p}i = {p}c0 to {p}n step {p}c1 "
                f"iter_args({p}acc = {m['dst']}) -> ({m['dstty']}) {{"]
        at = []
        for d in range(rank):
            body.append(f"{ind}  {p}d{d} = arith.constant {d} : index")
            body.append(f"{ind}  {p}x{d} = tensor.extract {m['idx']}[{p}i, {p}d{d}] : {m['idxty']}")
            if idx_elt != "index":
                body.append(f"{ind}  {p}y{d} = arith.index_cast {p}x{d} : {idx_elt} to index")
                at.append(f"{p}y{d}")
            else:
                at.append(f"{p}x{d}")
        zeros = ", ".join([f"{p}i"] + [f"{p}c0"] * rank)
        body.append(f"{ind}  {p}v = tensor.extract {m['upd']}[{zeros}] : {m['updty']}")
        body.append(f"{ind}  {p}r = tensor.insert {p}v into {p}acc[{', '.join(at)}] : {m['dstty']}")
        body.append(f"{ind}  scf.yield {p}r : {m['dstty']}")
        body.append(f"{ind}}}")
        return "\n".join(body) + "\n"

    text = SCATTER.sub(loop, text)
    if "tm_tensor.scatter" in text:
        raise ValueError("tm_tensor.scatter left that mend_scatter does not "
                         "handle")
    return text


def elide_weights(text):
    """Weights arrive as dense_resource blobs in a trailing resource section;
    dropping the blobs (MLIR 22 parses the handles without them) keeps the
    model fixtures small. Cases keep theirs: they are small and executable."""
    return re.sub(r"\n\{-#.*?#-\}\n?", "\n", text, flags=re.S)


def export(name, make):
    module, args, kinds = make()
    module.eval()
    # The fx importer freezes every buffer into the IR but finds no state for
    # non-persistent ones (rotary inv_freq, position_ids): make them
    # persistent, which changes nothing else.
    for sub in module.modules():
        sub._non_persistent_buffers_set.clear()
    for kind in kinds:
        with torch.no_grad():
            m = fx.export_and_import(module, *args, output_type=kind,
                                     func_name=name, **export_options(name))
        # Elide weights (the structure is what the fixtures are about),
        # except in the small executable ones.
        keep = name.startswith("exec_")
        text = mend(m.operation.get_asm(), keep_tm_tensor=name in KEEP_TM)
        suffix = "linalg" if kind == "linalg-on-tensors" else kind
        path = os.path.join(OUT, f"{name}.{suffix}.mlir")
        with open(path, "w") as f:
            f.write(f"// Generated by scripts/export_models.py ({name}, {kind});"
                    f" weights {'kept' if keep else 'elided'}.\n")
            f.write(text if keep else elide_weights(text))
        print(path, os.path.getsize(path))


if __name__ == "__main__":
    all_models, all_cases = models(), cases()
    for name in sys.argv[1:] or list(all_models) + list(all_cases):
        try:
            if name in all_models:
                export(name, all_models[name])
            else:
                export_case(name, *all_cases[name])
        except Exception as e:  # keep going: report every failing export
            print(f"{name}: FAILED {type(e).__name__}: {str(e)[:400]}")
