"""attention_with_kvcache's cache_batch_idx (flash.attention_kvcache's
cache_batch_idx operand: contiguous caches holding a pool of sequences)
without a GPU: the argument checks, the runtime variant of each kind and
its op, the on-demand kernels (compiled by the built flashfuse-compile:
found by the runtime's lookup, taking the pool's params), the custom ops'
schemas and the step key, and the dry run of the GPU check script. The
CPU numerics are the lit suite's (test/Integration/CPU/
kvcache-batch-idx.mlir); the GPU's are test_pool_kvcache_gpu.py's and
scripts/kernels/check_pool_decode.py's."""

import pathlib

import pytest

torch = pytest.importorskip("torch")  # the wheel's test venv has none

import flashfuse  # noqa: E402
from conftest import kernel_script  # noqa: E402
from flashfuse import _compile, _kernels, variants  # noqa: E402
from flashfuse import _runtime as rt  # noqa: E402
from flashfuse.errors import KernelNotFoundError  # noqa: E402

F16 = torch.float16
NAME = "flashfuse.attention_with_kvcache"


def pool(b=2, bc=5, hq=8, hkv=2, d=64, smax=128):
    q = torch.zeros(b, 1, hq, d, dtype=F16)
    k = torch.zeros(bc, smax, hkv, d, dtype=F16)
    return q, k, torch.zeros_like(k)


def call(*args, **kwargs):
    return flashfuse.attention_with_kvcache(*args, **kwargs)


def test_the_pool_replaces_the_batch_of_the_caches():
    """A pool of 5 caches for a batch of 2 passes every check before the
    device's (this machine has none); without the indices the caches'
    batch must be q's, and the message says what a pool needs."""
    q, k, v = pool()
    idx = torch.tensor([4, 0], dtype=torch.int32)
    with pytest.raises(ValueError, match="runs on CUDA tensors; q is on cpu"):
        call(q, k, v, 3, cache_batch_idx=idx)
    with pytest.raises(ValueError, match="k_cache has batch 5 but q has 2 "
                       r"\(a paged cache needs its block_table, a pool of "
                       "sequences its cache_batch_idx\\)"):
        call(q, k, v, 3)
    # A pool smaller than the batch (sequences sharing a row) is a pool too.
    q3 = torch.zeros(3, 1, 8, 64, dtype=F16)
    with pytest.raises(ValueError, match="runs on CUDA tensors"):
        call(q3, k[:1], v[:1], 3,
             cache_batch_idx=torch.zeros(3, dtype=torch.int32))


@pytest.mark.parametrize("idx, error, message", [
    ([4, 0], TypeError, "cache_batch_idx must be an int32 tensor"),
    (torch.tensor([4, 0]), TypeError,
     "cache_batch_idx must be int32, got torch.int64"),
    (torch.tensor([4], dtype=torch.int32), ValueError,
     r"cache_batch_idx must be \[B=2\], got \(1,\)"),
    (torch.tensor([[4, 0]], dtype=torch.int32), ValueError,
     r"cache_batch_idx must be \[B=2\]"),
])
def test_bad_indices(idx, error, message):
    q, k, v = pool()
    with pytest.raises(error, match=message):
        call(q, k, v, 3, cache_batch_idx=idx)


def test_refused_combinations():
    q, k, v = pool()
    idx = torch.tensor([4, 0], dtype=torch.int32)
    with pytest.raises(ValueError, match=f"{NAME}: the pool of caches is "
                       r"empty \(Bc = 0\)"):
        call(q, k[:0], v[:0], 0, cache_batch_idx=idx)
    pages = torch.zeros(10, 16, 2, 64, dtype=F16)
    table = torch.zeros(2, 4, dtype=torch.int32)
    with pytest.raises(ValueError, match="cache_batch_idx is for a "
                       "contiguous cache"):
        call(q, pages, pages, 3, block_table=table, cache_batch_idx=idx)
    # With rotary tables, the pool is checked before the tables.
    kn = torch.zeros(2, 1, 2, 64, dtype=F16)
    table = torch.zeros(128, 16, dtype=F16)
    with pytest.raises(ValueError, match="runs on CUDA tensors"):
        call(q, k, v, 3, kn, kn, rotary_cos=table, rotary_sin=table,
             cache_batch_idx=idx)
    with pytest.raises(TypeError, match="cache_batch_idx must be int32"):
        call(q, k, v, 3, kn, kn, rotary_cos=table, rotary_sin=table,
             cache_batch_idx=idx.long())


def test_runtime_variants_round_trip():
    """Each kind's runtime variant says `pool` and maps back to an op with
    the cache_batch_idx operand over a pool of two caches for one
    sequence."""
    for kind in (rt.KIND_DECODE, rt.KIND_KV_APPEND, rt.KIND_DECODE_CHECK):
        v = _kernels.make_variant(kind, rt.DTYPE_BF16, 128, 128,
                                  2 if kind == rt.KIND_DECODE else 0,
                                  batch_idx=True)
        assert v.batch_idx == 1 and v.describe().endswith(" pool")
        kv = variants.from_runtime(v)[0]
        assert kv.batch_idx and kv.name.endswith("pool")
        ir = variants.emit_kvcache(kv)
        assert "cache_batch_idx(%bidx : tensor<1xi32>)" in ir
        assert "%k: tensor<2x1x4096x128xbf16>" in ir
    plain = variants.from_runtime(_kernels.make_variant(
        rt.KIND_DECODE, rt.DTYPE_BF16, 128, 128, 2))[0]
    assert not plain.batch_idx
    assert "cache_batch_idx" not in variants.emit_kvcache(plain)
    with pytest.raises(ValueError, match="batch_idx is for a contiguous"):
        variants.KVCacheVariant("x", "f16", 64, page_size=16, batch_idx=True)


