"""Kernels compiled on demand: a variant that no artifact of the kernel
library has is emitted (flashfuse.variants), compiled by flashfuse-compile
for the current GPU and cached on disk, one artifact directory per variant:

    $FLASHFUSE_CACHE_DIR/<target>/<hash>/    (default root:
    ${XDG_CACHE_HOME:-~/.cache}/flashfuse/kernels)

holding manifest.txt, kernels.{ptx,cubin}, variant.mlir and compile.log.
<hash> covers everything the artifact depends on (the emitted IR, the
compile flags, the ptxas used and the compiler binary), so a rebuilt
compiler or a changed emitter gets fresh kernels rather than stale ones.
Where no ptxas is found (_tools.find_ptxas) the artifact holds PTX only and
the driver assembles it when it loads. FLASHFUSE_LOG=1 reports each compile
(variant, seconds) and each cache hit on stderr. Needs neither torch nor a
GPU: the caller passes the GPU's compute capability.
"""

import hashlib
import json
import os
import pathlib
import shutil
import sys
import tempfile
import threading
import time

from . import _tools, variants
from .errors import CompileError, UnsupportedError

COMPILER = "flashfuse-compile"
COMPILER_ENV = "FLASHFUSE_COMPILE"

# torch.cuda.get_device_capability -> flashfuse-compile --target. h200 is
# sm_90 like h100 and gets the same code, so h100 stands for both.
TARGETS = {(8, 0): "a100", (8, 9): "l4", (9, 0): "h100"}

# Bumped when the layout of a cache entry changes, so old entries are
# ignored instead of misread.
_CACHE_FORMAT = 1

_locks_lock = threading.Lock()
_locks = {}  # cache entry -> threading.Lock: one compile per entry at a time


class Unavailable(UnsupportedError):
    """Kernels cannot be compiled on demand here: no flashfuse-compile, or
    a GPU it has no target for. Callers that have another way (or a better
    error) catch it and say why nothing was compiled."""

    def __init__(self, message):
        super().__init__(message, "FLASHFUSE_ERROR_UNSUPPORTED")


def target_for_capability(capability):
    """The flashfuse-compile target of a GPU of compute capability
    (major, minor); Unavailable for GPUs it has no target for."""
    target = TARGETS.get(tuple(capability))
    if target is None:
        major, minor = capability
        known = ", ".join(f"{t} (sm_{a}{b})" for (a, b), t in TARGETS.items())
        raise Unavailable(f"flashfuse-compile has no target for "
                          f"sm_{major}{minor}; it targets {known}")
    return target


def find_compiler():
    """flashfuse-compile's path ($FLASHFUSE_COMPILE, the repository's
    build/bin, PATH), or None."""
    return _tools.find_tool(COMPILER, COMPILER_ENV)


def _log(message):
    if os.environ.get("FLASHFUSE_LOG", "0") not in ("", "0"):
        print(f"flashfuse: {message}", file=sys.stderr, flush=True)


def cache_root():
    env = os.environ.get("FLASHFUSE_CACHE_DIR")
    if env:
        return pathlib.Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "flashfuse" / "kernels"


def _compiler_identity(compiler):
    # Path, size and modification time: cheap, and a rebuild changes them
    # (hashing the binary's bytes would cost a read of it per process).
    st = os.stat(compiler)
    return [str(compiler), st.st_size, st.st_mtime_ns]


