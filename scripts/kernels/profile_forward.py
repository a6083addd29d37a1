#!/usr/bin/env python3
"""One forward shape for a profiler: our kernel, then one of SDPA's backends
(FlashAttention-2 by default, cuDNN with --backend cudnn).

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


def add_shape_arguments(ap):
    """The artifact and one ANCHORS.md shape: --d, --seq, --dtype, --causal."""
    ap.add_argument("artifact")
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--dtype", choices=("bf16", "f16"), default="bf16")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--backend", choices=("flash", "cudnn"), default="flash",
                    help="the SDPA backend run beside ours")


class Problem:
    """The artifact's kernel for the shape of add_shape_arguments, random
    Q, K, V and the outputs (hidden 2048, 16k tokens), and both launches."""

    def __init__(self, args):
        tdt = {"f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
        self.H, self.B = 2048 // args.d, 16384 // args.seq
        self.art = Artifact(args.artifact)
        self.kern = self.art.find(args.dtype, args.d, "top_left" if args.causal else "none")
        if self.kern is None:
            sys.exit(f"no {args.dtype} D={args.d} kernel in {args.artifact}")
        self.q, self.k, self.v = (
            torch.randn(self.B, self.H, args.seq, args.d, device="cuda", dtype=tdt)
            for _ in range(3))
        self.o = torch.empty_like(self.q)
        self.lse = torch.empty(self.B, self.H, args.seq, device="cuda", dtype=torch.float32)
        self.args = args
        self.flops = 4 * self.B * self.H * args.seq ** 2 * args.d / (2 if args.causal else 1)

    def ours(self):
        self.art.launch(self.kern, self.q, self.k, self.v, self.o, self.lse,
                        1.0 / math.sqrt(self.args.d))

    def sdpa(self):
        from torch.nn.attention import sdpa_kernel, SDPBackend
        backend = {"flash": SDPBackend.FLASH_ATTENTION,
                   "cudnn": SDPBackend.CUDNN_ATTENTION}[self.args.backend]
        with sdpa_kernel(backend):
            F.scaled_dot_product_attention(self.q, self.k, self.v, is_causal=self.args.causal)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_shape_arguments(ap)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    p = Problem(args)
    for fn in (p.ours, p.sdpa):
        for _ in range(2 + args.reps):
            fn()
        torch.cuda.synchronize()
    print(f"profiled {p.kern['name']} and SDPA-{args.backend}: B={p.B} H={p.H} "
          f"S={args.seq} D={args.d}")


if __name__ == "__main__":
    main()
