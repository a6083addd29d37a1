#!/usr/bin/env python3
"""Writes an MLIR module with one flash.attention per kernel variant to build
the kernel library (python/CMakeLists.txt) that the GPU tests and benchmarks
load.

This file only chooses the variants; their IR comes from the package's
emitter (python/flashfuse/variants.py), which also serves kernels compiled
on demand, so that the library and those kernels are written the same way.
"""
import argparse
import dataclasses
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
from flashfuse.variants import (KVCacheVariant, KernelVariant,  # noqa: E402
                                emit_module)


def default_suite():
    vs = []
    for dtype in ("f16", "bf16"):
        for d in (32, 64, 96, 128, 256):
            for causal in (None, "top_left", "bottom_right"):
                if causal == "bottom_right" and d not in (64, 128):
                    continue
                vs.append(KernelVariant(f"{dtype}_d{d}_{causal or 'full'}",
                                        dtype, d, causal=causal))
        vs.append(KernelVariant(f"{dtype}_d128_window", dtype, 128,
                                window=(64, 0)))
        vs.append(KernelVariant(f"{dtype}_d128_softcap", dtype, 128,
                                softcap=30.0))
        vs.append(KernelVariant(f"{dtype}_d64_bias", dtype, 64, bias=True))
    # Forwards that write O in f32, for ring attention and other
    # split-sequence schemes (each shard pair's partial O merged by its LSE
    # without rounding it to 16 bits first): the full and top-left causal
    # masks, which are the blocks of a causal sequence split into shards.
    # Last, so that the other kernels' PTX stays byte-identical (LLVM
    # numbers a kernel's labels by its place in the module).
    for dtype in ("f16", "bf16"):
        for d in (64, 128):
            for causal in (None, "top_left"):
                vs.append(KernelVariant(f"{dtype}_d{d}_{causal or 'full'}_of32",
                                        dtype, d, causal=causal,
                                        out_dtype="f32"))
    # Gemma-2's attention: causal with the logit softcap, and its sliding
    # window (which flashfuse.attention runs as the window alone,
    # fold_causal_into_window), at D = 128 (27B) and 256 (9B). Last, for
    # the same reason.
    for dtype in ("f16", "bf16"):
        for d in (128, 256):
            vs.append(KernelVariant(f"{dtype}_d{d}_top_left_softcap", dtype,
                                    d, causal="top_left", softcap=30.0))
            vs.append(KernelVariant(f"{dtype}_d{d}_window_softcap", dtype, d,
                                    window=(64, 0), softcap=30.0))
    # Gemma-3's sliding layers at D = 256 (1B, 4B, 12B): the window alone,
    # no softcap (D = 128's window is above). Last, for the same reason.
    for dtype in ("f16", "bf16"):
        vs.append(KernelVariant(f"{dtype}_d256_window", dtype, 256,
                                window=(64, 0)))
    # A boolean mask (SDPA's attn_mask; transformers' padded batches: the
    # prompt and every decoding step of a left-padded batch carry one) at
    # D = 64, 128 and 256. The sm90 recipe's; the sm90ws forward takes no
    # mask (sm90ws_suite). Last, for the same reason.
    for dtype in ("f16", "bf16"):
        for d in (64, 128, 256):
            vs.append(KernelVariant(f"{dtype}_d{d}_mask", dtype, d,
                                    mask=True))
    # Gemma-2's padded batches: the mask with its softcap, D = 128, 256.
    for dtype in ("f16", "bf16"):
        for d in (128, 256):
            vs.append(KernelVariant(f"{dtype}_d{d}_mask_softcap", dtype, d,
                                    mask=True, softcap=30.0))
    # DeepSeek-V2/V3's multi-head latent attention in its prefill form: D =
    # 192 (128 columns without the rotary embedding, 64 with it) and Dv =
    # 128, full and causal, on the wgmma recipes on sm_90 (SelectConfig.cpp)
    # and the sm80 one elsewhere. Last, for the same reason.
    for dtype in ("f16", "bf16"):
        for causal in (None, "top_left", "bottom_right"):
            vs.append(KernelVariant(f"{dtype}_d192_dv128_{causal or 'full'}",
                                    dtype, 192, 128, causal=causal))
    return vs


