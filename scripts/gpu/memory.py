#!/usr/bin/env python3
"""Extra GPU memory of one attention forward + backward, beyond its inputs,
outputs and gradients: FlashFuse (saves only O and LSE, f32 [B, H, S]; the
backward adds Dsum and an f32 dQ accumulator), SDPA-flash, and naive
attention (materialises the S x S scores and probabilities).

    FLASHFUSE_KERNEL_DIR=... python3 scripts/gpu/memory.py [--seqlens 4096 16384]
"""
import argparse
import json
import math

import torch
import torch.nn.functional as F


def naive(q, k, v):
    s = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    return torch.softmax(s.float(), dim=-1).to(q.dtype) @ v


def sdpa_flash(q, k, v):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return F.scaled_dot_product_attention(q, k, v)


def ours(q, k, v):
    import flashfuse
    return flashfuse.attention(q, k, v)


def extra_bytes(fn, b, h, s, d):
    """Peak allocated bytes during fn(q,k,v).backward(dO) minus what the
    tensors the caller owns take (q, k, v, dO, O and the three gradients)."""
    torch.cuda.empty_cache()
    mk = lambda: torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16,
                             requires_grad=True)
    q, k, v = mk(), mk(), mk()
    do = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    o = fn(q, k, v)
    o.backward(do)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    owned = 4 * q.numel() * q.element_size()  # O, dQ, dK, dV
    return peak - base - owned


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seqlens", nargs="+", type=int, default=[4096, 16384])
    ap.add_argument("--json")
    args = ap.parse_args()
    b, h, d = 1, 16, 128
    rows = []
    for s in args.seqlens:
        for name, fn in (("flashfuse", ours), ("sdpa-flash", sdpa_flash),
                         ("naive", naive)):
            try:
                x = extra_bytes(fn, b, h, s, d)
                rows.append({"method": name, "seqlen": s, "extra_bytes": x})
                print(f"S={s:6d} {name:10s} extra {x / 2**20:10.1f} MiB", flush=True)
            except torch.cuda.OutOfMemoryError:
                rows.append({"method": name, "seqlen": s, "extra_bytes": None})
                print(f"S={s:6d} {name:10s} out of memory", flush=True)
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
