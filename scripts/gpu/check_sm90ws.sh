#!/usr/bin/env bash
# The sm90ws recipe (TMA producer warpgroup, two wgmma consumers) on an
# H100/H200: given ARTIFACT, built by
#   gen_suite.py --sm90ws | flashfuse-compile --target=h100 --recipe=sm90ws,
# and BASELINE, the same variants with --recipe=sm90, runs
#   1. scripts/kernels/check_and_bench.py ARTIFACT --no-bench: every kernel
#      on odd shapes (1x1, 17, 113x203, GQA, Sq != Sk) against an f32
#      reference, FlashAttention's rule, tensor maps encoded by the harness;
#   2. python/tests/test_numerics_gpu.py's forward and BSHD-view tests
#      through the runtime (which encodes the tensor maps itself) with only
#      ARTIFACT to find kernels in;
#   3. step 1's odd shapes under compute-sanitizer --tool memcheck;
#   4. timing, bf16, D = 64, 128, 256, causal and not, against BASELINE and
#      SDPA's flash and cuDNN backends, interleaved repetitions (medians),
# writing logs and JSON to $OUT; exits non-zero if step 1, 2 or 3 failed.
# Every step runs under a time limit (a kernel waiting on an mbarrier that
# never completes would otherwise hang the machine's session).
#
# usage: scripts/gpu/check_sm90ws.sh ARTIFACT BASELINE [SEQS]
# env:   FLASHFUSE_RUNTIME_LIB (default <repo>/build-rt/lib/...), OUT,
#        PYTHON (needs torch and pytest), COMPUTE_SANITIZER.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ARTIFACT="$(cd "${1:?usage: $0 ARTIFACT BASELINE [SEQS]}" && pwd)"
BASELINE="$(cd "${2:?usage: $0 ARTIFACT BASELINE [SEQS]}" && pwd)"
SEQS="${3:-2048,8192,16384}"
OUT="${OUT:-$PWD/gpu-out}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
export FLASHFUSE_RUNTIME_LIB="${FLASHFUSE_RUNTIME_LIB:-$ROOT/build-rt/lib/libflashfuse_runtime.so}"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
HARNESS="$ROOT/scripts/kernels/check_and_bench.py"
rc=0
mkdir -p "$OUT/numerics" "$OUT/memcheck" "$OUT/bench"
timeout 300 "$PYTHON" "$HARNESS" "$ARTIFACT" --no-bench --out "$OUT/numerics" \
  2>&1 | tee "$OUT/numerics.log" || rc=1
[[ ${PIPESTATUS[0]} == 0 ]] || rc=1
(cd "$ROOT/python" && FLASHFUSE_KERNEL_DIR="$ARTIFACT" timeout 300 "$PYTHON" -m pytest -q -rs \
  tests/test_numerics_gpu.py -k "forward_matches_reference or bshd_views") \
  2>&1 | tee "$OUT/runtime.log"
if [[ ${PIPESTATUS[0]} != 0 ]] || grep -q " skipped" "$OUT/runtime.log"; then
  echo "check_sm90ws: the runtime path failed or skipped tests"; rc=1
fi
SANITIZER="${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}"
timeout 400 "$SANITIZER" --tool memcheck --error-exitcode 9 \
  "$PYTHON" "$HARNESS" "$ARTIFACT" --quick --no-bench --out "$OUT/memcheck" \
  2>&1 | tail -n 20 | tee "$OUT/memcheck.log"
[[ ${PIPESTATUS[0]} == 0 ]] || { echo "check_sm90ws: memcheck failed"; rc=1; }
timeout 540 "$PYTHON" "$HARNESS" "$ARTIFACT" --baseline "$BASELINE" \
  --dims 64,128,256 --dtypes bf16 --seqs "$SEQS" --reps 3 --out "$OUT/bench" \
  2>&1 | grep -v "^FAIL\|numerics:" | tee "$OUT/bench.log"
exit $rc
