"""flashfuse.varlen_attention(..., alibi_slopes=...) on the GPU: a packed
batch's O and gradients against each sequence's own reference with
flash-attn's bias materialised (check_alibi.reference, in f32 and in the
inputs' dtype: FlashAttention's rule over the packed tensors), ragged
lengths with Lq != Lk both ways, a sequence of one row and one without
keys, both slope layouts, GQA, the causal alignments and a window. The
kernels are compiled on first use; a machine without flashfuse-compile
runs artifacts compiled elsewhere by `check_alibi.py --compile DIR`, named
by FLASHFUSE_TEST_ALIBI_ARTIFACTS=DIR."""

import os

import pytest

torch = pytest.importorskip("torch")

import flashfuse  # noqa: E402


@pytest.fixture(scope="module")
def check(alibi_check):
    return alibi_check


# (lens_q, lens_k): Lq < Lk, Lq > Lk (its first rows see no key when
# causal bottom-right), a single row, a sequence without keys, block
# multiples +-1.
LENGTHS = [((17, 1, 130, 64, 5), (33, 1, 127, 64, 0)),
           ((200, 3, 129), (100, 40, 129))]


def _cu(lengths):
    return torch.tensor([0] + list(torch.tensor(lengths).cumsum(0)),
                        dtype=torch.int32, device="cuda")


@pytest.mark.parametrize("lengths", LENGTHS)
@pytest.mark.parametrize("case", range(5))
def test_numerics(check, lengths, case):
    """check_alibi.VARLEN_CASES[case] (one kernel pair each) on both
    LENGTHS."""
    check_packed(check, check.VARLEN_CASES[case], lengths)


def check_packed(check, case, lengths, deterministic=False):
    """O, LSE and the gradients of a packed call of `case` (check_alibi's
    VARLEN_CASES form) against each sequence's reference; returns the
    gradients."""
    dtype, d, causal, window, layout = case
    dtype = check.DTYPES[dtype]
    lens_q, lens_k = lengths
    nseq, hq, hkv = len(lens_q), 8, 2
    gen = torch.Generator().manual_seed(3)
    q = torch.randn(sum(lens_q), hq, d, device="cuda", dtype=dtype)
    k = torch.randn(sum(lens_k), hkv, d, device="cuda", dtype=dtype)
    v = torch.randn(sum(lens_k), hkv, d, device="cuda", dtype=dtype)
    do = torch.randn_like(q)
    slopes = check.slopes_for(nseq, hq, layout, gen)
    cu_q, cu_k = _cu(lens_q), _cu(lens_k)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    o, lse = flashfuse.varlen_attention(
        *leaves, cu_q, cu_k, max(lens_q), max(lens_k),
        is_causal=check.CAUSAL[causal], window=window, alibi_slopes=slopes,
        return_lse=True, check_inputs=True, deterministic=deterministic)
    grads = torch.autograd.grad(o, leaves, do)
    assert o.shape == q.shape and lse.shape == (hq, q.shape[0])

    # Each sequence as a batch of one in [1, H, L, D], its slopes row.
    ref = [torch.zeros(t.shape, device="cuda") for t in (q, q, k, v)]
    low = [torch.zeros(t.shape, device="cuda") for t in (q, q, k, v)]
    sq = sk = 0
    for b in range(nseq):
        lq, lk = lens_q[b], lens_k[b]
        rows, keys = slice(sq, sq + lq), slice(sk, sk + lk)
        sq, sk = sq + lq, sk + lk
        if lq == 0 or lk == 0:
            continue  # O = 0 and no gradient: the zeros above
        seq = [t[r].transpose(0, 1)[None]
               for t, r in ((q, rows), (k, keys), (v, keys), (do, rows))]
        sl = slopes if layout == 1 else slopes[b:b + 1]
        for out, dt in ((ref, torch.float32), (low, dtype)):
            got = check.reference(*seq, sl, causal, window, 0.0, dt)
            for buf, g, r in zip(out, got, (rows, rows, keys, keys)):
                buf[r] = g[0].transpose(0, 1)
    for name, ours, want, pt, slack, factor in zip(
            ("o", "dq", "dk", "dv"), (o,) + grads, ref, low,
            (1e-5, 1e-4, 1e-4, 1e-4), (2, 3, 3, 3)):
        err = (ours.float() - want).abs().max().item()
        err_pt = (pt - want).abs().max().item()
        assert err <= factor * err_pt + slack, (name, err, err_pt)
    # The sequence without keys (first case): O = 0, LSE = +inf.
    if 0 in lens_k:
        b = lens_k.index(0)
        start = sum(lens_q[:b])
        assert (o[start:start + lens_q[b]] == 0).all()
        assert torch.isinf(lse[:, start:start + lens_q[b]]).all()
    return grads


