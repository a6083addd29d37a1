#!/usr/bin/env python3
"""Checks and times the kernels of an artifact directly through the CUDA driver.

A kernel developer's harness, independent of runtime/: loads manifest.txt and
kernels.cubin (or .ptx) with ctypes on libcuda, launches each kernel on fresh
random inputs (outputs poisoned with NaN first), and applies FlashAttention's
rule: max|out - ref| <= 2 * max|out_pt - ref| + atol, with ref computed in f32
from up-cast inputs and out_pt the same computation in the kernel's dtype.
Then times forward attention against PyTorch SDPA (flash, cuDNN) on the shapes
of ANCHORS.md, CUDA events, median of many runs.
"""
import argparse, ctypes, json, math, os, statistics, sys, time

import torch
import torch.nn.functional as F

# ----------------------------------------------------------------- driver
cuda = ctypes.CDLL("libcuda.so.1")


class LaunchAttribute(ctypes.Structure):
    """CUlaunchAttribute: an id, padded to 8 bytes, and a 64-byte value (for
    the cluster dimension, three unsigned ints)."""
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_int),
                ("value", ctypes.c_uint * 16)]


class LaunchConfig(ctypes.Structure):
    """CUlaunchConfig."""
    _fields_ = [("grid_x", ctypes.c_uint), ("grid_y", ctypes.c_uint),
                ("grid_z", ctypes.c_uint), ("block_x", ctypes.c_uint),
                ("block_y", ctypes.c_uint), ("block_z", ctypes.c_uint),
                ("smem", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(LaunchAttribute)),
                ("num_attrs", ctypes.c_uint)]

def check(res, what):
    if res != 0:
        name = ctypes.c_char_p()
        cuda.cuGetErrorName(res, ctypes.byref(name))
        raise RuntimeError(f"{what} failed: {name.value.decode() if name.value else res}")

def parse_manifest(path):
    kernels, top, cur = [], {}, None
    for raw in open(path):
        line = raw.split("#")[0].strip()
        if not line:
            continue
        key, _, rest = line.partition(" ")
        if key == "kernel":
            cur = {"name": rest}
        elif key == "end":
            kernels.append(cur); cur = None
        elif cur is not None:
            cur[key] = rest.split() if key == "params" else rest
        else:
            top[key] = rest
    return top, kernels

