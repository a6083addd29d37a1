"""MLIR for one kernel variant: a flash.attention or flash.attention_grad in
a function of its own, ready for flashfuse-compile.

The one emitter of variant IR: scripts/kernels/gen_suite.py builds the kernel
library from it, and flashfuse._compile compiles a variant that no artifact
has on demand. Shapes in the IR fix only the dtype and the head dims D, Dv
(batch, heads, lengths and strides are kernel arguments, docs/KERNEL_ABI.md);
window sizes, the softcap and dropout_p are run-time parameters too, so the
values written here only switch those features on. Needs neither torch nor
the runtime library.
"""

import dataclasses
import math
import re
from typing import Optional, Tuple

from . import _runtime as rt

DTYPES = tuple(rt._DTYPE_NAMES.values())
CAUSAL = (None, "top_left", "bottom_right")
# flash.attention's O: the inputs' dtype (None), or f32 over them; an FP8
# forward's (dtype e4m3) is bf16 or f16, never e4m3 (docs/FP8.md).
OUT_DTYPES = (None, "f32")
FP8_OUT_DTYPES = ("bf16", "f16")
# MLIR's element types where the runtime's dtype names differ.
_MLIR_TYPES = {"e4m3": "f8E4M3FN"}

# Lengths the IR is written with (KernelVariant.seq_len's default). The
# kernel serves every length either way; only flash-select-config reads them,
# for the tiles of long static sequences (D = 64 causal from 4096:
# SelectConfig.cpp kLongCausalMinLength).
_SEQ = 128
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*$")


def _check_tiles(tiles, whose):
    """Forced tiles: None, or four positive ints (block_m, block_n, warps,
    stages)."""
    if tiles is not None and (
            len(tiles) != 4
            or any(not isinstance(t, int) or t <= 0 for t in tiles)):
        raise ValueError(f"{whose} tiles must be four positive ints "
                         f"(block_m, block_n, warps, stages), got {tiles!r}")


