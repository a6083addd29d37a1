"""The runtime through ctypes, without torch or a GPU: library discovery,
manifest parsing, variant lookup, argument validation, the no-driver path."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT


def test_library_not_found_names_the_fix(monkeypatch):
    from flashfuse import _runtime
    from flashfuse.errors import RuntimeLibraryNotFound
    monkeypatch.setenv("FLASHFUSE_RUNTIME_LIB", "/nonexistent/libflashfuse_runtime.so")
    monkeypatch.setattr(_runtime, "_lib", None)
    with pytest.raises(RuntimeLibraryNotFound) as e:
        _runtime.library()
    assert "FLASHFUSE_RUNTIME_LIB" in str(e.value)
    assert "/nonexistent/libflashfuse_runtime.so (no such file)" in str(e.value)
    assert isinstance(e.value, RuntimeError)


def test_parse_sample_manifest(rt, sample_dir):
    m = rt.Manifest.open(sample_dir)
    assert m.arch == 90
    kernels = m.kernels()
    assert [k.name.decode() for k in kernels] == [
        "flash_fwd_f16_d128", "flash_fwd_bf16_d64_causal_bias",
        "flash_bwd_f16_d128"]
    k0 = kernels[0]
    assert (k0.block_m, k0.block_n, k0.threads, k0.smem) == (128, 64, 128, 49152)
    assert k0.variant.describe() == "forward f16 D=128 Dv=128 causal=none"
    assert kernels[1].variant.describe() == (
        "forward bf16 D=64 Dv=64 causal=top_left window bias")
    params = m.params(0)
    assert params[:2] == [("memref", "q"), ("memref", "k")]
    assert ("f32", "scale") in params and ("i64", "seed") in params


def test_manifest_errors_carry_line_numbers(rt):
    from flashfuse.errors import ManifestError
    with pytest.raises(ManifestError, match=r"<manifest text>:3: bad arch 'x'"):
        rt.Manifest.parse("flashfuse-manifest 1\n# c\narch x\n")
    with pytest.raises(ManifestError, match="manifest version 7"):
        rt.Manifest.parse("flashfuse-manifest 7\n")


def test_missing_artifact_dir(rt, tmp_path):
    from flashfuse.errors import ManifestError
    with pytest.raises(ManifestError, match="manifest.txt"):
        rt.Manifest.open(tmp_path / "nothing-here")


def test_find_variant_and_explain_miss(rt, sample_dir):
    from flashfuse import _kernels
    from flashfuse.errors import KernelNotFoundError
    m = rt.Manifest.open(sample_dir)
    v = _kernels.make_variant(rt.KIND_FORWARD, rt.DTYPE_F16, 128, 128)
    assert m.find(v) == 0
    miss = _kernels.make_variant(rt.KIND_FORWARD, rt.DTYPE_F16, 96, 96)
    with pytest.raises(KernelNotFoundError) as e:
        m.find(miss)
    assert "forward f16 D=96 Dv=96" in str(e.value)
    assert "flash_fwd_f16_d128" in str(e.value)
    assert isinstance(e.value, ValueError)


def _good_args(rt):
    a = rt.forward_args()
    a.dtype = rt.DTYPE_F16
    a.q, a.k, a.v, a.o, a.lse = (0x1000000 * i for i in range(1, 6))
    a.batch, a.heads_q, a.heads_kv, a.seq_q, a.seq_k = 2, 4, 2, 113, 203
    a.head_dim = a.head_dim_v = 128
    a.q_stride[:] = a.o_stride[:] = (4 * 113 * 128, 113 * 128, 128, 1)
    a.k_stride[:] = a.v_stride[:] = (2 * 203 * 128, 203 * 128, 128, 1)
    a.scale = 0.125
    return a


def test_forward_argument_validation(rt, sample_dir):
    from flashfuse.errors import InvalidArgumentError
    m = rt.Manifest.open(sample_dir)
    m.check_forward(0, _good_args(rt))
    cases = [
        (lambda a: setattr(a, "dtype", rt.DTYPE_BF16), "inputs are bf16"),
        (lambda a: setattr(a, "head_dim", 64), "head dims D=64"),
        (lambda a: setattr(a, "heads_kv", 3), "not a multiple of heads_kv"),
        (lambda a: setattr(a, "q", 0), "'q' is a null pointer"),
        (lambda a: setattr(a, "k", 0x2000002), "not 16-byte aligned"),
        (lambda a: a.v_stride.__setitem__(3, 2), "must be contiguous"),
        (lambda a: setattr(a, "softcap", 20.0), "softcap was requested"),
        (lambda a: setattr(a, "seq_q", 0), "seq_q = 0"),
    ]
    for edit, message in cases:
        a = _good_args(rt)
        edit(a)
        with pytest.raises(InvalidArgumentError, match=message):
            m.check_forward(0, a)


# One forward kernel in 16 bits and the same variant writing O in f32: the
# `out_f32 1` key (docs/KERNEL_ABI.md) separates them.
_FORWARD_PARAMS = (
    "memref:q memref:k memref:v memref:o memref:lse i32:batch i32:heads_q "
    "i32:heads_kv i32:seq_q i32:seq_k i64:q_stride_b i64:q_stride_h "
    "i64:q_stride_s i64:k_stride_b i64:k_stride_h i64:k_stride_s "
    "i64:v_stride_b i64:v_stride_h i64:v_stride_s i64:o_stride_b "
    "i64:o_stride_h i64:o_stride_s f32:scale i32:window_left "
    "i32:window_right f32:softcap f32:dropout_p i64:seed")


def _kernel_text(name, extra=""):
    return (f"kernel {name}\n  kind forward\n  dtype f16\n  head_dim 128\n"
            "  head_dim_v 128\n  block_m 128\n  block_n 64\n  threads 128\n"
            f"  smem 0\n  causal top_left\n{extra}  params {_FORWARD_PARAMS}"
            "\nend\n")


def test_out_f32_variant_lookup_and_arguments(rt):
    from flashfuse import _kernels
    from flashfuse.errors import InvalidArgumentError, KernelNotFoundError
    m = rt.Manifest.parse("flashfuse-manifest 1\narch 90\nptx k.ptx\n"
                          + _kernel_text("fwd16")
                          + _kernel_text("fwd32", "  out_f32 1\n"))
    k16, k32 = m.kernels()
    assert (k16.variant.out_f32, k32.variant.out_f32) == (0, 1)
    assert k32.variant.describe() == (
        "forward f16 D=128 Dv=128 causal=top_left out=f32")
    v16 = _kernels.make_variant(rt.KIND_FORWARD, rt.DTYPE_F16, 128, 128,
                                rt.CAUSAL_TOP_LEFT)
    v32 = _kernels.make_variant(rt.KIND_FORWARD, rt.DTYPE_F16, 128, 128,
                                rt.CAUSAL_TOP_LEFT, out_f32=True)
    assert (m.find(v16), m.find(v32)) == (0, 1)
    with pytest.raises(KernelNotFoundError, match="causal=none out=f32"):
        m.find(_kernels.make_variant(rt.KIND_FORWARD, rt.DTYPE_F16, 128, 128,
                                     out_f32=True))
    # The arguments say which O they bring; it must be the kernel's.
    a = _good_args(rt)
    m.check_forward(0, a)
    with pytest.raises(InvalidArgumentError, match="'o' is f16 \\(out_f32 = "
                       "0\\) but the kernel writes O in f32"):
        m.check_forward(1, a)
    a.out_f32 = 1
    m.check_forward(1, a)
    with pytest.raises(InvalidArgumentError, match="'o' is f32 \\(out_f32 = "
                       "1\\) but the kernel writes O in f16"):
        m.check_forward(0, a)


def test_kernel_dir_discovery(rt, sample_dir, monkeypatch):
    from flashfuse import _kernels
    from flashfuse.errors import KernelNotFoundError
    # A directory of artifacts is searched one level down.
    monkeypatch.setenv("FLASHFUSE_KERNEL_DIR", str(sample_dir.parent))
    # (runtime/test/data holds the captures, decode, FP8-cache decode,
    # derived-lists, fp8 and varlen samples too.)
    assert _kernels.artifact_dirs() == [
        str((sample_dir.parent / "captures").resolve()),
        str((sample_dir.parent / "decode").resolve()),
        str((sample_dir.parent / "decode-fp8").resolve()),
        str((sample_dir.parent / "derived").resolve()),
        str((sample_dir.parent / "fp8").resolve()),
        str(sample_dir.resolve()),
        str((sample_dir.parent / "varlen").resolve()),
        str((sample_dir.parent / "varlen-bwd").resolve())]
    v = _kernels.make_variant(rt.KIND_BACKWARD, rt.DTYPE_F16, 128, 128)
    assert _kernels.locate(v) == (str(sample_dir.resolve()), 2)
    monkeypatch.setenv("FLASHFUSE_KERNEL_DIR", str(sample_dir / "none"))
    with pytest.raises(KernelNotFoundError, match="no kernel artifacts found"):
        _kernels.locate(v)


def test_unreadable_artifact_does_not_hide_others(rt, sample_dir, tmp_path,
                                                  monkeypatch):
    from flashfuse import _kernels
    from flashfuse.errors import KernelNotFoundError
    # E.g. an artifact with kernel kinds newer than the runtime: reported
    # when nothing else matches, never in the way of the other artifacts.
    bad = tmp_path / "newer"
    bad.mkdir()
    (bad / "manifest.txt").write_text(
        "flashfuse-manifest 1\narch 90\nptx kernels.ptx\nkernel x\n"
        "  kind nonsense\nend\n")
    monkeypatch.setenv("FLASHFUSE_KERNEL_DIR",
                       os.pathsep.join([str(bad), str(sample_dir)]))
    sample = str(sample_dir.resolve())
    v = _kernels.make_variant(rt.KIND_FORWARD, rt.DTYPE_F16, 128, 128)
    assert _kernels.locate(v) == (sample, 0)
    assert _kernels.locate_all(v) == [(sample, 0)]
    assert _kernels.locate(v, sample) == (sample, 0)
    assert {"q", "lse", "scale"} <= _kernels.param_names(sample, 0)
    post = _kernels.make_variant(rt.KIND_BACKWARD_POSTPROCESS, rt.DTYPE_F16,
                                 128, 128)
    assert post.describe().startswith("backward_postprocess f16 D=128")
    assert not _kernels.has_kernel(post)
    with pytest.raises(KernelNotFoundError,
                       match=r"newer: unreadable: .*bad kind 'nonsense'"):
        _kernels.locate(post)


def test_no_driver_is_a_clear_error(rt):
    # The driver is opened once per process, so this runs in a fresh one.
    code = ("import flashfuse._runtime as rt\n"
            "try:\n    rt.Context()\n"
            "except rt.error_for_status('FLASHFUSE_ERROR_NO_DRIVER', '').__class__ as e:\n"
            "    print('CAUGHT', e)\n")
    env = dict(os.environ, FLASHFUSE_CUDA_DRIVER="/nonexistent/libcuda.so.1")
    if os.environ.get("FLASHFUSE_TEST_INSTALLED") != "1":
        env["PYTHONPATH"] = str(ROOT / "python")  # else the installed wheel
    out = subprocess.run([sys.executable, "-c", code], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "CAUGHT flashfuse: no CUDA driver: could not load" in out.stdout
