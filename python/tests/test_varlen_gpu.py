"""Numerics of flashfuse.varlen_attention on a GPU: each sequence of a packed
batch against the f32 reference of that sequence alone (the dense
reference of test_numerics_gpu.py), with FlashAttention's rule per
sequence: max|out - ref| <= 2 * max|out_lowprec - ref| + atol. Ragged
lengths (1, block multiples +-1, empty sequences, Lq != Lk), causal both
alignments, GQA, D = 64/128, fp16/bf16; fresh random inputs every run,
outputs poisoned first (FLASHFUSE_POISON_OUTPUTS) so that rows a kernel
fails to write fail. Kernels: gen_suite.py --varlen (build/kernels/
<target>-varlen; the gradients' --varlen --backward, <target>-varlen-bwd);
a variant no artifact has is skipped. Gradients: each sequence's dQ, dK,
dV against torch autograd of its own reference, with 3x."""

import math

import pytest

torch = pytest.importorskip("torch")

import flashfuse  # noqa: E402
from test_numerics_gpu import (assert_close, philox_keep,  # noqa: E402
                               reference, run_or_skip)

pytestmark = pytest.mark.gpu

# (Lq_i, Lk_i) per sequence. Self-attention lengths around the block sizes
# (64 and 128 rows, 32-128 keys), a length-1 sequence and an empty one;
# then cross lengths: shorter and longer queries, a sequence without keys
# (O = 0, LSE = +inf), one without queries, and Lq > Lk (bottom-right:
# its first rows see no key).
SELF = [1, 63, 64, 65, 0, 127, 128, 129, 255, 257, 1000]
LENGTHS = {
    "self": [(n, n) for n in SELF],
    "cross": [(1, 239), (17, 17), (128, 200), (10, 0), (0, 40), (300, 129),
              (65, 1), (129, 511)],
}


def offsets(lengths):
    cu = [0]
    for n in lengths:
        cu.append(cu[-1] + n)
    return torch.tensor(cu, dtype=torch.int32, device="cuda")


def packed_inputs(pairs, hq, hkv, d, dtype, dv=None):
    total_q = sum(q for q, _ in pairs)
    total_k = sum(k for _, k in pairs)
    q = torch.randn(total_q, hq, d, device="cuda", dtype=dtype)
    k = torch.randn(total_k, hkv, d, device="cuda", dtype=dtype)
    v = torch.randn(total_k, hkv, dv or d, device="cuda", dtype=dtype)
    return q, k, v


def sequence(t, start, length):
    """Rows [start, start + length) of a packed [total, H, D] tensor as the
    [1, H, L, D] input of the dense reference."""
    return t[start:start + length].transpose(0, 1).unsqueeze(0)


def reference_lse(q, k, causal, scale, window=None, softcap=0.0):
    """f32 log-sum-exp of each row of one sequence ([1, Hq, Lq]; +inf where
    every key is masked, as the kernels write it)."""
    from test_numerics_gpu import keep_mask
    causal = {False: "none", True: "top_left"}.get(causal, causal)
    group = q.shape[1] // k.shape[1]
    k = k.float().repeat_interleave(group, dim=1)
    s = torch.matmul(q.float() * scale, k.transpose(-2, -1))
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    keep = keep_mask(q.shape[2], k.shape[2], causal, window, q.device)
    lse = torch.logsumexp(s.masked_fill(~keep, float("-inf")), dim=-1)
    return torch.where(torch.isneginf(lse), torch.full_like(lse, math.inf),
                       lse)


def dropout_masks(pairs, heads, dropout_p, seed):
    """Each sequence's dropout keep mask scaled by 1 / (1 - p) ([1, Hq, Lq,
    Lk], None without dropout), for the call made right after
    torch.manual_seed(seed): the keep test at the sequence's index and its
    local indices (FlashOps.td), from the seed the call draws."""
    if not dropout_p:
        return [None] * len(pairs)
    torch.manual_seed(seed)
    kernel_seed = int(torch.randint(0, 2**62, (1,)).item())
    return [philox_keep(kernel_seed, dropout_p, [i], heads, lq, lk).cuda()
            .float() / (1 - dropout_p) for i, (lq, lk) in enumerate(pairs)]


