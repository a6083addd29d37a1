#!/usr/bin/env bash
# The FP8 (e4m3) forwards on an H100/H200: given ARTIFACT, built by
#   gen_suite.py --fp8 | flashfuse-compile --target=h100,
# and BASELINE, the bf16 sm90ws forwards (gen_suite.py --sm90ws |
# flashfuse-compile --target=h100 --recipe=sm90ws), runs
#   1. scripts/kernels/check_fp8.py ARTIFACT --no-bench: every e4m3 kernel on
#      odd shapes (1, 17, 127, 129, 1000, Sq != Sk, GQA 32/8) and on B·S = 16k
#      tokens against docs/FP8.md's float64 reference (FlashAttention's rule,
#      LSE within 1e-2), and the RMSE against the unquantised inputs beside
#      the BASELINE bf16 kernel's, without and with the Hadamard rotation of
#      Q and K (--hadamard: the table "baseline FP8 vs + Hadamard");
#   2. python/tests/test_fp8_api.py, test_fp8_variants.py, test_fp8_hadamard.py
#      and test_fp8_hadamard_gpu.py (the Python path's argument checks,
#      quantize_fp8 with and without the rotation, its Triton kernel against
#      the torch path, the Vt layout);
#   3. step 1's odd shapes under compute-sanitizer --tool memcheck;
#   4. timing, FP8 against BASELINE's bf16 kernels and SDPA's flash and cuDNN
#      backends in bf16, interleaved repetitions (medians),
# writing logs and JSON to $OUT; exits non-zero if step 1, 2 or 3 failed.
# Every step runs under a time limit (a kernel waiting on an mbarrier that
# never completes would otherwise hang the machine's session).
#
# usage: scripts/gpu/check_fp8.sh ARTIFACT BASELINE [SEQS]
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
HARNESS="$ROOT/scripts/kernels/check_fp8.py"
rc=0
mkdir -p "$OUT/numerics" "$OUT/memcheck" "$OUT/bench"
FLASHFUSE_KERNEL_DIR="$ARTIFACT" timeout 540 "$PYTHON" "$HARNESS" "$ARTIFACT" --baseline "$BASELINE" --no-bench --api --hadamard \
  --seqs "$SEQS" --json "$OUT/numerics/fp8.json" 2>&1 | tee "$OUT/numerics.log"
[[ ${PIPESTATUS[0]} == 0 ]] || rc=1
(cd "$ROOT/python" && FLASHFUSE_KERNEL_DIR="$ARTIFACT" timeout 300 "$PYTHON" -m pytest -q -rs \
  tests/test_fp8_api.py tests/test_fp8_variants.py tests/test_fp8_hadamard.py \
  tests/test_fp8_hadamard_gpu.py) 2>&1 | tee "$OUT/python.log"
[[ ${PIPESTATUS[0]} == 0 ]] || { echo "check_fp8: the Python tests failed"; rc=1; }
SANITIZER="${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}"
timeout 400 "$SANITIZER" --tool memcheck --error-exitcode 9 \
  "$PYTHON" "$HARNESS" "$ARTIFACT" --quick --no-bench --json "$OUT/memcheck/fp8.json" \
  2>&1 | tail -n 20 | tee "$OUT/memcheck.log"
[[ ${PIPESTATUS[0]} == 0 ]] || { echo "check_fp8: memcheck failed"; rc=1; }
timeout 540 "$PYTHON" "$HARNESS" "$ARTIFACT" --baseline "$BASELINE" --bench-only \
  --seqs "$SEQS" --reps 3 --json "$OUT/bench/fp8.json" 2>&1 | tee "$OUT/bench.log"
exit $rc