def sm90ws_suite():
    """The forwards the sm90ws recipe (TMA producer warpgroup, two wgmma
    consumers) serves, for flashfuse-compile --recipe=sm90ws: the default
    library's variants of (D, Dv) = (64, 64), (128, 128), (192, 128) and
    (256, 256) without a bias or mask operand."""
    served = {(64, 64), (128, 128), (192, 128), (256, 256)}
    return [v for v in default_suite()
            if (v.head_dim, v.head_dim_v) in served and not v.bias
            and not v.mask]


def sm90ws_long_suite():
    """The sm90ws forwards the package takes from 4k queries and keys on
    (python/flashfuse/_kernels.py SM90WS_LONG_MIN_LENGTH): D = 64 causal
    (top-left; bottom-right spills 8 bytes on that tile), written with 4096
    queries and keys, so that flash-select-config gives
    them its tile of long sequences (192 query rows on three consumer
    warpgroups that issue in turn). An artifact apart from <target>-ws,
    whose kernels of the same variants have 128 rows."""
    return [KernelVariant(f"{dtype}_d64_{causal}", dtype, 64, causal=causal,
                          seq_len=4096)
            for dtype in ("f16", "bf16") for causal in ("top_left",)]


def sm90ws_backward_suite():
    """The backward suite's variants the sm90ws backward (the sm90 backward
    fed by a TMA producer warpgroup) serves, for flashfuse-compile
    --recipe=sm90ws: D = 64 and 128 without bias or dropout; and DeepSeek
    MLA's (D = 192, Dv = 128; the library has its forwards), whose two
    consumer warpgroups share each 64-key block (KernelSpec::kvColumnGroups;
    0 spill bytes, 1.5x the sm80 kernel, docs/PERF.md run 529); and D = 256
    on the same column groups, the variants of the library's dense D = 256
    forwards without a mask (Gemma-2's causal and sliding-window layers with
    softcap, Gemma-3's without; 0 spill bytes, 0.88-0.98x cuDNN's backward,
    docs/PERF.md run 535). D = 256 has no other backward in the library."""
    return [dataclasses.replace(v, with_forward=False)
            for v in backward_suite()
            if v.head_dim in (64, 128) and not v.bias and not v.dropout] + [
        KernelVariant(f"{dtype}_mla_{causal or 'full'}", dtype, 192,
                      head_dim_v=128, causal=causal)
        for dtype in ("f16", "bf16")
        for causal in (None, "top_left", "bottom_right")] + [
        KernelVariant(f"{dtype}_d256_{name}", dtype, 256, **kw)
        for dtype in ("f16", "bf16")
        for name, kw in (("full", {}), ("causal", dict(causal="top_left")),
                         ("causal_softcap",
                          dict(causal="top_left", softcap=30.0)),
                         ("window", dict(window=(64, 0))),
                         ("window_softcap",
                          dict(window=(64, 0), softcap=30.0)))]


def sm90ws_varlen_suite():
    """The packed-batch forwards of varlen_suite (not its dense_
    counterparts), for flashfuse-compile --recipe=sm90ws: the sm90ws
    forward under the varlen tile scheduler (a block per query block of the
    longest sequence), an artifact apart from <target>-varlen's sm90
    kernels, which the package takes from sm90ws_min_keys keys
    (python/flashfuse/varlen.py). Not D = 256: its consumers, at the
    register ceiling already, spill 16 bytes under the scheduler causal."""
    return [v for v in varlen_suite() if v.varlen and v.head_dim != 256]


def sm90ws_varlen_backward_suite():
    """The packed-batch gradients of varlen_backward_suite, without their
    forwards (sm90ws_varlen_suite has them), for
    flashfuse-compile --recipe=sm90ws: an artifact apart from the dense
    ones, whose dQ layout differs. The softcap ones too: with softcap's
    slope held in f16 they spill 24 bytes at the consumers' 240 registers
    (232 before), and the packed causal softcap step runs 1.17x faster than
    on the sm90 backward (docs/PERF.md run 334). Last, DeepSeek's MLA (D =
    192, Dv = 128) full, top-left and bottom-right causal, f16 and bf16,
    whose forwards sm90ws_varlen_suite has (0 spill bytes since the top-left
    causal kernel keeps its placement in shared memory, docs/PERF.md run
    553): 22 variants."""
    return [dataclasses.replace(v, with_forward=False)
            for v in varlen_backward_suite()] + [
        KernelVariant(f"varlen_{dtype}_mla_{causal or 'full'}", dtype, 192,
                      128, causal=causal, varlen=True)
        for dtype in ("f16", "bf16")
        for causal in (None, "top_left", "bottom_right")]


