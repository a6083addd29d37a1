"""block_sparse_attention's backward without a GPU: the launch plan it asks
the artifacts for (the dense preprocess and postprocess around the lists'
transposition and the block-sparse main kernel) and the arguments of the
lists and their workspace (docs/KERNEL_ABI.md "Block-sparse backward")."""

import pytest

torch = pytest.importorskip("torch")

from flashfuse import _kernels, ops  # noqa: E402
from flashfuse import _runtime as rt  # noqa: E402
from flashfuse import block_sparse  # noqa: E402


def test_backward_list_args_shape_the_workspace():
    # Partial lists broadcast over the batch, full lists over the heads;
    # Sq = 300 (QB = 3 of 128), Sk = 700 (KB = 6).
    n = torch.zeros(1, 4, 3, dtype=torch.int32)
    i = torch.zeros(1, 4, 3, 5, dtype=torch.int32)
    fn = torch.zeros(2, 1, 3, dtype=torch.int32)
    fi = torch.zeros(2, 1, 3, 2, dtype=torch.int32)
    named, workspace = block_sparse._backward_list_args(
        (n, i, fn, fi), 300, 700, (128, 128))
    t_num, t_idx, f_num, f_idx = workspace
    assert t_num.shape == (1, 4, 6) and t_idx.shape == (1, 4, 6, 3)
    assert f_num.shape == (2, 1, 6) and f_idx.shape == (2, 1, 6, 3)
    assert all(t.dtype == torch.int32 for t in workspace)
    # The forward lists as the forward passes them.
    assert named["kv_num_blocks"][1] == (n.data_ptr(), 12)
    assert named["kv_slots"] == (rt.PARAM_I32, 5)
    assert named["kv_indices_stride_b"] == (rt.PARAM_I64, 0)
    assert named["kv_indices_stride_h"] == (rt.PARAM_I64, 15)
    assert named["full_kv_slots"] == (rt.PARAM_I32, 2)
    # The transposed pairs: stride 0 exactly where the forward pair
    # broadcasts, QB slots per row.
    assert named["q_num_blocks"][1] == (t_num.data_ptr(), 24)
    assert named["q_indices"][1] == (t_idx.data_ptr(), 72)
    assert named["q_num_blocks_stride_b"] == (rt.PARAM_I64, 0)
    assert named["q_num_blocks_stride_h"] == (rt.PARAM_I64, 6)
    assert named["q_indices_stride_h"] == (rt.PARAM_I64, 18)
    assert named["q_slots"] == (rt.PARAM_I32, 3)
    assert named["full_q_num_blocks_stride_b"] == (rt.PARAM_I64, 6)
    assert named["full_q_num_blocks_stride_h"] == (rt.PARAM_I64, 0)
    assert named["full_q_indices_stride_b"] == (rt.PARAM_I64, 18)
    assert named["full_q_slots"] == (rt.PARAM_I32, 3)


def test_backward_list_args_without_full_lists():
    n = torch.zeros(2, 2, 1, dtype=torch.int32)
    i = torch.zeros(2, 2, 1, 1, dtype=torch.int32)
    named, workspace = block_sparse._backward_list_args(
        (n, i, None, None), 1, 129, (128, 128))
    assert len(workspace) == 2 and workspace[1].shape == (2, 2, 2, 1)
    assert not any(k.startswith("full_") for k in named)
    assert named["q_num_blocks_stride_b"] == (rt.PARAM_I64, 4)


@pytest.fixture
def fake_artifact(monkeypatch):
    """An artifact that has every kernel asked for: records the variants
    the plan looks up, in order."""
    asked = []
    # The plan asks for the GPU's capability (artifacts are searched by it);
    # these tests run without one.
    monkeypatch.setattr(ops, "_capability", lambda device_index: (9, 0))
    monkeypatch.setattr(_kernels, "locate_all",
                        lambda v, capability=None: [("dir", 0)])
    monkeypatch.setattr(_kernels, "has_kernel",
                        lambda v, d: v.kind != rt.KIND_BACKWARD_DQ)
    monkeypatch.setattr(_kernels, "locate", lambda v, d=None: ("dir", 0))
    monkeypatch.setattr(_kernels, "param_names", lambda d, i: {"x"})

    def kernel(device, v, directory=None, **kw):
        asked.append((v.kind, v.block_sparse, v.sparse_block_q,
                      v.sparse_block_k))
        return len(asked)
    monkeypatch.setattr(_kernels, "kernel", kernel)
    monkeypatch.setattr(ops, "_backward_plans", {})
    # sm90ws_dirs caches what the fake search finds (nothing) per variant
    # and capability; kept, it would hide the real library's sm90ws
    # backward from later tests in the process.
    monkeypatch.setattr(_kernels, "_sm90ws_dirs", {})
    return asked


