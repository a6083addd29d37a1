#!/usr/bin/env python3
"""Derives an FP8-KV-cache decode fixture from an f32 decode fixture.

    scripts/derive_fp8cache_fixture.py SRC.linalg.mlir DST.linalg.mlir

SRC is a decode step exported by scripts/export_models.py over a static
cache (test/models/llama_decode.linalg.mlir, exec_llama_decode.linalg.mlir):
its caches are function arguments, written by scatter loops (%scatterN,
N even for K, odd for V, two per layer) and read by the attention. DST is
the same model as an f16 model with an f8E4M3FN cache, the way
vLLM's / Hugging Face's FP8 KV caches run it, per kv head scales held by
the model as f32 constants:

  - every f32 becomes f16 (the weights of a "weights kept" fixture are
    converted too), -inf constants become f16's;
  - the cache arguments and the scatter loops are f8E4M3FN; each new value
    is quantised as it is written, `(x / scale[h]).to(float8_e4m3fn)`;
  - the updated cache is dequantised before attention,
    `cache.to(f16) * scale.view(1, Hkv, 1, 1)`: K in one fused generic, V as
    an up-cast generic then a mul generic (both forms torch-mlir emits).

torch is not needed (nor is it what makes the fixture): the rewrite is
textual, so that the fixture stays the exported model except for the cache.
"""
import re
import struct
import sys

# Per kv head scales, positive powers of two (layer 1 takes them reversed),
# far enough apart that a descale read at the wrong head shows.
SCALES = {"k": ["0.5", "2.0"], "v": ["0.25", "1.0"]}