@dataclasses.dataclass(frozen=True)
class KernelVariant:
    """One kernel variant. `window` is (left, right), -1 leaving that side
    unbounded; `tiles` is (block_m, block_n, warps, stages) to force a
    #flash.config instead of letting flash-select-config choose;
    `with_forward` (backward variants) also emits the forward op, so that
    both come from one artifact. `out_dtype` "f32" makes the forward's O
    f32 (the unrounded partial results that split-sequence attention
    merges by their LSE); None keeps O in `dtype`, as the backward op and a
    with_forward forward always do. `varlen` makes it the forward of a
    packed batch of variable-length sequences (flash.attention with
    `varlen(...)` operands, docs/KERNEL_ABI.md "Varlen"), or with
    emit_backward the flash.attention_grad of one. dtype "e4m3" makes it an
    FP8 forward (docs/FP8.md): f8E4M3FN Q, K, V with per-head descale
    operands ([B, H], the general form the kernel reads per tensor too,
    through strides) and out_dtype "bf16" or "f16". `block_sparse` 1 makes
    it a forward walking block-sparse key-block lists (flash.attention's
    `block_sparse(...)`, docs/KERNEL_ABI.md "Block-sparse"), 2 with full
    lists too, over blocks of `sparse_blocks` (BQ, BK). `descale_blocks`
    (BQ, BK), e4m3 only, makes the descales per block of the sequence
    ([B, H, N], flash.attention's `descale_block_size`; FlashAttention-3's
    block quantisation), which the kernel reads per tensor and per head too
    (block stride 0). `alibi` 1 or 2 gives the op flash-attn's ALiBi, its
    `alibi(...)` operand: score - slopes[h] * |i + Sk - Sq - j| (2:
    slopes[b, h]), the slopes an f32 [Hq] (or [B, Hq]) argument of the
    function, the kernels' `alibi_slopes` param. With `varlen` b is the
    sequence, i, j its local indices and Sk - Sq its Lk_b - Lq_b
    (FlashOps.td)."""

    name: str
    dtype: str
    head_dim: int
    head_dim_v: Optional[int] = None  # None: equal to head_dim
    causal: Optional[str] = None
    window: Optional[Tuple[int, int]] = None
    softcap: Optional[float] = None
    bias: bool = False
    mask: bool = False
    dropout: Optional[float] = None
    tiles: Optional[Tuple[int, int, int, int]] = None
    with_forward: bool = False
    out_dtype: Optional[str] = None  # None: dtype; "f32"; e4m3: bf16|f16
    varlen: bool = False
    block_sparse: int = 0  # 0 dense, 1 partial lists, 2 partial + full
    sparse_blocks: Tuple[int, int] = (128, 128)
    descale_blocks: Optional[Tuple[int, int]] = None
    alibi: int = 0  # 0 none, 1 slopes [Hq], 2 slopes [B, Hq]
    seq_len: int = _SEQ  # of Q and K in the IR (above)

    def __post_init__(self):
        # Rejected here rather than by the MLIR parser, whose message would
        # point into generated text the caller never wrote.
        if not _NAME.match(self.name):
            raise ValueError(f"variant name {self.name!r} is not an MLIR "
                             "symbol name")
        if self.dtype not in DTYPES:
            raise ValueError(f"variant dtype must be one of {DTYPES}, got "
                             f"{self.dtype!r}")
        if self.head_dim_v is None:
            object.__setattr__(self, "head_dim_v", self.head_dim)
        for field in ("head_dim", "head_dim_v"):
            value = getattr(self, field)
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"variant {field} must be a positive int, "
                                 f"got {value!r}")
        if not isinstance(self.seq_len, int) or self.seq_len <= 0:
            raise ValueError(f"variant seq_len must be a positive int, got "
                             f"{self.seq_len!r}")
        if self.causal not in CAUSAL:
            raise ValueError(f"variant causal must be one of {CAUSAL}, got "
                             f"{self.causal!r}")
        if self.window is not None and (
                len(self.window) != 2
                or any(not isinstance(w, int) or w < -1 for w in self.window)):
            raise ValueError("variant window must be (left, right) ints >= -1,"
                             f" got {self.window!r}")
        if self.softcap is not None and not (
                math.isfinite(self.softcap) and self.softcap > 0):
            raise ValueError(f"variant softcap must be positive and finite, "
                             f"got {self.softcap!r}")
        if self.dropout is not None and not 0 < self.dropout < 1:
            raise ValueError(f"variant dropout must be in (0, 1), got "
                             f"{self.dropout!r}")
        if self.fp8:
            self._check_fp8()
        elif self.descale_blocks is not None:
            raise ValueError("variant descale_blocks (per-block descales) "
                             "are for dtype e4m3 only")
        elif self.out_dtype not in OUT_DTYPES:
            raise ValueError(f"variant out_dtype must be one of {OUT_DTYPES} "
                             f"(None: the dtype), got {self.out_dtype!r}")
        _check_tiles(self.tiles, "variant")
        if self.varlen and (self.bias or self.mask):
            # The op's verifier refuses them (their [B, Hq, Sq, Sk] would be
            # per sequence).
            raise ValueError("a varlen variant takes no bias or mask")
        if self.block_sparse not in (0, 1, 2):
            raise ValueError("variant block_sparse must be 0, 1 or 2, got "
                             f"{self.block_sparse!r}")
        if self.block_sparse and (self.varlen or self.mask):
            # The op's verifier refuses both with the lists.
            raise ValueError("a block-sparse variant takes no varlen or mask")
        if self.alibi not in (0, 1, 2):
            raise ValueError("variant alibi must be 0, 1 (slopes [Hq]) or 2 "
                             f"(slopes [B, Hq]), got {self.alibi!r}")
        if self.alibi and self.fp8:
            # The FP8 kernels have no ALiBi form (the verifier refuses it).
            raise ValueError("an ALiBi variant is a 16-bit one (no e4m3)")
        if len(self.sparse_blocks) != 2 or any(
                not isinstance(s, int) or s <= 0 for s in self.sparse_blocks):
            raise ValueError("variant sparse_blocks must be two positive "
                             f"ints (BQ, BK), got {self.sparse_blocks!r}")

    @property
    def fp8(self):
        return self.dtype == "e4m3"

    def _check_fp8(self):
        # What the op's verifier and flash-select-config refuse for FP8
        # (docs/FP8.md), said in terms of the variant.
        if self.out_dtype not in FP8_OUT_DTYPES:
            raise ValueError(f"an e4m3 variant's out_dtype must be one of "
                             f"{FP8_OUT_DTYPES}, got {self.out_dtype!r}")
        if self.dropout or self.varlen or self.with_forward:
            raise ValueError("an e4m3 variant is a forward without dropout "
                             "or varlen (no FP8 backward exists)")
        if self.block_sparse:
            # The op's verifier refuses the lists with FP8 operands.
            raise ValueError("an e4m3 variant takes no block-sparse lists "
                             "(no FP8 block-sparse kernel exists)")
        if self.tiles:
            raise ValueError("an e4m3 variant takes no forced tiles (they "
                             "name the sm80 recipe, which has no FP8)")
        if self.descale_blocks is not None and (
                len(self.descale_blocks) != 2
                or any(not isinstance(s, int) or s <= 0
                       for s in self.descale_blocks)):
            raise ValueError("variant descale_blocks must be two positive "
                             f"ints (BQ, BK), got {self.descale_blocks!r}")