class Job:
    """What compiling one variant for one target involves: the IR, the
    flashfuse-compile flags and the cache entry they determine. `variant`
    is a runtime variant (_runtime.Variant), or a variants.KernelVariant /
    KVCacheVariant whose op is the gradient op with `backward`."""

    def __init__(self, variant, target, compiler, deterministic=False,
                 backward=False):
        if isinstance(variant, (variants.KernelVariant,
                                variants.KVCacheVariant)):
            kernel_variant = variant
            self.description = f"{variant.name}{' backward' * backward}"
        else:
            kernel_variant, backward = variants.from_runtime(variant)
            self.description = variant.describe()
        self.target = target
        self.compiler = compiler
        # The header names the op, not the requested kind: every kind of
        # the backward sequence is one compile of the gradient op, so they
        # share one entry.
        op = ("flash.attention_grad" if backward
              else "flash.attention_kvcache"
              if isinstance(kernel_variant, variants.KVCacheVariant)
              else "flash.attention")
        self.mlir = variants.emit_module(
            [kernel_variant], backward=backward,
            header=f"// flashfuse on-demand kernel: {op} {kernel_variant.name}"
                   f"{' (deterministic)' if deterministic else ''}\n")
        # --allow-spills: variants outside the kernel library may spill a
        # few bytes at the register cap (the D = 128 dropout backwards, D =
        # 96 and 128 on the a100 and l4 targets; docs/PERF.md); a slower
        # kernel beats none. The library's Hopper kernels spill nothing
        # (python/CMakeLists.txt).
        # Without ptxas the artifact is PTX only: the driver assembles it
        # on load (a one-off cost per process, cached by the driver too).
        ptxas = _tools.find_ptxas()
        # A gradient op takes the sm90ws backward where it serves it (the
        # sm90 backward's products fed by a TMA producer warpgroup: 1.1-1.4x
        # on an H100 from 2k keys, docs/PERF.md run 144), and so does a
        # block-sparse forward (1.1-1.4x, run 148); auto's recipe elsewhere
        # (auto-tma in flash-select-config). The backward has no
        # deterministic mode.
        # So does an ALiBi forward (as a score_mod on the sm90ws forward
        # it ran 1.31x the sm90 one, run 441; the native stage keeps it).
        # So does a forward of MLA's head dims (D = 192, Dv = 128), whose
        # sm90 tile holds one CTA an SM too: the sm90ws kernel is 1.17-1.30x
        # it from 512 keys (run 520; _kernels.SM90WS_MIN_KEYS_BY_HEAD_DIMS).
        # (KV-cache variants have none of these fields: the decode recipe.)
        block_sparse = getattr(kernel_variant, "block_sparse", 0)
        alibi = getattr(kernel_variant, "alibi", 0)
        with_forward = getattr(kernel_variant, "with_forward", False)
        mla = (not isinstance(kernel_variant, variants.KVCacheVariant)
               and (kernel_variant.head_dim, kernel_variant.head_dim_v)
               == (192, 128))
        ws = (not deterministic and not with_forward
              and (backward or block_sparse or alibi or mla))
        self.flags = [f"--target={target}", "--allow-spills"] + (
            ["--deterministic"] if deterministic else []) + (
            ["--recipe=auto-tma"] if ws else []) + (
            [f"--ptxas={ptxas}"] if ptxas else ["--no-cubin"])
        digest = hashlib.sha256(json.dumps(
            [_CACHE_FORMAT, self.mlir, self.flags,
             _compiler_identity(compiler)]).encode()).hexdigest()
        self.directory = cache_root() / target / digest[:24]

    def cached(self):
        return (self.directory / "manifest.txt").is_file()

    def run(self):
        """Compiles into a temporary directory beside the entry and renames
        it into place, so that no reader ever sees a half-written artifact;
        when another process finished first, its artifact is kept. Returns
        the entry's path; CompileError with the compiler's message, or
        saying which cache directory cannot be written."""
        start = time.perf_counter()
        try:
            self.directory.parent.mkdir(parents=True, exist_ok=True)
            tmp = pathlib.Path(tempfile.mkdtemp(
                prefix=f".{self.directory.name}.", dir=self.directory.parent))
        except OSError as e:
            raise _unwritable(self.directory.parent, e) from None
        try:
            source = tmp / "variant.mlir"
            try:
                source.write_text(self.mlir)
            except OSError as e:
                raise _unwritable(self.directory.parent, e) from None
            cmd = [self.compiler, str(source), *self.flags, "-o", str(tmp)]
            proc = _tools.run(cmd, what=COMPILER)
            if proc.returncode != 0:
                # The IR goes into the message: its file is removed below.
                error = _tools.failure(
                    cmd, proc, f"compiling '{self.description}' on demand")
                raise type(error)(f"{error}\nThe variant's IR:\n{self.mlir}")
            try:
                (tmp / "compile.log").write_text(proc.stdout + proc.stderr)
            except OSError as e:  # the disk filled up under the compiler
                raise _unwritable(self.directory.parent, e) from None
            if not (tmp / "manifest.txt").is_file():
                # The rename below publishes the entry, and cached() trusts
                # any entry with a manifest: never publish one without.
                raise CompileError(
                    f"flashfuse: compiling '{self.description}' on demand "
                    f"wrote no manifest.txt into {tmp}; is "
                    f"{self.directory.parent} full?")
            try:
                os.rename(tmp, self.directory)
            except OSError:
                if not self.cached():
                    raise
                # Lost the race to another process: its artifact is the
                # same, ours is discarded below.
            _log(f"compiled {self.description} for {self.target} in "
                 f"{time.perf_counter() - start:.2f} s -> {self.directory}")
            return self.directory
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)


def artifact_for(variant, capability, deterministic=False):
    """The artifact directory holding `variant` (a _runtime.Variant) for a
    GPU of `capability`: a cached one, or one compiled now. Unavailable
    when no flashfuse-compile is found or it has no target for the GPU;
    CompileError with the compiler's message when it fails."""
    if getattr(variant, "kv_dtype", 0) and tuple(capability) < (8, 9):
        # The FP8-cache kernels convert e4m3 in hardware (docs/KVCACHE.md
        # "FP8 cache"): say so rather than let the compiler refuse the op.
        major, minor = capability
        raise Unavailable(
            "the kernels of an FP8 (e4m3) KV cache need sm_89 or later (an "
            f"L4, H100 or H200); this GPU is sm_{major}{minor}")
    return compile_variant(variant, capability, deterministic)


def compile_variant(variant, capability, deterministic=False,
                    backward=False):
    """artifact_for of any variant Job takes: also a variants.KernelVariant
    that the library does not hold (an ALiBi op, flashfuse.alibi), its
    gradient op with `backward`."""
    compiler = find_compiler()
    if compiler is None:
        raise Unavailable(
            f"no {COMPILER} found in "
            f"{_tools.where_searched(COMPILER, COMPILER_ENV)}")
    job = Job(variant, target_for_capability(capability), compiler,
              deterministic, backward)
    with _locks_lock:
        lock = _locks.setdefault(job.directory, threading.Lock())
    with lock:
        if job.cached():
            _log(f"cache hit: {job.description} for {job.target} "
                 f"({job.directory})")
            return str(job.directory)
        return str(job.run())


def _unwritable(directory, error):
    return CompileError(
        f"flashfuse: cannot write compiled kernels into {directory} "
        f"({error.strerror or error}); set FLASHFUSE_CACHE_DIR to a writable "
        "directory with free space")
