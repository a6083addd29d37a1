#!/usr/bin/env bash
# Stage functions are called through `stage`, which shellcheck cannot see.
# shellcheck disable=SC2317

# The one script run on the GPU machine (CUDA toolkit, CMake, Ninja, PyTorch;
# no LLVM/MLIR, no network). Given a kernel artifact directory compiled
# elsewhere (manifest.txt + PTX/cubin), it
#   1. builds the runtime and flashfuse-run (-DFLASHFUSE_RUNTIME_ONLY=ON),
#   2. runs the no-GPU runtime tests and flashfuse-run on every forward kernel
#      (GPU reference, FlashAttention's rule, poisoned outputs, timing),
#   3. runs the Python numerics sweep (pytest, GPU tests included),
#   4. runs the side-by-side benchmark (JSON + PNG),
# and prints a summary last. A failing stage is reported and the later
# stages that do not depend on it still run; the exit status is non-zero if
# any stage failed.
#
# usage: scripts/gpu/verify_and_bench.sh ARTIFACT_DIR
# env:   OUT (results; default ./gpu-out), PYTHON (default python3),
#        BUILD_DIR (default <repo>/build-rt), BENCH_ARGS (extra arguments
#        for python -m flashfuse.bench, e.g. "--seqlens 1024 4096"),
#        RUN_SHAPES (space-separated B,Hq,Hkv,Sq,Sk for flashfuse-run),
#        EXTRA_KERNEL_DIRS (more artifacts for pytest and the benchmark),
#        COMPILER_PACK (a directory from scripts/gpu/pack-compiler.sh: its
#        flashfuse-compile and flashfuse-opt go to <repo>/build/bin and its
#        libraries on LD_LIBRARY_PATH, so that pytest also runs the tests
#        that compile kernels on demand).
# Files written under $OUT (at most 8): build.log, kernels.log, pytest.log,
# bench.log, bench.json, bench.png, summary.txt.
set -euo pipefail
export PYTHONUNBUFFERED=1

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ARTIFACT="${1:-${FLASHFUSE_KERNEL_DIR:-}}"
if [[ -z "$ARTIFACT" || ! -f "$ARTIFACT/manifest.txt" ]]; then
  echo "usage: $0 ARTIFACT_DIR   (a directory holding manifest.txt)" >&2
  exit 2