def fp8_suite():
    """FP8 forwards (docs/FP8.md; KERNEL_ABI.md "FP8 forwards"): f8E4M3FN Q,
    K, V with per-head descales ([B, H], which the kernels also read per
    tensor, through strides), D = Dv = 64, 128 and 256, causal none,
    top_left (flashfuse.attention's is_causal, as SDPA's) and bottom_right
    (flash-attn's), O bf16 and f16: 18 variants; then a sliding window and a
    softcap at D = 64 and 128 (at 256 they spill, and are refused), O bf16:
    4 more; last, per-block descales (FlashAttention-3's block
    quantisation, blocks of 128 rows of Q and of K/V) at D = 64, 128 and
    256, causal none, top_left and bottom_right (at D = 256 none only:
    with a mask they spill), O bf16: 7 more, after the others so that
    their PTX stays as it was. flash-select-config gives them the sm90ws
    recipe on an h100 target:
      gen_suite.py --fp8 -o build/kernels/suite-fp8.mlir
      flashfuse-compile build/kernels/suite-fp8.mlir --target=h100 \
          -o build/kernels/fp8
      (on the GPU) scripts/gpu/check_fp8.sh build/kernels/fp8 BASELINE"""
    return ([KernelVariant(f"e4m3_d{d}_{causal or 'full'}_o{out}", "e4m3", d,
                           causal=causal, out_dtype=out)
             for d in (64, 128, 256)
             for causal in (None, "top_left", "bottom_right")
             for out in ("bf16", "f16")]
            + [v for d in (64, 128) for v in (
                KernelVariant(f"e4m3_d{d}_window_obf16", "e4m3", d,
                              window=(64, 0), out_dtype="bf16"),
                KernelVariant(f"e4m3_d{d}_softcap_obf16", "e4m3", d,
                              softcap=30.0, out_dtype="bf16"))]
            + [KernelVariant(f"e4m3_d{d}_{causal or 'full'}_obf16_ds128",
                             "e4m3", d, causal=causal, out_dtype="bf16",
                             descale_blocks=(128, 128))
               for d in (64, 128, 256)
               for causal in (None, "top_left", "bottom_right")
               if d < 256 or causal is None])


def fp8_mma_sync_suite():
    """The FP8 forwards of the mma.sync kernel (sm_89, where wgmma is absent;
    Sm80Fp8Forward.cpp): fp8_suite's at D = 64 and 128, 22 variants (16 with
    per-head descales, then 6 per-block). flash-select-config gives them the sm80 recipe
    on an l4 target, and on an h100 one with --recipe=sm80 (the same
    kernels, to check them on Hopper):
      gen_suite.py --fp8-mma-sync -o build/kernels/suite-fp8-mma-sync.mlir
      flashfuse-compile build/kernels/suite-fp8-mma-sync.mlir --target=l4 \
          -o build/kernels/l4-fp8"""
    return [v for v in fp8_suite() if v.head_dim < 256]


def backward_suite():
    """flash.attention_grad variants, plus (with_forward) the forwards that
    the default suite lacks, so that every backward here can be trained
    with: dropout (forward only here) and softcap at D = 64."""
    vs = []
    for dtype in ("f16", "bf16"):
        for d in (32, 64, 96, 128):
            for causal in (None, "top_left", "bottom_right"):
                if causal and d not in (64, 128):
                    continue
                vs.append(KernelVariant(f"{dtype}_d{d}_{causal or 'full'}",
                                        dtype, d, causal=causal))
        vs.append(KernelVariant(f"{dtype}_d128_window", dtype, 128,
                                window=(64, 0)))
        vs.append(KernelVariant(f"{dtype}_d64_softcap", dtype, 64,
                                softcap=30.0, with_forward=True))
        vs.append(KernelVariant(f"{dtype}_d64_bias", dtype, 64, bias=True))
        vs.append(KernelVariant(f"{dtype}_d64_dropout", dtype, 64,
                                dropout=0.17, with_forward=True))
    return vs


