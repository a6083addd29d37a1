"""flashfuse.attention's alibi_slopes (flashfuse.alibi): the IR of its
variants run on the CPU lowerings against a float64 reference of flash-attn's
bias (forward and gradients), compiled for the GPU targets by the built
flashfuse-compile, and the call's argument checks. No GPU needed; the GPU's
numerics are scripts/kernels/check_alibi.py's and test_alibi_gpu.py's."""

import pathlib
import re
import subprocess

import pytest

from flashfuse import _compile, artifact, variants

# The wheel's test environment has neither (scripts/test-wheel.sh).
torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
from flashfuse import alibi  # noqa: E402  (imports torch)

RUNNER = pathlib.Path("/usr/lib/llvm-22/bin/mlir-runner")
RUNNER_LIBS = ",".join(str(RUNNER.parent.parent / "lib" / f)
                       for f in ("libmlir_runner_utils.so",
                                 "libmlir_c_runner_utils.so"))


def _literal(a):
    return "dense<" + np.array2string(
        np.asarray(a, np.float32), separator=",", threshold=10**9,
        floatmode="unique", max_line_width=10**9) + ">"


def _to_f32(name, ty, shape):
    """A main-body snippet widening tensor `name` of `ty` to f32 and
    printing it (arith.extf has no tensor bufferization: a linalg.generic)."""
    dims = "x".join(map(str, shape))
    rank = len(shape)
    ids = ", ".join(f"d{i}" for i in range(rank))
    ident = f"affine_map<({ids}) -> ({ids})>"
    par = ", ".join(['"parallel"'] * rank)
    f32 = f"tensor<{dims}xf32>"
    widen = "%w = arith.extf %x : f16 to f32\n    linalg.yield %w : f32" \
        if ty.endswith("xf16>") else "linalg.yield %x : f32"
    elem = "f16" if ty.endswith("xf16>") else "f32"
    return (f"  %{name}_e = tensor.empty() : {f32}\n"
            f"  %{name}_f = linalg.generic {{indexing_maps = [{ident}, {ident}],"
            f" iterator_types = [{par}]}} ins(%{name} : {ty}) outs(%{name}_e :"
            f" {f32}) {{\n  ^bb0(%x: {elem}, %y: f32):\n    {widen}\n"
            f"  }} -> {f32}\n"
            f"  %{name}_m = bufferization.to_buffer %{name}_f : {f32} to "
            f"memref<{dims}xf32>\n"
            f"  %{name}_u = memref.cast %{name}_m : memref<{dims}xf32> to "
            f"memref<*xf32>\n"
            f"  call @printMemrefF32(%{name}_u) : (memref<*xf32>) -> ()\n")


def _run_on_cpu(module, lowering, opt_tool):
    """The arrays main() of `module` prints, after flash-cpu-pipeline with
    `lowering` and mlir-runner."""
    lowered = subprocess.run(
        [str(opt_tool), "-", f"--flash-cpu-pipeline=lowering={lowering}"],
        input=module, capture_output=True, text=True)
    assert lowered.returncode == 0, lowered.stderr[-4000:]
    run = subprocess.run(
        [str(RUNNER), "-e", "main", "-entry-point-result=void",
         f"-shared-libs={RUNNER_LIBS}"], input=lowered.stdout,
        capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-4000:]
    number = r"-?(?:inf|nan|\d+\.?\d*(?:e[-+]?\d+)?)"
    return [np.array([float(x) for x in
                      re.findall(number, block.split("data =", 1)[1])])
            for block in run.stdout.split("Unranked Memref")[1:]]


def _bias(s, slopes, offset):
    """flash-attn's ALiBi over [H, S, S] scores: -slope * |i + off - j|."""
    i = np.arange(s)[:, None]
    j = np.arange(s)[None, :]
    return -slopes[:, None, None] * np.abs(i + offset - j)


def _keep(s, causal, window):
    i = np.arange(s)[:, None]
    j = np.arange(s)[None, :]
    keep = np.ones((s, s), bool)
    if causal:  # top-left and bottom-right agree at Sq = Sk
        keep &= j <= i
    if window:
        keep &= (j >= i - window[0]) if window[0] >= 0 else True
        keep &= (j <= i + window[1]) if window[1] >= 0 else True
    return keep


