"""Ring attention on FlashFuse's kernels against single-GPU attention, with
FlashAttention's numerics rule (ring_cases.rule_errors): a world of N ranks
simulated on one GPU, and over NCCL on every GPU of the machine where it
has several."""

import pytest

torch = pytest.importorskip("torch")

from flashfuse import distributed as ring  # noqa: E402
from flashfuse.errors import KernelNotFoundError  # noqa: E402

from ring_cases import nccl_worker, rule_errors  # noqa: E402

pytestmark = pytest.mark.gpu

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def simulated(world, causal, gqa):
    def run(q, k, v, dout):
        shard = lambda t, r: ring.zigzag_shard(t, r, world)
        parts = [[shard(t, r).requires_grad_() for r in range(world)]
                 for t in (q, k, v)]
        outs = ring.simulate_ring_attention(*parts, is_causal=causal,
                                            enable_gqa=gqa)
        torch.autograd.backward(outs, [shard(dout, r) for r in range(world)])
        return [ring.zigzag_unshard(outs)] + [
            ring.zigzag_unshard([p.grad for p in ps]) for ps in parts]
    return run


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("world,seq,heads", [
    (2, 1024, (8, 2)),   # GQA
    (4, 1000, (4, 4)),   # shards of 250 rows: chunks of 125
    (3, 6 * 97, (6, 3)),
])
def test_simulated_ring(dtype, d, causal, world, seq, heads):
    hq, hkv = heads
    try:
        rows = rule_errors(world + d, 2, hq, hkv, seq, d, DTYPES[dtype],
                           "cuda", causal, simulated(world, causal, hq != hkv))
    except KernelNotFoundError as e:
        pytest.skip(f"no kernel: {e}")
    bad = [r for r in rows if not r[1] <= r[2]]
    assert not bad, f"beyond the rule: {bad}"


@pytest.mark.parametrize("causal", [False, True])
def test_nccl_ring(tmp_path, causal):
    import torch.distributed as dist
    import torch.multiprocessing as mp
    world = min(torch.cuda.device_count(), 4)
    if world < 2 or not dist.is_nccl_available():
        pytest.skip("needs two GPUs and NCCL")
    mp.spawn(nccl_worker, args=(world, str(tmp_path / "init"), causal,
                                (1, 8, 2, 512 * world, 128), torch.bfloat16),
             nprocs=world, join=True)
