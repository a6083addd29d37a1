#!/usr/bin/env bash
# The Python tests with PyTorch and torch-mlir installed (CPU only): the
# torch-based API-error tests and flashfuse.compile_report's export, which
# the CI image (no torch) skips. Installs into a virtual environment outside
# the repository (about 6 GB: PyPI's torch wheel brings its CUDA libraries).
#   scripts/test-python-torch.sh BUILD_DIR [VENV_DIR]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?usage: test-python-torch.sh BUILD_DIR [VENV_DIR]}" && pwd)
venv=${2:-${TMPDIR:-/tmp}/flashfuse-torch-venv}
if [[ ! -x "$venv/bin/python" ]]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q torch torch-mlir ml_dtypes numpy pytest
fi
export FLASHFUSE_RUNTIME_LIB=$build/lib/libflashfuse_runtime.so
export FLASHFUSE_KERNEL_DIR=$build/kernels
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
export PATH=$build/bin:$PATH
cd "$root/python"
"$venv/bin/python" -m pytest -q -rs tests