def _reference(q, k, v, do, scale, bias, keep):
    """(O, LSE, dQ, dK, dV) in float64 of softmax(scale q k^T + bias) v over
    the kept keys, [H, S, D] each."""
    s = np.einsum("hid,hjd->hij", q, k) * scale + bias
    s = np.where(keep, s, -np.inf)
    m = s.max(-1, keepdims=True)
    p = np.exp(s - m)
    lse = (np.log(p.sum(-1)) + m[..., 0])
    p = p / p.sum(-1, keepdims=True)
    o = p @ v
    dp = do @ np.swapaxes(v, 1, 2)
    ds = p * (dp - (do * o).sum(-1, keepdims=True))
    dq = ds @ k * scale
    dk = np.swapaxes(ds, 1, 2) @ q * scale
    dv = np.swapaxes(p, 1, 2) @ do
    return o, lse, dq, dk, dv


CASES = [  # (causal, window, layout)
    (None, None, 1),
    ("top_left", None, 1),
    ("bottom_right", None, 2),
    (None, (4, 2), 1),
]


@pytest.mark.skipif(not RUNNER.is_file(), reason="needs LLVM 22's mlir-runner")
@pytest.mark.parametrize("lowering", ["naive", "loops"])
@pytest.mark.parametrize("causal,window,layout", CASES)
def test_ir_on_cpu_lowerings(opt_tool, lowering, causal, window, layout):
    """The variant's flash.attention and flash.attention_grad, as
    flashfuse.alibi emits them (their `alibi(...)` operand; one head, Sq =
    Sk = 16, D = 16, f16), against flash-attn's bias. Sq != Sk (the
    distance's other offsets) are test/Integration/CPU/alibi.mlir's."""
    offset = 0
    s, d, heads = 16, 16, 1
    v_ = variants.KernelVariant("alibi_cpu", "f16", d, causal=causal,
                                window=window, alibi=layout, seq_len=s)
    rng = np.random.default_rng(7)
    q, k, v, do = (rng.standard_normal((1, heads, s, d)).astype(np.float16)
                   for _ in range(4))
    slopes = np.array([0.375], np.float32)
    t = f"tensor<1x1x{s}x{d}xf16>"
    lse_t = f"tensor<1x1x{s}xf32>"
    sl_t = "tensor<?xf32>" if layout == 1 else "tensor<?x?xf32>"
    sl_shape = "1" if layout == 1 else "1x1"
    sl_lit = _literal(slopes if layout == 1 else slopes[None])
    scale = d ** -0.5
    bias = _bias(s, slopes.astype(np.float64), offset)
    o, lse, dq, dk, dv = _reference(
        *(x.astype(np.float64)[0] for x in (q, k, v, do)), scale, bias,
        _keep(s, causal, window))
    head = (f"  %sl0 = arith.constant {sl_lit} : tensor<{sl_shape}xf32>\n"
            f"  %sl = tensor.cast %sl0 : tensor<{sl_shape}xf32> to {sl_t}\n")
    inputs = "".join(f"  %{n} = arith.constant {_literal(x)} : {t}\n"
                     for n, x in (("q", q), ("k", k), ("v", v), ("do", do)))
    forward = (
        variants.emit_module([v_]) + "func.func private @printMemrefF32("
        "memref<*xf32>)\nfunc.func @main() {\n" + inputs + head +
        f"  %o, %lse = call @alibi_cpu(%q, %k, %v, %sl) : ({t}, {t}, "
        f"{t}, {sl_t}) -> ({t}, {lse_t})\n"
        + _to_f32("o", t, (1, 1, s, d)) + _to_f32("lse", lse_t, (1, 1, s))
        + "  return\n}\n")
    got_o, got_lse = _run_on_cpu(forward, lowering, opt_tool)
    np.testing.assert_allclose(got_o.reshape(o.shape), o, atol=2e-3)
    np.testing.assert_allclose(got_lse.reshape(lse.shape), lse, atol=1e-4)

    # The gradient op, given the reference's O (rounded as the forward
    # returns it) and LSE.
    o16 = o.astype(np.float16)[None]
    backward = (
        variants.emit_module([v_], backward=True)
        + "func.func private @printMemrefF32(memref<*xf32>)\n"
        "func.func @main() {\n" + inputs + head
        + f"  %o = arith.constant {_literal(o16)} : {t}\n"
        + f"  %lse = arith.constant {_literal(lse[None])} : {lse_t}\n"
        + f"  %dq, %dk, %dv = call @grad_alibi_cpu(%do, %q, %k, %v, %o, %lse,"
        f" %sl) : ({t}, {t}, {t}, {t}, {t}, {lse_t}, {sl_t}) -> "
        f"({t}, {t}, {t})\n"
        + "".join(_to_f32(n, t, (1, 1, s, d)) for n in ("dq", "dk", "dv"))
        + "  return\n}\n")
    grads = _run_on_cpu(backward, lowering, opt_tool)
    for got, want in zip(grads, (dq, dk, dv)):
        np.testing.assert_allclose(got.reshape(want.shape), want, atol=1e-2,
                                   rtol=1e-2)


