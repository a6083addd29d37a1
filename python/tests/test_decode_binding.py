"""The decode (KV cache) side of the package without torch or a GPU: the
runtime's decode functions through ctypes (manifest kinds, page_size,
argument checks, split counts), the flash.attention_kvcache IR the variant
emitter writes, and the decode suite of scripts/kernels/gen_suite.py."""

import ctypes
import importlib.util
import subprocess
import sys

import pytest

from conftest import ROOT
from flashfuse import _runtime as rt_module
from flashfuse.variants import (KVCacheVariant, emit_kvcache, emit_module,
                                from_runtime)

DECODE_DIR = ROOT / "runtime" / "test" / "data" / "decode"
DECODE_FP8_DIR = ROOT / "runtime" / "test" / "data" / "decode-fp8"
GEN_SUITE = ROOT / "scripts" / "kernels" / "gen_suite.py"


def test_variant_struct_matches_the_c_layout():
    # flashfuse_variant: ten 4-byte fields, then page_size, out_f32,
    # varlen, out_dtype, block_sparse, sparse_block_q, sparse_block_k,
    # kv_dtype, descale_block_q, descale_block_k, leftpad, alibi and
    # batch_idx.
    assert ctypes.sizeof(rt_module.Variant) == 23 * 4
    assert rt_module.Variant.batch_idx.offset == 22 * 4
    assert rt_module.Variant.leftpad.offset == 20 * 4
    assert rt_module.Variant.alibi.offset == 21 * 4
    assert rt_module.Variant.kv_dtype.offset == 17 * 4
    assert rt_module.Variant.descale_block_k.offset == 19 * 4
    assert rt_module.Variant.page_size.offset == 10 * 4
    assert rt_module.Variant.out_f32.offset == 11 * 4
    assert rt_module.Variant.varlen.offset == 12 * 4
    assert rt_module.Variant.out_dtype.offset == 13 * 4
    assert rt_module.Variant.block_sparse.offset == 14 * 4
    assert rt_module.Variant.sparse_block_k.offset == 16 * 4
    # flashfuse_forward_args: out_f32 after seed, then the FP8 fields
    # and the per-block descale strides (runtime_test.cpp and fp8_test.cpp
    # assert the same size).
    assert ctypes.sizeof(rt_module.ForwardArgs) == 448
    assert rt_module.ForwardArgs.q_descale_stride_block.offset == 424
    assert rt_module.ForwardArgs.out_f32.offset == (
        rt_module.ForwardArgs.seed.offset + 8) == 344
    assert rt_module.ForwardArgs.out_dtype.offset == 348
    assert rt_module.ForwardArgs.q_descale.offset == 352
    assert rt_module.ForwardArgs.v_descale_stride.offset == 408
    assert rt_module.DecodeArgs.num_splits.offset == (
        rt_module.DecodeArgs.softcap.offset + 4)
    # The sizes runtime_test.cpp asserts of the C structs: the new rows'
    # pointers and strides last, after num_splits and its padding.
    assert ctypes.sizeof(rt_module.DecodeArgs) == 480
    assert rt_module.DecodeArgs.cache_leftpad.offset == 448
    assert rt_module.DecodeArgs.alibi_slopes.offset == 456
    assert rt_module.DecodeArgs.cache_batch_idx.offset == 464
    assert rt_module.DecodeArgs.cache_batch.offset == 472
    # An FP8 cache's fields after them.
    assert rt_module.DecodeArgs.kv_dtype.offset == 392
    assert rt_module.DecodeArgs.k_descale.offset == 400
    assert rt_module.DecodeArgs.v_descale.offset == 408
    assert rt_module.DecodeArgs.k_descale_stride.offset == 416
    assert rt_module.DecodeArgs.v_descale_stride.offset == 432
    assert rt_module.DecodeArgs.k_new.offset == 312
    assert rt_module.DecodeArgs.v_new.offset == 320
    assert rt_module.DecodeArgs.k_new_stride.offset == 328
    assert rt_module.DecodeArgs.v_new_stride.offset == 360


