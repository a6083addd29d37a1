"""Finding and running FlashFuse's command-line tools (flashfuse-compile,
flashfuse-opt) from Python. Needs neither torch nor the runtime library."""

import importlib.util
import os
import pathlib
import shutil
import subprocess

from .errors import CompileError, ToolNotFoundError

# bin/ inside the installed package: the wheel's statically linked tools.
_PACKAGE_BIN = pathlib.Path(__file__).resolve().parent / "bin"
# <repo>/build/bin of a source build that holds this package (python/flashfuse).
_REPO_BIN = pathlib.Path(__file__).resolve().parents[2] / "build" / "bin"


def find_tool(name, env_var):
    """Path of tool `name`: $env_var if set, else the wheel's bin/ inside
    this package, else the repository's build/bin next to it, else PATH;
    None where none exists. A set env_var is the only candidate (as
    FLASHFUSE_RUNTIME_LIB is): falling back to another build would hide a
    wrong setting, so a bad one raises."""
    explicit = os.environ.get(env_var)
    if explicit:
        path = pathlib.Path(explicit)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ToolNotFoundError(
                f"flashfuse: {env_var}={explicit} is not an executable file")
        return str(path.resolve())
    for built in (_PACKAGE_BIN / name, _REPO_BIN / name):
        if built.is_file() and os.access(built, os.X_OK):
            return str(built)
    on_path = shutil.which(name)
    return str(pathlib.Path(on_path).resolve()) if on_path else None


def require_tool(name, env_var):
    """find_tool, raising ToolNotFoundError that says where it looked."""
    path = find_tool(name, env_var)
    if path is None:
        raise ToolNotFoundError(
            f"flashfuse: {name} not found (looked in "
            f"{where_searched(name, env_var)}); install the flashfuse wheel "
            f"(pip install . from the repository), build FlashFuse (ninja -C "
            f"build {name}) or set {env_var} to its path")
    return path


def where_searched(name, env_var):
    """The search order of find_tool, for messages."""
    return f"${env_var}, {_PACKAGE_BIN / name}, {_REPO_BIN / name}, PATH"


def run(cmd, stdin_text=None, what=None):
    """subprocess.run capturing text output; a tool that cannot be started
    raises ToolNotFoundError. The caller judges the return code."""
    try:
        return subprocess.run(cmd, input=stdin_text, capture_output=True,
                              text=True, check=False)
    except OSError as e:
        raise ToolNotFoundError(
            f"flashfuse: cannot run {what or cmd[0]}: {e}") from None


def failure(cmd, proc, what):
    """CompileError carrying the tool's command line and diagnostics."""
    output = "\n".join(s.strip() for s in (proc.stderr, proc.stdout)
                       if s and s.strip())
    return CompileError(
        f"flashfuse: {what} failed (exit status {proc.returncode}):\n"
        f"  {' '.join(map(str, cmd))}\n{output}")


def find_ptxas():
    """The ptxas flashfuse-compile assembles cubins with: $FLASHFUSE_PTXAS
    if set (which must exist), else the CUDA toolkit's ($CUDA_HOME,
    /usr/local/cuda), PATH, then the nvidia-cuda-nvcc wheel's; None where
    there is none: kernels are then compiled to PTX, which the driver
    assembles when it loads them."""
    explicit = os.environ.get("FLASHFUSE_PTXAS")
    if explicit:
        path = pathlib.Path(explicit)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ToolNotFoundError(
                f"flashfuse: FLASHFUSE_PTXAS={explicit} is not an executable "
                "file")
        return str(path.resolve())
    candidates = [pathlib.Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
                  / "bin" / "ptxas"]
    on_path = shutil.which("ptxas")
    if on_path:
        candidates.append(pathlib.Path(on_path))
    candidates += _nvcc_wheel_ptxas()
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path.resolve())
    return None


def _nvcc_wheel_ptxas():
    """ptxas of PyPI's nvidia-cuda-nvcc (-cu12 / cu13 layouts), which lives
    in the `nvidia` namespace package; [] where it is not installed."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    found = []
    for root in spec.submodule_search_locations:
        root = pathlib.Path(root)
        found += [root / "cuda_nvcc" / "bin" / "ptxas"]
        found += sorted(root.glob("cu*/bin/ptxas"), reverse=True)
    return found
