"""attention_with_kvcache(..., alibi_slopes=...) on the GPU: FlashAttention's
rule for O against flash-attn's bias materialised over the cache
(scripts/kernels/check_alibi_decode.py's cases on its quick shapes), torch
graphs and the op under torch.compile. The decode kernels are compiled on
first use; a machine without flashfuse-compile runs artifacts compiled
elsewhere by `check_alibi_decode.py --compile DIR`, named by
FLASHFUSE_TEST_ALIBI_DECODE_ARTIFACTS=DIR."""

import os

import pytest

torch = pytest.importorskip("torch")

import flashfuse  # noqa: E402
from conftest import gpu_script  # noqa: E402
from flashfuse import _compile  # noqa: E402


@pytest.fixture(scope="module")
def check():
    module = gpu_script("check_alibi_decode")
    carried = os.environ.get("FLASHFUSE_TEST_ALIBI_DECODE_ARTIFACTS")
    if carried:
        saved = os.environ.get("FLASHFUSE_KERNEL_DIR")
        os.environ["FLASHFUSE_KERNEL_DIR"] = os.pathsep.join(
            [os.path.join(carried, "h100")] + ([saved] if saved else []))
        yield module
        if saved is None:
            del os.environ["FLASHFUSE_KERNEL_DIR"]
        else:
            os.environ["FLASHFUSE_KERNEL_DIR"] = saved
        return
    if _compile.find_compiler() is None:
        pytest.skip("no flashfuse-compile to compile the ALiBi decode kernels")
    yield module


@pytest.mark.parametrize("case", range(10))
@pytest.mark.parametrize("layout", [1, 2])
def test_numerics(check, case, layout):
    gen = torch.Generator(device="cuda").manual_seed(case)
    for shape in check.QUICK:
        r = check.check_case(check.CASES[case], layout, shape, gen)
        assert r["ok"], r


def test_slopes_change_the_answer_and_compile(check):
    """Two slope sets give two answers (the kernel reads them), the same
    step under torch.compile(fullgraph) gives the eager one, and the
    refusals that need a GPU tensor answer."""
    dt = torch.bfloat16
    q = torch.randn(2, 1, 8, 128, device="cuda", dtype=dt)
    kc = torch.randn(2, 256, 2, 128, device="cuda", dtype=dt)
    vc = torch.randn(2, 256, 2, 128, device="cuda", dtype=dt)
    lens = torch.tensor([200, 37], dtype=torch.int32, device="cuda")
    slopes = flashfuse.alibi_slopes(8).cuda()
    a = flashfuse.attention_with_kvcache(q, kc, vc, lens, alibi_slopes=slopes)
    b = flashfuse.attention_with_kvcache(q, kc, vc, lens,
                                         alibi_slopes=slopes * 4)
    plain = flashfuse.attention_with_kvcache(q, kc, vc, lens)
    assert (a - b).abs().max() > 1e-2 and (a - plain).abs().max() > 1e-2

    @torch.compile(fullgraph=True)
    def step(q, kc, vc, lens, slopes):
        return flashfuse.attention_with_kvcache(q, kc, vc, lens,
                                                alibi_slopes=slopes)
    torch.testing.assert_close(step(q, kc, vc, lens, slopes), a, rtol=0,
                               atol=0)
    with pytest.raises(ValueError, match="alibi_slopes is on cpu"):
        flashfuse.attention_with_kvcache(q, kc, vc, lens,
                                         alibi_slopes=slopes.cpu())