def test_decode_kinds_and_page_size(rt):
    m = rt.Manifest.open(DECODE_DIR)
    kernels = m.kernels()
    assert [k.variant.kind for k in kernels] == [
        rt.KIND_DECODE, rt.KIND_DECODE, rt.KIND_DECODE_COMBINE,
        rt.KIND_DECODE_COMBINE, rt.KIND_KV_APPEND, rt.KIND_KV_APPEND,
        rt.KIND_DECODE_CHECK, rt.KIND_DECODE_CHECK, rt.KIND_DECODE,
        rt.KIND_DECODE, rt.KIND_DECODE, rt.KIND_DECODE, rt.KIND_DECODE,
        rt.KIND_DECODE, rt.KIND_KV_APPEND, rt.KIND_DECODE_CHECK]
    # The last three decode kernels merge their own splits: split_counters
    # (cleared before each launch), split_arrivals (left at 0 by the
    # kernel), and the last in a thread-block cluster too (cluster_merge).
    assert ("memref", "split_counters") in m.params(8)
    assert ("memref", "split_arrivals") in m.params(9)
    assert ("memref", "split_arrivals") in m.params(10)
    assert ("memref", "split_counters") not in m.params(0)
    assert kernels[5].variant.describe() == (
        "kv_append bf16 D=64 Dv=64 causal=none page_size=16")
    assert kernels[6].variant.describe() == (
        "decode_check f16 D=128 Dv=128 causal=none")
    assert ("memref", "check_status") in m.params(7)
    assert ("i64", "k_new_stride_s") in m.params(4)
    assert kernels[0].variant.describe() == (
        "decode f16 D=128 Dv=128 causal=bottom_right")
    assert kernels[1].variant.describe() == (
        "decode bf16 D=64 Dv=64 causal=none window softcap page_size=16")
    assert ("memref", "block_table") in m.params(1)
    assert ("memref", "block_table") not in m.params(0)
    # The last is kernel 0 with ALiBi over [B, Hq] slopes.
    assert kernels[12].variant.alibi == 2 and kernels[0].variant.alibi == 0
    assert kernels[12].variant.describe() == (
        "decode f16 D=128 Dv=128 causal=bottom_right alibi=[B,Hq]")
    assert ("memref", "alibi_slopes") in m.params(12)
    assert ("memref", "alibi_slopes") not in m.params(0)
    from flashfuse import _kernels
    v = _kernels.make_variant(rt.KIND_DECODE, rt.DTYPE_BF16, 64, 64, 0,
                              window=True, softcap=True, page_size=16)
    assert m.find(v) == 1
    # Kernel 11 is kernel 0 over a left-padded cache (cache_leftpad).
    assert kernels[11].variant.describe() == (
        "decode f16 D=128 Dv=128 causal=bottom_right leftpad")
    assert ("memref", "cache_leftpad") in m.params(11)
    assert ("memref", "cache_leftpad") not in m.params(0)
    padded = _kernels.make_variant(rt.KIND_DECODE, rt.DTYPE_F16, 128, 128, 2,
                                   leftpad=True)
    assert m.find(padded) == 11
    # Kernels 13-15 are 0, 4 and 6 over a pool of sequences: found by the
    # variant's batch_idx, with the pool's params.
    for index, kind in ((13, rt.KIND_DECODE), (14, rt.KIND_KV_APPEND),
                        (15, rt.KIND_DECODE_CHECK)):
        assert kernels[index].variant.batch_idx == 1
        assert kernels[index].variant.describe().endswith(" pool")
        assert ("memref", "cache_batch_idx") in m.params(index)
        assert ("i32", "cache_batch") in m.params(index)
        pooled = _kernels.make_variant(
            kind, rt.DTYPE_F16, 128, 128, 2 if kind == rt.KIND_DECODE else 0,
            batch_idx=True)
        assert m.find(pooled) == index
    assert kernels[0].variant.batch_idx == 0
    v.page_size = 64
    from flashfuse.errors import KernelNotFoundError
    with pytest.raises(KernelNotFoundError, match="page_size=64"):
        m.find(v)