def _tensors(d=64):
    q = torch.zeros(1, 2, 8, d, dtype=torch.bfloat16)
    return q, q, q


def test_backward_plan_of_block_sparse_attention(fake_artifact):
    q, k, v = _tensors()
    plan = ops._backward_plan(0, (q, k, v, None, None, 1, -1, -1, 0.0, 0.0),
                              deterministic=False,
                              block_sparse=(2, 128, 64))
    assert [kernel for kernel, _ in plan] == [1, 2, 3, 4]
    # The dense preprocess and postprocess, the transposition before the
    # main kernel; the lists' variant keys only where the lists are read.
    assert fake_artifact == [
        (rt.KIND_BACKWARD_PREPROCESS, 0, 0, 0),
        (rt.KIND_BACKWARD_SPARSE_TRANSPOSE, 2, 128, 64),
        (rt.KIND_BACKWARD, 2, 128, 64),
        (rt.KIND_BACKWARD_POSTPROCESS, 0, 0, 0)]


def test_dense_backward_plan_is_unchanged(fake_artifact):
    q, k, v = _tensors()
    ops._backward_plan(0, (q, k, v, None, None, 0, -1, -1, 0.0, 0.0),
                       deterministic=False)
    assert [kind for kind, *_ in fake_artifact] == [
        rt.KIND_BACKWARD_PREPROCESS, rt.KIND_BACKWARD,
        rt.KIND_BACKWARD_POSTPROCESS]
    assert all(bs == 0 for _, bs, *_ in fake_artifact)


@pytest.mark.parametrize("head_dim, seq_k, ws_first", [
    (128, 1023, False), (128, 1024, True), (128, None, True),
    (64, 1023, False), (64, 1024, True), (96, 1024, False), (96, 2048, True)])
def test_dense_backward_takes_sm90ws_from_its_length(fake_artifact,
                                                     monkeypatch, head_dim,
                                                     seq_k, ws_first):
    """Two artifacts with the backward, one of them sm90ws: the plan takes
    the sm90ws one from sm90ws_backward_min_keys keys on (1024 at D = 64
    and 128, the forward's 2048 elsewhere), the other below."""
    monkeypatch.setattr(_kernels, "locate_all",
                        lambda v, capability=None: [("sm90", 0), ("sm90ws", 0)])
    monkeypatch.setattr(_kernels, "sm90ws_dir",
                        lambda v, long=False, capability=None: "sm90ws")
    chosen = []
    monkeypatch.setattr(_kernels, "locate",
                        lambda v, d=None: chosen.append(d) or (d, 0))
    q, k, v = _tensors(head_dim)
    ops._backward_plan(0, (q, k, v, None, None, 1, -1, -1, 0.0, 0.0),
                       deterministic=False, seq_k=seq_k)
    assert set(chosen) == {"sm90ws" if ws_first else "sm90"}


def test_plans_are_cached_per_list_kind(fake_artifact):
    q, k, v = _tensors()
    args = (q, k, v, None, None, 0, -1, -1, 0.0, 0.0)
    a = ops._backward_plan(0, args, False, block_sparse=(1, 128, 128))
    b = ops._backward_plan(0, args, False, block_sparse=(2, 128, 128))
    c = ops._backward_plan(0, args, False, block_sparse=(1, 128, 128))
    assert a is c and a is not b


def test_grad_of_cpu_inputs_is_refused_before_any_launch():
    """Inputs that require grad take the autograd path; bad lists are still
    refused by the shape checks first, naming the list."""
    q = torch.zeros(1, 2, 300, 64, dtype=torch.float16, requires_grad=True)
    n = torch.zeros(1, 2, 2, dtype=torch.int32)  # QB = 3 expected
    i = torch.zeros(1, 2, 2, 3, dtype=torch.int32)
    with pytest.raises(ValueError, match=r"kv_num_blocks must be \[B or 1"):
        block_sparse.block_sparse_attention(q, q, q, (n, i))


