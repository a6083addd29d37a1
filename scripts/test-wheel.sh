#!/usr/bin/env bash
# Builds the wheel (pyproject.toml: scikit-build-core over this project's
# CMake, statically linked flashfuse-compile, kernel library for a100, l4
# and h100) and runs the Python package's no-GPU tests against the wheel
# installed into a fresh virtual environment, away from the source tree.
# scripts/test.sh runs it; the wheel is left in BUILD_DIR/dist.
#   scripts/test-wheel.sh BUILD_DIR [VENV_DIR]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?usage: test-wheel.sh BUILD_DIR [VENV_DIR]}" && pwd)
venv=${2:-${TMPDIR:-/tmp}/flashfuse-wheel-venv}
dist=$build/dist

rm -rf "$dist"
# --no-build-isolation would need scikit-build-core in the system Python;
# the isolated build fetches it from PyPI. build-dir (pyproject.toml) keeps
# the CMake tree between runs.
python3 -m pip wheel --quiet --no-deps -w "$dist" "$root"
wheel=$(ls "$dist"/flashfuse-*.whl)
echo "wheel: $wheel ($(du -h "$wheel" | cut -f1))"

rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet pytest
"$venv/bin/pip" install --quiet --no-deps "$wheel"
# What a user's machine has: the wheel's compiler must need neither LLVM,
# MLIR nor anything else beyond the C library, zlib and zstd.
tool=$("$venv/bin/python" -c 'import flashfuse, pathlib; print(pathlib.Path(flashfuse.__file__).parent / "bin" / "flashfuse-compile")')
ldd "$tool"
if ldd "$tool" | grep -Ev 'linux-vdso|ld-linux|lib(c|m|dl|rt|pthread|z|zstd)\.so'; then
  echo "test-wheel: the wheel's flashfuse-compile needs the libraries above" >&2
  exit 1
fi
# Nothing of the checkout may leak in: no settings pointing at build/, and
# the tests run from elsewhere.
unset FLASHFUSE_RUNTIME_LIB FLASHFUSE_KERNEL_DIR FLASHFUSE_COMPILE PYTHONPATH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$venv/bin/python" - <<'PY'
import pathlib, flashfuse
from flashfuse import _compile, _kernels, _runtime
pkg = pathlib.Path(flashfuse.__file__).parent
assert "site-packages" in str(pkg), pkg
lib = _runtime.library()  # the wheel's libflashfuse_runtime.so
assert _compile.find_compiler() == str(pkg / "bin" / "flashfuse-compile")
dirs = _kernels.artifact_dirs()
assert dirs and all(str(pkg) in str(d) for d in dirs), dirs
print(f"installed: {pkg}; {len(dirs)} kernel artifacts")
PY
FLASHFUSE_TEST_INSTALLED=1 "$venv/bin/python" -m pytest -q -rs \
  -p no:cacheprovider "$root/python/tests"
