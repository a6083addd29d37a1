"""flashfuse.attention_with_kvcache on a GPU against an f32 reference, with
FlashAttention's rule: max|out - ref| <= 2 * max|out_lowprec - ref| + atol
(ref from up-cast inputs, out_lowprec the same computation in the kernel's
dtype). Fresh random inputs every run; outputs, LSE and the split
workspace poisoned first (FLASHFUSE_POISON_OUTPUTS). Ragged lengths with
0, 1, 63, 64, 65 and the full capacity; GQA; Sq > 1; causal or not, window,
softcap; contiguous and paged caches (pages shuffled, spare pages); new
rows appended (the cache contents checked too); forced split counts; NaN
in every cache row a step must not read and garbage in the page table past
each sequence's pages (poison_unread). The
kv_append kernel against torch indexing (ragged lengths, shuffled pages,
strided new rows, rows outside the cache skipped) and the device-side
check's message for each kind of bad input."""

import math

import pytest

torch = pytest.importorskip("torch")

import flashfuse  # noqa: E402
from flashfuse.errors import KernelNotFoundError  # noqa: E402
from test_numerics_gpu import assert_close, rounding_atol  # noqa: E402,F401

pytestmark = pytest.mark.gpu

DTYPES = [torch.float16, torch.bfloat16]
# (B, capacity, total lengths L_b): capacities of 8 and 16 key blocks, so
# that the automatic split count is above 1 (decode_splits.h).
BATCHES = [(3, 512, [0, 65, 512]), (3, 512, [1, 63, 64]),
           (1, 1024, [1024]), (1, 1024, [65])]


@pytest.fixture(autouse=True)
def poison(monkeypatch):
    monkeypatch.setenv("FLASHFUSE_POISON_OUTPUTS", "1")


def run_or_skip(fn):
    try:
        return fn()
    except KernelNotFoundError as e:
        pytest.skip(str(e).splitlines()[0])


def make_cache(b, hkv, capacity, d, dtype, page_size):
    """(k_cache, v_cache, block_table or None, dense view maker): a
    contiguous [B, C, Hkv, D] cache, or pages [num_pages, P, Hkv, D] in
    shuffled order with a few that no sequence uses."""
    if not page_size:
        k = torch.randn(b, capacity, hkv, d, device="cuda", dtype=dtype)
        return k, torch.randn_like(k), None
    max_pages = capacity // page_size
    pages = b * max_pages + 3
    k = torch.randn(pages, page_size, hkv, d, device="cuda", dtype=dtype)
    table = torch.randperm(pages, device="cuda")[:b * max_pages]
    return (k, torch.randn_like(k),
            table.view(b, max_pages).to(torch.int32).contiguous())


def dense(cache, table, b):
    """[B, Hkv, C, D] view of a cache, through the table when paged (an
    entry outside [0, num_pages) reads a page of the pool: such entries are
    only ever past a sequence's pages, whose rows nothing reads)."""
    if table is None:
        return cache.transpose(1, 2)
    pages = cache[table.long().clamp(0, cache.shape[0] - 1)]
    return pages.reshape(b, -1, *cache.shape[2:]).transpose(1, 2)


# Entries of a page table past a sequence's pages: serving stacks pad
# their tables with whatever (vLLM with 0, others with -1 or stale pages).
GARBAGE_PAGES = (-1, 1 << 30, -(1 << 31), 7)


