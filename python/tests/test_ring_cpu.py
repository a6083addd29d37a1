"""Ring attention's logic on the CPU: zig-zag sharding, the ring order,
the LSE merge and the gradients' trip around the ring, with the float32
torch pairs (no kernels), simulated in one process and over gloo."""

import pytest

torch = pytest.importorskip("torch")

from flashfuse import distributed as ring  # noqa: E402

from ring_cases import dense, gloo_worker, make_inputs  # noqa: E402


@pytest.mark.parametrize("world", [1, 2, 3, 4])
def test_zigzag_round_trip(world):
    x = torch.arange(16 * world).view(1, 1, 16 * world, 1)
    shards = [ring.zigzag_shard(x, r, world) for r in range(world)]
    assert torch.equal(ring.zigzag_unshard(shards), x)
    # Rank 0 holds the first and the last chunk.
    assert shards[0][0, 0, 0, 0] == 0 and shards[0][0, 0, -1, 0] == x[0, 0, -1, 0]


def test_zigzag_rejects_uneven_length():
    with pytest.raises(ValueError, match="divisible by 4"):
        ring.zigzag_shard(torch.zeros(1, 1, 10, 1), 0, 2)


@pytest.mark.parametrize("world", [1, 2, 3, 4])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("heads", [(4, 4), (4, 2)])
def test_simulated_ring_matches_dense(world, causal, heads):
    hq, hkv = heads
    q, k, v, dout = make_inputs(world, 2, hq, hkv, 8 * world, 16,
                                torch.float32, "cpu")
    ref = dense(q, k, v, causal)
    ref.backward(dout.double())
    want = [t.grad for t in (q, k, v)]
    shard = lambda t, r: ring.zigzag_shard(t.detach(), r, world)
    shards = [[shard(t, r).requires_grad_() for r in range(world)]
              for t in (q, k, v)]
    outs = ring.simulate_ring_attention(*shards, is_causal=causal,
                                        enable_gqa=hq != hkv)
    torch.autograd.backward(outs, [shard(dout, r) for r in range(world)])
    got_out = ring.zigzag_unshard(outs)
    assert (got_out.double() - ref).abs().max() < 1e-5
    for name, parts, w in zip("qkv", shards, want):
        got = ring.zigzag_unshard([p.grad for p in parts])
        err = (got.double() - w).abs().max().item()
        assert err < 1e-4, f"d{name} off by {err}"


def test_simulated_ring_rejects_bad_shards():
    q = torch.zeros(1, 2, 6, 8)
    k = torch.zeros(1, 2, 4, 8)
    with pytest.raises(ValueError, match="same positions"):
        ring.simulate_ring_attention([q], [k], [k])
    odd = torch.zeros(1, 2, 5, 8)
    with pytest.raises(ValueError, match="zig-zag"):
        ring.simulate_ring_attention([odd], [odd], [odd], is_causal=True)


def test_ring_attention_needs_a_process_group():
    q = torch.zeros(1, 2, 4, 8)
    with pytest.raises(RuntimeError, match="init_process_group"):
        ring.ring_attention(q, q, q)


@pytest.mark.parametrize("world,causal,heads", [(2, True, (4, 2)),
                                                (3, False, (2, 2)),
                                                (3, True, (4, 4))])
def test_gloo_ring_matches_dense(tmp_path, world, causal, heads):
    import torch.distributed as dist
    import torch.multiprocessing as mp
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("torch.distributed with gloo is not available")
    mp.spawn(gloo_worker, args=(world, str(tmp_path / "init"), causal,
                                *heads), nprocs=world, join=True)