def test_compiled_on_demand(compile_tool, monkeypatch, tmp_path):
    """The decode, kv_append and decode_check kernels of a pool, compiled
    where no artifact has them: one compile holds all three, each found by
    its variant (and the plain kernels not by the pool's), each taking the
    indices and the pool's size last."""
    monkeypatch.setenv("FLASHFUSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLASHFUSE_COMPILE", str(compile_tool))
    decode = _kernels.make_variant(rt.KIND_DECODE, rt.DTYPE_F16, 128, 128,
                                   2, batch_idx=True)
    directory = _compile.artifact_for(decode, (9, 0))
    manifest = (pathlib.Path(directory) / "manifest.txt").read_text()
    assert manifest.count("  batch_idx 1\n") == 3
    assert manifest.count("memref:cache_batch_idx i32:cache_batch\n") == 3
    m = rt.Manifest.open(directory)
    for kind in (rt.KIND_DECODE, rt.KIND_KV_APPEND, rt.KIND_DECODE_CHECK):
        v = _kernels.make_variant(kind, rt.DTYPE_F16, 128, 128,
                                  2 if kind == rt.KIND_DECODE else 0,
                                  batch_idx=True)
        assert _kernels.has_kernel(v, directory)
        index = m.find(v)
        assert ("memref", "cache_batch_idx") in m.params(index)
        v.batch_idx = 0
        assert not _kernels.has_kernel(v, directory)


def test_check_script_dry_run(compile_tool, monkeypatch, tmp_path):
    """scripts/kernels/check_pool_decode.py (the GPU check of the pool's
    steps, which has no compiler there) finds every kernel it launches
    among those its --compile builds, and the runtime takes the arguments
    the package gives them: two of its cases compiled for h100 here, each
    of their steps dry-run on the CPU (the check's, the append's and the
    decode's arguments over the pool, then the plain step's over the
    gathered caches, against the kernels' manifest entries). A case not
    compiled is a kernel not found, not compiled on the way."""
    script = kernel_script("check_pool_decode")
    monkeypatch.setenv("FLASHFUSE_COMPILE", str(compile_tool))
    monkeypatch.setenv("FLASHFUSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FLASHFUSE_KERNEL_DIR", str(tmp_path / "h100"))
    cases = [script.CASES[8], script.CASES[14]]  # new rows; a window
    script.compile_all(str(tmp_path), cases)
    gen = torch.Generator().manual_seed(0)
    runs = script.runs(cases, script.HEADS)
    # B - Bc: pools larger than the batch, of its size, smaller.
    assert {len(idx) - bc for _, (bc, idx, _), _ in runs} == {-2, 0, 1}
    for case, slots, heads in runs:
        result = script.dry_run_case(case, slots, heads, gen)
        assert result["ok"], result
    with pytest.raises(KernelNotFoundError, match="no compiled kernel for "
                       "'decode_check bf16 D=64 Dv=64 causal=none pool'"):
        script.dry_run_case(script.CASES[0], script.POOLS[0],
                            script.HEADS[0], gen)


def test_custom_ops_take_the_indices_last():
    """flashfuse::attention_kvcache's and kvcache_append's schemas end with
    the optional indices, and the decode's fake gives the batch's
    shapes, not the pool's."""
    from flashfuse import ops  # noqa: F401  (registers the ops)
    q = torch.empty(3, 1, 32, 128, dtype=torch.bfloat16, device="meta")
    kc = torch.empty(7, 1024, 8, 128, dtype=torch.bfloat16, device="meta")
    lengths = torch.empty(3, dtype=torch.int32, device="meta")
    idx = torch.empty(3, dtype=torch.int32, device="meta")
    o, lse = torch.ops.flashfuse.attention_kvcache(
        q, kc, kc, lengths, None, 0, 2, 0.1, -1, -1, 0.0, 0, None, None,
        None, None, idx)
    assert o.shape == (3, 1, 32, 128) and lse.shape == (3, 32, 1)
    for op in (torch.ops.flashfuse.attention_kvcache,
               torch.ops.flashfuse.kvcache_append):
        assert "Tensor? cache_batch_idx=None)" in str(op.default._schema)


def test_step_signatures_tell_pools_apart():
    from flashfuse.kvcache import _step_key

    def key(idx, caches=5):
        k = torch.randn(caches, 16, 2, 64)
        return _step_key(q, k, k, torch.zeros(2, dtype=torch.int32), None,
                         None, None, None, True, (-1, -1), 0.0, 0, None,
                         None, None, None, idx)

    q = torch.randn(2, 1, 8, 64)
    idx = torch.zeros(2, dtype=torch.int32)
    assert key(None, 2) != key(idx, 2)
    assert key(idx) == key(torch.ones(2, dtype=torch.int32))
    assert key(idx) != key(idx, 6)  # another pool size: another plan
    assert key(idx) != key(torch.zeros(4, dtype=torch.int32)[::2])
    assert key([0, 1]) is None  # rejected by type: checked in full