def _float(x):
    """An MLIR float literal: MLIR needs a '.', which repr omits for some
    values (1e-05)."""
    text = repr(float(x))
    return text if "." in text else f"{float(x):.9e}"


def attributes(v):
    """The attribute dictionary of v's op ('' when there is none)."""
    attrs = []
    if v.causal:
        attrs.append(f"causal = #flash.causal<{v.causal}>")
    if v.window:
        # The op has no "unbounded" value: an absent side is unbounded.
        for side, size in zip(("left", "right"), v.window):
            if size >= 0:
                attrs.append(f"window_{side} = {size} : i64")
    if v.softcap:
        attrs.append(f"softcap = {_float(v.softcap)} : f32")
    if v.dropout:
        attrs.append(f"dropout_p = {_float(v.dropout)} : f32")
    if v.block_sparse and tuple(v.sparse_blocks) != (128, 128):
        bq, bk = v.sparse_blocks
        attrs.append(f"sparse_block_size = array<i64: {bq}, {bk}>")
    if v.fp8 and v.descale_blocks:
        bq, bk = v.descale_blocks
        attrs.append(f"descale_block_size = array<i64: {bq}, {bk}>")
    if v.tiles:
        bm, bn, w, s = v.tiles
        attrs.append(f"config = #flash.config<sm80, block_m = {bm}, "
                     f"block_n = {bn}, warps = {w}, stages = {s}>")
    return ("{" + ", ".join(attrs) + "}") if attrs else ""


