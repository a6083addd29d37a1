"""Kernels compiled on demand (flashfuse._compile): the GPU -> target map,
where the cache lives, what its key covers, and compiling variants with the
built flashfuse-compile into a temporary cache. No GPU needed: the GPU's
compute capability is passed in."""

import os
import pathlib

import pytest

from flashfuse import _compile, _kernels
from flashfuse import _runtime as rt
from flashfuse.errors import (CompileError, KernelNotFoundError,
                              ToolNotFoundError, UnsupportedError)

H100 = (9, 0)
# Causal with a mask: a variant the kernel library does not build.
MASKED = rt.Variant(rt.KIND_FORWARD, rt.DTYPE_F16, 64, 64, rt.CAUSAL_TOP_LEFT,
                    0, 0, 0, 1, 0)
BACKWARD = rt.Variant(rt.KIND_BACKWARD, rt.DTYPE_BF16, 64, 64,
                      rt.CAUSAL_BOTTOM_RIGHT, 0, 0, 0, 1, 0)
# The same with O in f32 (out_f32): a kernel of its own.
MASKED_F32 = rt.Variant(*MASKED.key())
MASKED_F32.out_f32 = 1


@pytest.fixture
def cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("FLASHFUSE_CACHE_DIR", str(root))
    return root


@pytest.fixture
def compiler(compile_tool, monkeypatch):
    monkeypatch.setenv("FLASHFUSE_COMPILE", str(compile_tool))
    return str(compile_tool)


def manifest_kernels(directory):
    """{kernel name: {key: value}} from a manifest.txt, read as text."""
    kernels, current = {}, None
    for line in (pathlib.Path(directory) / "manifest.txt").read_text().splitlines():
        words = line.split("#")[0].split()
        if words[:1] == ["kernel"]:
            current = kernels[words[1]] = {}
        elif current is not None and len(words) >= 2:
            current[words[0]] = " ".join(words[1:])
    return kernels


def test_targets_of_gpus():
    assert _compile.target_for_capability((8, 0)) == "a100"
    assert _compile.target_for_capability((8, 9)) == "l4"
    assert _compile.target_for_capability((9, 0)) == "h100"
    with pytest.raises(UnsupportedError, match="no target for sm_75; it "
                       "targets a100 \\(sm_80\\), l4 \\(sm_89\\), h100"):
        _compile.target_for_capability((7, 5))


def test_cache_root(monkeypatch, tmp_path):
    monkeypatch.setenv("FLASHFUSE_CACHE_DIR", str(tmp_path / "mine"))
    assert _compile.cache_root() == tmp_path / "mine"
    monkeypatch.delenv("FLASHFUSE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _compile.cache_root() == tmp_path / "xdg" / "flashfuse" / "kernels"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _compile.cache_root() == (tmp_path / "home" / ".cache" / "flashfuse"
                                     / "kernels")


def test_cache_entry_covers_variant_flags_target_and_compiler(cache, tmp_path):
    fake = tmp_path / "flashfuse-compile"
    fake.write_text("#!/bin/sh\n")
    job = _compile.Job(MASKED, "h100", str(fake))
    assert job.directory.parent == cache / "h100"
    assert job.directory == _compile.Job(MASKED, "h100", str(fake)).directory
    others = [
        _compile.Job(MASKED, "a100", str(fake)).directory,
        _compile.Job(MASKED, "h100", str(fake), deterministic=True).directory,
        _compile.Job(rt.Variant(rt.KIND_FORWARD, rt.DTYPE_F16, 64, 64,
                                rt.CAUSAL_TOP_LEFT, 0, 0, 0, 0, 0),
                     "h100", str(fake)).directory,
        _compile.Job(MASKED_F32, "h100", str(fake)).directory,
    ]
    assert others[0].parent == cache / "a100"
    assert len({job.directory, *others}) == 5
    # A rebuilt compiler gets fresh kernels, not the old one's.
    os.utime(fake, ns=(1, 1))
    assert _compile.Job(MASKED, "h100", str(fake)).directory != job.directory
    # Every kind of the backward sequence is one compile of the grad op.
    kinds = {_compile.Job(rt.Variant(kind, *list(BACKWARD.key())[1:]), "h100",
                          str(fake)).directory
             for kind in (rt.KIND_BACKWARD_PREPROCESS, rt.KIND_BACKWARD,
                          rt.KIND_BACKWARD_POSTPROCESS)}
    assert len(kinds) == 1
    assert "flash.attention_grad" not in job.mlir
    assert "flash.attention_grad" in _compile.Job(BACKWARD, "h100",
                                                  str(fake)).mlir


