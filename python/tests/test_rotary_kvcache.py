"""attention_with_kvcache's rotary_cos / rotary_sin / rotary_interleaved
(flash.attention_kvcache's rotary operands) without a GPU: the rotation
against a plain loop written from docs/KVCACHE.md "Rotary", the positions
of the new keys and of the query rows, and the argument checks. The
op's CPU numerics are the lit suite's (test/Integration/CPU/
kvcache-rotary.mlir); the GPU step's are test_rotary_kvcache_gpu.py's."""

import pytest

torch = pytest.importorskip("torch")  # the wheel's test venv has none

import flashfuse  # noqa: E402
from flashfuse import rotary  # noqa: E402

NAME = "flashfuse.attention_with_kvcache"


def tables(rows, pairs, dtype=torch.float16, seed=0):
    g = torch.Generator().manual_seed(seed)
    angle = torch.rand(rows, pairs, generator=g, dtype=torch.float64) * 6.3
    return angle.cos().to(dtype), angle.sin().to(dtype)


def loop_rotate(x, cos, sin, positions, interleaved):
    """The op's formula element by element: each product and the sum in
    f32 (torch float32 scalars), rounded to x's dtype."""
    out = x.clone()
    b, s, h, _ = x.shape
    r = cos.shape[1]
    f = torch.float32
    for bi in range(b):
        for si in range(s):
            p = min(max(int(positions[bi][si]), 0), cos.shape[0] - 1)
            for hi in range(h):
                for e in range(r):
                    e0, e1 = (2 * e, 2 * e + 1) if interleaved else (e, e + r)
                    x0 = x[bi, si, hi, e0].to(f)
                    x1 = x[bi, si, hi, e1].to(f)
                    c, n = cos[p, e].to(f), sin[p, e].to(f)
                    out[bi, si, hi, e0] = (x0 * c - x1 * n).to(x.dtype)
                    out[bi, si, hi, e1] = (x1 * c + x0 * n).to(x.dtype)
    return out


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("d, rotary_dim", [(32, 32), (32, 16), (64, 16)])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_rotate_matches_the_formula(interleaved, d, rotary_dim, dtype):
    g = torch.Generator().manual_seed(d + rotary_dim)
    x = torch.randn(2, 3, 2, d, generator=g).to(dtype)
    cos, sin = tables(40, rotary_dim // 2, dtype)
    # Positions past either end are clamped into the table.
    positions = torch.tensor([[0, 7, 39], [-3, 12, 55]])
    got = rotary.rotate(x, cos, sin, positions, interleaved)
    want = loop_rotate(x, cos, sin, positions, interleaved)
    assert torch.equal(got, want)
    # The tail past rotary_dim is untouched; the input is not modified.
    assert torch.equal(got[..., rotary_dim:], x[..., rotary_dim:])
    assert not torch.equal(got[..., :rotary_dim], x[..., :rotary_dim])


def test_the_pairs_differ():
    x = torch.randn(1, 1, 1, 16, dtype=torch.float16)
    cos, sin = tables(4, 8)
    pos = torch.tensor([[2]])
    assert not torch.equal(rotary.rotate(x, cos, sin, pos, False),
                           rotary.rotate(x, cos, sin, pos, True))


@pytest.mark.parametrize("apart", [True, False])
def test_step_positions(apart):
    b, sq, snew, d = 3, 2, 2, 16
    q = torch.randn(b, sq, 4, d, dtype=torch.float16)
    k_new = torch.randn(b, snew, 2, d, dtype=torch.float16)
    cos, sin = tables(64, 8)
    lens = torch.tensor([0, 5, 60], dtype=torch.int32)
    q_rot, k_rot = rotary.rotate_step(q, k_new, cos, sin, lens, False, apart)
    k_pos = lens.long().view(b, 1) + torch.arange(snew).view(1, snew)
    q_pos = (lens.long().view(b, 1) + torch.arange(sq).view(1, sq) if apart
             else lens.long().view(b, 1).expand(b, sq))
    assert torch.equal(k_rot, loop_rotate(k_new, cos, sin, k_pos, False))
    assert torch.equal(q_rot, loop_rotate(q, cos, sin, q_pos, False))
    # An int length is every sequence's.
    q_int, k_int = rotary.rotate_step(q, k_new, cos, sin, 5, False, apart)
    pos5 = torch.full((b, 1), 5) + torch.arange(snew).view(1, snew)
    assert torch.equal(k_int, loop_rotate(k_new, cos, sin, pos5, False))


def test_checks():
    q = torch.zeros(2, 1, 8, 64, dtype=torch.float16)
    k_new = torch.zeros(2, 1, 2, 64, dtype=torch.float16)
    cos, sin = tables(128, 32)
    assert rotary.check_tables(cos, sin, q, 128, NAME) == 32
    with pytest.raises(ValueError, match="given together"):
        rotary.check_pair(cos, None, k_new, NAME)
    with pytest.raises(ValueError, match="rotary embedding needs k_new"):
        rotary.check_pair(cos, sin, None, NAME)
    with pytest.raises(ValueError, match="has 128 positions but the cache "
                       "holds 129 rows"):
        rotary.check_tables(cos, sin, q, 129, NAME)
    wide_cos, wide_sin = tables(128, 40)
    with pytest.raises(ValueError, match=r"rotary_dim = 80 .* must be in "
                       r"\[2, D = 64\]"):
        rotary.check_tables(wide_cos, wide_sin, q, 128, NAME)
    with pytest.raises(TypeError, match="rotary_cos must have q's dtype"):
        rotary.check_tables(cos.float(), sin, q, 128, NAME)
    with pytest.raises(ValueError, match="rotary_sin has shape"):
        rotary.check_tables(cos, sin[:, :16], q, 128, NAME)
    with pytest.raises(ValueError, match=r"must be \[R, rotary_dim / 2\]"):
        rotary.check_tables(cos[None], sin, q, 128, NAME)
    with pytest.raises(TypeError, match="must be a torch.Tensor"):
        rotary.check_tables([1.0], sin, q, 128, NAME)


def test_attention_with_kvcache_refusals():
    q = torch.zeros(2, 1, 8, 64, dtype=torch.float16)
    k = torch.zeros(2, 128, 2, 64, dtype=torch.float16)
    cos, sin = tables(128, 32)
    call = flashfuse.attention_with_kvcache
    with pytest.raises(ValueError, match="rotary embedding needs k_new"):
        call(q, k, k, 5, rotary_cos=cos, rotary_sin=sin)
    with pytest.raises(ValueError, match="given together"):
        call(q, k, k, 5, rotary_sin=sin)
    with pytest.raises(ValueError, match="rotary_interleaved needs "
                       "rotary_cos"):
        call(q, k, k, 5, rotary_interleaved=True)
    with pytest.raises(ValueError, match="rotary_interleaved must be a bool"):
        call(q, k, k, 5, rotary_cos=cos, rotary_sin=sin, rotary_interleaved=1)


def test_check_script_arguments_match_the_kernels(compile_tool, tmp_path):
    """scripts/kernels/check_rotary_append.py (the GPU check of the fused
    kernel) builds every param of each kernel it launches, and no other:
    two of its cases (halves, and an FP8 paged cache) compiled for h100
    here, its arguments and reference built on the CPU (--dry-run)."""
    import importlib.util
    import pathlib
    import subprocess
    path = (pathlib.Path(__file__).resolve().parents[2] / "scripts" /
            "kernels" / "check_rotary_append.py")
    if not path.is_file():
        pytest.skip("needs the source tree's scripts")
    spec = importlib.util.spec_from_file_location("check_rotary_append", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    gen = torch.Generator().manual_seed(0)
    for case in (script.CASES[0], script.CASES[6]):
        out = tmp_path / script.case_name(case)
        out.mkdir()
        (out / "step.mlir").write_text(script.module(case))
        subprocess.run([str(compile_tool), str(out / "step.mlir"),
                        "--target=h100", "-o", str(out)], check=True,
                       stdout=subprocess.DEVNULL)
        result = script.check_case(case, str(out), gen, dry_run=True)
        assert result["ok"], result


@pytest.mark.parametrize("paged, fp8, pool", [(False, False, False),
                                              (True, True, False),
                                              (False, True, True)])
def test_on_demand_append_and_its_arguments(compile_tool, tmp_path,
                                            monkeypatch, paged, fp8, pool):
    """The rotating kv_append attention_with_kvcache compiles on first use
    (flashfuse.rotary.append_variant, for h100 here): one kernel takes q_rot
    and the tables (and, over a pool of sequences, the pool's indices),
    and append_args builds exactly its params."""
    from flashfuse import _compile
    from flashfuse import _runtime as rt
    monkeypatch.setenv("FLASHFUSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FLASHFUSE_COMPILE", str(compile_tool))
    b, hq, hkv, d, cap, page = 2, 8, 2, 128, 4096, 16
    dt = torch.bfloat16
    q = torch.zeros(b, 1, hq, d, dtype=dt)
    if paged:
        k = torch.zeros(b * cap // page, page, hkv, d)
        table = torch.zeros(b, cap // page, dtype=torch.int32)
    else:
        k = torch.zeros(b + 3 * pool, cap, hkv, d)
        table = None
    rows = torch.tensor([4, 1], dtype=torch.int32) if pool else None
    k = k.to(torch.float8_e4m3fn if fp8 else dt)
    descale = torch.ones(b, hkv) if fp8 else None
    cos, sin = tables(cap, 32, dt)
    variant = rotary.append_variant(q, k, k, table, fp8, 32, True, True,
                                    False, pool)
    directory = _compile.compile_variant(variant, (9, 0))
    m = rt.Manifest.open(directory)
    rotating = [i for i in range(len(m.kernels()))
                if any(p == "q_rot" for _, p in m.params(i))]
    assert len(rotating) == 1
    params = {p for _, p in m.params(rotating[0])}
    k_new = torch.zeros(b, 1, hkv, d, dtype=dt)
    named = rotary.append_args(q, torch.empty_like(q), k, k, k_new, k_new,
                               torch.zeros(b, dtype=torch.int32), table,
                               descale, descale, cos, sin, rows)
    assert set(named) == params
    assert ("cache_batch_idx" in params) == pool
    if pool:
        assert named["cache_batch"][1] == 5


def test_empty_table_refused():
    q = torch.zeros(1, 1, 2, 32, dtype=torch.float16)
    cos, sin = tables(0, 8)
    with pytest.raises(ValueError, match="at least one position"):
        rotary.check_tables(cos, sin, q, 0, NAME)
