"""Shared by the ring attention tests: inputs, a dense reference and the
worker that each spawned rank runs (a module of its own so that spawned
processes can import it)."""

import math
import os

import torch


def make_inputs(seed, b, hq, hkv, s, d, dtype, device, requires_grad=True):
    g = torch.Generator(device="cpu").manual_seed(seed)
    q, k, v = (torch.randn(b, h, s, d, generator=g).to(device=device,
                                                        dtype=dtype)
               for h in (hq, hkv, hkv))
    dout = torch.randn(b, hq, s, d, generator=g).to(device=device, dtype=dtype)
    for t in (q, k, v):
        t.requires_grad_(requires_grad)
    return q, k, v, dout


def dense(q, k, v, causal, upcast=True):
    """Attention over the whole sequence: in f64 (upcast) or in the inputs'
    dtype."""
    if upcast:
        q, k, v = (t.double() for t in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = (t.repeat_interleave(group, dim=1) for t in (k, v))
    s = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if causal:
        keep = torch.ones(s.shape[-2:], dtype=torch.bool,
                          device=s.device).tril()
        s = s.masked_fill(~keep, float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1), v)


def gloo_worker(rank, world, init_file, causal, hq, hkv):
    """One rank of a CPU ring over gloo: its zig-zag shard of seeded inputs,
    ring_attention forward and backward, checked against the dense f64
    attention's rows and gradients for the same shard."""
    import torch.distributed as dist
    from flashfuse import distributed as ring

    ring.multicast_off_environment()
    dist.init_process_group("gloo", init_method=f"file://{init_file}",
                            rank=rank, world_size=world)
    try:
        q, k, v, dout = make_inputs(7, 2, hq, hkv, 12 * world, 16,
                                    torch.float32, "cpu")
        ref = dense(q, k, v, causal)
        ref.backward(dout.double())
        shard = lambda t: ring.zigzag_shard(t.detach(), rank, world)
        ql, kl, vl = (shard(t).requires_grad_() for t in (q, k, v))
        out = ring.ring_attention(ql, kl, vl, is_causal=causal,
                                  enable_gqa=hq != hkv)
        out.backward(shard(dout))
        for name, got, want in (("out", out, ref), ("dq", ql.grad, q.grad),
                                ("dk", kl.grad, k.grad),
                                ("dv", vl.grad, v.grad)):
            err = (got.double() - shard(want).double()).abs().max().item()
            assert err < 1e-4, f"rank {rank}: {name} off by {err}"
    finally:
        dist.destroy_process_group()


def rule_errors(seed, b, hq, hkv, s, d, dtype, device, causal, run):
    """FlashAttention's numerics rule for a ring: `run(q, k, v, dout)`
    returns (O, dQ, dK, dV) of the whole sequence (gathered); the result is
    a list of (name, error, bound) with error = max|ring - f64 reference|
    and bound = 2x (O) or 3x (gradients) the error of the same attention
    computed plainly in the inputs' dtype, + 1e-5."""
    q, k, v, dout = make_inputs(seed, b, hq, hkv, s, d, dtype, device)
    ref = dense(q, k, v, causal)
    ref_grads = torch.autograd.grad(ref, (q, k, v), dout.double())
    low = dense(q, k, v, causal, upcast=False)
    low_grads = torch.autograd.grad(low, (q, k, v), dout)
    got = run(q.detach(), k.detach(), v.detach(), dout)
    rows = []
    for name, g, r, lo, factor in zip(
            ("O", "dQ", "dK", "dV"), got, (ref,) + ref_grads,
            (low,) + low_grads, (2, 3, 3, 3)):
        err = (g.double() - r).abs().max().item()
        base = (lo.double() - r).abs().max().item()
        rows.append((name, err, factor * base + 1e-5))
    return rows


def nccl_worker(rank, world, init_file, causal, shape, dtype):
    """One rank (one GPU) of a ring over NCCL: ring_attention forward and
    backward on its zig-zag shard, gathered on every rank and checked with
    rule_errors."""
    import torch.distributed as dist
    from flashfuse import distributed as ring

    ring.multicast_off_environment()
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"file://{init_file}",
                            rank=rank, world_size=world,
                            device_id=torch.device("cuda", rank))
    try:
        b, hq, hkv, s, d = shape

        def run(q, k, v, dout):
            shard = lambda t: ring.zigzag_shard(t, rank, world)
            ql, kl, vl = (shard(t).requires_grad_() for t in (q, k, v))
            out = ring.ring_attention(ql, kl, vl, is_causal=causal,
                                      enable_gqa=hq != hkv)
            out.backward(shard(dout))
            result = []
            for t in (out, ql.grad, kl.grad, vl.grad):
                parts = [torch.empty_like(t) for _ in range(world)]
                dist.all_gather(parts, t.contiguous())
                result.append(ring.zigzag_unshard(parts))
            return result

        rows = rule_errors(11, b, hq, hkv, s, d, dtype, f"cuda:{rank}",
                           causal, run)
        bad = [r for r in rows if not r[1] <= r[2]]
        assert not bad, f"rank {rank}: {bad}"
    finally:
        dist.destroy_process_group()