def test_the_reference_tells_the_bias_apart():
    """The CPU test's tolerance separates flash-attn's distance from the
    near misses a wrong region would give (no absolute value, the offset
    ignored or of the wrong sign)."""
    s, d = 16, 16
    rng = np.random.default_rng(7)
    q, k, v, do = (rng.standard_normal((1, s, d)) for _ in range(4))
    slopes = np.array([0.375])
    keep = _keep(s, None, None)
    want = _reference(q, k, v, do, d ** -0.5, _bias(s, slopes, 3),
                      keep)[0]
    i, j = np.arange(s)[:, None], np.arange(s)[None, :]
    for wrong in (-0.375 * (i + 3 - j)[None], _bias(s, slopes, 0),
                  _bias(s, slopes, -3)):
        got = _reference(q, k, v, do, d ** -0.5, wrong, keep)[0]
        assert np.abs(got - want).max() > 1e-2


@pytest.mark.parametrize("target", ["h100", "a100"])
def test_compiles_for_gpu_targets(compile_tool, monkeypatch, tmp_path,
                                  target):
    """Forward and backward artifacts of a causal [B, Hq]-slope variant, as
    alibi.artifact_dir has them compiled: kernels that inline the region
    (`mods 1`, launched by name) and take the slopes and the offset
    (variant alibi 2, the param alibi_slopes, no captures), cached (the
    second lookup compiles nothing)."""
    monkeypatch.setenv("FLASHFUSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLASHFUSE_COMPILE", str(compile_tool))
    capability = {"h100": (9, 0), "a100": (8, 0)}[target]
    v = alibi.kernel_variant(torch.bfloat16, 128, 128, 2, False, False, 2)
    for backward in (False, True):
        directory = _compile.compile_variant(v, capability, backward=backward)
        info = artifact.kernel_info(
            directory, kind=artifact.rt.KIND_BACKWARD if backward else None)
        assert info.captures == () and info.variant.alibi == 2
        assert any(n == "alibi_slopes" for _, n in info.params)
        assert "_causalbr_alibib" in info.name
        if target == "h100":
            assert "sm90ws" in info.name  # --recipe=auto-tma
        stamp = (pathlib.Path(directory) / "manifest.txt").stat().st_mtime_ns
        again = _compile.compile_variant(v, capability, backward=backward)
        assert again == directory
        assert (pathlib.Path(again) / "manifest.txt").stat().st_mtime_ns == stamp


def test_block_sparse_variant_compiles(compile_tool, monkeypatch, tmp_path):
    """A block-sparse ALiBi variant (block_sparse_attention(alibi_slopes=)'s)
    compiles for Hopper on the sm90ws recipe: the forward and the backward
    main kernel take the lists (the backward's transposed) and the
    slopes."""
    monkeypatch.setenv("FLASHFUSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLASHFUSE_COMPILE", str(compile_tool))
    v = alibi.kernel_variant(torch.bfloat16, 64, 64, 1, False, False, 2,
                             sparse=(2, 128, 128))
    for backward in (False, True):
        directory = _compile.compile_variant(v, (9, 0), backward=backward)
        info = artifact.kernel_info(
            directory, kind=artifact.rt.KIND_BACKWARD if backward else None)
        assert (info.variant.alibi, info.variant.block_sparse) == (2, 2)
        names = {n for _, n in info.params}
        # The backward walks the transposed lists (query blocks per key
        # block, docs/KERNEL_ABI.md "Block-sparse backward").
        family = "q" if backward else "kv"
        assert {"alibi_slopes", f"{family}_num_blocks",
                f"full_{family}_num_blocks"} <= names, names
        assert "sm90ws" in info.name


