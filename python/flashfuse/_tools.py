"""Finding and running FlashFuse's command-line tools (flashfuse-compile,
flashfuse-opt) from Python. Needs neither torch nor the runtime library."""

import os
import pathlib
import shutil
import subprocess

from .errors import CompileError, ToolNotFoundError

# <repo>/build/bin of a source build that holds this package (python/flashfuse).
_REPO_BIN = pathlib.Path(__file__).resolve().parents[2] / "build" / "bin"


def find_tool(name, env_var):
    """Path of tool `name`: $env_var if set, else the repository's build/bin
    next to this package, else PATH; None where none exists. A set env_var
    is the only candidate (as FLASHFUSE_RUNTIME_LIB is): falling back to
    another build would hide a wrong setting, so a bad one raises."""
    explicit = os.environ.get(env_var)
    if explicit:
        path = pathlib.Path(explicit)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ToolNotFoundError(
                f"flashfuse: {env_var}={explicit} is not an executable file")
        return str(path.resolve())
    built = _REPO_BIN / name
    if built.is_file() and os.access(built, os.X_OK):
        return str(built)
    on_path = shutil.which(name)
    return str(pathlib.Path(on_path).resolve()) if on_path else None


def require_tool(name, env_var):
    """find_tool, raising ToolNotFoundError that says where it looked."""
    path = find_tool(name, env_var)
    if path is None:
        raise ToolNotFoundError(
            f"flashfuse: {name} not found (looked in ${env_var}, {_REPO_BIN} "
            f"and PATH); build FlashFuse (ninja -C build {name}) or set "
            f"{env_var} to its path")
    return path


def where_searched(name, env_var):
    """The search order of find_tool, for messages."""
    return f"${env_var}, {_REPO_BIN / name}, PATH"


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
