"""Incoherent processing (docs/FP8.md "Incoherent processing") without a
GPU: the seeded rotation M = diag(s)·H/√D of flashfuse.hadamard,
quantize_fp8(hadamard=True) through its torch path, the error it saves on
FlashAttention-3's outlier inputs, its argument errors, and the Triton
kernel's indexing under Triton's CPU interpreter. test_fp8_hadamard_gpu.py
compares the kernel with the torch path on a GPU."""

import math
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch, "float8_e4m3fn"):
    pytest.skip("torch has no float8_e4m3fn", allow_module_level=True)

import flashfuse  # noqa: E402
from flashfuse import hadamard  # noqa: E402

from conftest import INSTALLED, ROOT  # noqa: E402

DIMS = (64, 128, 256)


@pytest.mark.parametrize("d", DIMS)
def test_rotation_is_orthogonal(d):
    m = hadamard.rotation_matrix(d, seed=1234).double()
    torch.testing.assert_close(m @ m.T, torch.eye(d, dtype=torch.float64),
                               rtol=0, atol=1e-6)
    # Every entry is ±1/√d: the rotation spreads each coordinate over all.
    assert bool((m.abs() - 1 / math.sqrt(d)).abs().max() < 1e-7)


@pytest.mark.parametrize("d", DIMS)
def test_butterflies_compute_x_times_m(d):
    # hadamard_rotate (the fast transform) against the dense product.
    x = torch.randn(3, 2, 5, d, dtype=torch.float64)
    m = hadamard.rotation_matrix(d, seed=9).double()
    torch.testing.assert_close(hadamard.hadamard_rotate(x, 9).double(), x @ m,
                               rtol=0, atol=1e-5)


def test_signs_follow_the_documented_rule():
    # The rule is part of the interface (a producer of Q and K outside this
    # package may rotate with it): pinned for seed 0, whose first
    # splitmix64 output is 0xe220a8397b1dcdaf (top bit set: -1).
    assert hadamard.signs(64, 0)[:16].tolist() == [
        -1, 1, 1, -1, 1, 1, 1, -1, 1, -1, 1, -1, -1, -1, -1, -1]
    a, b = hadamard.signs(256, 5), hadamard.signs(256, 6)
    assert torch.equal(a, hadamard.signs(256, 5))
    assert not torch.equal(a, b)
    # The signs of a shorter D are the first D of a longer one's.
    assert torch.equal(hadamard.signs(64, 5), a[:64])


def test_scores_preserved_with_one_seed_only():
    q = torch.randn(2, 4, 33, 128, dtype=torch.float64)
    k = torch.randn(2, 4, 65, 128, dtype=torch.float64)
    scores = q @ k.transpose(-1, -2)
    rq, rk = hadamard.hadamard_rotate(q, 77), hadamard.hadamard_rotate(k, 77)
    torch.testing.assert_close((rq @ rk.transpose(-1, -2)).double(), scores,
                               rtol=0, atol=1e-4)
    # Q and K rotated with different seeds give other scores, and nothing
    # can detect it: the hazard docs/FP8.md and quantize_fp8 warn about.
    wrong = hadamard.hadamard_rotate(k, 78)
    err = (rq @ wrong.transpose(-1, -2)).double() - scores
    assert err.abs().mean() > 0.5 * scores.abs().mean()


@pytest.mark.parametrize("per", ["head", "tensor"])
def test_quantize_hadamard_round_trip(per):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 37, 128, dtype=torch.bfloat16)
    x[1, 2] *= 100  # a head of another magnitude keeps its own scale
    x8, descale = flashfuse.quantize_fp8(x, per, hadamard=True, seed=3)
    assert x8.dtype == torch.float8_e4m3fn and x8.shape == x.shape
    assert descale.shape == ((2, 3) if per == "head" else ())
    rotated = hadamard.hadamard_rotate(x, 3)
    dims = (2, 3) if per == "head" else (0, 1, 2, 3)
    ds = descale.reshape(descale.shape + (1,) * (4 - descale.dim()))
    torch.testing.assert_close(
        ds, rotated.abs().amax(dim=dims, keepdim=True) / 448.0)
    # e4m3 round to nearest: within 2^-4 relative of a normal value, half
    # the smallest subnormal (2^-10 in units of the descale) below.
    back = x8.float() * ds
    bound = rotated.abs() * 2.0 ** -4 + ds * 2.0 ** -10
    assert bool(((back - rotated).abs() <= bound).all())
    # Mᵀ takes them back to x's coordinates: each element of e·Mᵀ is the
    # dot of e's row with a unit column, at most the row's norm.
    m = hadamard.rotation_matrix(128, 3)
    row_norm = (back - rotated).norm(dim=-1, keepdim=True)
    assert bool(((back @ m.T - x.float()).abs() <= row_norm * 1.001
                 + 1e-5).all())


