#!/usr/bin/env python3
"""A/B timing of one library's forward kernels built several ways.

    ab_forward.py NAME=DIR [NAME=DIR ...] [--fp8] [--dims 64,128]
                  [--seqs 2048,8192] [--reps 5] [--kernels REGEX]
                  [--identical [--shapes BxHxS,...]]

Each DIR is a kernel artifact (manifest.txt + cubin) of the same suite, for
example the library of two commits, or of two tiles. Every kernel of the
first artifact that the others hold under the same name up to its tile
(`_m128n192w8s2` and `_m128n128w8s3` match), and that matches --dims / --kernels
(16-bit forwards without bias, mask or dropout; with --fp8 the e4m3 ones),
is timed in each artifact on the same inputs, in interleaved repetitions
(each method warmed up for 250 ms of its own calls, medians), beside SDPA's
cuDNN backend. Prints one JSON line per (kernel, S) with TFLOP/s and the
ratio of each artifact to the first.

hidden 2048, B = 16k / S, as check_and_bench.py and check_fp8.py.

With --identical nothing is timed: every artifact's O and LSE must equal
the first's bit for bit (16-bit kernels), for changes that should not
move a bit, such as the order in which a grid walks its tiles.
"""
import argparse
import json
import math
import os
import re
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_and_bench import Artifact, interleaved_tflops  # noqa: E402

HIDDEN, TOKENS = 2048, 16384


def variant_of(name):
    """A kernel's name without its tile: the kernels of two artifacts that
    serve the same variant."""
    return re.sub(r"_m\d+n\d+w\d+s\d+", "", name)


def selected(kern, fp8, dims, pattern):
    if kern["kind"] != "forward" or int(kern["head_dim"]) not in dims:
        return False
    if (kern["dtype"] == "e4m3") != fp8:
        return False
    if any(int(kern.get(f, 0)) for f in ("bias", "mask", "dropout", "out_f32")):
        return False
    return not pattern or re.search(pattern, kern["name"])


def variant_inputs(kern):
    """The window, softcap and 16-bit input dtype a kernel's variant is
    launched with (the same for timing and for the bit check)."""
    window = (int(kern.get("window_left", 64)), 0) if int(kern.get("window", 0)) else (-1, -1)
    softcap = 30.0 if int(kern.get("softcap", 0)) else 0.0
    tdt = torch.float16 if kern["dtype"] == "f16" else torch.bfloat16
    return window, softcap, tdt


def bench(arts, name, S, reps):
    from torch.nn.attention import sdpa_kernel, SDPBackend
    first = arts[0][1]
    kern = next(k for k in first.kernels if k["name"] == name)
    d, causal = int(kern["head_dim"]), kern["causal"] != "none"
    fp8 = kern["dtype"] == "e4m3"
    H, B = HIDDEN // d, TOKENS // S
    scale = 1.0 / math.sqrt(d)
    window, softcap, tdt = variant_inputs(kern)
    # Three input sets in rotation, so that repeated runs do not hit L2 only.
    sets = []
    for _ in range(3):
        q, k, v = (torch.randn(B, H, S, d, device="cuda", dtype=tdt) for _ in range(3))
        if fp8:
            from check_fp8 import quantised
            sets.append(((q, k, v), quantised(q, k, v)))
        else:
            sets.append(((q, k, v), None))
    odt = {"bf16": torch.bfloat16, "f16": torch.float16}.get(
        kern.get("out_dtype") or kern["dtype"], torch.bfloat16)
    o = torch.empty(B, H, S, d, device="cuda", dtype=odt)
    lse = torch.empty(B, H, S, device="cuda")
    it = [0]

    def nxt():
        it[0] += 1
        return sets[it[0] % 3]

    def ours(art, k):
        # Each input set's launch packed once (Artifact.prepared): packing
        # costs 0.1-0.45 ms of Python a call, more than the short kernels run
        # (docs/PERF.md runs 380-382, 401).
        if fp8:
            from check_fp8 import prepared_fp8
            runs = [prepared_fp8(art, k, q8, k8, vt, o, lse, ds, scale, window, softcap)
                    for _, (q8, k8, _, vt, ds) in sets]
        else:
            runs = [art.prepared(k, q, kk, v, o, lse, scale, window=window, softcap=softcap)
                    for (q, kk, v), _ in sets]

        def run():
            it[0] += 1
            runs[it[0] % 3]()
        return run

    def cudnn():
        (q, k, v), _ = nxt()
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    methods = []
    for label, art in arts:
        k = next(x for x in art.kernels
                 if variant_of(x["name"]) == variant_of(name))
        methods.append((label, ours(art, k)))
    if window == (-1, -1) and not softcap:
        methods.append(("sdpa-cudnn", cudnn))
    res = {"kernel": name, "d": d, "S": S, "B": B, "H": H, "causal": kern["causal"]}
    flops = 4 * B * H * S * S * d / (2 if causal else 1)
    res.update(interleaved_tflops(methods, flops, reps, res))
    base = res.get(arts[0][0])
    for label, _ in arts[1:]:
        if base and res.get(label):
            res[label + "/" + arts[0][0]] = round(res[label] / base, 4)
    return res


