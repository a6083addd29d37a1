#!/usr/bin/env python3
"""Runs a function before and after flash-raise-attention on the same random
inputs, on the CPU, and compares the results.

    scripts/check_raise_numerics.py [--opt TOOL] FILE.mlir...

FILE holds one public function over ranked tensors (f32/f16 data, i1 masks,
i64 token ids and cache positions, all drawn below 32), e.g.
test/models/cases/*.mlir and test/models/exec_*.mlir.
"Before" is the file as is; "after" is raised with --opt (flashfuse-opt) and
then materialised by `--flash-cpu-pipeline=lowering=naive` (of --naive-opt,
default --opt), which also bufferises and lowers to LLVM for mlir-runner
(LLVM 22 tools on PATH; plain Python, no numpy or torch, so lit runs it).
Dropout cases are not comparable (the op draws its own random numbers).

FILE=REF compares FILE after raising with REF as is, on the same inputs:
for a FILE that cannot run before raising (torch-mlir's tm_tensor.attention,
which nothing lowers) and a REF that computes the same function (the export
with SDPA decomposed); their arguments must have the same types.
Exit status 1 when any file differs by more than --tol or raises nothing.

--rel measures the difference relative to the largest |before| (at least
1e-2), as flashfuse-numerics measures errors (CaseSpec.cpp: 4e-3 for an
f16 O): for 16-bit outputs, whose rounding grows with their magnitude, e.g.
an attention the raise moves from f16 arithmetic to an FP8 op's f32.

--pass replaces flash-raise-attention by other rewrites that must keep the
function (e.g. --pass=--flash-derive-block-sparsity on a flash.attention
with a mask_mod), --count names the text that counts a rewrite in their
output, and --after-lowering=loops runs "after" through the tiled CPU
lowering instead of the naive one.
"""
import argparse
import math
import os
import random
import re
import shutil
import subprocess
import sys
TOSA = ("--pass-pipeline=builtin.module(func.func(tosa-to-linalg-named,"
        "tosa-to-linalg,tosa-to-arith,tosa-to-tensor))")
# The project's CPU flow (lib/Pipelines): flash-lower-naive, bufferization
# and the lowering to LLVM, defined once; a module without flash ops only
# goes through the latter.
TO_LLVM = ["--flash-cpu-pipeline=lowering=naive"]


