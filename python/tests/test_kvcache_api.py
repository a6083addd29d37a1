"""flashfuse.attention_with_kvcache's argument checks, how the append of
new rows and the device-side check are reached (check_inputs and
FLASHFUSE_CHECK_KVCACHE), and the custom ops' fakes: torch, no GPU."""

import pytest

torch = pytest.importorskip("torch")

import flashfuse  # noqa: E402
from flashfuse import kvcache  # noqa: E402

F16 = torch.float16


def contiguous(b=2, sq=1, hq=8, hkv=2, d=64, smax=128, dtype=F16,
               device="cpu"):
    q = torch.zeros(b, sq, hq, d, dtype=dtype, device=device)
    k = torch.zeros(b, smax, hkv, d, dtype=dtype, device=device)
    return q, k, torch.zeros_like(k)


def paged(b=2, sq=1, hq=8, hkv=2, d=64, pages=10, page=16, max_pages=4):
    q = torch.zeros(b, sq, hq, d, dtype=F16)
    k = torch.zeros(pages, page, hkv, d, dtype=F16)
    table = torch.arange(b * max_pages, dtype=torch.int32).view(b, max_pages)
    return q, k, torch.zeros_like(k), table


def call(*args, **kwargs):
    return flashfuse.attention_with_kvcache(*args, **kwargs)


def test_public_name_and_cpu_rejected():
    assert flashfuse.attention_with_kvcache is kvcache.attention_with_kvcache
    q, k, v = contiguous()
    with pytest.raises(ValueError, match="runs on CUDA tensors; q is on cpu"):
        call(q, k, v, 5)
    with pytest.raises(ValueError, match="runs on CUDA tensors"):
        call(q, k, v, torch.tensor([5, 7], dtype=torch.int32))


@pytest.mark.parametrize("edit, error, message", [
    (lambda q, k, v: (q.float(), k, v), TypeError, "q is torch.float32"),
    (lambda q, k, v: (q, k.bfloat16(), v), TypeError,
     "k_cache is torch.bfloat16 but q is torch.float16"),
    (lambda q, k, v: (q[0], k, v), ValueError,
     r"q must be \[B, Sq, Hq, D\], got shape \(1, 8, 64\)"),
    (lambda q, k, v: (q, k[..., :32], v), ValueError, "mismatched shapes"),
    (lambda q, k, v: (q, k, v[..., :32]), ValueError,
     r"need v_cache's head dim equal to q's, got D = 64, Dv = 32"),
    (lambda q, k, v: (q, k[:, :, :1].expand(2, 128, 3, 64),
                      v[:, :, :1].expand(2, 128, 3, 64)), ValueError,
     r"q's heads \(8\) must be a multiple of the caches' heads \(3\)"),
    (lambda q, k, v: (q[:1], k, v), ValueError,
     "k_cache has batch 2 but q has 1"),
    (lambda q, k, v: (q.expand(2, 129, 8, 64), k, v), ValueError,
     "q has Sq = 129 rows but the cache holds at most 128"),
    (lambda q, k, v: ([1], k, v), TypeError, "q must be a torch.Tensor"),
])
def test_shapes_and_dtypes(edit, error, message):
    q, k, v = edit(*contiguous())
    with pytest.raises(error, match=message):
        call(q, k, v, 3)


