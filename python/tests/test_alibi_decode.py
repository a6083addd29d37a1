"""attention_with_kvcache's alibi_slopes (flash.attention_kvcache's alibi
operand) without a GPU: the argument checks, the runtime variant and its
on-demand kernel (compiled for h100 and a100 by the built flashfuse-compile:
found by the runtime's lookup, named, keyed and taking alibi_slopes). The
CPU numerics are the lit suite's (test/Integration/CPU/kvcache-alibi.mlir:
both CPU lowerings against a double-precision reference); the GPU's are
scripts/kernels/check_alibi_decode.py's and test_decode_gpu.py's."""

import pathlib

import pytest

torch = pytest.importorskip("torch")  # the wheel's test venv has none

from flashfuse import _compile, _kernels, kvcache, variants  # noqa: E402
from flashfuse import _runtime as rt  # noqa: E402


def _q(b=2, hq=8):
    return torch.randn(b, 1, hq, 64, dtype=torch.float16)


def test_slope_layouts_and_refusals():
    q = _q()
    assert kvcache._check_alibi(None, q) == 0
    assert kvcache._check_alibi(torch.rand(8), q) == 1
    assert kvcache._check_alibi(torch.rand(2, 8), q) == 2
    # A strided [B, Hq] view is a layout like any other (the launch copies).
    assert kvcache._check_alibi(torch.rand(2, 16)[:, ::2], q) == 2
    name = "flashfuse.attention_with_kvcache"
    with pytest.raises(ValueError, match=rf"{name}: alibi_slopes must be "
                       r"\[Hq\] = \[8\] or \[B, Hq\] = \[2, 8\], got \[2\]"):
        kvcache._check_alibi(torch.rand(2), q)  # one a kv head: wrong
    with pytest.raises(ValueError, match=r"got \[8, 2\]"):
        kvcache._check_alibi(torch.rand(8, 2), q)
    with pytest.raises(TypeError, match=f"{name}: alibi_slopes must be "
                       "float32"):
        kvcache._check_alibi(torch.rand(8, dtype=torch.float64), q)
    with pytest.raises(TypeError, match="must be a torch.Tensor"):
        kvcache._check_alibi([0.5] * 8, q)


def test_runtime_variant_round_trip():
    """The runtime's variant names the layout, and maps back to the
    flash.attention_kvcache variant whose op carries the slopes."""
    for layout, shape in ((1, "tensor<16xf32>"), (2, "tensor<1x16xf32>")):
        v = _kernels.make_variant(rt.KIND_DECODE, rt.DTYPE_BF16, 128, 128, 2,
                                  page_size=16, alibi=layout)
        assert v.alibi == layout
        assert v.describe().endswith(
            "page_size=16 " + ("alibi=[Hq]" if layout == 1
                               else "alibi=[B,Hq]"))
        kv = variants.from_runtime(v)[0]
        assert isinstance(kv, variants.KVCacheVariant)
        assert (kv.alibi, kv.page_size, kv.causal) == (layout, 16,
                                                      "bottom_right")
        assert kv.name.endswith(f"_page16_alibi{layout}")
        ir = variants.emit_kvcache(kv)
        assert f"alibi(%slopes : {shape})" in ir
    with pytest.raises(ValueError, match="alibi must be 0, 1"):
        variants.KVCacheVariant("x", "f16", 64, alibi=3)
    # Over an FP8 cache: the slopes after the descales in the op.
    v = _kernels.make_variant(rt.KIND_DECODE, rt.DTYPE_BF16, 128, 128, 2,
                              kv_dtype=rt.DTYPE_E4M3, alibi=1)
    kv = variants.from_runtime(v)[0]
    assert (kv.kv_dtype, kv.alibi) == ("e4m3", 1)
    assert kv.name.startswith("kvf8_") and kv.name.endswith("_alibi1")
    ir = variants.emit_kvcache(kv)
    assert ir.index("descale(%kd, %vd") < ir.index("alibi(%slopes")


