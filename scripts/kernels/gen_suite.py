#!/usr/bin/env python3
"""Writes an MLIR module with one flash.attention per kernel variant to build.

The shapes in the IR only fix D, Dv and the dtype: batch, heads, lengths and
strides are kernel arguments. Used by scripts/kernels/build_suite.sh to make
the kernel library that the GPU tests and benchmarks load.
"""
import argparse

def variant(name, dtype, d, causal=None, window=None, softcap=None, bias=False,
            block_m=None, block_n=None, warps=4, stages=2, dropout=None):
    return dict(name=name, dtype=dtype, d=d, causal=causal, window=window,
                softcap=softcap, bias=bias, block_m=block_m, block_n=block_n,
                warps=warps, stages=stages, dropout=dropout)

def default_suite():
    vs = []
    for dtype in ("f16", "bf16"):
        for d in (32, 64, 96, 128, 256):
            for causal in (None, "top_left", "bottom_right"):
                if causal == "bottom_right" and d not in (64, 128):
                    continue
                vs.append(variant(f"{dtype}_d{d}_{causal or 'full'}", dtype, d, causal))
        vs.append(variant(f"{dtype}_d128_window", dtype, 128, window=(64, 0)))
        vs.append(variant(f"{dtype}_d128_softcap", dtype, 128, softcap=30.0))
        vs.append(variant(f"{dtype}_d64_bias", dtype, 64, bias=True))
    return vs

def backward_suite():
    """flash.attention_grad variants, plus the dropout forwards they pair with."""
    vs = []
    for dtype in ("f16", "bf16"):
        for d in (32, 64, 96, 128):
            for causal in (None, "top_left", "bottom_right"):
                if causal and d not in (64, 128):
                    continue
                vs.append(variant(f"{dtype}_d{d}_{causal or 'full'}", dtype, d, causal))
        vs.append(variant(f"{dtype}_d128_window", dtype, 128, window=(64, 0)))
        vs.append(variant(f"{dtype}_d64_softcap", dtype, 64, softcap=30.0))
        vs.append(variant(f"{dtype}_d64_bias", dtype, 64, bias=True))
        vs.append(variant(f"{dtype}_d64_dropout", dtype, 64, dropout=0.17))
    return vs

def attrs_of(v, with_config=True):
    attrs = []
    if v["causal"]:
        attrs.append(f"causal = #flash.causal<{v['causal']}>")
    if v["window"]:
        attrs.append(f"window_left = {v['window'][0]} : i64")
        attrs.append(f"window_right = {v['window'][1]} : i64")
    if v["softcap"]:
        attrs.append(f"softcap = {v['softcap']} : f32")
    if v.get("dropout"):
        attrs.append(f"dropout_p = {v['dropout']} : f32")
    if v["block_m"] and with_config:
        attrs.append(f"config = #flash.config<sm80, block_m = {v['block_m']}, "
                     f"block_n = {v['block_n']}, warps = {v['warps']}, stages = {v['stages']}>")
    return ("{" + ", ".join(attrs) + "}") if attrs else ""

def emit_backward(v):
    """The gradient op of variant v (bias: full size, with grad_bias), and
    for dropout also its forward, so that both come from one artifact."""
    t, d = v["dtype"], v["d"]
    q = f"tensor<1x1x128x{d}x{t}>"
    lse = "tensor<1x1x128xf32>"
    bt = "tensor<1x1x128x128xf32>"
    attr = attrs_of(v)
    seed_arg = ", %s: i64" if v.get("dropout") else ""
    seed_use = " seed(%s)" if v.get("dropout") else ""
    bias_arg = f", %b: {bt}" if v["bias"] else ""
    bias_use = f" bias(%b : {bt})" if v["bias"] else ""
    res = [q, q, q] + ([bt] if v["bias"] else [])
    names = ["%dq", "%dk", "%dv"] + (["%db"] if v["bias"] else [])
    out = (f"func.func @grad_{v['name']}(%do: {q}, %q: {q}, %k: {q}, %v: {q}, %o: {q}, %lse: {lse}{bias_arg}{seed_arg}) -> ({', '.join(res)}) {{\n"
           f"  {', '.join(names)} = flash.attention_grad %do, %q, %k, %v, %o, %lse{bias_use}{seed_use} {attr} : {q}, {q}, {q}, {q}, {q}, {lse} -> {', '.join(res)}\n"
           f"  return {', '.join(names)} : {', '.join(res)}\n}}\n")
    if v.get("dropout"):
        # The forward that makes the dropout mask keeps its own default tiles:
        # the keep test is per element, and --tiles may be backward-only
        # shapes (more warps than block_m has 16-row slabs).
        fwd_attr = attrs_of(v, with_config=False)
        out += (f"func.func @fwd_{v['name']}(%q: {q}, %k: {q}, %v: {q}, %s: i64) -> ({q}, {lse}) {{\n"
                f"  %o, %lse = flash.attention %q, %k, %v seed(%s) {fwd_attr} : {q}, {q}, {q} -> {q}, {lse}\n"
                f"  return %o, %lse : {q}, {lse}\n}}\n")
    return out

def emit(v):
    t, d = v["dtype"], v["d"]
    q = f"tensor<1x1x128x{d}x{t}>"
    attrs = []
    if v["causal"]:
        attrs.append(f"causal = #flash.causal<{v['causal']}>")
    if v["window"]:
        attrs.append(f"window_left = {v['window'][0]} : i64")
        attrs.append(f"window_right = {v['window'][1]} : i64")
    if v["softcap"]:
        attrs.append(f"softcap = {v['softcap']} : f32")
    if v["block_m"]:
        attrs.append(f"config = #flash.config<sm80, block_m = {v['block_m']}, "
                     f"block_n = {v['block_n']}, warps = {v['warps']}, stages = {v['stages']}>")
    attr = ("{" + ", ".join(attrs) + "}") if attrs else ""
    bias_arg = ", %b: tensor<1x1x128x128xf32>" if v["bias"] else ""
    bias_use = " bias(%b : tensor<1x1x128x128xf32>)" if v["bias"] else ""
    return (f"func.func @{v['name']}(%q: {q}, %k: {q}, %v: {q}{bias_arg}) -> ({q}, tensor<1x1x128xf32>) {{\n"
            f"  %o, %lse = flash.attention %q, %k, %v{bias_use} {attr} : {q}, {q}, {q} -> {q}, tensor<1x1x128xf32>\n"
            f"  return %o, %lse : {q}, tensor<1x1x128xf32>\n}}\n")

def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--tiles", default="",
                    help="force block_m,block_n,warps,stages on every variant")
    ap.add_argument("--backward", action="store_true",
                    help="flash.attention_grad variants (backward kernels)")
    args = ap.parse_args()
    suite = backward_suite() if args.backward else default_suite()
    if args.tiles:
        bm, bn, w, s = (int(x) for x in args.tiles.split(","))
        for v in suite:
            v.update(block_m=bm, block_n=bn, warps=w, stages=s)
    with open(args.output, "w") as f:
        f.write("// Generated by scripts/kernels/gen_suite.py\n")
        for v in suite:
            f.write(emit_backward(v) if args.backward else emit(v))

if __name__ == "__main__":
    main()
