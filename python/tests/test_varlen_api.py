"""flashfuse.varlen_attention's argument checks, its custom op's fake and
its refusal to differentiate: torch, no GPU (the checks run in the order
that reports every mistake but the device the same way with and without
one)."""

import pytest

torch = pytest.importorskip("torch")

import flashfuse  # noqa: E402
from flashfuse import varlen  # noqa: E402
from flashfuse.errors import InvalidArgumentError  # noqa: E402


def _packed(total_q=30, total_k=50, hq=4, hkv=4, d=64, dv=None,
            dtype=torch.float16, device="cpu"):
    dv = dv or d
    return (torch.zeros(total_q, hq, d, dtype=dtype, device=device),
            torch.zeros(total_k, hkv, d, dtype=dtype, device=device),
            torch.zeros(total_k, hkv, dv, dtype=dtype, device=device))


def _cu(*offsets, device="cpu"):
    return torch.tensor(offsets, dtype=torch.int32, device=device)


def _call(q=None, k=None, v=None, cu_q=None, cu_k=None, max_q=20, max_k=30,
          **kwargs):
    pq, pk, pv = _packed()
    return flashfuse.varlen_attention(
        pq if q is None else q, pk if k is None else k,
        pv if v is None else v,
        _cu(0, 10, 30) if cu_q is None else cu_q,
        _cu(0, 20, 50) if cu_k is None else cu_k, max_q, max_k, **kwargs)


def test_exported_from_the_package():
    assert "varlen_attention" in flashfuse.__all__
    assert flashfuse.varlen_attention is varlen.varlen_attention


def test_cpu_tensors_are_rejected_last():
    with pytest.raises(ValueError, match="runs on CUDA tensors; q is on cpu"):
        _call()


def test_tensor_structure_is_checked():
    q, k, v = _packed()
    with pytest.raises(ValueError, match=r"q must be \[total_q, Hq, D\]"):
        _call(q=q.unsqueeze(0))
    with pytest.raises(TypeError, match="k must be a torch.Tensor"):
        _call(k=[1, 2])
    with pytest.raises(TypeError, match="float16 and bfloat16; v is "
                                        "torch.float32"):
        _call(v=v.float())
    with pytest.raises(TypeError, match="one dtype"):
        _call(k=k.bfloat16())
    with pytest.raises(ValueError, match="mismatched shapes"):
        _call(v=torch.zeros(49, 4, 64, dtype=torch.float16))
    with pytest.raises(ValueError, match="mismatched shapes"):
        _call(k=torch.zeros(50, 4, 32, dtype=torch.float16))


def test_grouped_query_heads():
    q, k, v = _packed(hq=8, hkv=2)
    with pytest.raises(ValueError, match="enable_gqa=True"):
        _call(q, k, v, enable_gqa=False)
    q, k, v = _packed(hq=6, hkv=4)
    with pytest.raises(ValueError, match=r"q's heads \(6\) must be a multiple "
                                         r"of k/v's heads \(4\)"):
        _call(q, k, v)
    # GQA is on by default (flash-attn takes it without a flag): the call
    # gets as far as the device check.
    q, k, v = _packed(hq=8, hkv=2)
    with pytest.raises(ValueError, match="runs on CUDA tensors"):
        _call(q, k, v)


def test_offsets_are_checked_on_the_host_where_cheap():
    with pytest.raises(TypeError, match="cu_seqlens_q must be int32, got "
                                        "torch.int64"):
        _call(cu_q=torch.tensor([0, 10, 30]))
    with pytest.raises(TypeError, match="cu_seqlens_k must be an int32 "
                                        "torch.Tensor"):
        _call(cu_k=[0, 20, 50])
    with pytest.raises(ValueError, match=r"cu_seqlens_q must be \[B \+ 1\] "
                                         "with B >= 1"):
        _call(cu_q=_cu(0))
    with pytest.raises(ValueError, match=r"cu_seqlens_k must be \[B \+ 1\]"):
        _call(cu_k=_cu(0, 20, 50).reshape(1, 3))
    with pytest.raises(ValueError, match="cu_seqlens_q has 3 entries and "
                                         "cu_seqlens_k 4"):
        _call(cu_k=_cu(0, 20, 30, 50))