def test_deterministic_plan_walks_the_lists_in_the_dq_kernel(fake_artifact,
                                                             monkeypatch):
    """A deterministic artifact (one with backward_dq): its dQ kernel is
    asked for with the lists' keys, after the main kernel."""
    monkeypatch.setattr(_kernels, "has_kernel", lambda v, d: True)
    q, k, v = _tensors()
    ops._backward_plan(0, (q, k, v, None, None, 0, -1, -1, 0.0, 0.0),
                       deterministic=True, block_sparse=(1, 128, 128))
    assert fake_artifact[3] == (rt.KIND_BACKWARD_DQ, 1, 128, 128)
    assert len(fake_artifact) == 5


def _cpu_lists(seed=0):
    g = torch.Generator().manual_seed(seed)
    n = torch.randint(0, 3, (1, 2, 4), generator=g, dtype=torch.int32)
    i = torch.randint(0, 4, (1, 2, 4, 3), generator=g, dtype=torch.int32)
    return (n, i, None, None)


def test_transposed_lists_are_kept_for_the_same_unmodified_tensors():
    cache = block_sparse.ListsCache(capacity=2)
    lists = _cpu_lists()
    work = [torch.zeros(3)]
    assert cache.get(lists, 500, 500, (128, 128), 7) is None
    cache.put(lists, 500, 500, (128, 128), 7, work)
    assert cache.get(lists, 500, 500, (128, 128), 7) is work
    # Other lengths, block size or stream: not the same transposition.
    assert cache.get(lists, 501, 500, (128, 128), 7) is None
    assert cache.get(lists, 500, 500, (64, 128), 7) is None
    assert cache.get(lists, 500, 500, (128, 128), 8) is None
    # Equal values in other tensors: a miss (kept by identity, not value).
    copy = tuple(t.clone() if t is not None else None for t in lists)
    assert cache.get(copy, 500, 500, (128, 128), 7) is None
    # An in-place write bumps the version counter: the entry is dropped.
    lists[1][0, 0, 0, 0] += 1
    assert cache.get(lists, 500, 500, (128, 128), 7) is None
    assert cache.get(lists, 500, 500, (128, 128), 7) is None


def test_transposed_lists_evict_the_least_recently_used():
    cache = block_sparse.ListsCache(capacity=2)
    a, b, c = _cpu_lists(1), _cpu_lists(2), _cpu_lists(3)
    for lists in (a, b):
        cache.put(lists, 256, 256, (128, 128), 0, [lists[0]])
    assert cache.get(a, 256, 256, (128, 128), 0) is not None  # a is recent
    cache.put(c, 256, 256, (128, 128), 0, [c[0]])
    assert cache.get(b, 256, 256, (128, 128), 0) is None
    assert cache.get(a, 256, 256, (128, 128), 0) is not None
    assert cache.get(c, 256, 256, (128, 128), 0) is not None


def test_transposed_lists_of_freed_tensors_are_dropped():
    cache = block_sparse.ListsCache(capacity=4)
    lists = _cpu_lists(4)
    cache.put(lists, 256, 256, (128, 128), 0, [])
    del lists
    other = _cpu_lists(5)
    cache.put(other, 256, 256, (128, 128), 0, [])
    assert len(cache._entries) == 1


