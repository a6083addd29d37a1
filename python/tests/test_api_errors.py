"""flashfuse.attention's argument checks, custom-op registration and
helpers that need torch but no GPU."""

import pytest

torch = pytest.importorskip("torch")

import flashfuse  # noqa: E402


def _qkv(dtype=torch.float16, shape_q=(1, 4, 16, 64), shape_kv=(1, 4, 16, 64),
         device="cpu"):
    return (torch.zeros(shape_q, dtype=dtype, device=device),
            torch.zeros(shape_kv, dtype=dtype, device=device),
            torch.zeros(shape_kv, dtype=dtype, device=device))


def test_cpu_tensors_are_rejected():
    with pytest.raises(ValueError, match="runs on CUDA tensors; query is on cpu"):
        flashfuse.attention(*_qkv())


def test_dtype_must_be_half_precision():
    with pytest.raises(TypeError, match="float16 and bfloat16; query is torch.float32"):
        flashfuse.attention(*_qkv(dtype=torch.float32))
    q, k, v = _qkv()
    with pytest.raises(TypeError, match="one dtype"):
        flashfuse.attention(q, k.bfloat16(), v)


def test_shapes_are_checked():
    with pytest.raises(ValueError, match="expects \\[B, H, S, D\\]"):
        flashfuse.attention(torch.zeros(4, 16, 64, dtype=torch.float16),
                            *_qkv()[1:])
    with pytest.raises(ValueError, match="mismatched shapes"):
        flashfuse.attention(*_qkv(shape_kv=(1, 4, 16, 32)))
    with pytest.raises(ValueError, match="enable_gqa=True"):
        flashfuse.attention(*_qkv(shape_q=(1, 8, 16, 64)))
    with pytest.raises(ValueError, match="multiple of key/value heads"):
        flashfuse.attention(*_qkv(shape_q=(1, 6, 16, 64)), enable_gqa=True)
    with pytest.raises(TypeError, match="must be a torch.Tensor"):
        flashfuse.attention([1], *_qkv()[1:])


def test_custom_op_is_registered_with_a_fake():
    # Meta tensors go through the fake implementation, which torch.compile
    # uses to trace the op without running it.
    q = torch.empty(2, 8, 100, 128, dtype=torch.bfloat16, device="meta")
    k = torch.empty(2, 2, 300, 128, dtype=torch.bfloat16, device="meta")
    v = torch.empty(2, 2, 300, 64, dtype=torch.bfloat16, device="meta")
    o, lse = torch.ops.flashfuse.attention_fwd(q, k, v, None, None, 1, 0.1,
                                               -1, -1, 0.0, 0.0, 0, False)
    assert o.shape == (2, 8, 100, 64) and o.dtype == torch.bfloat16
    assert lse.shape == (2, 8, 100) and lse.dtype == torch.float32
    # BSHD-in-memory q gives BSHD-in-memory O.
    q_bshd = torch.empty(2, 100, 8, 128, dtype=torch.bfloat16,
                         device="meta").transpose(1, 2)
    o, _ = torch.ops.flashfuse.attention_fwd(q_bshd, k, v, None, None, 0, 0.1,
                                             -1, -1, 0.0, 0.0, 0)
    assert o.transpose(1, 2).is_contiguous()
    # out_f32 (trailing, default False): O in float32, same shape and
    # layout; the LSE is f32 either way.
    assert "bool out_f32=False" in str(
        torch.ops.flashfuse.attention_fwd.default._schema)
    o32, lse32 = torch.ops.flashfuse.attention_fwd(
        q, k, v, None, None, 1, 0.1, -1, -1, 0.0, 0.0, 0, True)
    assert o32.shape == (2, 8, 100, 64) and o32.dtype == torch.float32
    assert lse32.shape == (2, 8, 100) and lse32.dtype == torch.float32
    o32, _ = torch.ops.flashfuse.attention_fwd(
        q_bshd, k, v, None, None, 0, 0.1, -1, -1, 0.0, 0.0, 0, out_f32=True)
    assert o32.dtype == torch.float32 and o32.transpose(1, 2).is_contiguous()
    dq, dk, dv, dbias = torch.ops.flashfuse.attention_bwd(
        o, q, k, v, o, lse, None, None, 0, 0.1, -1, -1, 0.0, 0.0, 0, False,
        False)
    assert dq.shape == q.shape and dk.shape == k.shape and dv.shape == v.shape
    assert dbias.numel() == 0
    bias = torch.empty(2, 1, 100, 300, device="meta").expand(2, 8, 100, 300)
    *_, dbias = torch.ops.flashfuse.attention_bwd(
        o, q, k, v, o, lse, bias, None, 0, 0.1, -1, -1, 0.0, 0.0, 0, True,
        True)
    assert dbias.shape == (2, 8, 100, 300) and dbias.dtype == torch.float32
    # Gradients keep BSHD-in-memory layouts, as O does.
    dq, *_ = torch.ops.flashfuse.attention_bwd(
        o, q_bshd, k, v, o, lse, None, None, 0, 0.1, -1, -1, 0.0, 0.0, 0,
        False, False)
    assert dq.transpose(1, 2).is_contiguous()


