#!/usr/bin/env bash
# Installs what is missing, builds FlashFuse into build/ and runs every test
# that needs no GPU: the lit suite (check-flashfuse), then the runtime's and
# the Python package's own tests. Exits non-zero if any step fails; every
# step runs even after an earlier one failed, so one run shows everything.
#
#   scripts/test.sh            # as root on a fresh Debian 12 machine
#   BUILD_DIR=/tmp/b JOBS=4 scripts/test.sh
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build}
# CI has 2 cores; more jobs than cores only adds memory pressure.
JOBS=${JOBS:-$(nproc)}
LLVM_BIN=/usr/lib/llvm-22/bin

failed=()
passed=()
step() { # step NAME COMMAND...: runs COMMAND, records the outcome under NAME
  local name=$1
  shift
  printf '\n=== %s ===\n' "$name"
  if "$@"; then passed+=("$name"); else failed+=("$name"); fi
}

if ! "$ROOT/scripts/setup.sh"; then
  echo "setup failed: cannot build without the packages above" >&2
  exit 1
fi

configure() {
  cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DLLVM_EXTERNAL_LIT="$LLVM_BIN/lit"
}
step configure configure || { echo "configure failed" >&2; exit 1; }
step build ninja -C "$BUILD" -j"$JOBS" || true

# lit prints its own summary; keep it to repeat the counts at the end.
lit_log=$(mktemp)
trap 'rm -f "$lit_log"' EXIT
run_lit() { ninja -C "$BUILD" check-flashfuse 2>&1 | tee "$lit_log"; }
step lit run_lit
# The generated reference pages in docs/reference/ must match the .td files.
step docs "$ROOT/docs/generate.sh" --check "$BUILD"

# --- Hook: the runtime's and the Python package's no-GPU tests. ------------
# Each script below is owned by the runtime/Python side and is run when it
# exists, with the build directory as its argument; it must exit non-zero on
# a failure (and treat pytest's exit 5, "no tests collected", as it sees
# fit). Add a script here rather than inlining its commands.
# test-python.sh runs the Python tests without torch (the package must not
# need it), test-python-torch.sh again with torch, torch-mlir and
# transformers from PyPI on the CPU. test-wheel.sh builds the wheel and runs
# the same no-GPU Python tests against it, installed. test-install.sh installs
# the CMake package (component flashfuse-dev) and builds and runs an
# out-of-tree consumer and the C API test against it.
for hook in "$ROOT/scripts/test-runtime.sh" "$ROOT/scripts/test-install.sh" \
            "$ROOT/scripts/test-python.sh" \
            "$ROOT/scripts/test-python-torch.sh" "$ROOT/scripts/test-wheel.sh"; do
  if [[ -f $hook ]]; then
    step "$(basename "$hook" .sh)" bash "$hook" "$BUILD"
  fi
done
# --- End of hook. -----------------------------------------------------------

printf '\n=== summary ===\n'
for s in "${passed[@]}"; do echo "ok      $s"; done
for s in "${failed[@]}"; do echo "FAILED  $s"; done
# The lit counts, as one closing line ("N passed, N failed").
lit_passed=$(sed -nE 's/^ *Passed *: *([0-9]+).*/\1/p' "$lit_log" | tail -1)
lit_failed=$(sed -nE 's/^ *(Failed|Unexpectedly Passed|Unresolved|Timed Out) *: *([0-9]+).*/\2/p' \
  "$lit_log" | awk '{ n += $1 } END { print n + 0 }')
echo "lit: ${lit_passed:-0} passed, ${lit_failed:-0} failed"
((${#failed[@]} == 0))
