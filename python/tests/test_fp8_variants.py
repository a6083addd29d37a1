"""FP8 forwards without torch or a GPU: the e4m3 variant IR the emitter
writes (flashfuse.variants, gen_suite.py --fp8), the runtime Variant's
out_dtype, and the ctypes ForwardArgs' FP8 fields checked by the runtime
against runtime/test/data/fp8 (KERNEL_ABI.md "FP8 forwards")."""

import ctypes
import subprocess
import sys

import pytest

from conftest import ROOT
from flashfuse import _kernels
from flashfuse import _runtime as rt
from flashfuse.variants import (KernelVariant, KVCacheVariant, emit_backward,
                                emit_forward, emit_kvcache, emit_module,
                                from_runtime)

FP8_DIR = ROOT / "runtime" / "test" / "data" / "fp8"
GEN_SUITE = ROOT / "scripts" / "kernels" / "gen_suite.py"


def test_fp8_forward_ir():
    v = KernelVariant("e4m3_d128_br", "e4m3", 128, causal="bottom_right",
                      out_dtype="f16", softcap=30.0)
    text = emit_forward(v)
    e4m3 = "tensor<1x1x128x128xf8E4M3FN>"
    descale = "tensor<1x1xf32>"
    # Q, K, V in f8E4M3FN, per-head [B, H] descales as function arguments
    # and the op's descale clause, O in out_dtype (LSE f32).
    assert (f"%q: {e4m3}, %k: {e4m3}, %v: {e4m3}, %qd: {descale}, "
            f"%kd: {descale}, %vd: {descale}") in text
    assert (f"flash.attention %q, %k, %v descale(%qd, %kd, %vd : {descale}, "
            f"{descale}, {descale}) {{causal = #flash.causal<bottom_right>, "
            f"softcap = 30.0 : f32}} : {e4m3}, {e4m3}, {e4m3} -> "
            "tensor<1x1x128x128xf16>, tensor<1x1x128xf32>") in text
    # A 16-bit variant gets no descale clause.
    assert "descale" not in emit_forward(KernelVariant("h", "bf16", 128))


