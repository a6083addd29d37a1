#!/usr/bin/env python3
"""A few odd packed batches through flashfuse.varlen_attention, each
sequence checked against its own f32 reference (FlashAttention's rule, by
check_packed of python/tests/test_varlen_gpu.py): empty sequences (no
queries, no keys), length 1, block multiples +-1, Lq != Lk, GQA, both
causal alignments, D = 64 and 128. Small enough for compute-sanitizer:

    compute-sanitizer --tool memcheck --error-exitcode 9 \
        python3 scripts/kernels/check_varlen.py

with FLASHFUSE_KERNEL_DIR naming an artifact of gen_suite.py --varlen and
FLASHFUSE_RUNTIME_LIB the runtime. Exit status 1 if any check fails or a
kernel is missing.
"""
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "python" / "tests"))

import torch  # noqa: E402

from test_varlen_gpu import check_packed  # noqa: E402

CASES = [
    # (pairs (Lq, Lk) per sequence, heads (Hq, Hkv))
    ([(1, 1), (0, 0), (65, 65), (129, 129), (257, 257)], (8, 2)),
    ([(3, 0), (1, 100), (200, 17), (0, 5), (129, 129), (64, 63)], (4, 4)),
]


def main():
    os.environ["FLASHFUSE_POISON_OUTPUTS"] = "1"
    failures = 0
    for pairs, heads in CASES:
        for d in (64, 128):
            for causal in (False, "top_left", "bottom_right"):
                what = f"D={d} causal={causal} heads={heads} {pairs}"
                try:
                    check_packed(pairs, torch.float16, d, causal, heads)
                    torch.cuda.synchronize()
                    print(f"ok   {what}")
                except BaseException as e:  # pytest's skip is a BaseException
                    if isinstance(e, KeyboardInterrupt):
                        raise
                    failures += 1
                    first = str(e).strip().splitlines()[0] if str(e) else type(e).__name__
                    print(f"FAIL {what}: {first}")
    print(f"check_varlen: {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