def test_lengths_options_and_new_rows():
    q, k, v = contiguous()
    kn = torch.zeros(2, 1, 2, 64, dtype=F16)
    cases = [
        (dict(cache_seqlens=3.0), TypeError, "an int or an int32 tensor"),
        (dict(cache_seqlens=True), TypeError, "an int or an int32 tensor"),
        (dict(cache_seqlens=torch.tensor([1, 2])), TypeError,
         "cache_seqlens must be int32, got torch.int64"),
        (dict(cache_seqlens=torch.tensor([1], dtype=torch.int32)),
         ValueError, r"cache_seqlens must be \[B=2\]"),
        (dict(cache_seqlens=-1), ValueError, "outside the cache's capacity"),
        (dict(cache_seqlens=128, k_new=kn, v_new=kn), ValueError,
         "cache_seqlens = 128 with 1 new rows is outside"),
        (dict(k_new=kn), ValueError, "k_new and v_new go together; got only "
                                     "k_new"),
        (dict(v_new=kn), ValueError, "got only v_new"),
        (dict(k_new=kn, v_new=kn[:, :, :1]), ValueError,
         "must be \\[B=2, Snew, Hkv=2, D=64\\]"),
        (dict(k_new=kn.bfloat16(), v_new=kn.bfloat16()), TypeError,
         "k_new is torch.bfloat16"),
        (dict(k_new=torch.zeros(2, 129, 2, 64, dtype=F16),
              v_new=torch.zeros(2, 129, 2, 64, dtype=F16)), ValueError,
         "129 new rows exceed the cache's capacity 128"),
        (dict(window_size=(4,)), ValueError, "window_size must be"),
        (dict(window_size=(-2, 0)), ValueError, "window_size must be"),
        (dict(softcap=-1.0), ValueError, "softcap must be >= 0"),
        (dict(softcap=float("nan")), ValueError, "softcap must be >= 0"),
    ]
    with pytest.raises(ValueError, match="num_splits must be an int >= 0"):
        call(q, k, v, 3, num_splits=-1)
    with pytest.raises(ValueError, match="is_causal must be a bool"):
        call(q, k, v, 3, is_causal="bottom_right")
    for kwargs, error, message in cases:
        args = dict(cache_seqlens=3)
        args.update(kwargs)
        lengths = args.pop("cache_seqlens")
        with pytest.raises(error, match=message):
            call(q, k, v, lengths, **args)


def test_paged_checks():
    q, k, v, table = paged()
    with pytest.raises(TypeError, match="block_table must be int32"):
        call(q, k, v, 3, block_table=table.long())
    with pytest.raises(ValueError, match=r"block_table must be \[B=2, "):
        call(q, k, v, 3, block_table=table[:1])
    # A contiguous cache [B, Smax, Hkv, D] with a block_table would be read
    # as B pages of Smax rows.
    qc, kc, vc = contiguous(smax=4096)
    with pytest.raises(ValueError, match="page_size 4096 is not a power of "
                                         "two <= 1024"):
        call(qc, kc, vc, 3, block_table=table)
    # Capacity is max_pages * page_size = 64.
    with pytest.raises(ValueError, match="holds at most 64"):
        call(q.expand(2, 65, 8, 64), k, v, 3, block_table=table)
    with pytest.raises(ValueError, match="runs on CUDA tensors; q is on cpu"):
        call(q, k, v, 3, block_table=table)


def test_device_check_is_requested_by_argument_or_environment(monkeypatch):
    # check_inputs=True, or FLASHFUSE_CHECK_KVCACHE=1 for every call, runs
    # the decode_check kernel (python/tests/test_decode_gpu.py runs it).
    monkeypatch.delenv(kvcache.CHECK_ENV, raising=False)
    assert kvcache.CHECK_ENV == "FLASHFUSE_CHECK_KVCACHE"
    assert not kvcache.check_requested(False)
    assert kvcache.check_requested(True)
    monkeypatch.setenv(kvcache.CHECK_ENV, "1")
    assert kvcache.check_requested(False)
    monkeypatch.setenv(kvcache.CHECK_ENV, "0")
    assert not kvcache.check_requested(False)