def run(cmd, text):
    p = subprocess.run(cmd, input=text, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(" ".join(cmd) + "\n" + p.stderr[-3000:])
    return p.stdout


def literal(t, rng):
    """Flat random values for tensor type `t`: its dims, element type, size
    and the text of a dense literal."""
    dims = [int(d) for d in re.findall(r"(\d+)x", t)]
    elt = t.rsplit("x", 1)[-1].rstrip(">")
    n = math.prod(dims)
    if elt == "i1":
        vals = ["true" if rng.random() > 0.2 else "false" for _ in range(n)]
    elif elt == "i64":
        # Token ids: below the smallest vocabulary of the fixtures.
        vals = [str(rng.randrange(32)) for _ in range(n)]
    else:
        vals = [f"{rng.gauss(0.0, 1.0):.8e}" for _ in range(n)]
    return dims, elt, n, ", ".join(vals)


def driver(text, rng):
    """@main: random arguments, one call, the result printed as f32."""
    name, args, res = re.search(
        r"func\.func @(\w+)\((.*?)\) -> (tensor<[^>]*>)", text).groups()
    types = re.findall(r"%\w+: (tensor<[^>]*>)", args)
    body = []
    for i, t in enumerate(types):
        dims, elt, n, vals = literal(t, rng)
        ids = ", ".join(str(j) for j in range(len(dims)))
        body.append(f"%f{i} = arith.constant dense<[{vals}]> : tensor<{n}x{elt}>")
        body.append(f"%a{i} = tensor.expand_shape %f{i} [[{ids}]] "
                    f"output_shape {dims} : tensor<{n}x{elt}> into {t}")
    body.append(f"%r = func.call @{name}("
                + ", ".join(f"%a{i}" for i in range(len(types)))
                + f") : ({', '.join(types)}) -> {res}")
    out, f32 = "%r", res.replace("f16", "f32")
    if f32 != res:
        body.append(f"%e = tensor.empty() : {f32}")
        body.append(f"%r32 = linalg.copy ins(%r : {res}) outs(%e : {f32}) -> {f32}")
        out = "%r32"
    mref = f32.replace("tensor", "memref")
    body.append(f"%m = bufferization.to_buffer {out} : {f32} to {mref}")
    body.append(f"%u = memref.cast %m : {mref} to memref<*xf32>")
    body.append("func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()")
    return ("func.func @main() {\n" + "\n".join(body) + "\nreturn\n}\n"
            "func.func private @printMemrefF32(memref<*xf32>) "
            "attributes {llvm.emit_c_interface}\n")


def with_main(text, main):
    """Appends @main inside the module, before any resource section."""
    text, sep, resources = text.partition("{-#")
    return text.rstrip().rstrip("}") + main + "}\n" + sep + resources


def execute(text, lowering_opt, lib_dir, to_llvm=TO_LLVM):
    if "tosa." in text:
        text = run([lowering_opt, TOSA], text)
    llvm = run([lowering_opt] + to_llvm, text)
    out = run(["mlir-runner", "-e", "main", "-entry-point-result=void",
               f"-shared-libs={lib_dir}/libmlir_runner_utils.so,"
               f"{lib_dir}/libmlir_c_runner_utils.so"], llvm)
    data = out.split("\n", 1)[1]  # drop the memref descriptor line
    return [float(x) for x in re.findall(
        r"-?\d+\.?\d*(?:e[-+]?\d+)?|-?nan|-?inf", data)]


def check(path, opt, naive, lib_dir, ref=None,
          passes=("--flash-raise-attention",), count="= flash.attention",
          after_lowering="naive"):
    """Number of rewrites, the largest difference and the largest |before|."""
    text = open(path).read()
    ref_text = open(ref).read() if ref else text
    # Same seed, same argument types: the same inputs for both functions.
    before = execute(with_main(ref_text, driver(ref_text, random.Random(0))),
                     naive, lib_dir)
    raised = run([opt] + list(passes), text)
    after = execute(with_main(raised, driver(text, random.Random(0))), naive,
                    lib_dir, [f"--flash-cpu-pipeline=lowering={after_lowering}"])
    n = raised.count(count)
    if len(before) != len(after) or not before:
        return n, math.inf, 0.0
    return (n, max(abs(a - b) for a, b in zip(before, after)),
            max(abs(b) for b in before))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--opt", default="flashfuse-opt",
                    help="flashfuse-opt that raises")
    ap.add_argument("--naive-opt", help="flashfuse-opt that has "
                    "--flash-lower-naive (default: --opt)")
    ap.add_argument("--lib-dir", help="where libmlir_runner_utils.so is "
                    "(default: the lib/ next to mlir-runner's bin/)")
    ap.add_argument("--tol", type=float, default=2e-3)
    ap.add_argument("--rel", action="store_true",
                    help="--tol relative to max(max |before|, 1e-2)")
    ap.add_argument("--pass", dest="passes", action="append",
                    help="flashfuse-opt argument making \"after\" (repeatable; "
                    "default --flash-raise-attention)")
    ap.add_argument("--count", default="= flash.attention",
                    help="text counting one rewrite in \"after\"")
    ap.add_argument("--after-lowering", default="naive",
                    choices=["naive", "loops"])
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    if not a.lib_dir:
        runner = os.path.realpath(shutil.which("mlir-runner") or "")
        a.lib_dir = os.path.join(os.path.dirname(os.path.dirname(runner)), "lib")
    bad = 0
    for arg in a.files:
        path, _, ref = arg.partition("=")
        try:
            n, err, mag = check(path, a.opt, a.naive_opt or a.opt, a.lib_dir,
                           ref or None,
                           a.passes or ["--flash-raise-attention"], a.count,
                           a.after_lowering)
        except RuntimeError as e:
            print(f"ERROR {os.path.basename(path)}: {e}")
            bad += 1
            continue
        if a.rel:
            err /= max(mag, 1e-2)
        ok = n > 0 and err <= a.tol
        bad += not ok
        print(f"{'OK   ' if ok else 'BAD  '}{os.path.basename(path)}: "
              f"{n} attention(s), max |before - after| = {err:.2e}"
              + (" of max |before|" if a.rel else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