class _Types:
    """The tensor types of v's operands and results."""

    def __init__(self, v):
        t = _MLIR_TYPES.get(v.dtype, v.dtype)
        n = v.seq_len
        self.q = f"tensor<1x1x{n}x{v.head_dim}x{t}>"  # Q, K, dQ, dK
        self.v = f"tensor<1x1x{n}x{v.head_dim_v}x{t}>"  # V, O, dV, dO
        # The forward's result O: f32 with out_dtype (the gradient op's O
        # operand is self.v).
        self.o = f"tensor<1x1x{n}x{v.head_dim_v}x{v.out_dtype or t}>"
        self.lse = f"tensor<1x1x{n}xf32>"
        self.bias = f"tensor<1x1x{n}x{n}xf32>"
        self.mask = f"tensor<1x1x{n}x{n}xi1>"
        # A packed batch's offsets: [B + 1], B a kernel argument too.
        self.cu = "tensor<?xi32>"
        # FP8 descales per head, [B, H] (H = Hq = Hkv = 1 here), or per
        # block [B, H, N].
        self.descale = self.k_descale = "tensor<1x1xf32>"
        if v.fp8 and v.descale_blocks:
            bq, bk = v.descale_blocks
            self.descale = f"tensor<1x1x{-(-n // bq)}xf32>"
            self.k_descale = f"tensor<1x1x{-(-n // bk)}xf32>"
        # Block-sparse lists [1, 1, QB(, N)]: their sizes and strides are
        # kernel arguments.
        qb = -(-n // v.sparse_blocks[0])
        kb = -(-n // v.sparse_blocks[1])
        self.num = f"tensor<1x1x{qb}xi32>"
        self.idx = f"tensor<1x1x{qb}x{kb}xi32>"
        # ALiBi slopes, [Hq] or [B, Hq]: dynamic, like the kernels' sizes.
        self.slopes = "tensor<?xf32>" if v.alibi == 1 else "tensor<?x?xf32>"


def _optional_operands(v, ty):
    """(function arguments, the op's optional operand clauses) for bias,
    mask and the dropout seed."""
    args, uses = [], []
    if v.bias:
        args.append(f"%b: {ty.bias}")
        uses.append(f"bias(%b : {ty.bias})")
    if v.mask:
        args.append(f"%m: {ty.mask}")
        uses.append(f"mask(%m : {ty.mask})")
    if v.dropout:
        args.append("%s: i64")
        uses.append("seed(%s)")
    if v.varlen:
        args += [f"%cu_q: {ty.cu}", f"%cu_k: {ty.cu}"]
        uses.append(f"varlen(%cu_q, %cu_k : {ty.cu}, {ty.cu})")
    if v.block_sparse:
        args += [f"%kvn: {ty.num}", f"%kvi: {ty.idx}"]
        uses.append(f"block_sparse(%kvn, %kvi : {ty.num}, {ty.idx})")
    if v.block_sparse == 2:
        args += [f"%fkvn: {ty.num}", f"%fkvi: {ty.idx}"]
        uses.append(f"full_blocks(%fkvn, %fkvi : {ty.num}, {ty.idx})")
    if v.fp8:
        # After every optional operand clause: FlashOps.td's assembly format
        # reads `descale(...)` last.
        d, kd = ty.descale, ty.k_descale
        args += [f"%qd: {d}", f"%kd: {kd}", f"%vd: {kd}"]
        uses.append(f"descale(%qd, %kd, %vd : {d}, {kd}, {kd})")
    return args, uses


def _op(head, uses, attrs, signature):
    return " ".join([head] + uses + ([attrs] if attrs else [])
                    + [":", signature])


# The longest sequence (keys or queries) whose ALiBi distances the kernels
# compute exactly: they take them in f32 from integers below 2^24.
ALIBI_MAX_SEQ = 1 << 24


def _alibi(v, ty):
    """(function arguments, operand clause) of v's ALiBi: the op's
    `alibi(...)` operand (FlashOps.td), flash-attn's bias -slopes[h] *
    |i + Sk - Sq - j|, the distance from the bottom-right diagonal whatever
    the causal mask's alignment (per packed sequence with varlen). The GPU
    kernels add it natively; the CPU lowerings fold it into score_mod."""
    if not v.alibi:
        return [], []
    return ([f"%alibi_slopes: {ty.slopes}"],
            [f"alibi(%alibi_slopes : {ty.slopes})"])


def emit_forward(v, symbol=None):
    """func @symbol (default v.name) computing v's flash.attention."""
    ty = _Types(v)
    args, uses = _optional_operands(v, ty)
    alibi_args, alibi_uses = _alibi(v, ty)
    params = ", ".join([f"%q: {ty.q}", f"%k: {ty.q}", f"%v: {ty.v}"] + args
                       + alibi_args)
    results = f"{ty.o}, {ty.lse}"
    op = _op("%o, %lse = flash.attention %q, %k, %v", uses + alibi_uses,
             attributes(v), f"{ty.q}, {ty.q}, {ty.v} -> {results}")
    return (f"func.func @{symbol or v.name}({params}) -> ({results}) {{\n"
            f"  {op}\n"
            f"  return %o, %lse : {results}\n}}\n")


def emit_backward(v):
    """func @grad_<name> computing v's flash.attention_grad (with a bias:
    full size, and dBias requested so that the kernels compute it), and
    with v.with_forward also @fwd_<name>, its forward."""
    if v.fp8:
        raise ValueError(f"variant {v.name}: FP8 attention has no backward "
                         "(flash.attention_grad refuses e4m3)")
    ty = _Types(v)
    args, uses = _optional_operands(v, ty)
    alibi_args, alibi_uses = _alibi(v, ty)
    params = ", ".join([f"%do: {ty.v}", f"%q: {ty.q}", f"%k: {ty.q}",
                        f"%v: {ty.v}", f"%o: {ty.v}", f"%lse: {ty.lse}"]
                       + args + alibi_args)
    res = [ty.q, ty.q, ty.v] + ([ty.bias] if v.bias else [])
    names = ["%dq", "%dk", "%dv"] + (["%db"] if v.bias else [])
    op = _op(f"{', '.join(names)} = flash.attention_grad "
             "%do, %q, %k, %v, %o, %lse", uses + alibi_uses, attributes(v),
             f"{ty.v}, {ty.q}, {ty.q}, {ty.v}, {ty.v}, {ty.lse} -> "
             + ", ".join(res))
    out = (f"func.func @grad_{v.name}({params}) -> ({', '.join(res)}) {{\n"
           f"  {op}\n"
           f"  return {', '.join(names)} : {', '.join(res)}\n}}\n")
    if v.with_forward:
        # The forward keeps the tiles flash-select-config gives it: the
        # variant's tiles may be a backward-only shape (more warps than
        # block_m has 16-row slabs), and the dropout keep test is per
        # element, independent of tiling. Its O is what the gradient takes:
        # the inputs' dtype, whatever out_dtype says.
        out += emit_forward(dataclasses.replace(v, tiles=None, out_dtype=None),
                            symbol=f"fwd_{v.name}")
    return out


# --- Attention over a KV cache (docs/KVCACHE.md) ----------------------------

# The sizes the kvcache IR is written with. Like the forward's lengths they
# are kernel arguments, but flash-select-config applies the split rule
# (decode_splits.h) to static sizes, and flash-lower-to-gpu emits the
# decode_combine kernel only for a config with more than one split: one
# sequence of one kv head over 4096 keys splits on every target (one block
# against a GPU of SMs, 64 key blocks), so the artifact always holds both
# kinds the runtime launches.
_KV_CAPACITY = 4096


@dataclasses.dataclass(frozen=True)
class KVCacheVariant:
    """One flash.attention_kvcache kernel variant: its decode kernel and the
    decode_combine of its dtype and Dv. `causal` is None or "bottom_right"
    (the op rejects top_left); `page_size` 0 for a contiguous cache, else
    the rows per page of a paged one; `window` and `softcap` switch those
    features on (their values are run-time parameters). `kv_dtype` "e4m3"
    makes the caches f8E4M3FN with their descale operands (docs/KVCACHE.md
    "FP8 cache"; the kernel reads per-head and per-tensor descales alike,
    through strides), "" keeps them in `dtype`. `leftpad` gives the op
    its cache_leftpad operand (each sequence's first row: a left-padded
    batch, flash-attn's cache_leftpad); `alibi` 1 or 2 its alibi_slopes
    operand, f32 [Hq] or [B, Hq] (flash-attn's alibi_slopes), 0 none;
    `rotary_dim` > 0 gives it new_kv and rotary operands (flash-attn's
    rotary_cos / rotary_sin over rotary_dim elements, GPT-J pairs with
    `rotary_interleaved`): its kv_append rotates the new keys and the query
    (docs/KVCACHE.md "Rotary embedding"); `batch_idx` its cache_batch_idx
    operand over contiguous caches that hold a pool of sequences (flash-
    attn's cache_batch_idx; docs/KVCACHE.md "A pool of sequences")."""

    name: str
    dtype: str
    head_dim: int
    head_dim_v: Optional[int] = None  # None: equal to head_dim
    causal: Optional[str] = None
    window: Optional[Tuple[int, int]] = None
    softcap: Optional[float] = None
    page_size: int = 0
    kv_dtype: str = ""
    leftpad: bool = False
    alibi: int = 0
    rotary_dim: int = 0
    rotary_interleaved: bool = False
    batch_idx: bool = False
    # (block_m, block_n, warps, stages) of the decode kernel, or None for
    # flash-select-config's choice.
    tiles: Optional[Tuple[int, int, int, int]] = None

    def __post_init__(self):
        _check_tiles(self.tiles, "a kvcache variant's")
        if self.dtype == "e4m3":
            raise ValueError("a kvcache variant's dtype must be f16 or bf16 "
                             "(flash.attention_kvcache refuses FP8 queries; "
                             "an FP8 cache is kv_dtype='e4m3')")
        if self.alibi not in (0, 1, 2):
            raise ValueError("a kvcache variant's alibi must be 0, 1 ([Hq] "
                             f"slopes) or 2 ([B, Hq]), got {self.alibi!r}")
        if (not isinstance(self.rotary_dim, int) or self.rotary_dim < 0
                or self.rotary_dim % 16
                or self.rotary_dim > self.head_dim):
            raise ValueError("a kvcache variant's rotary_dim must be 0 or a "
                             "multiple of 16 up to head_dim (kv_append rotates "
                             f"16-byte pieces), got {self.rotary_dim!r}")
        if self.rotary_interleaved and not self.rotary_dim:
            raise ValueError("a kvcache variant's rotary_interleaved needs "
                             "rotary_dim")
        if self.batch_idx and self.page_size:
            raise ValueError("a kvcache variant's batch_idx is for a "
                             "contiguous cache (a paged one names its rows "
                             "through the block table)")
        if self.kv_dtype not in ("", "e4m3"):
            raise ValueError("a kvcache variant's kv_dtype must be '' (the "
                             f"query's dtype) or 'e4m3', got {self.kv_dtype!r}")
        base = KernelVariant(self.name, self.dtype, self.head_dim,
                             self.head_dim_v, window=self.window,
                             softcap=self.softcap)
        object.__setattr__(self, "head_dim_v", base.head_dim_v)
        if self.causal not in (None, "bottom_right"):
            raise ValueError("a kvcache variant's causal must be None or "
                             f"'bottom_right', got {self.causal!r}")
        if (not isinstance(self.page_size, int) or self.page_size < 0
                or (self.page_size and _KV_CAPACITY % self.page_size)):
            raise ValueError("a kvcache variant's page_size must be 0 or a "
                             f"positive divisor of {_KV_CAPACITY}, got "
                             f"{self.page_size!r}")


def emit_kvcache(v, symbol=None):
    """func @symbol (default v.name) computing v's flash.attention_kvcache,
    with the syntax of docs/KVCACHE.md (O and LSE results; a paged cache
    [num_pages, page_size, Hkv, D] with its block_table)."""
    t = v.dtype
    c = "f8E4M3FN" if v.kv_dtype == "e4m3" else t  # the caches' type
    # 16 query heads over the cache's one: the kernel serves any number of
    # rows, and flash-select-config gives 16 packed rows the tiles of
    # 16-row blocks (at 8 or fewer it would take those of 8, which serve
    # more rows only by reading K and V once per 8).
    q = f"tensor<1x16x1x{v.head_dim}x{t}>"
    o = f"tensor<1x16x1x{v.head_dim_v}x{t}>"
    lse = "tensor<1x16x1xf32>"
    lengths = "tensor<1xi32>"
    if v.page_size:
        pages = _KV_CAPACITY // v.page_size
        k = f"tensor<{pages}x{v.page_size}x1x{v.head_dim}x{c}>"
        vc = f"tensor<{pages}x{v.page_size}x1x{v.head_dim_v}x{c}>"
        table = f"tensor<1x{pages}xi32>"
        args = [f"%bt: {table}"]
        uses = [f"block_table(%bt : {table})"]
    else:
        # A pool holds two sequences' caches for the one of the batch.
        pool = 2 if v.batch_idx else 1
        k = f"tensor<{pool}x1x{_KV_CAPACITY}x{v.head_dim}x{c}>"
        vc = f"tensor<{pool}x1x{_KV_CAPACITY}x{v.head_dim_v}x{c}>"
        args, uses = [], []
    if v.leftpad:
        args.append(f"%lp: {lengths}")
        uses.append(f"cache_leftpad(%lp : {lengths})")
    if v.batch_idx:
        args.append(f"%bidx: {lengths}")
        uses.append(f"cache_batch_idx(%bidx : {lengths})")
    if v.kv_dtype:
        ds = "tensor<1x1xf32>"  # [B, Hkv]
        args += [f"%kd: {ds}", f"%vd: {ds}"]
        uses.append(f"descale(%kd, %vd : {ds}, {ds})")
    if v.alibi:
        slopes = "tensor<16xf32>" if v.alibi == 1 else "tensor<1x16xf32>"
        args.append(f"%slopes: {slopes}")
        uses.append(f"alibi(%slopes : {slopes})")
    if v.rotary_dim:
        # One new row; the rotary tables cover the capacity. new_kv goes
        # before descale and alibi in the op's syntax.
        kn = f"tensor<1x1x1x{v.head_dim}x{t}>"
        vn = f"tensor<1x1x1x{v.head_dim_v}x{t}>"
        table = f"tensor<{_KV_CAPACITY}x{v.rotary_dim // 2}x{t}>"
        args += [f"%kn: {kn}", f"%vn: {vn}", f"%rc: {table}",
                 f"%rs: {table}"]
        uses.insert(len(uses) - bool(v.kv_dtype) - bool(v.alibi),
                    f"new_kv(%kn, %vn : {kn}, {vn})")
        uses.append(f"rotary(%rc, %rs : {table}, {table})")
    params = ", ".join([f"%q: {q}", f"%k: {k}", f"%v: {vc}",
                        f"%lens: {lengths}"] + args)
    results = f"{o}, {lse}"
    # The attributes the two ops share are written the same way.
    attrs = attributes(KernelVariant(v.name, v.dtype, v.head_dim,
                                     v.head_dim_v, causal=v.causal,
                                     window=v.window, softcap=v.softcap))
    if v.tiles:
        bm, bn, w, st = v.tiles
        config = (f"config = #flash.config<decode, block_m = {bm}, "
                  f"block_n = {bn}, warps = {w}, stages = {st}>")
        attrs = "{" + ", ".join(([attrs[1:-1]] if attrs else []) + [config]) + "}"
    if v.rotary_interleaved:
        attrs = "{" + ", ".join(([attrs[1:-1]] if attrs else [])
                                + ["rotary_interleaved"]) + "}"
    if v.rotary_dim:  # with new_kv the updated caches are results too
        op = _op("%o, %lse, %kc, %vc = flash.attention_kvcache %q, %k, %v, "
                 "%lens", uses, attrs,
                 f"{q}, {k}, {vc}, {lengths} -> {results}, {k}, {vc}")
    else:
        op = _op("%o, %lse = flash.attention_kvcache %q, %k, %v, %lens", uses,
                 attrs, f"{q}, {k}, {vc}, {lengths} -> {results}")
    return (f"func.func @{symbol or v.name}({params}) -> ({results}) {{\n"
            f"  {op}\n"
            f"  return %o, %lse : {results}\n}}\n")


def emit_module(variants, backward=False, header=""):
    """The module of `variants`: their forward ops, or with `backward` their
    gradient ops (and the forwards they ask for); KVCacheVariants are
    always their flash.attention_kvcache."""
    emit = emit_backward if backward else emit_forward
    return header + "".join(
        emit_kvcache(v) if isinstance(v, KVCacheVariant) else emit(v)
        for v in variants)


# --- Variants of the runtime's kernel lookup -------------------------------

def from_runtime(variant):
    """(KernelVariant, backward) for a _runtime.Variant: the forward op for
    kind forward, the gradient op for the backward kinds (compiling it gives
    every kernel of the backward sequence), and (KVCacheVariant, False) for
    the decode kinds (compiling it gives the decode kernel, its combine,
    the kv_append and the decode_check of its cache). Flags become
    representative values; the kernels take the real ones as parameters.
    out_f32 (forward only) becomes out_dtype "f32", and an e4m3 forward's
    out_dtype its name ("bf16", "f16")."""
    dtype = rt._DTYPE_NAMES.get(variant.dtype)
    causal = rt._CAUSAL_NAMES.get(variant.causal)
    if dtype is None or causal is None:
        raise ValueError(f"not a kernel variant: {variant.describe()}")
    backward = variant.kind != rt.KIND_FORWARD
    fp8_out = None
    if variant.dtype == rt.DTYPE_E4M3:
        fp8_out = rt._DTYPE_NAMES.get(variant.out_dtype)
        if backward or fp8_out not in FP8_OUT_DTYPES:
            raise ValueError(f"not a kernel variant: {variant.describe()} "
                             "(e4m3 kernels are forwards with a bf16 or f16 "
                             "O)")
    if variant.out_f32 and backward:
        raise ValueError(f"not a kernel variant: {variant.describe()} (only "
                         "forward kernels write an f32 O)")
    if variant.kind in (rt.KIND_DECODE, rt.KIND_DECODE_COMBINE,
                        rt.KIND_KV_APPEND, rt.KIND_DECODE_CHECK):
        return _kvcache_from_runtime(variant, dtype, causal), False
    varlen = bool(variant.varlen)
    block_sparse = int(getattr(variant, "block_sparse", 0))
    sparse_blocks = (variant.sparse_block_q, variant.sparse_block_k) \
        if block_sparse else (128, 128)
    flags = [f for f in ("window", "softcap", "bias", "mask", "dropout")
             if getattr(variant, f)] + (["of32"] if variant.out_f32 else []) \
        + (["varlen"] if varlen else []) + ([f"o{fp8_out}"] if fp8_out else []) \
        + ([f"bs{block_sparse}_{sparse_blocks[0]}x{sparse_blocks[1]}"]
           if block_sparse else [])
    # An e4m3 forward of per-block descales.
    descale_blocks = ((variant.descale_block_q, variant.descale_block_k)
                      if getattr(variant, "descale_block_k", 0) else None)
    if descale_blocks:
        flags.append(f"ds{descale_blocks[0]}x{descale_blocks[1]}")
    dims = [f"d{variant.head_dim}"] + (
        [f"dv{variant.head_dim_v}"]
        if variant.head_dim_v != variant.head_dim else [])
    v = KernelVariant(
        name="_".join([dtype] + dims
                      + [causal if causal != "none" else "full"] + flags),
        dtype=dtype, head_dim=variant.head_dim,
        head_dim_v=variant.head_dim_v,
        causal=None if causal == "none" else causal,
        window=(0, 0) if variant.window else None,
        softcap=1.0 if variant.softcap else None,
        bias=bool(variant.bias), mask=bool(variant.mask),
        dropout=0.5 if variant.dropout else None,
        out_dtype="f32" if variant.out_f32 else fp8_out, varlen=varlen,
        block_sparse=block_sparse, sparse_blocks=sparse_blocks,
        descale_blocks=descale_blocks)
    return v, backward


def _kvcache_from_runtime(variant, dtype, causal):
    """The KVCacheVariant whose compile holds a decode kernel of `variant`
    (kind decode) or, for kind decode_combine (which depends on the dtype
    and Dv only), any decode kernel of that dtype and Dv with it."""
    if variant.kind == rt.KIND_DECODE_COMBINE:
        return KVCacheVariant(f"kv_{dtype}_d{variant.head_dim_v}_combine",
                              dtype, variant.head_dim_v)
    # An FP8 cache (kv_dtype e4m3): its op reads f8E4M3FN caches.
    fp8_cache = getattr(variant, "kv_dtype", 0) == rt.DTYPE_E4M3
    # A pool of sequences' caches (cache_batch_idx): all three kinds.
    pool = bool(getattr(variant, "batch_idx", 0))
    if variant.kind in (rt.KIND_KV_APPEND, rt.KIND_DECODE_CHECK):
        # flash-lower-to-gpu builds both next to every decode kernel of the
        # same dtype, head dim, page size and (the append) cache dtype.
        kind = "append" if variant.kind == rt.KIND_KV_APPEND else "check"
        page = f"_page{variant.page_size}" if variant.page_size else ""
        prefix = "kvf8" if fp8_cache else "kv"
        return KVCacheVariant(
            f"{prefix}_{dtype}_d{variant.head_dim}_{kind}{page}"
            f"{'_pool' if pool else ''}", dtype,
            variant.head_dim, page_size=variant.page_size,
            kv_dtype="e4m3" if fp8_cache else "", batch_idx=pool)
    if causal == "top_left" or variant.bias or variant.mask or variant.dropout:
        raise ValueError(f"no flash.attention_kvcache computes "
                         f"'{variant.describe()}' (decode kernels are causal "
                         "none or bottom_right, without bias, mask or "
                         "dropout)")
    flags = [f for f in ("window", "softcap") if getattr(variant, f)]
    dims = [f"d{variant.head_dim}"] + (
        [f"dv{variant.head_dim_v}"]
        if variant.head_dim_v != variant.head_dim else [])
    page = [f"page{variant.page_size}"] if variant.page_size else []
    leftpad = bool(getattr(variant, "leftpad", 0))
    alibi = int(getattr(variant, "alibi", 0))
    return KVCacheVariant(
        name="_".join(["kvf8" if fp8_cache else "kv", dtype] + dims
                      + [causal if causal != "none" else "full"] + flags
                      + page + (["leftpad"] if leftpad else [])
                      + ([f"alibi{alibi}"] if alibi else [])
                      + (["pool"] if pool else [])),
        dtype=dtype, head_dim=variant.head_dim,
        head_dim_v=variant.head_dim_v,
        causal=None if causal == "none" else causal,
        window=(0, 0) if variant.window else None,
        softcap=1.0 if variant.softcap else None,
        page_size=variant.page_size, kv_dtype="e4m3" if fp8_cache else "",
        leftpad=leftpad, alibi=alibi, batch_idx=pool)
