"""ctypes binding of libflashfuse_runtime.so (runtime/include/flashfuse/runtime.h).

Needs neither torch nor a GPU: manifests can be parsed anywhere. The
structures below mirror the C declarations field by field; keep them in step.
"""

import ctypes
import os
import pathlib
import struct
import threading

from .errors import RuntimeLibraryNotFound, error_for_status

LIBRARY_NAME = "libflashfuse_runtime.so"

DTYPE_F16, DTYPE_BF16 = 0, 1
# float8 e4m3 Q, K, V of an FP8 forward (KERNEL_ABI.md "FP8 forwards"),
# whose O is bf16 or f16 (Variant.out_dtype).
DTYPE_E4M3 = 2
CAUSAL_NONE, CAUSAL_TOP_LEFT, CAUSAL_BOTTOM_RIGHT = 0, 1, 2
KIND_FORWARD, KIND_BACKWARD_PREPROCESS, KIND_BACKWARD = 0, 1, 2
# docs/KERNEL_ABI.md's manifest `kind` values, in order; a runtime built
# before backward_dq/backward_postprocess existed rejects manifests that list
# them (_kernels.locate reports that per artifact directory).
KIND_BACKWARD_DQ, KIND_BACKWARD_POSTPROCESS = 3, 4
# Attention over a KV cache (docs/KVCACHE.md): the split-KV decode and the
# combine that merges its splits.
KIND_DECODE, KIND_DECODE_COMBINE = 5, 6
# The append of new K/V rows to the cache and the device-side check of the
# lengths and the page table.
KIND_KV_APPEND, KIND_DECODE_CHECK = 7, 8
# The block-sparse backward's transposition of the forward's lists.
KIND_BACKWARD_SPARSE_TRANSPOSE = 9
PARAM_MEMREF, PARAM_I32, PARAM_I64, PARAM_F32 = 0, 1, 2, 3
# A TMA tensor map the runtime encodes from its operand's arguments.
PARAM_TENSORMAP = 4

_DTYPE_NAMES = {DTYPE_F16: "f16", DTYPE_BF16: "bf16", DTYPE_E4M3: "e4m3"}
_CAUSAL_NAMES = {CAUSAL_NONE: "none", CAUSAL_TOP_LEFT: "top_left",
                 CAUSAL_BOTTOM_RIGHT: "bottom_right"}
_KIND_NAMES = {KIND_FORWARD: "forward",
               KIND_BACKWARD_PREPROCESS: "backward_preprocess",
               KIND_BACKWARD: "backward",
               KIND_BACKWARD_DQ: "backward_dq",
               KIND_BACKWARD_POSTPROCESS: "backward_postprocess",
               KIND_DECODE: "decode", KIND_DECODE_COMBINE: "decode_combine",
               KIND_KV_APPEND: "kv_append", KIND_DECODE_CHECK: "decode_check",
               KIND_BACKWARD_SPARSE_TRANSPOSE: "backward_sparse_transpose"}
_PARAM_NAMES = {PARAM_MEMREF: "memref", PARAM_I32: "i32", PARAM_I64: "i64",
                PARAM_F32: "f32", PARAM_TENSORMAP: "tensormap"}


class Variant(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("dtype", ctypes.c_int),
                ("head_dim", ctypes.c_int32), ("head_dim_v", ctypes.c_int32),
                ("causal", ctypes.c_int), ("window", ctypes.c_int32),
                ("softcap", ctypes.c_int32), ("bias", ctypes.c_int32),
                ("mask", ctypes.c_int32), ("dropout", ctypes.c_int32),
                ("page_size", ctypes.c_int32), ("out_f32", ctypes.c_int32),
                ("varlen", ctypes.c_int32),
                # O's dtype of an e4m3 forward; 0 for every other kernel.
                ("out_dtype", ctypes.c_int),
                ("block_sparse", ctypes.c_int32),
                ("sparse_block_q", ctypes.c_int32),
                ("sparse_block_k", ctypes.c_int32),
                # decode, kv_append: DTYPE_E4M3 for an FP8 cache (manifest
                # kv_dtype e4m3); 0 for a cache of `dtype` and every other
                # kernel.
                ("kv_dtype", ctypes.c_int),
                # e4m3 forwards with per-block descales: the rows of Q and
                # of K/V one factor covers; 0 for every other kernel.
                ("descale_block_q", ctypes.c_int32),
                ("descale_block_k", ctypes.c_int32),
                # decode: 1 for a kernel over a left-padded cache (its
                # params take cache_leftpad); 0 for every other kernel.
                ("leftpad", ctypes.c_int32),
                # decode: ALiBi, its slopes [Hq] (1) or [B, Hq] (2) (its
                # params take alibi_slopes); 0 for every other kernel.
                ("alibi", ctypes.c_int32),
                # decode, kv_append, decode_check: 1 for a kernel over a
                # pool of sequences' caches (its params take
                # cache_batch_idx and cache_batch); 0 for every other one.
                ("batch_idx", ctypes.c_int32)]

    def describe(self):
        flags = [f for f in ("window", "softcap", "bias", "mask", "dropout")
                 if getattr(self, f)]
        page = [f"page_size={self.page_size}"] if self.page_size else []
        if self.kv_dtype:
            page.append(f"kv={_DTYPE_NAMES.get(self.kv_dtype, '?')}")
        if self.leftpad:
            page.append("leftpad")
        if self.alibi:
            page.append("alibi=[B,Hq]" if self.alibi == 2 else "alibi=[Hq]")
        if self.batch_idx:
            page.append("pool")
        out = (["out=f32"] if self.out_f32 else
               [f"out={_DTYPE_NAMES.get(self.out_dtype, '?')}"]
               if self.dtype == DTYPE_E4M3 else [])
        return " ".join([_KIND_NAMES.get(self.kind, "?"),
                         _DTYPE_NAMES.get(self.dtype, "?"),
                         f"D={self.head_dim}", f"Dv={self.head_dim_v}",
                         f"causal={_CAUSAL_NAMES.get(self.causal, '?')}"]
                        + flags + page + out
                        + (["varlen"] if self.varlen else [])
                        + ([f"block_sparse={self.block_sparse} "
                            f"blocks={self.sparse_block_q}x{self.sparse_block_k}"]
                           if self.block_sparse else [])
                        + ([f"descale_blocks={self.descale_block_q}x"
                            f"{self.descale_block_k}"]
                           if self.descale_block_k else []))

    def key(self):
        return tuple(getattr(self, name) for name, _ in self._fields_)


class KernelInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("variant", Variant),
                ("block_m", ctypes.c_int32), ("block_n", ctypes.c_int32),
                ("threads", ctypes.c_int32), ("smem", ctypes.c_int32),
                ("num_params", ctypes.c_int32)]


_I64x4 = ctypes.c_int64 * 4
_I64x2 = ctypes.c_int64 * 2


class ForwardArgs(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int),
                ("q", ctypes.c_void_p), ("k", ctypes.c_void_p),
                ("v", ctypes.c_void_p), ("o", ctypes.c_void_p),
                ("lse", ctypes.c_void_p), ("bias", ctypes.c_void_p),
                ("mask", ctypes.c_void_p),
                ("batch", ctypes.c_int64), ("heads_q", ctypes.c_int64),
                ("heads_kv", ctypes.c_int64), ("seq_q", ctypes.c_int64),
                ("seq_k", ctypes.c_int64), ("head_dim", ctypes.c_int64),
                ("head_dim_v", ctypes.c_int64),
                ("q_stride", _I64x4), ("k_stride", _I64x4),
                ("v_stride", _I64x4), ("o_stride", _I64x4),
                ("bias_stride", _I64x4), ("mask_stride", _I64x4),
                ("scale", ctypes.c_float),
                ("window_left", ctypes.c_int32),
                ("window_right", ctypes.c_int32),
                ("softcap", ctypes.c_float), ("dropout_p", ctypes.c_float),
                ("seed", ctypes.c_uint64), ("out_f32", ctypes.c_int32),
                # FP8 forwards: O's dtype, and the f32 descale buffers with
                # their [b, h] strides (`v` is then Vt [B, Hkv, Dv, Sk_pad]
                # in the kernels' key order: fp8.prepare_vt).
                ("out_dtype", ctypes.c_int),
                ("q_descale", ctypes.c_void_p),
                ("k_descale", ctypes.c_void_p),
                ("v_descale", ctypes.c_void_p),
                ("q_descale_stride", _I64x2), ("k_descale_stride", _I64x2),
                ("v_descale_stride", _I64x2),
                # Per-block descales: the stride between blocks (0 for a
                # descale per tensor or per head).
                ("q_descale_stride_block", ctypes.c_int64),
                ("k_descale_stride_block", ctypes.c_int64),
                ("v_descale_stride_block", ctypes.c_int64)]


class BackwardArgs(ctypes.Structure):
    """flashfuse_backward_args (runtime.h): the tensors, scratch, sizes and
    options of a backward launch sequence."""
    _fields_ = [("dtype", ctypes.c_int),
                ("q", ctypes.c_void_p), ("k", ctypes.c_void_p),
                ("v", ctypes.c_void_p), ("o", ctypes.c_void_p),
                ("dout", ctypes.c_void_p), ("lse", ctypes.c_void_p),
                ("grad_q", ctypes.c_void_p), ("grad_k", ctypes.c_void_p),
                ("grad_v", ctypes.c_void_p), ("delta", ctypes.c_void_p),
                ("dq_accum", ctypes.c_void_p), ("dk", ctypes.c_void_p),
                ("dv", ctypes.c_void_p),
                ("batch", ctypes.c_int64), ("heads_q", ctypes.c_int64),
                ("heads_kv", ctypes.c_int64), ("seq_q", ctypes.c_int64),
                ("seq_k", ctypes.c_int64), ("head_dim", ctypes.c_int64),
                ("head_dim_v", ctypes.c_int64),
                ("q_stride", _I64x4), ("k_stride", _I64x4),
                ("v_stride", _I64x4), ("o_stride", _I64x4),
                ("do_stride", _I64x4), ("grad_q_stride", _I64x4),
                ("grad_k_stride", _I64x4), ("grad_v_stride", _I64x4),
                ("scale", ctypes.c_float),
                ("window_left", ctypes.c_int32),
                ("window_right", ctypes.c_int32),
                ("softcap", ctypes.c_float),
                # Appended last in flashfuse_backward_args too.
                ("dropout_p", ctypes.c_float), ("seed", ctypes.c_uint64)]