def identical(arts, name, B, H, S):
    """Whether every artifact's O and LSE equal the first's bit for bit on
    one input (three launches each: a dynamic walk's counter must come back
    to 0 after every launch), for a change that should not move a bit (the
    tile order of a walk)."""
    first = arts[0][1]
    kern = next(k for k in first.kernels if k["name"] == name)
    d = int(kern["head_dim"])
    window, softcap, tdt = variant_inputs(kern)
    q, k, v = (torch.randn(B, H, S, d, device="cuda", dtype=tdt) for _ in range(3))
    outs = []
    for _, art in arts:
        kk = next(x for x in art.kernels if variant_of(x["name"]) == variant_of(name))
        for _ in range(3):
            o = torch.full((B, H, S, d), float("nan"), device="cuda", dtype=tdt)
            lse = torch.full((B, H, S), float("nan"), device="cuda")
            art.launch(kk, q, k, v, o, lse, 1.0 / math.sqrt(d), window=window,
                       softcap=softcap)
            outs.append((o, lse))
    torch.cuda.synchronize()
    o0, l0 = outs[0]
    return all(torch.equal(o, o0) and torch.equal(l, l0) for o, l in outs[1:])


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("artifacts", nargs="+", metavar="NAME=DIR")
    ap.add_argument("--fp8", action="store_true", help="the e4m3 forwards")
    ap.add_argument("--dims", default="64,128")
    ap.add_argument("--seqs", default="2048,8192")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--kernels", default=None, metavar="REGEX")
    ap.add_argument("--json", default=None, help="write every result here")
    ap.add_argument("--identical", action="store_true",
                    help="instead of timing, check that every artifact's O and "
                    "LSE equal the first's bit for bit (on --shapes)")
    ap.add_argument("--shapes", default="8x16x2048,1x16x16384,3x5x1000",
                    metavar="BxHxS,...",
                    help="the inputs of --identical (default: %(default)s; "
                    "O starts as NaN, so a tile the walk skips shows)")
    args = ap.parse_args()
    if args.identical and args.fp8:
        ap.error("--identical compares the 16-bit kernels only")
    try:
        shapes = [tuple(int(x) for x in t.split("x")) for t in args.shapes.split(",")]
    except ValueError:
        shapes = []
    if not shapes or any(len(t) != 3 or min(t) < 1 for t in shapes):
        ap.error(f"--shapes: expected BxHxS,... of positive ints, got {args.shapes!r}")
    arts = []
    for spec in args.artifacts:
        label, _, path = spec.partition("=")
        if not path:
            ap.error(f"{spec}: expected NAME=DIR")
        arts.append((label, Artifact(path)))
    dims = {int(x) for x in args.dims.split(",")}
    names = [k["name"] for k in arts[0][1].kernels
             if selected(k, args.fp8, dims, args.kernels)
             and all(any(variant_of(x["name"]) == variant_of(k["name"])
                         for x in a.kernels) for _, a in arts[1:])]
    print(f"device: {torch.cuda.get_device_name()}  kernels: {len(names)}", flush=True)
    if args.identical:
        bad = 0
        for name in names:
            for B, H, S in shapes:
                ok = identical(arts, name, B, H, S)
                bad += not ok
                print(f"{'same' if ok else 'DIFFERENT'} {name} {B}x{H}x{S}", flush=True)
        print(f"identical: {bad} differ", flush=True)
        return 1 if bad else 0
    # A throwaway shape first: the first timed shape otherwise pays for
    # the clock ramp and module loading.
    if names:
        bench(arts, names[0], 1024, 1)
    rows = []
    for name in names:
        for S in (int(s) for s in args.seqs.split(",")):
            r = bench(arts, name, S, args.reps)
            rows.append(r)
            print(json.dumps({k: (round(v, 1) if isinstance(v, float) and v > 10 else v)
                              for k, v in r.items()}), flush=True)
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
