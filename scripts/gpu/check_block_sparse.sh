#!/usr/bin/env bash
# The block-sparse forward on a GPU machine (torch with CUDA,
# compute-sanitizer): given the artifact built by flashfuse-compile from
# `scripts/kernels/gen_suite.py --block-sparse` (block-sparse forwards and
# their dense counterparts), runs
#   1. scripts/kernels/check_block_sparse.py --numerics-only under
#      compute-sanitizer --tool memcheck (odd shapes: lengths not multiples
#      of 128, one key, empty rows, junk past each row's count, broadcast
#      lists, GQA; f16 and bf16, D = 64 and 128),
#   2. scripts/kernels/check_block_sparse.py without the sanitizer: the
#      numerics again and the throughput table (S = $SEQ, bf16, D = 128:
#      random lists at 50/25/10 %, document, sliding+global and prefix-LM
#      BlockMasks; against the dense kernel and torch.compile'd
#      flex_attention),
# writing the logs to $OUT, and exits non-zero if either step's numerics
# failed (or the sanitizer reported an error).
#
# usage: scripts/gpu/check_block_sparse.sh ARTIFACT_DIR
# env:   FLASHFUSE_RUNTIME_LIB (default <repo>/build-rt/lib/...; build it
#        with -DFLASHFUSE_RUNTIME_ONLY=ON), OUT (default ./gpu-out),
#        PYTHON (default python3; it needs torch), SEQ (default 16384),
#        COMPUTE_SANITIZER (default: on PATH, else /usr/local/cuda/bin).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ARTIFACT="$(cd "${1:?usage: $0 ARTIFACT_DIR}" && pwd)"
OUT="${OUT:-$PWD/gpu-out}"
PYTHON="${PYTHON:-python3}"
SEQ="${SEQ:-16384}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
export FLASHFUSE_RUNTIME_LIB="${FLASHFUSE_RUNTIME_LIB:-$ROOT/build-rt/lib/libflashfuse_runtime.so}"
export FLASHFUSE_KERNEL_DIR="$ARTIFACT"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
if ! grep -q "^  block_sparse " "$ARTIFACT/manifest.txt"; then
  echo "check_block_sparse: $ARTIFACT has no block-sparse kernels (compile gen_suite.py --block-sparse)"
  exit 1
fi
rc=0
SANITIZER="${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}"
"$SANITIZER" --tool memcheck --error-exitcode 9 \
  "$PYTHON" "$ROOT/scripts/kernels/check_block_sparse.py" --numerics-only \
  2>&1 | tee "$OUT/memcheck-block-sparse.log"
[[ ${PIPESTATUS[0]} == 0 ]] || { echo "check_block_sparse: memcheck or numerics failed"; rc=1; }
"$PYTHON" "$ROOT/scripts/kernels/check_block_sparse.py" --seq "$SEQ" \
  2>&1 | tee "$OUT/check-block-sparse.txt"
[[ ${PIPESTATUS[0]} == 0 ]] || { echo "check_block_sparse: numerics failed"; rc=1; }
echo "check_block_sparse: $([[ $rc == 0 ]] && echo PASS || echo FAIL)"
exit "$rc"
