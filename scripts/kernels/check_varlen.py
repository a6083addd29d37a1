#!/usr/bin/env python3
"""A few odd packed batches through flashfuse.varlen_attention, forward and
backward, each sequence checked against its own f32 reference
(FlashAttention's rule, by check_packed and check_packed_gradients of
python/tests/test_varlen_gpu.py: O and LSE, then dQ, dK, dV with 3x):
empty sequences (no queries, no keys), length 1, block multiples +-1,
Lq != Lk, GQA, both causal alignments, D = 64 and 128. Small enough for
compute-sanitizer:

    compute-sanitizer --tool memcheck --error-exitcode 9 \
        python3 scripts/kernels/check_varlen.py

with FLASHFUSE_KERNEL_DIR naming the artifacts of gen_suite.py --varlen
and gen_suite.py --varlen --backward (os.pathsep-separated), and
FLASHFUSE_RUNTIME_LIB the runtime. --forward-only skips the gradients.
Exit status 1 if any check fails or a kernel is missing.
"""
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "python" / "tests"))

import torch  # noqa: E402

from test_varlen_gpu import (check_packed,  # noqa: E402
                             check_packed_gradients)

CASES = [
    # (pairs (Lq, Lk) per sequence, heads (Hq, Hkv))
    ([(1, 1), (0, 0), (65, 65), (129, 129), (257, 257)], (8, 2)),
    ([(3, 0), (1, 100), (200, 17), (0, 5), (129, 129), (64, 63)], (4, 4)),
    # Empty sequences last: their first row is the packed tensor's end, so
    # the (zero-filled, never read) tiles of a key block without queries,
    # or a query block without keys, are addressed one row past it.
    ([(100, 100), (17, 0), (0, 33)], (8, 2)),
    ([(40, 70), (0, 20), (33, 0)], (4, 4)),
]


def main():
    os.environ["FLASHFUSE_POISON_OUTPUTS"] = "1"
    checks = [("fwd", check_packed)]
    if "--forward-only" not in sys.argv[1:]:
        checks.append(("bwd", check_packed_gradients))
    failures = 0
    for pairs, heads in CASES:
        for d in (64, 128):
            for causal in (False, "top_left", "bottom_right"):
                for kind, check in checks:
                    what = f"{kind} D={d} causal={causal} heads={heads} {pairs}"
                    try:
                        check(pairs, torch.float16, d, causal, heads)
                        torch.cuda.synchronize()
                        print(f"ok   {what}")
                    except BaseException as e:  # pytest's skip is one
                        if isinstance(e, KeyboardInterrupt):
                            raise
                        failures += 1
                        first = (str(e).strip().splitlines()[0] if str(e)
                                 else type(e).__name__)
                        print(f"FAIL {what}: {first}")
    print(f"check_varlen: {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