class Artifact:
    def __init__(self, directory):
        self.top, self.kernels = parse_manifest(os.path.join(directory, "manifest.txt"))
        torch.zeros(1, device="cuda")  # the primary context, current
        major = torch.cuda.get_device_capability()
        arch = major[0] * 10 + major[1]
        use_cubin = "cubin" in self.top and int(self.top["arch"]) == arch
        blob = open(os.path.join(directory, self.top["cubin" if use_cubin else "ptx"]), "rb").read()
        if not use_cubin:
            blob += b"\0"
        self.module = ctypes.c_void_p()
        check(cuda.cuModuleLoadData(ctypes.byref(self.module), blob), "cuModuleLoadData")
        self.funcs = {}
        for k in self.kernels:
            f = ctypes.c_void_p()
            check(cuda.cuModuleGetFunction(ctypes.byref(f), self.module, k["name"].encode()),
                  "cuModuleGetFunction " + k["name"])
            smem = int(k["smem"])
            # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
            check(cuda.cuFuncSetAttribute(f, 8, smem), "cuFuncSetAttribute")
            self.funcs[k["name"]] = f

    def blocks_per_sm(self, k):
        """Blocks of kernel `k` that run at once on an SM (its registers and
        shared memory, the driver's occupancy query, as the runtime asks)."""
        n = ctypes.c_int()
        check(cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            ctypes.byref(n), self.funcs[k["name"]], ctypes.c_int(int(k["threads"])),
            ctypes.c_size_t(int(k["smem"]))),
            "cuOccupancyMaxActiveBlocksPerMultiprocessor")
        return max(1, n.value)

    def head_dims(self):
        """The (D, Dv) pairs of the artifact's kernels, D = Dv first."""
        return sorted({(int(k["head_dim"]), int(k["head_dim_v"])) for k in self.kernels},
                      key=lambda p: (p[0] != p[1], p))

    def find(self, dtype, d, causal="none", dv=None, out_dtype=None, **flags):
        """The forward kernel of a variant; `out_dtype` is an e4m3 kernel's
        O dtype (KERNEL_ABI.md "FP8 forwards"), None for 16-bit kernels."""
        for k in self.kernels:
            if (k["kind"] == "forward" and k["dtype"] == dtype and int(k["head_dim"]) == d
                    and int(k["head_dim_v"]) == (d if dv is None else dv) and k["causal"] == causal
                    and k.get("out_dtype") == out_dtype
                    and all(int(k.get(f, 0)) == int(flags.get(f, 0))
                            for f in ("window", "softcap", "bias", "mask", "dropout",
                                      "out_f32"))):
                return k
        return None

    def launch(self, k, q, kk, v, o, lse, scale, bias=None, window=(-1, -1), softcap=0.0, stream=None):
        """q, kk, v, o: [B, H, S, D] views with a contiguous last dim."""
        grid, bufs, scal = self.launch_args(k, q, kk, v, o, lse, scale, bias, window, softcap)
        self.launch_named(k, grid, bufs, scal, stream)

    def prepared(self, k, *args, **kwargs):
        """A closure launching kernel `k` as launch(k, *args, **kwargs) would,
        its parameter array packed once: the benchmarks time it, since
        packing (and encoding tensor maps) costs 0.1-0.45 ms of Python a
        call, more than a short kernel runs (docs/PERF.md runs 380-382)."""
        return self.prepared_named(k, *self.launch_args(k, *args, **kwargs))

    def prepared_named(self, k, grid, bufs, scalars):
        """A closure doing launch_named(k, grid, bufs, scalars), the
        parameter array packed once."""
        packed = self.pack(k, bufs, scalars)
        return lambda: self.launch_packed(k, grid, packed)

    def launch_args(self, k, q, kk, v, o, lse, scale, bias=None, window=(-1, -1), softcap=0.0):
        """(grid, bufs, scalars) of launch()."""
        B, Hq, Sq, D = q.shape
        Hkv, Sk = kk.shape[1], kk.shape[2]
        bufs = {"q": q, "k": kk, "v": v, "o": o, "lse": lse, "bias": bias}
        scal = {"batch": B, "heads_q": Hq, "heads_kv": Hkv, "seq_q": Sq, "seq_k": Sk,
                "scale": scale, "window_left": window[0], "window_right": window[1],
                "softcap": softcap, "dropout_p": 0.0, "seed": 0}
        for t in ("q", "k", "v", "o"):
            st = bufs[t].stride()
            scal.update({f"{t}_stride_b": st[0], f"{t}_stride_h": st[1], f"{t}_stride_s": st[2]})
        if bias is not None:
            st = [0 if bias.shape[i] == 1 else bias.stride(i) for i in range(4)]
            scal.update(dict(zip(("bias_stride_b", "bias_stride_h", "bias_stride_q", "bias_stride_k"), st)))
        bm = int(k["block_m"])
        return ((Sq + bm - 1) // bm, Hq, B), bufs, scal

    def launch_named(self, k, grid, bufs, scalars, stream=None):
        """Launches kernel `k` on `grid`, binding each of its params by name:
        memrefs from the tensors `bufs`, scalars from `scalars`."""
        self.launch_packed(k, grid, self.pack(k, bufs, scalars), stream)

    def pack(self, k, bufs, scalars):
        """The kernel parameter array of `k` (see launch_named), to launch
        many times without the Python packing in the timed loop."""
        vals = []
        for p in k["params"]:
            kind, name = p.split(":")
            if kind == "memref":
                t = bufs[name]
                vals += [ctypes.c_void_p(t.data_ptr()), ctypes.c_void_p(t.data_ptr()),
                         ctypes.c_int64(0), ctypes.c_int64(t.numel()), ctypes.c_int64(1)]
            elif kind == "tensormap":
                vals.append(self.tensor_map(k, name[:-len("_map")], bufs, scalars))
            elif kind == "i32":
                vals.append(ctypes.c_int32(int(scalars[name])))
            elif kind == "i64":
                vals.append(ctypes.c_int64(int(scalars[name])))
            else:
                vals.append(ctypes.c_float(float(scalars[name])))
        ptrs = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.pointer(x), ctypes.c_void_p) for x in vals])
        ptrs._keep = vals  # the values the pointers point at
        ptrs._seq_k = int(scalars.get("seq_k", 0))  # a persistent grid's size
        return ptrs

    def tensor_map(self, k, op, bufs, scalars):
        """The CUtensorMap of operand `op` (q, k, v, do or vt) of a TMA kernel, as
        the runtime encodes it (KERNEL_ABI.md "Tensor maps", "FP8 forwards"):
        [B][H][S][D], a box of one 128-byte swizzle row (64 16-bit or 128
        e4m3 columns) x block_m (Q) or block_n rows, 128-byte swizzle, but
        e4m3 rows of 64 bytes (D = 64) one box of the 64-byte swizzle; for
        vt, Vt [B][Hkv][Dv][Sk_pad] (Sk rounded up to the 32-key group of
        fp8_vt_layout.h) with a box of one swizzle row of keys (128, 64 or
        32 bytes) x Dv rows."""
        t = bufs[op]
        elt = t.element_size()
        swizzle_bytes = 128  # CU_TENSOR_MAP_SWIZZLE_128B
        if op == "vt":
            dv = t.shape[2]
            keys_pad = -(-int(scalars["seq_k"]) // 32) * 32
            dims = [keys_pad, dv, scalars["heads_kv"], scalars["batch"]]
            # A box of one swizzle row of keys: the widest of 128, 64 and
            # 32 that block_n is whole rows of (KernelSpec::tmaSwizzleBytes).
            swizzle_bytes = next(w for w in (128, 64, 32)
                                 if int(k["block_n"]) % w == 0)
            row_stride, box = "vt_stride_d", (swizzle_bytes, dv)
        else:
            rows, heads, box_rows = {"q": ("seq_q", "heads_q", "block_m"),
                                     "do": ("seq_q", "heads_q", "block_m")}.get(
                op, ("seq_k", "heads_kv", "block_n"))
            dims = [t.shape[3], scalars[rows], scalars[heads], scalars["batch"]]
            if elt == 1 and t.shape[3] == 64:  # KernelSpec::tmaSwizzleBytes
                swizzle_bytes = 64
            row_stride, box = (f"{op}_stride_s",
                               (swizzle_bytes // elt, int(k[box_rows])))
        strides, packed = [], dims[0] * elt
        for d, st in zip(dims[1:], (scalars[row_stride], scalars[f"{op}_stride_h"],
                                    scalars[f"{op}_stride_b"])):
            strides.append(packed if d == 1 else st * elt)
            packed = strides[-1] * d
        raw = (ctypes.c_uint8 * 192)()  # a CUtensorMap is 64-byte aligned
        tmap = (ctypes.c_uint64 * 16).from_buffer(raw, -ctypes.addressof(raw) % 64)
        tmap._raw = raw
        # CU_TENSOR_MAP_DATA_TYPE_FLOAT16 / BFLOAT16, UINT8 for e4m3 bytes
        dtype = {torch.float16: 6, torch.bfloat16: 9}.get(t.dtype, 0)
        check(cuda.cuTensorMapEncodeTiled(
            ctypes.byref(tmap), dtype, 4, ctypes.c_void_p(t.data_ptr()),
            (ctypes.c_uint64 * 4)(*dims), (ctypes.c_uint64 * 3)(*strides),
            (ctypes.c_uint32 * 4)(*box, 1, 1), (ctypes.c_uint32 * 4)(1, 1, 1, 1),
            # No interleave, the 128- (3), 64- (2) or 32-byte (1) swizzle,
            # L2 128B, zero fill.
            0, {128: 3, 64: 2, 32: 1}[swizzle_bytes], 2, 0),
            "cuTensorMapEncodeTiled " + op)
        return tmap

    def launch_packed(self, k, grid, ptrs, stream=None, cluster=1):
        """cluster > 1: clusters of (cluster, 1, 1) blocks (cuLaunchKernelEx),
        as the runtime launches a decode that merges its splits in a cluster
        (KERNEL_ABI.md "Decode", merge_splits 2)."""
        s = stream if stream is not None else torch.cuda.current_stream().cuda_stream
        if cluster > 1:
            attr = LaunchAttribute(id=4)  # CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
            attr.value[0], attr.value[1], attr.value[2] = cluster, 1, 1
            config = LaunchConfig(*grid, int(k["threads"]), 1, 1, int(k["smem"]),
                                  ctypes.c_void_p(s), ctypes.pointer(attr), 1)
            check(cuda.cuLaunchKernelEx(ctypes.byref(config), self.funcs[k["name"]],
                                        ptrs, None),
                  f"cuLaunchKernelEx {k['name']} in clusters of {cluster}")
            return
        if k.get("grid") == "persistent":
            # KERNEL_ABI.md "grid persistent": min(tiles, SMs) blocks walk
            # the tiles of the one-block-per-tile grid up to 8192 keys (as
            # the runtime), one block a tile past them.
            tiles = grid[0] * grid[1] * grid[2]
            sms = torch.cuda.get_device_properties(0).multi_processor_count
            if getattr(ptrs, "_seq_k", 0) > 8192:
                sms = tiles
            grid = (min(tiles, sms), 1, 1)
        check(cuda.cuLaunchKernel(self.funcs[k["name"]], *grid,
                                  int(k["threads"]), 1, 1, int(k["smem"]), ctypes.c_void_p(s), ptrs, None),
              "cuLaunchKernel " + k["name"])

# -------------------------------------------------------------- reference
def keep_mask(Sq, Sk, causal, window, device):
    i = torch.arange(Sq, device=device)[:, None]
    j = torch.arange(Sk, device=device)[None, :]
    off = (Sk - Sq) if causal == "bottom_right" else 0
    keep = torch.ones(Sq, Sk, dtype=torch.bool, device=device)
    if causal != "none":
        keep &= j <= i + off
    if window:
        wl, wr = window
        if wl >= 0: keep &= j >= i + off - wl
        if wr >= 0: keep &= j <= i + off + wr
    return keep


def attention(q, k, v, scale, causal, window, softcap, bias, drop, dtype):
    """O and LSE computed in `dtype` (f32 for the reference), differentiable."""
    q, k, v = q.to(dtype), k.to(dtype), v.to(dtype)
    G = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(G, dim=1); v = v.repeat_interleave(G, dim=1)
    s = (q @ k.transpose(-1, -2)).float() * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    if bias is not None:
        s = s + bias
    keep = keep_mask(q.shape[2], k.shape[2], causal, window, q.device)
    s = s.masked_fill(~keep, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)
    if drop is not None:
        p = p * drop
    return (p.to(dtype) @ v), lse


def passes_rule(err, err_pt, atol):
    """FlashAttention's rule in its elementwise-max form: max|out - ref| <=
    2 * max|out_pt - ref| + atol, ref the high-precision reference and
    out_pt the same computation in the kernel's precision."""
    return (not math.isnan(err)) and err <= 2 * err_pt + atol


def reference(q, k, v, scale, causal, window=None, softcap=None, bias=None, dtype=torch.float32):
    """Attention in `dtype` (f32 for ref, kernel dtype for out_pt): O as f32
    and LSE."""
    o, lse = attention(q, k, v, scale, causal, window, softcap, bias, None, dtype)
    return o.float(), lse

def check_case(art, dtype, d, causal, B, Hq, Hkv, Sq, Sk, window=None, softcap=None, with_bias=False,
               dv=None, out_f32=False, rising=False):
    """With out_f32, the kernel that writes O in f32 (its O is held to the
    same rule: unrounded, it can only be closer to the reference). With
    `rising`, K's rows grow 0.1x to 8x along the keys, so that a row's
    maximum keeps rising past the running one by more than a stale
    maximum's 2^8 (ForwardBuilder.h staleMaxLog2) several times."""
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    dv = d if dv is None else dv
    flags = dict(window=window is not None, softcap=softcap is not None, bias=with_bias,
                 out_f32=out_f32)
    kern = art.find(dtype, d, causal, dv=dv, **flags)
    if kern is None:
        return None
    q = torch.randn(B, Hq, Sq, d, device="cuda", dtype=tdt)
    k = torch.randn(B, Hkv, Sk, d, device="cuda", dtype=tdt)
    if rising:
        k = (k.float() * torch.linspace(0.1, 8.0, Sk, device="cuda")[:, None]).to(tdt)
    v = torch.randn(B, Hkv, Sk, dv, device="cuda", dtype=tdt)
    bias = torch.randn(1, Hq, Sq, Sk, device="cuda", dtype=torch.float32) if with_bias else None
    o = torch.full((B, Hq, Sq, dv), float("nan"), device="cuda",
                   dtype=torch.float32 if out_f32 else tdt)
    lse = torch.full((B, Hq, Sq), float("nan"), device="cuda", dtype=torch.float32)
    scale = 1.0 / math.sqrt(d)
    art.launch(kern, q, k, v, o, lse, scale, bias=bias, window=window or (-1, -1), softcap=softcap or 0.0)
    torch.cuda.synchronize()
    ref, ref_lse = reference(q, k, v, scale, causal, window, softcap, bias)
    pt, _ = reference(q, k, v, scale, causal, window, softcap, bias, dtype=tdt)
    err = (o.float() - ref).abs().max().item()
    err_pt = (pt - ref).abs().max().item()
    finite = torch.isfinite(ref_lse)
    lse_err = (lse - ref_lse)[finite].abs().max().item() if finite.any() else 0.0
    lse_inf_ok = bool(torch.all(torch.isinf(lse[~finite]))) if (~finite).any() else True
    ok = passes_rule(err, err_pt, 1e-5) and lse_err < 1e-2 and lse_inf_ok
    return dict(kernel=kern["name"], shape=[B, Hq, Hkv, Sq, Sk, d, dv], causal=causal, err=err,
                err_pt=err_pt, lse_err=lse_err, ok=ok, rising=rising)

# -------------------------------------------------------------- timing
def median_ms(fn, iters=30, warmup=5, warmup_ms=250.0):
    """Median milliseconds of fn(), one event pair per call and no
    synchronisation between calls (as python -m flashfuse.bench): the host
    runs ahead, so the Python argument packing of the ctypes launches is
    hidden behind the GPU work instead of being timed with it (a per-call
    synchronise billed it to every call, ~0.1-0.3 ms at short S).
    The warm-up runs fn for at least warmup_ms: under its power limit the
    GPU sets its clock from the power the running kernel draws, and a few
    calls would time fn at the clock the previous method left behind
    (runs 60-62, docs/PERF.md)."""
    start = time.perf_counter()
    done = 0
    while done < warmup or (time.perf_counter() - start) * 1e3 < warmup_ms:
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        done += warmup
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for a, b in zip(starts, ends):
        a.record(); fn(); b.record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in zip(starts, ends))

def bench(art, dtype, d, causal, S, hidden=2048, tokens=16384, baseline=None, reps=1):
    """TFLOP/s of the artifact's kernel, SDPA's flash and cuDNN backends and,
    with `baseline`, another artifact's kernel of the same variant; with
    reps > 1 the methods run in turn `reps` times and each gets the median
    of its repetitions (short sequences swing by a third between them)."""
    from torch.nn.attention import sdpa_kernel, SDPBackend
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    H, B = hidden // d, tokens // S
    kern = art.find(dtype, d, "top_left" if causal else "none")
    # Three input sets in rotation so that repeated runs do not hit L2 only.
    sets = [[torch.randn(B, H, S, d, device="cuda", dtype=tdt) for _ in range(3)] for _ in range(3)]
    o = torch.empty(B, H, S, d, device="cuda", dtype=tdt)
    lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
    scale = 1.0 / math.sqrt(d)
    it = [0]
    # Packed once per input set: the launches' Python stays off the clock.
    ours_calls = [art.prepared(kern, q, k, v, o, lse, scale) for q, k, v in sets]
    def ours():
        ours_calls[it[0] % 3](); it[0] += 1
    def sdpa(backend):
        def run():
            q, k, v = sets[it[0] % 3]; it[0] += 1
            with sdpa_kernel(backend):
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return run
    flops = 4 * B * H * S * S * d / (2 if causal else 1)
    res = {"dtype": dtype, "d": d, "S": S, "causal": causal, "B": B, "H": H}
    methods = [("ours", ours), ("sdpa-flash", sdpa(SDPBackend.FLASH_ATTENTION)),
               ("sdpa-cudnn", sdpa(SDPBackend.CUDNN_ATTENTION))]
    if baseline is not None:
        base = baseline.find(dtype, d, "top_left" if causal else "none")
        if base is not None:
            base_calls = [baseline.prepared(base, q, k, v, o, lse, scale)
                          for q, k, v in sets]
            def theirs():
                base_calls[it[0] % 3](); it[0] += 1
            methods.insert(1, ("baseline", theirs))
            res["baseline-kernel"] = base["name"]
    res["kernel"] = kern["name"]
    res.update(interleaved_tflops(methods, flops, reps, res))
    return res


def interleaved_tflops(methods, flops, reps, errors):
    """{name: TFLOP/s} of each (name, fn) in `methods`, run in turn `reps`
    times (the median of each method's repetitions); None for a method that
    raised (a backend unavailable for the shape), its message put into
    `errors` under NAME-error."""
    times = {name: [] for name, _ in methods}
    for _ in range(reps):
        for name, fn in methods:
            if times[name] is None:
                continue
            try:
                times[name].append(median_ms(fn))
            except Exception as e:  # a backend unavailable for this shape
                times[name] = None
                errors[name + "-error"] = str(e)[:200]
    return {name: flops / statistics.median(ts) / 1e9 if ts else None
            for name, ts in times.items()}

def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("artifact")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--no-bench", action="store_true")
    ap.add_argument("--quick", action="store_true",
                    help="the odd shapes only (for compute-sanitizer)")
    ap.add_argument("--seqs", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--dims", default="64,128", help="head dims to benchmark")
    ap.add_argument("--baseline", default=None,
                    help="another artifact whose kernels are timed beside "
                         "this one's (the same variants), interleaved")
    ap.add_argument("--dtypes", default="bf16,f16", help="dtypes to benchmark")
    ap.add_argument("--reps", type=int, default=1,
                    help="interleaved repetitions of every method (medians)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(int(time.time()))
    art = Artifact(args.artifact)
    baseline = Artifact(args.baseline) if args.baseline else None
    print(f"device: {torch.cuda.get_device_name()}  kernels: {len(art.kernels)}", flush=True)

    results, failures = [], 0
    shapes = [(1, 2, 2, 1, 1), (2, 4, 4, 17, 17), (1, 4, 2, 113, 203), (1, 2, 2, 128, 64),
              (1, 2, 1, 1, 239), (1, 4, 1, 1023, 1024), (2, 8, 2, 256, 256)]
    if args.quick:
        shapes = [(1, 2, 2, 1, 1), (2, 4, 4, 17, 17), (1, 4, 2, 113, 203)]
    # Every (D, Dv) the artifact holds: the default library's 32-256 and
    # the --headdims suite's 8-256 and 192/128 alike.
    for dtype in ("f16", "bf16"):
        for d, dv in art.head_dims():
            for causal in ("none", "top_left", "bottom_right"):
                for shp in shapes:
                    r = check_case(art, dtype, d, causal, *shp, dv=dv)
                    if r:
                        results.append(r); failures += not r["ok"]
        # Rising scores: the running maximum moves late and far.
        for d, dv in art.head_dims():
            for causal in ("none", "bottom_right"):
                r = check_case(art, dtype, d, causal, 1, 4, 2, 200, 2000, dv=dv,
                               rising=True)
                if r: results.append(r); failures += not r["ok"]
        for shp in shapes[2:]:
            for kw in (dict(window=(64, 0)), dict(softcap=30.0)):
                r = check_case(art, dtype, 128, "none", *shp, **kw)
                if r: results.append(r); failures += not r["ok"]
            r = check_case(art, dtype, 64, "none", *shp, with_bias=True)
            if r: results.append(r); failures += not r["ok"]
        # The f32-output forwards (gen_suite.py), where the artifact has them.
        for d in (64, 128):
            for causal in ("none", "top_left"):
                for shp in shapes:
                    r = check_case(art, dtype, d, causal, *shp, out_f32=True)
                    if r: results.append(r); failures += not r["ok"]
    for r in results:
        if not r["ok"]:
            print("FAIL", json.dumps(r))
    print(f"numerics: {len(results) - failures}/{len(results)} cases pass FlashAttention's rule", flush=True)
    json.dump(results, open(os.path.join(args.out, "numerics.json"), "w"), indent=1)

    if args.no_bench:
        return 1 if failures else 0
    rows = []
    for dtype in args.dtypes.split(","):
        for d in (int(x) for x in args.dims.split(",")):
            for causal in (False, True):
                for S in (int(s) for s in args.seqs.split(",")):
                    r = bench(art, dtype, d, causal, S, baseline=baseline, reps=args.reps)
                    rows.append(r)
                    base = (f"baseline {r.get('baseline') or 0:6.1f}  "
                            if baseline is not None else "")
                    print(f"{dtype:4} d={d:3} S={S:5} causal={int(causal)}  ours {r['ours'] or 0:6.1f}  "
                          f"{base}flash {r['sdpa-flash'] or 0:6.1f}  cudnn {r['sdpa-cudnn'] or 0:6.1f}  "
                          f"ratio {((r['ours'] or 0) / (r['sdpa-flash'] or 1)):.2f}  "
                          f"vs cudnn {((r['ours'] or 0) / (r['sdpa-cudnn'] or 1)):.2f}", flush=True)
    json.dump(rows, open(os.path.join(args.out, "bench.json"), "w"), indent=1)
    return 1 if failures else 0

if __name__ == "__main__":
    sys.exit(main())
