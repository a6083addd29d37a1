"""quantize_fp8(hadamard=True) on a GPU (docs/FP8.md "Incoherent
processing"): the Triton kernel (_hadamard_kernel.py: a dense ±1 product)
against the torch path (flashfuse.hadamard.hadamard_rotate: butterflies)
on the same inputs, and flashfuse.attention on rotated inputs against the
f32 attention of the originals (FP8 kernels needed: FLASHFUSE_KERNEL_DIR
or on-demand compiles, sm_90)."""

import math

import pytest

torch = pytest.importorskip("torch")

import flashfuse  # noqa: E402
from flashfuse import _hadamard_kernel, fp8, hadamard  # noqa: E402

from test_numerics_gpu import run_or_skip  # noqa: E402

pytestmark = pytest.mark.gpu


def _outliers(*shape, dtype=torch.bfloat16):
    """FlashAttention-3's inputs: N(0, 1) + N(0, 100) · Bernoulli(0.001)."""
    x = torch.randn(*shape, device="cuda")
    x += 10.0 * torch.randn_like(x) * (torch.rand_like(x) < 1e-3)
    return x.to(dtype)


def _e4m3_close(a8, b8):
    """Two e4m3 tensors within one e4m3 step everywhere (f32 sums in
    another order can move a value across a rounding boundary), and equal
    on all but a few elements. The step at |v| in [2^e, 2^(e+1)) is
    2^(e-3); 2^-9 below the normal range."""
    a, b = a8.float(), b8.float()
    step = torch.maximum(a.abs(), b.abs()) * 2.0 ** -3 + 2.0 ** -9
    assert bool(((a - b).abs() <= step).all()), (a - b).abs().max().item()
    differ = (a8.view(torch.uint8) != b8.view(torch.uint8)).float().mean()
    assert differ.item() < 1e-3, differ.item()


@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
@pytest.mark.parametrize("per", ["head", "tensor"])
@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16,
                                   torch.float32],
                         ids=["bf16", "fp16", "f32"])
def test_kernel_matches_torch_path(dtype, d, per, layout):
    torch.manual_seed(d)
    b, h, s = 2, 3, 1000  # S not a multiple of the kernel's 64 rows
    if layout == "bhsd":
        x = _outliers(b, h, s, d, dtype=dtype)
    else:  # [B, S, H, D] memory seen as [B, H, S, D], as models hold Q
        x = _outliers(b, s, h, d, dtype=dtype).transpose(1, 2)
    x[1, 2] *= 30  # a head of another magnitude
    if not _hadamard_kernel.usable(x):
        pytest.skip("the kernel needs Triton and an sm_89+ GPU (e4m3 "
                    "conversions)")
    x8, descale = flashfuse.quantize_fp8(x, per, hadamard=True, seed=42)
    ref8, ref_descale = fp8._quantize(hadamard.hadamard_rotate(x, 42), per)
    assert x8.dtype == torch.float8_e4m3fn and x8.shape == x.shape
    assert x8.stride() == x.stride()
    torch.testing.assert_close(descale, ref_descale, rtol=1e-5, atol=0)
    _e4m3_close(x8, ref8)


def test_kernel_zero_head_and_seeds():
    x = _outliers(1, 2, 130, 128)
    x[0, 1] = 0
    if not _hadamard_kernel.usable(x):
        pytest.skip("the kernel needs Triton and an sm_89+ GPU")
    x8, descale = flashfuse.quantize_fp8(x, hadamard=True, seed=5)
    assert descale[0, 1].item() == 1.0 and not bool(x8[0, 1].float().any())
    # Another seed is another rotation.
    y8, _ = flashfuse.quantize_fp8(x, hadamard=True, seed=6)
    assert not torch.equal(x8[0, 0].view(torch.uint8),
                           y8[0, 0].view(torch.uint8))


def test_attention_error_falls_with_rotation():
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("FP8 attention kernels are sm_90 (wgmma) only")
    torch.manual_seed(0)
    q, k, v = (_outliers(2, 8, 1024, 128) for _ in range(3))
    s = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(128)
    truth = torch.softmax(s, dim=-1) @ v.float()
    v8, vd = flashfuse.quantize_fp8(v)  # V is never rotated

    def rmse(seed):
        rot = dict(hadamard=seed is not None, seed=seed)
        q8, qd = flashfuse.quantize_fp8(q, **rot)
        k8, kd = flashfuse.quantize_fp8(k, **rot)
        o = run_or_skip(lambda: flashfuse.attention(
            q8, k8, v8, q_descale=qd, k_descale=kd, v_descale=vd,
            out_dtype=torch.bfloat16))
        return (o.float() - truth).pow(2).mean().sqrt().item()

    plain, rotated = rmse(None), rmse(1234)
    # About 0.6x in the torch model of the test (test_fp8_hadamard.py);
    # the kernel's P quantisation adds the same error to both.
    assert rotated < 0.8 * plain, (rotated, plain)
