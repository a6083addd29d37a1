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


CASES = [  # (causal, window, layout, offset)
    (None, None, 1, 0),
    ("top_left", None, 1, 3),
    ("bottom_right", None, 2, -5),
    (None, (4, 2), 1, 2),
]


@pytest.mark.skipif(not RUNNER.is_file(), reason="needs LLVM 22's mlir-runner")
@pytest.mark.parametrize("lowering", ["naive", "loops"])
@pytest.mark.parametrize("causal,window,layout,offset", CASES)
def test_ir_on_cpu_lowerings(opt_tool, lowering, causal, window, layout,
                             offset):
    """The variant's flash.attention and flash.attention_grad, as
    flashfuse.alibi emits them (one head, Sq = Sk = 16, D = 16, f16; the
    offset Sk - Sq, a value the region reads, forced to other values so that
    the distance's sign is exercised), against flash-attn's bias."""
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
            f"  %sl = tensor.cast %sl0 : tensor<{sl_shape}xf32> to {sl_t}\n"
            f"  %off = arith.constant {offset} : i32\n")
    inputs = "".join(f"  %{n} = arith.constant {_literal(x)} : {t}\n"
                     for n, x in (("q", q), ("k", k), ("v", v), ("do", do)))
    forward = (
        variants.emit_module([v_]) + "func.func private @printMemrefF32("
        "memref<*xf32>)\nfunc.func @main() {\n" + inputs + head +
        f"  %o, %lse = call @alibi_cpu(%q, %k, %v, %sl, %off) : ({t}, {t}, "
        f"{t}, {sl_t}, i32) -> ({t}, {lse_t})\n"
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
        f" %sl, %off) : ({t}, {t}, {t}, {t}, {t}, {lse_t}, {sl_t}, i32) -> "
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
    (`captures f32/2 i32`), cached (the second lookup compiles nothing)."""
    monkeypatch.setenv("FLASHFUSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLASHFUSE_COMPILE", str(compile_tool))
    capability = {"h100": (9, 0), "a100": (8, 0)}[target]
    v = alibi.kernel_variant(torch.bfloat16, 128, 128, 2, False, False, 2)
    for backward in (False, True):
        directory = _compile.compile_variant(v, capability, backward=backward)
        info = artifact.kernel_info(
            directory, kind=artifact.rt.KIND_BACKWARD if backward else None)
        assert info.captures == (("f32", 2), ("i32", -1))
        assert "_causalbr_mod" in info.name
        if target == "h100":
            assert "sm90ws" in info.name  # --recipe=auto-tma
        stamp = (pathlib.Path(directory) / "manifest.txt").stat().st_mtime_ns
        again = _compile.compile_variant(v, capability, backward=backward)
        assert again == directory
        assert (pathlib.Path(again) / "manifest.txt").stat().st_mtime_ns == stamp


def test_variant_names_and_refusals():
    v = alibi.kernel_variant(torch.float16, 64, 64, 0, True, True, 1)
    assert v.name == "alibi_f16_d64_full_window_softcap"
    assert (v.alibi, v.window, v.softcap) == (1, (0, 0), 1.0)
    v = alibi.kernel_variant(torch.bfloat16, 128, 64, 1, False, False, 2)
    assert v.name == "alibi_bh_bf16_d128_dv64_top_left"
    with pytest.raises(ValueError, match="alibi must be 0, 1"):
        variants.KernelVariant("x", "f16", 64, alibi=3)
    with pytest.raises(ValueError, match="dense 16-bit one"):
        variants.KernelVariant("x", "f16", 64, alibi=1, varlen=True)


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
    for extra in (dict(attn_mask=torch.ones(8, 8, dtype=torch.bool)),
                  dict(dropout_p=0.1)):
        with pytest.raises(ValueError, match="alibi_slopes goes with"):
            flashfuse.attention(q, k, v, enable_gqa=True, alibi_slopes=good,
                                **extra)
    # The inputs' device is checked after the slopes, as for every call.
    with pytest.raises(ValueError, match="runs on CUDA tensors"):
        flashfuse.attention(q, k, v, enable_gqa=True, alibi_slopes=good)


def test_varlen_refuses_slopes_and_takes_none():
    """flash_attn_varlen_func takes alibi_slopes too: None passes (code
    written for flash-attn spells it out), slopes are refused before
    anything else is looked at (attention_with_kvcache takes them:
    test_alibi_decode.py)."""
    import flashfuse
    from flashfuse.errors import UnsupportedError
    slopes = torch.rand(4)
    q = torch.randn(10, 4, 64, dtype=torch.float16)
    cu = torch.tensor([0, 10], dtype=torch.int32)
    with pytest.raises(UnsupportedError, match="varlen kernels take no "
                       "score_mod"):
        flashfuse.varlen_attention(q, q, q, cu, cu, 10, 10,
                                   alibi_slopes=slopes)
    with pytest.raises(ValueError, match="CUDA"):  # past the slopes' check
        flashfuse.varlen_attention(q, q, q, cu, cu, 10, 10, alibi_slopes=None)


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
