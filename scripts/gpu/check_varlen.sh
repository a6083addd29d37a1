#!/usr/bin/env bash
# The packed-batch (varlen) forward and backward on a GPU machine (torch
# with CUDA, compute-sanitizer): given the artifacts built by
# flashfuse-compile from `scripts/kernels/gen_suite.py --varlen` (the
# varlen forwards and their dense counterparts) and `gen_suite.py --varlen
# --backward` (the varlen backward kernels with their forwards), runs
#   1. python/tests/test_varlen_gpu.py (every sequence of ragged packed
#      batches against its own f32 reference, FlashAttention's rule: O and
#      LSE, and dQ, dK, dV against torch autograd with 3x; a skipped test,
#      i.e. a kernel missing from the artifacts, fails this step),
#   2. scripts/kernels/check_varlen.py under compute-sanitizer --tool
#      memcheck (odd shapes: empty sequences, length 1, Lq != Lk, GQA;
#      forward and backward),
#   3. `python -m flashfuse.bench --varlen`: 16 sequences of 128..4k
#      tokens (~32k in all), causal, bf16, D = 128, against the dense
#      forward on equal lengths of the same total (target >= 0.95x),
#   4. the same for a training step (`--varlen-backward`: forward and
#      backward, fp16; the dense side's backward from DENSE_BWD_ARTIFACT,
#      `gen_suite.py --backward`, skipped without it), target >= 0.95x too,
# writing the logs, bench-varlen.json and bench-varlen-bwd.json to $OUT,
# and exits non-zero if step 1 or 2 failed.
#
# usage: scripts/gpu/check_varlen.sh ARTIFACT_DIR BWD_ARTIFACT_DIR [DET_ARTIFACT_DIR]
#   DET_ARTIFACT_DIR: the backward suite compiled with --deterministic, for
#   the test of bit-identical gradients (deselected without it).
# env:   FLASHFUSE_RUNTIME_LIB (default <repo>/build-rt/lib/...; build it
#        with -DFLASHFUSE_RUNTIME_ONLY=ON), OUT (default ./gpu-out),
#        PYTHON (default python3; it needs torch and pytest),
#        COMPUTE_SANITIZER (default: on PATH, else /usr/local/cuda/bin),
#        DENSE_BWD_ARTIFACT (the dense backward kernels, `gen_suite.py
#        --backward`: test_varlen_gpu.py compares against them, and step 4
#        times them; without it that test skips, which fails step 1).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ARTIFACT="$(cd "${1:?usage: $0 ARTIFACT_DIR BWD_ARTIFACT_DIR}" && pwd)"
BWD_ARTIFACT="$(cd "${2:?usage: $0 ARTIFACT_DIR BWD_ARTIFACT_DIR}" && pwd)"
OUT="${OUT:-$PWD/gpu-out}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
export FLASHFUSE_RUNTIME_LIB="${FLASHFUSE_RUNTIME_LIB:-$ROOT/build-rt/lib/libflashfuse_runtime.so}"
export FLASHFUSE_KERNEL_DIR="$ARTIFACT:$BWD_ARTIFACT${DENSE_BWD_ARTIFACT:+:$DENSE_BWD_ARTIFACT}"
SELECT=()
if [[ $# -ge 3 ]]; then
  FLASHFUSE_KERNEL_DIR="$FLASHFUSE_KERNEL_DIR:$(cd "$3" && pwd)"
else
  SELECT=(-k "not deterministic")
fi
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
rc=0
(cd "$ROOT/python" && "$PYTHON" -m pytest -q -rs "${SELECT[@]}" tests/test_varlen_gpu.py) \
  2>&1 | tee "$OUT/test_varlen_gpu.log"
if [[ ${PIPESTATUS[0]} != 0 ]] || grep -q " skipped" "$OUT/test_varlen_gpu.log"; then
  echo "check_varlen: test_varlen_gpu.py failed or skipped tests"; rc=1
fi
SANITIZER="${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}"
"$SANITIZER" --tool memcheck --error-exitcode 9 \
  "$PYTHON" "$ROOT/scripts/kernels/check_varlen.py" 2>&1 | tee "$OUT/memcheck.log"
[[ ${PIPESTATUS[0]} == 0 ]] || { echo "check_varlen: memcheck failed"; rc=1; }
"$PYTHON" -m flashfuse.bench --varlen --json "$OUT/bench-varlen.json" \
  2>&1 | tee "$OUT/bench-varlen.txt"
# The training step: the packed side's backward from the varlen backward
# artifact, the dense side's from the dense one (a dense and a packed
# backward of one variant cannot share an artifact on sm90,
# docs/KERNEL_ABI.md "Backward").
if [[ -n "${DENSE_BWD_ARTIFACT:-}" ]]; then
  FLASHFUSE_KERNEL_DIR="$BWD_ARTIFACT:$DENSE_BWD_ARTIFACT:$ARTIFACT" \
    "$PYTHON" -m flashfuse.bench --varlen --varlen-backward --dtypes fp16 \
    --json "$OUT/bench-varlen-bwd.json" 2>&1 | tee "$OUT/bench-varlen-bwd.txt"
else
  echo "check_varlen: no DENSE_BWD_ARTIFACT, training-step bench skipped"
fi
echo "check_varlen: $([[ $rc == 0 ]] && echo PASS || echo FAIL)"
exit "$rc"