class BackwardKernels(ctypes.Structure):
    """flashfuse_backward_kernels (runtime.h): kernel handles, backward_dq
    None outside deterministic artifacts."""
    _fields_ = [("preprocess", ctypes.c_void_p),
                ("backward", ctypes.c_void_p),
                ("backward_dq", ctypes.c_void_p),
                ("postprocess", ctypes.c_void_p)]


class VarlenArgs(ctypes.Structure):
    """flashfuse_varlen_args (runtime.h): a packed batch's offsets (device
    pointers to i32 [num_seqs + 1]) and bounds."""
    _fields_ = [("cu_seqlens_q", ctypes.c_void_p),
                ("cu_seqlens_k", ctypes.c_void_p),
                ("num_seqs", ctypes.c_int64), ("max_seqlen_q", ctypes.c_int64),
                ("max_seqlen_k", ctypes.c_int64)]


class DecodeArgs(ctypes.Structure):
    """flashfuse_decode_args (runtime.h): strides [b, h, s, d], for a paged
    cache [page, h, row of the page, d]."""
    _fields_ = [("dtype", ctypes.c_int),
                ("q", ctypes.c_void_p), ("k_cache", ctypes.c_void_p),
                ("v_cache", ctypes.c_void_p), ("o", ctypes.c_void_p),
                ("lse", ctypes.c_void_p), ("cache_seqlens", ctypes.c_void_p),
                ("block_table", ctypes.c_void_p),
                ("batch", ctypes.c_int64), ("heads_q", ctypes.c_int64),
                ("heads_kv", ctypes.c_int64), ("seq_q", ctypes.c_int64),
                ("head_dim", ctypes.c_int64), ("head_dim_v", ctypes.c_int64),
                ("seq_new", ctypes.c_int64), ("cache_len", ctypes.c_int64),
                ("page_size", ctypes.c_int64), ("num_pages", ctypes.c_int64),
                ("max_pages", ctypes.c_int64),
                ("block_table_stride", ctypes.c_int64),
                ("q_stride", _I64x4), ("k_stride", _I64x4),
                ("v_stride", _I64x4), ("o_stride", _I64x4),
                ("scale", ctypes.c_float),
                ("window_left", ctypes.c_int32),
                ("window_right", ctypes.c_int32),
                ("softcap", ctypes.c_float), ("num_splits", ctypes.c_int32),
                ("k_new", ctypes.c_void_p), ("v_new", ctypes.c_void_p),
                ("k_new_stride", _I64x4), ("v_new_stride", _I64x4),
                # An FP8 cache (kv_dtype DTYPE_E4M3): one byte an element,
                # f32 descales, element (b, hkv) at b * stride[0] + hkv *
                # stride[1]. 0 / null: the caches have `dtype`.
                ("kv_dtype", ctypes.c_int),
                ("k_descale", ctypes.c_void_p), ("v_descale", ctypes.c_void_p),
                ("k_descale_stride", _I64x2), ("v_descale_stride", _I64x2),
                # i32 [B]: each sequence's first row (a decode kernel of
                # variant leftpad 1); null for every other kernel.
                ("cache_leftpad", ctypes.c_void_p),
                # f32 [Hq] or [B, Hq], contiguous: ALiBi's slopes (a
                # decode kernel of variant alibi 1 or 2); null otherwise.
                ("alibi_slopes", ctypes.c_void_p),
                # A pool of sequences (kernels of variant batch_idx 1): i32
                # [B], sequence b's row of the caches, and the caches' dim
                # 0 (the pool's size); null / 0 for every other kernel.
                ("cache_batch_idx", ctypes.c_void_p),
                ("cache_batch", ctypes.c_int64)]


# flashfuse_decode_addresses (runtime.h): one step of a DecodePlan, twelve
# pointers, a size and three pointers in this order, packed natively into bytes
# with one pack call (a ctypes Structure built from keywords cost a
# decoding step ~1.4 us more). An absent address is 0 (NULL).
DECODE_ADDRESS_FIELDS = ("q", "k_cache", "v_cache", "o", "lse",
                         "cache_seqlens", "block_table", "k_new", "v_new",
                         "k_descale", "v_descale", "workspace",
                         "workspace_bytes", "cache_leftpad", "alibi_slopes",
                         "cache_batch_idx")
_DECODE_ADDRESSES = struct.Struct("@12PN3P")
# (q, k_cache, v_cache, o, lse, cache_seqlens, block_table, k_new, v_new,
#  k_descale, v_descale, workspace, workspace_bytes, cache_leftpad,
#  alibi_slopes, cache_batch_idx) ->
# bytes, all ints.
pack_decode_addresses = _DECODE_ADDRESSES.pack
# The bytes back to the ints, in DECODE_ADDRESS_FIELDS' order (what a dry
# run checks in place of a launch).
unpack_decode_addresses = _DECODE_ADDRESSES.unpack