@pytest.mark.parametrize("target", ["h100", "a100"])
def test_compiled_on_demand(compile_tool, monkeypatch, tmp_path, target):
    """The decode kernel of an ALiBi variant, compiled where no artifact has
    it: the runtime's lookup finds it by the variant (and not by the
    other layout's), its manifest says `alibi N`, its params take
    alibi_slopes after the lengths, and the second lookup compiles
    nothing."""
    monkeypatch.setenv("FLASHFUSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLASHFUSE_COMPILE", str(compile_tool))
    capability = {"h100": (9, 0), "a100": (8, 0)}[target]
    v = _kernels.make_variant(rt.KIND_DECODE, rt.DTYPE_F16, 64, 64, 0,
                              window=True, alibi=2)
    directory = _compile.artifact_for(v, capability)
    manifest = (pathlib.Path(directory) / "manifest.txt").read_text()
    assert "  alibi 2\n" in manifest
    assert "memref:cache_seqlens memref:alibi_slopes i32:batch" in manifest
    assert "_window_alibib\n" in manifest
    assert _kernels.has_kernel(v, directory)
    other = _kernels.make_variant(rt.KIND_DECODE, rt.DTYPE_F16, 64, 64, 0,
                                  window=True, alibi=1)
    assert not _kernels.has_kernel(other, directory)
    plain = _kernels.make_variant(rt.KIND_DECODE, rt.DTYPE_F16, 64, 64, 0,
                                  window=True)
    assert not _kernels.has_kernel(plain, directory)
    stamp = (pathlib.Path(directory) / "manifest.txt").stat().st_mtime_ns
    assert _compile.artifact_for(v, capability) == directory
    assert (pathlib.Path(directory) / "manifest.txt").stat().st_mtime_ns \
        == stamp


def test_custom_op_takes_the_slopes():
    """flashfuse::attention_kvcache's schema and fake (what torch.compile
    traces) take the slopes as an optional tensor (before a pool's
    indices)."""
    from flashfuse import ops  # noqa: F401  (registers the ops)
    q = torch.empty(3, 1, 32, 128, dtype=torch.bfloat16, device="meta")
    kc = torch.empty(3, 1024, 8, 128, dtype=torch.bfloat16, device="meta")
    lengths = torch.empty(3, dtype=torch.int32, device="meta")
    for slopes in (torch.empty(32, device="meta"),
                   torch.empty(3, 32, device="meta")):
        o, lse = torch.ops.flashfuse.attention_kvcache(
            q, kc, kc, lengths, None, 0, 2, 0.1, -1, -1, 0.0, 0, None, None,
            None, slopes)
        assert o.shape == (3, 1, 32, 128) and lse.shape == (3, 32, 1)
    schema = str(torch.ops.flashfuse.attention_kvcache.default._schema)
    assert schema.endswith(
        "Tensor? alibi_slopes=None, Tensor? cache_batch_idx=None) -> "
        "(Tensor, Tensor)")


def test_step_signatures_tell_slopes_apart():
    """An eager step's checked launches are reused only for the same slope
    layout (and dtype and device, checked again otherwise)."""
    from flashfuse.kvcache import _step_key

    def key(slopes):
        return _step_key(q, k, k, torch.zeros(2, dtype=torch.int32), None,
                         None, None, None, True, (-1, -1), 0.0, 0, None,
                         None, None, slopes)

    q = torch.randn(2, 1, 8, 64)
    k = torch.randn(2, 16, 2, 64)
    assert key(None) != key(torch.rand(8))
    assert key(torch.rand(8)) == key(torch.rand(8))
    assert key(torch.rand(8)) != key(torch.rand(2, 8))
    assert key(torch.rand(2, 8)) != key(torch.rand(2, 16)[:, ::2])
    assert key(torch.rand(8)) != key(torch.rand(8, dtype=torch.float64))
    assert key([0.5] * 8) is None  # rejected by type: checked in full