def check_packed(pairs, dtype, head_dim, causal, heads, window=None,
                 softcap=0.0, layout="separate", dropout_p=0.0, seed=0,
                 head_dim_v=None):
    """Runs flashfuse.varlen_attention on a packed batch of `pairs` and
    checks every sequence's O (FlashAttention's rule) and LSE; with
    dropout_p, against the reference under each sequence's keep mask
    (dropout_masks); V of head_dim_v (default head_dim)."""
    hq, hkv = heads
    q, k, v = packed_inputs(pairs, hq, hkv, head_dim, dtype, head_dim_v)
    if layout == "qkv":
        # One [total, 3, H, D] buffer (self-attention, Hq = Hkv): q, k and
        # v are strided views, read in place.
        qkv = torch.randn(q.shape[0], 3, hq, head_dim, device="cuda",
                          dtype=dtype)
        q, k, v = qkv[:, 0], qkv[:, 1], qkv[:, 2]
    cu_q = offsets([p[0] for p in pairs])
    cu_k = offsets([p[1] for p in pairs])
    max_q = max(p[0] for p in pairs)
    max_k = max(p[1] for p in pairs)
    drops = dropout_masks(pairs, hq, dropout_p, seed)
    torch.manual_seed(seed)
    out, lse = run_or_skip(lambda: flashfuse.varlen_attention(
        q, k, v, cu_q, cu_k, max_q, max_k, is_causal=causal,
        window=window, softcap=softcap or None, return_lse=True,
        check_inputs=True, dropout_p=dropout_p))
    assert out.shape == (q.shape[0], hq, v.shape[-1]) and out.dtype == dtype
    assert lse.shape == (hq, q.shape[0]) and lse.dtype == torch.float32
    scale = 1 / math.sqrt(head_dim)
    for i, (lq, lk) in enumerate(pairs):
        if lq == 0:
            continue
        sq, sk = cu_q[i].item(), cu_k[i].item()
        qi, ki, vi = (sequence(q, sq, lq), sequence(k, sk, lk),
                      sequence(v, sk, lk))
        got = out[sq:sq + lq].transpose(0, 1).unsqueeze(0)
        got_lse = lse[:, sq:sq + lq].unsqueeze(0)
        what = f"sequence {i} (Lq={lq}, Lk={lk})"
        if lk == 0:
            assert (got == 0).all(), f"{what}: O of a sequence without keys"
            assert torch.isposinf(got_lse).all(), f"{what}: LSE"
            continue
        ref = reference(qi, ki, vi, causal, scale, True, window, softcap,
                        drop=drops[i])
        low = reference(qi, ki, vi, causal, scale, False, window, softcap,
                        drop=drops[i])
        assert_close(got, ref, low, 2, f"O of {what}")
        ref_lse = reference_lse(qi, ki, causal, scale, window, softcap)
        masked = torch.isposinf(ref_lse)
        assert torch.equal(torch.isposinf(got_lse), masked), \
            f"{what}: LSE +inf exactly on the rows that see no key"
        # Fully masked rows: O = 0, never NaN.
        assert (got.masked_select(masked.unsqueeze(-1)) == 0).all(), what
        err = (got_lse[~masked] - ref_lse[~masked]).abs().max().item() \
            if (~masked).any() else 0.0
        assert err <= 1e-3 * (1 + ref_lse[~masked].abs().max().item()), \
            f"{what}: max|LSE - ref| = {err:.3e}"
    return out


@pytest.fixture(autouse=True)
def poison(monkeypatch):
    monkeypatch.setenv("FLASHFUSE_POISON_OUTPUTS", "1")


@pytest.mark.parametrize("lengths", sorted(LENGTHS))
@pytest.mark.parametrize("heads", [(4, 4), (8, 2)], ids=["mha", "gqa"])
@pytest.mark.parametrize("causal", [False, "top_left", "bottom_right"],
                         ids=["full", "causal_tl", "causal_br"])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_varlen_matches_each_sequence(dtype, head_dim, causal, heads,
                                      lengths):
    check_packed(LENGTHS[lengths], dtype, head_dim, causal, heads)


def forced_sm90ws_forward(monkeypatch, dtype, head_dim, causal, window=False,
                          softcap=False, head_dim_v=None):
    """Makes varlen_attention's forward take the sm90ws kernel of the
    variant (build/kernels/<target>-varlen-ws) at any length, skipping
    where no artifact has it; returns a list that collects the directory
    of every forward kernel looked up."""
    from flashfuse import _kernels
    from flashfuse import _runtime as rt
    code = {False: 0, "top_left": 1, "bottom_right": 2}[causal]
    variant = _kernels.make_variant(
        rt.KIND_FORWARD,
        rt.DTYPE_BF16 if dtype == torch.bfloat16 else rt.DTYPE_F16, head_dim,
        head_dim_v or head_dim, code, window=window, softcap=softcap,
        varlen=True)
    ws = _kernels.sm90ws_dir(variant)
    if ws is None:
        pytest.skip("no sm90ws varlen forward of the variant in the library")
    monkeypatch.setattr(_kernels, "sm90ws_varlen_min_mean_keys",
                        lambda variant, walks=False: 0)
    taken = []
    lookup = _kernels.kernel

    def spy(device_index, v, directory=None, capability=None):
        if v.key() == variant.key():
            taken.append(directory)
        return lookup(device_index, v, directory, capability)
    monkeypatch.setattr(_kernels, "kernel", spy)
    return ws, taken


