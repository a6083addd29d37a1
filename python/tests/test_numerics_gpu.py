"""Numerics of flashfuse.attention on a GPU against an f32 reference, with
FlashAttention's rule: max|out - ref| <= 2 * max|out_lowprec - ref| + atol
(gradients: 3x, against torch autograd of the reference). Fresh random
inputs on every run; outputs and scratch buffers poisoned first."""

import math

import pytest

torch = pytest.importorskip("torch")

import flashfuse  # noqa: E402
import flashfuse.ops  # noqa: E402,F401  (registers torch.ops.flashfuse.*)
from flashfuse import _runtime as rt  # noqa: E402
from flashfuse.errors import KernelNotFoundError  # noqa: E402

pytestmark = pytest.mark.gpu

LENGTHS = [(113, 203), (1, 239), (1023, 1024)]


def keep_mask(sq, sk, causal, window, device):
    """KERNEL_ABI.md "Semantics": which keys each query row keeps. The
    diagonal is j = i except for causal bottom_right (a window without
    causal is top-left aligned, as in the dialect and every lowering)."""
    i = torch.arange(sq, device=device)[:, None]
    j = torch.arange(sk, device=device)[None, :]
    diagonal = i + sk - sq if causal == "bottom_right" else i
    keep = torch.ones(sq, sk, dtype=torch.bool, device=device)
    if causal != "none":
        keep &= j <= diagonal
    if window is not None:
        left, right = window
        if left >= 0:
            keep &= j >= diagonal - left
        if right >= 0:
            keep &= j <= diagonal + right
    return keep


def reference(q, k, v, causal, scale, upcast, window=None, softcap=0.0,
              bias=None, drop=None):
    """Attention computed plainly: in f32 from upcast inputs (upcast=True),
    or in the inputs' dtype as PyTorch would (FlashAttention's out_pt).
    causal: False/True (top-left) or a KERNEL_ABI causal name; drop: the
    dropout keep mask already scaled by 1 / (1 - p)."""
    causal = {False: "none", True: "top_left"}.get(causal, causal)
    if upcast:
        q, k, v = q.float(), k.float(), v.float()
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    scores = torch.matmul(q * scale, k.transpose(-2, -1))
    if softcap:
        scores = softcap * torch.tanh(scores / softcap)
    if bias is not None:
        scores = scores + bias
    keep = keep_mask(q.shape[2], k.shape[2], causal, window, q.device)
    scores = scores.masked_fill(~keep, float("-inf"))
    p = torch.softmax(scores, dim=-1)
    # A fully masked row is 0, never NaN (DESIGN.md).
    p = torch.nan_to_num(p, nan=0.0)
    if drop is not None:
        p = p * drop
    return torch.matmul(p.to(v.dtype), v)


def rounding_atol(ref):
    return 2 * ((ref + 0.3 - 0.3) - ref).abs().max().item()


def assert_close(out, ref, low, factor, what):
    assert torch.isfinite(out).all(), f"{what}: non-finite values"
    err = (out.float() - ref).abs().max().item()
    low_err = (low.float() - ref).abs().max().item()
    bound = factor * low_err + rounding_atol(ref)
    assert err <= bound, (f"{what}: max|out-ref| {err:.3e} > {bound:.3e} "
                          f"({factor} x lowprec {low_err:.3e})")


def run_or_skip(fn):
    try:
        return fn()
    except KernelNotFoundError as e:
        pytest.skip(str(e).splitlines()[0])


@pytest.fixture(autouse=True)
def poison(monkeypatch):
    monkeypatch.setenv("FLASHFUSE_POISON_OUTPUTS", "1")


