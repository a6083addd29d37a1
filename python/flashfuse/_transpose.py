"""Vᵀ for the FP8 kernels (KERNEL_ABI.md "FP8 forwards"): one tiled
transpose of a byte tensor's last two dimensions into a zero-padded,
contiguous buffer.

torch's own transposing copy moves one byte per thread with strided reads
(about 150 GB/s on an H200: a third of a 2k-token FP8 forward). With
Triton (shipped with CUDA builds of torch) each program loads a block of
keys x Dv coalesced and stores its transpose coalesced; without it, or
on the CPU, torch's copy serves.
"""

import torch

try:  # Triton is optional: torch's copy is the fallback.
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - depends on the installation
    triton = None

# Keys per program: a 64 x Dv byte tile (at most 16 KiB at Dv = 256).
_BLOCK_KEYS = 64

if triton is not None:
    @triton.jit
    def _transpose_kernel(src, dst, heads, keys, keys_pad, stride_b, stride_h,
                          stride_s, DV: tl.constexpr, BLOCK: tl.constexpr):
        bh = tl.program_id(1)
        b, h = bh // heads, bh % heads
        s = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        d = tl.arange(0, DV)
        x = tl.load(src + b * stride_b + h * stride_h + s[:, None] * stride_s
                    + d[None, :], mask=s[:, None] < keys, other=0)
        # Keys in [keys, keys_pad) are stored as the zeros loaded for them.
        tl.store(dst + bh * DV * keys_pad + d[:, None] * keys_pad + s[None, :],
                 tl.trans(x), mask=s[None, :] < keys_pad)


def transpose_padded(x, pad_to):
    """`x` [B, H, S, D] of one-byte elements (uint8 view; the last stride
    1) as a contiguous uint8 [B, H, D, S_pad], S_pad = S rounded up to a
    multiple of `pad_to`, zeros past S."""
    b, h, s, d = x.shape
    s_pad = -(-s // pad_to) * pad_to
    usable = (triton is not None and x.is_cuda and x.stride(3) == 1
              and d & (d - 1) == 0 and b * h < 65536)
    if not usable:
        out = torch.zeros(b, h, d, s_pad, dtype=torch.uint8, device=x.device)
        out[..., :s].copy_(x.transpose(-1, -2))
        return out
    out = torch.empty(b, h, d, s_pad, dtype=torch.uint8, device=x.device)
    grid = (triton.cdiv(s_pad, _BLOCK_KEYS), b * h)
    _transpose_kernel[grid](x, out, h, s, s_pad, x.stride(0), x.stride(1),
                            x.stride(2), DV=d, BLOCK=_BLOCK_KEYS)
    return out