def decode_addresses(**fields):
    """flashfuse_decode_addresses as bytes for DecodePlan.launch, from
    keywords named as its fields (absent or None: 0)."""
    unknown = fields.keys() - set(DECODE_ADDRESS_FIELDS)
    if unknown:
        raise TypeError(f"decode_addresses: no field {sorted(unknown)}")
    return pack_decode_addresses(*(fields.get(name) or 0
                                   for name in DECODE_ADDRESS_FIELDS))


class Arg(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_int),
                ("ptr", ctypes.c_void_p), ("numel", ctypes.c_int64),
                ("i", ctypes.c_int64), ("f", ctypes.c_double)]


def _candidate_paths():
    env = os.environ.get("FLASHFUSE_RUNTIME_LIB")
    if env:
        # An explicit choice is the only candidate: silently falling back to
        # another build would hide a wrong setting.
        return [pathlib.Path(env)]
    here = pathlib.Path(__file__).resolve().parent
    repo = here.parent.parent
    return [here / LIBRARY_NAME,                     # installed next to us
            repo / "build-rt" / "lib" / LIBRARY_NAME,  # runtime-only build
            repo / "build" / "lib" / LIBRARY_NAME]     # full build


_lib = None
_lib_lock = threading.Lock()


def _declare(lib):
    P = ctypes.POINTER
    vp = ctypes.c_void_p
    st = ctypes.c_int
    sigs = {
        "flashfuse_last_error": (ctypes.c_char_p, []),
        "flashfuse_status_name": (ctypes.c_char_p, [st]),
        "flashfuse_manifest_open": (st, [ctypes.c_char_p, P(vp)]),
        "flashfuse_manifest_parse": (st, [ctypes.c_char_p, ctypes.c_char_p, P(vp)]),
        "flashfuse_manifest_close": (None, [vp]),
        "flashfuse_manifest_arch": (st, [vp, P(ctypes.c_int32)]),
        "flashfuse_manifest_kernel_count": (st, [vp, P(ctypes.c_int32)]),
        "flashfuse_manifest_kernel_info": (st, [vp, ctypes.c_int32, P(KernelInfo)]),
        "flashfuse_manifest_kernel_param": (
            st, [vp, ctypes.c_int32, ctypes.c_int32, P(ctypes.c_int),
                 P(ctypes.c_char_p)]),
        "flashfuse_manifest_kernel_bound_count": (
            st, [vp, ctypes.c_int32, P(ctypes.c_int32), P(ctypes.c_int32)]),
        "flashfuse_manifest_kernel_bound_for": (
            st, [vp, ctypes.c_int32, ctypes.c_int32, P(ctypes.c_char_p),
                 P(ctypes.c_int64)]),
        "flashfuse_manifest_kernel_mods": (
            st, [vp, ctypes.c_int32, P(ctypes.c_int32)]),
        "flashfuse_manifest_kernel_capture_count": (
            st, [vp, ctypes.c_int32, P(ctypes.c_int32)]),
        "flashfuse_manifest_kernel_capture": (
            st, [vp, ctypes.c_int32, ctypes.c_int32, P(ctypes.c_char_p),
                 P(ctypes.c_int32)]),
        "flashfuse_manifest_find": (st, [vp, P(Variant), P(ctypes.c_int32)]),
        "flashfuse_context_create": (st, [ctypes.c_int32, P(vp)]),
        "flashfuse_context_destroy": (None, [vp]),
        "flashfuse_context_device": (
            st, [vp, P(ctypes.c_int32), P(ctypes.c_int32), P(ctypes.c_int32),
                 P(ctypes.c_int32)]),
        "flashfuse_artifact_load": (st, [vp, ctypes.c_char_p, P(vp)]),
        "flashfuse_artifact_manifest": (vp, [vp]),
        "flashfuse_artifact_uses_cubin": (ctypes.c_int32, [vp]),
        "flashfuse_artifact_kernel": (st, [vp, ctypes.c_char_p, P(vp)]),
        "flashfuse_artifact_find_kernel": (st, [vp, P(Variant), P(vp)]),
        "flashfuse_kernel_get_info": (st, [vp, P(KernelInfo)]),
        "flashfuse_forward_args_init": (None, [P(ForwardArgs)]),
        "flashfuse_attention_forward_check": (
            st, [vp, ctypes.c_int32, P(ForwardArgs)]),
        "flashfuse_attention_forward": (st, [vp, P(ForwardArgs), vp]),
        "flashfuse_varlen_args_init": (None, [P(VarlenArgs)]),
        "flashfuse_attention_forward_varlen": (
            st, [vp, P(ForwardArgs), P(VarlenArgs), vp]),
        "flashfuse_attention_forward_varlen_check": (
            st, [vp, ctypes.c_int32, P(ForwardArgs), P(VarlenArgs)]),
        "flashfuse_packed_batch_walks": (
            ctypes.c_int32, [ctypes.c_int64] * 5 + [ctypes.c_int32]),
        "flashfuse_backward_args_init": (None, [P(BackwardArgs)]),
        "flashfuse_attention_backward_varlen": (
            st, [P(BackwardKernels), P(BackwardArgs), P(VarlenArgs), vp]),
        "flashfuse_attention_backward_varlen_check": (
            st, [vp, P(ctypes.c_int32), P(BackwardArgs), P(VarlenArgs)]),
        "flashfuse_decode_args_init": (None, [P(DecodeArgs)]),
        "flashfuse_decode_workspace_bytes": (
            st, [vp, vp, P(DecodeArgs), P(ctypes.c_int32),
                 P(ctypes.c_size_t)]),
        "flashfuse_attention_decode": (
            st, [vp, vp, P(DecodeArgs), vp, ctypes.c_size_t, vp]),
        "flashfuse_decode_plan_create": (
            st, [vp, vp, P(DecodeArgs), P(vp)]),
        "flashfuse_kvcache_append_plan_create": (
            st, [vp, P(DecodeArgs), P(vp)]),
        "flashfuse_decode_plan_info": (
            st, [vp, P(ctypes.c_int32), P(ctypes.c_size_t)]),
        # The addresses as bytes (pack_decode_addresses).
        "flashfuse_decode_plan_launch": (st, [vp, ctypes.c_char_p, vp]),
        "flashfuse_decode_plan_destroy": (None, [vp]),
        "flashfuse_attention_decode_check": (
            st, [vp, ctypes.c_int32, ctypes.c_int32, P(DecodeArgs),
                 ctypes.c_int32, ctypes.c_int32, vp, ctypes.c_size_t,
                 P(ctypes.c_int32), P(ctypes.c_size_t)]),
        "flashfuse_kvcache_append": (st, [vp, P(DecodeArgs), vp]),
        "flashfuse_kvcache_append_check": (
            st, [vp, ctypes.c_int32, P(DecodeArgs)]),
        "flashfuse_decode_check_on_device": (
            st, [vp, P(DecodeArgs), vp, vp]),
        "flashfuse_decode_check_on_device_check": (
            st, [vp, ctypes.c_int32, P(DecodeArgs), vp]),
        "flashfuse_decode_check_status": (
            st, [P(ctypes.c_int32), P(DecodeArgs)]),
        "flashfuse_kernel_launch": (
            st, [vp, P(Arg), ctypes.c_int32, ctypes.c_int32, vp]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes


def library():
    """The loaded runtime library; raises RuntimeLibraryNotFound if absent."""
    global _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidate_paths():
            if not path.is_file():
                tried.append(f"{path} (no such file)")
                continue
            try:
                lib = ctypes.CDLL(str(path))
                _declare(lib)
            except (OSError, AttributeError) as e:
                tried.append(f"{path} ({e})")
                continue
            _lib = lib
            return lib
        raise RuntimeLibraryNotFound(
            "flashfuse: cannot load the runtime library " + LIBRARY_NAME
            + "; build it (cmake -G Ninja -S . -B build-rt "
            "-DFLASHFUSE_RUNTIME_ONLY=ON && ninja -C build-rt) or set "
            "FLASHFUSE_RUNTIME_LIB to its path. Tried: " + "; ".join(tried),
            "FLASHFUSE_ERROR_NO_LIBRARY")


def check(status):
    """Raises the exception for a non-zero runtime status."""
    if status == 0:
        return
    lib = library()
    name = lib.flashfuse_status_name(status).decode()
    message = lib.flashfuse_last_error().decode(errors="replace")
    raise error_for_status(name, f"flashfuse: {message}")


class Manifest:
    """A parsed manifest.txt (no GPU needed)."""

    def __init__(self, handle, owned=True):
        self._handle = ctypes.c_void_p(handle)
        self._owned = owned

    @classmethod
    def open(cls, artifact_dir):
        h = ctypes.c_void_p()
        check(library().flashfuse_manifest_open(os.fsencode(artifact_dir),
                                                ctypes.byref(h)))
        return cls(h.value)

    @classmethod
    def parse(cls, text, base_dir=None):
        h = ctypes.c_void_p()
        check(library().flashfuse_manifest_parse(
            text.encode(), os.fsencode(base_dir) if base_dir else None,
            ctypes.byref(h)))
        return cls(h.value)

    def __del__(self):
        if getattr(self, "_owned", False) and self._handle and _lib is not None:
            _lib.flashfuse_manifest_close(self._handle)
            self._handle = None

    @property
    def handle(self):
        return self._handle

    @property
    def arch(self):
        a = ctypes.c_int32()
        check(library().flashfuse_manifest_arch(self._handle, ctypes.byref(a)))
        return a.value

    def kernels(self):
        lib = library()
        n = ctypes.c_int32()
        check(lib.flashfuse_manifest_kernel_count(self._handle, ctypes.byref(n)))
        out = []
        for i in range(n.value):
            info = KernelInfo()
            check(lib.flashfuse_manifest_kernel_info(self._handle, i,
                                                     ctypes.byref(info)))
            out.append(info)
        return out

    def params(self, kernel_index):
        """[(type name, param name)] of a kernel, in launch order."""
        lib = library()
        info = self.kernels()[kernel_index]
        out = []
        for p in range(info.num_params):
            t = ctypes.c_int()
            name = ctypes.c_char_p()
            check(lib.flashfuse_manifest_kernel_param(
                self._handle, kernel_index, p, ctypes.byref(t),
                ctypes.byref(name)))
            out.append((_PARAM_NAMES[t.value], name.value.decode()))
        return out

    def bound(self, kernel_index):
        """(number of params the artifact binds, {name: value} of the launch
        sizes they hold for}) of a kernel (KERNEL_ABI.md "Block-sparse");
        (0, {}) when it binds nothing."""
        lib = library()
        n, n_for = ctypes.c_int32(), ctypes.c_int32()
        check(lib.flashfuse_manifest_kernel_bound_count(
            self._handle, kernel_index, ctypes.byref(n), ctypes.byref(n_for)))
        sizes = {}
        for i in range(n_for.value):
            name, value = ctypes.c_char_p(), ctypes.c_int64()
            check(lib.flashfuse_manifest_kernel_bound_for(
                self._handle, kernel_index, i, ctypes.byref(name),
                ctypes.byref(value)))
            sizes[name.value.decode()] = value.value
        return n.value, sizes

    def mods(self, kernel_index):
        """Whether a kernel inlines its op's score_mod / mask_mod (`mods 1`):
        launched by name only, never looked up for a variant."""
        n = ctypes.c_int32()
        check(library().flashfuse_manifest_kernel_mods(
            self._handle, kernel_index, ctypes.byref(n)))
        return bool(n.value)

    def captures(self, kernel_index):
        """[(element type, rank)] of the values a kernel's score_mod /
        mask_mod read from above their op, params capture0, capture1, ...
        (KERNEL_ABI.md "Values captured by score_mod and mask_mod"); rank
        -1 for a scalar. [] for a kernel without any."""
        lib = library()
        n = ctypes.c_int32()
        check(lib.flashfuse_manifest_kernel_capture_count(
            self._handle, kernel_index, ctypes.byref(n)))
        out = []
        for i in range(n.value):
            elt, rank = ctypes.c_char_p(), ctypes.c_int32()
            check(lib.flashfuse_manifest_kernel_capture(
                self._handle, kernel_index, i, ctypes.byref(elt),
                ctypes.byref(rank)))
            out.append((elt.value.decode(), rank.value))
        return out

    def find(self, variant):
        """Index of the kernel of `variant`; KernelNotFoundError otherwise."""
        index = ctypes.c_int32()
        check(library().flashfuse_manifest_find(self._handle,
                                                ctypes.byref(variant),
                                                ctypes.byref(index)))
        return index.value

    def check_forward(self, kernel_index, args):
        """Validates forward arguments against a kernel, without a GPU."""
        check(library().flashfuse_attention_forward_check(
            self._handle, kernel_index, ctypes.byref(args)))

    def check_forward_varlen(self, kernel_index, args, varlen):
        """Validates the forward arguments of a packed batch (VarlenArgs)
        against a varlen kernel, without a GPU."""
        check(library().flashfuse_attention_forward_varlen_check(
            self._handle, kernel_index, ctypes.byref(args),
            ctypes.byref(varlen)))


    def check_backward_varlen(self, kernel_indices, args, varlen):
        """Validates the backward of a packed batch (BackwardArgs,
        VarlenArgs) against kernels (preprocess, backward, backward_dq or
        -1, postprocess) of this manifest, without a GPU."""
        indices = (ctypes.c_int32 * 4)(*kernel_indices)
        check(library().flashfuse_attention_backward_varlen_check(
            self._handle, indices, ctypes.byref(args), ctypes.byref(varlen)))

    def check_decode(self, decode_index, combine_index, args, sm_count,
                     blocks_per_sm, workspace=None, workspace_bytes=0):
        """Validates decode arguments against kernels of this manifest (-1:
        no combine) on a GPU of `sm_count` SMs holding `blocks_per_sm`
        decode blocks each, without a GPU; (num_splits, workspace bytes)."""
        splits, need = ctypes.c_int32(), ctypes.c_size_t()
        check(library().flashfuse_attention_decode_check(
            self._handle, decode_index, combine_index, ctypes.byref(args),
            sm_count, blocks_per_sm, workspace, workspace_bytes,
            ctypes.byref(splits), ctypes.byref(need)))
        return splits.value, need.value

    def check_append(self, append_index, args):
        """Validates kv_append arguments against a kernel, without a GPU."""
        check(library().flashfuse_kvcache_append_check(
            self._handle, append_index, ctypes.byref(args)))

    def check_device_check(self, check_index, args, status):
        """Validates decode_check arguments (status: a device address of
        4 int32) against a kernel, without a GPU."""
        check(library().flashfuse_decode_check_on_device_check(
            self._handle, check_index, ctypes.byref(args), status))


class Context:
    """A runtime context on one GPU (adopts the current CUDA context)."""

    def __init__(self, device=-1):
        h = ctypes.c_void_p()
        check(library().flashfuse_context_create(device, ctypes.byref(h)))
        self._handle = h
        self._artifacts = {}

    def load(self, artifact_dir):
        """The artifact's handle, loaded once per directory (C-side cache)."""
        h = ctypes.c_void_p()
        check(library().flashfuse_artifact_load(
            self._handle, os.fsencode(artifact_dir), ctypes.byref(h)))
        return h

    def kernel_named(self, artifact_dir, name):
        """The kernel `name` of an artifact (flashfuse_artifact_kernel)."""
        k = ctypes.c_void_p()
        check(library().flashfuse_artifact_kernel(
            self.load(artifact_dir), name.encode(), ctypes.byref(k)))
        return k

    def find_kernel(self, artifact_dir, variant):
        k = ctypes.c_void_p()
        check(library().flashfuse_artifact_find_kernel(
            self.load(artifact_dir), ctypes.byref(variant), ctypes.byref(k)))
        return k

    def device(self):
        d, major, minor, sms = (ctypes.c_int32() for _ in range(4))
        check(library().flashfuse_context_device(
            self._handle, ctypes.byref(d), ctypes.byref(major),
            ctypes.byref(minor), ctypes.byref(sms)))
        return d.value, major.value * 10 + minor.value, sms.value


def forward_args():
    """A ForwardArgs with the runtime's defaults (optional features off)."""
    args = ForwardArgs()
    library().flashfuse_forward_args_init(ctypes.byref(args))
    return args


def attention_forward(kernel, args, stream):
    check(library().flashfuse_attention_forward(kernel, ctypes.byref(args),
                                                ctypes.c_void_p(stream)))


def varlen_args():
    """A zeroed VarlenArgs (flashfuse_varlen_args_init)."""
    args = VarlenArgs()
    library().flashfuse_varlen_args_init(ctypes.byref(args))
    return args


def backward_args():
    """A BackwardArgs with the runtime's defaults (window and softcap
    off)."""
    args = BackwardArgs()
    library().flashfuse_backward_args_init(ctypes.byref(args))
    return args


def attention_backward_varlen(kernels, args, varlen, stream):
    """Launches the backward of a packed batch: `kernels` the handles of
    the preprocess, backward, backward_dq (None) and postprocess."""
    k = BackwardKernels(*(getattr(h, "value", h) for h in kernels))
    check(library().flashfuse_attention_backward_varlen(
        ctypes.byref(k), ctypes.byref(args), ctypes.byref(varlen),
        ctypes.c_void_p(stream)))


def attention_forward_varlen(kernel, args, varlen, stream):
    check(library().flashfuse_attention_forward_varlen(
        kernel, ctypes.byref(args), ctypes.byref(varlen),
        ctypes.c_void_p(stream)))


def packed_batch_walks(total_q, total_k, num_seqs, max_seqlen_q,
                       max_seqlen_k, causal):
    """Whether a persistent varlen forward walks this packed batch's tiles
    (one block per SM) rather than running a block per tile (the runtime's
    rule, runtime.h)."""
    return bool(library().flashfuse_packed_batch_walks(
        total_q, total_k, num_seqs, max_seqlen_q, max_seqlen_k, causal))


def decode_args():
    """A DecodeArgs with the runtime's defaults (optional features off,
    num_splits automatic)."""
    args = DecodeArgs()
    library().flashfuse_decode_args_init(ctypes.byref(args))
    return args


def decode_workspace_bytes(decode, combine, args):
    """(num_splits, workspace bytes) of a decode launch on the kernels'
    GPU (combine may be None)."""
    splits, need = ctypes.c_int32(), ctypes.c_size_t()
    check(library().flashfuse_decode_workspace_bytes(
        decode, combine, ctypes.byref(args), ctypes.byref(splits),
        ctypes.byref(need)))
    return splits.value, need.value


def attention_decode(decode, combine, args, workspace, workspace_bytes,
                     stream):
    check(library().flashfuse_attention_decode(
        decode, combine, ctypes.byref(args), workspace, workspace_bytes,
        ctypes.c_void_p(stream)))


class DecodePlan:
    """A decode (or, DecodePlan.append, kv_append) launch prepared for every
    step of one signature (flashfuse_decode_plan): `args` without
    addresses; each launch passes a step's addresses (decode_addresses,
    pack_decode_addresses). The kernels' context must outlive it."""

    def __init__(self, decode, combine, args):
        self._create(lambda lib, handle: lib.flashfuse_decode_plan_create(
            decode, combine, ctypes.byref(args), ctypes.byref(handle)))

    @classmethod
    def append(cls, append, args):
        """The plan of flashfuse_kvcache_append's launch (a kv_append
        kernel; k_new/v_new strides and seq_new in `args`)."""
        plan = cls.__new__(cls)
        plan._create(
            lambda lib, handle: lib.flashfuse_kvcache_append_plan_create(
                append, ctypes.byref(args), ctypes.byref(handle)))
        return plan

    def _create(self, create):
        lib = library()
        handle = ctypes.c_void_p()
        check(create(lib, handle))
        self._handle = handle
        self._destroy = lib.flashfuse_decode_plan_destroy
        # Bound once: a step's host time is what this class is for.
        self._launch = lib.flashfuse_decode_plan_launch
        splits, need = ctypes.c_int32(), ctypes.c_size_t()
        check(lib.flashfuse_decode_plan_info(handle, ctypes.byref(splits),
                                             ctypes.byref(need)))
        self.num_splits, self.workspace_bytes = splits.value, need.value

    def launch(self, addresses, stream):
        """Launches one step on `stream`; `addresses`: the bytes of its
        flashfuse_decode_addresses (pack_decode_addresses)."""
        status = self._launch(self._handle, addresses, stream)
        if status:
            check(status)

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            self._destroy(handle)


def kvcache_append(append, args, stream):
    """Writes args.k_new/v_new into the caches (flashfuse_kvcache_append)."""
    check(library().flashfuse_kvcache_append(append, ctypes.byref(args),
                                             ctypes.c_void_p(stream)))


def decode_check_on_device(check_kernel, args, status, stream):
    """Runs the decode_check kernel into `status` (device address of 4
    int32), reads it back (synchronising `stream`) and raises
    InvalidArgumentError naming the first offending sequence."""
    check(library().flashfuse_decode_check_on_device(
        check_kernel, ctypes.byref(args), ctypes.c_void_p(status),
        ctypes.c_void_p(stream)))


def decode_check_status(status, args):
    """The verdict of a decode_check status read back to the host (a
    sequence of 4 ints): None, or the exception flashfuse_decode_check_on_
    device would raise."""
    arr = (ctypes.c_int32 * 4)(*status)
    check(library().flashfuse_decode_check_status(arr, ctypes.byref(args)))


# One Arg as struct packs it (native alignment: name, type, 4 bytes of
# padding, ptr, numel, i, f); pack_args writes a whole array with one
# pack_into where setting ctypes fields one by one took ~1.5 us per
# argument, ~90 us for a backward's ~60 (docs/PERF.md run 203).
_ARG_FORMAT = "PiPqqd"
_arg_packers = {}
# Every argument name, encoded once and kept for the process: the arrays
# point at these bytes.
_encoded_names = {}


def _name_address(name):
    entry = _encoded_names.get(name)
    if entry is None:
        encoded = name.encode()
        entry = _encoded_names[name] = (
            encoded, ctypes.cast(ctypes.c_char_p(encoded), ctypes.c_void_p).value)
    return entry[1]


def pack_args(named):
    """{name: (type, value)}, value being (ptr, numel) for memrefs, as the
    runtime's flashfuse_arg array; packed once, launchable many times."""
    n = len(named)
    packer = _arg_packers.get(n)
    if packer is None:
        packer = _arg_packers[n] = struct.Struct("@" + _ARG_FORMAT * n)
        assert packer.size == n * ctypes.sizeof(Arg)
    values = []
    for name, (ptype, value) in named.items():
        if ptype == PARAM_MEMREF:
            ptr, numel = value
            values += (_name_address(name), ptype, ptr or 0, numel, 0, 0.0)
        elif ptype == PARAM_F32:
            values += (_name_address(name), ptype, 0, 0, 0, float(value))
        else:
            values += (_name_address(name), ptype, 0, 0, int(value), 0.0)
    arr = (Arg * n)()
    packer.pack_into(arr, 0, *values)
    return arr, None


class ArgTemplate:
    """Named arguments packed once (pack_args) for calls that differ only
    in their memref addresses and a few integer scalars: fill() copies the
    packed array (one memcpy) and sets those fields, where packing every
    size, stride and scalar again cost a launch tens of microseconds of
    Python (docs/PERF.md run 203)."""

    def __init__(self, named):
        self.array, _ = pack_args(named)
        self.slot = {name: i for i, name in enumerate(named)}

    def fill(self, addresses, integers=()):
        """The packed arguments with `addresses` ((name, address) pairs of
        memrefs) and `integers` ((name, value) pairs) replaced."""
        arr = type(self.array).from_buffer_copy(self.array)
        slot = self.slot
        for name, address in addresses:
            arr[slot[name]].ptr = address
        for name, value in integers:
            arr[slot[name]].i = value
        return arr, None


def kernel_info(kernel):
    """The KernelInfo (name, variant, tiles) of a kernel handle."""
    info = KernelInfo()
    check(library().flashfuse_kernel_get_info(kernel, ctypes.byref(info)))
    return info


def launch_packed(kernel, packed, stream, allow_unused=True):
    """Launches a kernel with packed named arguments (pack_args); unused
    names are allowed by default so that one set serves a kernel sequence."""
    arr, _ = packed
    check(library().flashfuse_kernel_launch(kernel, arr, len(arr),
                                            1 if allow_unused else 0,
                                            ctypes.c_void_p(stream)))


def kernel_launch(kernel, named, stream, allow_unused=True):
    """Launches with named arguments: {name: (type, value)} where value is
    (ptr, numel) for memrefs."""
    launch_packed(kernel, pack_args(named), stream, allow_unused)