@pytest.mark.parametrize("lengths", sorted(LENGTHS))
@pytest.mark.parametrize("heads", [(4, 4), (8, 2)], ids=["mha", "gqa"])
@pytest.mark.parametrize("causal", [False, "top_left", "bottom_right"],
                         ids=["full", "causal_tl", "causal_br"])
@pytest.mark.parametrize("head_dim", [64, 128, 192])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_varlen_sm90ws_forward_matches_each_sequence(monkeypatch, dtype,
                                                     head_dim, causal, heads,
                                                     lengths):
    # The sm90ws forward under the varlen scheduler: its TMA tiles cross
    # sequence ends (the tensor maps span the packed rows), so the tails'
    # masks and the epilogue's row bounds must keep every sequence's own
    # (ragged lengths, 1, block multiples +-1, empty, without keys).
    dv = 128 if head_dim == 192 else None
    ws, taken = forced_sm90ws_forward(monkeypatch, dtype, head_dim, causal,
                                      head_dim_v=dv)
    check_packed(LENGTHS[lengths], dtype, head_dim, causal, heads,
                 head_dim_v=dv)
    assert taken == [ws]


# Forty sequences of 0..900 rows (seeded): with 8 query heads, 2240 units
# of the longest sequence's query blocks, most CTAs of the persistent walk
# take a dozen or more and skip those past their sequence's blocks.
MANY = [(n, n) for n in
        [(37 * i * i + 11 * i) % 901 for i in range(40)]]