def test_gradients_compile_with_the_sm90ws_backward(cache, compiler):
    # A gradient op asks for the sm90ws kernels (recipe auto-tma:
    # flash-select-config gives them where they serve the variant, auto's
    # recipe elsewhere); dense forwards and deterministic gradients do not
    # (the backward has no deterministic mode).
    plain = rt.Variant(rt.KIND_BACKWARD, rt.DTYPE_BF16, 64, 64,
                       rt.CAUSAL_TOP_LEFT, 0, 0, 0, 0, 0)
    assert "--recipe=auto-tma" in _compile.Job(plain, "h100", compiler).flags
    assert "--recipe=auto-tma" not in _compile.Job(
        plain, "h100", compiler, deterministic=True).flags
    assert "--recipe=auto-tma" not in _compile.Job(MASKED, "h100",
                                                   compiler).flags
    kernels = manifest_kernels(_compile.artifact_for(plain, H100))
    assert any(n.startswith("flash_bwd_sm90ws_bf16_d64_") for n in kernels)
    assert kernels[next(n for n in kernels if "_sm90ws_" in n)]["threads"] == "384"
    # A mask operand: the sm90 backward, which serves it.
    masked = manifest_kernels(_compile.artifact_for(BACKWARD, H100))
    assert any(n.startswith("flash_bwd_sm90_bf16_d64_") for n in masked)


def test_mla_forwards_compile_with_the_sm90ws_recipe(cache, compiler):
    # D = 192 with Dv = 128 (MLA's prefill): a forward compiled on demand
    # asks for auto-tma, the sm90ws kernel where it serves the variant (a
    # window here), the sm90 one where it does not (a mask).
    window = rt.Variant(rt.KIND_FORWARD, rt.DTYPE_BF16, 192, 128,
                        rt.CAUSAL_NONE, 1, 0, 0, 0, 0)
    masked = rt.Variant(rt.KIND_FORWARD, rt.DTYPE_BF16, 192, 128,
                        rt.CAUSAL_NONE, 0, 0, 0, 1, 0)
    for v in (window, masked):
        assert "--recipe=auto-tma" in _compile.Job(v, "h100", compiler).flags
    kernels = manifest_kernels(_compile.artifact_for(window, H100))
    assert any(n.startswith("flash_fwd_sm90ws_bf16_d192_dv128_") for n in kernels)
    kernels = manifest_kernels(_compile.artifact_for(masked, H100))
    assert any(n.startswith("flash_fwd_sm90_bf16_d192_dv128_") for n in kernels)


def test_fp8_forward_compiles_for_sm89(cache, compiler):
    # An sm_89 GPU (target l4) gets the mma.sync FP8 forward (the sm80
    # recipe, no tensor maps, PTX 8.4); an sm_90 one the wgmma kernel.
    fp8 = _kernels.make_variant(rt.KIND_FORWARD, rt.DTYPE_E4M3, 128, 128,
                                rt.CAUSAL_BOTTOM_RIGHT,
                                out_dtype=rt.DTYPE_BF16)
    directory = _compile.artifact_for(fp8, (8, 9))
    kernels = manifest_kernels(directory)
    assert list(kernels) == ["flash_fwd_sm80_e4m3_bf16_d128_m128n128w8s2_causalbr"]
    k = kernels["flash_fwd_sm80_e4m3_bf16_d128_m128n128w8s2_causalbr"]
    assert (k["dtype"], k["out_dtype"], k["threads"]) == ("e4m3", "bf16", "256")
    assert "memref:vt" in k["params"] and "tensormap" not in k["params"]
    assert ".version 8.4" in (pathlib.Path(directory) / "kernels.ptx").read_text()
    hopper = manifest_kernels(_compile.artifact_for(fp8, H100))
    assert list(hopper) == ["flash_fwd_sm90ws_e4m3_bf16_d128_m128n192w8s2_causalbr"]
    # Both read Vt in the kernels' key order, and say so.
    assert k["vt_key_group"] == "32"
    assert hopper["flash_fwd_sm90ws_e4m3_bf16_d128_m128n192w8s2_causalbr"][
        "vt_key_group"] == "32"