def test_quantize_hadamard_keeps_the_layout():
    # Q as models hold it, [B, S, H, D] memory seen as [B, H, S, D]: the
    # e4m3 tensor has x's strides, as without the rotation.
    x = torch.randn(2, 9, 3, 64).transpose(1, 2)
    x8, _ = flashfuse.quantize_fp8(x, hadamard=True, seed=1)
    assert x8.stride() == x.stride() == flashfuse.quantize_fp8(x)[0].stride()


def _outliers(*shape, gen):
    """FlashAttention-3's inputs: N(0, 1) + N(0, 100) · Bernoulli(0.001)."""
    x = torch.randn(*shape, generator=gen)
    spikes = torch.rand(*shape, generator=gen) < 1e-3
    return x + 10.0 * torch.randn(*shape, generator=gen) * spikes


def _dequantised(x, seed=None):
    """x quantised per head and back in x's own coordinates (Mᵀ undone)."""
    x8, d = flashfuse.quantize_fp8(x, hadamard=seed is not None, seed=seed)
    back = x8.float() * d[:, :, None, None]
    if seed is None:
        return back
    return back @ hadamard.rotation_matrix(x.shape[-1], seed).T


def _attention(q, k, v):
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    return torch.softmax(s, dim=-1) @ v


def _errors(q, k, v, seed):
    """(RMSE of O, RMSE of Q's quantisation error, its largest element)
    with Q and K quantised (and rotated with `seed`), V quantised per head
    without rotation, against f32 attention of the unquantised inputs."""
    dq, dk, dv = _dequantised(q, seed), _dequantised(k, seed), _dequantised(v)
    o = _attention(dq, dk, dv)
    rmse = (o - _attention(q, k, v)).pow(2).mean().sqrt().item()
    qerr = dq - q
    return rmse, qerr.pow(2).mean().sqrt().item(), qerr.abs().max().item()


def test_rotation_lowers_error_on_outlier_inputs():
    gen = torch.Generator().manual_seed(2024)
    q, k, v = (_outliers(2, 4, 512, 128, gen=gen) for _ in range(3))
    o_plain, q_plain, max_plain = _errors(q, k, v, None)
    o_rot, q_rot, max_rot = _errors(q, k, v, 11)
    # The attention error falls (about 0.6x here): a quantised outlier no
    # longer perturbs every score of its row through one coordinate.
    assert o_rot < 0.8 * o_plain, (o_rot, o_plain)
    # The largest error on Q falls (about 0.2x): the outliers' rounding is
    # spread over D coordinates.
    assert max_rot < 0.5 * max_plain, (max_rot, max_plain)
    # The mean square error of Q does not: e4m3's rounding error is relative
    # to the value, and a rotation keeps the sum of squares (docs/FP8.md).
    assert 0.9 < q_rot / q_plain < 1.1, (q_rot, q_plain)


def test_rotation_costs_nothing_on_normal_inputs():
    gen = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(2, 4, 512, 128, generator=gen) for _ in range(3))
    o_plain, _, _ = _errors(q, k, v, None)
    o_rot, _, _ = _errors(q, k, v, 11)
    assert o_rot < 1.1 * o_plain, (o_rot, o_plain)


