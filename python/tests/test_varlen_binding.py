"""The varlen (packed batch) side of the runtime through ctypes, without
torch or a GPU: the manifest's varlen key, the variant lookup and
flashfuse_attention_forward_varlen_check."""

import ctypes

import pytest

from conftest import ROOT
from flashfuse import _kernels
from flashfuse import _runtime as rt_module

VARLEN_DIR = ROOT / "runtime" / "test" / "data" / "varlen"


def test_varlen_args_struct_matches_the_c_layout():
    # runtime_test.cpp asserts the same size of flashfuse_varlen_args.
    assert ctypes.sizeof(rt_module.VarlenArgs) == 40
    assert rt_module.VarlenArgs.max_seqlen_k.offset == 32


def test_varlen_key_and_lookup(rt, sample_dir):
    m = rt.Manifest.open(VARLEN_DIR)
    kernels = m.kernels()
    assert [k.variant.varlen for k in kernels] == [1, 0]
    assert kernels[0].variant.describe() == (
        "forward f16 D=128 Dv=128 causal=bottom_right varlen")
    params = [name for _, name in m.params(0)]
    assert params[5:7] == ["cu_seqlens_q", "cu_seqlens_k"]
    assert "num_seqs" in params and "max_seqlen_q" in params
    v = _kernels.make_variant(rt.KIND_FORWARD, rt.DTYPE_F16, 128, 128,
                              rt.CAUSAL_BOTTOM_RIGHT, varlen=True)
    assert m.find(v) == 0
    v.varlen = 0
    assert m.find(v) == 1
    # Manifests written before the key read as dense kernels.
    assert all(k.variant.varlen == 0
               for k in rt.Manifest.open(sample_dir).kernels())


def _packed_args(rt):
    a = rt.forward_args()
    a.dtype = rt.DTYPE_F16
    a.q, a.k, a.v, a.o, a.lse = (0x1000000 * i for i in range(1, 6))
    a.batch, a.heads_q, a.heads_kv, a.seq_q, a.seq_k = 1, 8, 2, 300, 500
    a.head_dim = a.head_dim_v = 128
    # flash-attn's [total, H, D] seen as [1, H, total, D].
    a.q_stride[:] = a.o_stride[:] = (300 * 8 * 128, 128, 8 * 128, 1)
    a.k_stride[:] = a.v_stride[:] = (500 * 2 * 128, 128, 2 * 128, 1)
    a.scale = 0.088
    p = rt.varlen_args()
    p.cu_seqlens_q, p.cu_seqlens_k = 0x7000000, 0x7001000
    p.num_seqs, p.max_seqlen_q, p.max_seqlen_k = 3, 150, 260
    return a, p


def test_forward_varlen_check(rt):
    from flashfuse.errors import InvalidArgumentError
    m = rt.Manifest.open(VARLEN_DIR)
    a, p = _packed_args(rt)
    m.check_forward_varlen(0, a, p)
    with pytest.raises(InvalidArgumentError,
                       match="launch it with flashfuse_attention_forward_varlen"):
        m.check_forward(0, a)
    with pytest.raises(InvalidArgumentError, match="not a varlen kernel"):
        m.check_forward_varlen(1, a, p)
    p.max_seqlen_q = 301
    with pytest.raises(InvalidArgumentError,
                       match=r"max_seqlen_q = 301 \(must be in \[1, seq_q = "
                             r"300\]"):
        m.check_forward_varlen(0, a, p)
    a, p = _packed_args(rt)
    p.cu_seqlens_q = 0x7000004
    with pytest.raises(InvalidArgumentError,
                       match="buffer 'cu_seqlens_q' at 0x7000004 is not "
                             "16-byte aligned"):
        m.check_forward_varlen(0, a, p)