def test_manifest_stays_strict(rt):
    from flashfuse.errors import ManifestError
    head = "flashfuse-manifest 1\narch 90\nptx k.ptx\nkernel a\n"
    body = ("  dtype f16\n  head_dim 64\n  head_dim_v 64\n  block_m 64\n"
            "  block_n 64\n  threads 128\n  smem 0\n  causal none\n"
            "  params memref:q\n")
    with pytest.raises(ManifestError, match="'page_size' is for kinds "
                                            "decode, kv_append and "
                                            "decode_check only"):
        rt.Manifest.parse(head + "  kind forward\n  page_size 16\n" + body
                          + "end\n")
    with pytest.raises(ManifestError, match="unknown key 'num_splits'"):
        rt.Manifest.parse(head + "  kind decode\n  num_splits 2\n" + body
                          + "end\n")
    m = rt.Manifest.parse(head + "  kind decode\n  page_size 64\n" + body
                          + "end\n")
    assert m.kernels()[0].variant.page_size == 64


def _decode_args(rt, batch=4, capacity=65536):
    """f16 D=128, GQA 32/8, one query row over a contiguous BSHD cache."""
    a = rt.decode_args()
    assert (a.window_left, a.window_right, a.num_splits) == (-1, -1, 0)
    a.dtype = rt.DTYPE_F16
    a.q, a.k_cache, a.v_cache, a.o, a.lse, a.cache_seqlens = (
        0x1000000 * i for i in range(1, 7))
    a.batch, a.heads_q, a.heads_kv, a.seq_q = batch, 32, 8, 1
    a.head_dim = a.head_dim_v = 128
    a.cache_len = capacity
    a.q_stride[:] = a.o_stride[:] = (32 * 128, 128, 32 * 128, 1)
    a.k_stride[:] = a.v_stride[:] = (capacity * 8 * 128, 128, 8 * 128, 1)
    a.scale = 0.088
    return a


@pytest.mark.parametrize("batch, capacity, splits", [
    (16, 8192, 2), (4, 65536, 8), (64, 2048, 1), (1, 131072, 33)])