def test_deterministic_backward(check):
    """deterministic=True: the backward of the op compiled --deterministic
    (its dQ kernel launched after the main one, artifact.backward), within
    the rule and bit-identical between two calls."""
    case = next(c for c in check.DETERMINISTIC_CASES if c[6])
    dtype, d, causal, window, _, layout, _ = case
    check_packed(check, (dtype, d, causal, window, layout), LENGTHS[0],
                 deterministic=True)
    torch.manual_seed(0)
    lens = LENGTHS[0]
    q = torch.randn(sum(lens[0]), 8, d, device="cuda",
                    dtype=check.DTYPES[dtype], requires_grad=True)
    k, v = (torch.randn(sum(lens[1]), 2, d, device="cuda",
                        dtype=check.DTYPES[dtype], requires_grad=True)
            for _ in range(2))
    slopes = flashfuse.alibi_slopes(8, device="cuda")
    do = torch.randn_like(q)
    grads = []
    for _ in range(2):
        o = flashfuse.varlen_attention(
            q, k, v, _cu(lens[0]), _cu(lens[1]), max(lens[0]), max(lens[1]),
            is_causal=check.CAUSAL[causal], window=window,
            alibi_slopes=slopes, deterministic=True)
        grads.append(torch.autograd.grad(o, (q, k, v), do))
    for name, a, b in zip(("dq", "dk", "dv"), *grads):
        assert torch.equal(a, b), f"{name} differs between two calls"


def test_matches_dense_alibi_on_one_sequence(check):
    """A batch of one sequence is flashfuse.attention with the same slopes
    (the dense and the packed kernels, to the rule's tolerance)."""
    q, k, v = (torch.randn(1, 4, 300, 64, device="cuda", dtype=torch.bfloat16)
               for _ in range(3))
    slopes = flashfuse.alibi_slopes(4, device="cuda")
    dense = flashfuse.attention(q, k, v, is_causal=True, alibi_slopes=slopes)
    cu = torch.tensor([0, 300], dtype=torch.int32, device="cuda")
    packed = flashfuse.varlen_attention(
        *(t[0].transpose(0, 1) for t in (q, k, v)), cu, cu, 300, 300,
        is_causal=True, alibi_slopes=slopes)
    torch.testing.assert_close(packed, dense[0].transpose(0, 1), atol=2e-2,
                               rtol=2e-2)


def test_dropout(check):
    """Packed ALiBi with dropout: each sequence's O and gradients within
    the rule against its reference with the bias and the keep mask drawn at
    the sequence's index and local indices materialised."""
    from test_alibi_gpu import alibi_bias
    from test_numerics_gpu import assert_close, philox_keep, reference
    dtype, d, causal, _, _, layout, _ = check.DROPOUT_CASES[2]
    dt = check.DTYPES[dtype]
    lens_q, lens_k = LENGTHS[0]
    hq, hkv, p, seed = 8, 2, 0.17, 9
    q = torch.randn(sum(lens_q), hq, d, device="cuda", dtype=dt)
    k, v = (torch.randn(sum(lens_k), hkv, d, device="cuda", dtype=dt)
            for _ in range(2))
    do = torch.randn_like(q)
    slopes = flashfuse.alibi_slopes(hq, device="cuda")
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    torch.manual_seed(seed)
    kernel_seed = int(torch.randint(0, 2**62, (1,)).item())
    torch.manual_seed(seed)
    o = flashfuse.varlen_attention(
        *leaves, _cu(lens_q), _cu(lens_k), max(lens_q), max(lens_k),
        is_causal=check.CAUSAL[causal], alibi_slopes=slopes, dropout_p=p)
    grads = torch.autograd.grad(o, leaves, do)
    # (f32, low-precision) references of O, dQ, dK, dV, packed: the rule
    # over the whole batch (test_varlen_gpu.check_packed_gradients says
    # why, with dropout).
    whole = [(torch.zeros(t.shape, device="cuda"),
              torch.zeros(t.shape, device="cuda", dtype=dt))
             for t in (o, q, k, v)]
    sq = sk = 0
    for i, (lq, lk) in enumerate(zip(lens_q, lens_k)):
        rows, keys = slice(sq, sq + lq), slice(sk, sk + lk)
        sq, sk = sq + lq, sk + lk
        if lq == 0 or lk == 0:
            continue
        seq = [t[r].transpose(0, 1)[None]
               for t, r in ((q, rows), (k, keys), (v, keys))]
        d_i = do[rows].transpose(0, 1)[None]
        drop = philox_keep(kernel_seed, p, [i], hq, lq, lk).cuda().float() \
            / (1 - p)
        bias = alibi_bias(slopes, 1, hq, lq, lk)
        refs = []
        for upcast in (True, False):
            rl = [t.clone().requires_grad_() for t in seq]
            ref = reference(*rl, causal, d ** -0.5, upcast, bias=bias,
                            drop=drop)
            refs.append((ref,) + torch.autograd.grad(
                ref, rl, d_i.float() if upcast else d_i))
        for (full, full_low), r, got, low in zip(
                whole, (rows, rows, keys, keys), *refs):
            full[r] = got[0].transpose(0, 1)
            full_low[r] = low[0].transpose(0, 1)
    for name, ours, (want, low), factor in zip(
            ("o", "dq", "dk", "dv"), (o,) + grads, whole, (2, 3, 3, 3)):
        assert_close(ours, want, low, factor, name)


def test_refusals(check):
    q = torch.randn(20, 2, 64, device="cuda", dtype=torch.float16,
                    requires_grad=True)
    cu = torch.tensor([0, 20], dtype=torch.int32, device="cuda")
    slopes = torch.rand(2, device="cuda")
    with pytest.raises(ValueError, match="alibi_slopes is on cpu"):
        flashfuse.varlen_attention(q, q, q, cu, cu, 20, 20,
                                   alibi_slopes=slopes.cpu())
