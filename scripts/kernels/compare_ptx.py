#!/usr/bin/env python3
"""Compares the PTX of two sets of artifacts kernel by kernel.

    compare_ptx.py BEFORE_DIR AFTER_DIR

For each artifact directory D under BEFORE_DIR (e.g. h100-decode, written by
flashfuse-compile), every kernel of D/kernels.ptx (its block from its
`// .globl` line to the next) must be byte-identical in AFTER_DIR/D, and the
module header too; kernels only in AFTER are listed by name. Exit status 1
if a kernel differs or is missing. A change that adds kernels must keep the
others' PTX unchanged: LLVM numbers a kernel's block labels by its position
in the module, so new kernels go last (flash-lower-to-gpu puts kv_append
and decode_check there).
"""
import pathlib
import re
import sys


def split(path):
    text = pathlib.Path(path).read_text()
    parts = re.split(r"(?m)^(?=\t// \.globl\t)", text)
    blocks = {}
    for part in parts[1:]:
        blocks[re.match(r"\t// \.globl\t(\S+)", part).group(1)] = part
    return parts[0], blocks


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    before, after = map(pathlib.Path, sys.argv[1:])
    ok = True
    for d in sorted(p for p in before.iterdir() if (p / "kernels.ptx").is_file()):
        head_b, old = split(d / "kernels.ptx")
        head_a, new = split(after / d.name / "kernels.ptx")
        differ = [n for n in old if n in new and new[n] != old[n]]
        missing = [n for n in old if n not in new]
        added = sorted(n for n in new if n not in old)
        print(f"{d.name}: {len(old) - len(differ) - len(missing)}/{len(old)} kernels "
              f"byte-identical, header {'same' if head_a == head_b else 'DIFFERS'}, "
              f"{len(added)} new")
        for n in differ:
            print("  DIFFERS", n)
        for n in missing:
            print("  MISSING", n)
        ok &= not differ and not missing and head_a == head_b
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