def test_append_is_the_kernel_not_torch_indexing():
    # The new rows are written by the kv_append kernel (a custom op that
    # mutates the caches); the torch index_put_ path is gone.
    assert not hasattr(kvcache, "_append")
    assert not hasattr(kvcache, "_check_values")
    kc = torch.empty(3, 1024, 8, 128, dtype=torch.bfloat16, device="meta")
    kn = torch.empty(3, 4, 8, 128, dtype=torch.bfloat16, device="meta")
    lengths = torch.empty(3, dtype=torch.int32, device="meta")
    assert torch.ops.flashfuse.kvcache_append(kc, kc, kn, kn, lengths,
                                              None) is None
    schema = torch.ops.flashfuse.kvcache_append.default._schema
    assert [a.name for a in schema.arguments if a.is_write] == [
        "k_cache", "v_cache"]


def test_custom_op_fake():
    q = torch.empty(3, 4, 32, 128, dtype=torch.bfloat16, device="meta")
    kc = torch.empty(3, 1024, 8, 128, dtype=torch.bfloat16, device="meta")
    lengths = torch.empty(3, dtype=torch.int32, device="meta")
    o, lse = torch.ops.flashfuse.attention_kvcache(
        q, kc, kc, lengths, None, 0, 2, 0.1, -1, -1, 0.0, 0)
    assert o.shape == (3, 4, 32, 128) and o.dtype == torch.bfloat16
    assert lse.shape == (3, 32, 4) and lse.dtype == torch.float32
    pages = torch.empty(100, 16, 8, 128, dtype=torch.bfloat16, device="meta")
    table = torch.empty(3, 64, dtype=torch.int32, device="meta")
    o, _ = torch.ops.flashfuse.attention_kvcache(
        q, pages, pages, lengths, table, 4, 0, 0.1, 64, 0, 30.0, 3)
    assert o.shape == (3, 4, 32, 128)


def test_index_tensors_are_aligned_for_the_kernels():
    from flashfuse._kvcache_ops import _aligned_index, _bhsd_strides
    t = torch.arange(40, dtype=torch.int32)
    assert _aligned_index(t) is t
    shifted = _aligned_index(t[1:])
    assert shifted.data_ptr() % 16 == 0 and torch.equal(shifted, t[1:])
    table = torch.arange(24, dtype=torch.int32).view(4, 6)
    assert _aligned_index(table) is table
    assert _aligned_index(table.t()).stride(-1) == 1
    # BSHD -> [b, h, s, d] strides, no copy.
    q = torch.empty(2, 3, 8, 64)
    assert _bhsd_strides(q) == (3 * 8 * 64, 64, 8 * 64, 1)