@pytest.mark.parametrize("target", ["h100", "a100"])
def test_deterministic_backward_has_its_dq_kernel(compile_tool, monkeypatch,
                                                  tmp_path, target):
    """deterministic=True's artifact (compiled --deterministic): a main
    kernel without dq_accum and exactly one backward_dq kernel of its
    variant (ALiBi's too), which
    artifact.backward launches after it; an atomic artifact has none."""
    monkeypatch.setenv("FLASHFUSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLASHFUSE_COMPILE", str(compile_tool))
    capability = {"h100": (9, 0), "a100": (8, 0)}[target]
    backward = artifact.rt.KIND_BACKWARD
    for varlen in (False, True):
        v = alibi.kernel_variant(torch.float16, 64, 64, 2, True, False,
                                 1 if varlen else 2, varlen=varlen)
        det = _compile.compile_variant(v, capability, backward=True,
                                       deterministic=True)
        info = artifact.kernel_info(det, kind=backward)
        assert all(name != "dq_accum" for _, name in info.params)
        dq, params = artifact._deterministic_dq_kernel(info)
        assert "grad_q" in params and "dq_accum" not in params
        assert dq.startswith("flash_bwd_dq_") and "_det" in dq
        assert ("_varlen" in dq) == varlen and "_alibi" in dq
        atomic = _compile.compile_variant(v, capability, backward=True)
        assert atomic != det
        with pytest.raises(ValueError, match="has 0 backward_dq kernels"):
            artifact._deterministic_dq_kernel(
                artifact.kernel_info(atomic, kind=backward))


def test_dropout_variants_compile(compile_tool, monkeypatch, tmp_path):
    """ALiBi with dropout (flash-attn takes both): the region's kernels with
    dropout, forward and backward, whose dropout_p and seed
    artifact.forward / backward pass; a kernel without dropout refuses a
    p > 0."""
    monkeypatch.setenv("FLASHFUSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLASHFUSE_COMPILE", str(compile_tool))
    for varlen in (False, True):
        v = alibi.kernel_variant(torch.bfloat16, 128, 128, 2, False, False,
                                 1, varlen=varlen, dropout=True)
        assert v.name.endswith("_bottom_right_dropout") and v.dropout
        for backward in (False, True):
            directory = _compile.compile_variant(v, (9, 0),
                                                 backward=backward)
            info = artifact.kernel_info(
                directory,
                kind=artifact.rt.KIND_BACKWARD if backward else None)
            assert info.variant.dropout and "_dropout" in info.name
            assert {"dropout_p", "seed"} <= {n for _, n in info.params}
            assert artifact._dropout_args(info, 0.1, 7) == (0.1, 7)
    plain = _compile.compile_variant(
        alibi.kernel_variant(torch.bfloat16, 128, 128, 2, False, False, 1),
        (9, 0))
    info = artifact.kernel_info(plain)
    assert artifact._dropout_args(info, 0.0, 0) == (0.0, 0)
    with pytest.raises(ValueError, match="has no dropout"):
        artifact._dropout_args(info, 0.1, 7)
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\)"):
        artifact._dropout_args(info, 1.0, 7)


def test_variant_names_and_refusals():
    v = alibi.kernel_variant(torch.float16, 64, 64, 0, True, True, 1)
    assert v.name == "alibi_f16_d64_full_window_softcap"
    assert (v.alibi, v.window, v.softcap) == (1, (0, 0), 1.0)
    v = alibi.kernel_variant(torch.bfloat16, 128, 64, 1, False, False, 2)
    assert v.name == "alibi_bh_bf16_d128_dv64_top_left"
    with pytest.raises(ValueError, match="alibi must be 0, 1"):
        variants.KernelVariant("x", "f16", 64, alibi=3)
    with pytest.raises(ValueError, match="is a 16-bit one"):
        variants.KernelVariant("x", "e4m3", 64, alibi=1, out_dtype="bf16")
    v = alibi.kernel_variant(torch.float16, 64, 64, 2, False, False, 1,
                             sparse=(2, 128, 64))
    assert v.name == "alibi_f16_d64_bottom_right_bs2_128x64"
    assert (v.alibi, v.block_sparse, v.sparse_blocks) == (1, 2, (128, 64))
    v = alibi.kernel_variant(torch.bfloat16, 128, 128, 2, False, False, 1,
                             varlen=True)
    assert v.name == "alibi_varlen_bf16_d128_bottom_right" and v.varlen


def _qkv(b=2, hq=4, hkv=2, s=8, d=64, dtype=torch.float16):
    return (torch.randn(b, hq, s, d, dtype=dtype),
            torch.randn(b, hkv, s, d, dtype=dtype),
            torch.randn(b, hkv, s, d, dtype=dtype))


