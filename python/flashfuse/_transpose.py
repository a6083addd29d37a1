"""Vt for the FP8 kernels (KERNEL_ABI.md "FP8 forwards"): one tiled
transpose of a byte tensor's last two dimensions into a zero-padded,
contiguous buffer whose keys are permuted within groups of 32.

The key order is runtime/include/flashfuse/fp8_vt_layout.h's: position p
of a group holds key 16 p[4] + 8 p[1] + 2 p[3:2] + p[0], the order in
which the kernels' k32 operand of P finds the probabilities in each
thread's own registers (so P needs no exchange between threads).

torch's own transposing copy moves one byte per thread with strided reads
(about 150 GB/s on an H200: a third of a 2k-token FP8 forward). With
Triton (shipped with CUDA builds of torch) each program loads a block of
keys x Dv coalesced (its rows gathered in the group order) and stores its
transpose coalesced; without it, or on the CPU, torch's copy serves.
"""

import torch

try:  # Triton is optional: torch's copy is the fallback.
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - depends on the installation
    triton = None

# fp8_vt_layout.h's FLASHFUSE_FP8_VT_KEY_GROUP.
KEY_GROUP = 32
# Keys per program: a 64 x Dv byte tile (at most 16 KiB at Dv = 256), whole
# groups.
_BLOCK_KEYS = 64


def key_at(position):
    """fp8_vt_layout.h's flashfuse_fp8_vt_key_at, on ints or integer
    tensors: the key (within its group) that `position` holds."""
    return (position & 0x11) | ((position & 2) << 2) | ((position >> 1) & 6)


if triton is not None:
    @triton.jit
    def _transpose_kernel(src, dst, heads, keys, keys_pad, stride_b, stride_h,
                          stride_s, DV: tl.constexpr, BLOCK: tl.constexpr):
        bh = tl.program_id(1)
        b, h = bh // heads, bh % heads
        pos = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        # The key each position holds (key_at; BLOCK is whole groups).
        s = (pos & ~31) | (pos & 0x11) | ((pos & 2) << 2) | ((pos >> 1) & 6)
        d = tl.arange(0, DV)
        x = tl.load(src + b * stride_b + h * stride_h + s[:, None] * stride_s
                    + d[None, :], mask=s[:, None] < keys, other=0)
        # Keys in [keys, keys_pad) are stored as the zeros loaded for them.
        tl.store(dst + bh * DV * keys_pad + d[:, None] * keys_pad
                 + pos[None, :], tl.trans(x), mask=pos[None, :] < keys_pad)


def fp8_vt(x):
    """`x` [B, H, S, D] of one-byte elements (uint8 view; the last stride
    1) as Vt: a contiguous uint8 [B, H, D, S_pad], S_pad = S rounded up to
    a multiple of KEY_GROUP, the keys of each group in key_at's order and
    zeros for keys past S."""
    b, h, s, d = x.shape
    s_pad = -(-s // KEY_GROUP) * KEY_GROUP
    usable = (triton is not None and x.is_cuda and x.stride(3) == 1
              and d & (d - 1) == 0 and b * h < 65536)
    if not usable:
        padded = torch.zeros(b, h, s_pad, d, dtype=torch.uint8,
                             device=x.device)
        padded[:, :, :s].copy_(x)
        pos = torch.arange(s_pad, device=x.device)
        order = (pos & ~(KEY_GROUP - 1)) | key_at(pos)
        return padded[:, :, order].transpose(-1, -2).contiguous()
    out = torch.empty(b, h, d, s_pad, dtype=torch.uint8, device=x.device)
    grid = (triton.cdiv(s_pad, _BLOCK_KEYS), b * h)
    _transpose_kernel[grid](x, out, h, s, s_pad, x.stride(0), x.stride(1),
                            x.stride(2), DV=d, BLOCK=_BLOCK_KEYS)
    return out