def test_backward_launches_reuse_their_packed_arguments(monkeypatch):
    """Two backward calls of one signature: the second launches with its
    own tensors' addresses and seed, every size, stride and scalar as a
    fresh packing gives them (ops._BackwardLaunch)."""
    import contextlib
    import ctypes
    launched = []

    def record(kernel, packed, stream, allow_unused=True):
        launched.append((kernel.value, {
            a.name.decode(): (a.type, a.ptr or 0, a.numel, a.i, a.f)
            for a in packed[0]}))
    monkeypatch.setattr(rt, "launch_packed", record)
    monkeypatch.setattr(ops, "_launch_context",
                        lambda device: (contextlib.nullcontext(), 0))
    monkeypatch.setattr(ops, "_backward_launches", ops._Templates())
    # Handles as the runtime gives them: ctypes, not hashable.
    plan = [(ctypes.c_void_p(11), {"q", "o", "do", "delta"}),
            (ctypes.c_void_p(12), {"q", "k", "v", "lse", "delta",
                                   "dq_accum", "dk", "dv", "seed"})]

    def call(seed):
        q, k, v, o, do = (torch.randn(1, 4, 130, 64, dtype=torch.bfloat16)
                          for _ in range(5))
        k, v = k[:, :2], v[:, :2]  # GQA: dk / dv per query head
        lse = torch.zeros(1, 4, 130)
        grads = [torch.empty_like(t) for t in (q, k, v)]
        ops._launch_backward(plan, do, q, k, v, o, lse, None, None, *grads,
                             0.125, -1, -1, 0.0, 0.1, seed)
        return {"q": q, "k": k, "v": v, "o": o, "do": do, "lse": lse,
                "grad_q": grads[0], "grad_k": grads[1], "grad_v": grads[2]}

    first = call(seed=5)
    second = call(seed=7)
    assert len(ops._backward_launches.entries) == 1
    monkeypatch.setattr(ops, "_backward_launches", ops._Templates())
    call(seed=7)  # the same signature, packed afresh
    (k1, a1), (k2, a2), (k3, a3), (k4, a4), (k5, a5), (k6, a6) = launched
    assert (k1, k2, k3, k4) == (11, 12, 11, 12) and a3 == a4
    for name, t in second.items():
        assert a3[name][1] == t.data_ptr() != first[name].data_ptr()
    assert a1["seed"][3] == 5 and a3["seed"][3] == 7
    # Everything but the addresses (and the seed) as the first call packed
    # it, and as a fresh packing of the second call.
    without_addresses = lambda a: {n: f[:1] + f[2:] for n, f in a.items()
                                   if n != "seed"}
    assert without_addresses(a3) == without_addresses(a1)
    assert without_addresses(a5) == without_addresses(a3)
    assert a5["seed"] == a3["seed"]


def _decode_order(order, heads_q, tiles_m):
    """(batch, head, query block) of each entry of a tile_order."""
    e = order.to(torch.int64)
    return [(int(x) >> 24, (int(x) >> 16) & 0xff, int(x) & 0xffff) for x in e]


def _slots(num, slots):
    """Index rows of `slots` entries for the counts `num` (tile_order reads
    only their length)."""
    return torch.zeros((*num.shape, slots), dtype=torch.int32)


def test_tile_order_puts_long_rows_first_and_keeps_heads_together():
    """Rows of a sliding window with global query rows: the global rows of
    every head go first, longest first; the rest head-major, each head's
    rows longest first (ties in query-block order)."""
    b, h, qb = 2, 3, 8
    num = torch.full((1, 1, qb), 2, dtype=torch.int32)
    num[0, 0, 0] = 8  # a global query row: every key block
    fnum = torch.zeros((b, h, qb), dtype=torch.int32)
    fnum[1, 2, 5] = 1  # one row of one head a block longer
    fnum[0, 1, 3] = 1
    lists = (num, _slots(num, 8), fnum, _slots(fnum, 1))
    order = block_sparse.tile_order(lists, b, h, qb * 128, 128, 128)
    assert order.dtype == torch.int32 and order.numel() == b * h * qb
    tiles = _decode_order(order, h, qb)
    assert sorted(tiles) == [(bi, hi, m) for bi in range(b) for hi in range(h)
                             for m in range(qb)]
    # The global rows (8 of a mean under 3) first, in launch order.
    assert tiles[:b * h] == [(bi, hi, 0) for bi in range(b) for hi in range(h)]
    rest = tiles[b * h:]
    # Head-major: each (batch, head)'s rows together, in order.
    heads = [t[:2] for t in rest]
    assert heads == sorted(heads)
    # Within a head, the longer row first, then the query-block order.
    assert [t[2] for t in rest if t[:2] == (0, 1)] == [3, 1, 2, 4, 5, 6, 7]
    assert [t[2] for t in rest if t[:2] == (1, 2)] == [5, 1, 2, 3, 4, 6, 7]
    assert [t[2] for t in rest if t[:2] == (0, 0)] == [1, 2, 3, 4, 5, 6, 7]