def test_argument_errors():
    import flashfuse
    q, k, v = _qkv()
    good = torch.rand(4)
    with pytest.raises(ValueError, match=r"must be \[Hq\] = \[4\] or \[B, Hq\]"
                       r" = \[2, 4\], got \[2\]"):
        flashfuse.attention(q, k, v, enable_gqa=True,
                            alibi_slopes=torch.rand(2))
    with pytest.raises(TypeError, match="must be float32"):
        flashfuse.attention(q, k, v, enable_gqa=True,
                            alibi_slopes=good.half())
    with pytest.raises(TypeError, match="must be a torch.Tensor"):
        flashfuse.attention(q, k, v, enable_gqa=True, alibi_slopes=[0.5] * 4)
    with pytest.raises(ValueError, match="alibi_slopes goes with"):
        flashfuse.attention(q, k, v, enable_gqa=True, alibi_slopes=good,
                            attn_mask=torch.ones(8, 8, dtype=torch.bool))
    # The inputs' device is checked after the slopes, as for every call;
    # dropout goes with ALiBi (flash-attn's dropout_p and alibi_slopes).
    for extra in ({}, dict(dropout_p=0.1)):
        with pytest.raises(ValueError, match="runs on CUDA tensors"):
            flashfuse.attention(q, k, v, enable_gqa=True, alibi_slopes=good,
                                **extra)


def test_block_sparse_argument_errors():
    """block_sparse_attention(alibi_slopes=) checks the slopes as
    flashfuse.attention does, naming itself, then the device."""
    import flashfuse
    q, k, v = _qkv(hkv=4, s=256)
    n = torch.ones(2, 4, 2, dtype=torch.int32)
    i = torch.zeros(2, 4, 2, 2, dtype=torch.int32)
    with pytest.raises(ValueError, match=r"block_sparse_attention: "
                       r"alibi_slopes must be \[Hq\] = \[4\]"):
        flashfuse.block_sparse_attention(q, k, v, (n, i),
                                         alibi_slopes=torch.rand(3))
    with pytest.raises(TypeError, match="must be float32"):
        flashfuse.attention(q, k, v, block_mask=(n, i),
                            alibi_slopes=torch.rand(4).half())
    with pytest.raises(ValueError, match="runs on CUDA tensors"):
        flashfuse.attention(q, k, v, block_mask=(n, i),
                            alibi_slopes=torch.rand(2, 4))


def test_block_sparse_launches_its_artifacts(monkeypatch):
    """alibi.block_sparse_attention (block_sparse_attention's checks done):
    the forward of the block-sparse ALiBi variant with the lists as
    block_mask and the slopes, then through autograd the backward of the
    same variant (deterministic as asked) with the same lists; the slopes
    and lists get no gradient."""
    calls = []

    def artifact_dir(variant, backward, device, deterministic=False):
        calls.append(("dir", variant.name, backward, deterministic))
        return f"dir{int(backward)}"

    def forward(directory, q, k, v, **kw):
        calls.append(("forward", directory, kw))
        b, h, s, _ = q.shape
        return (q.new_ones(b, h, s, v.shape[-1]),
                q.new_zeros(b, h, s, dtype=torch.float32))

    def backward(directory, dout, q, k, v, o, lse, **kw):
        calls.append(("backward", directory, kw))
        return tuple(torch.full_like(t, f) for t, f in ((q, 2), (k, 3), (v, 4)))

    monkeypatch.setattr(alibi, "artifact_dir", artifact_dir)
    monkeypatch.setattr(alibi.artifact, "forward", forward)
    monkeypatch.setattr(alibi.artifact, "backward", backward)
    q, k, v = (t.requires_grad_() for t in _qkv(hkv=4, s=256))
    n = torch.ones(2, 4, 2, dtype=torch.int32)
    i = torch.zeros(2, 4, 2, 2, dtype=torch.int32)
    slopes = torch.rand(2, 4)
    o = alibi.block_sparse_attention(q, k, v, (n, i, None, None), (128, 128),
                                     slopes, 2, 0.125, deterministic=True)
    o.sum().backward()
    name = "alibi_bh_f16_d64_bottom_right_bs1_128x128"
    assert [c[:2] for c in calls] == [("dir", name), ("forward", "dir0"),
                                      ("dir", name), ("backward", "dir1")]
    assert calls[2][2:] == (True, True)  # the backward, deterministic
    for _, _, kw in (calls[1], calls[3]):
        assert kw["scale"] == 0.125
        assert len(kw["block_mask"]) == 2
        assert kw["block_mask"][0] is n and kw["block_mask"][1] is i
        assert torch.equal(kw["alibi_slopes"], slopes)
    assert (q.grad == 2).all() and (k.grad == 3).all() and (v.grad == 4).all()
    # Full lists too: the variant takes both (bs2).
    calls.clear()
    with torch.no_grad():
        alibi.block_sparse_attention(q, k, v, (n, i, n, i), (128, 64),
                                     slopes[0], 0, 0.125)
    assert calls[0][1] == "alibi_f16_d64_full_bs2_128x64"
    assert len(calls[1][2]["block_mask"]) == 4