# The head dims the sm80 recipe serves on tiles wider than the head dim
# (docs/config-selection.md): odd multiples of 8 (8, 40), the 128-column
# swizzled tiles at 80 and 112, the 192-column ones at 160 and 192 with
# Dv = 128 (DeepSeek MLA's prefill), and past D + Dv = 320 the backward's
# column groups (HeadDims.h's backwardColumnGroups): 176 (an uneven split,
# 96 + 80 columns), 240 (32 x 16 tiles), 256 with Dv = 128, and 256.
# Built and checked with
#   gen_suite.py --headdims -o build/kernels/suite-headdims.mlir
#   flashfuse-compile build/kernels/suite-headdims.mlir --target=h100 \
#       -o build/kernels/headdims --allow-spills
#   (on the GPU) check_and_bench.py build/kernels/headdims --no-bench and
#   check_backward.py build/kernels/headdims
HEADDIMS = ((8, 8), (40, 40), (80, 80), (112, 112), (160, 160), (192, 128),
            (176, 176), (240, 240), (256, 128), (256, 256))


def headdims_suite():
    """HEADDIMS x f16/bf16 x full, causal and bottom-right causal: 60
    variants, each a flash.attention_grad with its forward (one artifact
    for check_and_bench.py and check_backward.py)."""
    vs = []
    for dtype in ("f16", "bf16"):
        for d, dv in HEADDIMS:
            for causal in (None, "top_left", "bottom_right"):
                name = f"hd_{dtype}_d{d}" + (f"_dv{dv}" if dv != d else "")
                vs.append(KernelVariant(f"{name}_{causal or 'full'}", dtype,
                                        d, dv, causal=causal,
                                        with_forward=True))
    return vs


def headdims_module(suite, header):
    """The --headdims module: gradient ops and their forwards."""
    return header + emit_module(suite, backward=True)


def decode_suite(dims=(32, 64, 96, 128, 256)):
    """flash.attention_kvcache variants (decode and decode_combine kernels,
    and with each decode kernel the kv_append and decode_check kernels of
    its dtype, head dim and page size, which flash-lower-to-gpu builds next
    to it: the library serves new rows and the device-side check too):
    D 32/64/96/128/256 (or `dims`) x f16/bf16 x causal (bottom-right) or
    not x contiguous or paged (16, 64 rows a page); window and softcap at
    D = 128, causal, contiguous and page 16; last, Gemma-2's decoding step
    at D = 256 (causal with the logit softcap; its sliding layers' steps
    see only their window's rows, flashfuse.hf), contiguous and page 16;
    then left-padded batches' steps (cache_leftpad: flashfuse.hf's padded
    generate()) at D = 64, 128, 256, causal, contiguous, and with the
    softcap at D = 128, 256 (Gemma-2's full layers). 82 variants; each
    dtype and D shares one combine kernel."""
    vs = []
    for dtype in ("f16", "bf16"):
        for d in dims:
            for causal in (None, "bottom_right"):
                for page in (0, 16, 64):
                    vs.append(KVCacheVariant(
                        f"kv_{dtype}_d{d}_{causal or 'full'}"
                        + (f"_page{page}" if page else ""),
                        dtype, d, causal=causal, page_size=page))
        for page in (0, 16) if 128 in dims else ():
            suffix = f"_page{page}" if page else ""
            vs.append(KVCacheVariant(f"kv_{dtype}_d128_window{suffix}", dtype,
                                     128, causal="bottom_right",
                                     window=(64, 0), page_size=page))
            vs.append(KVCacheVariant(f"kv_{dtype}_d128_softcap{suffix}",
                                     dtype, 128, causal="bottom_right",
                                     softcap=30.0, page_size=page))
    # After every other variant, so the kernels before them are unchanged.
    for dtype in ("f16", "bf16") if 256 in dims else ():
        for page in (0, 16):
            vs.append(KVCacheVariant(
                f"kv_{dtype}_d256_softcap" + (f"_page{page}" if page else ""),
                dtype, 256, causal="bottom_right", softcap=30.0,
                page_size=page))
    for dtype in ("f16", "bf16"):
        for d in (x for x in (64, 128, 256) if x in dims):
            vs.append(KVCacheVariant(f"kv_{dtype}_d{d}_leftpad", dtype, d,
                                     causal="bottom_right", leftpad=True))
        for d in (x for x in (128, 256) if x in dims):
            vs.append(KVCacheVariant(f"kv_{dtype}_d{d}_softcap_leftpad",
                                     dtype, d, causal="bottom_right",
                                     softcap=30.0, leftpad=True))
    return vs