def test_bench_decode_arguments_and_table():
    from flashfuse import bench, bench_report
    args = bench.parse_args(["--decode", "--decode-layouts", "0", "64"])
    assert args.decode and args.decode_layouts == [0, 64]
    assert args.decode_methods == ["flashfuse", "sdpa", "sdpa-flash",
                                   "sdpa-cudnn"]
    assert bench.DECODE_SHAPES == ((16, 8, 8192), (4, 8, 65536),
                                   (64, 8, 2048), (1, 8, 131072), (1, 8, 512))
    assert args.decode_shapes == list(bench.DECODE_SHAPES)
    assert not args.decode_cold
    assert bench.parse_args(["--decode", "--decode-cold"]).decode_cold
    args = bench.parse_args(["--decode", "--decode-shapes", "2/8/1024",
                             "--decode-methods", "flashfuse",
                             "flashfuse-unsplit-graph"])
    assert args.decode_shapes == [(2, 8, 1024)]
    for bad in ("2/8", "2/0/1024", "a/8/1024"):
        with pytest.raises(SystemExit):
            bench.parse_args(["--decode", "--decode-shapes", bad])
    # Qwen2-7B's 28/4 heads: the throwaway shape takes 4 kv heads too
    # (it had 8, which 28 query heads do not fill evenly).
    args = bench.parse_args(["--decode", "--decode-heads-q", "28",
                             "--decode-shapes", "1/4/32768", "4/4/8192"])
    assert bench.decode_throwaway_shape(args) == (4, 4, 4096)
    for heads_q, shape in (("12", "1/8/4096"), ("0", "1/8/4096")):
        with pytest.raises(SystemExit):
            bench.parse_args(["--decode", "--decode-heads-q", heads_q,
                              "--decode-shapes", shape])
    # K and V of B=16, Hkv=8, 8k keys, D=128 in bf16.
    assert bench.decode_gb(16, 8, 8192, 128) == 2 * 16 * 8 * 8192 * 128 * 2 / 1e9
    row = dict(batch=16, heads_q=32, heads_kv=8, seqlen=8192, head_dim=128,
               dtype="bf16", ms=1.0, error=None)
    rows = [dict(row, page_size=64, method=m, gbps=g)
            for m, g in (("flashfuse", 3000.0), ("sdpa", 4000.0),
                         ("sdpa-flash", 3200.0))]
    rows.append(dict(row, page_size=64, method="sdpa-cudnn", gbps=None,
                     error="no kernel"))
    text = bench_report.decode_table(rows, bench.DECODE_METHODS)
    assert text.startswith("decode GB/s of K and V read (median)")
    # --decode-cold's rows (each step over caches not in L2) say so.
    cold = bench_report.decode_table([dict(r, copies=12) for r in rows],
                                     bench.DECODE_METHODS)
    assert cold.startswith("decode GB/s of K and V read, caches not in L2")
    line = [x for x in text.splitlines() if "page 64" in x][0]
    assert line.split()[-1] == "0.75" and "n/a" in line
    assert "sdpa-cudnn: no kernel" in text
    # ALiBi's methods: their own ratio, and out of the plain one.
    args = bench.parse_args(["--decode", "--decode-methods", "flashfuse",
                             "sdpa", "flashfuse-alibi", "sdpa-alibi"])
    assert args.decode_methods[2:] == ["flashfuse-alibi", "sdpa-alibi"]
    rows = [dict(row, page_size=0, method=m, gbps=g)
            for m, g in (("flashfuse", 4000.0), ("sdpa", 4000.0),
                         ("flashfuse-alibi", 3900.0), ("sdpa-alibi", 5200.0))]
    text = bench_report.decode_table(rows, args.decode_methods)
    head, line = text.splitlines()[1], text.splitlines()[3]
    assert head.split()[-2:] == ["ours/best", "alibi"]
    assert line.split()[-2:] == ["1.00", "0.75"]
    # A pool's method: against ours over the batch's own caches, and out
    # of the ratio to SDPA; a paged line has none.
    args = bench.parse_args(["--decode", "--decode-methods", "flashfuse",
                             "sdpa", "flashfuse-pool"])
    rows = [dict(row, page_size=0, method=m, gbps=g)
            for m, g in (("flashfuse", 4000.0), ("sdpa", 5000.0),
                         ("flashfuse-pool", 3960.0))]
    rows += [dict(row, page_size=16, method=m, gbps=g)
             for m, g in (("flashfuse", 3900.0), ("sdpa", 5000.0))]
    rows.append(dict(row, page_size=16, method="flashfuse-pool", gbps=None,
                     error="contiguous caches only"))
    lines = bench_report.decode_table(rows, args.decode_methods).splitlines()
    assert lines[1].split()[-2:] == ["ours/best", "pool"]
    assert lines[3].split()[-2:] == ["0.80", "0.99"]
    assert lines[4].split()[-2:] == ["0.78", "n/a"]


def test_bench_chunked_prefill_rows_in_tflops():
    from flashfuse import bench, bench_report
    args = bench.parse_args(["--decode", "--decode-sq", "512"])
    assert args.decode_sq == 512
    assert bench.parse_args(["--decode"]).decode_sq == 1
    row = dict(batch=4, heads_q=32, heads_kv=8, seqlen=8192, head_dim=128,
               dtype="bf16", ms=1.0, error=None, page_size=0, sq=512)
    rows = [dict(row, method=m, gbps=g, tflops=t)
            for m, g, t in (("flashfuse", 100.0, 300.0),
                            ("flashfuse-unsplit", 50.0, 60.0),
                            ("sdpa", 90.0, 200.0))]
    text = bench_report.decode_table(rows, ["flashfuse", "flashfuse-unsplit",
                                            "sdpa"])
    assert text.startswith("chunked prefill of 512 query rows")
    # TFLOP/s, not GB/s: 300 / 200.
    assert text.splitlines()[3].split()[-1] == "1.50"


