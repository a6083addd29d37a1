"""The packed sm90ws forward's persistent walk against a block per unit,
by how evenly the batch fills its longest sequence (docs/PERF.md run 547,
"The packed sm90ws forward walks its tiles"). Needs a runtime that walks
whatever the fill (kPackedWalkMinFillPercent and
kPackedCausalWalkMinFillPercent set to 0 in runtime/lib/launch.cpp):
"walk" passes the batch's max_seqlen_k, "tiles" 8193 (past the walk's
bound, so a block per unit), "base" the kernels of another build's
<target>-varlen-ws (one tile a block before run 546).
    python3 scripts/kernels/bench_varlen_walk.py BASE_DIR"""
import math, random, statistics, sys
import torch
sys.path.insert(0, "python")
from flashfuse import _kernels, ops
from flashfuse.bench import time_ms
from flashfuse import _runtime as rt

BASE = sys.argv[1] if len(sys.argv) > 1 else ".device-carry/kc-base/h100-varlen-ws"
TOKENS = 32768


def spread(lo, hi, seed=0):
    rng = random.Random(seed)
    lens, total = [], 0
    while total < TOKENS:
        n = rng.randint(lo, hi)
        lens.append(n)
        total += n
    return lens


def launcher(q, k, v, o, lse, cu, max_q, max_k, directory, variant):
    kern = _kernels.kernel(q.device.index, variant, directory)
    a, p, keep = ops.varlen_launch_args(q, k, v, o, lse, cu, cu, max_q, max_k,
                                        1 / math.sqrt(q.shape[-1]), -1, -1, 0.0)
    def f():
        rt.attention_forward_varlen(kern, a, p, torch.cuda.current_stream().cuda_stream)
    f.keep = keep
    return f


cap = ops._capability(0)
batches = {"equal 2048": [2048] * 16, "1640..2048": spread(1640, 2048),
           "1024..2048": spread(1024, 2048), "128..4096": spread(128, 4096),
           "equal 1024": [1024] * 32, "768..1024": spread(768, 1024)}
cells, setups = [], {}
for d in (128, 64):
    for causal in (False, True):
        for name, lens in batches.items():
            hq = 2048 // d
            total = sum(lens)
            cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device="cuda")
            q, k, v = (torch.randn(total, hq, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            o, lse = torch.empty_like(v), torch.empty(hq, total, device="cuda")
            variant = _kernels.make_variant(rt.KIND_FORWARD, rt.DTYPE_BF16, d, d, 1 if causal else 0, varlen=True)
            ws = _kernels.sm90ws_dir(variant, capability=cap)
            m = {"walk": launcher(q, k, v, o, lse, cu, max(lens), max(lens), ws, variant),
                 "tiles": launcher(q, k, v, o, lse, cu, max(lens), 8193, ws, variant),
                 "base": launcher(q, k, v, o, lse, cu, max(lens), max(lens), BASE, variant)}
            fill = total / (len(lens) * max(lens))
            flop = sum(2 * n * n * 2 * d * hq / (2 if causal else 1) for n in lens)
            c = (d, causal, name)
            cells.append(c)
            setups[c] = (m, flop, fill)
for fn in setups[cells[0]][0].values():
    time_ms(fn, [()], 3, 5)
times = {c: {k: [] for k in ("walk", "tiles", "base")} for c in cells}
for r in range(3):
    for c in cells:
        order = ("walk", "tiles", "base") if r % 2 == 0 else ("base", "tiles", "walk")
        for key in order:
            times[c][key].append(time_ms(setups[c][0][key], [()], 3, 20))
print(f"# {torch.cuda.get_device_name()}, bf16, 3 rounds, TFLOP/s; walk / tiles / base")
print("D causal batch (fill) | walk | tiles | base | walk/tiles | walk/base | tiles/base")
for c in cells:
    m, flop, fill = setups[c]
    med = {k: statistics.median(v) for k, v in times[c].items()}
    tf = {k: flop / med[k] / 1e9 for k in med}
    print(f"{c[0]} {'causal' if c[1] else 'full'} {c[2]} ({fill:.2f}) | {tf['walk']:.1f} | {tf['tiles']:.1f} | "
          f"{tf['base']:.1f} | {med['tiles'] / med['walk']:.3f} | {med['base'] / med['walk']:.3f} | "
          f"{med['base'] / med['tiles']:.3f}")