# The decode tiles for grids of several waves (docs/KVCACHE.md "Tiles for
# grids of several waves"): 64-key blocks two deep, 70 KiB, two blocks an
# SM on sm_90 (their registers allow no third: decode_splits.h's
# flashfuse_decode_blocks_per_sm), where one block's prologue and merge
# overlap the other's copies. The package takes them where the unsplit
# grid of the library's tiles runs two waves or more.
DECODE_WAVES_TILES = (16, 64, 4, 2)


def decode_waves_suite():
    """The decode variants of DECODE_WAVES_TILES that the library ships for
    sm_90 targets (build/kernels/<target>-decode-waves): D = 128 x f16/bf16
    x causal (bottom-right) or not x contiguous or paged (16, 64 rows a
    page), and the left-padded causal steps (cache_leftpad). 14
    variants."""
    return [dataclasses.replace(v, name=v.name + "_waves",
                                tiles=DECODE_WAVES_TILES)
            for v in decode_suite(dims=(128,))
            if v.window is None and v.softcap is None]


# The decode tiles of block_m 8, whose 8 packed rows are the n of the
# kernel's products (docs/KVCACHE.md "Few rows as the products' n"):
# 128-key blocks two deep for grids under two waves, 64-key blocks three
# deep (99 KiB, two blocks an SM) for more. The package takes them where a
# launch's packed rows (G * Sq) fit 8: 1.004-1.015x the 16-row tiles' GB/s
# on an H200 at the shapes (docs/PERF.md run 354).
DECODE_ROWS8_TILES = (8, 128, 4, 2)
DECODE_ROWS8_WAVES_TILES = (8, 64, 4, 3)


def decode_rows8_suite(waves=False):
    """The decode variants of DECODE_ROWS8_TILES the library ships for sm_90
    targets (build/kernels/<target>-decode-rows8): D = 128 x f16/bf16 x
    causal (bottom-right) or not x contiguous or paged (16, 64 rows a
    page), window and softcap contiguous and page 16, the left-padded
    causal steps (cache_leftpad) with and without the softcap; 24
    variants. With `waves`, those of DECODE_ROWS8_WAVES_TILES
    (<target>-decode-rows8-waves) without window and softcap, as
    decode_waves_suite; 14 variants."""
    tiles = DECODE_ROWS8_WAVES_TILES if waves else DECODE_ROWS8_TILES
    suffix = "_rows8_waves" if waves else "_rows8"
    return [dataclasses.replace(v, name=v.name + suffix, tiles=tiles)
            for v in decode_suite(dims=(128,))
            if not waves or (v.window is None and v.softcap is None)]


def decode_fp8_library_suite():
    """The FP8 (e4m3) cache variants the kernel library ships for sm_90
    targets (python/CMakeLists.txt, build/kernels/<target>-decode-fp8;
    docs/KVCACHE.md "FP8 cache"): D 64/128 x f16/bf16 queries x causal
    (bottom-right) or not x contiguous or paged (16, 64 rows a page), the
    16-bit library's common shapes. 24 variants; with each decode kernel
    its quantising kv_append (and decode_check) of the same dtype, D and
    page size, so new rows are served too. The e4m3 conversions need
    sm_89+: compile with --target=h100 or h200 (or l4). Other shapes
    (D = 96..256, window, softcap) are compiled on demand or by
    --decode-fp8."""
    return [KVCacheVariant(f"kvf8_{dtype}_d{d}_{causal or 'full'}"
                           + (f"_page{page}" if page else ""),
                           dtype, d, causal=causal, page_size=page,
                           kv_dtype="e4m3")
            for dtype in ("f16", "bf16")
            for d in (64, 128)
            for causal in (None, "bottom_right")
            for page in (0, 16, 64)]


