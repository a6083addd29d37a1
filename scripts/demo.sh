#!/usr/bin/env bash
# FlashFuse's main job on a bundled model: find the attention in GPT-2's
# attention block (test/examples/gpt2_block.mlir, linalg-on-tensors as
# torch-mlir emits it), fuse it into one flash.attention, choose kernel tiles
# for an H100, lower it to tiled loops and generate the GPU kernels with
# flashfuse-compile. Installs what is missing and builds first.
#
#   scripts/demo.sh                      # as root on a fresh Debian 12 machine
#   scripts/demo.sh my_model.mlir        # any linalg-on-tensors module
#   TARGET=a100 BUILD_DIR=/tmp/b scripts/demo.sh
#
# Every intermediate module is kept under build/demo/ to be read.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build}
JOBS=${JOBS:-$(nproc)}
TARGET=${TARGET:-h100}
INPUT=$(realpath "${1:-$ROOT/test/examples/gpt2_block.mlir}")
OUT=$BUILD/demo
ARTIFACT=$BUILD/demo-artifact

"$ROOT/scripts/setup.sh"
if [[ ! -f $BUILD/build.ninja ]]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit
fi
# Both tools, so that the first run already generates the kernels. (This
# used to build flashfuse-compile only where `ninja -t targets | grep -q`
# found it: under pipefail, grep's early exit could fail the pipeline by
# SIGPIPE, and a fresh clone's first run skipped stage 5.)
ninja -C "$BUILD" -j"$JOBS" flashfuse-opt flashfuse-compile

# Diagnostics name the op and its location; the whole module they would
# otherwise append after each one buries the message.
OPT=("$BUILD/bin/flashfuse-opt" --mlir-print-op-on-diagnostic=false)
mkdir -p "$OUT"

# count PATTERN FILE: lines of FILE matching PATTERN (0 when none).
count() { grep -cE "$1" "$2" || true; }

# run NAME OUTFILE COMMAND...: runs COMMAND with stdout to OUTFILE; on failure
# says which step broke and stops the demo.
run() {
  local name=$1 out=$2
  shift 2
  if ! "$@" >"$out"; then
    echo "demo: step '$name' failed: $*" >&2
    exit 1
  fi
}

# The ops the raise pass should consume, before and after.
summarise() {
  printf '  %-22s %3d\n' \
    "linalg.batch_matmul" "$(count 'linalg\.batch_matmul' "$1")" \
    "linalg.matmul" "$(count 'linalg\.matmul ' "$1")" \
    "linalg.generic" "$(count 'linalg\.generic' "$1")" \
    "linalg.transpose" "$(count 'linalg\.transpose' "$1")" \
    "flash.attention" "$(count 'flash\.attention ' "$1")"
}

echo
echo "== 1. input: ${INPUT#"$ROOT"/} (parsed and printed: ${OUT#"$ROOT"/}/0-input.mlir)"
run parse "$OUT/0-input.mlir" "${OPT[@]}" "$INPUT"
summarise "$OUT/0-input.mlir"

echo
echo "== 2. flash-raise-attention -> ${OUT#"$ROOT"/}/1-raised.mlir"
run raise "$OUT/1-raised.mlir" "${OPT[@]}" "$OUT/0-input.mlir" --flash-raise-attention
summarise "$OUT/1-raised.mlir"
fused=$(count 'flash\.attention ' "$OUT/1-raised.mlir")
echo "  fused $fused attention subgraph(s) into flash.attention:"
grep -E 'flash\.attention ' "$OUT/1-raised.mlir" | sed -E 's/^ */    /'

echo
echo "== 3. flash-select-config=target=$TARGET -> ${OUT#"$ROOT"/}/2-configured.mlir"
run select-config "$OUT/2-configured.mlir" "${OPT[@]}" "$OUT/1-raised.mlir" \
  --flash-select-config="target=$TARGET"
grep -oE 'config = #flash\.config<[^>]*>' "$OUT/2-configured.mlir" | sed 's/^/    /'

echo
echo "== 4. flash-lower-to-loops -> ${OUT#"$ROOT"/}/3-loops.mlir"
run lower-to-loops "$OUT/3-loops.mlir" "${OPT[@]}" "$OUT/2-configured.mlir" \
  --flash-lower-to-loops
printf '  %-22s %3d\n' \
  "flash.attention left" "$(count 'flash\.attention ' "$OUT/3-loops.mlir")" \
  "scf.for" "$(count 'scf\.for ' "$OUT/3-loops.mlir")" \
  "lines" "$(wc -l <"$OUT/3-loops.mlir")"

echo
if [[ -x $BUILD/bin/flashfuse-compile ]]; then
  echo "== 5. flashfuse-compile --target=$TARGET -> ${ARTIFACT#"$ROOT"/}"
  rm -rf "$ARTIFACT"
  if ! "$BUILD/bin/flashfuse-compile" "$OUT/2-configured.mlir" \
      --target="$TARGET" -o "$ARTIFACT"; then
    echo "demo: step 'compile' failed" >&2
    exit 1
  fi
  (cd "$ARTIFACT" && find . -type f -printf '    %-24p %8s bytes\n' | sort)
  if [[ -f $ARTIFACT/manifest.txt ]]; then
    echo "  kernels (manifest.txt):"
    grep -E '^kernel ' "$ARTIFACT/manifest.txt" | sed 's/^/    /'
  fi
else
  echo "== 5. flashfuse-compile is not built yet: no GPU kernels generated"
fi
echo
echo "demo: done; every stage is in ${OUT#"$ROOT"/}/"