def test_max_seqlens_are_checked():
    with pytest.raises(TypeError, match="max_seqlen_q must be an int"):
        _call(max_q=20.0)
    with pytest.raises(TypeError, match="max_seqlen_k must be an int"):
        _call(max_k=True)
    with pytest.raises(ValueError, match="max_seqlen_k = -1 is negative"):
        _call(max_k=-1)
    # A bound above the total (a model's maximum length) is the total: the
    # call gets as far as the device check.
    with pytest.raises(ValueError, match="runs on CUDA tensors"):
        _call(max_q=4096, max_k=4096)
    with pytest.raises(ValueError, match="max_seqlen_q = 0 but q has 30 rows"):
        _call(max_q=0)


def test_options_are_checked():
    with pytest.raises(ValueError, match="is_causal must be"):
        _call(is_causal="bottom")
    with pytest.raises(ValueError, match="window must be"):
        _call(window=(4, -2))
    with pytest.raises(ValueError, match="window must be"):
        _call(window=(4.5, 0))
    with pytest.raises(ValueError, match="softcap must be positive"):
        _call(softcap=-1.0)
    with pytest.raises(ValueError, match="scale must be finite"):
        _call(scale=float("nan"))
    for p in (-0.1, 1.0):
        with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\)"):
            _call(dropout_p=p)
    # A valid p passes every host check, with ALiBi too (the device is
    # refused last).
    for extra in ({}, dict(alibi_slopes=torch.ones(4))):
        with pytest.raises(ValueError, match="runs on CUDA tensors"):
            _call(dropout_p=0.1, **extra)


