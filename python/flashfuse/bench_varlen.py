"""`python -m flashfuse.bench --varlen`: a packed batch of variable-length
sequences (flashfuse.varlen_attention) against FlashFuse's own dense
forward (flashfuse.attention) on equal-length sequences of the same total
tokens, in TFLOP/s (4 * H * L^2 * D per sequence, halved if causal, as
FlashAttention counts). Issue 18's target: the packed batch at >= 0.95x
the dense forward's throughput. Each method warmed up for --warmup-ms,
timed --reps times (CUDA events, median), in --varlen-rounds interleaved
rounds (median of the rounds' medians). With --varlen-backward both sides
time a training step instead: the forward and the gradients of q, k and v
(FLOPs 3.5x the forward's: the backward counts 2.5x, as FlashAttention's
benchmark does).
"""

import random
import statistics

import torch

from .bench import MEASURE_ERRORS, error_text


def varlen_lengths(num_seqs, lo, hi, seed):
    """num_seqs lengths drawn uniformly from [lo, hi] by Python's seeded
    generator: the same batch every run, on every torch version."""
    rng = random.Random(seed)
    return [rng.randint(lo, hi) for _ in range(num_seqs)]


def _flops(lengths, heads, head_dim, causal):
    f = sum(4.0 * heads * n * n * head_dim for n in lengths)
    return f / 2 if causal else f


def run_varlen(args, time_ms, dtype):
    """(config, rows): the packed batch and the dense one, each timed as
    described above."""
    from .functional import attention
    from .varlen import varlen_attention

    lengths = varlen_lengths(args.varlen_seqs, args.varlen_min,
                             args.varlen_max, args.varlen_seed)
    total = sum(lengths)
    heads, d = args.varlen_heads, args.varlen_head_dim
    causal = args.causal[-1] if len(args.causal) == 1 else True
    dev = "cuda"
    cu = torch.tensor([0] + torch.tensor(lengths).cumsum(0).tolist(),
                      dtype=torch.int32, device=dev)
    longest = max(lengths)
    q, k, v = (torch.randn(total, heads, d, device=dev, dtype=dtype)
               for _ in range(3))
    # The dense batch: as many sequences, of the mean length, in the same
    # memory layout (BSHD, read as [B, H, S, D] views).
    seq = total // len(lengths)
    qd, kd, vd = (torch.randn(len(lengths), seq, heads, d, device=dev,
                              dtype=dtype).transpose(1, 2) for _ in range(3))
    backward = getattr(args, "varlen_backward", False)
    if backward:
        for t in (q, k, v, qd, kd, vd):
            t.requires_grad_()
        dout, dout_d = torch.randn_like(q), torch.randn_like(qd)

    def step(fn, inputs, grad):
        # The forward alone, or with --varlen-backward the training step.
        if not backward:
            return fn
        return lambda: torch.autograd.grad(fn(), inputs, grad)

    factor = 3.5 if backward else 1.0
    methods = {
        "flashfuse-varlen": (step(lambda: varlen_attention(
            q, k, v, cu, cu, longest, longest, is_causal=causal),
            (q, k, v), dout if backward else None),
            factor * _flops(lengths, heads, d, causal)),
        "flashfuse-dense": (step(lambda: attention(qd, kd, vd,
                                                   is_causal=causal),
                                 (qd, kd, vd), dout_d if backward else None),
                            factor * _flops([seq] * len(lengths), heads, d,
                                            causal)),
    }
    times = {m: [] for m in methods}
    errors = {}
    for _ in range(args.varlen_rounds):
        for name, (fn, _) in methods.items():
            if name in errors:
                continue
            try:
                times[name].append(time_ms(fn, [()], args.warmup, args.reps,
                                           args.warmup_ms))
            except MEASURE_ERRORS as e:
                errors[name] = error_text(e)
    rows = []
    for name, (_, flops) in methods.items():
        ms = statistics.median(times[name]) if times[name] else None
        rows.append({"method": name, "ms": ms,
                     "tflops": flops / (ms * 1e-3) / 1e12 if ms else None,
                     "error": errors.get(name)})
    varlen_row, dense_row = rows
    if varlen_row["tflops"] and dense_row["tflops"]:
        varlen_row["ratio_vs_dense"] = (varlen_row["tflops"]
                                        / dense_row["tflops"])
    config = {"sequences": len(lengths), "lengths": lengths,
              "total_tokens": total, "dense_seqlen": seq, "heads": heads,
              "head_dim": d, "causal": causal,
              "pass": "forward+backward" if backward else "forward",
              "dtype": str(dtype).replace("torch.", ""),
              "warmup_ms": args.warmup_ms, "reps": args.reps,
              "rounds": args.varlen_rounds}
    return config, rows


def table(config, rows):
    lines = [f"varlen: {config['sequences']} sequences of "
             f"{min(config['lengths'])}..{max(config['lengths'])} tokens "
             f"({config['total_tokens']} in all), dense: "
             f"{config['sequences']} x {config['dense_seqlen']}; "
             f"H = {config['heads']}, D = {config['head_dim']}, "
             f"{config['dtype']}, causal = {config['causal']}, "
             f"{config.get('pass', 'forward')}",
             f"{'method':<18} {'ms':>9} {'TFLOP/s':>9} {'vs dense':>9}"]
    for r in rows:
        if r["error"]:
            lines.append(f"{r['method']:<18} error: {r['error']}")
            continue
        ratio = r.get("ratio_vs_dense")
        lines.append(f"{r['method']:<18} {r['ms']:9.3f} {r['tflops']:9.1f} "
                     + (f"{ratio:8.3f}x" if ratio else f"{'':>9}"))
    return "\n".join(lines)
