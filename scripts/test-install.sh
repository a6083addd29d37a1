#!/usr/bin/env bash
# The installed CMake package, from outside the source tree: installs
# component flashfuse-dev of BUILD_DIR into a fresh prefix, then
#   1. configures, builds and runs examples/flash-opt-consumer against it
#      (find_package(FlashFuse)) and FileChecks its output;
#   2. builds the C API test (test/CAPI/flash-capi.c) against the installed
#      FlashFuse::FlashFuseCAPI and FileChecks it as lit does in-tree;
#   3. configures the consumer with an MLIR of another major version (a
#      stand-in MLIRConfig.cmake that says 21.1.0) and expects configure to
#      fail with FlashFuse's message;
#   4. checks the package version against pyproject.toml's.
# scripts/test.sh runs it. Everything lands in WORK_DIR (a temp dir, removed
# afterwards, unless given).
#   scripts/test-install.sh BUILD_DIR [WORK_DIR]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?usage: test-install.sh BUILD_DIR [WORK_DIR]}" && pwd)
llvm_bin=/usr/lib/llvm-22/bin
if [[ -n ${2:-} ]]; then
  work=$2
  rm -rf "$work"
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
prefix=$work/prefix
filecheck=$llvm_bin/FileCheck
# CI has 2 cores; the consumer is one file each.
jobs=${JOBS:-2}

step() { printf -- '--- %s\n' "$*"; }

step "build what the package installs"
ninja -C "$build" -j"$jobs" FlashPipelines FlashCAPI FlashFuseCAPI \
  flashfuse_runtime
step "install component flashfuse-dev into $prefix"
cmake --install "$build" --prefix "$prefix" --component flashfuse-dev >/dev/null
for f in lib/cmake/flashfuse/FlashFuseConfig.cmake \
         lib/cmake/flashfuse/FlashFuseConfigVersion.cmake \
         include/flashfuse/Dialect/Flash/IR/FlashOps.td \
         include/flashfuse/Dialect/Flash/IR/FlashOps.h.inc \
         include/flashfuse-c/Dialect/Flash.h \
         include/flashfuse/runtime.h lib/libFlashFuseCAPI.so; do
  [[ -f $prefix/$f ]] || { echo "test-install: $f not installed" >&2; exit 1; }
done

# Nothing of the build tree may be needed: the consumers see only the prefix
# (and the system's MLIR).
step "configure and build examples/flash-opt-consumer"
consumer=$work/consumer
cmake -G Ninja -S "$root/examples/flash-opt-consumer" -B "$consumer" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  | tee "$work/consumer-configure.log"
ninja -C "$consumer" -j"$jobs"
if grep -rq "$build" "$consumer/build.ninja"; then
  echo "test-install: the consumer's build refers to $build" >&2
  exit 1
fi
input=$root/examples/flash-opt-consumer/attention.mlir
"$consumer/flash-opt-consumer" "$input" --flash-select-config=target=h100 |
  "$filecheck" "$input" --check-prefix=CONFIG
"$consumer/flash-opt-consumer" "$input" \
  --pass-pipeline='builtin.module(func.func(flash-lower-naive))' |
  "$filecheck" "$input" --check-prefix=NAIVE
echo "flash-opt-consumer: ok"

step "C API test against the installed FlashFuse::FlashFuseCAPI"
mkdir -p "$work/capi-src"
cat >"$work/capi-src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(flash-capi-consumer LANGUAGES C)
find_package(FlashFuse CONFIG REQUIRED)
add_executable(flash-capi-test "$root/test/CAPI/flash-capi.c")
set_target_properties(flash-capi-test PROPERTIES C_STANDARD 99)
target_link_libraries(flash-capi-test PRIVATE FlashFuse::FlashFuseCAPI)
CMAKE
cmake -G Ninja -S "$work/capi-src" -B "$work/capi" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
ninja -C "$work/capi" -j"$jobs"
# (Into a file: grep -q would close the pipe early and fail ldd under
# pipefail.)
ldd "$work/capi/flash-capi-test" >"$work/capi/ldd.txt"
grep -q "$prefix/lib/libFlashFuseCAPI.so" "$work/capi/ldd.txt" || {
  echo "test-install: flash-capi-test does not load the installed library" >&2
  exit 1
}
"$work/capi/flash-capi-test" 2>&1 | "$filecheck" "$root/test/CAPI/flash-capi.c"
echo "flash-capi-test (installed): ok"

step "an MLIR of another major version is refused at configure time"
fake=$work/fake-mlir-21/lib/cmake/mlir
mkdir -p "$fake"
# Just enough of a package for find_package(MLIR) to accept it: what a
# consumer with MLIR 21 installed would point MLIR_DIR at.
cat >"$fake/MLIRConfigVersion.cmake" <<'CMAKE'
set(PACKAGE_VERSION "21.1.0")
set(PACKAGE_VERSION_COMPATIBLE TRUE)
CMAKE
cat >"$fake/MLIRConfig.cmake" <<'CMAKE'
set(LLVM_PACKAGE_VERSION "21.1.0")
set(MLIR_INCLUDE_DIRS "${CMAKE_CURRENT_LIST_DIR}/../../../include")
CMAKE
if cmake -G Ninja -S "$root/examples/flash-opt-consumer" -B "$work/mismatch" \
     -DCMAKE_PREFIX_PATH="$prefix" -DMLIR_DIR="$fake" \
     >"$work/mismatch.log" 2>&1; then
  cat "$work/mismatch.log"
  echo "test-install: configuring against MLIR 21 succeeded" >&2
  exit 1
fi
cat >"$work/mismatch.check" <<'CHECK'
CHECK: CMake Error
CHECK-SAME: FlashFuse_FOUND to FALSE
CHECK-SAME: FlashFuse 0.1.0 was built against MLIR 22.{{[0-9.]+}} (major 22), but this project uses MLIR '21.1.0' from '{{[^']*}}/fake-mlir-21/lib/cmake/mlir'.
CHECK-SAME: point MLIR_DIR at an MLIR 22 installation
CHECK-NOT: Generating done
CHECK
# CMake may wrap the message: FileCheck reads the log as one line.
tr -s '\n ' ' ' <"$work/mismatch.log" | "$filecheck" "$work/mismatch.check"
echo "MLIR 21: refused"

step "package version = pyproject.toml's"
want=$(sed -nE 's/^version = "([^"]+)"/\1/p' "$root/pyproject.toml" | head -1)
grep -q "FlashFuse $want from" "$work/consumer-configure.log" || {
  echo "test-install: the package is not version $want (pyproject.toml)" >&2
  exit 1
}
echo "version $want: ok"
