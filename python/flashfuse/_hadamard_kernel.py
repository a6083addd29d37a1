"""The Triton kernel of quantize_fp8(hadamard=True) (docs/FP8.md
"Incoherent processing"): rows of Q or K [B, H, S, D] multiplied by the
rotation M = diag(s)·H/√D (flashfuse.hadamard), in two launches of one
kernel:

  pass 1 (QUANTISE = False): the largest |x·M| of each (b, h), an f32
         [B, H] through atomic maxima (one per program and 64 columns);
  pass 2 (QUANTISE = True):  x·M again, divided by the descale that fp8.py
         derives from pass 1's amax, written as e4m3.

The per-head scale needs every rotated value of the head before the first
one can be written, and keeping the rotated head would cost a write and a
read of S·D·4 bytes; computing x·M twice costs a second read of x (2
bytes an element in bf16) and tensor-core time that is idle anyway.

x·M is one tl.dot of the row block with signed_hadamard, the ±1 matrix
diag(s)·H, then 1/√D in f32: ±1 is exact in bf16 and f16, the products
are exact and the sums are f32 on the tensor cores. A fast Walsh-Hadamard
transform in registers does D·log2 D additions instead of D² multiply-adds,
but in Triton each of its log2 D butterfly stages is a reshape and permute
of the tile, which the compiler lowers through layout conversions (shared
memory); the dense product is one tl.dot per 64 columns, and its 2·D flops per
element read (2 bytes in bf16) are 64-256 flops a byte, at or below an
H100's balance point (about 300 at the dense bf16 peak): the kernel stays
bound by memory, not by the extra flops.
The torch fallback (flashfuse.hadamard.hadamard_rotate) is the butterfly
transform, so the GPU test compares two independent computations of x·M.

Without Triton, on the CPU, on GPUs without e4m3 conversions (before
sm_89) or for an x whose last stride is not 1, fp8.py uses the fallback.
"""

import contextlib
import math

import torch

from .fp8 import E4M3_MAX

try:  # Triton is optional: hadamard_rotate in torch is the fallback.
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - depends on the installation
    triton = None

# Rows per program, and columns of x·M per tl.dot: the ±1 block a dot reads
# is D x 64 (32 KiB of bf16 at D = 256) beside the 64 x D row block.
_BLOCK_ROWS = 64
_BLOCK_COLS = 64
# Triton converts f32 to e4m3 (float8e4nv) with the sm_89+ instruction
# (cvt.rn.satfinite.e4m3x2.f32); earlier GPUs have no such conversion.
_CAPABILITY = (8, 9)

if triton is not None:
    # A jit function reads module globals only as constexprs.
    _E4M3_MAX = tl.constexpr(E4M3_MAX)

    @triton.jit
    def _rotate_kernel(x, mat, descale, out, amax, heads, seq, row_blocks,
                       sx_b, sx_h, sx_s, so_b, so_h, so_s, sd_b, sd_h,
                       inv_sqrt_d, D: tl.constexpr, BLOCK_ROWS: tl.constexpr,
                       BLOCK_COLS: tl.constexpr, QUANTISE: tl.constexpr,
                       PRECISION: tl.constexpr):
        # One program per (b, h, block of rows), the row blocks of one head
        # adjacent; 64-bit offsets, as B·H·S·D may pass 2^31.
        pid = tl.program_id(0).to(tl.int64)
        bh = pid // row_blocks
        b, h = bh // heads, bh % heads
        rows = (pid % row_blocks) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
        k = tl.arange(0, D)
        inside = rows[:, None] < seq
        # Rows past S load as zeros: their x·M is 0, which changes no amax.
        xt = tl.load(x + b * sx_b + h * sx_h + rows[:, None] * sx_s
                     + k[None, :], mask=inside, other=0.0)
        if QUANTISE:
            d = tl.load(descale + b * sd_b + h * sd_h)
        for n in tl.static_range(0, D, BLOCK_COLS):
            cols = n + tl.arange(0, BLOCK_COLS)
            m = tl.load(mat + k[:, None] * D + cols[None, :])
            y = tl.dot(xt, m, input_precision=PRECISION) * inv_sqrt_d
            if QUANTISE:
                # Divided, not multiplied by a reciprocal, as fp8.py's torch
                # path does, so that the amax lands on 448; the clamp
                # catches a quotient rounded above it, as torch's does.
                q = tl.math.div_rn(y, tl.zeros_like(y) + d)
                q = tl.minimum(tl.maximum(q, -_E4M3_MAX), _E4M3_MAX)
                tl.store(out + b * so_b + h * so_h + rows[:, None] * so_s
                         + cols[None, :], q.to(out.dtype.element_ty),
                         mask=inside)
            else:
                # One atomic per 64 columns (at most 4 a program): cheap
                # beside the loads, and no maximum carried across the
                # unrolled loop.
                tl.atomic_max(amax + bh, tl.max(tl.max(tl.abs(y), axis=1),
                                                axis=0))


def usable(x):
    """Whether the kernel can quantise `x` [B, H, S, D] (D checked by the
    caller): Triton present, a CUDA tensor on an sm_89+ GPU, rows
    contiguous, a dtype tl.dot takes."""
    return (triton is not None and x.is_cuda and x.stride(3) == 1
            and x.dtype in (torch.bfloat16, torch.float16, torch.float32)
            and torch.cuda.get_device_capability(x.device) >= _CAPABILITY)


def _launch(x, mat, quantise, descale=None, out=None, amax=None):
    b, h, s, d = x.shape
    row_blocks = triton.cdiv(s, _BLOCK_ROWS)
    # A per-tensor descale (shape []) is read at offset 0 for every head.
    sd = descale.stride() if descale is not None and descale.dim() == 2 \
        else (0, 0)
    so = out.stride()[:3] if out is not None else (0, 0, 0)
    # Placeholders for the pointers a pass does not read: any tensor.
    descale = x if descale is None else descale
    out = x if out is None else out
    amax = x if amax is None else amax
    # CPU tensors reach here only under TRITON_INTERPRET=1 (the CPU test of
    # the kernel's indexing).
    device = torch.cuda.device(x.device) if x.is_cuda else \
        contextlib.nullcontext()
    with device:
        _rotate_kernel[(b * h * row_blocks,)](
            x, mat, descale, out, amax, h, s, row_blocks, *x.stride()[:3],
            *so, *sd, 1.0 / math.sqrt(d), D=d, BLOCK_ROWS=_BLOCK_ROWS,
            BLOCK_COLS=_BLOCK_COLS, QUANTISE=quantise,
            # f32 inputs: a full-precision product (TF32 would round x to
            # 10 mantissa bits); 16-bit inputs ignore it.
            PRECISION="ieee" if x.dtype == torch.float32 else "tf32")


def rotated_amax(x, mat):
    """Pass 1: f32 [B, H], max |x·M| over each head's S x D values. `mat`
    is signed_hadamard(D, seed) in x's dtype and on its device."""
    amax = torch.zeros(x.shape[:2], dtype=torch.float32, device=x.device)
    _launch(x, mat, False, amax=amax)
    return amax


def rotate_scaled(x, mat, descale, out):
    """Pass 2: out = x·M / descale, clamped to ±448, in out's dtype (e4m3;
    any float dtype for a test that wants the values before the cast).
    `descale` f32 [B, H] or [] (one for the tensor); `out` [B, H, S, D]
    with its last stride 1."""
    _launch(x, mat, True, descale=descale, out=out)
    return out