def test_lengths_past_the_exact_range():
    """The kernels take ALiBi's distance in f32 from integers (exact below
    2^24): longer sequences are refused, for the dense and the packed call,
    before the inputs' device is looked at (meta tensors: no memory)."""
    import flashfuse
    alibi.check_lengths(2**24 - 1, 5)
    for sq, sk in ((2**24, 1), (1, 2**24)):
        with pytest.raises(ValueError, match="shorter than 16777216"):
            alibi.check_lengths(sq, sk)
    q = torch.empty(1, 2, 1, 64, dtype=torch.float16, device="meta")
    k = torch.empty(1, 2, 2**24, 64, dtype=torch.float16, device="meta")
    with pytest.raises(ValueError, match="flashfuse.attention: ALiBi takes "
                       "sequences shorter than 16777216"):
        flashfuse.attention(q, k, k, alibi_slopes=torch.rand(2))
    q = torch.empty(2**24, 2, 64, dtype=torch.float16, device="meta")
    cu = torch.tensor([0, 2**24], dtype=torch.int32)
    with pytest.raises(ValueError, match="flashfuse.varlen_attention: ALiBi "
                       "takes sequences shorter"):
        flashfuse.varlen_attention(q, q, q, cu, cu, 2**24, 2**24,
                                   alibi_slopes=torch.rand(2))


def test_varlen_slope_checks():
    """flash_attn_varlen_func's alibi_slopes: [Hq] or [B, Hq] with B the
    number of sequences, float32, checked before the inputs' device; None
    passes (code written for flash-attn spells it out)."""
    import flashfuse
    q = torch.randn(10, 4, 64, dtype=torch.float16)
    cu = torch.tensor([0, 3, 10], dtype=torch.int32)
    with pytest.raises(ValueError, match=r"flashfuse.varlen_attention: "
                       r"alibi_slopes must be \[Hq\] = \[4\] or \[B, Hq\] = "
                       r"\[2, 4\], got \[10, 4\]"):
        flashfuse.varlen_attention(q, q, q, cu, cu, 10, 10,
                                   alibi_slopes=torch.rand(10, 4))
    with pytest.raises(TypeError, match="must be float32"):
        flashfuse.varlen_attention(q, q, q, cu, cu, 10, 10,
                                   alibi_slopes=torch.rand(4).double())
    for slopes in (None, torch.rand(4), torch.rand(2, 4)):
        with pytest.raises(ValueError, match="CUDA"):  # past the slopes
            flashfuse.varlen_attention(q, q, q, cu, cu, 10, 10,
                                       alibi_slopes=slopes)


# Packed sequences of the varlen CPU test (16 query and 16 key rows, as the
# emitted IR's static totals): Lq < Lk, Lq > Lk, equal, a single row.
VARLEN_Q = (5, 7, 3, 1)
VARLEN_K = (9, 2, 3, 2)


@pytest.mark.skipif(not RUNNER.is_file(), reason="needs LLVM 22's mlir-runner")
@pytest.mark.parametrize("lowering", ["naive", "loops"])
@pytest.mark.parametrize("causal,layout", [(None, 2), ("bottom_right", 1),
                                           ("top_left", 2)])
