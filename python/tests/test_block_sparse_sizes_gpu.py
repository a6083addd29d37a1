"""flashfuse.block_sparse_attention over BlockMasks of other block sizes
than 128 x 128 (64 x 64, 128 x 64, 64 x 128), forward and backward, on the
GPU: O, dQ, dK and dV against attention over the keys the lists keep
(check_block_sparse.visible_mask), in f32 and in the inputs' dtype, by
FlashAttention's rule. flash-select-config fits the tiles to the sparse
blocks (the sm80 recipe where the wgmma ones' 128-row or 128-key tiles do
not divide them). The kernels are compiled on first use, or found where
FLASHFUSE_KERNEL_DIR names them (for a machine without flashfuse-compile:
the artifacts of `variants(case)` compiled elsewhere by
flashfuse._compile.compile_variant)."""

import pytest

torch = pytest.importorskip("torch")

from conftest import gpu_script  # noqa: E402

# (dtype, D, causal, (BQ, BK), lists mode: 1 partial, 2 partial + full,
# (B, Hq, Hkv, Sq, Sk)); causal cases have Sq = Sk (the lists' causal is
# the top-left one there).
CASES = [
    ("bf16", 128, False, (64, 64), 2, (2, 4, 2, 300, 520)),
    ("bf16", 128, True, (64, 64), 1, (1, 4, 4, 333, 333)),
    ("f16", 64, False, (128, 64), 2, (1, 4, 2, 700, 257)),
    ("bf16", 64, True, (64, 128), 2, (2, 2, 1, 400, 400)),
    ("f16", 128, False, (64, 128), 1, (1, 2, 2, 129, 640)),
]
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}


def reference(q, k, v, do, keep, dtype):
    """(O, dQ, dK, dV) over `keep`, computed in `dtype`; rows without a key
    give 0."""
    leaves = [t.detach().to(dtype).requires_grad_() for t in (q, k, v)]
    g = q.shape[1] // k.shape[1]
    kk, vv = (t.repeat_interleave(g, 1) for t in leaves[1:])
    s = (leaves[0] @ kk.transpose(-1, -2)) * q.shape[-1] ** -0.5
    p = torch.softmax(s.float().masked_fill(~keep, float("-inf")), -1)
    o = p.nan_to_num(0.0).to(dtype) @ vv
    grads = torch.autograd.grad(o, leaves, do.to(dtype))
    return [t.float() for t in (o,) + grads]


def variants(case):
    """The runtime variants (forward, backward) of CASES[case]."""
    from flashfuse import _runtime as rt
    dtype, d, causal, (bq, bk), mode, _ = CASES[case]
    out = []
    for kind in (rt.KIND_FORWARD, rt.KIND_BACKWARD):
        v = rt.Variant(kind, {"bf16": rt.DTYPE_BF16,
                              "f16": rt.DTYPE_F16}[dtype], d, d,
                       rt.CAUSAL_TOP_LEFT if causal else rt.CAUSAL_NONE)
        v.block_sparse, v.sparse_block_q, v.sparse_block_k = mode, bq, bk
        out.append(v)
    return out


@pytest.mark.parametrize("case", range(len(CASES)))
def test_numerics(case):
    import flashfuse
    cbs = gpu_script("check_block_sparse")
    dtype, d, causal, (bq, bk), mode, (b, hq, hkv, sq, sk) = CASES[case]
    dt = DTYPES[dtype]
    gen = torch.Generator().manual_seed(case)
    torch.manual_seed(case)
    q, do = (torch.randn(b, hq, sq, d, device="cuda", dtype=dt)
             for _ in range(2))
    k, v = (torch.randn(b, hkv, sk, d, device="cuda", dtype=dt)
            for _ in range(2))
    n, i, fn, fi = cbs.random_lists(b, hq, sq, sk, 0.5, 0.4, gen, bq, bk)
    lists = (n, i, fn, fi) if mode == 2 else (n, i, None, None)
    keep = cbs.visible_mask(lists, sq, sk, causal, bq, bk)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    o = flashfuse.block_sparse_attention(
        *leaves, kv_num_blocks=n, kv_indices=i, full_kv_num_blocks=lists[2],
        full_kv_indices=lists[3], block_size=(bq, bk), is_causal=causal,
        enable_gqa=hq != hkv, check=True)
    ours = [o] + list(torch.autograd.grad(o, leaves, do))
    ref = reference(q, k, v, do, keep, torch.float32)
    low = reference(q, k, v, do, keep, dt)
    for name, x, want, pt, slack, factor in zip(
            ("O", "dQ", "dK", "dV"), ours, ref, low,
            (1e-5, 1e-4, 1e-4, 1e-4), (2, 3, 3, 3)):
        err = (x.float() - want).abs().max().item()
        bound = factor * (pt - want).abs().max().item() + slack
        assert err <= bound, (CASES[case], name, err, bound)