def decode_fp8_suite():
    """flash.attention_kvcache variants over an FP8 (e4m3) cache for the
    GPU tests and benchmarks (docs/KVCACHE.md "FP8 cache"; compile with
    flashfuse-compile --target=h100 or h200: the e4m3 conversions need
    sm_89+; python/tests/test_decode_fp8_gpu.py runs it): the library's
    (decode_fp8_library_suite) plus D = 256, and a window and softcap at
    D = 128, causal, contiguous and page 16. 44 variants; with each decode
    kernel its quantising kv_append, and the 16-bit decode_combine and
    decode_check kernels."""
    vs = decode_fp8_library_suite()
    for dtype in ("f16", "bf16"):
        for causal in (None, "bottom_right"):
            for page in (0, 16, 64):
                vs.append(KVCacheVariant(
                    f"kvf8_{dtype}_d256_{causal or 'full'}"
                    + (f"_page{page}" if page else ""),
                    dtype, 256, causal=causal, page_size=page,
                    kv_dtype="e4m3"))
        for page in (0, 16):
            suffix = f"_page{page}" if page else ""
            vs.append(KVCacheVariant(f"kvf8_{dtype}_d128_window{suffix}",
                                     dtype, 128, causal="bottom_right",
                                     window=(64, 0), page_size=page,
                                     kv_dtype="e4m3"))
            vs.append(KVCacheVariant(f"kvf8_{dtype}_d128_softcap{suffix}",
                                     dtype, 128, causal="bottom_right",
                                     softcap=30.0, page_size=page,
                                     kv_dtype="e4m3"))
    return vs


def varlen_suite():
    """Forward variants of packed batches (flash.attention with varlen
    operands, docs/KERNEL_ABI.md "Varlen"): f16/bf16 x D = 64/128 x full,
    causal (top_left) and causal bottom_right, a window and softcap at
    D = 128 (python/tests/test_varlen_gpu.py), and the dense forward of
    each of the first 12 (prefix dense_), so that one artifact holds both
    sides of `python -m flashfuse.bench --varlen`, compiled alike; then
    D = 256 causal (top_left) with and without the softcap (Gemma-2 and
    Gemma-3's left-padded prompts, flashfuse.hf); last, DeepSeek's MLA
    prefill (D = 192, Dv = 128) full, top-left and bottom-right causal, the
    packed prompts of its serving (the sm90 recipe's 128 x 128 tiles on
    Hopper). 38 variants."""
    vs = []
    for varlen in (True, False):
        for dtype in ("f16", "bf16"):
            for d in (64, 128):
                for causal in (None, "top_left", "bottom_right"):
                    name = (f"{'varlen' if varlen else 'dense'}_{dtype}_d{d}_"
                            f"{causal or 'full'}")
                    vs.append(KernelVariant(name, dtype, d, causal=causal,
                                            varlen=varlen))
            if varlen:
                vs.append(KernelVariant(f"varlen_{dtype}_d128_window", dtype,
                                        128, window=(64, 0), varlen=True))
                vs.append(KernelVariant(f"varlen_{dtype}_d128_softcap", dtype,
                                        128, causal="top_left", softcap=30.0,
                                        varlen=True))
    for dtype in ("f16", "bf16"):
        for softcap in (None, 30.0):
            vs.append(KernelVariant(
                f"varlen_{dtype}_d256_causal" + ("_softcap" if softcap
                                                 else ""),
                dtype, 256, causal="top_left", softcap=softcap, varlen=True))
    for dtype in ("f16", "bf16"):
        for causal in (None, "top_left", "bottom_right"):
            vs.append(KernelVariant(
                f"varlen_{dtype}_d192_dv128_{causal or 'full'}", dtype, 192,
                128, causal=causal, varlen=True))
    return vs


def varlen_backward_suite():
    """flash.attention_grad variants of packed batches, each with its
    forward (one artifact serves flashfuse.varlen_attention's autograd):
    f16/bf16 x D = 64/128 x full, causal (top_left) and causal
    bottom_right, a window and softcap at D = 128. 16 variants. No dense
    backward: on the sm90 recipe a dense op and a packed one of the same
    variant accumulate dQ in different layouts and cannot share an
    artifact (docs/KERNEL_ABI.md "Backward"); the training bench takes the
    dense side from the --backward artifact."""
    vs = []
    for dtype in ("f16", "bf16"):
        for d in (64, 128):
            for causal in (None, "top_left", "bottom_right"):
                vs.append(KernelVariant(
                    f"varlen_{dtype}_d{d}_{causal or 'full'}", dtype, d,
                    causal=causal, varlen=True, with_forward=True))
        vs.append(KernelVariant(f"varlen_{dtype}_d128_window", dtype, 128,
                                window=(64, 0), varlen=True,
                                with_forward=True))
        vs.append(KernelVariant(f"varlen_{dtype}_d128_softcap", dtype, 128,
                                causal="top_left", softcap=30.0, varlen=True,
                                with_forward=True))
    return vs


