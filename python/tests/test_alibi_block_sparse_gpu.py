"""flashfuse.block_sparse_attention(..., alibi_slopes=...) on the GPU: O and
the gradients against a reference with flash-attn's ALiBi bias and the
lists' keys materialised (check_alibi.check_block_sparse_case:
FlashAttention's rule, in f32 and in the inputs' dtype), random lists with
empty rows and junk past the counts, partial-only and partial + full
lists, both slope layouts, GQA, the causal alignments, Sq != Sk and
lengths that are no multiple of the blocks. The kernels are compiled on
first use; a machine without flashfuse-compile runs artifacts compiled
elsewhere by `check_alibi.py --compile DIR [--block-sparse-only]`, named by
FLASHFUSE_TEST_ALIBI_ARTIFACTS=DIR."""

import json

import pytest

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def check(alibi_check):
    return alibi_check


@pytest.mark.parametrize("shape", range(3))
@pytest.mark.parametrize("case", range(3))
def test_numerics(check, case, shape):
    gen = torch.Generator().manual_seed(11 + 3 * case + shape)
    r = check.check_block_sparse_case(*check.BLOCK_SPARSE_CASES[case],
                                      check.BLOCK_SPARSE_SHAPES[shape], gen)
    assert r["ok"], json.dumps(r)