def test_varlen_ir_on_cpu_lowerings(opt_tool, lowering, causal, layout):
    """A packed batch's ALiBi variant (flashfuse.varlen_attention's IR:
    the region reads the slopes at the sequence b and Lk_b - Lq_b from a
    the op's `alibi(...)` over the packed batch, each sequence's Lk_b - Lq_b
    from the offsets) against each sequence's own float64 reference:
    flash-attn's bias in the sequence's local indices, its causal mask
    aligned by its own lengths, per-sequence slopes with layout 2."""
    s, d = sum(VARLEN_Q), 16
    assert sum(VARLEN_K) == s
    nseq = len(VARLEN_Q)
    v_ = variants.KernelVariant("alibi_varlen_cpu", "f16", d, causal=causal,
                                alibi=layout, varlen=True, seq_len=s)
    rng = np.random.default_rng(11)
    q, k, v, do = (rng.standard_normal((1, 1, s, d)).astype(np.float16)
                   for _ in range(4))
    slopes = (np.array([0.375], np.float32) if layout == 1
              else np.array([[0.25], [0.5], [0.125], [1.0]], np.float32))
    cu_q = np.concatenate([[0], np.cumsum(VARLEN_Q)]).astype(np.int32)
    cu_k = np.concatenate([[0], np.cumsum(VARLEN_K)]).astype(np.int32)
    scale = d ** -0.5
    want = [np.zeros((1, s, d)), np.full((1, s), np.inf),
            np.zeros((1, s, d)), np.zeros((1, s, d)), np.zeros((1, s, d))]
    for b in range(nseq):
        rq = slice(cu_q[b], cu_q[b + 1])
        rk = slice(cu_k[b], cu_k[b + 1])
        lq, lk = VARLEN_Q[b], VARLEN_K[b]
        i = np.arange(lq)[:, None]
        j = np.arange(lk)[None, :]
        slope = slopes.reshape(-1)[b if layout == 2 else 0]
        bias = -float(slope) * np.abs(i + (lk - lq) - j)[None]
        keep = np.ones((lq, lk), bool)
        if causal == "bottom_right":
            keep &= j <= i + lk - lq
        elif causal == "top_left":
            keep &= j <= i
        f = [x.astype(np.float64)[0] for x in (q, k, v, do)]
        # Rows with no visible key (bottom-right, Lq > Lk) keep O = 0,
        # LSE = +inf and dQ = 0, and add nothing to dK, dV: the reference
        # runs over the others.
        seen = keep.any(-1)
        rows = np.arange(cu_q[b], cu_q[b + 1])[seen]
        got = _reference(f[0][:, rows], f[1][:, rk], f[2][:, rk],
                         f[3][:, rows], scale, bias[:, seen], keep[seen])
        want[0][:, rows], want[1][:, rows], want[2][:, rows] = got[:3]
        want[3][:, rk], want[4][:, rk] = got[3:]
    t = f"tensor<1x1x{s}x{d}xf16>"
    lse_t = f"tensor<1x1x{s}xf32>"
    sl_t = "tensor<?xf32>" if layout == 1 else "tensor<?x?xf32>"
    sl_shape = "1" if layout == 1 else f"{nseq}x1"
    # The CPU lowerings need the offsets' static size (the kernels' is a
    # launch argument): the emitted module's [B + 1] made static.
    cu_t = f"tensor<{nseq + 1}xi32>"

    def emit(backward=False):
        return variants.emit_module([v_], backward=backward).replace(
            "tensor<?xi32>", cu_t)

    head = (f"  %sl0 = arith.constant {_literal(slopes)} : "
            f"tensor<{sl_shape}xf32>\n"
            f"  %sl = tensor.cast %sl0 : tensor<{sl_shape}xf32> to {sl_t}\n")
    for n, c in (("cu_q", cu_q), ("cu_k", cu_k)):
        lit = "dense<[" + ", ".join(map(str, c)) + "]>"
        head += f"  %{n} = arith.constant {lit} : {cu_t}\n"
    inputs = "".join(f"  %{n} = arith.constant {_literal(x)} : {t}\n"
                     for n, x in (("q", q), ("k", k), ("v", v), ("do", do)))
    extra = f"%cu_q, %cu_k, %sl) : ({t}, {t}, {t}"
    types = f"{cu_t}, {cu_t}, {sl_t}"
    forward = (
        emit() + "func.func private @printMemrefF32("
        "memref<*xf32>)\nfunc.func @main() {\n" + inputs + head +
        f"  %o, %lse = call @alibi_varlen_cpu(%q, %k, %v, {extra}, {types})"
        f" -> ({t}, {lse_t})\n"
        + _to_f32("o", t, (1, 1, s, d)) + _to_f32("lse", lse_t, (1, 1, s))
        + "  return\n}\n")
    got_o, got_lse = _run_on_cpu(forward, lowering, opt_tool)
    np.testing.assert_allclose(got_o.reshape(want[0].shape), want[0],
                               atol=2e-3)
    np.testing.assert_allclose(got_lse.reshape(want[1].shape), want[1],
                               atol=1e-4)
    o16 = want[0].astype(np.float16)[None]
    lse_in = np.where(np.isinf(want[1]), 0.0, want[1])[None]
    backward = (
        emit(backward=True)
        + "func.func private @printMemrefF32(memref<*xf32>)\n"
        "func.func @main() {\n" + inputs + head
        + f"  %o = arith.constant {_literal(o16)} : {t}\n"
        + f"  %lse = arith.constant {_literal(lse_in)} : {lse_t}\n"
        + f"  %dq, %dk, %dv = call @grad_alibi_varlen_cpu(%do, %q, %k, %v, "
        f"%o, %lse, %cu_q, %cu_k, %sl) : ({t}, {t}, {t}, {t}, {t}, "
        f"{lse_t}, {types}) -> ({t}, {t}, {t})\n"
        + "".join(_to_f32(n, t, (1, 1, s, d)) for n in ("dq", "dk", "dv"))
        + "  return\n}\n")
    grads = _run_on_cpu(backward, lowering, opt_tool)
    for name, got, w in zip(("dQ", "dK", "dV"), grads, want[2:]):
        np.testing.assert_allclose(got.reshape(w.shape), w, atol=1e-2,
                                   rtol=1e-2, err_msg=name)