def poison_unread(caches, table, lengths, leftpad=None):
    """Writes NaN (e4m3's 0x7f in an FP8 cache) into every cache row that
    no query may see: rows at or past L_b, rows before cache_leftpad[b],
    pages that no sequence names; and garbage (GARBAGE_PAGES, 7 past the
    pool) into the table's entries past each sequence's ceil(L_b / P)
    pages. Such rows are read by a block that also holds visible keys, and
    P = 0 there must not let them in (0 · NaN). Returns the table."""
    capacity = (caches[0].shape[1] if table is None
                else table.shape[1] * caches[0].shape[1])
    j = torch.arange(capacity, device="cuda")[None, :]
    unread = j >= torch.tensor(lengths, device="cuda")[:, None]
    if leftpad is not None:
        unread |= j < torch.tensor(leftpad, device="cuda")[:, None]
    for cache in caches:
        raw, nan = ((cache.view(torch.uint8), 0x7F)
                    if cache.element_size() == 1 else (cache, float("nan")))
        if table is None:
            raw[unread] = nan
            continue
        page = cache.shape[1]
        named = torch.zeros(cache.shape[0], dtype=torch.bool, device="cuda")
        for i, n in enumerate(lengths):
            for p in range(-(-n // page)):
                index = int(table[i, p])
                named[index] = True
                raw[index][unread[i, p * page:(p + 1) * page]] = nan
        raw[~named] = nan
    if table is None:
        return None
    table = table.clone()
    page, pool = caches[0].shape[1], caches[0].shape[0]
    for i, n in enumerate(lengths):
        for p in range(-(-n // page), table.shape[1]):
            bad = GARBAGE_PAGES[(i + p) % len(GARBAGE_PAGES)]
            table[i, p] = pool + bad if bad == 7 else bad
    return table


def same_bits(a, b):
    """Equal, NaN where the other is NaN."""
    return torch.equal(a.isnan(), b.isnan()) and torch.equal(
        a.nan_to_num(0.0), b.nan_to_num(0.0))


def reference(q, k, v, lengths, scale, causal, window, softcap, upcast,
              leftpad=None, slopes=None):
    """O [B, Sq, Hq, Dv] and LSE [B, Hq, Sq] of docs/KVCACHE.md's semantics:
    sequence b sees its first L_b keys, the diagonal at i + L_b - Sq;
    f32 from up-cast inputs (upcast) or in the inputs' dtype. A row with no
    visible key has O = 0 and LSE = +inf. `leftpad`: each sequence's first
    key (cache_leftpad); `slopes`: ALiBi's [Hq] or [B, Hq], -slope *
    |diag(i) - j| on each score after the scale and the softcap."""
    if upcast:
        q, k, v = q.float(), k.float(), v.float()
    b, sq, hq, _ = q.shape
    group = hq // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    scores = torch.matmul(q.transpose(1, 2) * scale, k.transpose(-2, -1))
    if softcap:
        scores = softcap * torch.tanh(scores / softcap)
    L = torch.tensor(lengths, device=q.device)[:, None, None]
    i = torch.arange(sq, device=q.device)[None, :, None]
    j = torch.arange(k.shape[2], device=q.device)[None, None, :]
    diag = i + L - sq
    if slopes is not None:
        per_head = slopes.float().expand(b, hq)[:, :, None, None]
        scores = scores - (per_head * (diag - j).abs()[:, None]).to(
            scores.dtype)
    keep = (j < L) & (i >= 0)  # [B, Sq, C]
    if leftpad is not None:
        keep &= j >= torch.tensor(leftpad, device=q.device)[:, None, None]
    if causal:
        keep &= j <= diag
    if window[0] >= 0:
        keep &= j >= diag - window[0]
    if window[1] >= 0:
        keep &= j <= diag + window[1]
    scores = scores.masked_fill(~keep[:, None], float("-inf"))
    lse = torch.logsumexp(scores.float(), dim=-1)
    p = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    o = torch.matmul(p.to(v.dtype), v).transpose(1, 2)
    return o, lse.masked_fill(~keep.any(-1)[:, None], float("inf"))


def check(dtype, d, heads, sq, causal, batch, page_size=0, window=(-1, -1),
          softcap=0.0, append=False, num_splits=0, leftpad=None,
          unread_nan=False):
    (hq, hkv), (b, capacity, lengths) = heads, batch
    q = torch.randn(b, sq, hq, d, device="cuda", dtype=dtype)
    k_cache, v_cache, table = make_cache(b, hkv, capacity, d, dtype,
                                         page_size)
    k_new = v_new = None
    snew = 0
    if append:
        snew = sq
        lengths = [max(n, snew) for n in lengths]
        k_new = torch.randn(b, snew, hkv, d, device="cuda", dtype=dtype)
        v_new = torch.randn_like(k_new)
    seqlens = torch.tensor([n - snew for n in lengths], device="cuda",
                           dtype=torch.int32)
    if unread_nan:
        table = poison_unread((k_cache, v_cache), table, lengths, leftpad)
    before_k, before_v = k_cache.clone(), v_cache.clone()
    pads = (None if leftpad is None else
            torch.tensor(leftpad, device="cuda", dtype=torch.int32))
    out, lse = run_or_skip(lambda: flashfuse.attention_with_kvcache(
        q, k_cache, v_cache, seqlens, k_new, v_new, table, is_causal=causal,
        window_size=window, softcap=softcap, return_lse=True,
        check_inputs=True, num_splits=num_splits, cache_leftpad=pads))
    if append:
        # The new rows went to [cache_seqlens[b], L_b) of each sequence,
        # through the table when paged, and nothing else changed (compared
        # over the whole cache or pool: a page that a sequence names is
        # reached from another's table entries past its pages too).
        assert same_bits(k_cache, appended(before_k, table, k_new, seqlens))
        assert same_bits(v_cache, appended(before_v, table, v_new, seqlens))
    else:
        assert same_bits(k_cache, before_k) and same_bits(v_cache, before_v)
    kd, vd = dense(k_cache, table, b), dense(v_cache, table, b)
    if unread_nan:
        # The reference's own products would carry the NaNs (0 · NaN): it
        # reads zeros there, which the semantics never look at.
        kd, vd = kd.nan_to_num(0.0), vd.nan_to_num(0.0)
    scale = 1 / math.sqrt(d)
    ref, ref_lse = reference(q, kd, vd, lengths, scale, causal, window,
                             softcap, upcast=True, leftpad=leftpad)
    low, _ = reference(q, kd, vd, lengths, scale, causal, window, softcap,
                       upcast=False, leftpad=leftpad)
    check_result(out, lse, ref, ref_lse, low, 2, (b, sq, hq, d), dtype)


def check_result(out, lse, ref, ref_lse, low, factor, shape, dtype):
    """O [B, Sq, Hq, Dv] of `dtype` within `factor` times the low-precision
    reference's error (FlashAttention's rule), LSE [B, Hq, Sq] f32 close to
    the reference's and +inf exactly on rows without visible keys."""
    b, sq, hq, _ = shape
    assert out.shape == shape and out.dtype == dtype
    assert_close(out, ref, low, factor, "O")
    assert lse.shape == (b, hq, sq) and lse.dtype == torch.float32
    seen = torch.isfinite(ref_lse)
    assert torch.equal(lse[~seen], ref_lse[~seen]), "LSE of empty rows"
    if seen.any():
        err = (lse[seen] - ref_lse[seen]).abs().max().item()
        assert err < 1e-2, f"LSE off by {err}"


@pytest.mark.parametrize("batch", BATCHES,
                         ids=lambda x: f"B{x[0]}_C{x[1]}_" + "-".join(
                             map(str, x[2])))
@pytest.mark.parametrize("page_size", [0, 16, 64],
                         ids=["contiguous", "page16", "page64"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("sq", [1, 4], ids=["sq1", "sq4"])
@pytest.mark.parametrize("heads", [(8, 8), (32, 8)], ids=["mha", "gqa"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
def test_decode_matches_reference(dtype, d, heads, sq, causal, page_size,
                                  batch):
    check(dtype, d, heads, sq, causal, batch, page_size)


@pytest.mark.parametrize("page_size", [0, 16, 64],
                         ids=["contiguous", "page16", "page64"])
@pytest.mark.parametrize("sq", [1, 4], ids=["sq1", "sq4"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
def test_new_rows_are_appended(dtype, sq, page_size):
    check(dtype, 128, (32, 8), sq, True, (3, 512, [1, 64, 512]), page_size,
          append=True)


@pytest.mark.parametrize("page_size", [0, 16], ids=["contiguous", "page16"])
@pytest.mark.parametrize("window", [(32, 0), (100, -1)],
                         ids=["w32_0", "w100"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
def test_window(dtype, window, page_size):
    check(dtype, 128, (32, 8), 4, True, (3, 512, [0, 65, 512]), page_size,
          window=window)


@pytest.mark.parametrize("page_size", [0, 16], ids=["contiguous", "page16"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
def test_softcap(dtype, page_size):
    check(dtype, 128, (32, 8), 1, True, (3, 512, [1, 63, 512]), page_size,
          softcap=30.0)


# (lengths, paddings): 0, negative (hides nothing), a 128-key block -1 /
# exactly / +1, the length itself (nothing visible) and past it.
LEFTPADS = [([300, 512, 129, 128], [0, -5, 127, 128]),
            ([200, 64, 65, 1], [129, 64, 70, 0])]


@pytest.mark.parametrize("num_splits", [0, 1, 3], ids=["auto", "s1", "s3"])
@pytest.mark.parametrize("case", LEFTPADS, ids=["blocks", "empty"])
@pytest.mark.parametrize("sq", [1, 4], ids=["sq1", "sq4"])
@pytest.mark.parametrize("d, softcap", [(64, 0.0), (128, 0.0), (256, 0.0),
                                        (128, 30.0), (256, 30.0)])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
def test_left_padded_cache(dtype, d, softcap, sq, case, num_splits):
    """cache_leftpad (the library's kernels: causal, contiguous): each
    sequence attends to its keys [cache_leftpad[b], L_b) only; the padded
    rows hold random data."""
    lengths, pads = case
    check(dtype, d, (32, 8), sq, True, (4, 512, lengths), softcap=softcap,
          num_splits=num_splits, leftpad=pads)


@pytest.mark.parametrize("page_size", [0, 16], ids=["contiguous", "page16"])
def test_left_padded_cache_with_new_rows(page_size):
    """New rows go to cache_seqlens[b] whatever the padding (a paged or
    windowed leftpad kernel is compiled on demand where one can be)."""
    check(torch.bfloat16, 128, (32, 8), 1, True, (4, 512, [300, 40, 129, 7]),
          page_size=page_size, append=True, leftpad=[0, 39, 64, 3])


def test_left_padding_argument_errors():
    """cache_leftpad must be an i32 [B] CUDA tensor."""
    q = torch.randn(2, 1, 4, 64, device="cuda", dtype=torch.float16)
    k = torch.randn(2, 64, 2, 64, device="cuda", dtype=torch.float16)
    lens = torch.tensor([3, 4], device="cuda", dtype=torch.int32)
    for pad, error, match in [
            ([0, 1], TypeError, "cache_leftpad must be an int32 tensor"),
            (lens.long(), TypeError, "cache_leftpad must be int32"),
            (lens[:1], ValueError, r"cache_leftpad must be \[B=2\]"),
            (lens.cpu(), ValueError, "cache_leftpad is on cpu")]:
        with pytest.raises(error, match=match):
            flashfuse.attention_with_kvcache(q, k, k, lens,
                                             cache_leftpad=pad)


@pytest.mark.parametrize("num_splits", [1, 2, 3, 7])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
def test_forced_splits(dtype, num_splits):
    # Splits that leave some with no keys (L = 1, 65 over 7 splits) merge to
    # the same answer as one.
    check(dtype, 128, (32, 8), 1, True, (3, 512, [1, 65, 512]), 16,
          num_splits=num_splits)


# Lengths 0, 1, a 64- or 128-key block -1 / +1 and between: every block
# that a sequence's last keys share with its unread rows.
UNREAD = (5, 512, [0, 1, 63, 129, 300])


@pytest.mark.parametrize("num_splits", [0, 1, 3], ids=["auto", "s1", "s3"])
@pytest.mark.parametrize("page_size", [0, 16, 64],
                         ids=["contiguous", "page16", "page64"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("sq", [1, 4], ids=["sq1", "sq4"])
@pytest.mark.parametrize("d", [64, 128, 256])
def test_unread_rows_and_table_entries_stay_unread(d, sq, causal, page_size,
                                                   num_splits):
    """NaN in every cache row past a sequence's length (torch.empty's
    caches) and in the pages that no sequence names, garbage in the table
    past each sequence's pages (docs/KVCACHE.md "What a step reads"): the
    step's answer is the one over finite rows there."""
    check(torch.bfloat16, d, (32, 8), sq, causal, UNREAD, page_size,
          num_splits=num_splits, unread_nan=True)


@pytest.mark.parametrize("page_size", [0, 16, 64],
                         ids=["contiguous", "page16", "page64"])
@pytest.mark.parametrize("sq", [1, 4], ids=["sq1", "sq4"])
def test_unread_rows_stay_unread_with_new_rows(sq, page_size):
    """The same with new rows appended first: they land on NaN rows and are
    read, the rows past them still not."""
    check(torch.float16, 128, (32, 8), sq, True, UNREAD, page_size,
          append=True, unread_nan=True)


@pytest.mark.parametrize("page_size", [0, 16, 64],
                         ids=["contiguous", "page16", "page64"])
@pytest.mark.parametrize("case", ["window", "softcap", "leftpad"])
def test_unread_rows_stay_unread_in_the_variants(case, page_size):
    """Window, softcap, and left padding (whose rows before cache_leftpad
    are NaN too; a paged leftpad kernel is compiled on demand or skipped)."""
    extra = {"window": {"window": (100, 0)}, "softcap": {"softcap": 30.0},
             "leftpad": {"leftpad": [0, -3, 40, 128, 129]}}[case]
    check(torch.bfloat16, 128, (32, 8), 4, True, UNREAD, page_size,
          unread_nan=True, **extra)


def test_integer_lengths_and_strided_q():
    # cache_seqlens as an int; q a BSHD view of a fused QKV buffer.
    dtype = torch.bfloat16
    qkv = torch.randn(2, 1, 3, 32, 128, device="cuda", dtype=dtype)
    q = qkv[:, :, 0]
    k_cache = torch.randn(2, 256, 8, 128, device="cuda", dtype=dtype)
    v_cache = torch.randn_like(k_cache)
    out = run_or_skip(lambda: flashfuse.attention_with_kvcache(
        q, k_cache, v_cache, 200))
    ref, _ = reference(q, k_cache.transpose(1, 2), v_cache.transpose(1, 2),
                       [200, 200], 1 / math.sqrt(128), True, (-1, -1), 0.0,
                       True)
    low, _ = reference(q, k_cache.transpose(1, 2), v_cache.transpose(1, 2),
                       [200, 200], 1 / math.sqrt(128), True, (-1, -1), 0.0,
                       False)
    assert_close(out, ref, low, 2, "O (int lengths, strided q)")


def check_step(q, k_cache, v_cache, table, lengths, out):
    """out of one step against the reference over the caches as they are."""
    b, d = q.shape[0], q.shape[-1]
    kd, vd = dense(k_cache, table, b), dense(v_cache, table, b)
    args = (kd, vd, lengths, 1 / math.sqrt(d), True, (-1, -1), 0.0)
    ref, _ = reference(q, *args, upcast=True)
    low, _ = reference(q, *args, upcast=False)
    assert_close(out, ref, low, 2, "O")


@pytest.mark.parametrize("page_size", [0, 16], ids=["contiguous", "page16"])
def test_steps_of_one_signature_use_their_own_tensors(page_size):
    # A decoding loop calls with the same shapes, strides and scalars every
    # step, so the checks and the launch templates are done once
    # (kvcache._steps, _kvcache_ops.DecodeLaunch): each step must still read
    # and write its own tensors and lengths, copy a q it cannot read in
    # place, and a call of a shape no step had is checked in full.
    dtype, b, hq, hkv, d, capacity = torch.bfloat16, 3, 32, 8, 128, 512
    k_cache, v_cache, table = make_cache(b, hkv, capacity, d, dtype,
                                         page_size)
    lengths = [5, 64, 300]
    # q a view into a wider buffer: 8 elements in (16-byte aligned) on
    # even steps, 1 element in (the same strides, misaligned: copied).
    buffer = torch.randn(b, 1, hq * d + 8, device="cuda", dtype=dtype)
    for step in range(4):
        start = 8 if step % 2 == 0 else 1
        buffer.normal_()
        q = buffer[..., start:start + hq * d].unflatten(-1, (hq, d))
        k_new = torch.randn(b, 1, hkv, d, device="cuda", dtype=dtype)
        v_new = torch.randn_like(k_new)
        seqlens = torch.tensor(lengths, device="cuda", dtype=torch.int32)
        out = run_or_skip(lambda: flashfuse.attention_with_kvcache(
            q, k_cache, v_cache, seqlens, k_new, v_new, table))
        lengths = [n + 1 for n in lengths]
        kd, vd = dense(k_cache, table, b), dense(v_cache, table, b)
        for i, n in enumerate(lengths):
            assert torch.equal(kd[i, :, n - 1], k_new[i, 0]), f"step {step}"
            assert torch.equal(vd[i, :, n - 1], v_new[i, 0]), f"step {step}"
        check_step(q, k_cache, v_cache, table, lengths, out)
    if page_size == 0:
        # int lengths: each call's own value.
        q = torch.randn(b, 1, hq, d, device="cuda", dtype=dtype)
        for n in (100, 200, 100):
            out = flashfuse.attention_with_kvcache(q, k_cache, v_cache, n)
            check_step(q, k_cache, v_cache, None, [n] * b, out)
    with pytest.raises(ValueError, match="multiple of the caches' heads"):
        flashfuse.attention_with_kvcache(
            torch.randn(b, 1, 12, d, device="cuda", dtype=dtype), k_cache,
            v_cache, seqlens, block_table=table)
    with pytest.raises(ValueError, match="capacity"):
        flashfuse.attention_with_kvcache(q, k_cache, v_cache, capacity + 1,
                                         block_table=table)


@pytest.mark.parametrize("layout", ["strided", "misaligned"])
def test_lengths_and_table_views_are_read_as_given(layout):
    # The kernels read the lengths and the table rows contiguously from
    # 16-byte boundaries: views that are not (every other element of a
    # lengths buffer, a column-major table, tensors 4 bytes into their
    # allocation) are copied first, on every step of one signature.
    dtype, b, hq, hkv, d, capacity = torch.bfloat16, 3, 32, 8, 128, 512
    k_cache, v_cache, table = make_cache(b, hkv, capacity, d, dtype, 16)
    lengths = [5, 64, 300]
    for step in range(2):
        if layout == "strided":
            seqlens = torch.tensor([n for n in lengths for _ in (0, 1)],
                                   device="cuda", dtype=torch.int32)[::2]
            view = table.t().contiguous().t()
            assert seqlens.stride() == (2,) and view.stride(-1) != 1
        else:
            raw = torch.zeros(2 + b + b * table.shape[1], device="cuda",
                              dtype=torch.int32)
            seqlens = raw[1:1 + b]
            seqlens.copy_(torch.tensor(lengths, dtype=torch.int32))
            view = raw[2 + b:].view(b, -1)
            view.copy_(table)
            assert seqlens.data_ptr() % 16 and view.data_ptr() % 16
        q = torch.randn(b, 1, hq, d, device="cuda", dtype=dtype)
        out = run_or_skip(lambda: flashfuse.attention_with_kvcache(
            q, k_cache, v_cache, seqlens, block_table=view))
        check_step(q, k_cache, v_cache, table, lengths, out)
        lengths = [n + 7 for n in lengths]


@pytest.mark.parametrize("num_splits", [0, 1, 3], ids=["auto", "s1", "s3"])
@pytest.mark.parametrize("page_size", [0, 16], ids=["contiguous", "page16"])
def test_decode_steps_replay_from_a_cuda_graph(page_size, num_splits):
    # What serving stacks (and torch.compile's reduce-overhead mode) do: one
    # decoding step, new rows appended, captured once in a CUDA graph and
    # replayed with the inputs' contents changed in place (q, the new rows,
    # the lengths, one page of the table). Each replay must write the new
    # rows where the lengths say and attend as an eager call on the same
    # state does; the split workspace and its counters come from the
    # graph's memory pool, so the in-kernel merge must leave nothing behind
    # that a replay depends on.
    dtype, b, hq, hkv, d, capacity = torch.bfloat16, 3, 32, 8, 128, 2048
    k_cache, v_cache, table = make_cache(b, hkv, capacity, d, dtype,
                                         page_size)
    q = torch.randn(b, 1, hq, d, device="cuda", dtype=dtype)
    k_new = torch.randn(b, 1, hkv, d, device="cuda", dtype=dtype)
    v_new = torch.randn_like(k_new)
    seqlens = torch.tensor([0, 700, capacity - 4], device="cuda",
                           dtype=torch.int32)

    def step():
        return flashfuse.attention_with_kvcache(
            q, k_cache, v_cache, seqlens, k_new, v_new, table,
            return_lse=True, num_splits=num_splits)

    # Warm-up on a side stream (kernel lookup, workspace sizes), as
    # torch.cuda.graphs asks; it appends a row, undone by the copies below.
    saved = (k_cache.clone(), v_cache.clone())
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        run_or_skip(step)
    torch.cuda.current_stream().wait_stream(side)
    k_cache.copy_(saved[0])
    v_cache.copy_(saved[1])
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out, lse = step()
    torch.cuda.synchronize()
    k_cache.copy_(saved[0])  # the capture itself ran nothing, but be sure
    v_cache.copy_(saved[1])
    for replay in range(4):
        q.copy_(torch.randn_like(q))
        k_new.copy_(torch.randn_like(k_new))
        v_new.copy_(torch.randn_like(v_new))
        if replay == 2 and table is not None:
            # A page swapped for a spare one no sequence used.
            spare = (set(range(k_cache.shape[0]))
                     - set(table.flatten().tolist())).pop()
            table[1, 700 // page_size] = spare
        eager_k, eager_v = k_cache.clone(), v_cache.clone()
        want, want_lse = flashfuse.attention_with_kvcache(
            q, eager_k, eager_v, seqlens, k_new, v_new, table,
            return_lse=True, num_splits=num_splits)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(k_cache, eager_k) and torch.equal(v_cache,
                                                             eager_v), \
            f"replay {replay}: cache contents"
        assert torch.equal(out, want), f"replay {replay}: O"
        assert torch.equal(lse, want_lse), f"replay {replay}: LSE"
        seqlens += 1


def appended(cache, table, new, seqlens):
    """The cache after the kv_append kernel's contract, by torch indexing:
    row t of new[b] at row seqlens[b] + t of sequence b (through the table
    when paged); a row whose destination is outside the cache (negative
    length, beyond the capacity, a page outside [0, num_pages)) skipped."""
    want = cache.clone()
    b, snew = new.shape[:2]
    for i in range(b):
        for t in range(snew):
            pos = int(seqlens[i]) + t
            if int(seqlens[i]) < 0:
                continue
            if table is None:
                if pos < cache.shape[1]:
                    want[i, pos] = new[i, t]
                continue
            page_size = cache.shape[1]
            if pos >= table.shape[1] * page_size:
                continue
            page = int(table[i, pos // page_size])
            if 0 <= page < cache.shape[0]:
                want[page, pos % page_size] = new[i, t]
    return want


def append(k_cache, v_cache, k_new, v_new, seqlens, table):
    run_or_skip(lambda: torch.ops.flashfuse.kvcache_append(
        k_cache, v_cache, k_new, v_new, seqlens, table))
    torch.cuda.synchronize()


@pytest.mark.parametrize("page_size", [0, 16, 64],
                         ids=["contiguous", "page16", "page64"])
@pytest.mark.parametrize("snew", [1, 4], ids=["snew1", "snew4"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
def test_append_kernel_matches_torch(dtype, d, snew, page_size):
    # Ragged lengths (an empty sequence, one ending on a page boundary, one
    # filling the cache), pages shuffled with spares; the whole pool is
    # compared, so a row written anywhere else fails.
    b, hkv, capacity = 4, 8, 256
    k_cache, v_cache, table = make_cache(b, hkv, capacity, d, dtype,
                                         page_size)
    seqlens = torch.tensor([0, 63, 128 - snew, capacity - snew],
                           device="cuda", dtype=torch.int32)
    k_new = torch.randn(b, snew, hkv, d, device="cuda", dtype=dtype)
    v_new = torch.randn_like(k_new)
    want_k = appended(k_cache, table, k_new, seqlens)
    want_v = appended(v_cache, table, v_new, seqlens)
    append(k_cache, v_cache, k_new, v_new, seqlens, table)
    assert torch.equal(k_cache, want_k) and torch.equal(v_cache, want_v)


@pytest.mark.parametrize("page_size", [0, 16], ids=["contiguous", "page16"])
def test_append_kernel_reads_strided_new_rows(page_size):
    # k_new and v_new are views of one fused [B, Snew, 2, Hkv, D] buffer
    # (strides of the logical [B, Hkv, Snew, D] indexing, like q's).
    dtype, b, hkv, d, snew = torch.bfloat16, 3, 4, 128, 3
    k_cache, v_cache, table = make_cache(b, hkv, 128, d, dtype, page_size)
    kv = torch.randn(b, snew, 2, hkv, d, device="cuda", dtype=dtype)
    k_new, v_new = kv[:, :, 0], kv[:, :, 1]
    seqlens = torch.tensor([5, 0, 77], device="cuda", dtype=torch.int32)
    want_k = appended(k_cache, table, k_new, seqlens)
    want_v = appended(v_cache, table, v_new, seqlens)
    append(k_cache, v_cache, k_new, v_new, seqlens, table)
    assert torch.equal(k_cache, want_k) and torch.equal(v_cache, want_v)


@pytest.mark.parametrize("page_size", [0, 16], ids=["contiguous", "page16"])
def test_append_skips_rows_outside_the_cache(page_size):
    # Sequence 0 runs past the capacity by 2 rows, sequence 1 has a
    # negative length, sequence 3 (paged) a page index past the pool:
    # those rows are not written (not clamped onto the last row or page),
    # and every other row of every sequence is untouched.
    dtype, b, hkv, d, snew, capacity = torch.float16, 4, 2, 64, 4, 128
    k_cache, v_cache, table = make_cache(b, hkv, capacity, d, dtype,
                                         page_size)
    seqlens = torch.tensor([capacity - 2, -3, 10, 40], device="cuda",
                           dtype=torch.int32)
    if page_size:
        table[3, 40 // page_size] = k_cache.shape[0]      # past the pool
        table[3, (40 + snew) // page_size + 1] = -7       # unused: padding
    k_new = torch.randn(b, snew, hkv, d, device="cuda", dtype=dtype)
    v_new = torch.randn_like(k_new)
    want_k = appended(k_cache, table, k_new, seqlens)
    want_v = appended(v_cache, table, v_new, seqlens)
    before = k_cache.clone()
    append(k_cache, v_cache, k_new, v_new, seqlens, table)
    assert torch.equal(k_cache, want_k) and torch.equal(v_cache, want_v)
    # What was written: sequence 0's two rows inside the cache, sequence
    # 2's four and, unless its page is past the pool, sequence 3's four.
    changed = (k_cache != before).any(-1).sum().item()
    assert changed == hkv * (2 + snew + (0 if page_size else snew))


def test_attention_with_new_rows_uses_the_kernel(monkeypatch):
    # No torch indexing op writes the cache: the append is the kernel's
    # (index_put_ would raise here).
    def refuse(*args, **kwargs):
        raise AssertionError("the append must not go through index_put_")
    monkeypatch.setattr(torch.Tensor, "index_put_", refuse)
    check(torch.float16, 128, (32, 8), 1, True, (3, 512, [1, 64, 512]), 16,
          append=True)


def device_check(k_cache, v_cache, seqlens, table, snew, **kwargs):
    q = torch.randn(seqlens.shape[0], 1, 8, k_cache.shape[-1], device="cuda",
                    dtype=k_cache.dtype)
    return run_or_skip(lambda: flashfuse.attention_with_kvcache(
        q, k_cache, v_cache, seqlens, block_table=table,
        k_new=(torch.randn(seqlens.shape[0], snew, k_cache.shape[2],
                           k_cache.shape[-1], device="cuda",
                           dtype=k_cache.dtype) if snew else None),
        v_new=(torch.randn(seqlens.shape[0], snew, v_cache.shape[2],
                           v_cache.shape[-1], device="cuda",
                           dtype=v_cache.dtype) if snew else None),
        **kwargs))


def lens(*values):
    return torch.tensor(values, device="cuda", dtype=torch.int32)


def test_device_check_reports_each_bad_input():
    from flashfuse.errors import InvalidArgumentError
    # 3 sequences of at most 8 pages of 16 rows (capacity 128), 35 pages.
    k_cache, v_cache, table = make_cache(3, 8, 128, 128, torch.float16, 16)
    assert k_cache.shape[0] == 27
    kw = dict(check_inputs=True)
    device_check(k_cache, v_cache, lens(5, 0, 127), table, 1, **kw)  # valid
    cases = [
        (lens(5, -3, 7), 0, r"cache_seqlens\[1\] = -3 is negative"),
        (lens(5, 126, 7), 4, r"cache_seqlens\[1\] = 126 plus 4 new rows "
                             r"exceeds the cache capacity 128"),
        (lens(5, 128, 7), 1, r"cache_seqlens\[1\] = 128 plus 1 new rows "
                             r"exceeds the cache capacity 128"),
        # The lowest offending sequence is reported.
        (lens(200, -1, 7), 0, r"cache_seqlens\[0\] = 200 plus 0 new rows"),
    ]
    for seqlens, snew, message in cases:
        with pytest.raises(InvalidArgumentError, match=message):
            device_check(k_cache, v_cache, seqlens, table, snew, **kw)
    # A page index past the pool, then a negative one, among the pages a
    # sequence uses; the same entries beyond its length are padding.
    bad = table.clone()
    bad[1, 2] = 40
    with pytest.raises(InvalidArgumentError,
                       match=r"block_table\[1\]\[2\] = 40 is outside "
                             r"\[0, 27\)"):
        device_check(k_cache, v_cache, lens(5, 40, 7), bad, 1, **kw)
    device_check(k_cache, v_cache, lens(5, 31, 7), bad, 1, **kw)  # pages 0-1
    bad[1, 0] = -1
    with pytest.raises(InvalidArgumentError,
                       match=r"block_table\[1\]\[0\] = -1 is outside"):
        device_check(k_cache, v_cache, lens(5, 31, 7), bad, 1, **kw)
    # Contiguous caches have lengths only.
    kc, vc, _ = make_cache(2, 8, 64, 128, torch.bfloat16, 0)
    with pytest.raises(InvalidArgumentError,
                       match=r"cache_seqlens\[1\] = 64 plus 1 new rows "
                             r"exceeds the cache capacity 64"):
        device_check(kc, vc, lens(0, 64), None, 1, **kw)
    # A failed check writes nothing: the cache is as before.
    before = kc.clone()
    with pytest.raises(InvalidArgumentError):
        device_check(kc, vc, lens(3, -1), None, 2, **kw)
    assert torch.equal(kc, before)


def test_device_check_from_the_environment(monkeypatch):
    from flashfuse.errors import InvalidArgumentError
    kc, vc, _ = make_cache(2, 8, 64, 128, torch.float16, 0)
    device_check(kc, vc, lens(0, 70), None, 0)  # unchecked: no error
    monkeypatch.setenv("FLASHFUSE_CHECK_KVCACHE", "1")
    with pytest.raises(InvalidArgumentError,
                       match=r"cache_seqlens\[1\] = 70 plus 0 new rows"):
        device_check(kc, vc, lens(0, 70), None, 0)


def test_torch_compile_keeps_one_graph():
    dtype = torch.bfloat16
    q = torch.randn(2, 1, 32, 128, device="cuda", dtype=dtype)
    k_cache = torch.randn(2, 512, 8, 128, device="cuda", dtype=dtype)
    v_cache = torch.randn_like(k_cache)
    lengths = torch.tensor([100, 512], device="cuda", dtype=torch.int32)
    eager = run_or_skip(lambda: flashfuse.attention_with_kvcache(
        q, k_cache, v_cache, lengths))

    @torch.compile(fullgraph=True)
    def f(q, k_cache, v_cache, lengths):
        return flashfuse.attention_with_kvcache(q, k_cache, v_cache,
                                                lengths) * 2

    torch.testing.assert_close(f(q, k_cache, v_cache, lengths), eager * 2)
