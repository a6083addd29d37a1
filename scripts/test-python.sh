#!/usr/bin/env bash
# The Python package's tests that need no GPU (API errors, the ctypes binding,
# manifests of the kernel library). GPU tests are marked and skip themselves,
# with their reason, where there is no GPU.
#   scripts/test-python.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?usage: test-python.sh BUILD_DIR}" && pwd)
export FLASHFUSE_RUNTIME_LIB=$build/lib/libflashfuse_runtime.so
export FLASHFUSE_KERNEL_DIR=$build/kernels
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
cd "$root/python"
python3 -m pytest -q -rs tests
