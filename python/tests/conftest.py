"""Shared fixtures. Tests that need no GPU run anywhere the runtime library
is built; GPU tests (marker `gpu`) skip with the reason when no GPU, torch
with CUDA or kernel artifact is present."""

import os
import pathlib
import sys
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# FLASHFUSE_TEST_INSTALLED=1 (scripts/test-wheel.sh): the package under test
# is the installed one (the wheel), with its own runtime library, tools and
# kernels, not python/ of this checkout with build/.
INSTALLED = os.environ.get("FLASHFUSE_TEST_INSTALLED") == "1"
if not INSTALLED:
    sys.path.insert(0, str(ROOT / "python"))

SAMPLE_ARTIFACT = ROOT / "runtime" / "test" / "data" / "sample"


@pytest.fixture
def rt():
    """The ctypes binding, skipping when the library is not built."""
    from flashfuse import _runtime
    from flashfuse.errors import RuntimeLibraryNotFound
    try:
        _runtime.library()
    except RuntimeLibraryNotFound as e:
        pytest.skip(f"runtime library not built: {e}")
    return _runtime


@pytest.fixture
def sample_dir():
    return SAMPLE_ARTIFACT


def cuda_skip_reason():
    """Why GPU tests cannot run here, or None."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA GPU (torch.cuda.is_available() is False)"
    if not os.environ.get("FLASHFUSE_KERNEL_DIR"):
        from flashfuse import _kernels
        if not _kernels.artifact_dirs():
            return "no kernel artifacts (set FLASHFUSE_KERNEL_DIR)"
    return None


def pytest_configure(config):
    # Kernels compiled on demand by the tests go to a cache of this run, not
    # the user's (~/.cache/flashfuse), unless a cache is chosen explicitly.
    if "FLASHFUSE_CACHE_DIR" not in os.environ:
        os.environ["FLASHFUSE_CACHE_DIR"] = tempfile.mkdtemp(
            prefix="flashfuse-test-cache-")


def pytest_collection_modifyitems(config, items):
    reason = None
    for item in items:
        if "gpu" in item.keywords:
            reason = reason or cuda_skip_reason() or ""
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


def _built_tool(name):
    """build/bin/<name> of this checkout (bin/ of the installed package when
    testing the wheel), or a skip saying it is not built (the tests that run
    the compiler's tools need a full build; the wheel has flashfuse-compile
    only)."""
    if INSTALLED:
        import flashfuse
        path = pathlib.Path(flashfuse.__file__).parent / "bin" / name
        if not path.is_file():
            pytest.skip(f"{name} is not in the wheel (a source build has it)")
        return path
    path = ROOT / "build" / "bin" / name
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.skip(f"{name} is not built ({path} missing); build FlashFuse "
                    f"(ninja -C build {name})")
    return path


@pytest.fixture
def opt_tool():
    return _built_tool("flashfuse-opt")


@pytest.fixture
def compile_tool():
    return _built_tool("flashfuse-compile")


@pytest.fixture
def hf_model_pair():
    """A function of a transformers config: (SDPA model, or `reference`'s
    implementation where the architecture has no SDPA path, the same
    weights with attn_implementation from flashfuse.hf.register()), both
    in eval mode, seeded, on the CPU."""
    def make(cfg, reference="sdpa"):
        import copy

        import torch
        import transformers

        import flashfuse.hf
        torch.manual_seed(0)
        impl = flashfuse.hf.register()
        ref = transformers.AutoModelForCausalLM.from_config(
            copy.deepcopy(cfg), attn_implementation=reference).eval()
        ours = transformers.AutoModelForCausalLM.from_config(
            copy.deepcopy(cfg), attn_implementation=impl).eval()
        ours.load_state_dict(ref.state_dict())
        return ref, ours
    return make


def hf_model(cfg, impl, dtype, state=None, device="cuda"):
    """A transformers causal LM from `cfg` with attn_implementation `impl`,
    `state` loaded, on `device` in `dtype` (its mode as from_config leaves
    it). A private copy of the config each: transformers records the
    implementation in the config, which models built from one object would
    otherwise share."""
    import copy

    import transformers

    m = transformers.AutoModelForCausalLM.from_config(
        copy.deepcopy(cfg), attn_implementation=impl)
    if state is not None:
        m.load_state_dict(state)
    return m.to(device, dtype)


def varlen_reference(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                     max_seqlen_k, is_causal=False, scale=None, window=None,
                     softcap=None, **kwargs):
    """flashfuse.varlen_attention's contract in PyTorch on the CPU
    (packed [total, H, D] sequences, each its own attention; GQA; causal
    top-left or bottom-right, a window about the same diagonal; a row that
    sees no key gives 0): the Hugging Face tests' stand-in for the varlen
    kernels."""
    import torch

    left, right = window if window is not None else (-1, -1)
    out = q.new_zeros(q.shape[0], q.shape[1], v.shape[-1])
    group = q.shape[1] // k.shape[1]
    for n in range(len(cu_seqlens_q) - 1):
        q0, q1 = int(cu_seqlens_q[n]), int(cu_seqlens_q[n + 1])
        k0, k1 = int(cu_seqlens_k[n]), int(cu_seqlens_k[n + 1])
        if q1 == q0 or k1 == k0:
            continue
        qi = q[q0:q1].transpose(0, 1)
        ki = k[k0:k1].transpose(0, 1).repeat_interleave(group, 0)
        vi = v[k0:k1].transpose(0, 1).repeat_interleave(group, 0)
        s = qi @ ki.transpose(-1, -2) * (scale or q.shape[-1] ** -0.5)
        if softcap:
            s = softcap * torch.tanh(s / softcap)
        i = torch.arange(q1 - q0)[:, None]
        j = torch.arange(k1 - k0)[None, :]
        diag = i + ((k1 - k0) - (q1 - q0)
                    if is_causal == "bottom_right" else 0)
        keep = torch.ones(q1 - q0, k1 - k0, dtype=torch.bool)
        if is_causal:
            keep &= j <= diag
        if left >= 0:
            keep &= j >= diag - left
        if right >= 0:
            keep &= j <= diag + right
        s = s.masked_fill(~keep, float("-inf"))
        p = s.softmax(-1).nan_to_num(0.0)
        out[q0:q1] = (p @ vi).transpose(0, 1)
    return out


def gpu_script(name):
    """scripts/kernels/<name>.py as a module, for the GPU tests that run a
    check script's cases; skips without a CUDA GPU or without the source
    tree's scripts (an installed wheel)."""
    import torch
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    return kernel_script(name)


@pytest.fixture(scope="module")
def alibi_check():
    """scripts/kernels/check_alibi.py for the ALiBi GPU tests, its kernels
    compiled on first use, or (a machine without flashfuse-compile) taken
    from the artifacts `check_alibi.py --compile DIR` wrote, named by
    FLASHFUSE_TEST_ALIBI_ARTIFACTS=DIR; skips without either."""
    module = gpu_script("check_alibi")
    carried = os.environ.get("FLASHFUSE_TEST_ALIBI_ARTIFACTS")
    if carried:
        saved = module.alibi.artifact_dir
        module.use_artifacts(carried)
        yield module
        module.alibi.artifact_dir = saved
        return
    from flashfuse import _compile
    if _compile.find_compiler() is None:
        pytest.skip("no flashfuse-compile to compile the ALiBi kernels")
    yield module


def kernel_script(name):
    """scripts/kernels/<name>.py as a module (for a check script's dry run
    too); skips without the source tree's scripts (an installed wheel)."""
    import importlib.util
    path = ROOT / "scripts" / "kernels" / f"{name}.py"
    if not path.is_file():
        pytest.skip("needs the source tree's scripts")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
