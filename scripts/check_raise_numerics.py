#!/usr/bin/env python3
"""Runs a function before and after flash-raise-attention on the same random
inputs, on the CPU, and compares the results.

    scripts/check_raise_numerics.py [--naive-opt TOOL] FILE.mlir...

FILE holds one public function over ranked tensors (f32/f16 data, i1 masks,
i64 token ids), e.g. test/models/cases/*.mlir and test/models/exec_*.mlir.
"Before" is the file as is; "after" is raised with build/bin/flashfuse-opt and
then materialised by `--flash-lower-naive` of TOOL (default: the same
flashfuse-opt; the naive lowering lives on the `lower` branch until it is
merged). Both run through mlir-opt's bufferisation and LLVM lowering and
mlir-runner (LLVM 22 tools on PATH, numpy needed, no torch). Dropout cases
are not comparable (the op draws its own random numbers) and are skipped by
the caller. Exit status 1 when any file differs by more than --tol.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
RAISE = os.path.join(ROOT, "build", "bin", "flashfuse-opt")
LIB = "/usr/lib/llvm-22/lib"
TOSA = ("--pass-pipeline=builtin.module(func.func(tosa-to-linalg-named,"
        "tosa-to-linalg,tosa-to-arith,tosa-to-tensor))")
TO_LLVM = [
    "--one-shot-bufferize=bufferize-function-boundaries",
    "--buffer-deallocation-pipeline", "--convert-linalg-to-loops",
    "--convert-scf-to-cf", "--expand-strided-metadata", "--lower-affine",
    "--finalize-memref-to-llvm", "--convert-math-to-llvm",
    "--convert-math-to-libm", "--convert-arith-to-llvm",
    "--convert-index-to-llvm", "--convert-func-to-llvm",
    "--convert-cf-to-llvm", "--reconcile-unrealized-casts"]


def run(cmd, text):
    p = subprocess.run(cmd, input=text, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(" ".join(cmd) + "\n" + p.stderr[-3000:])
    return p.stdout


def literal(t, rng):
    """A flat dense constant for tensor type `t`, expanded to its shape."""
    dims = [int(d) for d in re.findall(r"(\d+)x", t)]
    elt = t.rsplit("x", 1)[-1].rstrip(">")
    n = int(np.prod(dims))
    if elt == "i1":
        vals = ["true" if x else "false" for x in rng.random(n) > 0.2]
    elif elt == "i64":
        # Token ids: below the smallest vocabulary of the fixtures.
        vals = [str(int(x)) for x in rng.integers(0, 32, n)]
    else:
        vals = [f"{float(x):.8e}" for x in rng.standard_normal(n)]
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


def execute(text):
    if "tosa." in text:
        text = run(["mlir-opt", TOSA], text)
    llvm = run(["mlir-opt"] + TO_LLVM, text)
    out = run(["mlir-runner", "-e", "main", "-entry-point-result=void",
               f"-shared-libs={LIB}/libmlir_runner_utils.so,"
               f"{LIB}/libmlir_c_runner_utils.so"], llvm)
    data = out.split("\n", 1)[1]  # drop the memref descriptor line
    return np.array([float(x) for x in re.findall(
        r"-?\d+\.?\d*(?:e[-+]?\d+)?|-?nan|-?inf", data)])


def check(path, naive):
    text = open(path).read()
    main = driver(text, np.random.default_rng(0))
    before = execute(with_main(text, main))
    raised = run([RAISE, "--flash-raise-attention"], text)
    after = execute(with_main(run([naive, "--flash-lower-naive"], raised), main))
    if before.shape != after.shape:
        return raised.count("= flash.attention"), float("inf")
    return raised.count("= flash.attention"), float(np.max(np.abs(before - after)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--naive-opt", default=RAISE,
                    help="flashfuse-opt that has --flash-lower-naive")
    ap.add_argument("--tol", type=float, default=2e-3)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    bad = 0
    for path in a.files:
        try:
            n, err = check(path, a.naive_opt)
        except RuntimeError as e:
            print(f"ERROR {os.path.basename(path)}: {e}")
            bad += 1
            continue
        ok = n > 0 and err <= a.tol
        bad += not ok
        print(f"{'OK   ' if ok else 'BAD  '}{os.path.basename(path)}: "
              f"{n} attention(s), max |before - after| = {err:.2e}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