def test_tile_order_of_a_causal_mask_is_each_heads_rows_reversed():
    """A causal BlockMask's rows grow with their index: none is twice the
    mean, and each head's run backwards, the longest first."""
    qb = 16
    num = torch.ones((1, 1, qb), dtype=torch.int32)
    fnum = torch.arange(qb, dtype=torch.int32).view(1, 1, qb)
    order = block_sparse.tile_order(
        (num, _slots(num, 1), fnum, _slots(fnum, qb)), 1, 2, qb * 128, 128,
        128)
    tiles = _decode_order(order, 2, qb)
    assert tiles == [(0, hi, m) for hi in range(2)
                     for m in reversed(range(qb))]


def test_tile_order_counts_kernel_blocks_of_a_list_row():
    """Kernel blocks of 64 rows under list rows of 128: each list row's
    count is its two blocks', and the blocks past Sq are not tiles."""
    num = torch.tensor([[[1, 5, 1]]], dtype=torch.int32)  # 3 rows of 128
    order = block_sparse.tile_order((num, _slots(num, 5), None, None), 1, 1,
                                    300, 64, 128)
    tiles = _decode_order(order, 1, 5)  # ceil(300 / 64) = 5 blocks
    assert [t[2] for t in tiles] == [2, 3, 0, 1, 4]


def test_tile_order_clamps_counts_to_the_slots():
    """A count past its row's slots walks only the slots (the kernel clamps
    it, KERNEL_ABI.md "Block-sparse"): a row counting 9 of 2 slots is no
    longer than one of 2, so no row is twice the mean and the head keeps
    its query-block order."""
    num = torch.tensor([[[2, 9, 2, 2]]], dtype=torch.int32)
    order = block_sparse.tile_order((num, _slots(num, 2), None, None), 1, 1,
                                    4 * 128, 128, 128)
    assert [t[2] for t in _decode_order(order, 1, 4)] == [0, 1, 2, 3]


def test_tile_order_is_none_where_its_fields_do_not_fit():
    num = torch.ones((1, 1, 1), dtype=torch.int32)
    lists = (num, _slots(num, 1), None, None)
    assert block_sparse.tile_order(lists, 1, 257, 128, 128, 128) is None
    assert block_sparse.tile_order(lists, 257, 1, 128, 128, 128) is None
    assert block_sparse.tile_order(lists, 1, 256, 128, 128, 128) is not None


def test_forward_launch_passes_the_tile_order(monkeypatch):
    """A kernel that takes kv_tile_order gets the cached order's address
    (computed once for the same lists), 0 with GRID_ORDER_ENV; a kernel
    without the parameter gets none."""
    import contextlib
    import ctypes
    launched = []

    def record(kernel, packed, stream, allow_unused=True):
        launched.append({a.name.decode(): (a.ptr or 0, a.i)
                         for a in packed[0]})

    class Info:
        block_m = 128

    takes = {"value": True}
    monkeypatch.setattr(rt, "launch_packed", record)
    monkeypatch.setattr(ops, "_launch_context",
                        lambda device: (contextlib.nullcontext(), 0))
    monkeypatch.setattr(block_sparse, "_forward_launches", ops._Templates())
    monkeypatch.setattr(block_sparse, "_tile_orders",
                        block_sparse.ListsCache())
    monkeypatch.setattr(block_sparse, "_capability", lambda index: 90)
    monkeypatch.setattr(_kernels, "kernel",
                        lambda *a, **k: ctypes.c_void_p(21))
    monkeypatch.setattr(_kernels, "locate", lambda *a, **k: ("dir", 0))
    monkeypatch.setattr(_kernels, "info", lambda d, i: Info())
    monkeypatch.setattr(
        _kernels, "param_names",
        lambda d, i: {"kv_tile_order"} if takes["value"] else set())
    monkeypatch.setattr(block_sparse, "_readable", lambda t: t)
    q, k, v = (torch.randn(1, 2, 256, 64, dtype=torch.bfloat16)
               for _ in range(3))
    num = torch.tensor([[[1, 2]]], dtype=torch.int32)
    idx = torch.tensor([[[[0, 1], [0, 1]]]], dtype=torch.int32)
    lists = (num, idx, None, None)

    def call():
        block_sparse._forward(q, k, v, lists, (1, 128, 128), 0, 0.125)
        return launched[-1]

    first, second = call(), call()
    order = block_sparse._tile_orders.get(lists, 1, 2, 256, 128, 128, 0)
    assert order is not None
    assert first["kv_tile_order"][1] == second["kv_tile_order"][1] \
        == order.data_ptr() != 0
    monkeypatch.setenv(block_sparse.GRID_ORDER_ENV, "1")
    assert call()["kv_tile_order"][1] == 0
    monkeypatch.setattr(block_sparse, "_forward_launches", ops._Templates())
    takes["value"] = False
    assert "kv_tile_order" not in call()