fi
ARTIFACT="$(cd "$ARTIFACT" && pwd)"
# pytest and the benchmark search the artifact and EXTRA_KERNEL_DIRS (':'-
# separated, e.g. the backward kernels' artifact) for kernels.
KERNEL_PATH="$ARTIFACT${EXTRA_KERNEL_DIRS:+:$EXTRA_KERNEL_DIRS}"
OUT="${OUT:-$PWD/gpu-out}"
PYTHON="${PYTHON:-python3}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-rt}"
RUN_SHAPES="${RUN_SHAPES:-2,8,2,113,203 2,8,2,1,239 1,8,2,1023,1024 8,16,16,2048,2048}"
mkdir -p "$OUT"
if [[ -n "${COMPILER_PACK:-}" ]]; then
  pack_lib="$(mktemp -d)/lib"
  mkdir -p "$pack_lib" "$ROOT/build/bin"
  for f in "$COMPILER_PACK"/*.xz; do
    "$PYTHON" -c 'import lzma, shutil, sys
with lzma.open(sys.argv[1]) as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)' "$f" "$pack_lib/$(basename "$f" .xz)"
  done
  cp "$COMPILER_PACK"/flashfuse-compile "$COMPILER_PACK"/flashfuse-opt "$ROOT/build/bin/"
  export LD_LIBRARY_PATH="$pack_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
declare -a STAGE_LINES=()
FAILED=0

# stage NAME LOG CMD...: runs CMD with output to LOG (and the console),
# records PASS/FAIL without stopping the script.
stage() {
  local name="$1" log="$2"
  shift 2
  echo "=== $name ($(date +%T)) ===" | tee -a "$log"
  local start=$SECONDS rc=0
  "$@" 2>&1 | tee -a "$log" || rc=$?
  local line
  line="$(printf '%-22s %-4s %4ss  (%s)' "$name" \
          "$([[ $rc == 0 ]] && echo PASS || echo FAIL)" \
          "$((SECONDS - start))" "$(basename "$log")")"
  [[ $rc == 0 ]] || FAILED=1
  STAGE_LINES+=("$line")
  return 0
}

skip_stage() {
  STAGE_LINES+=("$(printf '%-22s %-4s        (%s)' "$1" SKIP "$2")")
  FAILED=1
}

{
  echo "FlashFuse GPU verification, $(date -u +%FT%TZ)"
  echo "artifact: $ARTIFACT"
  grep -E '^(arch|ptx|cubin) ' "$ARTIFACT/manifest.txt" | tr '\n' ' '; echo
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null \
    || echo "nvidia-smi: not available"
  (nvcc --version 2>/dev/null | tail -1) || echo "nvcc: not found"
  "$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpu", torch.cuda.is_available())' 2>&1 || true
} | tee -a "$SUMMARY"

# 1. Build.
build() {
  # Called as `cmd || rc=$?`, where set -e is off: chain explicitly.
  cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" -DFLASHFUSE_RUNTIME_ONLY=ON \
    -DCMAKE_BUILD_TYPE=Release && ninja -C "$BUILD_DIR"
}
stage build "$OUT/build.log" build
LIB="$BUILD_DIR/lib/libflashfuse_runtime.so"
RUN="$BUILD_DIR/bin/flashfuse-run"

# 2. Runtime tests and every forward kernel through flashfuse-run.
forward_kernels() {
  awk '$1 == "kernel" { name = $2 } $1 == "kind" && $2 == "forward" { print name }' \
    "$ARTIFACT/manifest.txt"
}
run_kernels() {
  local rc=0 k shape
  ctest --test-dir "$BUILD_DIR/runtime" --output-on-failure || rc=1
  for k in $(forward_kernels); do
    for shape in $RUN_SHAPES; do
      echo "--- $k $shape"
      if "$RUN" "$ARTIFACT" --kernel "$k" --shape "$shape" --iters 20; then
        echo "KERNEL-RESULT $k $shape PASS"
      else
        echo "KERNEL-RESULT $k $shape FAIL"
        rc=1
      fi
    done
  done
  return "$rc"
}
if [[ -x "$RUN" ]]; then
  stage kernels "$OUT/kernels.log" run_kernels
else
  skip_stage kernels "no flashfuse-run: build failed or nvcc missing"
fi

# 3. Python numerics sweep (GPU tests run against the artifact).
pytest_sweep() {
  cd "$ROOT/python" && FLASHFUSE_RUNTIME_LIB="$LIB" FLASHFUSE_KERNEL_DIR="$KERNEL_PATH" \
    "$PYTHON" -m pytest tests -v -rs
}
if [[ -f "$LIB" ]]; then
  stage pytest "$OUT/pytest.log" pytest_sweep
else
  skip_stage pytest "no runtime library: build failed"
fi

# 4. Benchmark against SDPA backends and naive attention.
bench() {
  cd "$ROOT/python" || return 1
  # shellcheck disable=SC2086
  FLASHFUSE_RUNTIME_LIB="$LIB" FLASHFUSE_KERNEL_DIR="$KERNEL_PATH" \
    "$PYTHON" -m flashfuse.bench --json "$OUT/bench.json" --png "$OUT/bench.png" \
    ${BENCH_ARGS:-}
}
if [[ -f "$LIB" ]]; then
  stage bench "$OUT/bench.log" bench
else
  skip_stage bench "no runtime library: build failed"
fi

# Summary, printed last.
{
  echo
  echo "== stages"
  printf '%s\n' "${STAGE_LINES[@]}"
  if [[ -f "$OUT/kernels.log" ]]; then
    echo "== flashfuse-run (kernel, shape B,Hq,Hkv,Sq,Sk, verdict, speed)"
    awk '/^--- / { k = $2; s = $3 }
         /TFLOP\/s/ { t = $(NF-1) " TFLOP/s" }
         /^KERNEL-RESULT/ { printf "  %-40s %-18s %-4s %s\n", $2, $3, $4, t; t = "" }' \
      "$OUT/kernels.log"
  fi
  if [[ -f "$OUT/pytest.log" ]]; then
    echo "== pytest"
    grep -E '^(FAILED|ERROR) ' "$OUT/pytest.log" | head -20 || true
    tail -n 1 "$OUT/pytest.log"
  fi
  if [[ -f "$OUT/bench.log" ]]; then
    echo "== benchmark"
    sed -n '/^forward TFLOP\/s/,$p' "$OUT/bench.log"
  fi
  echo "== overall: $([[ $FAILED == 0 ]] && echo PASS || echo FAIL)"
} | tee -a "$SUMMARY"
exit $FAILED
