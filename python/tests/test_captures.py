"""Kernels whose score_mod / mask_mod read values from above their op
(docs/KERNEL_ABI.md "Values captured by score_mod and mask_mod"), without a
GPU: the manifest's `captures` through ctypes, and flashfuse.artifact's
checks and launch arguments for them (the launch itself:
scripts/kernels/check_captures.py on a GPU)."""

import pytest

from conftest import ROOT

CAPTURES = ROOT / "runtime" / "test" / "data" / "captures"
TYPES = (("f32", 1), ("f16", -1), ("i64", 2))


def test_captures_through_ctypes(rt, sample_dir):
    assert rt.Manifest.open(CAPTURES).captures(0) == list(TYPES)
    assert rt.Manifest.open(sample_dir).captures(0) == []


def test_mod_kernels_are_not_variant_kernels(rt, monkeypatch):
    """A kernel that inlines a score_mod / mask_mod (`mods 1`) computes
    what its regions say: a plain call of its variant must not find it."""
    from flashfuse import _kernels
    from flashfuse.errors import KernelNotFoundError
    m = rt.Manifest.open(CAPTURES)
    assert m.mods(0)
    monkeypatch.setenv("FLASHFUSE_KERNEL_DIR", str(CAPTURES))
    with pytest.raises(KernelNotFoundError,
                       match="score_mod/mask_mod: launched by name"):
        _kernels.locate(m.kernels()[0].variant)


def test_kernel_info_names_the_captures(rt):
    from flashfuse import artifact
    info = artifact.kernel_info(CAPTURES)
    assert info.captures == TYPES
    assert ("memref", "capture2") in info.params


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def test_capture_arguments(rt, torch):
    from flashfuse import artifact
    info = artifact.kernel_info(CAPTURES)
    cpu = torch.device("cpu")
    slopes = torch.arange(8, dtype=torch.float32)
    ids = torch.zeros(2, 100, dtype=torch.int64)
    named, keep = artifact._capture_args(info, [slopes, 0.5, ids], cpu)
    assert named["capture0"] == (rt.PARAM_MEMREF, (slopes.data_ptr(), 8))
    assert named["capture1"] == (rt.PARAM_F32, 0.5)
    assert named["capture2"] == (rt.PARAM_MEMREF, (ids.data_ptr(), 200))
    assert named["capture2_stride_0"] == (rt.PARAM_I64, 100)
    # A view whose last dimension is not contiguous is copied; the strides
    # of one whose is are passed as they are.
    wide = torch.zeros(2, 256, dtype=torch.int64)
    named, keep = artifact._capture_args(info, [slopes, 1, wide[:, :100]], cpu)
    assert named["capture2_stride_0"] == (rt.PARAM_I64, 256)
    assert named["capture2"] == (rt.PARAM_MEMREF, (wide.data_ptr(), 356))
    named, keep = artifact._capture_args(info, [slopes, 1, ids.t().t()[:, ::2]],
                                         cpu)
    assert named["capture2_stride_0"] == (rt.PARAM_I64, 50)
    assert keep[-1].is_contiguous()


def test_capture_refusals(rt, torch):
    from flashfuse import artifact
    info = artifact.kernel_info(CAPTURES)
    cpu = torch.device("cpu")
    slopes = torch.zeros(8)
    ids = torch.zeros(2, 100, dtype=torch.int64)
    with pytest.raises(ValueError, match="takes 3 captured values \\(tensor "
                       "of rank 1 of f32, f16, tensor of rank 2 of i64\\), "
                       "got 0"):
        artifact._capture_args(info, None, cpu)
    with pytest.raises(TypeError, match="captures\\[2\\] must be a "
                       "torch.int64 tensor of rank 2 on cpu, got torch.int32 "
                       "tensor of rank 2"):
        artifact._capture_args(info, [slopes, 1.0, ids.int()], cpu)
    with pytest.raises(TypeError, match="captures\\[0\\] must be a "
                       "torch.float32 tensor of rank 1"):
        artifact._capture_args(info, [slopes[None], 1.0, ids], cpu)
    with pytest.raises(TypeError, match="captures\\[1\\] must be a Python "
                       "number \\(the kernel reads a scalar f16\\)"):
        artifact._capture_args(info, [slopes, slopes, ids], cpu)
    with pytest.raises(ValueError, match="captures\\[2\\] is empty"):
        artifact._capture_args(info, [slopes, 1.0, ids[:, :0]], cpu)
    # Offsets are 32-bit: a tensor spanning 2^31 elements is refused (meta
    # tensors: no memory), one that spans fewer passes, broadcast or not.
    meta = torch.device("meta")
    big = torch.empty(2, 2**30, dtype=torch.int64, device=meta)
    with pytest.raises(ValueError, match="captures\\[2\\] spans 2147483648 "
                       "elements; the kernels address a captured tensor in 32 "
                       "bits \\(at most 2147483647\\)"):
        artifact._capture_args(info, [slopes.to(meta), 1.0, big], meta)
    wide = torch.empty(1, 2**30, dtype=torch.int64, device=meta).expand(4, -1)
    artifact._capture_args(info, [slopes.to(meta), 1.0, wide], meta)


def test_backward_kernel_choice(rt, sample_dir):
    """flashfuse.artifact.backward's main kernel: the artifact's only
    backward kernel, or the one named; refusals before any tensor."""
    from flashfuse import artifact
    with pytest.raises(ValueError, match="has 0 backward kernels; name one"):
        artifact.backward(CAPTURES, None, None, None, None, None, None)
    with pytest.raises(ValueError, match="'flash_fwd_f16_d128' takes kind "
                       "forward, which backward\\(\\) does not pass"):
        artifact.kernel_info(sample_dir, "flash_fwd_f16_d128",
                             kind=rt.KIND_BACKWARD)
    info = artifact.kernel_info(sample_dir, kind=rt.KIND_BACKWARD)
    assert info.name == "flash_bwd_f16_d128"


def test_backward_plan_is_kept(rt, sample_dir, monkeypatch):
    """The backward's kernel sequence is planned once per artifact, main
    kernel and device, not at every call (its kernel search was about half
    a call's host time, docs/PERF.md runs 447-448)."""
    from flashfuse import artifact
    planned = []

    def plan(info, device_index):
        planned.append((info.name, device_index))
        return [("main", (object(), frozenset()))]

    monkeypatch.setattr(artifact, "_plan_backward", plan)
    monkeypatch.setattr(artifact, "_plans", {})
    info = artifact.kernel_info(sample_dir, kind=rt.KIND_BACKWARD)
    first = artifact._backward_plan(info, 0)
    assert artifact._backward_plan(info, 0) is first
    artifact._backward_plan(info, 1)
    assert planned == [(info.name, 0), (info.name, 1)]