@pytest.mark.parametrize("target", ["h100", "a100"])
def test_varlen_compiles_for_gpu_targets(compile_tool, monkeypatch, tmp_path,
                                         target):
    """A packed batch's forward and backward artifacts: varlen kernels that
    take the slopes (alibi 1, the param alibi_slopes) and each sequence's
    lengths from the offsets; the launch arguments' checks against them."""
    monkeypatch.setenv("FLASHFUSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLASHFUSE_COMPILE", str(compile_tool))
    capability = {"h100": (9, 0), "a100": (8, 0)}[target]
    v = alibi.kernel_variant(torch.bfloat16, 128, 128, 2, False, False, 1,
                             varlen=True)
    for backward in (False, True):
        directory = _compile.compile_variant(v, capability, backward=backward)
        info = artifact.kernel_info(
            directory, kind=artifact.rt.KIND_BACKWARD if backward else None)
        assert info.captures == () and info.variant.alibi == 1
        assert "_causalbr_alibi_varlen" in info.name and info.variant.varlen
    q = torch.zeros(1, 4, 20, 128)
    cu = torch.tensor([0, 5, 20], dtype=torch.int32)
    named, keep = artifact._varlen_args(info, (cu, cu, 64, 7), q, q)
    assert named["num_seqs"] == (artifact.rt.PARAM_I32, 2)
    assert named["max_seqlen_q"] == (artifact.rt.PARAM_I32, 20)  # the total
    assert named["max_seqlen_k"] == (artifact.rt.PARAM_I32, 7)
    assert named["cu_seqlens_q"][1][1] == 3
    with pytest.raises(ValueError, match="takes a packed batch; pass varlen"):
        artifact._varlen_args(info, None, q, q)
    for bad, match in (((cu.long(), cu, 5, 5), "int32 tensor"),
                       ((cu[:1], cu[:1], 5, 5), "B >= 1"),
                       ((cu, cu[:2], 5, 5), "differ"),
                       ((cu, cu, 0, 5), "max_seqlen_q must be an int >= 1")):
        with pytest.raises(ValueError, match=match):
            artifact._varlen_args(info, bad, q, q)
    with pytest.raises(ValueError, match="are \\[1, H, total, D\\]"):
        artifact._varlen_args(info, (cu, cu, 5, 5), q.expand(2, 4, 20, 128),
                              q)
    dense = _compile.compile_variant(
        alibi.kernel_variant(torch.bfloat16, 128, 128, 2, False, False, 1),
        capability)
    with pytest.raises(ValueError, match="takes no varlen="):
        artifact._varlen_args(artifact.kernel_info(dense), (cu, cu, 5, 5), q,
                              q)
    # The slopes: [Hq] for this kernel (alibi 1), given exactly when the
    # kernel has ALiBi.
    assert set(artifact._alibi_args(info, torch.rand(4), 2, 4,
                                    q.device)) == {"alibi_slopes"}
    with pytest.raises(ValueError, match="has ALiBi; pass alibi_slopes="):
        artifact._alibi_args(info, None, 2, 4, q.device)
    with pytest.raises(ValueError, match=r"float32 tensor \[4\]"):
        artifact._alibi_args(info, torch.rand(2, 4), 2, 4, q.device)


def test_standard_slopes():
    """The ALiBi paper's slopes: geometric for a power of two; otherwise
    the power of two below, then every other slope of twice as many (the
    values BLOOM's and MPT's code give for 12 heads)."""
    import flashfuse
    assert flashfuse.alibi_slopes(8).tolist() == [2.0 ** -k
                                                  for k in range(1, 9)]
    want12 = [2.0 ** -k for k in range(1, 9)] + [2.0 ** -(k / 2)
                                                 for k in (1, 3, 5, 7)]
    torch.testing.assert_close(flashfuse.alibi_slopes(12),
                               torch.tensor(want12))
    assert flashfuse.alibi_slopes(1).tolist() == [2.0 ** -8]
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="positive int"):
            flashfuse.alibi_slopes(bad)