def test_bench_decode_graph_ratio_compares_graphs_with_graphs():
    from flashfuse import bench, bench_report
    methods = bench.DECODE_METHODS + bench.DECODE_GRAPH_METHODS
    args = bench.parse_args(["--decode", "--decode-methods", *methods])
    assert args.decode_methods == list(methods)
    row = dict(batch=1, heads_q=64, heads_kv=8, seqlen=131072, head_dim=128,
               dtype="bf16", ms=1.0, error=None, page_size=0)
    gbps = {"flashfuse": 2000.0, "sdpa": 2500.0, "sdpa-flash": 2400.0,
            "sdpa-cudnn": 1000.0, "flashfuse-graph": 2900.0,
            "sdpa-graph": 3100.0}
    rows = [dict(row, method=m, gbps=g) for m, g in gbps.items()]
    text = bench_report.decode_table(rows, methods)
    head, line = text.splitlines()[1], text.splitlines()[3]
    assert head.split()[-2:] == ["ours/best", "graphs"]
    # Per-call flashfuse against per-call SDPA only (2000 / 2500), graphed
    # against graphed (2900 / 3100).
    assert line.split()[-2:] == ["0.80", "0.94"]
    with pytest.raises(SystemExit):
        bench.parse_args(["--decode", "--decode-methods", "ours-graph"])


def test_caches_are_never_copied():
    # A cache the kernels cannot read in place is an error, not a copy of
    # the whole cache per step.
    k = torch.zeros(2, 16, 4, 64, dtype=F16)
    kvcache._readable_in_place("k_cache", k)
    kvcache._readable_in_place("k_cache", k[:, :, :2])  # fewer heads: a view
    with pytest.raises(ValueError, match="contiguous in its last"):
        kvcache._readable_in_place("k_cache", k.transpose(-1, -2))
    with pytest.raises(ValueError, match="16-byte boundaries"):
        # Rows of 68 elements (136 bytes), of which D = 64 are used.
        kvcache._readable_in_place(
            "k_cache", torch.zeros(2, 16, 4, 68, dtype=F16)[..., :64])


def test_step_signatures():
    # The key under which an eager step's checks and launches are reused:
    # equal for another step of the same shapes, strides, dtypes, devices
    # and scalars; different where any of them differs; None where the
    # check reads values (CPU descales) or would reject a type.
    from flashfuse.kvcache import _step_key

    def key(q, k, lengths=None, window=(-1, -1), descale=None, **kw):
        return _step_key(q, k, k, lengths if lengths is not None
                         else torch.zeros(q.shape[0], dtype=torch.int32),
                         None, None, None, None, True, window, 0.0, 0,
                         descale, descale)

    q = torch.randn(2, 1, 8, 64)
    k = torch.randn(2, 16, 2, 64)
    assert key(q, k) == key(torch.randn_like(q), torch.randn_like(k))
    assert key(q, k, window=[4, 0]) == key(q, k, window=(4, 0))
    assert key(q, k) != key(q, torch.randn(2, 32, 2, 64)[:, :16])
    assert key(q, k) != key(q.half(), k.half())
    assert key(q, k, lengths=3) != key(q, k, lengths=4)
    assert key(q, k) != key(q, k, window=(4, 0))
    assert key([q], k, lengths=3) is None
    assert key(q, k, lengths=True) is None
    assert key(q, k, window=(4.0, 0)) is None
    assert key(q, k, descale=torch.ones(())) is None