def test_packed_gradients_compile_with_the_sm90ws_backward(cache, compiler):
    # A packed batch's gradient takes the sm90ws backward too (flash-select-
    # config's auto-tma; docs/PERF.md run 152): its main kernel is the
    # varlen sm90ws one, 384 threads, tensor maps last; the preprocess and
    # postprocess stay the sm90 recipe's.
    packed = rt.Variant(rt.KIND_BACKWARD, rt.DTYPE_BF16, 128, 128,
                        rt.CAUSAL_BOTTOM_RIGHT, varlen=1)
    assert "--recipe=auto-tma" in _compile.Job(packed, "h100", compiler).flags
    kernels = manifest_kernels(_compile.artifact_for(packed, H100))
    main = [n for n in kernels if n.startswith("flash_bwd_sm90ws_bf16_d128_")]
    assert len(main) == 1 and main[0].endswith("_causalbr_varlen")
    k = kernels[main[0]]
    assert (k["threads"], k["varlen"]) == ("384", "1")
    assert k["params"].endswith("tensormap:q_map tensormap:k_map "
                                "tensormap:v_map tensormap:do_map")
    assert any(n.startswith("flash_bwd_pre_sm90_") for n in kernels)


def test_explicit_compiler_setting_must_exist(monkeypatch, tmp_path):
    monkeypatch.setenv("FLASHFUSE_COMPILE", str(tmp_path / "nope"))
    with pytest.raises(ToolNotFoundError, match="FLASHFUSE_COMPILE=.*nope is "
                       "not an executable file"):
        _compile.find_compiler()


def test_compile_one_variant_into_a_temp_cache(cache, compiler, monkeypatch):
    directory = _compile.artifact_for(MASKED, H100)
    assert pathlib.Path(directory).parent == cache / "h100"
    kernels = manifest_kernels(directory)
    assert len(kernels) == 1
    (name, k), = kernels.items()
    assert name.startswith("flash_fwd_sm90_f16_d64_")  # sm_90: the wgmma recipe
    assert (k["kind"], k["dtype"], k["head_dim"], k["causal"], k["mask"]) == (
        "forward", "f16", "64", "top_left", "1")
    assert "arch 90" in (pathlib.Path(directory) / "manifest.txt").read_text()
    assert (pathlib.Path(directory) / "variant.mlir").is_file()
    # Nothing half-written is left beside it.
    assert os.listdir(cache / "h100") == [pathlib.Path(directory).name]

    # A second request is a cache hit: nothing is compiled.
    def no_compile(self):
        raise AssertionError("compiled again despite the cached artifact")
    monkeypatch.setattr(_compile.Job, "run", no_compile)
    assert _compile.artifact_for(MASKED, H100) == directory


def test_compile_f32_output_forward(rt, cache, compiler, monkeypatch,
                                    tmp_path):
    # out_f32 compiles the flash.attention with an f32 result: its kernel
    # says so in the manifest and is found by the variant with out_f32.
    monkeypatch.setenv("FLASHFUSE_KERNEL_DIR", str(tmp_path / "empty"))
    directory, index = _kernels.locate(MASKED_F32, capability=(8, 0))
    assert pathlib.Path(directory).parent == cache / "a100"
    (name, k), = manifest_kernels(directory).items()
    assert name.startswith("flash_fwd_sm80_f16_d64_") and name.endswith(
        "_causal_mask_of32")
    assert (k["kind"], k["dtype"], k["out_f32"]) == ("forward", "f16", "1")
    assert "xf32>" in (pathlib.Path(directory) / "variant.mlir").read_text()
    info = rt.Manifest.open(directory).kernels()[index]
    assert info.variant.key() == MASKED_F32.key()
    assert info.variant.describe().endswith("mask out=f32")
    # The 16-bit variant is not served by it.
    assert not _kernels.has_kernel(MASKED, directory)


def test_compile_deterministic_backward(cache, compiler):
    directory = _compile.artifact_for(BACKWARD, H100, deterministic=True)
    kinds = sorted(k["kind"] for k in manifest_kernels(directory).values())
    assert kinds == ["backward", "backward_dq", "backward_postprocess",
                     "backward_preprocess"]
    assert all(k["causal"] == "bottom_right" and k["mask"] == "1"
               for k in manifest_kernels(directory).values())


def test_losing_the_race_keeps_the_winner(cache, compiler):
    job = _compile.Job(MASKED, "h100", compiler)
    first = job.run()
    stamp = (first / "manifest.txt").stat().st_mtime_ns
    # Another process's compile that finishes second: its rename fails,
    # the first artifact stays and the loser's temporary directory goes.
    assert job.run() == first
    assert (first / "manifest.txt").stat().st_mtime_ns == stamp
    assert os.listdir(cache / "h100") == [first.name]