def test_split_counts_of_the_decode_shapes(rt, batch, capacity, splits):
    # 132 SMs (H100 SXM, H200), two decode blocks an SM.
    m = rt.Manifest.open(DECODE_DIR)
    got, nbytes = m.check_decode(0, 2, _decode_args(rt, batch, capacity),
                                 132, 2, 0x7000000, 1 << 40)
    assert got == splits
    rows = batch * 32
    want = 0 if splits == 1 else (-(-splits * rows * 128 * 4 // 256) * 256
                                  + splits * rows * 4)
    assert nbytes == want


def test_decode_argument_checks(rt):
    from flashfuse.errors import InvalidArgumentError
    m = rt.Manifest.open(DECODE_DIR)
    cases = [
        (lambda a: setattr(a, "dtype", rt.DTYPE_BF16), "inputs are bf16"),
        (lambda a: setattr(a, "heads_kv", 5), "not a multiple of heads_kv"),
        (lambda a: setattr(a, "seq_q", 70000),
         "70000 query rows exceed the cache's capacity 65536"),
        (lambda a: setattr(a, "page_size", 16),
         "describe a paged cache with page_size 16"),
        (lambda a: setattr(a, "cache_seqlens", 0),
         "'cache_seqlens' is a null pointer"),
        (lambda a: setattr(a, "softcap", 5.0), "softcap was requested"),
    ]
    for edit, message in cases:
        a = _decode_args(rt)
        edit(a)
        with pytest.raises(InvalidArgumentError, match=message):
            m.check_decode(0, 2, a, 132, 2, 0x7000000, 1 << 40)
    with pytest.raises(InvalidArgumentError,
                       match="8 splits need a workspace of"):
        m.check_decode(0, 2, _decode_args(rt), 132, 2)


def _with_new_rows(a, snew):
    """_decode_args plus k_new/v_new [B, Snew, Hkv, D] (flash-attn's
    layout, through [b, h, t, d] strides)."""
    a.seq_new = snew
    a.k_new, a.v_new = 0x9000000, 0xa000000
    a.k_new_stride[:] = a.v_new_stride[:] = (snew * 8 * 128, 128, 8 * 128, 1)
    return a


def test_append_argument_checks(rt):
    from flashfuse.errors import InvalidArgumentError
    m = rt.Manifest.open(DECODE_DIR)
    m.check_append(4, _with_new_rows(_decode_args(rt), 4))
    m.check_append(4, _decode_args(rt))  # no new rows: nothing to launch
    a = rt.decode_args()
    assert (a.k_new, a.v_new) == (None, None)
    assert tuple(a.k_new_stride) == (0, 0, 0, 0)
    cases = [
        (lambda a: setattr(a, "k_new", None), "'k_new' is a null pointer"),
        (lambda a: a.v_new_stride.__setitem__(2, 12),
         "'v_new' stride 12 in dimension 2 is not a multiple of 8"),
        (lambda a: setattr(a, "seq_new", 70000),
         "seq_new = 70000 new rows exceed the cache's capacity 65536"),
        (lambda a: setattr(a, "page_size", 16),
         "describe a paged cache with page_size 16"),
    ]
    for edit, message in cases:
        a = _with_new_rows(_decode_args(rt), 2)
        edit(a)
        with pytest.raises(InvalidArgumentError, match=message):
            m.check_append(4, a)
    with pytest.raises(InvalidArgumentError, match="not a kv_append kernel"):
        m.check_append(0, _with_new_rows(_decode_args(rt), 2))


def test_device_check_arguments_and_verdicts(rt):
    from flashfuse.errors import FlashFuseError, InvalidArgumentError
    m = rt.Manifest.open(DECODE_DIR)
    m.check_device_check(6, _decode_args(rt), 0xb000000)
    with pytest.raises(InvalidArgumentError,
                       match="the status buffer is a null pointer"):
        m.check_device_check(6, _decode_args(rt), None)
    with pytest.raises(InvalidArgumentError,
                       match="'check_status' at 0xb000004 is not 16-byte "
                             "aligned"):
        m.check_device_check(6, _decode_args(rt), 0xb000004)
    with pytest.raises(InvalidArgumentError, match="not a decode_check"):
        m.check_device_check(4, _decode_args(rt), 0xb000000)
    # The messages of each status the kernel writes (capacity 65536).
    a = _with_new_rows(_decode_args(rt), 1)
    assert rt.decode_check_status((0, 0, 0, 0), a) is None
    with pytest.raises(InvalidArgumentError,
                       match=r"cache_seqlens\[3\] = 70000 plus 1 new rows "
                             "exceeds the cache capacity 65536"):
        rt.decode_check_status((2, 3, 70000, 0), a)
    with pytest.raises(InvalidArgumentError,
                       match=r"cache_seqlens\[2\] = -5 is negative"):
        rt.decode_check_status((1, 2, -5, 0), a)
    a.page_size, a.num_pages, a.max_pages = 16, 1024, 64
    with pytest.raises(InvalidArgumentError,
                       match=r"block_table\[1\]\[7\] = 9000 is outside "
                             r"\[0, 1024\)"):
        rt.decode_check_status((3, 1, 9000, 7), a)
    # A pool's rows (a kernel of variant batch_idx 1).
    a.cache_batch = 8
    with pytest.raises(InvalidArgumentError,
                       match=r"cache_batch_idx\[2\] = 9 is outside the pool "
                             r"\[0, 8\)"):
        rt.decode_check_status((4, 2, 9, 0), a)
    with pytest.raises(InvalidArgumentError,
                       match=r"cache_batch_idx\[3\] = 6 is also "
                             r"cache_batch_idx\[1\]"):
        rt.decode_check_status((5, 3, 6, 1), a)
    with pytest.raises(FlashFuseError, match="status code 6"):
        rt.decode_check_status((6, 0, 0, 0), a)


def test_append_and_check_functions_are_bound(rt):
    from flashfuse.errors import InvalidArgumentError
    args = _decode_args(rt)
    with pytest.raises(InvalidArgumentError,
                       match="kv_append kernel and arguments must not be "
                             "NULL"):
        rt.kvcache_append(None, args, 0)
    with pytest.raises(InvalidArgumentError,
                       match="decode_check kernel and arguments must not be "
                             "NULL"):
        rt.decode_check_on_device(None, args, 0, 0)


# ---- the flash.attention_kvcache emitter ------------------------------------

def test_kvcache_ir_text():
    text = emit_kvcache(KVCacheVariant("v", "bf16", 128,
                                       causal="bottom_right"))
    assert ("%o, %lse = flash.attention_kvcache %q, %k, %v, %lens "
            "{causal = #flash.causal<bottom_right>} : "
            "tensor<1x16x1x128xbf16>, tensor<1x1x4096x128xbf16>, "
            "tensor<1x1x4096x128xbf16>, tensor<1xi32> -> "
            "tensor<1x16x1x128xbf16>, tensor<1x16x1xf32>") in text
    paged = emit_kvcache(KVCacheVariant("p", "f16", 64, window=(64, 0),
                                        softcap=30.0, page_size=16))
    assert ("flash.attention_kvcache %q, %k, %v, %lens "
            "block_table(%bt : tensor<1x256xi32>) {window_left = 64 : i64, "
            "window_right = 0 : i64, softcap = 30.0 : f32} : "
            "tensor<1x16x1x64xf16>, tensor<256x16x1x64xf16>, "
            "tensor<256x16x1x64xf16>, tensor<1xi32> -> ") in paged
    assert "func.func @p(" in paged and "%bt: tensor<1x256xi32>" in paged


@pytest.mark.parametrize("kwargs, message", [
    (dict(causal="top_left"), "causal"),
    (dict(page_size=48), "page_size"),
    (dict(page_size=-16), "page_size"),
    (dict(dtype="f32"), "dtype"),
    (dict(window=(1, -2)), "window"),
])
def test_invalid_kvcache_variants(kwargs, message):
    args = dict(name="v", dtype="f16", head_dim=64)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        KVCacheVariant(**args)


def test_runtime_decode_variants_map_to_kvcache_ops():
    rt = rt_module
    v, backward = from_runtime(rt.Variant(rt.KIND_DECODE, rt.DTYPE_BF16, 128,
                                          128, rt.CAUSAL_BOTTOM_RIGHT, 1, 1,
                                          0, 0, 0, 64))
    assert not backward and isinstance(v, KVCacheVariant)
    assert v.name == "kv_bf16_d128_bottom_right_window_softcap_page64"
    assert (v.page_size, v.causal, v.window, v.softcap) == (
        64, "bottom_right", (0, 0), 1.0)
    combine, _ = from_runtime(rt.Variant(rt.KIND_DECODE_COMBINE, rt.DTYPE_F16,
                                         64, 64, 0, 0, 0, 0, 0, 0, 0))
    assert "flash.attention_kvcache" in emit_module([combine])
    # kv_append and decode_check come with every decode kernel of their
    # dtype, head dim and page size.
    for kind in (rt.KIND_KV_APPEND, rt.KIND_DECODE_CHECK):
        aux, backward = from_runtime(rt.Variant(kind, rt.DTYPE_BF16, 128, 128,
                                                0, 0, 0, 0, 0, 0, 16))
        assert not backward and aux.page_size == 16 and aux.head_dim == 128
        assert "block_table(%bt" in emit_module([aux])
    with pytest.raises(ValueError, match="no flash.attention_kvcache"):
        from_runtime(rt.Variant(rt.KIND_DECODE, rt.DTYPE_F16, 64, 64,
                                rt.CAUSAL_TOP_LEFT, 0, 0, 0, 0, 0, 0))


def test_on_demand_job_emits_the_kvcache_op(tmp_path, monkeypatch):
    from flashfuse import _compile
    monkeypatch.setenv("FLASHFUSE_CACHE_DIR", str(tmp_path))
    fake = tmp_path / "flashfuse-compile"
    fake.write_text("#!/bin/sh\n")
    rt = rt_module
    v = rt.Variant(rt.KIND_DECODE, rt.DTYPE_F16, 128, 128,
                   rt.CAUSAL_BOTTOM_RIGHT, 0, 0, 0, 0, 0, 16)
    job = _compile.Job(v, "h100", str(fake))
    assert job.mlir.startswith("// flashfuse on-demand kernel: "
                               "flash.attention_kvcache kv_f16_d128_")
    assert "block_table(%bt" in job.mlir
    # The page size is part of the cache entry.
    v.page_size = 64
    assert _compile.Job(v, "h100", str(fake)).directory != job.directory


def _gen_suite():
    spec = importlib.util.spec_from_file_location("gen_suite", GEN_SUITE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gen_suite_decode(tmp_path):
    gen = _gen_suite()
    suite = gen.decode_suite()
    names = [v.name for v in suite]
    assert len(names) == len(set(names)) == 82
    assert {v.page_size for v in suite} == {0, 16, 64}
    assert {v.head_dim for v in suite} == {32, 64, 96, 128, 256}
    assert any(v.window for v in suite) and any(v.softcap for v in suite)
    # Gemma-2's D = 256 decoding step (causal, softcap), then the
    # left-padded steps (cache_leftpad) last, so the kernels before them
    # keep their place.
    assert [(v.dtype, v.head_dim, v.softcap, v.causal, v.page_size)
            for v in suite[-14:-10]] == [
        (dt, 256, 30.0, "bottom_right", page)
        for dt in ("f16", "bf16") for page in (0, 16)]
    assert [(v.dtype, v.head_dim, v.softcap, v.causal, v.page_size)
            for v in suite[-10:]] == [
        (dt, d, cap, "bottom_right", 0) for dt in ("f16", "bf16")
        for d, cap in ((64, None), (128, None), (256, None), (128, 30.0),
                       (256, 30.0))]
    assert [v.leftpad for v in suite].index(True) == 72
    assert "cache_leftpad(%lp : tensor<1xi32>)" in emit_module(suite[-1:])
    out = tmp_path / "decode.mlir"
    subprocess.run([sys.executable, str(GEN_SUITE), "--decode", "-o",
                    str(out)], check=True)
    assert out.read_text().endswith(emit_module(suite))
    bad = subprocess.run([sys.executable, str(GEN_SUITE), "--decode",
                          "--backward", "-o", str(out)], capture_output=True,
                         text=True)
    assert bad.returncode != 0 and "separate suites" in bad.stderr


def test_kvcache_suite_parses(opt_tool):
    """Runs once flashfuse-opt knows flash.attention_kvcache (the dialect's
    side of docs/KVCACHE.md)."""
    text = emit_module(_gen_suite().decode_suite())
    proc = subprocess.run([str(opt_tool), "-"], input=text,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("flash.attention_kvcache") == 82


def test_launch_functions_are_bound(rt):
    """attention_decode and decode_workspace_bytes reach the library (their
    signatures resolve, and the runtime's own NULL checks answer)."""
    from flashfuse.errors import InvalidArgumentError
    lib = rt.library()
    assert len(lib.flashfuse_attention_decode.argtypes) == 6
    assert len(lib.flashfuse_decode_workspace_bytes.argtypes) == 5
    args = _decode_args(rt)
    with pytest.raises(InvalidArgumentError,
                       match="decode kernel and arguments must not be NULL"):
        rt.attention_decode(None, None, args, None, 0, 0)
    with pytest.raises(InvalidArgumentError,
                       match="decode kernel and arguments must not be NULL"):
        rt.decode_workspace_bytes(None, None, args)



def test_plan_functions_are_bound(rt):
    """The decode plan's entry points reach the library with the C layout
    of flashfuse_decode_addresses (12 pointers, a size and three
    pointers), and the runtime's own NULL checks answer
    (runtime/test/decode_plan_test.cpp checks the launches of plans)."""
    import re
    from flashfuse.errors import InvalidArgumentError
    lib = rt.library()
    header = (ROOT / "runtime/include/flashfuse/runtime.h").read_text()
    body = re.search(r"typedef struct flashfuse_decode_addresses \{(.*?)\}",
                     header, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)  # the comments
    assert tuple(re.findall(r"(\w+);", body)) == rt.DECODE_ADDRESS_FIELDS
    assert body.count("*") == 15 and "size_t workspace_bytes" in body
    packed = rt.decode_addresses(q=1, o=4, workspace=12, workspace_bytes=13,
                                 cache_leftpad=14, alibi_slopes=15,
                                 cache_batch_idx=16)
    assert len(packed) == 16 * 8
    assert packed == b"".join(n.to_bytes(8, sys.byteorder) for n in (
        1, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 12, 13, 14, 15, 16))
    assert rt.unpack_decode_addresses(packed) == (
        1, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 12, 13, 14, 15, 16)
    with pytest.raises(TypeError, match="no field"):
        rt.decode_addresses(queries=1)
    args = _decode_args(rt)
    with pytest.raises(InvalidArgumentError,
                       match="decode kernel and arguments must not be NULL"):
        rt.DecodePlan(None, None, args)
    with pytest.raises(InvalidArgumentError,
                       match="the plan and the addresses must not be NULL"):
        rt.check(lib.flashfuse_decode_plan_launch(
            None, rt.decode_addresses(), None))
    with pytest.raises(InvalidArgumentError, match="the plan is NULL"):
        rt.check(lib.flashfuse_decode_plan_info(None, None, None))
    lib.flashfuse_decode_plan_destroy(None)  # ignored

# ---- an FP8 (e4m3) cache (docs/KVCACHE.md "FP8 cache") --------------------

def _fp8_args(rt, capacity=4096):
    """Kernel 0 of decode-fp8: bf16 queries, an e4m3 cache (strides in
    bytes), descales [B, Hkv]."""
    a = _decode_args(rt, 3, capacity)
    a.dtype = rt.DTYPE_BF16
    a.kv_dtype = rt.DTYPE_E4M3
    a.k_descale, a.v_descale = 0x8000000, 0x8001000
    a.k_descale_stride[:] = a.v_descale_stride[:] = (8, 1)
    return a


def test_fp8_cache_kernels_are_told_apart(rt):
    from flashfuse import _kernels
    m = rt.Manifest.open(DECODE_FP8_DIR)
    kernels = m.kernels()
    assert [k.variant.kv_dtype for k in kernels] == [
        rt.DTYPE_E4M3, rt.DTYPE_E4M3, 0, rt.DTYPE_E4M3, 0]
    assert "kv=e4m3" in kernels[0].variant.describe()
    v = _kernels.make_variant(rt.KIND_DECODE, rt.DTYPE_BF16, 128, 128,
                              rt.CAUSAL_BOTTOM_RIGHT)
    assert v.kv_dtype == 0 and m.find(v) == 2
    v = _kernels.make_variant(rt.KIND_DECODE, rt.DTYPE_BF16, 128, 128,
                              rt.CAUSAL_BOTTOM_RIGHT, kv_dtype=rt.DTYPE_E4M3)
    assert m.find(v) == 0
    paged = _kernels.make_variant(rt.KIND_DECODE, rt.DTYPE_F16, 64, 64,
                                  page_size=16, kv_dtype=rt.DTYPE_E4M3)
    assert m.find(paged) == 1
    # The appends too: 3 quantises into an e4m3 cache, 4 copies 16-bit rows.
    append = _kernels.make_variant(rt.KIND_KV_APPEND, rt.DTYPE_BF16, 128, 128)
    assert m.find(append) == 4
    append = _kernels.make_variant(rt.KIND_KV_APPEND, rt.DTYPE_BF16, 128, 128,
                                   kv_dtype=rt.DTYPE_E4M3)
    assert m.find(append) == 3
    # The 16-bit decode sample has no kv_dtype anywhere.
    assert all(k.variant.kv_dtype == 0
               for k in rt.Manifest.open(DECODE_DIR).kernels())


def test_fp8_cache_arguments_bind(rt):
    m = rt.Manifest.open(DECODE_FP8_DIR)
    a = _fp8_args(rt)
    a.num_splits = 1
    assert m.check_decode(0, -1, a, 132, 2) == (1, 0)
    a.num_splits = 3
    splits, nbytes = m.check_decode(0, -1, a, 132, 2, 0x7000000, 1 << 30)
    assert splits == 3 and nbytes > 0
    a.k_descale_stride[:] = a.v_descale_stride[:] = (0, 0)  # per tensor
    m.check_decode(0, -1, a, 132, 2, 0x7000000, 1 << 30)


def test_fp8_cache_argument_checks(rt):
    from flashfuse.errors import InvalidArgumentError
    m = rt.Manifest.open(DECODE_FP8_DIR)
    cases = [
        (0, lambda a: setattr(a, "kv_dtype", 0),
         "describe a bf16 cache but the kernel was compiled for an e4m3"),
        (0, lambda a: setattr(a, "k_descale", None),
         "'k_descale' is a null pointer"),
        (0, lambda a: setattr(a, "v_descale", None),
         "'v_descale' is a null pointer"),
        (2, lambda a: setattr(a, "kv_dtype", 0),
         "k_descale/v_descale were given for a 16-bit cache"),
        (2, lambda a: None,
         "describe an e4m3 \\(FP8\\) cache but the kernel was compiled for "
         "a bf16 cache"),
        (0, lambda a: a.k_stride.__setitem__(2, 8 * 128 + 8),
         "'k_cache' stride 1032 in dimension 2 is not a multiple of 16"),
        (0, lambda a: setattr(a, "v_cache", 0x3000008),
         "the FP8 cache 'v_cache' at 0x3000008 is not 16-byte aligned"),
        (0, lambda a: a.v_descale_stride.__setitem__(0, -1),
         "'v_descale' has a negative stride"),
    ]
    for index, edit, message in cases:
        a = _fp8_args(rt)
        edit(a)
        with pytest.raises(InvalidArgumentError, match=message):
            m.check_decode(index, -1, a, 132, 2, 0x7000000, 1 << 30)


def test_fp8_cache_append_arguments(rt):
    # Kernel 3 quantises new rows into the e4m3 cache of kernel 0: it binds
    # the descales by name (per head and per tensor) and checks them, and
    # the cache's dtype, as the decode does.
    from flashfuse.errors import InvalidArgumentError
    m = rt.Manifest.open(DECODE_FP8_DIR)
    m.check_append(3, _with_new_rows(_fp8_args(rt), 1))
    a = _with_new_rows(_fp8_args(rt), 4)
    a.k_descale_stride[:] = a.v_descale_stride[:] = (0, 0)
    m.check_append(3, a)
    cases = [
        (3, lambda a: setattr(a, "kv_dtype", 0),
         "describe a bf16 cache but the kernel was compiled for an e4m3"),
        (3, lambda a: setattr(a, "k_descale", None),
         "'k_descale' is a null pointer"),
        (3, lambda a: a.k_descale_stride.__setitem__(1, -1),
         "'k_descale' has a negative stride"),
        (3, lambda a: setattr(a, "v_cache", 0x3000008),
         "the FP8 cache 'v_cache' at 0x3000008 is not 16-byte aligned"),
        (3, lambda a: setattr(a, "dtype", rt.DTYPE_F16),
         "inputs are f16 but the kernel was compiled for bf16"),
        (4, lambda a: None,
         "describe an e4m3 \\(FP8\\) cache but the kernel was compiled for "
         "a bf16 cache"),
    ]
    for index, edit, message in cases:
        a = _with_new_rows(_fp8_args(rt), 2)
        edit(a)
        with pytest.raises(InvalidArgumentError, match=message):
            m.check_append(index, a)


def test_fp8_cache_kernels_compile_on_demand_from_sm89(rt):
    # Like any variant where flashfuse-compile is found; below sm_89 the
    # e4m3 conversions are missing, and the message says so.
    from flashfuse import _compile, _kernels
    v = _kernels.make_variant(rt.KIND_DECODE, rt.DTYPE_F16, 64, 64,
                              kv_dtype=rt.DTYPE_E4M3)
    with pytest.raises(_compile.Unavailable,
                       match="an FP8 \\(e4m3\\) KV cache need sm_89 or later "
                             "\\(an L4, H100 or H200\\); this GPU is sm_80"):
        _compile.artifact_for(v, (8, 0))


def test_fp8_cache_append_variant_maps_to_an_fp8_kvcache_op(rt):
    from flashfuse import _kernels
    v = _kernels.make_variant(rt.KIND_KV_APPEND, rt.DTYPE_BF16, 128, 128,
                              page_size=16, kv_dtype=rt.DTYPE_E4M3)
    kv, backward = from_runtime(v)
    assert not backward and kv.kv_dtype == "e4m3" and kv.page_size == 16
    assert kv.name == "kvf8_bf16_d128_append_page16"
    v16 = _kernels.make_variant(rt.KIND_KV_APPEND, rt.DTYPE_BF16, 128, 128)
    assert from_runtime(v16)[0].kv_dtype == ""


def test_fp8_cache_variant_maps_to_an_fp8_kvcache_op(rt):
    from flashfuse import _kernels
    v = _kernels.make_variant(rt.KIND_DECODE, rt.DTYPE_BF16, 128, 128,
                              rt.CAUSAL_BOTTOM_RIGHT, page_size=16,
                              kv_dtype=rt.DTYPE_E4M3)
    kv, backward = from_runtime(v)
    assert not backward and kv.kv_dtype == "e4m3"
    assert kv.name.startswith("kvf8_bf16_d128")
    assert "f8E4M3FN" in emit_kvcache(kv)
    v.kv_dtype = 0
    assert from_runtime(v)[0].kv_dtype == ""