def test_hf_lengths_are_computed_once_per_position_ids():
    # Every layer of a decoding step gets the same position_ids: the
    # lengths are computed once, and again when the contents, the tensor or
    # the batch change.
    from flashfuse.hf import _lengths_from_positions

    pos = torch.tensor([[7], [9]])
    first = _lengths_from_positions(pos, 2)
    assert first.dtype == torch.int32 and first.tolist() == [8, 10]
    assert _lengths_from_positions(pos, 2) is first
    pos += 1
    assert _lengths_from_positions(pos, 2).tolist() == [9, 11]
    assert _lengths_from_positions(torch.tensor([[3]]), 4).tolist() == [4] * 4
    assert _lengths_from_positions(pos, 2) is not first


def test_decode_tiles_for_grids_of_several_waves():
    # The library's tiles (133 KiB, one block an SM) unless the unsplit grid
    # runs two waves or more and another artifact's kernel of the variant
    # fits two blocks an SM (69 KiB against an H100's 228 KiB).
    from collections import namedtuple
    from flashfuse._kvcache_ops import WAVES_MIN, waves_kernel_dir
    info = namedtuple("Info", "block_m smem")
    infos = [("lib", info(16, 136192)), ("fp8", info(16, 136192)),
             ("waves", info(16, 70656))]
    sms, per_sm = 132, 233472

    def groups(batch, heads_kv=8, rows=4):
        return lambda block_m: batch * heads_kv * -(-rows // block_m)
    # One number with decode_splits.h, which flash-select-config applies.
    import re
    from conftest import ROOT
    header = (ROOT / "runtime" / "include" / "flashfuse" /
              "decode_splits.h").read_text()
    assert re.search(r"#define FLASHFUSE_DECODE_WAVES_MIN (\d+)",
                     header).group(1) == str(WAVES_MIN)
    # B = 64, Hkv = 8: 512 blocks, 3.9 waves.
    assert waves_kernel_dir(infos, groups(64), sms, per_sm) == "waves"
    # B = 33: 264 blocks, two waves exactly; B = 32: 256, one and a bit.
    assert waves_kernel_dir(infos, groups(33), sms, per_sm) == "waves"
    assert waves_kernel_dir(infos, groups(32), sms, per_sm) == "lib"
    # Nothing that fits twice, or a GPU that holds only one (L4: 100 KiB);
    # an A100 (164 KiB) holds two.
    assert waves_kernel_dir(infos[:2], groups(64), sms, per_sm) == "lib"
    assert waves_kernel_dir(infos, groups(64), 58, 102400) == "lib"
    assert waves_kernel_dir(infos, groups(64), 108, 167936) == "waves"
    # Unknown shared memory per SM: the default.
    assert waves_kernel_dir(infos, groups(64), sms, 0) == "lib"
    # The grid picks the class of tile whatever the search order: the waves
    # artifact listed first is still left for grids under two waves.
    first = infos[2:] + infos[:2]
    assert waves_kernel_dir(first, groups(32), sms, per_sm) == "lib"
    assert waves_kernel_dir(first, groups(64), sms, per_sm) == "waves"
    # Only tiles of the other class: the first.
    assert waves_kernel_dir(infos[2:], groups(1), sms, per_sm) == "waves"


def test_decode_tiles_of_eight_rows():
    # Kernels of block_m 8 (the rows as the products' n) where a launch's
    # packed rows fit 8, with their own tiles for grids of several waves;
    # the 16-row kernels otherwise, whatever the waves.
    from collections import namedtuple
    from flashfuse._kvcache_ops import decode_kernel_dir
    info = namedtuple("Info", "block_m smem")
    infos = [("lib", info(16, 136192)), ("rows8", info(8, 134144)),
             ("rows8-waves", info(8, 101376)), ("waves", info(16, 70656))]
    sms, per_sm = 132, 233472

    def groups(batch, heads_kv=8, rows=4):
        return lambda block_m: batch * heads_kv * -(-rows // block_m)
    # 32/8 heads, one token: 4 rows a kv head.
    assert decode_kernel_dir(infos, 4, groups(4), sms, per_sm) == "rows8"
    # The same with the artifacts searched in another order.
    assert decode_kernel_dir(infos[::-1], 4, groups(1), sms,
                             per_sm) == "rows8"
    assert decode_kernel_dir(infos[::-1], 4, groups(64), sms,
                             per_sm) == "rows8-waves"
    assert decode_kernel_dir(infos, 4, groups(64), sms,
                             per_sm) == "rows8-waves"
    # 64/8 heads: 8 rows, still one block of 8.
    assert decode_kernel_dir(infos, 8, groups(1, rows=8), sms,
                             per_sm) == "rows8"
    # 9 rows or more (speculative steps, G = 16): two blocks of 8 would
    # each read all of K and V; the 16-row kernels.
    assert decode_kernel_dir(infos, 9, groups(4, rows=9), sms,
                             per_sm) == "lib"
    assert decode_kernel_dir(infos, 16, groups(64, rows=16), sms,
                             per_sm) == "waves"
    # A forced split count (no grid to weigh): the first of the height.
    assert decode_kernel_dir(infos, 4, None, sms, per_sm) == "rows8"
    assert decode_kernel_dir(infos, 12, None, sms, per_sm) == "lib"
    # No kernel of 8 rows: the others, as before.
    assert decode_kernel_dir(infos[:1] + infos[3:], 4, groups(64), sms,
                             per_sm) == "waves"


def test_gen_suite_decode_rows8(opt_tool, tmp_path):
    # 24 and 14 D = 128 variants of block_m 8 (the left-padded ones last),
    # which parse and pass the decode verifier's tiles.
    import subprocess
    import sys
    from conftest import ROOT
    for flag, count, config in (
            ("--decode-rows8", 24, "block_m = 8, block_n = 128, warps = 4, "
                                   "stages = 2"),
            ("--decode-rows8-waves", 14, "block_m = 8, block_n = 64, "
                                         "warps = 4, stages = 3")):
        out = tmp_path / (flag[2:] + ".mlir")
        subprocess.run([sys.executable,
                        str(ROOT / "scripts" / "kernels" / "gen_suite.py"),
                        flag, "-o", str(out)], check=True)
        text = out.read_text()
        assert text.count("flash.attention_kvcache ") == count
        assert text.count("#flash.config<decode, " + config + ">") == count
        proc = subprocess.run([str(opt_tool), str(out)], capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stderr


def test_gen_suite_decode_waves(opt_tool, tmp_path):
    # 14 D = 128 variants (the two left-padded last) with the tiles written
    # into the op's config,
    # which parse; the tiles are checked where they are given.
    import subprocess
    import sys
    from conftest import ROOT
    from flashfuse.variants import KVCacheVariant, emit_kvcache
    out = tmp_path / "waves.mlir"
    subprocess.run([sys.executable,
                    str(ROOT / "scripts" / "kernels" / "gen_suite.py"),
                    "--decode-waves", "-o", str(out)], check=True)
    text = out.read_text()
    config = ("config = #flash.config<decode, block_m = 16, block_n = 64, "
              "warps = 4, stages = 2>")
    assert text.count("flash.attention_kvcache ") == 14
    assert text.count(config) == 14
    assert text.count("{causal = #flash.causal<bottom_right>, " + config) == 8
    assert text.count("cache_leftpad(") == 2
    assert text.count("block_table(") == 8
    proc = subprocess.run([str(opt_tool), str(out)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert "config" not in emit_kvcache(KVCacheVariant("kv", "bf16", 128))
    with pytest.raises(ValueError, match="four positive ints"):
        KVCacheVariant("kv", "bf16", 128, tiles=(16, 64, 4))