@pytest.mark.parametrize("causal", [False, "top_left", "bottom_right"],
                         ids=["full", "causal_tl", "causal_br"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_varlen_sm90ws_forward_walks_many_units(monkeypatch, head_dim,
                                                causal):
    # The sm90ws forward's persistent walk over a packed batch: units of the
    # longest sequence's query blocks x heads x sequences, each sequence's
    # own blocks (pairs n-1-i and i under a causal mask) and the rest
    # skipped, every CTA walking many units.
    dtype = torch.bfloat16
    ws, taken = forced_sm90ws_forward(monkeypatch, dtype, head_dim, causal)
    check_packed(MANY, dtype, head_dim, causal, (8, 2))
    assert taken == [ws]


@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("sm90ws", [False, True], ids=["first", "sm90ws"])
def test_nan_in_the_next_sequence_stays_there(monkeypatch, sm90ws, head_dim):
    # Sequence 0's last key block reads rows of sequence 1 on the sm90ws
    # kernel (its tensor maps span the packed rows): a NaN in sequence 1's
    # V must not reach sequence 0's O through P = 0 (0 * NaN), as it cannot
    # on the kernels that zero-fill past a sequence's end.
    dtype = torch.bfloat16
    if sm90ws:
        forced_sm90ws_forward(monkeypatch, dtype, head_dim, "top_left")
    pairs = [(100, 100), (70, 70)]
    q, k, v = packed_inputs(pairs, 4, 4, head_dim, dtype)
    v[100:] = float("nan")
    cu = offsets([100, 70])
    out = run_or_skip(lambda: flashfuse.varlen_attention(
        q, k, v, cu, cu, 100, 100, is_causal=True))
    first = out[:100].transpose(0, 1).unsqueeze(0)
    qi, ki, vi = (sequence(t, 0, 100) for t in (q, k, v))
    scale = 1 / math.sqrt(head_dim)
    assert torch.isfinite(first).all()
    assert_close(first, reference(qi, ki, vi, True, scale, True),
                 reference(qi, ki, vi, True, scale, False), 2, "sequence 0")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_varlen_sm90ws_window_and_softcap(monkeypatch, dtype):
    ws, taken = forced_sm90ws_forward(monkeypatch, dtype, 128, False,
                                      window=True)
    check_packed(LENGTHS["cross"], dtype, 128, False, (8, 2), window=(64, 0))
    assert taken == [ws]
    ws, taken = forced_sm90ws_forward(monkeypatch, dtype, 128, "top_left",
                                      softcap=True)
    check_packed(LENGTHS["self"], dtype, 128, "top_left", (8, 2),
                 softcap=30.0)
    assert taken == [ws]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_packed_qkv_views_are_read_in_place(dtype):
    check_packed(LENGTHS["self"], dtype, 128, "bottom_right", (4, 4),
                 layout="qkv")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_window_and_softcap(dtype):
    # gen_suite.py --varlen: a window (no causal) and softcap (causal) at
    # D = 128.
    check_packed(LENGTHS["cross"], dtype, 128, False, (8, 2), window=(64, 0))
    check_packed(LENGTHS["self"], dtype, 128, "top_left", (8, 2),
                 softcap=30.0)


@pytest.mark.parametrize("lengths", sorted(LENGTHS))
@pytest.mark.parametrize("causal", [False, "top_left", "bottom_right"],
                         ids=["full", "causal_tl", "causal_br"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_mla_head_dims(dtype, causal, lengths):
    # gen_suite.py --varlen: DeepSeek's MLA prefill, D = 192 with Dv = 128,
    # packed (GQA too), in the three causal modes.
    check_packed(LENGTHS[lengths], dtype, 192, causal, (8, 2),
                 head_dim_v=128)


@pytest.mark.parametrize("causal", [False, "top_left", "bottom_right"],
                         ids=["full", "causal_tl", "causal_br"])
def test_mla_backward(causal):
    # DeepSeek's MLA training step over a packed batch (D = 192, Dv = 128,
    # GQA, empty and ragged sequences): on Hopper the sm90ws backward whose
    # two warpgroups share each 64-key block, its dQ staged as rows
    # (<target>-varlen-bwd-ws since the top-left causal one stopped
    # spilling, docs/PERF.md run 553).
    check_packed_gradients([(77, 300), (0, 5), (513, 129), (129, 129),
                            (1000, 1000), (5, 0)], torch.bfloat16, 192,
                           causal, (8, 2), head_dim_v=128)


@pytest.mark.parametrize("lengths", sorted(LENGTHS))
@pytest.mark.parametrize("softcap", [None, 30.0], ids=["plain", "softcap"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_head_dim_256_causal(dtype, softcap, lengths):
    # gen_suite.py --varlen: D = 256 causal (top-left) and with the softcap,
    # Gemma-2 and Gemma-3's left-padded prompts (flashfuse.hf).
    check_packed(LENGTHS[lengths], dtype, 256, "top_left", (8, 2),
                 softcap=softcap)


def test_one_long_sequence_matches_the_dense_forward():
    # One sequence is the dense op: the two kernels agree to rounding.
    q, k, v = packed_inputs([(1023, 1023)], 8, 2, 128, torch.bfloat16)
    cu = offsets([1023])
    out = run_or_skip(lambda: flashfuse.varlen_attention(
        q, k, v, cu, cu, 1023, 1023, is_causal=True))
    dense = run_or_skip(lambda: flashfuse.attention(
        *(t.transpose(0, 1).unsqueeze(0) for t in (q, k, v)),
        is_causal=True, enable_gqa=True))
    torch.testing.assert_close(out, dense[0].transpose(0, 1), atol=2e-2,
                               rtol=0)


def test_empty_packs_launch_nothing():
    q, k, v = packed_inputs([(0, 0), (0, 5)], 4, 4, 64, torch.float16)
    cu_q, cu_k = offsets([0, 0]), offsets([0, 5])
    out = flashfuse.varlen_attention(q, k, v, cu_q, cu_k, 0, 5)
    assert out.shape == (0, 4, 64)
    q, k, v = packed_inputs([(7, 0), (3, 0)], 4, 4, 64, torch.float16)
    out, lse = flashfuse.varlen_attention(
        q, k, v, offsets([7, 3]), offsets([0, 0]), 7, 0, return_lse=True)
    assert (out == 0).all() and torch.isposinf(lse).all()


def test_check_inputs_reads_the_offsets():
    q, k, v = packed_inputs([(10, 10), (20, 20)], 4, 4, 64, torch.float16)
    cu = offsets([10, 20])
    bad = cu.clone()
    bad[-1] = 29
    with pytest.raises(ValueError, match=r"cu_seqlens_q\[-1\] = 29 but the "
                                         "packed tensor has 30 rows"):
        flashfuse.varlen_attention(q, k, v, bad, cu, 20, 20,
                                   check_inputs=True)
    with pytest.raises(ValueError, match="more than max_seqlen_k = 19"):
        flashfuse.varlen_attention(q, k, v, cu, cu, 20, 19,
                                   check_inputs=True)


def rounded_o_delta_terms(grads, q, k, v, dout, causal, scale, drop, dtype):
    """The f32 reference's (dQ, dK, dV) plus what the kernels' D =
    rowsum(dO * O) adds where it reads O rounded to `dtype` (as
    FlashAttention's kernels do): dS = P (dP' - D) becomes P (dP' - D) +
    P (D - D_rounded), so dQ gains scale P (D - D_rounded) K and dK scale
    (P (D - D_rounded))^T Q. With dropout O carries the 1 / (1 - p)
    scaling, so even a row whose softmax is one key (P = 1, whose exact dS
    is 0) gets a dS of that rounding, summed over every such row of a key
    (a sequence of Lk = 1): the reference must model it, or the rule
    compares the kernels with an algorithm they do not run. One sequence
    [1, H, L, D], no softcap or window (the dropout cases)."""
    from test_numerics_gpu import keep_mask
    group = q.shape[1] // k.shape[1]
    qf = q.float()
    kf, vf = (t.float().repeat_interleave(group, dim=1) for t in (k, v))
    s = torch.matmul(qf * scale, kf.transpose(-2, -1))
    mask = {False: "none", True: "top_left"}.get(causal, causal)
    keep = keep_mask(q.shape[2], k.shape[2], mask, None, q.device)
    p = torch.nan_to_num(torch.softmax(s.masked_fill(~keep, float("-inf")),
                                       dim=-1), nan=0.0)
    o = torch.matmul(p * drop, vf)
    d = dout.float()
    delta = (d * o).sum(-1) - (d * o.to(dtype).float()).sum(-1)
    ds = p * delta.unsqueeze(-1)
    dq = grads[0] + scale * torch.matmul(ds, kf)
    dk = torch.matmul(ds.transpose(-2, -1), qf) * scale
    dk = grads[1] + dk.unflatten(1, (k.shape[1], group)).sum(2)
    return dq, dk, grads[2]


def check_packed_gradients(pairs, dtype, head_dim, causal, heads,
                           window=None, softcap=0.0, deterministic=False,
                           dropout_p=0.0, seed=0, head_dim_v=None):
    """flashfuse.varlen_attention's autograd on a packed batch of `pairs`
    against torch autograd of each sequence's dense reference alone (f32
    and the inputs' dtype), FlashAttention's rule with 3x per sequence and
    gradient; dK and dV of a sequence without queries (and dQ of one
    without keys) must be exactly 0. Returns the packed gradients."""
    hq, hkv = heads
    q, k, v = packed_inputs(pairs, hq, hkv, head_dim, dtype, head_dim_v)
    dout = torch.randn(q.shape[0], hq, head_dim_v or head_dim, device="cuda",
                       dtype=dtype)
    cu_q = offsets([p[0] for p in pairs])
    cu_k = offsets([p[1] for p in pairs])
    max_q = max(p[0] for p in pairs)
    max_k = max(p[1] for p in pairs)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    drops = dropout_masks(pairs, hq, dropout_p, seed)
    # (f32 reference, low-precision reference) of dQ, dK, dV, packed.
    packed_refs = [(torch.zeros(t.shape, device="cuda"),
                    torch.zeros(t.shape, device="cuda", dtype=dtype))
                   for t in (q, k, v)]
    torch.manual_seed(seed)
    out = run_or_skip(lambda: flashfuse.varlen_attention(
        *leaves, cu_q, cu_k, max_q, max_k, is_causal=causal, window=window,
        softcap=softcap or None, check_inputs=True,
        deterministic=deterministic, dropout_p=dropout_p))
    grads = run_or_skip(lambda: torch.autograd.grad(out, leaves, dout))
    for g, leaf in zip(grads, leaves):
        assert g.shape == leaf.shape and g.dtype == leaf.dtype
    scale = 1 / math.sqrt(head_dim)
    for i, (lq, lk) in enumerate(pairs):
        sq, sk = cu_q[i].item(), cu_k[i].item()
        what = f"sequence {i} (Lq={lq}, Lk={lk})"
        mine = [sequence(grads[0], sq, lq), sequence(grads[1], sk, lk),
                sequence(grads[2], sk, lk)]
        if lq == 0 or lk == 0:
            # No (query, key) pair: nothing reaches these rows' gradients.
            for name, g in zip(("dq", "dk", "dv"), mine):
                assert (g == 0).all(), f"{what}: {name} must be 0"
            continue
        d_i = sequence(dout, sq, lq)
        refs = []
        for upcast in (True, False):
            rl = [sequence(q, sq, lq).clone().requires_grad_(),
                  sequence(k, sk, lk).clone().requires_grad_(),
                  sequence(v, sk, lk).clone().requires_grad_()]
            ref = reference(*rl, causal, scale, upcast, window, softcap,
                            drop=drops[i])
            refs.append(torch.autograd.grad(
                ref, rl, d_i.float() if upcast else d_i))
        if dropout_p:
            refs[0] = rounded_o_delta_terms(
                refs[0], *(sequence(t, *span) for t, span in (
                    (q, (sq, lq)), (k, (sk, lk)), (v, (sk, lk)))),
                d_i, causal, scale, drops[i], dtype)
            # Gathered and checked over the whole batch below.
            spans = ((sq, lq), (sk, lk), (sk, lk))
            for (whole, whole_low), span, r, lo in zip(packed_refs, spans,
                                                       *refs):
                sequence(whole, *span).copy_(r)
                sequence(whole_low, *span).copy_(lo)
            continue
        for name, g, r, lo in zip(("dq", "dk", "dv"), mine, *refs):
            assert_close(g, r, lo, 3, f"{name} of {what}")
    if dropout_p:
        # With dropout, D = rowsum(dO * O) reads O rounded to the dtype
        # after its 1 / (1 - p) scaling, as FlashAttention's kernels do, so
        # a row whose softmax is one key gets dS of the order of that
        # rounding where the reference's is exactly 0; a sequence of only
        # such rows (Lk = 1) would have a bound of 0. FlashAttention's rule
        # is over the whole output, as its own varlen tests apply it.
        for name, g, (r, lo) in zip(("dq", "dk", "dv"), grads,
                                    packed_refs):
            assert_close(g, r, lo, 3, f"{name} of the packed batch")
    return grads


@pytest.mark.parametrize("lengths", sorted(LENGTHS))
@pytest.mark.parametrize("heads", [(4, 4), (8, 2)], ids=["mha", "gqa"])
@pytest.mark.parametrize("causal", [False, "top_left", "bottom_right"],
                         ids=["full", "causal_tl", "causal_br"])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_varlen_gradients_match_each_sequence(dtype, head_dim, causal, heads,
                                              lengths):
    # Kernels: gen_suite.py --varlen --backward (build/kernels/
    # <target>-varlen-bwd).
    check_packed_gradients(LENGTHS[lengths], dtype, head_dim, causal, heads)


def sm90ws_backward(dtype, head_dim, causal, **options):
    """The packed backward variant (make_variant's `options`: softcap, ...)
    and the library's sm90ws directory for it (<target>-varlen-bwd-ws; None
    where no artifact has one)."""
    from flashfuse import _kernels
    from flashfuse import _runtime as rt
    code = {False: 0, "top_left": 1, "bottom_right": 2}[causal]
    variant = _kernels.make_variant(
        rt.KIND_BACKWARD,
        rt.DTYPE_BF16 if dtype == torch.bfloat16 else rt.DTYPE_F16, head_dim,
        head_dim, code, varlen=True, **options)
    return variant, _kernels.sm90ws_dir(variant)


def assert_backward_launched(variant, directory):
    """That a backward plan of this process launched `directory`'s main
    kernel of `variant`."""
    from flashfuse import _kernels, ops
    kernel = _kernels.kernel(torch.cuda.current_device(), variant, directory)
    assert any(plan[1][0] is kernel for plan in ops._backward_plans.values())


@pytest.mark.parametrize("causal", [False, "top_left", "bottom_right"],
                         ids=["full", "causal_tl", "causal_br"])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16],
                         ids=["bf16", "f16"])
def test_varlen_gradients_take_the_sm90ws_kernels(dtype, head_dim, causal):
    # Where the library has an sm90ws backward of the packed variant
    # (build/kernels/<target>-varlen-bwd-ws), its kernel is the one the
    # backward launches: its tiles cross sequence ends (the tensor maps are
    # over the packed rows), and the rule must hold per sequence.
    variant, ws = sm90ws_backward(dtype, head_dim, causal)
    if ws is None:
        pytest.skip("no sm90ws varlen backward of the variant in the library")
    check_packed_gradients([(77, 300), (0, 5), (513, 129), (129, 129),
                            (1, 64), (300, 77)], dtype, head_dim,
                           causal, (8, 2))
    assert_backward_launched(variant, ws)


@pytest.mark.parametrize("where", ["q", "k", "v", "do"])
@pytest.mark.parametrize("causal", [False, "top_left", "bottom_right"],
                         ids=["full", "causal_tl", "causal_br"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_nan_in_the_next_sequence_stays_out_of_the_gradients(head_dim, causal,
                                                              where):
    # The sm90ws backward's tensor maps span the packed rows: sequence 0's
    # last key block holds sequence 1's K and V rows, its last query block
    # Q and dO rows of sequence 1. dS and P are 0 there, but 0 * NaN is
    # not: the kernel zeroes those rows (K/V once, Q/dO in the tail step).
    # A NaN anywhere in sequence 1 must leave sequence 0's dQ, dK, dV
    # finite and within the rule, whichever backward the library gives.
    dtype = torch.bfloat16
    q, k, v = packed_inputs([(100, 100), (70, 70)], 4, 4, head_dim, dtype)
    do = torch.randn_like(q)
    {"q": q, "k": k, "v": v, "do": do}[where][100:] = float("nan")
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    cu = offsets([100, 70])
    out = run_or_skip(lambda: flashfuse.varlen_attention(
        *leaves, cu, cu, 100, 100, is_causal=causal))
    grads = run_or_skip(lambda: torch.autograd.grad(out, leaves, do))
    scale = 1 / math.sqrt(head_dim)
    refs = []
    for upcast in (True, False):
        xs = [sequence(t, 0, 100).clone().requires_grad_() for t in (q, k, v)]
        ref = reference(*xs, causal, scale, upcast)
        refs.append(torch.autograd.grad(ref, xs,
                                        sequence(do, 0, 100).to(ref.dtype)))
    for n, name in enumerate(("dq", "dk", "dv")):
        mine = sequence(grads[n], 0, 100)
        assert torch.isfinite(mine).all(), f"a NaN in {where} reached {name}"
        assert_close(mine, refs[0][n], refs[1][n], 3, f"sequence 0's {name}")
    variant, ws = sm90ws_backward(dtype, head_dim, causal)
    if ws is not None:
        assert_backward_launched(variant, ws)


def test_varlen_softcap_gradients_take_the_sm90ws_kernel():
    # The packed causal softcap backward at D = 128 is in the sm90ws
    # library too (gen_suite.py: with softcap's slope in f16 it runs the
    # step 1.17x faster than the sm90 kernel, docs/PERF.md run 334): the
    # backward launches it, and the rule holds per sequence.
    variant, ws = sm90ws_backward(torch.bfloat16, 128, "top_left",
                                  softcap=True)
    if ws is None:
        pytest.skip("no sm90ws varlen softcap backward in the library")
    check_packed_gradients([(77, 300), (0, 5), (513, 129), (129, 129),
                            (1, 64), (300, 77)], torch.bfloat16, 128,
                           "top_left", (8, 2), softcap=30.0)
    assert_backward_launched(variant, ws)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_varlen_gradients_window_and_softcap(dtype):
    check_packed_gradients(LENGTHS["cross"], dtype, 128, False, (8, 2),
                           window=(64, 0))
    check_packed_gradients(LENGTHS["self"], dtype, 128, "top_left", (8, 2),
                           softcap=30.0)


# Dropout over packed batches (flash-attn's dropout_p): the library has no
# such kernels, so each variant is compiled on first use (or found in an
# artifact on FLASHFUSE_KERNEL_DIR; scripts/kernels/check_varlen_dropout.sh
# compiles them elsewhere).
DROPOUT_CASES = [(64, False, (4, 4)), (64, "bottom_right", (8, 2)),
                 (128, "top_left", (8, 2)), (128, "bottom_right", (4, 4))]


@pytest.mark.parametrize("head_dim,causal,heads", DROPOUT_CASES, ids=str)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_varlen_dropout_matches_each_sequence(dtype, head_dim, causal, heads):
    # O and the gradients of every sequence under its own keep mask, ragged
    # lengths, empty sequences and sequences without keys included.
    for n, lengths in enumerate(sorted(LENGTHS)):
        check_packed(LENGTHS[lengths], dtype, head_dim, causal, heads,
                     dropout_p=0.17, seed=11 + n)
        check_packed_gradients(LENGTHS[lengths], dtype, head_dim, causal,
                               heads, dropout_p=0.17, seed=21 + n)


def test_varlen_dropout_mask_is_the_philox_keep_test():
    # The kept mask read back exactly: Q = 0 makes every probability 1 / 64
    # over a sequence's 64 keys and V = I (D = 64) makes O[i, j] = keep /
    # ((1 - p) 64), so O > 0.5 / ((1 - p) 64) is the keep test, which must
    # be Philox.h's at the sequence's index and local indices, bit for bit.
    p, seed, heads = 0.3, 5, 3
    lengths = [1, 63, 129, 200, 8]
    q = torch.zeros(sum(lengths), heads, 64, device="cuda",
                    dtype=torch.float16)
    k = torch.randn(64 * len(lengths), heads, 64, device="cuda",
                    dtype=torch.float16)
    v = torch.eye(64, device="cuda", dtype=torch.float16).repeat(
        len(lengths), 1).unsqueeze(1).expand(-1, heads, -1).contiguous()
    pairs = [(n, 64) for n in lengths]
    torch.manual_seed(seed)
    out = run_or_skip(lambda: flashfuse.varlen_attention(
        q, k, v, offsets(lengths), offsets([64] * len(lengths)),
        max(lengths), 64, dropout_p=p))
    masks = dropout_masks(pairs, heads, p, seed)
    start = 0
    for i, n in enumerate(lengths):
        kept = out[start:start + n].transpose(0, 1).float() > 0.5 / (
            (1 - p) * 64)
        assert torch.equal(kept, masks[i][0] > 0), f"sequence {i}"
        start += n
    dropped = 1 - sum(m.count_nonzero().item() for m in masks) / (
        heads * 64 * sum(lengths))
    assert abs(dropped - p) < 0.03, f"dropped fraction {dropped} for p={p}"


def test_varlen_dropout_follows_torch_seed():
    # One seed a call from torch's generator: the same manual_seed gives the
    # same output bit for bit, another seed another mask.
    q, k, v = packed_inputs([(100, 100), (37, 90)], 4, 4, 64, torch.float16)
    cu_q, cu_k = offsets([100, 37]), offsets([100, 90])

    def run(seed):
        torch.manual_seed(seed)
        return run_or_skip(lambda: flashfuse.varlen_attention(
            q, k, v, cu_q, cu_k, 100, 100, dropout_p=0.2))
    first = run(3)
    assert torch.equal(first, run(3))
    assert not torch.equal(first, run(4))


def test_varlen_gradients_of_one_sequence_match_the_dense_backward():
    # One sequence is the dense op: the gradients of the two kernel
    # families agree to rounding (dQ's atomics add in another order).
    q, k, v = packed_inputs([(777, 777)], 8, 2, 64, torch.float16)
    dout = torch.randn_like(q)
    cu = offsets([777])
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    out = run_or_skip(lambda: flashfuse.varlen_attention(
        *leaves, cu, cu, 777, 777, is_causal="bottom_right"))
    packed = torch.autograd.grad(out, leaves, dout)
    dense_leaves = [t.transpose(0, 1).unsqueeze(0).clone().requires_grad_()
                    for t in (q, k, v)]
    dense_out = run_or_skip(lambda: flashfuse.attention(
        *dense_leaves, is_causal="bottom_right", enable_gqa=True))
    # The dense backward lives in another artifact than the packed one
    # (gen_suite.py --backward; on sm90 the two cannot share one).
    try:
        dense = torch.autograd.grad(dense_out, dense_leaves,
                                    dout.transpose(0, 1).unsqueeze(0))
    except NotImplementedError as e:
        pytest.skip("no dense backward kernel: " + str(e).splitlines()[0])
    for name, a, b in zip(("dq", "dk", "dv"), packed, dense):
        torch.testing.assert_close(a, b[0].transpose(0, 1), atol=2e-2,
                                   rtol=0, msg=name)


def test_varlen_deterministic_gradients_are_bit_identical():
    pairs = LENGTHS["self"]
    try:
        check_packed_gradients(pairs, torch.float16, 64, "top_left", (8, 2),
                               deterministic=True)
    except NotImplementedError as e:
        assert "deterministic" in str(e) and "backward_dq" in str(e)
        pytest.skip("no deterministic varlen artifact: "
                    + str(e).splitlines()[0])
    q, k, v = packed_inputs(pairs, 8, 2, 64, torch.float16)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    dout = torch.randn_like(q)
    cu = offsets([n for n, _ in pairs])
    runs = []
    for _ in range(2):
        out = flashfuse.varlen_attention(q, k, v, cu, cu, 1000, 1000,
                                         is_causal=True, deterministic=True)
        runs.append(torch.autograd.grad(out, (q, k, v), dout))
    for name, first, second in zip(("dq", "dk", "dv"), *runs):
        assert torch.equal(first, second), f"{name} differs between two runs"


def test_varlen_dropout_deterministic_gradients():
    # The deterministic dQ kernel draws the forward's mask as the main
    # kernel does: the rule per sequence, and two runs of one seed
    # bit-identical.
    pairs = LENGTHS["cross"]
    try:
        check_packed_gradients(pairs, torch.float16, 64, "bottom_right",
                               (8, 2), deterministic=True, dropout_p=0.17,
                               seed=31)
    except NotImplementedError as e:
        assert "deterministic" in str(e)
        pytest.skip("no deterministic varlen dropout artifact: "
                    + str(e).splitlines()[0])
    q, k, v = (t.requires_grad_() for t in packed_inputs(pairs, 8, 2, 64,
                                                          torch.float16))
    dout = torch.randn_like(q)
    cu_q = offsets([p[0] for p in pairs])
    cu_k = offsets([p[1] for p in pairs])
    runs = []
    for _ in range(2):
        torch.manual_seed(7)
        out = flashfuse.varlen_attention(
            q, k, v, cu_q, cu_k, 300, 511, is_causal="bottom_right",
            deterministic=True, dropout_p=0.17)
        runs.append(torch.autograd.grad(out, (q, k, v), dout))
    for name, first, second in zip(("dq", "dk", "dv"), *runs):
        assert torch.equal(first, second), f"{name} differs between two runs"


def test_gradients_of_empty_packs_are_zero():
    # No key anywhere: no kernel runs, and every gradient is 0.
    q, k, v = (t.requires_grad_() for t in packed_inputs(
        [(7, 0), (3, 0)], 4, 4, 64, torch.float16))
    out = flashfuse.varlen_attention(q, k, v, offsets([7, 3]),
                                     offsets([0, 0]), 7, 0)
    dq, = torch.autograd.grad(out.sum(), (q,))
    assert (dq == 0).all()
