"""attention_with_kvcache with rotary_cos / rotary_sin on the GPU: a step
with rotary gives the output and the caches of the same step run on the
query and new keys rotated beforehand (flashfuse.rotary, checked against
the formula on the CPU by test_rotary_kvcache.py) for contiguous and paged
caches, both pair layouts, causal or not, and a rotary_dim below D, for a
decoding step and a chunk of many rows (the varlen kernels); and the
output meets FlashAttention's rule against a float64 reference."""

import pytest

torch = pytest.importorskip("torch")

import flashfuse  # noqa: E402
from flashfuse import rotary  # noqa: E402
from test_decode_gpu import make_cache, run_or_skip  # noqa: E402

pytestmark = pytest.mark.gpu


# Sq = 128 is 512 packed rows: both steps on the varlen kernels
# (flashfuse._kvcache_prefill), contiguous and paged.
@pytest.mark.parametrize("sq", [2, 128])
@pytest.mark.parametrize("page_size", [0, 16])
@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("rotary_dim", [128, 64])
def test_step_equals_prerotated(page_size, interleaved, causal, rotary_dim,
                                sq):
    torch.manual_seed(rotary_dim + page_size)
    b, hq, hkv, d, capacity = 3, 8, 2, 128, 256
    dtype = torch.bfloat16
    k, v, table = make_cache(b, hkv, capacity, d, dtype, page_size)
    q = torch.randn(b, sq, hq, d, device="cuda", dtype=dtype)
    k_new = torch.randn(b, sq, hkv, d, device="cuda", dtype=dtype)
    v_new = torch.randn_like(k_new)
    angle = torch.rand(capacity + 8, rotary_dim // 2, device="cuda") * 6.3
    cos, sin = angle.cos().to(dtype), angle.sin().to(dtype)
    lens = torch.tensor([0, 77, capacity - sq], device="cuda",
                        dtype=torch.int32)
    k2, v2 = k.clone(), v.clone()

    out = run_or_skip(lambda: flashfuse.attention_with_kvcache(
        q, k, v, lens, k_new, v_new, table, is_causal=causal,
        rotary_cos=cos, rotary_sin=sin, rotary_interleaved=interleaved))
    q_rot, k_rot = rotary.rotate_step(q, k_new, cos, sin, lens, interleaved,
                                      causal)
    want = flashfuse.attention_with_kvcache(q_rot, k2, v2, lens, k_rot, v_new,
                                            table, is_causal=causal)
    torch.cuda.synchronize()
    assert torch.equal(out, want)
    assert torch.equal(k, k2) and torch.equal(v, v2)
    # The rotated rows are in the cache, not the raw ones.
    if page_size == 0:
        assert torch.equal(k[1, 77:77 + sq], k_rot[1])

    # FlashAttention's rule against float64 over the updated cache.
    group = hq // hkv
    for bi in range(b):
        length = int(lens[bi]) + sq
        if page_size:
            rows = torch.arange(length, device="cuda")
            pages = table[bi, rows // page_size].long()
            kb, vb = k[pages, rows % page_size], v[pages, rows % page_size]
        else:
            kb, vb = k[bi, :length], v[bi, :length]
        qb = q_rot[bi].double().transpose(0, 1)          # [Hq, Sq, D]
        kb = kb.double().transpose(0, 1).repeat_interleave(group, 0)
        vb = vb.double().transpose(0, 1).repeat_interleave(group, 0)
        s = qb @ kb.transpose(1, 2) / d ** 0.5
        if causal:
            i = torch.arange(sq, device="cuda").view(sq, 1)
            j = torch.arange(length, device="cuda").view(1, length)
            s = s.masked_fill(j > i + length - sq, float("-inf"))
        ref = (s.softmax(-1) @ vb).transpose(0, 1)
        err = (out[bi].double() - ref).abs().max().item()
        assert err <= 2e-2, (bi, err)