def test_check_offsets_finds_the_first_bad_entry():
    good = (_cu(0, 10, 10, 30), _cu(0, 0, 20, 50), 30, 50, 20, 30)
    varlen.check_offsets(*good)
    cases = [
        ((_cu(1, 10, 10, 30),) + good[1:], r"cu_seqlens_q\[0\] = 1; the "
                                           "offsets start at 0"),
        ((good[0], _cu(0, 20, 10, 50)) + good[2:],
         r"cu_seqlens_k\[2\] = 10 < cu_seqlens_k\[1\] = 20; the offsets must "
         "not decrease"),
        ((_cu(0, 10, 10, 29),) + good[1:],
         r"cu_seqlens_q\[-1\] = 29 but the packed tensor has 30 rows"),
        (good[:4] + (19, 30),
         r"sequence 2 has 20 rows \(cu_seqlens_q\[3\] - cu_seqlens_q\[2\]\), "
         "more than max_seqlen_q = 19"),
        (good[:5] + (29,), "more than max_seqlen_k = 29"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=message):
            varlen.check_offsets(*args)


def test_check_inputs_switch(monkeypatch):
    # check_inputs=True, or FLASHFUSE_CHECK_VARLEN=1 for every call.
    assert varlen.check_requested(True)
    monkeypatch.delenv(varlen.CHECK_ENV, raising=False)
    assert not varlen.check_requested(False)
    monkeypatch.setenv(varlen.CHECK_ENV, "1")
    assert varlen.check_requested(False)


def test_custom_op_is_registered_with_a_fake():
    q = torch.empty(300, 8, 128, dtype=torch.bfloat16, device="meta")
    k = torch.empty(500, 2, 128, dtype=torch.bfloat16, device="meta")
    v = torch.empty(500, 2, 64, dtype=torch.bfloat16, device="meta")
    cu = torch.empty(4, dtype=torch.int32, device="meta")
    o, lse = torch.ops.flashfuse.varlen_attention_fwd(
        q, k, v, cu, cu, 120, 200, 2, 0.1, -1, -1, 0.0)
    assert o.shape == (300, 8, 64) and o.dtype == torch.bfloat16
    assert lse.shape == (8, 300) and lse.dtype == torch.float32


def test_backward_op_fake_and_autograd_shapes():
    # The backward's custom op has a fake: gradients in the layouts and
    # dtypes of q, k, v (GQA: k and v keep their own heads and Dv), and
    # autograd reaches it through _VarlenAttention (meta tensors: shapes
    # only, no kernel).
    q = torch.empty(30, 4, 64, dtype=torch.float16, device="meta",
                    requires_grad=True)
    k = torch.empty(50, 2, 64, dtype=torch.float16, device="meta",
                    requires_grad=True)
    v = torch.empty(50, 2, 32, dtype=torch.float16, device="meta",
                    requires_grad=True)
    cu = torch.empty(3, dtype=torch.int32, device="meta")
    o, lse = varlen._VarlenAttention.apply(q, k, v, cu, cu, 20, 30, 0, 0.125,
                                           -1, -1, 0.0, False, 0.1, 7)
    assert o.requires_grad and not lse.requires_grad
    assert o.shape == (30, 4, 32) and lse.shape == (4, 30)
    dq, dk, dv = torch.autograd.grad(o.sum(), (q, k, v))
    assert (dq.shape, dk.shape, dv.shape) == (q.shape, k.shape, v.shape)
    assert dq.dtype == dk.dtype == dv.dtype == torch.float16
    grads = torch.ops.flashfuse.varlen_attention_bwd(
        o, q, k, v, o, lse, cu, cu, 20, 30, 0, 0.125, -1, -1, 0.0, True)
    assert [g.shape for g in grads] == [q.shape, k.shape, v.shape]
    grads = torch.ops.flashfuse.varlen_attention_bwd(
        o, q, k, v, o, lse, cu, cu, 20, 30, 0, 0.125, -1, -1, 0.0, False,
        0.1, 2**62 - 1)
    assert [g.shape for g in grads] == [q.shape, k.shape, v.shape]


def test_bench_varlen_arguments_and_table():
    from flashfuse import bench, bench_varlen
    args = bench.parse_args(["--varlen"])
    assert args.varlen and args.varlen_seqs == 16 and args.warmup_ms == 250
    lengths = bench_varlen.varlen_lengths(args.varlen_seqs, args.varlen_min,
                                          args.varlen_max, args.varlen_seed)
    # The batch: 16 sequences of 128..4k tokens, ~32k in all.
    assert len(lengths) == 16 and sum(lengths) == 31660
    assert 128 <= min(lengths) and max(lengths) <= 4096
    assert lengths == bench_varlen.varlen_lengths(16, 128, 4096, 15)
    config = {"sequences": 16, "lengths": lengths, "total_tokens": 31660,
              "dense_seqlen": 1978, "heads": 16, "head_dim": 128,
              "causal": True, "dtype": "bfloat16"}
    text = bench_varlen.table(config, [
        {"method": "flashfuse-varlen", "ms": 2.0, "tflops": 300.0,
         "error": None, "ratio_vs_dense": 0.96},
        {"method": "flashfuse-dense", "ms": 1.9, "tflops": 312.5,
         "error": None}])
    assert "0.960x" in text and "16 x 1978" in text and "forward" in text
    assert not args.varlen_backward
    assert bench.parse_args(["--varlen", "--varlen-backward"]).varlen_backward
    config["pass"] = "forward+backward"
    assert "forward+backward" in bench_varlen.table(config, [
        {"method": "flashfuse-varlen", "ms": None, "tflops": None,
         "error": "no kernel"},
        {"method": "flashfuse-dense", "ms": 1.9, "tflops": 312.5,
         "error": None}])


def test_launch_arguments_pass_the_runtime_checks(rt):
    """The op's arguments (built from CPU tensors here: the check reads no
    memory) against the varlen kernel of runtime/test/data/varlen (f16,
    D = 128, Hq 8 / Hkv 2, bottom-right causal): flash-attn's [total, H, D]
    tensors read in place as [1, H, total, D], a q sliced out of a packed
    qkv buffer included, and offsets that need an aligned copy."""
    from conftest import ROOT
    from flashfuse import ops
    m = rt.Manifest.open(ROOT / "runtime" / "test" / "data" / "varlen")
    q = torch.zeros(300, 8, 128, dtype=torch.float16)
    k = torch.zeros(500, 2, 128, dtype=torch.float16)
    v = torch.zeros(500, 2, 128, dtype=torch.float16)
    o = torch.empty(300, 8, 128, dtype=torch.float16)
    lse = torch.empty(8, 300, dtype=torch.float32)
    cu_q = _cu(0, 100, 300)
    cu_k = torch.zeros(9, dtype=torch.int32)[1:4]  # 4 bytes past a boundary
    cu_k[:] = _cu(0, 260, 500)
    a, p, keep = ops.varlen_launch_args(q, k, v, o, lse, cu_q, cu_k, 200, 260,
                                        0.088, -1, -1, 0.0)
    assert (a.batch, a.seq_q, a.seq_k, p.num_seqs) == (1, 300, 500, 2)
    assert tuple(a.q_stride) == (300 * 8 * 128, 128, 8 * 128, 1)
    assert tuple(a.k_stride) == (500 * 2 * 128, 128, 2 * 128, 1)
    assert p.cu_seqlens_k % 16 == 0 and p.cu_seqlens_k != cu_k.data_ptr()
    assert p.cu_seqlens_q == cu_q.data_ptr()
    m.check_forward_varlen(0, a, p)
    # A q of a packed qkv [total, 3, H, D] buffer is read in place.
    qkv = torch.zeros(300, 3, 8, 128, dtype=torch.float16)
    a, p, keep = ops.varlen_launch_args(qkv[:, 0], k, v, o, lse, cu_q, cu_k,
                                        200, 260, 0.088, -1, -1, 0.0)
    assert a.q == qkv.data_ptr() and tuple(a.q_stride)[1:] == (128, 3 * 8 * 128, 1)
    m.check_forward_varlen(0, a, p)
    # Dropout reaches the kernel's arguments; this kernel has none.
    a, p, keep = ops.varlen_launch_args(q, k, v, o, lse, cu_q, cu_k, 200, 260,
                                        0.088, -1, -1, 0.0, 0.25, 2**62 - 1)
    assert a.dropout_p == 0.25 and a.seed == 2**62 - 1
    with pytest.raises(InvalidArgumentError,
                       match="dropout was requested but the kernel has none"):
        m.check_forward_varlen(0, a, p)
    del keep


def test_backward_arguments_pass_the_runtime_checks(rt):
    """The backward op's arguments (CPU tensors: the check reads no memory)
    against the backward kernels of runtime/test/data/varlen-bwd (f16,
    D = 128, Hq 8 / Hkv 2, bottom-right causal; 0-2 atomic, 3-6
    deterministic): the binding's BackwardArgs layout matches runtime.h,
    and the scratch is what each mode needs."""
    from conftest import ROOT
    from flashfuse import ops
    m = rt.Manifest.open(ROOT / "runtime" / "test" / "data" / "varlen-bwd")
    q, o, do = (torch.zeros(300, 8, 128, dtype=torch.float16)
                for _ in range(3))
    k, v = (torch.zeros(500, 2, 128, dtype=torch.float16) for _ in range(2))
    grads = [torch.empty_like(t) for t in (q, k, v)]
    lse = torch.empty(8, 300, dtype=torch.float32)
    cu_q, cu_k = _cu(0, 100, 300), _cu(0, 260, 500)
    for indices, atomic in (((0, 1, -1, 2), True), ((3, 4, 5, 6), False)):
        a, p, keep = ops.varlen_backward_args(
            do, q, k, v, o, lse, *grads, cu_q, cu_k, 200, 260, 0.088, -1, -1,
            0.0, atomic)
        assert (a.batch, a.seq_q, a.seq_k, p.num_seqs) == (1, 300, 500, 2)
        assert tuple(a.grad_k_stride) == (500 * 2 * 128, 128, 2 * 128, 1)
        assert bool(a.dq_accum) == atomic
        m.check_backward_varlen(indices, a, p)
        # The other mode's kernels refuse this scratch / these kernels.
        other = (3, 4, -1, 6) if atomic else (0, 1, 5, 2)
        with pytest.raises(InvalidArgumentError, match="backward_dq"):
            m.check_backward_varlen(other, a, p)
        del keep
    a.window_left = 8
    with pytest.raises(InvalidArgumentError,
                       match=r"window \(8, -1\) was requested but the "
                             "kernel has none"):
        m.check_backward_varlen((3, 4, 5, 6), a, p)
    # The forward's dropout reaches the backward's arguments (the binding's
    # struct ends where runtime.h's does); these kernels have none.
    a, p, keep = ops.varlen_backward_args(
        do, q, k, v, o, lse, *grads, cu_q, cu_k, 200, 260, 0.088, -1, -1,
        0.0, True, dropout_p=0.25, seed=2**62 - 1)
    assert a.dropout_p == 0.25 and a.seed == 2**62 - 1
    with pytest.raises(InvalidArgumentError,
                       match="dropout was requested but the kernels have "
                             "none"):
        m.check_backward_varlen((0, 1, -1, 2), a, p)
    # Where the main kernel writes grad_k / grad_v itself (the sm90
    # engine's, where Hq = Hkv, which the caller says), they stand in for
    # the dK / dV slices it leaves unused: nothing is allocated for them.
    a, p, keep = ops.varlen_backward_args(
        do, q, k, v, o, lse, *grads, cu_q, cu_k, 200, 260, 0.088, -1, -1,
        0.0, True, writes_key_grads=True)
    assert (a.dk, a.dv) == (grads[1].data_ptr(), grads[2].data_ptr())
    a, p, keep = ops.varlen_backward_args(
        do, q, k, v, o, lse, *grads, cu_q, cu_k, 200, 260, 0.088, -1, -1,
        0.0, True)
    assert a.dk not in (grads[1].data_ptr(), 0)
    del keep


@pytest.mark.parametrize("head_dim, causal, walks, mean_keys, ws", [
    (128, 0, True, 127, False), (128, 0, True, 128, True),
    (128, 1, True, 128, True), (128, 0, False, 383, False),
    (128, 2, False, 384, True), (192, 2, False, 127, False),
    (192, 1, True, 128, True), (64, 0, True, 383, False),
    (64, 0, True, 384, True), (64, 0, False, 767, False),
    (64, 0, False, 768, True), (64, 1, True, 383, False),
    (64, 1, True, 384, True), (64, 2, False, 2047, False),
    (64, 1, False, 2048, True)])
def test_varlen_forward_kernel_takes_sm90ws_from_a_mean_length(
        monkeypatch, head_dim, causal, walks, mean_keys, ws):
    # The sm90ws packed-batch forward from the lengths runs 552-553
    # measured (docs/PERF.md): D = 128 from 128 keys a sequence where the
    # runtime walks the batch, 384 where not; D = 64 without a mask from
    # 384 walked and 768 not, causal from 384 walked and 2048 not; MLA from
    # 128. The sm90 kernel below, and where no artifact has an sm90ws one.
    from flashfuse import _kernels
    from flashfuse import _runtime as rt
    variant = _kernels.make_variant(
        rt.KIND_FORWARD, rt.DTYPE_BF16, head_dim,
        128 if head_dim == 192 else head_dim, causal, varlen=True)
    calls = []
    monkeypatch.setattr(_kernels, "kernel",
                        lambda index, v, directory=None, capability=None:
                        calls.append(directory) or directory)
    monkeypatch.setattr(_kernels, "sm90ws_dir",
                        lambda v, long=False, capability=None: "ws-dir")
    got = _kernels.varlen_forward_kernel(0, variant, (9, 0), mean_keys,
                                         walks)
    assert got == ("ws-dir" if ws else None) and calls == [got]
    monkeypatch.setattr(_kernels, "sm90ws_dir",
                        lambda v, long=False, capability=None: None)
    assert _kernels.varlen_forward_kernel(0, variant, (9, 0), 1 << 20) is None
