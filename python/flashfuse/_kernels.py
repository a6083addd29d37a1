"""Finding compiled kernels: artifact directories, variants, per-GPU handles.

Artifacts are looked for in FLASHFUSE_KERNEL_DIR (os.pathsep-separated) or,
if unset, in the kernels/ directory next to this package and then in the
kernel library of a source build (build/kernels, see python/CMakeLists.txt). Each entry is an
artifact directory (holding manifest.txt) or a directory of them.
"""

import os
import pathlib
import threading

from . import _runtime as rt
from .errors import KernelNotFoundError

_lock = threading.Lock()
_manifests = {}  # artifact dir -> Manifest
_contexts = {}   # device index -> Context
_kernels = {}    # (device index, variant key) -> kernel handle


def artifact_dirs():
    """Artifact directories in search order."""
    env = os.environ.get("FLASHFUSE_KERNEL_DIR")
    here = pathlib.Path(__file__).resolve().parent
    roots = ([pathlib.Path(p) for p in env.split(os.pathsep) if p] if env
             else [here / "kernels", here.parent.parent / "build" / "kernels"])
    found = []
    for root in roots:
        if (root / "manifest.txt").is_file():
            found.append(root)
        elif root.is_dir():
            found.extend(sorted(p for p in root.iterdir()
                                if (p / "manifest.txt").is_file()))
    return [str(p.resolve()) for p in found]


def _manifest(directory):
    m = _manifests.get(directory)
    if m is None:
        m = _manifests[directory] = rt.Manifest.open(directory)
    return m


def make_variant(kind, dtype_code, head_dim, head_dim_v, causal=0,
                 window=False, softcap=False, bias=False, mask=False,
                 dropout=False):
    return rt.Variant(kind, dtype_code, head_dim, head_dim_v, causal,
                      int(window), int(softcap), int(bias), int(mask),
                      int(dropout))


def locate(variant):
    """(artifact dir, kernel index) of the first kernel of `variant`, or
    KernelNotFoundError listing what the artifacts provide."""
    dirs = artifact_dirs()
    available = []
    with _lock:
        for d in dirs:
            m = _manifest(d)
            for i, info in enumerate(m.kernels()):
                if info.variant.key() == variant.key():
                    return d, i
                available.append(
                    f"{d}: {info.name.decode()}: {info.variant.describe()}")
    if not dirs:
        where = os.environ.get("FLASHFUSE_KERNEL_DIR") or str(
            pathlib.Path(__file__).resolve().parent / "kernels")
        raise KernelNotFoundError(
            f"flashfuse: no kernel artifacts found in {where}; set "
            "FLASHFUSE_KERNEL_DIR to a directory written by flashfuse-compile",
            "FLASHFUSE_ERROR_NOT_FOUND")
    raise KernelNotFoundError(
        f"flashfuse: no compiled kernel for '{variant.describe()}'. "
        "Available:\n  " + "\n  ".join(available), "FLASHFUSE_ERROR_NOT_FOUND")


def context(device_index):
    """The runtime context of a GPU, created on first use."""
    with _lock:
        c = _contexts.get(device_index)
        if c is None:
            c = _contexts[device_index] = rt.Context(device_index)
        return c


def kernel(device_index, variant):
    """A launchable kernel handle for `variant` on a GPU."""
    key = (device_index, variant.key())
    k = _kernels.get(key)
    if k is not None:
        return k
    directory, _ = locate(variant)
    ctx = context(device_index)
    k = ctx.find_kernel(directory, variant)
    with _lock:
        _kernels[key] = k
    return k


def has_kernel(variant):
    try:
        locate(variant)
        return True
    except KernelNotFoundError:
        return False