def test_compiler_errors_carry_its_message(cache, compiler):
    unsupported = rt.Variant(rt.KIND_FORWARD, rt.DTYPE_F16, 44, 44, 0, 0, 0,
                             0, 0, 0)
    with pytest.raises(CompileError, match="(?s)compiling 'forward f16 D=44 "
                       ".*exit status 1.*the sm80 recipe serves head dims "
                       "that are multiples of 8 from 8 to 256, got D = 44"):
        _compile.artifact_for(unsupported, H100)
    assert not list((cache / "h100").iterdir())  # no partial entry


def test_locate_compiles_what_no_artifact_has(rt, cache, compiler,
                                              monkeypatch, tmp_path):
    # No library at all: the compiled artifact is the only source.
    monkeypatch.setenv("FLASHFUSE_KERNEL_DIR", str(tmp_path / "empty"))
    directory, index = _kernels.locate(MASKED, capability=H100)
    assert pathlib.Path(directory).parent == cache / "h100"
    info = rt.Manifest.open(directory).kernels()[index]
    assert info.variant.key() == MASKED.key()


def test_locate_says_why_nothing_was_compiled(rt, cache, compiler,
                                             monkeypatch, tmp_path):
    monkeypatch.setenv("FLASHFUSE_KERNEL_DIR", str(tmp_path / "empty"))
    # A GPU flashfuse-compile has no target for.
    with pytest.raises(KernelNotFoundError, match="not compiled on demand: "
                       "flashfuse-compile has no target for sm_75"):
        _kernels.locate(MASKED, capability=(7, 5))
    # No compiler.
    monkeypatch.setattr(_compile, "find_compiler", lambda: None)
    with pytest.raises(KernelNotFoundError, match="not compiled on demand: "
                       "no flashfuse-compile found in \\$FLASHFUSE_COMPILE"):
        _kernels.locate(MASKED, capability=H100)
    # Without a capability (a caller that cannot say which GPU) nothing is
    # compiled either.
    with pytest.raises(KernelNotFoundError, match="no kernel artifacts"):
        _kernels.locate(MASKED)


def test_without_ptxas_the_artifact_is_ptx_only(cache, compiler, monkeypatch):
    # A machine with a driver and no CUDA toolkit: the driver assembles the
    # PTX on load, so the entry must not depend on a cubin.
    monkeypatch.setattr(_compile._tools, "find_ptxas", lambda: None)
    job = _compile.Job(MASKED, "h100", compiler)
    assert "--no-cubin" in job.flags
    directory = _compile.artifact_for(MASKED, H100)
    files = os.listdir(directory)
    assert any(f.endswith(".ptx") for f in files)
    assert not any(f.endswith(".cubin") for f in files)
    # With ptxas it is another entry, not the PTX-only one.
    monkeypatch.setattr(_compile._tools, "find_ptxas", lambda: "/x/ptxas")
    assert _compile.Job(MASKED, "h100", compiler).directory != job.directory


def test_explicit_ptxas_setting_must_exist(monkeypatch, tmp_path):
    monkeypatch.setenv("FLASHFUSE_PTXAS", str(tmp_path / "nope"))
    with pytest.raises(ToolNotFoundError, match="FLASHFUSE_PTXAS=.*nope is "
                       "not an executable file"):
        _compile._tools.find_ptxas()


def test_log_reports_compiles_and_cache_hits(cache, compiler, monkeypatch,
                                             capfd):
    monkeypatch.setenv("FLASHFUSE_LOG", "1")
    directory = _compile.artifact_for(MASKED, H100)
    _compile.artifact_for(MASKED, H100)
    err = capfd.readouterr().err
    assert "compiled forward f16 D=64" in err and f"-> {directory}" in err
    assert "cache hit: forward f16 D=64" in err
    monkeypatch.setenv("FLASHFUSE_LOG", "0")
    _compile.artifact_for(MASKED, H100)
    assert capfd.readouterr().err == ""


def test_unwritable_cache_names_the_directory(compiler, monkeypatch,
                                              tmp_path):
    # A regular file where the cache's directory should be: no entry can be
    # made (a permission test would not fail as root, as CI runs).
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("FLASHFUSE_CACHE_DIR", str(blocker / "cache"))
    with pytest.raises(CompileError, match="cannot write compiled kernels "
                       "into .*file/cache/h100.*set FLASHFUSE_CACHE_DIR to a "
                       "writable directory"):
        _compile.artifact_for(MASKED, H100)
