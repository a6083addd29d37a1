"""Ring attention: attention over a sequence split across GPUs.

`ring_attention(q, k, v, group=...)` runs on torch.distributed, one process
per GPU (NCCL). Each rank holds a shard of the sequence; the key/value
shards travel around the ring of ranks with point-to-point sends while each
rank runs FlashFuse's forward kernel on the shard it holds, and the partial
results are merged by their row log-sum-exp:

    LSE = log(sum_j exp(LSE_j)),    O = sum_j exp(LSE_j - LSE) O_j

The kernels write each partial O in f32 (flash.attention with an f32
result), so the merge rounds nothing before the final cast. The backward
pass runs the backward kernels on the same (query shard, key/value shard)
pairs with the merged O and LSE (the pair's softmax is then the global
one), dQ accumulating locally and dK/dV travelling around the ring behind
their key/value shard until they are back at its owner.

Causal attention needs every rank to do the same work: shard the sequence
"zig-zag" (`zigzag_shard`): with N ranks the sequence is cut into 2N
chunks and rank r holds chunks r and 2N-1-r. Then every pair of shards is
one of: the rank's own shard (causal within it), an earlier shard (the
queries see its first chunk whole), a later shard (its second chunk's
queries see all of it); each is half the work of a full pair except the
first. Without a causal mask any split of the sequence works.

`simulate_ring_attention` runs the same code for a world of N simulated
ranks in one process (the shards and the order they meet in reproduced),
which is how the ring is checked against single-GPU attention without
several GPUs. Tensors on the CPU use a float32 torch reference for each
pair instead of the kernels, so that the ring's communication, merge and
gradient flow can be tested with the gloo backend on machines without a
GPU.

Launchers must keep NVLink multicast off on the lent multi-GPU machines
(NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1,
NVSHMEM_DISABLE_NVLS=1); `multicast_off_environment()` sets them.
"""

import math
import os

import torch

_MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0",
                  "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                  "NVSHMEM_DISABLE_NVLS": "1"}


def multicast_off_environment():
    """Sets the variables that keep NVLink multicast off (call before
    torch.distributed.init_process_group)."""
    os.environ.update(_MULTICAST_OFF)


def nccl_options(high_priority=True):
    """ProcessGroupNCCL options for init_process_group(pg_options=...):
    NCCL's streams at high priority, so that the transfers' kernels get
    SMs while an attention kernel still has blocks waiting to run; on
    normal priority they can wait for its last wave, and the transfer is
    then no longer hidden (docs/RING.md, "Timing")."""
    import torch.distributed as dist
    options = dist.ProcessGroupNCCL.Options()
    options.is_high_priority_stream = bool(high_priority)
    return options


# ---- sharding -------------------------------------------------------------

def zigzag_shard(x, rank, world_size, dim=2):
    """Rank `rank`'s zig-zag shard of x along `dim`: chunks rank and
    2 * world_size - 1 - rank of 2 * world_size equal chunks, concatenated
    (contiguous)."""
    if x.shape[dim] % (2 * world_size):
        raise ValueError(f"zig-zag sharding over {world_size} ranks needs a "
                         f"length divisible by {2 * world_size}; dim {dim} "
                         f"has {x.shape[dim]}")
    chunks = x.chunk(2 * world_size, dim=dim)
    return torch.cat([chunks[rank], chunks[2 * world_size - 1 - rank]],
                     dim=dim).contiguous()


def zigzag_unshard(shards, dim=2):
    """The inverse of zigzag_shard over every rank's shard, in rank order."""
    n = len(shards)
    halves = [s.chunk(2, dim=dim) for s in shards]
    return torch.cat([halves[r][0] for r in range(n)]
                     + [halves[r][1] for r in reversed(range(n))], dim=dim)


# ---- one (query shard, key/value shard) pair ---------------------------------

class _KernelPairs:
    """Forward and backward of one pair on FlashFuse's kernels."""

    def __init__(self, deterministic):
        from . import ops  # noqa: F401  (registers torch.ops.flashfuse.*)
        self.deterministic = deterministic

    def forward(self, q, k, v, causal, scale):
        """(O f32, LSE f32) of q against k, v; LSE +inf on empty rows."""
        return torch.ops.flashfuse.attention_fwd(
            q, k, v, None, None, int(causal), scale, -1, -1, 0.0, 0.0, 0,
            True)

    def backward(self, dout, q, k, v, out, lse, causal, scale):
        dq, dk, dv, _ = torch.ops.flashfuse.attention_bwd(
            dout, q, k, v, out, lse, None, None, int(causal), scale, -1, -1,
            0.0, 0.0, 0, self.deterministic, False)
        return dq, dk, dv


