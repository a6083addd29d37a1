"""Incoherent processing for FP8 attention (docs/FP8.md "Incoherent
processing"): the seeded random orthogonal matrix

    M = diag(s) · H / √D

(H the D x D Sylvester Hadamard matrix, H[i, j] = (-1)^popcount(i & j);
s a vector of random signs drawn from a seed) that multiplies every row of
Q and K before they are quantised to e4m3, and x·M computed in torch.

M is orthogonal (H Hᵀ = D·I, s_i² = 1), so (Q M)(K M)ᵀ = Q Kᵀ: the
attention of the rotated Q and K is the attention of the originals. An
outlier feature (one large coordinate) is spread over all D coordinates
of the rotated row, so e4m3's error on it no longer lands on one
coordinate of one row. The same M must rotate Q and K: the caller passes
the same seed to both quantisations, and nothing downstream can tell if
it did not (the scores are then simply wrong).

The signs are s_i = -1 where bit 63 of the i-th output of the splitmix64
generator seeded with `seed` is set, +1 otherwise: a rule written out here
rather than torch's generator, so that M does not depend on torch's
version or on the device (a C or CUDA producer of Q and K can reproduce
it).
"""

import functools
import math

import torch

# The head dims the rotation accepts: powers of two (the Sylvester
# construction exists for those only) for which FP8 kernels exist or are
# planned (docs/FP8.md; D = 64 has no e4m3 kernel yet).
HEAD_DIMS = (64, 128, 256)
_U64 = (1 << 64) - 1


def check_head_dim(d, who):
    """ValueError unless `d` is one of HEAD_DIMS."""
    if d not in HEAD_DIMS:
        raise ValueError(
            f"{who}: the Hadamard rotation needs a head dim of 64, 128 or "
            f"256 (a power of two); got {d}")


def check_seed(seed, who):
    """TypeError / ValueError unless `seed` is an int in [0, 2^64)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(
            f"{who}: seed must be an int in [0, 2^64) (the same for Q and "
            f"K), got {type(seed).__name__}")
    if not 0 <= seed <= _U64:
        raise ValueError(f"{who}: seed must be in [0, 2^64), got {seed}")


@functools.lru_cache(maxsize=64)
def _sign_list(d, seed):
    # splitmix64 (Steele, Lea and Flood 2014): a Weyl sequence through a
    # 64-bit finaliser; its top bit is a fair coin for every seed.
    state, signs = seed, []
    for _ in range(d):
        state = (state + 0x9E3779B97F4A7C15) & _U64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _U64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _U64
        z ^= z >> 31
        signs.append(-1.0 if z >> 63 else 1.0)
    return tuple(signs)


def signs(d, seed):
    """s: f32 [d] of ±1 for `seed` (the module's rule)."""
    check_head_dim(d, "flashfuse.hadamard.signs")
    check_seed(seed, "flashfuse.hadamard.signs")
    return torch.tensor(_sign_list(d, seed), dtype=torch.float32)


@functools.lru_cache(maxsize=32)
def signed_hadamard(d, seed, dtype=torch.float32, device="cpu"):
    """diag(s) · H, entries ±1 (exact in every float dtype), [d, d] in
    `dtype` on `device`: M without its 1/√d. Cached: the Triton kernel
    reads it on every call. Callers must not modify it."""
    h = torch.ones(1, 1)
    while h.shape[0] < d:  # Sylvester: H_2n = [[H_n, H_n], [H_n, -H_n]]
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)], 0)
    return (signs(d, seed)[:, None] * h).to(dtype=dtype, device=device)


def rotation_matrix(d, seed):
    """M = diag(s) · H / √d as f32 [d, d]; x·M is what hadamard_rotate and
    quantize_fp8(hadamard=True) compute for each row x."""
    return signed_hadamard(d, seed) * (1.0 / math.sqrt(d))


def hadamard_rotate(x, seed):
    """x·M in float32 and x's layout for `x` [..., D] (any float dtype,
    any device), D in HEAD_DIMS: the signs, then a fast Walsh-Hadamard transform (log2 D
    butterfly stages of x + y, x - y over pairs 2^k apart), then 1/√D. The
    torch fallback of quantize_fp8(hadamard=True) and the reference of its
    Triton kernel (which multiplies by signed_hadamard instead)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"hadamard_rotate: x must be a torch.Tensor, got "
                        f"{type(x).__name__}")
    d = x.shape[-1] if x.dim() else 0
    check_head_dim(d, "hadamard_rotate")
    check_seed(seed, "hadamard_rotate")
    y = x.float() * signs(d, seed).to(x.device)
    lead = y.shape[:-1]
    half = 1
    while half < d:
        # Pairs (i, i + half) within blocks of 2·half: each stage is one
        # Kronecker factor [[1, 1], [1, -1]] of H.
        pairs = y.reshape(*lead, d // (2 * half), 2, half)
        a, b = pairs[..., 0, :], pairs[..., 1, :]
        y = torch.stack((a + b, a - b), dim=-2).reshape(*lead, d)
        half *= 2
    # In x's layout (the butterflies' reshapes made it contiguous), as x's
    # quantisation without the rotation and the Triton kernel give it.
    out = torch.empty_like(x, dtype=torch.float32)
    return out.copy_(y).mul_(1.0 / math.sqrt(d))