def _column_counts(lists, batch, heads_q, key_blocks):
    """[B][Hq][KB]: how many query blocks list each key block (partial or
    full), counted entry by entry."""
    counts = [[[0] * key_blocks for _ in range(heads_q)]
              for _ in range(batch)]
    for num, idx in ((lists[0], lists[1]), (lists[2], lists[3])):
        if num is None:
            continue
        for bi in range(batch):
            for hi in range(heads_q):
                n = num[bi % num.shape[0], hi % num.shape[1]]
                ix = idx[bi % idx.shape[0], hi % idx.shape[1]]
                for qb in range(n.shape[0]):
                    for j in range(max(0, min(int(n[qb]), ix.shape[-1]))):
                        if 0 <= int(ix[qb, j]) < key_blocks:
                            counts[bi][hi][int(ix[qb, j])] += 1
    return counts


def test_key_tile_order_counts_each_key_blocks_column():
    """The backward's order over key blocks: a key block's length is the
    number of query blocks that list it, partial or full. Entries past a
    row's count and indices outside [0, KB) count for nothing; the global
    key block of a sliding window (listed by every row) goes first in
    every head."""
    b, h, qb, kb = 2, 3, 8, 8
    gen = torch.Generator().manual_seed(0)
    # A window of two blocks, key block 0 global: rows list {0, qb-1, qb}.
    num = torch.full((1, h, qb), 3, dtype=torch.int32)
    idx = torch.randint(-5, 20, (1, h, qb, 5), generator=gen,
                        dtype=torch.int32)
    for m in range(qb):
        idx[0, :, m, :3] = torch.tensor([0, max(m - 1, 1), m])
    num[0, :, 0] = 1
    fnum = torch.randint(0, 3, (b, 1, qb), generator=gen, dtype=torch.int32)
    fidx = torch.randint(1, kb, (b, 1, qb, 2), generator=gen,
                         dtype=torch.int32)
    fidx[0, 0, 2, 1] = kb + 3  # outside [0, KB): not a listed block
    lists = (num, idx, fnum, fidx)
    order = block_sparse.key_tile_order(lists, b, h, kb * 128, 128, 128)
    counts = torch.tensor(_column_counts(lists, b, h, kb))
    assert torch.equal(order, block_sparse._order_by_length(counts))
    tiles = _decode_order(order, h, kb)
    assert sorted(tiles) == [(bi, hi, n) for bi in range(b)
                             for hi in range(h) for n in range(kb)]
    assert tiles[:b * h] == [(bi, hi, 0) for bi in range(b)
                             for hi in range(h)]


def test_key_tile_order_counts_kernel_blocks_of_a_list_column():
    """Kernel key blocks of 64 keys under list blocks of 128: each takes
    its list block's column, and the blocks past Sk are not tiles."""
    num = torch.tensor([[[1, 1, 1]]], dtype=torch.int32)
    idx = torch.tensor([[[[1], [1], [2]]]], dtype=torch.int32)
    order = block_sparse.key_tile_order((num, idx, None, None), 1, 1, 300,
                                        64, 128)
    # Columns 0 / 2 / 1 of list blocks 0-2: kernel blocks 2, 3 first, then
    # 4 (ceil(300 / 64) = 5 blocks), then 0 and 1.
    assert [t[2] for t in _decode_order(order, 1, 5)] == [2, 3, 4, 0, 1]
    assert block_sparse.key_tile_order((num, idx, None, None), 1, 257, 300,
                                       64, 128) is None