def varlen_dropout_suite():
    """flash.attention_grad variants of packed batches with dropout, each
    with its forward: the variants python/tests/test_varlen_gpu.py checks
    (DROPOUT_CASES, f16 and bf16), which the library does not carry (the
    package compiles them on first use). 8 variants; ptxas spills the sm90
    D = 128 backward's, as it does the dense dropout backward's, so compile
    them with --allow-spills as the package does."""
    cases = ((64, None), (64, "bottom_right"), (128, "top_left"),
             (128, "bottom_right"))
    return [KernelVariant(f"varlen_dropout_{dtype}_d{d}_{causal or 'full'}",
                          dtype, d, causal=causal, dropout=0.17, varlen=True,
                          with_forward=True)
            for dtype in ("f16", "bf16") for d, causal in cases]


def block_sparse_suite():
    """Forward variants walking block-sparse lists (FlexAttention's
    BlockMask layout, 128 x 128 blocks) and their dense counterparts, so
    that scripts/kernels/check_block_sparse.py times both from one
    artifact: f16 and bf16, D = 64, 128 and 256, partial lists only and
    partial + full lists, causal none and top-left (the lists of a causal
    BlockMask's mask_mod are walked without the band's attribute; the
    attribute variant is there for the dense baseline)."""
    vs = []
    for dtype in ("f16", "bf16"):
        for d in (64, 128, 256):
            for causal in (None, "top_left"):
                tag = causal or "full"
                vs.append(KernelVariant(f"dense_{dtype}_d{d}_{tag}", dtype, d,
                                        causal=causal))
                for bs in (1, 2):
                    vs.append(KernelVariant(
                        f"bs{bs}_{dtype}_d{d}_{tag}", dtype, d,
                        causal=causal, block_sparse=bs))
    return vs


