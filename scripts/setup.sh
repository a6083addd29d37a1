#!/usr/bin/env bash
# Installs what building and testing FlashFuse needs on Debian 12 (bookworm),
# as root. Safe to run again: each package is checked with `dpkg -s` first,
# so a machine that has everything spends no time in apt.
#
# LLVM/MLIR 22 come from Debian's own archive: on bookworm the llvm-22,
# libmlir-22-dev and mlir-22-tools packages are published in the
# bookworm-security suite (deb.debian.org/debian-security), signed with the
# Debian archive key every Debian system has. A minimal image without that
# suite in its sources gets it added here.
set -euo pipefail

APT_PACKAGES=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
              ninja-build cmake g++ python3-pip python3-venv
              libzstd-dev)
# libzstd-dev: the wheel's statically linked flashfuse-compile
# (cmake/FlashFuseStaticLLVM.cmake) links LLVMSupport, whose interface names
# zstd's CMake target; the shared build does not need it.
# Only what the tests import; nothing that pulls a large wheel.
PIP_PACKAGES=(pytest numpy)

log() { printf '[setup] %s\n' "$*"; }

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done

# Adds the suite carrying LLVM 22 when no apt source names it.
ensure_llvm_source() {
  local suite="${VERSION_CODENAME:-bookworm}-security"
  if grep -rqsE "^[^#]*${suite}" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    return
  fi
  log "adding Debian's ${suite} suite (it carries llvm-22 and mlir-22)"
  cat > /etc/apt/sources.list.d/flashfuse-debian-security.sources <<SOURCES
Types: deb
URIs: http://deb.debian.org/debian-security
Suites: ${suite}
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
}

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "[setup] missing packages: ${missing[*]}; run as root to install them" >&2
    exit 1
  fi
  # shellcheck disable=SC1091
  [[ -r /etc/os-release ]] && . /etc/os-release
  ensure_llvm_source
  log "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}"
else
  log "apt packages present"
fi

pip_missing=()
for mod in "${PIP_PACKAGES[@]}"; do
  python3 -c "import ${mod}" >/dev/null 2>&1 || pip_missing+=("$mod")
done
if ((${#pip_missing[@]})); then
  log "pip installing ${pip_missing[*]}"
  # Debian's own python3 refuses pip installs into the system site
  # (PEP 668); these two are leaf test dependencies, so override it there.
  python3 -m pip install --quiet "${pip_missing[@]}" 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages "${pip_missing[@]}"
else
  log "python packages present"
fi

# cuobjdump and nvdisasm (which cuobjdump runs), for the lit test that
# reads the kernels' SASS (HMMA/HGMMA): the CUDA image has ptxas but neither
# of them; PyPI's nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm (6 MB) put
# both under the `nvidia` namespace package, where test/lit.cfg.py looks.
has_sass_tools() {
  command -v nvdisasm >/dev/null 2>&1 && command -v cuobjdump >/dev/null 2>&1 && return
  [[ -x /usr/local/cuda/bin/nvdisasm && -x /usr/local/cuda/bin/cuobjdump ]] && return
  python3 - <<'PY' 2>/dev/null
import importlib.util, os, sys
spec = importlib.util.find_spec("nvidia")
dirs = [os.path.join(p, "cu13", "bin") for p in (spec.submodule_search_locations if spec else [])]
sys.exit(not any(all(os.access(os.path.join(d, t), os.X_OK) for t in ("cuobjdump", "nvdisasm"))
                 for d in dirs))
PY
}
if ! has_sass_tools; then
  log "pip installing nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm"
  python3 -m pip install --quiet nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages \
      nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm
else
  log "cuobjdump and nvdisasm present"
fi

# The flashfuse Python package, editable from python/, so that
# `import flashfuse` works; it finds the runtime and the kernel library in
# build/ (python/flashfuse/_runtime.py, _kernels.py). No dependencies: torch
# is an optional extra.
if ! python3 -c "import flashfuse" >/dev/null 2>&1; then
  log "pip installing the flashfuse package (editable, from python/)"
  pkg=$(cd "$(dirname "${BASH_SOURCE[0]}")/../python" && pwd)
  # Not fatal: the tests import the package from python/ through PYTHONPATH
  # (scripts/test-python.sh), so a failed install costs only the
  # convenience of `import flashfuse` elsewhere.
  python3 -m pip install --quiet --no-deps -e "$pkg" 2>/dev/null ||
    python3 -m pip install --quiet --no-deps \
      --break-system-packages -e "$pkg" ||
    log "WARNING: could not pip install python/ (import it with PYTHONPATH=$pkg)"
else
  log "flashfuse package importable"
fi