def test_backward_launch_passes_the_key_tile_order(monkeypatch):
    """The main kernel of a plan that takes kv_tile_order gets the cached
    key order's address (by its block_n), 0 with GRID_ORDER_ENV; a plan
    without it gets no such argument."""
    import ctypes
    calls = []
    main_names = {"q", "k", "q_num_blocks", "kv_tile_order"}
    plan = [(ctypes.c_void_p(31), {"o", "do"}),
            (ctypes.c_void_p(32), {"kv_num_blocks", "q_num_blocks"}),
            (ctypes.c_void_p(33), main_names)]

    class Info:
        block_n = 128

    monkeypatch.setattr(ops, "_backward_plan", lambda *a, **k: plan)
    monkeypatch.setattr(ops, "_launch_context", lambda device: (None, 0))
    monkeypatch.setattr(rt, "kernel_info", lambda kernel: Info())
    monkeypatch.setattr(block_sparse, "_transposed",
                        block_sparse.ListsCache())
    monkeypatch.setattr(block_sparse, "_tile_orders",
                        block_sparse.ListsCache())
    monkeypatch.setattr(block_sparse, "_readable", lambda t: t)
    monkeypatch.setattr(
        ops, "_launch_backward",
        lambda *a, extra=None, integers=(): calls.append((extra, integers)))
    q, k, v, o, do = (torch.randn(1, 2, 256, 64, dtype=torch.bfloat16)
                      for _ in range(5))
    lse = torch.zeros(1, 2, 256)
    num = torch.tensor([[[1, 2]]], dtype=torch.int32)
    idx = torch.tensor([[[[0, 1], [0, 1]]]], dtype=torch.int32)
    lists = (num, idx, None, None)

    def call():
        block_sparse._backward(do, q, k, v, o, lse, lists, (1, 128, 128), 0,
                               0.125)
        extra, integers = calls[-1]
        return extra, dict(integers)

    (extra, first), (_, second) = call(), call()
    order = block_sparse._tile_orders.get(lists, "keys", 1, 2, 256, 128, 128,
                                          0)
    assert order is not None and extra["kv_tile_order"] == (rt.PARAM_I64, 0)
    assert first["kv_tile_order"] == second["kv_tile_order"] \
        == order.data_ptr() != 0
    # Key block 0 is listed by both query blocks: first in the order.
    assert [t[2] for t in _decode_order(order, 2, 2)] == [0, 1, 0, 1]
    monkeypatch.setenv(block_sparse.GRID_ORDER_ENV, "1")
    assert call()[1]["kv_tile_order"] == 0
    main_names.discard("kv_tile_order")
    extra, integers = call()
    assert "kv_tile_order" not in extra and not integers


@pytest.mark.parametrize("capability", [(9, 0), (8, 0)])
def test_block_masks_of_64_compile(compile_tool, monkeypatch, tmp_path,
                                   capability):
    """block_sparse_attention's kernels for a BlockMask of 64 x 64 (compiled
    on first use): flash-select-config fits the tiles to the sparse blocks
    (the sm80 recipe's, on Hopper too, where the wgmma kernels' 128 rows do
    not divide them), so the forward and the backward compile, for the
    lists' block sizes."""
    from flashfuse import _compile, artifact
    monkeypatch.setenv("FLASHFUSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLASHFUSE_COMPILE", str(compile_tool))
    for kind in (rt.KIND_FORWARD, rt.KIND_BACKWARD):
        v = rt.Variant(kind, rt.DTYPE_BF16, 128, 128, rt.CAUSAL_TOP_LEFT)
        v.block_sparse, v.sparse_block_q, v.sparse_block_k = 2, 64, 64
        directory = _compile.compile_variant(v, capability)
        info = artifact.kernel_info(
            directory, kind=None if kind == rt.KIND_FORWARD else kind)
        assert (info.variant.sparse_block_q, info.variant.sparse_block_k) \
            == (64, 64)
        assert info.name.startswith(
            f"flash_{'fwd' if kind == rt.KIND_FORWARD else 'bwd'}_sm80_"),\
            info.name
        assert info.name.endswith("_bs64x64f"), info.name