def block_sparse_backward_suite():
    """flash.attention_grad variants walking block-sparse lists, each with
    its forward (one artifact serves block_sparse_attention's autograd), and
    their dense counterparts (prefix dense_), so that
    scripts/kernels/check_block_sparse_backward.py checks and times both
    from one artifact: f16 and bf16, D = 64 and 128, causal none and
    top-left, partial lists only and partial + full lists, 128 x 128
    blocks (D = 256 has no backward kernel). 24 variants."""
    return [dataclasses.replace(v, with_forward=True)
            for v in block_sparse_suite() if v.head_dim <= 128]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--tiles", default="",
                    help="force block_m,block_n,warps,stages on every variant")
    ap.add_argument("--backward", action="store_true",
                    help="flash.attention_grad variants (backward kernels); "
                         "with --varlen, those of packed batches")
    ap.add_argument("--decode", action="store_true",
                    help="flash.attention_kvcache variants (decode kernels)")
    ap.add_argument("--decode-fp8", action="store_true",
                    help="flash.attention_kvcache variants over an FP8 "
                         "(e4m3) cache for the GPU tests (compile with "
                         "--target=h100 or h200)")
    ap.add_argument("--decode-fp8-library", action="store_true",
                    help="the FP8 (e4m3) cache variants the kernel library "
                         "ships for sm_90 targets")
    ap.add_argument("--headdims", action="store_true",
                    help="forward and backward variants of the head dims "
                         "served on padded tiles (8-256, 192/128)")
    ap.add_argument("--varlen", action="store_true",
                    help="forward variants of packed variable-length batches "
                         "(and their dense counterparts)")
    ap.add_argument("--sm90ws", action="store_true",
                    help="the forward variants the sm90ws recipe serves "
                         "(compile with flashfuse-compile --recipe=sm90ws); "
                         "with --backward, its backward variants")
    ap.add_argument("--sm90ws-long", action="store_true",
                    help="the sm90ws forwards of 192 query rows the package "
                         "takes for long causal sequences at D = 64 "
                         "(compile with --recipe=sm90ws)")
    ap.add_argument("--fp8-mma-sync", action="store_true",
                    help="the FP8 (e4m3) forward variants of the mma.sync "
                         "kernel (compile with --target=l4, or --target=h100 "
                         "--recipe=sm80)")
    ap.add_argument("--fp8", action="store_true",
                    help="the FP8 (e4m3) forward variants (compile with "
                         "flashfuse-compile --target=h100)")
    ap.add_argument("--block-sparse", action="store_true",
                    help="forward variants walking block-sparse lists (and "
                         "their dense counterparts); with --backward, their "
                         "flash.attention_grad variants with the forwards")
    ap.add_argument("--decode-waves", action="store_true",
                    help="the decode variants of the tiles for grids of "
                         "several waves (compile with --target=h100 or "
                         "h200: two blocks an SM)")
    ap.add_argument("--decode-rows8", action="store_true",
                    help="the decode variants of block_m 8 (the rows as "
                         "the products' n) that the library ships")
    ap.add_argument("--decode-rows8-waves", action="store_true",
                    help="the same with the tiles for grids of several "
                         "waves (compile with --target=h100 or h200)")
    ap.add_argument("--varlen-dropout", action="store_true",
                    help="the varlen dropout backward variants (with their "
                         "forwards) of python/tests/test_varlen_gpu.py")
    ap.add_argument("--decode-dims", default="",
                    help="with --decode: these head dims (e.g. 80,160) "
                         "instead of the library's 32,64,96,128,256")
    args = ap.parse_args()
    if args.decode_dims and not args.decode:
        ap.error("--decode-dims goes with --decode")
    varlen_backward = args.varlen and args.backward
    sparse_backward = args.block_sparse and args.backward
    ws_backward = args.sm90ws and args.backward
    ws_varlen_backward = ws_backward and args.varlen
    ws_varlen = args.sm90ws and args.varlen and not args.backward
    if (args.backward + args.decode + args.decode_fp8
            + args.decode_fp8_library + args.decode_waves
            + args.decode_rows8 + args.decode_rows8_waves + args.headdims
            + args.varlen
            + args.sm90ws + args.sm90ws_long + args.fp8 + args.fp8_mma_sync
            + args.block_sparse + args.varlen_dropout
            - varlen_backward
            - sparse_backward - ws_backward - ws_varlen_backward
            - ws_varlen > 1):
        ap.error("--backward, --decode, --decode-fp8, --decode-fp8-library, "
                 "--decode-waves, --decode-rows8, --decode-rows8-waves, "
                 "--headdims, --varlen, --sm90ws, --sm90ws-long, --fp8, "
                 "--block-sparse and --varlen-dropout are separate suites (but --varlen "
                 "--backward is the varlen backward one, --block-sparse "
                 "--backward the block-sparse backward one, --sm90ws "
                 "--backward the sm90ws backward one, --sm90ws --varlen "
                 "its packed-batch forward one and --sm90ws --varlen "
                 "--backward its packed-batch backward one)")
    if args.tiles and (args.fp8 or args.fp8_mma_sync):
        ap.error("--tiles forces 16-bit sm80 tiles; the FP8 kernels choose "
                 "their own")
    suite = (varlen_dropout_suite() if args.varlen_dropout
             else block_sparse_backward_suite() if sparse_backward
             else block_sparse_suite() if args.block_sparse
             else sm90ws_varlen_backward_suite() if ws_varlen_backward
             else sm90ws_varlen_suite() if ws_varlen
             else varlen_backward_suite() if varlen_backward
             else varlen_suite() if args.varlen
             else sm90ws_backward_suite() if ws_backward
             else sm90ws_suite() if args.sm90ws
             else sm90ws_long_suite() if args.sm90ws_long
             else fp8_suite() if args.fp8
             else fp8_mma_sync_suite() if args.fp8_mma_sync
             else decode_fp8_suite() if args.decode_fp8
             else decode_fp8_library_suite() if args.decode_fp8_library
             else decode_waves_suite() if args.decode_waves
             else decode_rows8_suite() if args.decode_rows8
             else decode_rows8_suite(waves=True) if args.decode_rows8_waves
             else backward_suite() if args.backward
             else decode_suite(*([tuple(int(d) for d in
                                       args.decode_dims.split(","))]
                                     if args.decode_dims else []))
             if args.decode
             else headdims_suite() if args.headdims else default_suite())
    if args.tiles and (args.decode or args.decode_fp8
                       or args.decode_fp8_library or args.decode_waves
                       or args.decode_rows8 or args.decode_rows8_waves):
        ap.error("--tiles forces forward/backward tiles; the decode recipe "
                 "chooses its own")
    if args.tiles:
        tiles = tuple(int(x) for x in args.tiles.split(","))
        suite = [dataclasses.replace(v, tiles=tiles) for v in suite]
    header = "// Generated by scripts/kernels/gen_suite.py\n"
    with open(args.output, "w") as f:
        f.write(headdims_module(suite, header) if args.headdims else
                emit_module(suite, backward=args.backward
                            or args.varlen_dropout, header=header))


if __name__ == "__main__":
    main()
