#!/usr/bin/env bash
# Ring attention (flashfuse.distributed, docs/RING.md) on a GPU machine:
#   1. python/tests/test_ring_cpu.py (the ring's logic over gloo),
#   2. python/tests/test_ring_gpu.py: N = 2, 3, 4 simulated ranks on one GPU
#      against a float64 reference with FlashAttention's numerics rule, and
#      over NCCL on every GPU where the machine has several,
#   3. the simulated fp16 cases under compute-sanitizer --tool memcheck
#      (the f32-output forward kernels and the backward on shard slices),
#   4. with BENCH=1 and two GPUs or more: python -m flashfuse.bench --ring.
# NVLink multicast stays off (the variables below, and every spawned worker
# sets them again).
#
# usage: scripts/gpu/check_ring.sh ARTIFACT_DIR[:ARTIFACT_DIR...]
# env:   FLASHFUSE_RUNTIME_LIB (default <repo>/build-rt/lib/...), OUT
#        (default ./gpu-out), PYTHON (default python3), BENCH, BENCH_ARGS.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${OUT:-$PWD/gpu-out}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export FLASHFUSE_RUNTIME_LIB="${FLASHFUSE_RUNTIME_LIB:-$ROOT/build-rt/lib/libflashfuse_runtime.so}"
export FLASHFUSE_KERNEL_DIR="${1:?usage: $0 ARTIFACT_DIR[:ARTIFACT_DIR...]}"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
rc=0
cd "$ROOT/python" || exit 1
"$PYTHON" -m pytest -q -rs tests/test_ring_cpu.py tests/test_ring_gpu.py || rc=1
compute-sanitizer --tool memcheck --error-exitcode 9 \
  "$PYTHON" -m pytest -q -x tests/test_ring_gpu.py -k "simulated and fp16" || rc=1
gpus=$("$PYTHON" -c "import torch; print(torch.cuda.device_count())")
if [[ ${BENCH:-0} == 1 && $gpus -ge 2 ]]; then
  # shellcheck disable=SC2086
  "$PYTHON" -m flashfuse.bench --ring --dtypes bf16 --json "$OUT/ring.json" \
    ${BENCH_ARGS:-} || rc=1
fi
echo "check_ring: $([[ $rc == 0 ]] && echo PASS || echo FAIL)"
exit "$rc"
