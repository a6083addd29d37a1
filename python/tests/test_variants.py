"""The variant -> MLIR emitter (flashfuse.variants): every feature it writes
parses and verifies with flashfuse-opt, and scripts/kernels/gen_suite.py
writes the kernel library's suites through it."""

import dataclasses
import importlib.util
import itertools
import subprocess
import sys

import pytest

from conftest import ROOT
from flashfuse import _runtime as rt
from flashfuse.variants import KernelVariant, emit_module, from_runtime

GEN_SUITE = ROOT / "scripts" / "kernels" / "gen_suite.py"

# One variant per feature, and features combined.
FEATURES = [
    KernelVariant("plain", "f16", 64),
    KernelVariant("dv", "bf16", 64, head_dim_v=128),
    KernelVariant("causal_br", "bf16", 128, causal="bottom_right"),
    KernelVariant("window_left_only", "f16", 128, window=(64, -1)),
    KernelVariant("window_both", "f16", 128, window=(8, 0)),
    KernelVariant("softcap", "f16", 64, softcap=30.0),
    KernelVariant("tiny_dropout", "f16", 64, dropout=1e-05),
    KernelVariant("out_f32", "bf16", 128, causal="top_left", out_dtype="f32"),
    KernelVariant("everything", "bf16", 96, causal="top_left", window=(16, 0),
                  softcap=50.0, bias=True, mask=True, dropout=0.1,
                  tiles=(64, 32, 4, 1), with_forward=True),
]


def verify(opt, text):
    """flashfuse-opt parses and verifies `text`; returns its output."""
    proc = subprocess.run([str(opt), "-"], input=text, capture_output=True,
                          text=True)
    assert proc.returncode == 0, f"flashfuse-opt rejected:\n{text}\n{proc.stderr}"
    return proc.stdout


