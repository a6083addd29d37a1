#!/usr/bin/env bash
# Packs this checkout's compiler tools for a GPU machine without LLVM/MLIR,
# so that the tests there that compile kernels on demand (flashfuse-compile)
# or run flashfuse-opt can run too: the two tools plus the shared libraries
# of the LLVM/MLIR packages they load that such a machine lacks, each
# xz-compressed (~52 MB in all; the device tool carries at most 64 MiB).
# verify_and_bench.sh unpacks the directory given as COMPILER_PACK.
#
# usage: scripts/gpu/pack-compiler.sh OUT_DIR [BUILD_DIR]
# env:   PACK_LIBS (library names to pack; default: libLLVM.so.22.1
#        libMLIR.so.22.1 libz3.so.4, what an Ubuntu 24.04 image with the
#        CUDA toolkit and PyTorch did not have).
set -euo pipefail
OUT="${1:?usage: $0 OUT_DIR [BUILD_DIR]}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${2:-$ROOT/build}"
LIBS="${PACK_LIBS:-libLLVM.so.22.1 libMLIR.so.22.1 libz3.so.4}"
mkdir -p "$OUT"
for tool in flashfuse-compile flashfuse-opt; do
  cp "$BUILD/bin/$tool" "$OUT/"
done
for lib in $LIBS; do
  path="$(ldd "$BUILD/bin/flashfuse-compile" | awk -v l="$lib" '$1 == l { print $3 }')"
  if [[ -z "$path" ]]; then
    echo "pack-compiler: $lib is not loaded by flashfuse-compile" >&2
    exit 1
  fi
  xz -T0 -9 -c "$path" > "$OUT/$lib.xz"
done
du -sh "$OUT"
