#!/usr/bin/env bash
# The runtime's no-GPU tests (manifest parsing, argument validation, the
# no-driver error path): ctest in the runtime's build directory.
#   scripts/test-runtime.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: test-runtime.sh BUILD_DIR}
ctest --test-dir "$build/runtime" --output-on-failure