def lowered_kernels(opt, text, lower_options=""):
    """The gpu.func lines of `text` through flash-select-config (h100) and
    flash-lower-to-gpu (sm_90a, plus `lower_options`)."""
    proc = subprocess.run(
        [str(opt), "-", "--flash-select-config=target=h100",
         f"--flash-lower-to-gpu=chip=sm_90a {lower_options}".strip()],
        input=text, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return [l for l in proc.stdout.splitlines() if "gpu.func @" in l]


@pytest.mark.parametrize("backward", [False, True], ids=["forward", "backward"])
def test_every_feature_parses(opt_tool, backward):
    out = verify(opt_tool, emit_module(FEATURES, backward=backward))
    op = "flash.attention_grad" if backward else "flash.attention"
    assert out.count(f"{op} ") == len(FEATURES)
    # Every optional operand and attribute made it into the ops.
    for needle in ("bias(", "mask(", "seed(", "#flash.causal<bottom_right>",
                   "window_left = 64", "softcap", "dropout_p",
                   "#flash.config<sm80, block_m = 64, block_n = 32, warps = 4,"
                   " stages = 1>"):
        assert needle in out, needle
    # out_dtype makes the forward's O f32; the gradient op's O operand and
    # results stay in the inputs' dtype.
    assert ("-> tensor<1x1x128x128xf32>, tensor<1x1x128xf32>" in out) == (
        not backward)


def test_out_dtype_emission():
    v = KernelVariant("ring", "f16", 64, out_dtype="f32")
    text = emit_module([v])
    assert ("-> (tensor<1x1x128x64xf32>, tensor<1x1x128xf32>)" in text
            and "tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, "
                "tensor<1x1x128x64xf16> -> tensor<1x1x128x64xf32>" in text)
    # A backward variant's forward (with_forward) gives the O the gradient
    # takes: the inputs' dtype, whatever out_dtype says.
    both = emit_module([dataclasses.replace(v, with_forward=True)],
                       backward=True)
    assert "xf16>, tensor<1x1x128xf32>" in both and "x64xf32>" not in both


def test_every_runtime_variant_parses(opt_tool):
    """The IR compiled on demand: all kinds, dtypes, causal modes and flags
    of the runtime's Variant."""
    forward, backward = [], []
    flags = itertools.product((0, 1), repeat=6)
    for kind, dtype, causal, (window, softcap, bias, mask, dropout,
                              out_f32) in \
            itertools.product((rt.KIND_FORWARD, rt.KIND_BACKWARD),
                              (rt.DTYPE_F16, rt.DTYPE_BF16),
                              (0, 1, 2), flags):
        if out_f32 and kind != rt.KIND_FORWARD:
            continue  # forward kernels only (test_runtime_variant_mapping)
        v, is_backward = from_runtime(rt.Variant(
            kind, dtype, 64, 64, causal, window, softcap, bias, mask,
            dropout, 0, out_f32))
        assert is_backward == (kind != rt.KIND_FORWARD)
        assert v.out_dtype == ("f32" if out_f32 else None)
        (backward if is_backward else forward).append(v)
    names = [v.name for v in forward]
    assert len(set(names)) == len(names)  # one function per variant
    verify(opt_tool, emit_module(forward))
    verify(opt_tool, emit_module(backward, backward=True))


def test_runtime_variant_mapping():
    v, backward = from_runtime(rt.Variant(rt.KIND_BACKWARD_DQ, rt.DTYPE_BF16,
                                          128, 64, rt.CAUSAL_BOTTOM_RIGHT, 1,
                                          0, 1, 0, 1))
    assert backward
    assert (v.dtype, v.head_dim, v.head_dim_v, v.causal) == (
        "bf16", 128, 64, "bottom_right")
    assert v.window and v.bias and v.dropout and not v.softcap and not v.mask
    assert v.name == "bf16_d128_dv64_bottom_right_window_bias_dropout"
    # out_f32 selects the forward whose O is f32, a kernel of its own.
    v, backward = from_runtime(rt.Variant(rt.KIND_FORWARD, rt.DTYPE_F16, 64,
                                          64, rt.CAUSAL_TOP_LEFT, 0, 0, 0, 0,
                                          0, 0, 1))
    assert not backward and v.out_dtype == "f32"
    assert v.name == "f16_d64_top_left_of32"
    assert "-> tensor<1x1x128x64xf32>" in emit_module([v])
    with pytest.raises(ValueError, match="only forward kernels write an f32"):
        from_runtime(rt.Variant(rt.KIND_BACKWARD, rt.DTYPE_F16, 64, 64, 0, 0,
                                0, 0, 0, 0, 0, 1))


@pytest.mark.parametrize("kwargs, message", [
    (dict(dtype="f32"), "dtype"),
    (dict(head_dim=0), "head_dim"),
    (dict(causal=True), "causal"),
    (dict(window=(64, -2)), "window"),
    (dict(softcap=float("inf")), "softcap"),
    (dict(dropout=1.0), "dropout"),
    (dict(tiles=(64, 64, 4)), "tiles"),
    (dict(out_dtype="f16"), "out_dtype"),
    (dict(name="has space"), "symbol name"),
])
def test_invalid_variants_are_rejected(kwargs, message):
    args = dict(name="v", dtype="f16", head_dim=64)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        KernelVariant(**args)


def _gen_suite():
    spec = importlib.util.spec_from_file_location("gen_suite", GEN_SUITE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("flags", [[], ["--backward"],
                                   ["--tiles", "64,32,4,1"]])
def test_gen_suite_writes_through_the_package(opt_tool, tmp_path, flags):
    gen = _gen_suite()
    # No emitter of its own: the library and on-demand kernels share one.
    assert gen.emit_module is emit_module
    out = tmp_path / "suite.mlir"
    subprocess.run([sys.executable, str(GEN_SUITE), "-o", str(out)] + flags,
                   check=True)
    text = out.read_text()
    suite = gen.backward_suite() if "--backward" in flags else gen.default_suite()
    if "--tiles" in flags:
        suite = [dataclasses.replace(v, tiles=(64, 32, 4, 1)) for v in suite]
    assert text.endswith(emit_module(suite, backward="--backward" in flags))
    verify(opt_tool, text)


def test_library_has_the_f32_output_forwards():
    """The forwards ring attention merges by LSE, writing O in f32: f16 and
    bf16, D = 64 and 128, full and top-left causal; after every variant
    the library had before them and before the Gemma-2 ones added since, so
    that the other kernels' PTX stays as it was."""
    suite = _gen_suite().default_suite()
    f32 = [v for v in suite if v.out_dtype == "f32"]
    first = suite.index(f32[0])
    assert len(f32) == 8 and suite[first:first + 8] == f32
    assert suite[first + 8:] == (_gemma2(suite) + _gemma3(suite)
                                 + _masked(suite) + _mla(suite))
    assert {(v.dtype, v.head_dim, v.causal) for v in f32} == set(
        itertools.product(("f16", "bf16"), (64, 128), (None, "top_left")))


def _gemma2(suite):
    return [v for v in suite if v.softcap and v.head_dim in (128, 256)
            and (v.causal or v.window)]


def _gemma3(suite):
    return [v for v in suite if v.head_dim == 256 and v.window
            and not v.softcap]


def _masked(suite):
    return [v for v in suite if v.mask]


def _mla(suite):
    return [v for v in suite if v.head_dim_v != v.head_dim]


def test_library_has_gemma2_forwards():
    """Gemma-2's attention (the logit softcap with causality, and with the
    sliding window that flashfuse.attention runs as the window alone), f16
    and bf16, D = 128 and 256: after the others but Gemma-3's (the other
    kernels' PTX stays as it was)."""
    suite = _gen_suite().default_suite()
    gemma = _gemma2(suite)
    assert len(gemma) == 8 and suite[-26:-18] == gemma
    assert {(v.dtype, v.head_dim, v.causal, v.window) for v in gemma} == {
        (dtype, d, causal, window) for dtype in ("f16", "bf16")
        for d in (128, 256)
        for causal, window in (("top_left", None), (None, (64, 0)))}


def test_library_has_gemma3_windows():
    """Gemma-3's sliding layers at D = 256 (the window without a softcap),
    f16 and bf16: after the others but the masked and MLA forwards."""
    suite = _gen_suite().default_suite()
    assert suite[-18:-16] == _gemma3(suite)
    assert [(v.dtype, v.window, v.causal) for v in suite[-18:-16]] == [
        ("f16", (64, 0), None), ("bf16", (64, 0), None)]


def test_library_has_masked_forwards():
    """A boolean mask (transformers' padded batches) at D = 64, 128 and 256,
    then with Gemma-2's softcap at D = 128 and 256, f16 and bf16, before
    the MLA forwards; the sm90ws suite, whose forward takes no mask, leaves
    them out."""
    gen = _gen_suite()
    suite = gen.default_suite()
    assert suite[-16:-6] == _masked(suite)
    assert [(v.dtype, v.head_dim, v.causal, v.window, v.softcap)
            for v in suite[-16:-6]] == [
        (dtype, d, None, None, None) for dtype in ("f16", "bf16")
        for d in (64, 128, 256)] + [
        (dtype, d, None, None, 30.0) for dtype in ("f16", "bf16")
        for d in (128, 256)]
    assert not _masked(gen.sm90ws_suite())


def test_library_has_mla_forwards():
    """DeepSeek's MLA prefill, D = 192 with Dv = 128, f16 and bf16, full,
    causal and bottom-right causal: last in the suite (the other kernels'
    PTX stays as it was), and in the sm90ws suite too."""
    gen = _gen_suite()
    suite = gen.default_suite()
    mla = _mla(suite)
    assert suite[-6:] == mla
    assert [(v.dtype, v.head_dim, v.head_dim_v, v.causal) for v in mla] == [
        (dtype, 192, 128, causal) for dtype in ("f16", "bf16")
        for causal in (None, "top_left", "bottom_right")]
    assert _mla(gen.sm90ws_suite()) == mla


@pytest.mark.parametrize("target", ["a100", "h100"])
def test_headdims_suite_gets_configs(opt_tool, tmp_path, target):
    """gen_suite.py --headdims: gradient ops with their forwards for the head
    dims served on padded tiles (D = 8-256, D = 192 with Dv = 128), forward
    ops alone for D = 256 (no backward); flash-select-config gives every op
    a config, the sm80 recipe's except the forwards of D = 256 and of D =
    192 with Dv = 128 on H100 (the sm90 recipe's)."""
    gen = _gen_suite()
    out = tmp_path / "suite.mlir"
    subprocess.run([sys.executable, str(GEN_SUITE), "-o", str(out),
                    "--headdims"], check=True)
    suite = gen.headdims_suite()
    assert {(v.head_dim, v.head_dim_v) for v in suite} == set(gen.HEADDIMS)
    text = out.read_text()
    assert text.endswith(gen.headdims_module(suite, ""))
    proc = subprocess.run(
        [str(opt_tool), str(out), f"--flash-select-config=target={target}"],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert len(suite) == 60
    lines = proc.stdout.splitlines()
    grads = [l for l in lines if "flash.attention_grad" in l]
    fwds = [l for l in lines if "flash.attention " in l]
    assert len(grads) == len(suite) and len(fwds) == len(suite)
    assert all("config = #flash.config<sm80" in l for l in grads)
    sm90 = [l for l in fwds if "#flash.config<sm90" in l]
    assert all("x256x" in l or "x192x" in l for l in sm90)
    assert len(sm90) == (12 if target == "h100" else 0)
    assert all("config = #flash.config<" in l for l in fwds)


# ---- packed variable-length batches (varlen) -------------------------------

VARLEN = [
    KernelVariant("vl_plain", "f16", 64, varlen=True),
    KernelVariant("vl_causal_br", "bf16", 128, causal="bottom_right",
                  varlen=True),
    KernelVariant("vl_window_softcap", "f16", 128, causal="top_left",
                  window=(32, 0), softcap=30.0, varlen=True),
]


def test_varlen_variants_parse_and_lower(opt_tool):
    """The varlen operands are written where the op's syntax has them, and
    the ops get configs and lower to varlen kernels."""
    text = emit_module(VARLEN)
    assert text.count("varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>)") \
        == len(VARLEN)
    verify(opt_tool, text)
    kernels = lowered_kernels(opt_tool, text)
    assert len(kernels) == len(VARLEN)
    assert all("_varlen(" in l and "varlen = 1" in l for l in kernels)


def test_varlen_runtime_variant_mapping():
    v, backward = from_runtime(rt.Variant(rt.KIND_FORWARD, rt.DTYPE_BF16,
                                          128, 128, rt.CAUSAL_TOP_LEFT,
                                          softcap=1, varlen=1))
    assert not backward and v.varlen and v.softcap
    assert v.name == "bf16_d128_top_left_softcap_varlen"
    dense, _ = from_runtime(rt.Variant(rt.KIND_FORWARD, rt.DTYPE_BF16, 128,
                                       128, rt.CAUSAL_TOP_LEFT))
    assert not dense.varlen and dense.name == "bf16_d128_top_left"
    # The backward of a packed batch: its gradient op, varlen.
    grad, backward = from_runtime(rt.Variant(rt.KIND_BACKWARD, rt.DTYPE_BF16,
                                             128, 128, varlen=1))
    assert backward and grad.varlen and grad.name == "bf16_d128_full_varlen"


def test_varlen_variants_refuse_what_the_op_refuses():
    for flag in ("bias", "mask"):
        with pytest.raises(ValueError, match="no bias or mask"):
            KernelVariant("v", "f16", 64, varlen=True, **{flag: True})


def test_varlen_dropout_variants_lower(opt_tool):
    """Dropout over a packed batch: the runtime's variant maps to a varlen
    op with a seed, whose forward and backward lower to varlen dropout
    kernels (the dense preprocess and postprocess around the backward's)."""
    fwd, backward = from_runtime(rt.Variant(rt.KIND_FORWARD, rt.DTYPE_BF16,
                                            128, 128, rt.CAUSAL_BOTTOM_RIGHT,
                                            dropout=1, varlen=1))
    assert not backward and fwd.varlen and fwd.dropout
    grad, backward = from_runtime(rt.Variant(rt.KIND_BACKWARD, rt.DTYPE_F16,
                                             64, 64, dropout=1, varlen=1))
    assert backward and grad.varlen and grad.dropout
    for text in (emit_module([fwd]), emit_module([grad], backward=True)):
        assert "seed(%s) varlen(%cu_q, %cu_k" in text
        kernels = lowered_kernels(opt_tool, text)
        assert any("_dropout_varlen(" in l for l in kernels), kernels
        assert all("dropout = 1" in l for l in kernels)


def test_varlen_backward_variants_parse_and_lower(opt_tool):
    """The gradient ops of packed batches carry the varlen operands, and
    lower to the varlen backward kernel between the dense preprocess and
    postprocess (deterministic: and the varlen dQ kernel)."""
    text = emit_module(VARLEN, backward=True)
    assert text.count("flash.attention_grad") == len(VARLEN)
    assert text.count("varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>)") \
        == len(VARLEN)
    verify(opt_tool, text)
    for det in ("false", "true"):
        kernels = lowered_kernels(opt_tool, text, f"deterministic={det}")
        varlen = [l for l in kernels if "_varlen(" in l]
        assert len(varlen) == len(VARLEN) * (2 if det == "true" else 1)
        assert all("varlen = 1" in l for l in varlen)
        assert all("varlen = 1" not in l for l in kernels if l not in varlen)
        assert any("@flash_bwd_pre_" in l for l in kernels)
        assert any("@flash_bwd_post_" in l for l in kernels)


def test_gen_suite_varlen(opt_tool, tmp_path):
    """gen_suite.py --varlen: f16/bf16 x D = 64/128 x full/causal
    top-left/bottom-right forwards of packed batches (and a window and
    softcap at D = 128), and the same dense forwards (the bench's other
    side), through the package's emitter."""
    gen = _gen_suite()
    out = tmp_path / "suite.mlir"
    subprocess.run([sys.executable, str(GEN_SUITE), "-o", str(out),
                    "--varlen"], check=True)
    suite = gen.varlen_suite()
    assert len(suite) == 38 and sum(v.varlen for v in suite) == 26
    # D = 256 causal, with and without the softcap, then MLA's (192, 128)
    # in the three causal modes, last (the kernels before them keep their
    # place).
    assert [(v.dtype, v.head_dim, v.causal, v.softcap)
            for v in suite[-10:-6]] \
        == [(t, 256, "top_left", cap) for t in ("f16", "bf16")
            for cap in (None, 30.0)]
    assert [(v.dtype, v.head_dim, v.head_dim_v, v.causal, v.varlen)
            for v in suite[-6:]] \
        == [(t, 192, 128, c, True) for t in ("f16", "bf16")
            for c in (None, "top_left", "bottom_right")]
    plain = {(v.dtype, v.head_dim, v.causal) for v in suite[:-10]
             if v.varlen and not v.window and not v.softcap}
    assert plain == {(t, d, c) for t in ("f16", "bf16") for d in (64, 128)
                     for c in (None, "top_left", "bottom_right")}
    assert plain == {(v.dtype, v.head_dim, v.causal) for v in suite
                     if not v.varlen}
    text = out.read_text()
    assert text.endswith(emit_module(suite))
    verify(opt_tool, text)
    proc = subprocess.run([sys.executable, str(GEN_SUITE), "-o", str(out),
                           "--varlen", "--decode"], capture_output=True,
                          text=True)
    assert proc.returncode != 0 and "separate suites" in proc.stderr


def test_gen_suite_varlen_backward(opt_tool, tmp_path):
    """gen_suite.py --varlen --backward: the gradient ops (with their
    forwards) of f16/bf16 x D = 64/128 x full/causal top-left/bottom-right
    packed batches, a window and softcap at D = 128; no dense backward
    (its dQ layout differs on sm90: the two cannot share an artifact)."""
    gen = _gen_suite()
    out = tmp_path / "suite.mlir"
    subprocess.run([sys.executable, str(GEN_SUITE), "-o", str(out),
                    "--varlen", "--backward"], check=True)
    suite = gen.varlen_backward_suite()
    assert len(suite) == 16 and all(v.varlen for v in suite)
    assert all(v.with_forward for v in suite)
    text = out.read_text()
    assert text.endswith(emit_module(suite, backward=True))
    assert text.count("flash.attention_grad") == 16
    verify(opt_tool, text)


def test_block_sparse_variants_parse_and_lower(opt_tool):
    """The block-sparse lists are written where the op's syntax has them
    (full lists with block_sparse=2, the block sizes when not 128 x 128),
    and the ops lower to block-sparse kernels with the manifest's keys."""
    variants = [
        KernelVariant("bs1", "f16", 128, block_sparse=1),
        KernelVariant("bs2_causal", "bf16", 64, causal="top_left",
                      block_sparse=2),
        KernelVariant("bs2_small", "bf16", 128, block_sparse=2,
                      sparse_blocks=(128, 256)),
    ]
    text = emit_module(variants)
    assert text.count("block_sparse(%kvn, %kvi") == 3
    assert text.count("full_blocks(%fkvn, %fkvi") == 2
    assert text.count("sparse_block_size = array<i64: 128, 256>") == 1
    verify(opt_tool, text)
    kernels = lowered_kernels(opt_tool, text)
    assert len(kernels) == 3
    assert sum("_bs128x128(" in l and "block_sparse = 1" in l
               for l in kernels) == 1
    assert sum("_bs128x128f(" in l and "block_sparse = 2" in l
               for l in kernels) == 1
    assert sum("_bs128x256f(" in l for l in kernels) == 1


def test_block_sparse_runtime_variant_mapping():
    v = rt.Variant(rt.KIND_FORWARD, rt.DTYPE_BF16, 128, 128,
                   rt.CAUSAL_TOP_LEFT)
    v.block_sparse, v.sparse_block_q, v.sparse_block_k = 2, 128, 64
    mapped, backward = from_runtime(v)
    assert not backward and mapped.block_sparse == 2
    assert mapped.sparse_blocks == (128, 64)
    assert mapped.name == "bf16_d128_top_left_bs2_128x64"
    assert "block_sparse=2 blocks=128x64" in v.describe()


@pytest.mark.parametrize("kwargs, message", [
    (dict(block_sparse=3), "block_sparse must be 0, 1 or 2"),
    (dict(block_sparse=1, varlen=True), "no varlen or mask"),
    (dict(block_sparse=1, mask=True), "no varlen or mask"),
    (dict(block_sparse=1, sparse_blocks=(0, 128)), "two positive ints"),
])
def test_block_sparse_variants_refuse_what_the_op_refuses(kwargs, message):
    with pytest.raises(ValueError, match=message):
        KernelVariant("v", "f16", 64, **kwargs)


def test_gen_suite_block_sparse(opt_tool, tmp_path):
    """gen_suite.py --block-sparse: f16/bf16 x D = 64/128/256 x
    full/top-left causal, dense and with partial (1) or partial + full (2)
    lists."""
    gen = _gen_suite()
    out = tmp_path / "suite.mlir"
    subprocess.run([sys.executable, str(GEN_SUITE), "-o", str(out),
                    "--block-sparse"], check=True)
    suite = gen.block_sparse_suite()
    assert len(suite) == 36
    assert sorted(v.block_sparse for v in suite).count(0) == 12
    text = out.read_text()
    assert text.endswith(emit_module(suite))
    verify(opt_tool, text)


def test_block_sparse_backward_variants_lower(opt_tool):
    """A block-sparse variant's flash.attention_grad lowers to the dense
    preprocess and postprocess, the transposition of the lists and the
    main kernel walking them, each reading the lists carrying the
    manifest's keys (docs/KERNEL_ABI.md "Block-sparse backward")."""
    v = KernelVariant("bs2", "bf16", 128, causal="top_left", block_sparse=2)
    text = emit_module([v], backward=True)
    assert "flash.attention_grad" in text and "full_blocks(%fkvn" in text
    kernels = lowered_kernels(opt_tool, text)
    names = [l.split("@")[1].split("(")[0] for l in kernels]
    assert len(names) == 4
    assert sum(n.startswith("flash_bwd_pre_") and "_bs" not in n
               for n in names) == 1
    assert sum(n.startswith("flash_bwd_post_") and "_bs" not in n
               for n in names) == 1
    main = [l for l in kernels if '"backward"' in l]
    transpose = [l for l in kernels if '"backward_sparse_transpose"' in l]
    assert len(main) == 1 and "_bs128x128f(" in main[0]
    assert "block_sparse = 2" in main[0] and '"memref:q_num_blocks"' in main[0]
    assert len(transpose) == 1 and "block_sparse = 2" in transpose[0]
    assert '"memref:kv_indices"' in transpose[0]


def test_gen_suite_block_sparse_backward(opt_tool, tmp_path):
    """gen_suite.py --block-sparse --backward: the --block-sparse suite's
    variants as gradients with their forwards (24: f16/bf16 x D = 64/128 x
    full/top-left causal, dense and with partial or partial + full lists)."""
    gen = _gen_suite()
    out = tmp_path / "suite.mlir"
    subprocess.run([sys.executable, str(GEN_SUITE), "-o", str(out),
                    "--block-sparse", "--backward"], check=True)
    suite = gen.block_sparse_backward_suite()
    assert len(suite) == 24 and all(v.with_forward for v in suite)
    assert sorted(v.block_sparse for v in suite).count(2) == 8
    text = out.read_text()
    assert text.endswith(emit_module(suite, backward=True))
    assert text.count("flash.attention_grad") == 24
    assert text.count("= flash.attention %q") == 24
    verify(opt_tool, text)
