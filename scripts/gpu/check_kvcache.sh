#!/usr/bin/env bash
# The KV-cache append and device-check verification on a GPU machine
# (torch with CUDA, compute-sanitizer): given a decode artifact built by
# flashfuse-compile from `scripts/kernels/gen_suite.py --decode` (it holds
# the decode, decode_combine, kv_append and decode_check kernels), runs
#   1. python/tests/test_decode_gpu.py (the whole file: decode numerics,
#      kv_append against torch indexing, the device check's messages),
#   2. scripts/kernels/check_decode.py --quick --no-bench (decode numerics,
#      kv_append against torch, decode_check's status for each bad input),
#   3. the same under compute-sanitizer --tool memcheck (f16, D = 64 and
#      128: contiguous and paged caches, rows outside the cache skipped),
# and exits non-zero if any step failed.
#
# usage: scripts/gpu/check_kvcache.sh ARTIFACT_DIR
# env:   FLASHFUSE_RUNTIME_LIB (default <repo>/build-rt/lib/...; build it
#        with -DFLASHFUSE_RUNTIME_ONLY=ON), OUT (default ./gpu-out),
#        PYTHON (default python3).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ARTIFACT="$(cd "${1:?usage: $0 ARTIFACT_DIR}" && pwd)"
OUT="${OUT:-$PWD/gpu-out}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$OUT"
export FLASHFUSE_RUNTIME_LIB="${FLASHFUSE_RUNTIME_LIB:-$ROOT/build-rt/lib/libflashfuse_runtime.so}"
export FLASHFUSE_KERNEL_DIR="$ARTIFACT"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
rc=0
(cd "$ROOT/python" && "$PYTHON" -m pytest -q -rs tests/test_decode_gpu.py) || rc=1
"$PYTHON" "$ROOT/scripts/kernels/check_decode.py" "$ARTIFACT" --quick --no-bench \
  --dims 64,128 --out "$OUT" || rc=1
compute-sanitizer --tool memcheck --error-exitcode 9 \
  "$PYTHON" "$ROOT/scripts/kernels/check_decode.py" "$ARTIFACT" --quick --no-bench \
  --dims 64,128 --dtypes f16 --out "$(mktemp -d)" || rc=1
echo "check_kvcache: $([[ $rc == 0 ]] && echo PASS || echo FAIL)"
exit "$rc"
