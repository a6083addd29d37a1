#!/usr/bin/env bash
# The Python tests with PyTorch, torch-mlir and transformers installed (CPU
# only): the torch-based API-error tests, the Hugging Face registration and
# flashfuse.compile_report's export. scripts/test.sh runs it after the
# no-torch run. Installs into a virtual environment outside the repository
# (about 6 GB: PyPI's torch wheel brings its CUDA libraries; 1.5 minutes
# here, without pip's cache, which would double the disk it takes).
#   scripts/test-python-torch.sh BUILD_DIR [VENV_DIR]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?usage: test-python-torch.sh BUILD_DIR [VENV_DIR]}" && pwd)
venv=${2:-${TMPDIR:-/tmp}/flashfuse-torch-venv}
packages=(torch torch-mlir transformers ml_dtypes numpy pytest)
if ! "$venv/bin/python" -c "import torch, torch_mlir, transformers, pytest" 2>/dev/null; then
  python3 -m venv "$venv"
  # One retry: a dropped connection during a 3 GB download is not a failure
  # of the code under test.
  "$venv/bin/pip" install -q --no-cache-dir "${packages[@]}" ||
    "$venv/bin/pip" install -q --no-cache-dir "${packages[@]}"
fi
export FLASHFUSE_RUNTIME_LIB=$build/lib/libflashfuse_runtime.so
export FLASHFUSE_KERNEL_DIR=$build/kernels
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
export PATH=$build/bin:$PATH
cd "$root/python"
"$venv/bin/python" -m pytest -q -rs tests