def to_f16_blob(m):
    """A resource blob of f32 weights as f16 (4-byte alignment header, then
    the little-endian values)."""
    key, hexs = m.group(1), m.group(2)
    if "float32" not in key:
        return m.group(0)
    raw = bytes.fromhex(hexs[2:])
    data = raw[4:]
    vals = struct.unpack("<%df" % (len(data) // 4), data)
    out = struct.pack("<I", 2) + struct.pack("<%de" % len(vals), *vals)
    return f'{key}: "0x{out.hex().upper()}"'


def dequantise(kind, layer, cache, cache8, cache16, scale, hkv):
    """The dequantise of one updated cache; defines %{kind}deq{layer}."""
    e = f"%{kind}deq{layer}_e"
    st = f"tensor<1x{hkv}x1x1xf32>"
    par = '["parallel", "parallel", "parallel", "parallel"]'
    if kind == "k":
        return f"""
    // The K cache of layer {layer} dequantised: one fused generic.
    {e} = tensor.empty() : {cache16}
    %kdeq{layer} = linalg.generic {{indexing_maps = [#map3, #fp8_head, #map3], iterator_types = {par}}} ins({cache}, {scale} : {cache8}, {st}) outs({e} : {cache16}) {{
    ^bb0(%in: f8E4M3FN, %in_s: f32, %out: f16):
      %fp8_x = arith.extf %in : f8E4M3FN to f16
      %fp8_s = arith.truncf %in_s : f32 to f16
      %fp8_m = arith.mulf %fp8_x, %fp8_s : f16
      linalg.yield %fp8_m : f16
    }} -> {cache16}"""
    return f"""
    // The V cache of layer {layer} dequantised: an up-cast, then the mul.
    {e} = tensor.empty() : {cache16}
    %vup{layer} = linalg.generic {{indexing_maps = [#map3, #map3], iterator_types = {par}}} ins({cache} : {cache8}) outs({e} : {cache16}) {{
    ^bb0(%in: f8E4M3FN, %out: f16):
      %fp8_x = arith.extf %in : f8E4M3FN to f16
      linalg.yield %fp8_x : f16
    }} -> {cache16}
    %vdeq{layer} = linalg.generic {{indexing_maps = [#map3, #fp8_head, #map3], iterator_types = {par}}} ins(%vup{layer}, {scale} : {cache16}, {st}) outs({e} : {cache16}) {{
    ^bb0(%in: f16, %in_s: f32, %out: f16):
      %fp8_s = arith.truncf %in_s : f32 to f16
      %fp8_m = arith.mulf %in, %fp8_s : f16
      linalg.yield %fp8_m : f16
    }} -> {cache16}"""


def derive(text, header):
    body, sep, res = text.partition("{-#")
    body = body.split("\n", 1)[1]  # the exporter's header line
    body = re.sub(r"(?<![A-Za-z0-9_.])f32\b", "f16", body)
    body = re.sub(r"xf32\b", "xf16", body)
    body = body.replace("0xFF800000", "0xFC00")
    res = re.sub(r'(\w[\w.]*): "(0x[0-9A-Fa-f]+)"', to_f16_blob, res)

    cache16, shape = re.search(
        r"iter_args\(%scatter0_acc = %arg\d+\) -> \((tensor<([0-9x]+)xf16>)\)",
        body).groups()
    cache8 = f"tensor<{shape}xf8E4M3FN>"
    hkv = int(shape.split("x")[1])
    sig = re.search(r"func\.func @(\w+)\(.*?\) -> [^{]*\{\n", body)
    name = sig.group(1)
    body = body.replace(sig.group(0), sig.group(0).replace(cache16, cache8)
                        .replace(f"@{name}(", f"@{name}_fp8cache("), 1)

    scales = {}

    def loop(m):
        text, cache, idx = m.group(0), m.group(1), int(m.group(2))
        kind, layer = "kv"[idx % 2], idx // 2
        scale = f"%{kind}_scale{layer}"
        scales[scale] = (kind, layer)
        p = f"%scatter{idx}"
        text = text.replace(f"-> ({cache16})", f"-> ({cache8})")
        text = re.sub(
            rf"( *){p}_r = tensor.insert {p}_v into (.*) : {re.escape(cache16)}",
            lambda i: (
                f"{i.group(1)}{p}_s = tensor.extract {scale}[{p}_c0, {p}_y1, "
                f"{p}_c0, {p}_c0] : tensor<1x{hkv}x1x1xf32>\n"
                f"{i.group(1)}{p}_st = arith.truncf {p}_s : f32 to f16\n"
                f"{i.group(1)}{p}_q = arith.divf {p}_v, {p}_st : f16\n"
                f"{i.group(1)}{p}_v8 = arith.truncf {p}_q : f16 to f8E4M3FN\n"
                f"{i.group(1)}{p}_r = tensor.insert {p}_v8 into {i.group(2)} : "
                f"{cache8}"), text)
        text = text.replace(f"scf.yield {p}_r : {cache16}",
                            f"scf.yield {p}_r : {cache8}")
        return text + dequantise(kind, layer, cache, cache8, cache16, scale,
                                 hkv)

    body = re.sub(r"(%\d+) = scf\.for %scatter(\d+)_i .*?\n *scf\.yield[^\n]*"
                  r"\n *\}", loop, body, flags=re.S)
    # The attention (its K/V head repeat) reads the dequantised caches.
    for m in re.finditer(r"(%\d+) = scf\.for %scatter(\d+)_i", body):
        cache, idx = m.group(1), int(m.group(2))
        use = f"ins({cache} : {cache16})"
        assert body.count(use) == 1, (cache, body.count(use))
        body = body.replace(use, f"ins(%{'kv'[idx % 2]}deq{idx // 2} : {cache16})")

    decl = ""
    for scale, (kind, layer) in sorted(scales.items()):
        vals = SCALES[kind][:hkv]
        if layer % 2:
            vals = vals[::-1]
        inner = ", ".join(f"[[{v}]]" for v in vals)
        decl += (f"    {scale} = arith.constant dense<[[{inner}]]> : "
                 f"tensor<1x{hkv}x1x1xf32>\n")
    sig = re.search(r"func\.func @\w+\(.*?\) -> [^{]*\{\n", body).group(0)
    body = body.replace(sig, sig + decl, 1)
    body = body.replace(
        "module {",
        "#fp8_head = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>\nmodule {", 1)
    return header + body + sep + res


def main():
    src, dst = sys.argv[1], sys.argv[2]
    header = (f"// Derived from {src.rsplit('/', 1)[-1]} by "
              "scripts/derive_fp8cache_fixture.py:\n"
              "// an f16 model whose KV cache is f8E4M3FN with per kv head "
              "scales, quantised\n// as it is written and dequantised "
              "before attention.\n")
    open(dst, "w").write(derive(open(src).read(), header))


if __name__ == "__main__":
    main()