class _ReferencePairs:
    """The same in float32 torch (CPU tensors: tests of the ring's logic
    over gloo). The backward recomputes P from the given LSE as the kernels
    do, so that it is exact for a pair of a larger attention."""

    def _scores(self, q, k, causal, scale):
        group = q.shape[1] // k.shape[1]
        k = k.float().repeat_interleave(group, dim=1)
        s = torch.matmul(q.float(), k.transpose(-2, -1)) * scale
        if causal:
            keep = torch.ones(s.shape[-2:], dtype=torch.bool,
                              device=s.device).tril()
            s = s.masked_fill(~keep, float("-inf"))
        return s

    def forward(self, q, k, v, causal, scale):
        group = q.shape[1] // k.shape[1]
        s = self._scores(q, k, causal, scale)
        lse = torch.logsumexp(s, dim=-1)
        p = torch.exp(s - lse.unsqueeze(-1)).nan_to_num(0.0)
        o = torch.matmul(p, v.float().repeat_interleave(group, dim=1))
        return o, torch.where(torch.isneginf(lse), math.inf, lse)

    def backward(self, dout, q, k, v, out, lse, causal, scale):
        group = q.shape[1] // k.shape[1]
        s = self._scores(q, k, causal, scale)
        p = torch.exp(s - lse.unsqueeze(-1))
        dout = dout.float()
        vg = v.float().repeat_interleave(group, dim=1)
        dv = torch.matmul(p.transpose(-2, -1), dout)
        dp = torch.matmul(dout, vg.transpose(-2, -1))
        delta = (dout * out.float()).sum(-1, keepdim=True)
        ds = p * (dp - delta) * scale
        dq = torch.matmul(ds, k.float().repeat_interleave(group, dim=1))
        dk = torch.matmul(ds.transpose(-2, -1), q.float())

        def per_kv_head(t):
            b, h, s_, d = t.shape
            return t.view(b, h // group, group, s_, d).sum(2)
        return (dq.to(q.dtype), per_kv_head(dk).to(k.dtype),
                per_kv_head(dv).to(v.dtype))


def _pairs_for(t, deterministic):
    return (_KernelPairs(deterministic) if t.device.type == "cuda"
            else _ReferencePairs())


def _pair_slices(rank, src, causal, s_q, s_k):
    """(query rows, key rows, causal) of the work between rank's queries and
    src's keys, or None when there is none (zig-zag shards)."""
    if not causal:
        return slice(0, s_q), slice(0, s_k), False
    if src == rank:
        return slice(0, s_q), slice(0, s_k), True
    if src < rank:  # src's first chunk lies before both of ours
        return slice(0, s_q), slice(0, s_k // 2), False
    # src > rank: both its chunks lie before our second one, after our first
    return slice(s_q // 2, s_q), slice(0, s_k), False


# ---- the merge ----------------------------------------------------------------

def _merge(out, lse, o_pair, lse_pair):
    """out, lse (f32, in place) <- their merge with one pair's result.
    Empty rows carry LSE -inf here (the kernels' +inf is mapped on entry),
    so that logaddexp treats them as zero weight. The two weights sum to 1,
    so the merge is one lerp: a single pass over out and o_pair (at 128k
    tokens the accumulators are a GiB a rank)."""
    lse_pair = lse_pair.masked_fill(torch.isposinf(lse_pair), -math.inf)
    merged = torch.logaddexp(lse, lse_pair)
    # Rows empty on both sides stay empty (weight 0, not NaN).
    w_new = torch.exp(lse_pair - merged).nan_to_num(0.0).unsqueeze(-1)
    out.lerp_(o_pair, w_new)
    lse.copy_(merged)


# ---- rings ------------------------------------------------------------------

class _ProcessGroupRing:
    """This process's place in a ring over a torch.distributed group: one
    lane (this rank). Shifts run as batched P2P operations, which NCCL
    issues on its own stream after the tensors' producers on the current
    stream; `wait` orders the current stream after the transfer, so
    compute launched between `shift` and `wait` overlaps it."""

    def __init__(self, group):
        import torch.distributed as dist
        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError("ring_attention needs torch.distributed "
                               "initialised (init_process_group)")
        self.dist, self.group = dist, group
        self.world = dist.get_world_size(group)
        rank = dist.get_rank(group)
        self.ranks = [rank]
        to_global = ((lambda r: r) if group is None else
                     (lambda r: dist.get_global_rank(group, r)))
        self.next = to_global((rank + 1) % self.world)
        self.prev = to_global((rank - 1) % self.world)

    def shift(self, lanes):
        """Starts sending every tensor of lanes[0] to the next rank and
        receiving the previous rank's into new buffers."""
        if self.world == 1:
            return lanes
        send = lanes[0]
        recv = [torch.empty_like(t) for t in send]
        P2POp = self.dist.P2POp
        ops = ([P2POp(self.dist.isend, t, self.next, self.group) for t in send]
               + [P2POp(self.dist.irecv, t, self.prev, self.group)
                  for t in recv])
        # The sent tensors stay referenced until the wait: the caller may
        # drop its own references before then.
        return (self.dist.batch_isend_irecv(ops), [recv], send)

    def wait(self, handle):
        if self.world == 1:
            return handle
        requests, lanes, _ = handle
        for r in requests:
            r.wait()
        return lanes


class _SimulatedRing:
    """N ranks in one process: lane r is rank r, and a shift hands lane r's
    tensors to lane r + 1 (copies, as a transfer makes)."""

    def __init__(self, world):
        self.world = world
        self.ranks = list(range(world))

    def shift(self, lanes):
        return [[t.clone() for t in lanes[(r - 1) % self.world]]
                for r in range(self.world)]

    def wait(self, handle):
        return handle


# ---- the algorithm, over the lanes this process runs ----------------------------

def _ring_forward(ring, pairs, qs, ks, vs, causal, scale):
    outs, lses = [None] * len(qs), [None] * len(qs)
    kv = [[k, v] for k, v in zip(ks, vs)]
    for step in range(ring.world):
        pending = ring.shift(kv) if step + 1 < ring.world else None
        for lane, rank in enumerate(ring.ranks):
            src = (rank - step) % ring.world
            q, (k, v) = qs[lane], kv[lane]
            rows, keys, pair_causal = _pair_slices(rank, src, causal,
                                                   q.shape[2], k.shape[2])
            o, lse = pairs.forward(q[:, :, rows], k[:, :, keys],
                                   v[:, :, keys], pair_causal, scale)
            if step == 0:
                # The rank's own shard, every row: its result is the start.
                outs[lane] = o.float()
                lses[lane] = lse.masked_fill(torch.isposinf(lse), -math.inf)
            else:
                _merge(outs[lane][:, :, rows], lses[lane][:, :, rows], o, lse)
        if pending is not None:
            kv = ring.wait(pending)
    # The kernels' convention for rows that see no key: LSE +inf, O = 0.
    for lse in lses:
        lse.masked_fill_(torch.isneginf(lse), math.inf)
    return ([o.to(q.dtype) for o, q in zip(outs, qs)], lses)


def _ring_backward(ring, pairs, douts, qs, ks, vs, outs, lses, causal, scale):
    dqs = [torch.zeros_like(q, dtype=torch.float32) for q in qs]
    kv = [[k, v] for k, v in zip(ks, vs)]
    dkv = None  # the accumulators travelling with the key/value shards
    for step in range(ring.world):
        pending = ring.shift(kv) if step + 1 < ring.world else None
        grads = []
        for lane, rank in enumerate(ring.ranks):
            src = (rank - step) % ring.world
            q, (k, v) = qs[lane], kv[lane]
            rows, keys, pair_causal = _pair_slices(rank, src, causal,
                                                   q.shape[2], k.shape[2])
            dq, dk, dv = pairs.backward(
                douts[lane][:, :, rows], q[:, :, rows], k[:, :, keys],
                v[:, :, keys], outs[lane][:, :, rows],
                lses[lane][:, :, rows].contiguous(), pair_causal, scale)
            dqs[lane][:, :, rows] += dq
            grads.append((keys, dk, dv))
        # The accumulators sent last step arrive while the pairs above ran.
        dkv = (ring.wait(dkv) if dkv is not None else
               [[torch.zeros_like(k, dtype=torch.float32),
                 torch.zeros_like(v, dtype=torch.float32)] for k, v in kv])
        for (keys, dk, dv), (acc_k, acc_v) in zip(grads, dkv):
            acc_k[:, :, keys] += dk
            acc_v[:, :, keys] += dv
        # After the last pair this hands each accumulator to its owner.
        dkv = ring.shift(dkv)
        if pending is not None:
            kv = ring.wait(pending)
    dkv = ring.wait(dkv)
    return ([dq.to(q.dtype) for dq, q in zip(dqs, qs)],
            [dk.to(k.dtype) for (dk, _), k in zip(dkv, ks)],
            [dv.to(v.dtype) for (_, dv), v in zip(dkv, vs)])


class _RingAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, ring, causal, scale, deterministic, *tensors):
        n = len(ring.ranks)
        qs, ks, vs = (list(tensors[i * n:(i + 1) * n]) for i in range(3))
        pairs = _pairs_for(qs[0], deterministic)
        outs, lses = _ring_forward(ring, pairs, qs, ks, vs, causal, scale)
        ctx.save_for_backward(*qs, *ks, *vs, *outs, *lses)
        ctx.ring, ctx.pairs, ctx.causal, ctx.scale = ring, pairs, causal, scale
        return tuple(outs)

    @staticmethod
    def backward(ctx, *douts):
        n = len(ctx.ring.ranks)
        saved = ctx.saved_tensors
        qs, ks, vs, outs, lses = (list(saved[i * n:(i + 1) * n])
                                  for i in range(5))
        douts = [d.contiguous() for d in douts]
        dqs, dks, dvs = _ring_backward(ctx.ring, ctx.pairs, douts, qs, ks, vs,
                                       outs, lses, ctx.causal, ctx.scale)
        return (None, None, None, None, *dqs, *dks, *dvs)


def _check(qs, ks, vs, is_causal, enable_gqa, world):
    from .functional import _check_device, _check_inputs
    for q, k, v in zip(qs, ks, vs):
        if q.device.type == "cuda":
            _check_inputs(q, k, v, enable_gqa)
            _check_device(q, k, v)
        elif q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
            raise ValueError("ring attention expects [B, H, S, D] shards")
        if q.shape[2] != k.shape[2]:
            raise ValueError(f"every rank holds the same positions of Q and "
                             f"K/V: query shard {q.shape[2]} rows, key shard "
                             f"{k.shape[2]}")
        if is_causal and q.shape[2] % 2:
            raise ValueError("causal ring attention takes zig-zag shards "
                             "(zigzag_shard), whose length is even; got "
                             f"{q.shape[2]}")
    if is_causal not in (False, True):
        raise ValueError("ring attention's is_causal is a bool (top-left "
                         "over the whole sequence, with zig-zag shards)")
    if len({tuple(q.shape) for q in qs}) > 1 and world > 1:
        raise ValueError("every rank's shard must have one shape")


def ring_attention(q, k, v, group=None, is_causal=False, scale=None,
                   enable_gqa=False, deterministic=False):
    """Attention over a sequence sharded across the ranks of `group`.

    q [B, Hq, S/N, D], k [B, Hkv, S/N, D], v [B, Hkv, S/N, Dv] are this
    rank's shards (every rank the same shape); with is_causal they must be
    zig-zag shards (zigzag_shard) of a causal self-attention over the whole
    sequence. Returns this rank's rows of O; differentiable (dK and dV
    reach the rank that holds K and V). Collective: every rank of the group
    calls it with the same options. Memory per rank is O(S/N).
    """
    ring = _ProcessGroupRing(group)
    _check([q], [k], [v], is_causal, enable_gqa, ring.world)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    return _RingAttention.apply(ring, bool(is_causal), float(scale),
                                bool(deterministic), q, k, v)[0]


def simulate_ring_attention(qs, ks, vs, is_causal=False, scale=None,
                            enable_gqa=False, deterministic=False):
    """ring_attention for a world of len(qs) ranks simulated in one process:
    qs[r], ks[r], vs[r] are rank r's shards; returns every rank's O, in
    rank order. Differentiable like ring_attention."""
    if not (len(qs) == len(ks) == len(vs)) or not qs:
        raise ValueError("one query, key and value shard per rank")
    _check(qs, ks, vs, is_causal, enable_gqa, len(qs))
    if scale is None:
        scale = 1.0 / math.sqrt(qs[0].shape[-1])
    ring = _SimulatedRing(len(qs))
    return list(_RingAttention.apply(ring, bool(is_causal), float(scale),
                                     bool(deterministic), *qs, *ks, *vs))