def test_option_validation_before_device():
    from flashfuse.ops import _aligned
    t = torch.zeros(2, 3, 5, 8, dtype=torch.float16)
    assert _aligned(t)
    assert not _aligned(t[..., 1:])
    assert not _aligned(t.transpose(-1, -2))


def test_hf_register_without_or_with_transformers():
    import flashfuse.hf
    try:
        import transformers  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="needs transformers"):
            flashfuse.hf.register()
        return
    from transformers import AttentionInterface
    name = flashfuse.hf.register()
    assert name in ("flashfuse", flashfuse.hf.HUB_SAFE_NAME)
    assert "flashfuse" in AttentionInterface._global_mapping
    assert name in AttentionInterface._global_mapping


def test_hf_model_dispatches_to_flashfuse():
    """A transformers model built with the registered name calls our op (on
    the CPU it reaches flashfuse.attention's device check)."""
    transformers = pytest.importorskip("transformers")
    import flashfuse.hf
    name = flashfuse.hf.register()
    cfg = transformers.LlamaConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, vocab_size=50)
    model = transformers.AutoModelForCausalLM.from_config(
        cfg, attn_implementation=name).to(torch.float16)
    assert model.config._attn_implementation == name
    with pytest.raises(ValueError, match="runs on CUDA tensors"):
        model(torch.zeros(1, 8, dtype=torch.long))


def test_bench_table_and_arguments():
    from flashfuse import bench, bench_report
    args = bench.parse_args(["--dtypes", "bf16", "--head-dims", "128",
                             "--seqlens", "512", "--causal", "yes"])
    cfgs = list(bench.configs(args))
    assert cfgs == [{"dtype": "bf16", "head_dim": 128, "head_dim_v": 128,
                     "heads": 16, "batch": 32, "seqlen": 512, "causal": True,
                     "window": 0}]
    assert bench.flops(cfgs[0]) == 4 * 32 * 16 * 512 * 512 * 128 / 2
    rows = [dict(cfgs[0], method="flashfuse", tflops=150.0, error=None),
            dict(cfgs[0], method="sdpa-flash", tflops=300.0, error=None),
            dict(cfgs[0], method="naive", tflops=None, error="skipped")]
    text = bench_report.table(rows, ["flashfuse", "sdpa-flash", "naive"])
    assert "0.50" in text and "n/a" in text and "naive: skipped" in text
    assert text.startswith("forward TFLOP/s")
    # --backward: FlashAttention's 2.5x count, and the table says so.
    assert bench.parse_args(["--backward"]).backward
    assert bench.flops(cfgs[0], backward=True) == 2.5 * bench.flops(cfgs[0])
    assert bench_report.table(rows, ["flashfuse"], "backward").startswith(
        "backward TFLOP/s")


def test_bench_mla_head_dims(monkeypatch):
    # --head-dim-v: V's and O's head dim (DeepSeek's MLA prefill, 192 /
    # 128). FLOPs count D for Q Kᵀ and Dv for P V (backward 3 D + 2 Dv);
    # V is made [B, H, S, Dv]; the table names the pair.
    from flashfuse import bench, bench_report
    args = bench.parse_args(["--dtypes", "bf16", "--head-dims", "192",
                             "--head-dim-v", "128", "--seqlens", "256",
                             "--causal", "no", "--hidden", "3072",
                             "--methods", "flashfuse", "--rotate", "1"])
    (c,) = bench.configs(args)
    assert (c["head_dim"], c["head_dim_v"], c["heads"]) == (192, 128, 16)
    pairs = c["batch"] * c["heads"] * 256 * 256
    assert bench.flops(c) == 2 * pairs * (192 + 128)
    assert bench.flops(c, backward=True) == 2 * pairs * (3 * 192 + 2 * 128)
    real_randn = torch.randn
    monkeypatch.setattr(bench.torch, "randn",
                        lambda *a, device=None, **k: real_randn(*a, **k))
    monkeypatch.setattr(bench, "time_ms", lambda *a, **k: 1.0)
    shapes = []

    def run(q, k, v, causal):
        shapes.append((q.shape[-1], k.shape[-1], v.shape[-1]))
        return q[..., :v.shape[-1]]
    rows = bench.bench_config(c, args, {"flashfuse": run})
    assert shapes == [(192, 192, 128)] and rows[0]["ms"] == 1.0
    assert " 192/128 " in bench_report.table(rows, ["flashfuse"])
    for bad in (["--head-dim-v", "0"], ["--head-dims", "64", "128",
                                        "--head-dim-v", "128"]):
        with pytest.raises(SystemExit):
            bench.parse_args(bad)