@pytest.mark.parametrize("call, error, message", [
    (lambda: flashfuse.quantize_fp8(torch.zeros(1, 1, 4, 96), hadamard=True,
                                    seed=0),
     ValueError, "head dim of 64, 128 or 256 \\(a power of two\\); got 96"),
    (lambda: flashfuse.quantize_fp8(torch.zeros(1, 1, 4, 32), hadamard=True,
                                    seed=0),
     ValueError, "head dim of 64, 128 or 256 .*got 32"),
    (lambda: flashfuse.quantize_fp8(torch.zeros(1, 1, 4, 64), hadamard=True),
     ValueError, "needs seed=, an int: pass the same one for Q and K"),
    (lambda: flashfuse.quantize_fp8(torch.zeros(1, 1, 4, 64), seed=1),
     ValueError, "seed is the Hadamard rotation's; pass hadamard=True"),
    (lambda: flashfuse.quantize_fp8(torch.zeros(1, 1, 4, 64), hadamard=True,
                                    seed=1.5),
     TypeError, "seed must be an int in \\[0, 2\\^64\\).*got float"),
    (lambda: flashfuse.quantize_fp8(torch.zeros(1, 1, 4, 64), hadamard=True,
                                    seed=True),
     TypeError, "seed must be an int .*got bool"),
    (lambda: flashfuse.quantize_fp8(torch.zeros(1, 1, 4, 64), hadamard=True,
                                    seed=-1),
     ValueError, "seed must be in \\[0, 2\\^64\\), got -1"),
    (lambda: flashfuse.quantize_fp8(torch.zeros(1, 1, 4, 64), hadamard=True,
                                    seed=1 << 64),
     ValueError, "seed must be in \\[0, 2\\^64\\)"),
    (lambda: flashfuse.quantize_fp8(torch.zeros(1, 1, 4, 64), hadamard="yes",
                                    seed=1),
     TypeError, "hadamard must be True or False, got 'yes'"),
    (lambda: hadamard.hadamard_rotate(torch.zeros(3, 100), 0),
     ValueError, "hadamard_rotate: the Hadamard rotation needs a head dim"),
    (lambda: hadamard.hadamard_rotate([1.0] * 64, 0),
     TypeError, "x must be a torch.Tensor, got list"),
])
def test_hadamard_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_plain_quantize_is_unchanged():
    # hadamard=False (the default) is the per-head quantisation of before.
    x = torch.randn(1, 2, 9, 64)
    a8, ad = flashfuse.quantize_fp8(x)
    b8, bd = flashfuse.quantize_fp8(x, hadamard=False)
    assert torch.equal(a8.view(torch.uint8), b8.view(torch.uint8))
    assert torch.equal(ad, bd)
    torch.testing.assert_close(ad, x.abs().amax(dim=(2, 3)) / 448.0)


# The Triton kernel's program indexing, strides, row masks, per-head
# atomics and descale strides, run by Triton's interpreter on the CPU. The
# kernel writes f32 here (out's dtype): the interpreter's f32 -> e4m3
# conversion is not the GPU's round to nearest even (triton 3.9 rounds
# 1.953 to 1.0), so the e4m3 cast is left to the GPU test.
_INTERPRETED = textwrap.dedent("""
    import torch
    from flashfuse import _hadamard_kernel as hk, fp8, hadamard
    assert hk.triton is not None
    torch.manual_seed(0)
    for d, s, per in ((64, 70, "head"), (128, 130, "tensor"), (256, 5, "head")):
        x = torch.randn(2, s, 3, d).transpose(1, 2)  # [B, H, S, D] view
        x[0, 1] *= 50
        mat = hadamard.signed_hadamard(d, 11)
        ref = hadamard.hadamard_rotate(x, 11)
        amax = hk.rotated_amax(x, mat)
        torch.testing.assert_close(amax, ref.abs().amax(dim=(2, 3)))
        descale = fp8._descale_of(amax.amax() if per == "tensor" else amax)
        out = torch.full((2, 3, s, d), float("nan"))
        hk.rotate_scaled(x, mat, descale, out)
        ds = descale if per == "tensor" else descale[:, :, None, None]
        expect = ref / ds
        # Each element sums d products of the scaled rows (up to 448): the
        # summation order (numpy's here, torch's in ref) moves it by a few
        # f32 ulps of that scale, not of the element (triton 3.9: 1.5e-4 at
        # 2.1). A wrong index errs by O(1) of the scale.
        torch.testing.assert_close(out, expect, rtol=1e-5,
                                   atol=1e-5 * float(expect.abs().max()))
    print("interpreted ok")
""")


def test_kernel_indexing_in_the_interpreter():
    pytest.importorskip("triton")
    env = dict(os.environ, TRITON_INTERPRET="1")
    if not INSTALLED:  # the checkout's package, as conftest.py imports it
        env["PYTHONPATH"] = os.pathsep.join(
            [str(ROOT / "python"), os.environ.get("PYTHONPATH", "")])
    run = subprocess.run([sys.executable, "-c", _INTERPRETED], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "interpreted ok" in run.stdout, \
        run.stdout + run.stderr