@pytest.mark.parametrize("seqlens", LENGTHS, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("heads", [(4, 4), (8, 2)], ids=["mha", "gqa"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_forward_matches_reference(dtype, head_dim, causal, heads, seqlens):
    (hq, hkv), (sq, sk) = heads, seqlens
    batch = 2
    q = torch.randn(batch, hq, sq, head_dim, device="cuda", dtype=dtype)
    k = torch.randn(batch, hkv, sk, head_dim, device="cuda", dtype=dtype)
    v = torch.randn(batch, hkv, sk, head_dim, device="cuda", dtype=dtype)
    out = run_or_skip(lambda: flashfuse.attention(
        q, k, v, is_causal=causal, enable_gqa=hq != hkv))
    scale = 1 / math.sqrt(head_dim)
    ref = reference(q, k, v, causal, scale, upcast=True)
    low = reference(q, k, v, causal, scale, upcast=False)
    assert out.shape == (batch, hq, sq, head_dim) and out.dtype == dtype
    assert_close(out, ref, low, 2, "O")


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", [64, 128, 256])
def test_long_keys_take_the_sm90ws_forward(head_dim, causal):
    # From SM90WS_MIN_KEYS keys on, the library's sm90ws kernel of the
    # variant (build/kernels/<target>-ws) is the one launched, and it meets
    # the rule like the sm90 one below that length (BSHD views, GQA).
    from flashfuse import _kernels
    sk = _kernels.SM90WS_MIN_KEYS + 77
    b, hq, hkv = 1, 4, 2
    q = torch.randn(b, sk, hq, head_dim, device="cuda",
                    dtype=torch.bfloat16).transpose(1, 2)
    k, v = (torch.randn(b, sk, hkv, head_dim, device="cuda",
                        dtype=torch.bfloat16).transpose(1, 2) for _ in range(2))
    out = run_or_skip(lambda: flashfuse.attention(q, k, v, is_causal=causal,
                                                  enable_gqa=True))
    variant = _kernels.make_variant(rt.KIND_FORWARD, rt.DTYPE_BF16, head_dim,
                                    head_dim, int(causal))
    ws = _kernels.sm90ws_dir(variant)
    if ws is None:
        pytest.skip("no sm90ws kernel of the variant in the library")
    device = q.device.index
    assert (_kernels.forward_kernel(device, variant, None, sk)
            is _kernels.kernel(device, variant, ws))
    assert (_kernels.forward_kernel(device, variant, None, 1000)
            is not _kernels.kernel(device, variant, ws))
    scale = 1 / math.sqrt(head_dim)
    ref = reference(q, k, v, causal, scale, upcast=True)
    low = reference(q, k, v, causal, scale, upcast=False)
    assert_close(out, ref, low, 2, "O (sm90ws)")


def test_tma_launch_from_a_thread_without_a_context(monkeypatch):
    """A TMA kernel's first launch in a thread on which no CUDA context is
    current (PyTorch's autograd threads before their first CUDA call):
    the runtime makes its context current before it encodes the tensor
    maps, which failed with CUDA_ERROR_INVALID_CONTEXT before (docs/PERF.md
    "ALiBi", run 487). The inputs and the output's memory exist before the
    thread starts, so nothing in it calls the CUDA runtime first."""
    import ctypes
    import threading
    from flashfuse import _kernels
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        pytest.skip("no libcuda.so.1")
    sk = _kernels.SM90WS_MIN_KEYS + 77
    q, k, v = (torch.randn(1, 4, sk, 128, device="cuda", dtype=torch.bfloat16)
               for _ in range(3))
    want = run_or_skip(lambda: flashfuse.attention(q, k, v))
    variant = _kernels.make_variant(rt.KIND_FORWARD, rt.DTYPE_BF16, 128, 128,
                                    0)
    if _kernels.sm90ws_dir(variant) is None:
        pytest.skip("no sm90ws (TMA) kernel of the variant in the library")
    del want  # its memory serves the thread's output from torch's cache
    torch.cuda.synchronize()
    # Poisoning would fill the output in the thread first (a CUDA call).
    monkeypatch.setenv("FLASHFUSE_POISON_OUTPUTS", "0")
    result = {}

    def run():
        current = ctypes.c_void_p()
        cuda.cuCtxGetCurrent(ctypes.byref(current))
        result["had_context"] = bool(current.value)
        try:
            result["out"] = flashfuse.attention(q, k, v)
        except Exception as e:  # reported on the test's thread
            result["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if result["had_context"]:
        pytest.skip("the new thread already had a current context")
    assert "error" not in result, result.get("error")
    torch.cuda.synchronize()
    assert torch.equal(result["out"], flashfuse.attention(q, k, v))


@pytest.mark.parametrize("causal", ["none", "top_left", "bottom_right"])
def test_mla_forward_on_the_wgmma_kernels(causal):
    # DeepSeek's MLA prefill, D = 192 with Dv = 128: the library's forwards
    # meet the rule (GQA, lengths that end inside a tile, more keys than
    # queries). On Hopper they are the wgmma recipes' (SelectConfig.cpp):
    # from sm90ws_min_keys (512) keys the sm90ws kernel of <target>-ws,
    # below it the sm90 one of <target>.
    from flashfuse import _kernels
    variant = _kernels.make_variant(
        rt.KIND_FORWARD, rt.DTYPE_BF16, 192, 128,
        {"none": 0, "top_left": 1, "bottom_right": 2}[causal])
    device = torch.cuda.current_device()
    hopper = torch.cuda.get_device_capability(device)[0] == 9
    ws_dir = _kernels.sm90ws_dir(variant)
    if hopper and ws_dir is None:
        pytest.skip("no sm90ws MLA kernel in the library (not an h100 build)")
    ws = _kernels.kernel(device, variant, ws_dir) if hopper else None
    b, hq, hkv = 2, 4, 2
    long = _kernels.sm90ws_min_keys(variant)
    assert long < 1024
    for sq, sk in ((113, 203), (1023, 1024), (long + 77, long + 77 + 333),
                   (2100, 2100)):
        if causal == "top_left":
            sk = max(sq, sk - 333) if sk > long else sk
        q = torch.randn(b, hq, sq, 192, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, hkv, sk, 192, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, hkv, sk, 128, device="cuda", dtype=torch.bfloat16)
        if hopper:
            assert (_kernels.forward_kernel(device, variant, None, sk, sq)
                    is ws) == (sk >= long)
        out = run_or_skip(lambda: flashfuse.attention(
            q, k, v, is_causal=causal != "none" and causal, enable_gqa=True))
        assert out.shape == (b, hq, sq, 128)
        scale = 1 / math.sqrt(192)
        ref = reference(q, k, v, causal, scale, upcast=True)
        low = reference(q, k, v, causal, scale, upcast=False)
        assert_close(out, ref, low, 2, f"O ({sq} x {sk})")


def skip_without_sm90ws_backward(head_dim, head_dim_v, causal, **flags):
    """Skips on Hopper where the library has no sm90ws backward of the
    bf16 variant (not an h100 build); elsewhere the test runs whatever
    kernel the package finds."""
    from flashfuse import _kernels
    variant = _kernels.make_variant(rt.KIND_BACKWARD, rt.DTYPE_BF16,
                                    head_dim, head_dim_v, causal, **flags)
    capability = torch.cuda.get_device_capability()
    if capability[0] == 9 and _kernels.sm90ws_dir(
            variant, capability=capability) is None:
        pytest.skip(f"no sm90ws D = {head_dim}, Dv = {head_dim_v} backward "
                    "in the library (not an h100 build)")


@pytest.mark.parametrize("causal", [False, "top_left", "bottom_right"],
                         ids=["full", "causal_tl", "causal_br"])
def test_mla_backward_on_the_wgmma_kernels(causal):
    # DeepSeek's MLA training step, D = 192 with Dv = 128: on Hopper the
    # library's sm90ws backward (<target>-bwd-ws), whose two consumer
    # warpgroups share each 64-key block and keep a column half of dK and
    # dV each (KernelSpec::kvColumnGroups, dK in 32-column pieces), meets
    # the gradient rule with GQA and lengths that end inside a block.
    skip_without_sm90ws_backward(
        192, 128, {False: 0, "top_left": 1, "bottom_right": 2}[causal])
    for seqlens in ((113, 203), (1023, 1024), (2100, 2100)):
        check_gradients(torch.bfloat16, 192, causal, (4, 2), seqlens,
                        head_dim_v=128)


@pytest.mark.parametrize("case", ["full", "causal", "causal_softcap",
                                  "window_softcap"])
def test_d256_backward_on_the_wgmma_kernels(case):
    # Gemma's training step, D = 256: on Hopper the library's sm90ws
    # backward (<target>-bwd-ws), whose two consumer warpgroups share each
    # 64-key block, split its queries for the scores and stage dQ in the
    # step's own Q and dO tiles (KernelSpec::scoresByQueryHalves,
    # stagesDQInQueryTiles), meets the gradient rule with GQA, lengths that
    # end inside a block and Sq != Sk.
    causal = case.startswith("causal")
    window = (64, 0) if case.startswith("window") else None
    softcap = 30.0 if case.endswith("softcap") else 0.0
    skip_without_sm90ws_backward(256, 256, int(causal),
                                 window=window is not None,
                                 softcap=bool(softcap))
    for seqlens in ((113, 203), (1023, 1024), (2100, 2100)):
        check_gradients(torch.bfloat16, 256, causal, (4, 2), seqlens,
                        window=window, softcap=softcap)


def test_artifact_forward_of_an_f32_output_kernel():
    # flashfuse.artifact.forward on a kernel that writes O in f32 (out_f32
    # 1: the unrounded partial results split-sequence attention merges)
    # returns an f32 O within the rule. It used to allocate O in the
    # inputs' dtype, which the kernel overran at 4 bytes an element (NaNs;
    # memcheck's out-of-bounds writes, run 517).
    from flashfuse import _kernels, artifact
    variant = _kernels.make_variant(rt.KIND_FORWARD, rt.DTYPE_BF16, 128, 128,
                                    0, out_f32=True)
    capability = torch.cuda.get_device_capability()
    directory, index = run_or_skip(
        lambda: _kernels.locate(variant, capability=capability))
    name = _kernels.info(directory, index).name.decode()
    b, hq, hkv, sq, sk = 2, 4, 2, 300, 433
    q = torch.randn(b, hq, sq, 128, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(b, hkv, sk, 128, device="cuda", dtype=torch.bfloat16)
            for _ in range(2))
    out, lse = artifact.forward(directory, q, k, v, kernel=name)
    assert out.dtype == torch.float32 and out.shape == (b, hq, sq, 128)
    scale = 1 / math.sqrt(128)
    ref = reference(q, k, v, "none", scale, upcast=True)
    low = reference(q, k, v, "none", scale, upcast=False)
    assert_close(out, ref, low, 2, f"f32 O of {name}")


@pytest.mark.parametrize("causal", ["top_left", "bottom_right"])
def test_long_causal_takes_the_192_row_forward(causal):
    # (The library has the 192-row kernel of the top-left mask only: for
    # bottom-right every length takes the 128-row one.)
    # From SM90WS_LONG_MIN_LENGTH queries and keys on, a D = 64 causal
    # forward launches the library's 192-row sm90ws kernel
    # (<target>-ws-long), below it the 128-row one of <target>-ws; both
    # meet the rule (GQA, lengths that end inside a tile, more keys than
    # queries for the bottom-right mask).
    from flashfuse import _kernels
    variant = _kernels.make_variant(
        rt.KIND_FORWARD, rt.DTYPE_BF16, 64, 64,
        1 if causal == "top_left" else 2)
    tiers = _kernels.sm90ws_dirs(variant)
    if not tiers:
        pytest.skip("no sm90ws kernel of the variant in the library")
    assert len(tiers) == (2 if causal == "top_left" else 1), tiers
    long = _kernels.SM90WS_LONG_MIN_LENGTH
    device = torch.cuda.current_device()
    ws_long = _kernels.kernel(device, variant, tiers[max(tiers)])
    b, hq, hkv = 1, 4, 2
    for sq, sk, taken in ((long + 77, long + 77 + (causal == "bottom_right")
                           * 333, True),
                          (long - 1, long + 5, len(tiers) == 1)):
        q = torch.randn(b, hq, sq, 64, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(b, hkv, sk, 64, device="cuda",
                            dtype=torch.bfloat16) for _ in range(2))
        assert (_kernels.forward_kernel(device, variant, None, sk, sq)
                is ws_long) == taken
        out = run_or_skip(lambda: flashfuse.attention(
            q, k, v, is_causal=causal, enable_gqa=True))
        scale = 1 / math.sqrt(64)
        ref = reference(q, k, v, causal, scale, upcast=True)
        low = reference(q, k, v, causal, scale, upcast=False)
        assert_close(out, ref, low, 2, f"O ({sq} x {sk})")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_bshd_views_are_read_in_place(dtype):
    b, s, h, d = 2, 203, 4, 128
    qkv = torch.randn(b, s, 3, h, d, device="cuda", dtype=dtype)
    q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
    out = run_or_skip(lambda: flashfuse.attention(q, k, v))
    ref = reference(q, k, v, False, 1 / math.sqrt(d), upcast=True)
    low = reference(q, k, v, False, 1 / math.sqrt(d), upcast=False)
    assert_close(out, ref, low, 2, "O (BSHD views)")


def test_torch_compile_keeps_one_graph():
    q, k, v = (torch.randn(1, 4, 128, 128, device="cuda", dtype=torch.float16)
               for _ in range(3))
    eager = run_or_skip(lambda: flashfuse.attention(q, k, v))

    @torch.compile(fullgraph=True)
    def f(q, k, v):
        return flashfuse.attention(q, k, v) * 2

    torch.testing.assert_close(f(q, k, v), eager * 2)


def test_direct_calls_match_the_registered_ops(monkeypatch):
    """ops.run_op runs an op's body without torch's dispatcher in plain
    eager calls: O, dK and dV are bit-identical to the calls through
    torch.ops.flashfuse.* (the path a dispatch mode takes), dQ equal up
    to the order of its atomic additions."""
    from flashfuse import ops
    q, k, v = (torch.randn(2, 8, 300, 64, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    dout = torch.randn_like(q)

    def run():
        out = run_or_skip(lambda: flashfuse.attention(q, k, v, is_causal=True))
        grads = torch.autograd.grad(out, (q, k, v), dout)
        with torch.no_grad():
            inference = flashfuse.attention(q, k, v, is_causal=True)
        return (out, inference) + grads

    taken = []
    real = ops._dispatch_free

    def spy(tensors):
        taken.append(real(tensors))
        return taken[-1]

    monkeypatch.setattr(ops, "_dispatch_free", spy)
    direct = run()
    assert taken == [True] * 3  # forward, backward, inference forward
    monkeypatch.setattr(ops, "_dispatch_free", lambda tensors: False)
    through_ops = run()
    for i in (0, 1, 3, 4):  # O, inference O, dK, dV
        assert torch.equal(direct[i], through_ops[i]), i
    torch.testing.assert_close(direct[2], through_ops[2], rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("causal", [0, 1], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_f32_output_partials_merge_by_lse(dtype, head_dim, causal):
    """out_f32=True: O in float32, unrounded (the 16-bit kernel's O is its
    rounding, bit for bit: same tiles, same accumulation), and partial
    results over two key shards merged by their LSE, as ring attention
    does, give attention over all the keys."""
    b, hq, hkv, sq, split, sk = 2, 8, 2, 203, 256, 459
    q = torch.randn(b, hq, sq, head_dim, device="cuda", dtype=dtype)
    k = torch.randn(b, hkv, sk, head_dim, device="cuda", dtype=dtype)
    v = torch.randn(b, hkv, sk, head_dim, device="cuda", dtype=dtype)
    scale = 1 / math.sqrt(head_dim)

    def forward(q, k, v, causal, out_f32):
        return run_or_skip(lambda: torch.ops.flashfuse.attention_fwd(
            q, k, v, None, None, causal, scale, -1, -1, 0.0, 0.0, 0,
            out_f32))

    o, lse = forward(q, k, v, causal, True)
    assert o.dtype == torch.float32 and o.shape == (b, hq, sq, head_dim)
    ref = reference(q, k, v, bool(causal), scale, upcast=True)
    low = reference(q, k, v, bool(causal), scale, upcast=False)
    assert_close(o, ref, low, 2, "O (f32)")
    o16, lse16 = forward(q, k, v, causal, False)
    assert torch.equal(o.to(dtype), o16) and torch.equal(lse, lse16)

    # Two key shards, each a full (non-causal) attention.
    parts = [forward(q, k[:, :, s], v[:, :, s], 0, True)
             for s in (slice(0, split), slice(split, sk))]
    (o1, l1), (o2, l2) = parts
    merged_lse = torch.logaddexp(l1, l2)
    merged = (torch.exp(l1 - merged_lse)[..., None] * o1
              + torch.exp(l2 - merged_lse)[..., None] * o2)
    ref = reference(q, k, v, False, scale, upcast=True)
    low = reference(q, k, v, False, scale, upcast=False)
    assert_close(merged, ref, low, 2, "O merged by LSE")
    full_lse = forward(q, k, v, 0, True)[1]
    torch.testing.assert_close(merged_lse, full_lse, rtol=1e-5, atol=1e-4)


# ---- gradients ---------------------------------------------------------

def check_gradients(dtype, head_dim, causal, heads, seqlens, batch=2,
                    window=None, softcap=0.0, bias_shape=None, dropout_p=0.0,
                    drop=None, seed=None, deterministic=False,
                    head_dim_v=None):
    """flashfuse.attention's autograd against torch autograd of the f32
    reference, FlashAttention's rule with 3x; returns the gradients."""
    (hq, hkv), (sq, sk) = heads, seqlens
    dv = head_dim_v or head_dim
    q = torch.randn(batch, hq, sq, head_dim, device="cuda", dtype=dtype)
    k = torch.randn(batch, hkv, sk, head_dim, device="cuda", dtype=dtype)
    v = torch.randn(batch, hkv, sk, dv, device="cuda", dtype=dtype)
    dout = torch.randn(batch, hq, sq, dv, device="cuda", dtype=dtype)
    bias = (torch.randn(bias_shape, device="cuda") if bias_shape else None)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    if bias is not None:
        leaves.append(bias.clone().requires_grad_())
    if seed is not None:
        torch.manual_seed(seed)  # flashfuse draws its dropout seed from torch
    out = run_or_skip(lambda: flashfuse.attention(
        *leaves[:3], attn_mask=leaves[3] if bias is not None else None,
        is_causal=causal, enable_gqa=hq != hkv, window=window,
        softcap=softcap or None, dropout_p=dropout_p,
        deterministic=deterministic))
    grads = torch.autograd.grad(out, leaves, dout)
    scale = 1 / math.sqrt(head_dim)
    names = ["dq", "dk", "dv", "dbias"]
    refs = []
    for upcast in (True, False):
        rl = [t.clone().requires_grad_() for t in (q, k, v)]
        if bias is not None:
            rl.append(bias.clone().requires_grad_())
        ref = reference(*rl[:3], causal, scale, upcast, window, softcap,
                        rl[3] if bias is not None else None, drop)
        refs.append(torch.autograd.grad(
            ref, rl, dout.float() if upcast else dout))
    for name, g, r, lo, leaf in zip(names, grads, refs[0], refs[1], leaves):
        assert g.shape == leaf.shape and g.dtype == leaf.dtype, name
        assert_close(g, r, lo, 3, name)
    return grads


@pytest.mark.parametrize("seqlens", LENGTHS, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("heads", [(4, 4), (8, 2)], ids=["mha", "gqa"])
@pytest.mark.parametrize("causal", [False, "top_left", "bottom_right"],
                         ids=["full", "causal_tl", "causal_br"])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_backward_matches_reference(dtype, head_dim, causal, heads, seqlens):
    check_gradients(dtype, head_dim, causal, heads, seqlens)


@pytest.mark.parametrize("causal", [False, "top_left"], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_backward_takes_the_sm90ws_kernels(head_dim, causal):
    # Where the library has an sm90ws backward of the variant
    # (build/kernels/<target>-bwd-ws), its kernel is the one the backward
    # launches from sm90ws_backward_min_keys keys on (the sm90 one below),
    # through the runtime's tensor maps of Q, K, V and dO, and it meets the
    # gradient rule (GQA, lengths that end inside a tile).
    from flashfuse import _kernels, ops
    variant = _kernels.make_variant(rt.KIND_BACKWARD, rt.DTYPE_BF16, head_dim,
                                    head_dim, int(bool(causal)))
    ws = _kernels.sm90ws_dir(variant)
    if ws is None:
        pytest.skip("no sm90ws backward of the variant in the library")
    threshold = _kernels.sm90ws_backward_min_keys(head_dim)
    check_gradients(torch.bfloat16, head_dim, causal, (8, 2),
                    (777, threshold + 5))
    kernel = _kernels.kernel(torch.cuda.current_device(), variant, ws)
    assert any(plan[1][0] is kernel for key, plan in
               ops._backward_plans.items() if key[-1])
    check_gradients(torch.bfloat16, head_dim, causal, (8, 2),
                    (777, threshold - 19))
    assert not any(plan[1][0] is kernel for key, plan in
                   ops._backward_plans.items() if not key[-1])


EXTRA_LENGTHS = [(113, 203), (1023, 1024)]


@pytest.mark.parametrize("seqlens", EXTRA_LENGTHS,
                         ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
@pytest.mark.parametrize("feature", ["window", "softcap"])
def test_backward_window_softcap(feature, dtype, seqlens):
    # The library's backward variants: window (64, 0) at D = 128, softcap at
    # D = 64 (scripts/kernels/gen_suite.py --backward).
    if feature == "window":
        check_gradients(dtype, 128, False, (8, 2), seqlens, window=(64, 0))
    else:
        check_gradients(dtype, 64, False, (8, 2), seqlens, softcap=30.0)


@pytest.mark.parametrize("seqlens", EXTRA_LENGTHS,
                         ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
@pytest.mark.parametrize("broadcast", [False, True],
                         ids=["full_bias", "head_broadcast_bias"])
def test_backward_bias_gives_dbias(dtype, seqlens, broadcast):
    (sq, sk), b, h = seqlens, 2, 4
    shape = (b, 1 if broadcast else h, sq, sk)
    check_gradients(dtype, 64, False, (h, h), seqlens, batch=b,
                    bias_shape=shape)


def dropout_keep(dtype, p, seed, b, h, sq, sk, causal=False):
    """The forward kernel's kept mask for (seed, p), read back, and where it
    shows (every key, or under a top-left causal mask the keys row i sees):
    Q = 0 makes every probability 1 / n_i over row i's n_i visible keys and
    V = I (Sk = D) makes O[i, j] = keep / ((1 - p) n_i)."""
    q = torch.zeros(b, h, sq, sk, device="cuda", dtype=dtype)
    k = torch.randn(b, h, sk, sk, device="cuda", dtype=dtype)
    v = torch.eye(sk, device="cuda", dtype=dtype).expand(b, h, sk, sk)
    torch.manual_seed(seed)
    o = run_or_skip(lambda: flashfuse.attention(q, k, v.contiguous(),
                                                is_causal=causal, dropout_p=p))
    rows = torch.arange(sq, device="cuda").unsqueeze(1)
    visible = (torch.arange(sk, device="cuda") <= rows if causal
               else torch.ones(sq, sk, dtype=torch.bool, device="cuda"))
    n = visible.sum(1, keepdim=True).float()
    return (o.float() > 0.5 / ((1 - p) * n)) & visible, visible


def philox_keep(seed, p, b, h, sq, sk):
    """The keep test of include/flashfuse/Conversion/Common/Philox.h on the
    host (torch int64 arithmetic on the CPU, u32 words): one Philox4x32-10
    draw per octet {q, q + 8} x {kv, kv + 1, kv + 8, kv + 9}, the element's
    16 bits against p * 2^16. `b`: the batch size, or a list of the batch
    indices to draw at (a packed sequence's index, say)."""
    mask32 = 0xFFFFFFFF
    batches = torch.arange(b) if isinstance(b, int) else torch.tensor(b)
    bi, hi, qi, ki = torch.meshgrid(
        batches, *(torch.arange(n) for n in (h, sq, sk)), indexing="ij")
    c = [ki & ~9, qi & ~8, hi, bi]
    k0, k1 = seed & mask32, (seed >> 32) & mask32

    def mul(m, x):  # the 64-bit product of two u32, as (hi, lo)
        lo = (x & 0xFFFF) * m
        hi = (x >> 16) * m + (lo >> 16)
        return hi >> 16, ((hi & 0xFFFF) << 16) | (lo & 0xFFFF)

    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & mask32, (k1 + 0xBB67AE85) & mask32
        hi0, lo0 = mul(0xD2511F53, c[0])
        hi1, lo1 = mul(0xCD9E8D57, c[2])
        c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
    word = torch.stack(c).gather(
        0, (2 * ((qi >> 3) & 1) + (ki & 1)).unsqueeze(0)).squeeze(0)
    u = torch.where((ki & 8) != 0, word >> 16, word & 0xFFFF)
    threshold = int(float(torch.tensor(p, dtype=torch.float32)) * 2.0**16)
    return u >= threshold


# tools/flashfuse-numerics' C++ keep test (Reference.cpp) for seed 42,
# p = 0.5 at b = 1, h = 2, queries 7..9 x keys 6..10 (both rows of an
# octet, both halves of its words), printed by it.
PHILOX_KEEP_42 = [[False, True, False, True, False],
                  [True, True, True, False, False],
                  [False, False, True, True, True]]


def test_philox_keep_reference_matches_the_c_reference():
    # Pins the host version above to the contract.
    keep = philox_keep(42, 0.5, 2, 3, 10, 11)[1, 2, 7:10, 6:11]
    assert keep.tolist() == PHILOX_KEEP_42


# The dropout variants: D = 64 is the library's (-bwd); D = 128 and the
# causal ones are compiled on demand or come from an artifact of them.
DROPOUT_VARIANTS = [(64, False), (64, True), (128, False), (128, True)]


def over_dropout_variants(test):
    """`test` over both 16-bit dtypes and DROPOUT_VARIANTS."""
    test = pytest.mark.parametrize("d,causal", DROPOUT_VARIANTS, ids=str)(test)
    return pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                                   ids=["fp16", "bf16"])(test)


@over_dropout_variants
def test_dropout_mask_is_the_philox_keep_test(dtype, d, causal):
    # The forward kernel's kept mask is Philox.h's, the CPU lowerings' and
    # the reference's: one draw an octet, bit for bit, odd row counts and
    # every element of an octet included.
    p, seed, b, h, sq = 0.17, 99, 2, 3, 203
    keep, visible = dropout_keep(dtype, p, seed, b, h, sq, d, causal)
    torch.manual_seed(seed)
    kernel_seed = int(torch.randint(0, 2**62, (1,)).item())
    expected = philox_keep(kernel_seed, p, b, h, sq, d).cuda() & visible
    assert torch.equal(keep, expected)


@over_dropout_variants
def test_backward_dropout_uses_the_forward_mask(dtype, d, causal):
    # Sk = D: V = I square.
    p, seed, b, h, sq = 0.17, 1234, 2, 4, 203
    keep, visible = dropout_keep(dtype, p, seed, b, h, sq, d, causal)
    dropped = 1 - keep.sum().item() / (visible.sum().item() * b * h)
    assert abs(dropped - p) < 0.02, f"dropped fraction {dropped} for p={p}"
    # Same seed drawn again, so the same mask: the backward must apply it.
    check_gradients(dtype, d, causal, (h, h), (sq, d), batch=b,
                    dropout_p=p, drop=keep.float() / (1 - p), seed=seed)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_deterministic_backward_is_bit_identical(dtype):
    try:
        check_gradients(dtype, 128, "top_left", (8, 2), (1023, 1024),
                        deterministic=True)
    except NotImplementedError as e:
        assert "deterministic" in str(e) and "backward_dq" in str(e)
        pytest.skip("no deterministic artifact: " + str(e).splitlines()[0])
    q = torch.randn(1, 8, 777, 128, device="cuda", dtype=dtype,
                    requires_grad=True)
    k, v = (torch.randn(1, 2, 777, 128, device="cuda", dtype=dtype,
                        requires_grad=True) for _ in range(2))
    dout = torch.randn(1, 8, 777, 128, device="cuda", dtype=dtype)
    runs = []
    for _ in range(2):
        out = flashfuse.attention(q, k, v, is_causal=True, enable_gqa=True,
                                  deterministic=True)
        runs.append(torch.autograd.grad(out, (q, k, v), dout))
    for name, first, second in zip(("dq", "dk", "dv"), *runs):
        assert torch.equal(first, second), f"{name} differs between two runs"


def test_missing_backward_variant_is_a_clear_error(monkeypatch):
    # D = 256 with a boolean mask has forward kernels but no backward ones
    # in the library (its backwards there have no mask); with no
    # flashfuse-compile to make them on demand, that is the error.
    from flashfuse import _compile
    monkeypatch.setattr(_compile, "find_compiler", lambda: None)
    q, k, v = (torch.randn(1, 2, 64, 256, device="cuda", dtype=torch.float16,
                           requires_grad=True) for _ in range(3))
    mask = torch.rand(64, 64, device="cuda") < 0.8
    mask[:, 0] = True
    out = run_or_skip(lambda: flashfuse.attention(q, k, v, attn_mask=mask))
    with pytest.raises(NotImplementedError,
                       match=r"(?s)no backward kernel .*D=256.*mask.*not "
                             r"compiled on demand: no flashfuse-compile"):
        out.sum().backward()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=["fp16", "bf16"])
def test_variant_outside_the_library_is_compiled_on_demand(
        dtype, compile_tool, monkeypatch, tmp_path):
    # Softcap with bottom-right causal at D = 64: neither suite has its
    # forward or backward, so both are compiled into this cache.
    monkeypatch.setenv("FLASHFUSE_COMPILE", str(compile_tool))
    monkeypatch.setenv("FLASHFUSE_CACHE_DIR", str(tmp_path))
    check_gradients(dtype, 64, "bottom_right", (8, 2), (113, 203),
                    softcap=30.0)
    target_dirs = list(tmp_path.iterdir())
    assert len(target_dirs) == 1
    assert len(list(target_dirs[0].glob("*/manifest.txt"))) == 2
