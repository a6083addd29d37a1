"""flashfuse.attention(..., alibi_slopes=...) on the GPU: FlashAttention's
rule for O and the gradients against flash-attn's bias materialised
(scripts/kernels/check_alibi.py's cases on its quick shapes), and the
refusals that need a GPU. The kernels are compiled on first use; a machine
without flashfuse-compile runs artifacts compiled elsewhere by
`check_alibi.py --compile DIR`, named by FLASHFUSE_TEST_ALIBI_ARTIFACTS=DIR."""

import os

import pytest

torch = pytest.importorskip("torch")

import flashfuse  # noqa: E402


@pytest.fixture(scope="module")
def check(alibi_check):
    return alibi_check


@pytest.mark.parametrize("case", [
    ("bf16", 128, "none", None, 0.0), ("f16", 64, "top_left", None, 0.0),
    ("bf16", 64, "bottom_right", None, 0.0), ("bf16", 128, "none", (64, 0), 0.0),
    ("bf16", 128, "top_left", None, 30.0)])
@pytest.mark.parametrize("layout", [1, 2])
def test_numerics(check, case, layout):
    gen = torch.Generator().manual_seed(1)
    for shape in check.QUICK:
        r = check.check_case(*case, layout, shape, gen)
        assert r["ok"], r


@pytest.mark.parametrize("case", range(2))
def test_deterministic_backward(check, case):
    """deterministic=True: the backward of the op compiled --deterministic
    (its dQ kernel after the main one), within the rule on the quick
    shapes and bit-identical between two calls."""
    dense = [c for c in check.DETERMINISTIC_CASES if not c[6]][case]
    gen = torch.Generator().manual_seed(2)
    for shape in check.QUICK:
        r = check.check_case(*dense[:6], shape, gen, deterministic=True)
        assert r["ok"], r
    torch.manual_seed(0)
    dtype, d, causal, window, _, layout, _ = dense
    b, hq, hkv, sq, sk = check.QUICK[-1]
    dt = check.DTYPES[dtype]
    q = torch.randn(b, hq, sq, d, device="cuda", dtype=dt, requires_grad=True)
    k, v = (torch.randn(b, hkv, sk, d, device="cuda", dtype=dt,
                        requires_grad=True) for _ in range(2))
    slopes = check.slopes_for(b, hq, layout, gen)
    do = torch.randn_like(q)
    grads = []
    for _ in range(2):
        o = flashfuse.attention(q, k, v, is_causal=check.CAUSAL[causal],
                                window=window, enable_gqa=hq != hkv,
                                alibi_slopes=slopes, deterministic=True)
        grads.append(torch.autograd.grad(o, (q, k, v), do))
    for name, x, y in zip(("dq", "dk", "dv"), *grads):
        assert torch.equal(x, y), f"{name} differs between two calls"


def alibi_bias(slopes, b, hq, sq, sk):
    """flash-attn's ALiBi bias [B, Hq, Sq, Sk] in f32: -slope * |i + Sk -
    Sq - j|, slopes [Hq] or [B, Hq]."""
    i = torch.arange(sq, device="cuda")[:, None]
    j = torch.arange(sk, device="cuda")[None, :]
    dist = (i + sk - sq - j).abs().float()
    s = slopes.float().reshape(-1 if slopes.dim() == 2 else 1, hq)
    return -s[:, :, None, None].expand(b, hq, 1, 1) * dist


@pytest.mark.parametrize("case", [0, 1])
def test_dropout(check, case):
    """ALiBi with dropout (flash-attn takes both): O and the gradients
    within FlashAttention's rule against the reference with the bias and
    Philox.h's keep mask (drawn from the seed the call draws after
    torch.manual_seed) materialised."""
    from test_numerics_gpu import assert_close, philox_keep, reference
    dtype, d, causal, _, _, layout, _ = check.DROPOUT_CASES[case]
    b, hq, hkv, sq, sk = 2, 4, 2, 113, 203
    p, seed = 0.17, 5
    dt = check.DTYPES[dtype]
    gen = torch.Generator().manual_seed(4)
    q = torch.randn(b, hq, sq, d, device="cuda", dtype=dt)
    k, v = (torch.randn(b, hkv, sk, d, device="cuda", dtype=dt)
            for _ in range(2))
    do = torch.randn_like(q)
    slopes = check.slopes_for(b, hq, layout, gen)
    torch.manual_seed(seed)
    kernel_seed = int(torch.randint(0, 2**62, (1,)).item())
    drop = philox_keep(kernel_seed, p, b, hq, sq, sk).cuda().float() / (1 - p)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    torch.manual_seed(seed)
    o = flashfuse.attention(*leaves, is_causal=check.CAUSAL[causal],
                            enable_gqa=True, alibi_slopes=slopes,
                            dropout_p=p)
    grads = torch.autograd.grad(o, leaves, do)
    bias = alibi_bias(slopes, b, hq, sq, sk)
    refs = []
    for upcast in (True, False):
        rl = [t.clone().requires_grad_() for t in (q, k, v)]
        ref = reference(*rl, causal, d ** -0.5, upcast, bias=bias,
                        drop=drop)
        refs.append((ref,) + torch.autograd.grad(
            ref, rl, do.float() if upcast else do))
    for name, ours, want, low, factor in zip(("o", "dq", "dk", "dv"),
                                             (o,) + grads, *refs,
                                             (2, 3, 3, 3)):
        assert_close(ours, want, low, factor, name)


def test_refusals(check):
    q, k, v = (torch.randn(1, 2, 64, 64, device="cuda", dtype=torch.float16,
                           requires_grad=True) for _ in range(3))
    slopes = torch.rand(2, device="cuda")
    with pytest.raises(ValueError, match="alibi_slopes is on cpu"):
        flashfuse.attention(q, k, v, alibi_slopes=slopes.cpu())
    # Without a gradient the deterministic mode does not matter.
    with torch.no_grad():
        o = flashfuse.attention(q, k, v, alibi_slopes=slopes,
                                deterministic=True)
    assert o.shape == q.shape and torch.isfinite(o).all()


def test_torch_compile_keeps_one_graph(check):
    """The launches are torch.library ops (flashfuse::alibi_fwd / _bwd):
    a compiled forward and training step trace them without a graph break
    and give the eager results."""
    q, k, v = (torch.randn(2, 4, 300, 64, device="cuda", dtype=torch.bfloat16)
               for _ in range(3))
    slopes = torch.rand(4, device="cuda")

    def step(q, k, v):
        return flashfuse.attention(q, k, v, is_causal=True,
                                   alibi_slopes=slopes).float().square().sum()

    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    eager = step(*leaves)
    want = torch.autograd.grad(eager, leaves)
    compiled = torch.compile(step, fullgraph=True)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    got = compiled(*leaves)
    torch.testing.assert_close(got, eager)
    for g, w in zip(torch.autograd.grad(got, leaves), want):
        torch.testing.assert_close(g, w)
    with torch.no_grad():
        o = torch.compile(lambda q: flashfuse.attention(
            q, k, v, alibi_slopes=slopes) * 2, fullgraph=True)(q)
    torch.testing.assert_close(o, flashfuse.attention(
        q, k, v, alibi_slopes=slopes) * 2)
