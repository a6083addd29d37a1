#!/usr/bin/env python3
"""One backward shape for a profiler: flashfuse.attention's backward, then
SDPA's cuDNN (or FlashAttention-2) backward, on the ANCHORS.md shape of
(D, S) (hidden 2048, 16k tokens, bf16).

Runs the forward once per method and the backward `--reps` times after two
warm-up calls, so that Nsight Compute can pick one launch of each main
kernel, e.g.

  ncu --kernel-name regex:'flash_bwd_sm90|bprop' --launch-skip 2 \\
      --launch-count 2 --section SpeedOfLight --section WarpStateStats \\
      --section InstructionStats -o prof \\
      python3 profile_backward.py --d 128 --seq 8192 --causal

(flashfuse's main backward kernel is flash_bwd_sm90_*; its preprocess and
postprocess are flash_bwd_pre_* / flash_bwd_post_*; cuDNN's kernels carry
"bprop" in their names). Needs FLASHFUSE_KERNEL_DIR with the forward and
backward kernels of the shape, like the GPU tests.
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
import flashfuse  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--seq", type=int, default=8192)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--backend", choices=("cudnn", "flash"), default="cudnn")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", choices=("flashfuse", "sdpa"),
                    help="run one method (one profile each)")
    ap.add_argument("--list", action="store_true",
                    help="the kernels of one backward call of each method "
                         "and their device times (torch.profiler)")
    args = ap.parse_args()
    h = 2048 // args.d
    b = max(1, 16384 // args.seq)
    shape = (b, h, args.seq, args.d)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    dout = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
    backend = (SDPBackend.CUDNN_ATTENTION if args.backend == "cudnn"
               else SDPBackend.FLASH_ATTENTION)

    def ours():
        return flashfuse.attention(q, k, v, is_causal=args.causal)

    def sdpa():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v,
                                                  is_causal=args.causal)

    for name, fwd in (("flashfuse", ours), ("sdpa", sdpa)):
        if args.only and args.only != name:
            continue
        out = fwd()
        for _ in range(2 + args.reps):
            torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
        torch.cuda.synchronize()
        print(f"{name}: {2 + args.reps} backward calls", flush=True)
        if args.list:
            acts = [torch.profiler.ProfilerActivity.CUDA]
            with torch.profiler.profile(activities=acts) as prof:
                torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
                torch.cuda.synchronize()
            for e in prof.events():
                if e.device_type == torch.autograd.DeviceType.CUDA:
                    print(f"  {e.device_time_total:9.1f} us  {e.name[:110]}")


if __name__ == "__main__":
    main()
