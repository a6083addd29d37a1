"""The packed-batch forward on its two Hopper kernels, each forced: the
sm90 one (<target>-varlen) and the sm90ws one (<target>-varlen-ws), with
our dense forward over the same tokens in equal lengths beside them
(flashfuse.attention, the sm90ws persistent kernels from 2k keys). Each
method warmed up 250 ms on its own calls, medians of interleaved rounds;
FlashAttention's rule per sequence for both varlen kernels (f32 reference
of each sequence alone).
    python3 scripts/kernels/bench_varlen_ws.py [ROUNDS] [--baseline DIR]
        [--head-dims 128,64,192] [--lengths random,512,a-b,...]
--lengths names the batches: "random" (issue 18's), N (equal lengths of N
tokens), a-b (lengths drawn uniformly from a..b, about 32k tokens).
With --baseline, DIR's sm90ws varlen kernels (another build's
<target>-varlen-ws) are timed beside them ("base": ws / base).
(docs/PERF.md, "The sm90ws forward over packed batches", "The packed
sm90ws forward walks its tiles")."""
import math, random, statistics, sys
import torch
import torch.nn.functional as F
sys.path.insert(0, "python")
import flashfuse
from flashfuse import _kernels, ops
from flashfuse.bench import time_ms
from flashfuse import _runtime as rt

args = sys.argv[1:]
BASELINE = None
if "--baseline" in args:
    at = args.index("--baseline")
    BASELINE = args[at + 1]
    del args[at:at + 2]
HEAD_DIMS = (128, 64, 192)
if "--head-dims" in args:
    at = args.index("--head-dims")
    HEAD_DIMS = tuple(int(x) for x in args[at + 1].split(","))
    del args[at:at + 2]
LENGTHS = ("random", "512", "1024", "2048", "4096")
if "--lengths" in args:
    at = args.index("--lengths")
    LENGTHS = tuple(args[at + 1].split(","))
    del args[at:at + 2]
ROUNDS = int(args[0]) if args else 3
TOKENS = 32768