def test_fp8_variants_parse(opt_tool):
    vs = [KernelVariant(f"v{i}", "e4m3", d, causal=c, out_dtype=o,
                        window=w)
          for i, (d, c, o, w) in enumerate([
              (128, None, "bf16", None), (256, "bottom_right", "f16", None),
              (128, "top_left", "bf16", (64, 0))])]
    # With an optional operand beside it, descale(...) comes after that
    # operand's clause, as the op's assembly format reads them.
    vs += [KernelVariant("vb", "e4m3", 128, out_dtype="bf16", bias=True),
           KernelVariant("vm", "e4m3", 64, out_dtype="f16", mask=True)]
    proc = subprocess.run([str(opt_tool), "-"], input=emit_module(vs),
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("descale(") == 5


@pytest.mark.parametrize("kwargs, message", [
    (dict(), "an e4m3 variant's out_dtype must be one of"),
    (dict(out_dtype="f32"), "out_dtype must be one of \\('bf16', 'f16'\\)"),
    (dict(out_dtype="bf16", dropout=0.1), "without dropout or varlen"),
    (dict(out_dtype="bf16", varlen=True), "without dropout or varlen"),
    (dict(out_dtype="bf16", with_forward=True), "no FP8 backward"),
    (dict(out_dtype="bf16", tiles=(64, 64, 4, 2)), "no forced tiles"),
    (dict(out_dtype="bf16", block_sparse=1), "no block-sparse lists"),
])
def test_invalid_fp8_variants(kwargs, message):
    with pytest.raises(ValueError, match=message):
        KernelVariant("v", "e4m3", 128, **kwargs)


def test_no_fp8_backward_or_kvcache():
    # 16-bit variants keep refusing a bf16 O dtype of their own.
    with pytest.raises(ValueError, match="out_dtype must be one of"):
        KernelVariant("v", "bf16", 128, out_dtype="bf16")
    v = KernelVariant("v", "e4m3", 128, out_dtype="bf16")
    with pytest.raises(ValueError, match="FP8 attention has no backward"):
        emit_backward(v)
    with pytest.raises(ValueError, match="refuses FP8"):
        KVCacheVariant("kv", "e4m3", 128)


def test_kvcache_fp8_cache_variant():
    # An FP8 cache (docs/KVCACHE.md "FP8 cache"): e4m3 caches with [B, Hkv]
    # descales, the query and O in the variant's dtype.
    v = KVCacheVariant("kv", "bf16", 128, causal="bottom_right",
                       page_size=16, kv_dtype="e4m3")
    text = emit_kvcache(v)
    assert "tensor<256x16x1x128xf8E4M3FN>" in text
    assert "tensor<1x16x1x128xbf16>" in text
    assert ("descale(%kd, %vd : tensor<1x1xf32>, tensor<1x1xf32>)"
            in text)
    # block_table(...) comes before descale(...), as the op's syntax has it.
    assert text.index("block_table(") < text.index("descale(")
    plain = emit_kvcache(KVCacheVariant("kv", "bf16", 128))
    assert "f8E4M3FN" not in plain and "descale" not in plain
    with pytest.raises(ValueError, match="kv_dtype must be '' .* or 'e4m3'"):
        KVCacheVariant("kv", "bf16", 128, kv_dtype="e5m2")


def test_runtime_variant_out_dtype():
    v = _kernels.make_variant(rt.KIND_FORWARD, rt.DTYPE_E4M3, 256, 256,
                              rt.CAUSAL_BOTTOM_RIGHT, out_dtype=rt.DTYPE_F16)
    assert v.describe() == "forward e4m3 D=256 Dv=256 causal=bottom_right out=f16"
    # 16-bit variants print no O dtype (0 is not "f16" for them).
    assert _kernels.make_variant(rt.KIND_FORWARD, rt.DTYPE_F16, 64,
                                 64).describe().endswith("causal=none")
    kv, backward = from_runtime(v)
    assert not backward
    assert (kv.dtype, kv.out_dtype, kv.causal, kv.name) == (
        "e4m3", "f16", "bottom_right", "e4m3_d256_bottom_right_of16")
    assert "-> (tensor<1x1x128x256xf16>, tensor<1x1x128xf32>)" in emit_module(
        [kv])
    for bad in (_kernels.make_variant(rt.KIND_BACKWARD, rt.DTYPE_E4M3, 128,
                                      128, out_dtype=rt.DTYPE_BF16),
                _kernels.make_variant(rt.KIND_FORWARD, rt.DTYPE_E4M3, 128,
                                      128, out_dtype=rt.DTYPE_E4M3)):
        with pytest.raises(ValueError, match="e4m3 kernels are forwards"):
            from_runtime(bad)


def test_runtime_variant_descale_blocks():
    """A runtime variant of per-block descales names its blocks and comes
    back as the variant whose IR takes [B, H, N] descales with
    descale_block_size (the on-demand compile of such a kernel)."""
    v = _kernels.make_variant(rt.KIND_FORWARD, rt.DTYPE_E4M3, 128, 128,
                              out_dtype=rt.DTYPE_BF16,
                              descale_blocks=(64, 128))
    assert v.describe().endswith("out=bf16 descale_blocks=64x128")
    kv, _ = from_runtime(v)
    assert kv.descale_blocks == (64, 128)
    assert kv.name == "e4m3_d128_full_obf16_ds64x128"
    text = emit_module([kv])
    # _SEQ = 128 rows: two Q blocks of 64, one K/V block of 128.
    assert ("descale(%qd, %kd, %vd : tensor<1x1x2xf32>, tensor<1x1x1xf32>, "
            "tensor<1x1x1xf32>)") in text
    assert "descale_block_size = array<i64: 64, 128>" in text
    with pytest.raises(ValueError, match="descale_blocks must be two positive"):
        KernelVariant("x", "e4m3", 128, out_dtype="bf16", descale_blocks=(0, 128))
    with pytest.raises(ValueError, match="are for dtype e4m3 only"):
        KernelVariant("x", "bf16", 128, descale_blocks=(128, 128))


def test_gen_suite_fp8(opt_tool, tmp_path):
    out = tmp_path / "fp8.mlir"
    subprocess.run([sys.executable, str(GEN_SUITE), "--fp8", "-o", str(out)],
                   check=True)
    text = out.read_text()
    # D 64/128/256 x causal none/top_left/bottom_right x O bf16/f16, then a
    # window and a softcap at D = 64 and 128, each with descales; then
    # per-block descales at D = 64, 128 (three causal modes) and 256 (none).
    assert text.count("flash.attention ") == 29
    assert text.count("descale(%qd, %kd, %vd") == 29
    assert text.count("descale_block_size = array<i64: 128, 128>") == 7
    assert "@e4m3_d256_full_obf16_ds128(" in text
    assert "@e4m3_d256_top_left_obf16_ds128(" not in text
    assert text.count("#flash.causal<bottom_right>") == 8
    assert text.count("#flash.causal<top_left>") == 8
    assert "@e4m3_d256_bottom_right_of16(" in text
    assert "@e4m3_d64_full_obf16(" in text
    for d in (64, 128):
        assert f"@e4m3_d{d}_window_obf16(" in text
        assert f"@e4m3_d{d}_softcap_obf16(" in text
    # D = 256 with an f16 O: three functions, each naming O and LSE in its
    # signature, its op and its return.
    assert text.count("x256xf16>, tensor<1x1x128xf32>") == 3 * 3
    proc = subprocess.run([str(opt_tool), str(out)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    refused = subprocess.run([sys.executable, str(GEN_SUITE), "--fp8",
                              "--tiles", "64,64,4,2", "-o", str(out)],
                             capture_output=True, text=True)
    assert (refused.returncode != 0
            and "FP8 kernels choose their own" in refused.stderr)


def test_gen_suite_fp8_mma_sync(opt_tool, tmp_path):
    """The mma.sync kernel's suite (sm_89): D = 64 and 128 with per-head
    descales, three causal modes and two O dtypes, a window and a softcap,
    then per-block descales in the three causal modes; flash-select-config
    gives every one the sm80 recipe on l4."""
    out = tmp_path / "fp8-mma-sync.mlir"
    subprocess.run([sys.executable, str(GEN_SUITE), "--fp8-mma-sync", "-o",
                    str(out)], check=True)
    text = out.read_text()
    assert text.count("flash.attention ") == 22
    assert "x256x" not in text
    assert text.count("descale_block_size = array<i64: 128, 128>") == 6
    for d in (64, 128):
        assert f"@e4m3_d{d}_window_obf16(" in text
        assert f"@e4m3_d{d}_bottom_right_of16(" in text
    proc = subprocess.run([str(opt_tool), str(out),
                           "--flash-select-config=target=l4"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("#flash.config<sm80, block_m = 128, "
                             "block_n = 128, warps = 8") == 22


def _fp8_args():
    """ForwardArgs for kernel 0 of data/fp8 (e4m3, D = 128, bf16 O) with
    fake, aligned device addresses (never dereferenced): Vt [2, 2, 128, 224]
    for Sk = 203 (Sk_pad, a whole group of 32 keys)."""
    a = rt.forward_args()
    a.dtype, a.out_dtype = rt.DTYPE_E4M3, rt.DTYPE_BF16
    a.q, a.k, a.v, a.o, a.lse = (0x10000000, 0x20000000, 0x30000000,
                                 0x40000000, 0x50000000)
    a.q_descale, a.k_descale, a.v_descale = 0x60000000, 0x60000100, 0x60000200
    a.batch, a.heads_q, a.heads_kv, a.seq_q, a.seq_k = 2, 8, 2, 113, 203
    a.head_dim = a.head_dim_v = 128
    a.q_stride[:] = a.o_stride[:] = (8 * 113 * 128, 113 * 128, 128, 1)
    a.k_stride[:] = (2 * 203 * 128, 203 * 128, 128, 1)
    a.v_stride[:] = (2 * 128 * 224, 128 * 224, 224, 1)
    a.q_descale_stride[:] = (8, 1)
    a.scale = 0.088
    return a


def test_forward_args_reach_the_runtime(rt):
    """The FP8 fields at the offsets the C struct has: the runtime reads
    back exactly what Python wrote (a misplaced field would be a null
    pointer or a wrong stride to it)."""
    from flashfuse.errors import InvalidArgumentError
    m = rt.Manifest.open(FP8_DIR)
    assert [k.variant.describe() for k in m.kernels()][:2] == [
        "forward e4m3 D=128 Dv=128 causal=none out=bf16",
        "forward e4m3 D=128 Dv=128 causal=bottom_right out=f16"]
    m.check_forward(0, _fp8_args())
    for field, value, message in (
            ("v_descale", None, "'v_descale' is a null pointer"),
            ("out_dtype", rt.DTYPE_F16,
             "out_dtype is f16 but the kernel writes O in bf16"),
            ("q_descale_stride", (8, -1), "'q_descale' has a negative stride"),
            ("v_stride", (2 * 128 * 232, 128 * 232, 232, 1),
             "'vt' stride 232 in dimension 2 is not a multiple of 16"),
            ("v_stride", (2 * 128 * 208, 128 * 208, 208, 1),
             "'vt' rows are 208 elements apart but span 224 keys")):
        a = _fp8_args()
        if isinstance(value, tuple):
            getattr(a, field)[:] = value
        else:
            setattr(a, field, value)
        with pytest.raises(InvalidArgumentError, match=message):
            m.check_forward(0, a)
    # The same arguments for the 16-bit kernel of the same head dim.
    with pytest.raises(InvalidArgumentError,
                       match="inputs are e4m3 but the kernel was compiled "
                             "for bf16"):
        m.check_forward(2, _fp8_args())
    assert ctypes.sizeof(rt.ForwardArgs) == 448