def test_bench_rounds_interleave_and_report_their_range(monkeypatch):
    from flashfuse import bench, bench_report
    args = bench.parse_args(["--dtypes", "bf16", "--head-dims", "64",
                             "--seqlens", "256", "--causal", "no",
                             "--methods", "flashfuse", "sdpa-cudnn",
                             "--rounds", "3", "--rotate", "1"])
    assert args.rounds == 3
    with pytest.raises(SystemExit):
        bench.parse_args(["--rounds", "0"])
    # Each round starts one method later.
    assert bench._rotated(["a", "b", "c"], 0) == ["a", "b", "c"]
    assert bench._rotated(["a", "b", "c"], 4) == ["b", "c", "a"]
    # bench_config on the CPU: inputs made there, scripted timings.
    real_randn = torch.randn
    monkeypatch.setattr(bench.torch, "randn",
                        lambda *a, device=None, **k: real_randn(*a, **k))
    order = []
    scripted = {"flashfuse": iter([1.0, 2.0, 1.1]),
                "sdpa-cudnn": iter([1.2, 1.9, 1.0])}

    def fake_time(fn, timed, warmup, reps, warmup_ms):
        method = fn.__name__
        order.append(method)
        return next(scripted[method])

    def runner(name):
        def run(q, k, v, causal):
            return q
        run.__name__ = name
        return run
    monkeypatch.setattr(bench, "time_ms", fake_time)
    (c,) = bench.configs(args)
    rows = bench.bench_config(c, args, {m: runner(m) for m in args.methods})
    assert order == ["flashfuse", "sdpa-cudnn", "sdpa-cudnn", "flashfuse",
                     "flashfuse", "sdpa-cudnn"]
    ours, cudnn = rows
    assert ours["round_ms"] == [1.0, 2.0, 1.1] and ours["ms"] == 1.1
    assert cudnn["ms"] == 1.2
    text = bench_report.table(rows, args.methods)
    assert text.startswith("forward TFLOP/s (median of 3 interleaved rounds)")
    # ours / cuDNN: 1.2 / 1.1 of the medians; per round 1.2, 0.95, 0.91.
    assert "ours/cudnn" in text and "1.09 (0.91-1.20)" in text
    # A method that fails is reported, not timed again.
    scripted = {"flashfuse": iter([1.0, 1.0, 1.0])}

    def failing(q, k, v, causal):
        raise RuntimeError("no kernel\nmore")
    failing.__name__ = "sdpa-cudnn"
    rows = bench.bench_config(c, args, {"flashfuse": runner("flashfuse"),
                                        "sdpa-cudnn": failing})
    assert rows[1]["error"] == "no kernel" and rows[1]["tflops"] is None
    assert "n/a" in bench_report.table(rows, args.methods)


def test_bench_window_counts_the_pairs_it_keeps():
    from flashfuse import bench
    args = bench.parse_args(["--window", "3", "--seqlens", "8",
                             "--head-dims", "64", "--dtypes", "fp16"])
    assert args.causal == [True]  # a sliding window is causal
    assert "flex" not in args.methods  # compiles per shape: opt-in
    (c,) = bench.configs(args)
    assert c["window"] == 3
    # Row i keeps min(i, 3) + 1 keys: 1 + 2 + 3 + 4 * 5 = 26 of 64.
    brute = sum(min(i, 3) + 1 for i in range(8))
    assert bench.visible_pairs(8, True, 3) == brute == 26
    assert bench.visible_pairs(8, True, 100) == 36  # wider than S: causal
    assert bench.flops(c) == 4 * c["batch"] * c["heads"] * 64 * 26
    with pytest.raises(SystemExit):
        bench.parse_args(["--window", "-1"])
    # The naive method keeps exactly those pairs (one-hot V reads P back).
    q = torch.randn(1, 1, 8, 4)
    k = torch.randn(1, 1, 8, 4)
    p = bench._naive(3)(q, k, torch.eye(8)[None, None], True)[0, 0]
    i, j = torch.meshgrid(torch.arange(8), torch.arange(8), indexing="ij")
    assert torch.equal(p > 0, (j <= i) & (i - j <= 3))
    # Methods without a window refuse it rather than time something else.
    with pytest.raises(NotImplementedError, match="no sliding window"):
        bench._sdpa(None, window=3)(q, k, k, True)
