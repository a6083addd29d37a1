#!/usr/bin/env python3
"""One forward shape for a profiler: our kernel, then SDPA's FlashAttention-2.

Launches each `--reps` times after a warm-up on the ANCHORS.md shape of
(D, S) (hidden 2048, 16k tokens), so that Nsight Compute can pick one launch
of each, e.g.

  ncu --kernel-name regex:flash_fwd --launch-skip 4 --launch-count 2 \\
      --section WarpStateStats --section SourceCounters -o prof \\
      python3 profile_forward.py ARTIFACT --d 128 --seq 2048

and `ncu -i prof.ncu-rep --page source --csv --print-source sass` then gives
per-instruction stall samples of both kernels side by side.
"""
import argparse, math, os, sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_and_bench import Artifact  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("artifact")
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--dtype", choices=("bf16", "f16"), default="bf16")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    from torch.nn.attention import sdpa_kernel, SDPBackend
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    H, B = 2048 // args.d, 16384 // args.seq
    art = Artifact(args.artifact)
    kern = art.find(args.dtype, args.d, "top_left" if args.causal else "none")
    if kern is None:
        sys.exit(f"no {args.dtype} D={args.d} kernel in {args.artifact}")
    q, k, v = (torch.randn(B, H, args.seq, args.d, device="cuda", dtype=tdt)
               for _ in range(3))
    o = torch.empty_like(q)
    lse = torch.empty(B, H, args.seq, device="cuda", dtype=torch.float32)
    for _ in range(2 + args.reps):
        art.launch(kern, q, k, v, o, lse, 1.0 / math.sqrt(args.d))
    torch.cuda.synchronize()
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        for _ in range(2 + args.reps):
            F.scaled_dot_product_attention(q, k, v, is_causal=args.causal)
    torch.cuda.synchronize()
    print(f"profiled {kern['name']} and SDPA-flash: B={B} H={H} S={args.seq} D={args.d}")


if __name__ == "__main__":
    main()