def lengths_of(name):
    if name == "random":  # issue 18's batch: 16 of 128..4k, about 32k tokens
        rng = random.Random(0)
        return [rng.randint(128, 4096) for _ in range(16)]
    if "-" in name:  # uniform in a..b, about TOKENS tokens
        a, b = (int(x) for x in name.split("-"))
        rng, lens = random.Random(a * 7919 + b), []
        while sum(lens) < TOKENS - (a + b) // 2:
            lens.append(rng.randint(a, b))
        return lens
    n = int(name)
    return [n] * (TOKENS // n)


def launcher(q, k, v, o, lse, cu, max_len, causal, directory, variant):
    kern = _kernels.kernel(q.device.index, variant, directory)
    a, p, keep = ops.varlen_launch_args(q, k, v, o, lse, cu, cu, max_len,
                                        max_len, 1 / math.sqrt(q.shape[-1]),
                                        -1, -1, 0.0)
    def f():
        rt.attention_forward_varlen(kern, a, p, torch.cuda.current_stream().cuda_stream)
        return o
    f.keep = keep
    return f


def rule(out, q, k, v, lens, causal):
    """max over sequences of err / (2 err_bf16 + 1e-5) (<= 1 passes)."""
    worst, start = 0.0, 0
    for n in lens[:4]:
        qs, ks, vs = (t[start:start + n].transpose(0, 1)[None] for t in (q, k, v))
        g = q.shape[1] // k.shape[1]
        ks, vs = ks.repeat_interleave(g, 1), vs.repeat_interleave(g, 1)
        ref = F.scaled_dot_product_attention(qs.float(), ks.float(), vs.float(), is_causal=causal)
        low = F.scaled_dot_product_attention(qs, ks, vs, is_causal=causal).float()
        got = out[start:start + n].transpose(0, 1)[None].float()
        worst = max(worst, (got - ref).abs().max().item()
                    / (2 * (low - ref).abs().max().item() + 1e-5))
        start += n
    return worst


def main():
    torch.manual_seed(0)
    cap = ops._capability(0)
    cells = [(d, causal, name) for d in HEAD_DIMS if d != 192 for causal in (False, True)
             for name in LENGTHS]
    # DeepSeek's MLA prefill (D = 192, Dv = 128, 16 heads; one tile a block,
    # so not beside a baseline)
    if not BASELINE and 192 in HEAD_DIMS:
        cells += [(192, causal, name) for causal in (False, True)
                  for name in LENGTHS]
    setups = {}
    for d, causal, name in cells:
        dv = 128 if d == 192 else d
        hq = 16 if d == 192 else 2048 // d; hkv = hq
        lens = lengths_of(name)
        total = sum(lens)
        cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device="cuda")
        q, k = (torch.randn(total, hq, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        v = torch.randn(total, hq, dv, device="cuda", dtype=torch.bfloat16)
        o = torch.empty_like(v); lse = torch.empty(hq, total, device="cuda")
        variant = _kernels.make_variant(rt.KIND_FORWARD, rt.DTYPE_BF16, d, dv, 1 if causal else 0, varlen=True)
        dirs = [dd for dd, _ in _kernels.locate_all(variant, cap)]
        sm90 = next(dd for dd in dirs if "-ws" not in str(dd))
        ws = _kernels.sm90ws_dir(variant, capability=cap)
        flop = sum(2 * n * n * (d + dv) * hq / (2 if causal else 1) for n in lens)
        # dense: equal lengths, same tokens
        s_eq = (2048 if name == "random" else
                1 << round(math.log2(total / len(lens))) if "-" in name else int(name))
        b_eq = TOKENS // s_eq
        qd, kd = (torch.randn(b_eq, hq, s_eq, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        vd = torch.randn(b_eq, hq, s_eq, dv, device="cuda", dtype=torch.bfloat16)
        dense_flop = 2 * b_eq * s_eq * s_eq * (d + dv) * hq / (2 if causal else 1)
        m = {"sm90": launcher(q, k, v, o, lse, cu, max(lens), causal, sm90, variant),
             "sm90ws": launcher(q, k, v, torch.empty_like(v), torch.empty_like(lse), cu, max(lens), causal, ws, variant),
             "dense": lambda qd=qd, kd=kd, vd=vd, causal=causal:
                 flashfuse.attention(qd, kd, vd, is_causal=causal)}
        if BASELINE:
            m["base"] = launcher(q, k, v, torch.empty_like(v), torch.empty_like(lse), cu,
                                 max(lens), causal, BASELINE, variant)
        errs = {}
        for key in [k for k in ("sm90", "sm90ws", "base") if k in m]:
            out = m[key]()
            errs[key] = rule(out, q, k, v, lens, causal)
        setups[(d, causal, name)] = (m, flop, dense_flop, errs, (sm90, ws))
    for fn in setups[cells[-1]][0].values():  # a throwaway shape
        time_ms(fn, [()], 3, 5)
    keys = ("sm90", "sm90ws", "dense") + (("base",) if BASELINE else ())
    times = {c: {k: [] for k in keys} for c in cells}
    for r in range(ROUNDS):
        for c in cells:
            m = setups[c][0]
            for key in (keys if r % 2 == 0 else keys[::-1]):
                times[c][key].append(time_ms(m[key], [()], 3, 20))
    print(f"# {torch.cuda.get_device_name()}, bf16, {ROUNDS} rounds; TFLOP/s (useful), "
          "rule = max err / (2 err_bf16 + 1e-5) over the first 4 sequences")
    print("D causal lengths | sm90 | sm90ws | ws/sm90 (rounds) | dense | ws/dense | rule sm90 / ws"
          + (" | base | ws/base (rounds) | rule base" if BASELINE else ""))
    for c in cells:
        m, flop, dflop, errs, dirs = setups[c]
        t = times[c]
        med = {k: statistics.median(v) for k, v in t.items()}
        ratios = [a / b for a, b in zip(t["sm90"], t["sm90ws"])]
        tf = lambda key, fl: fl / med[key] / 1e9
        print(f"{c[0]} {'causal' if c[1] else 'full'} {c[2]} | {tf('sm90', flop):.1f} | {tf('sm90ws', flop):.1f} | "
              f"{med['sm90'] / med['sm90ws']:.3f} ({min(ratios):.3f}-{max(ratios):.3f}) | "
              f"{tf('dense', dflop):.1f} | {tf('sm90ws', flop) / tf('dense', dflop):.3f} | "
              f"{errs['sm90']:.2f} / {errs['sm90ws']:.2f}"
              + (f" | {tf('base', flop):.1f} | {med['base'] / med['sm90ws']:.3f} "
                 f"({min(a / b for a, b in zip(t['base'], t['sm90ws'])):.3f}-"
                 f"{max(a / b for a, b in zip(t['base'], t['sm90ws'])):.3f}) | "
                 f"{errs['base']:.2f}" if BASELINE else ""))
    print("dirs:", {str(c): [str(x).split('/')[-1] for x in setups[c][4]] for c in cells[:1]})


main()
