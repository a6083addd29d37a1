#!/usr/bin/env bash
# On a GPU machine: installs the flashfuse wheel (built elsewhere by
# `pip wheel .`, docs/WHEEL.md) into a fresh virtual environment that sees
# the machine's PyTorch and transformers, then, from outside the source
# tree and with no FLASHFUSE_* setting pointing anywhere, runs the GPU tests
# against the installed package: the kernels come from the wheel's library
# or are compiled on first use by the wheel's flashfuse-compile into a fresh
# cache (FLASHFUSE_LOG=1 prints each compile and its time; pytest -s lets
# those lines through to wheel-compiles.log).
#
# usage: scripts/gpu/verify_wheel.sh WHEEL [PYTEST_ARGS...]
# env:   OUT (logs; default ./gpu-out), PYTHON (default python3),
#        NO_PTXAS=1 (hide ptxas: the kernels compiled on first use are PTX
#        for the driver to assemble, as on a machine without the toolkit).
# Writes $OUT/wheel-pytest.log and $OUT/wheel-compiles.log.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WHEEL="$(realpath "${1:?usage: $0 WHEEL [PYTEST_ARGS...]}")"
shift
OUT="${OUT:-$PWD/gpu-out}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$OUT"
venv="$(mktemp -d)/venv"
"$PYTHON" -m venv "$venv"
# The machine's PyTorch, transformers and pytest, which an offline machine
# cannot install again: their site-packages joins the venv's through a .pth
# file, after it, so `flashfuse` comes from the wheel. (--system-site-packages
# would not do: the machine's python may itself be a venv.)
"$PYTHON" -c 'import site, sys; print("\n".join(p for p in site.getsitepackages() + [site.getusersitepackages()] if p))' \
  > "$("$venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')/machine-packages.pth"
"$venv/bin/pip" install --quiet --no-deps --no-index "$WHEEL"
unset FLASHFUSE_RUNTIME_LIB FLASHFUSE_KERNEL_DIR FLASHFUSE_COMPILE PYTHONPATH
export FLASHFUSE_CACHE_DIR="$(mktemp -d)/cache" FLASHFUSE_LOG=1
if [[ "${NO_PTXAS:-0}" == 1 ]]; then
  export CUDA_HOME=/nonexistent PATH=$(echo "$PATH" | tr ':' '\n' | grep -v cuda | paste -sd:)
fi
work="$(mktemp -d)"
cd "$work"
"$venv/bin/python" - <<'PY'
import pathlib, flashfuse
from flashfuse import _compile, _kernels, _tools
pkg = pathlib.Path(flashfuse.__file__).parent
assert "site-packages" in str(pkg), pkg
print(f"flashfuse from {pkg}; compiler {_compile.find_compiler()}; "
      f"ptxas {_tools.find_ptxas()}; {len(_kernels.artifact_dirs())} artifacts")
PY
set +e
FLASHFUSE_TEST_INSTALLED=1 "$venv/bin/python" -m pytest -q -rs -s \
  -p no:cacheprovider "$@" "$ROOT/python/tests" 2>"$OUT/wheel-compiles.log" \
  | tee "$OUT/wheel-pytest.log"
rc=${PIPESTATUS[0]}
set -e
grep -c "flashfuse: compiled" "$OUT/wheel-compiles.log" | sed 's/^/compiles: /'
grep "flashfuse: compiled" "$OUT/wheel-compiles.log" |
  sed -E 's/.* in ([0-9.]+) s .*/\1/' | sort -n | tail -1 | sed 's/^/slowest compile (s): /'
exit "$rc"
