"""Exceptions raised by flashfuse; each runtime status maps to one class."""


class FlashFuseError(RuntimeError):
    """A failure reported by the FlashFuse runtime; `status` is its name."""

    def __init__(self, message, status="FLASHFUSE_ERROR_INTERNAL"):
        super().__init__(message)
        self.status = status


class RuntimeLibraryNotFound(FlashFuseError):
    """libflashfuse_runtime.so could not be found or loaded."""


class NoDriverError(FlashFuseError):
    """No usable NVIDIA driver (libcuda) on this machine."""


class NoDeviceError(FlashFuseError):
    """The driver is present but no GPU is usable."""


class InvalidArgumentError(FlashFuseError, ValueError):
    """An argument the runtime rejected (shape, stride, alignment, option)."""


class KernelNotFoundError(FlashFuseError, ValueError):
    """No compiled kernel for the requested variant (dtype, head dim, ...)."""


class ManifestError(FlashFuseError):
    """An artifact directory is missing or its manifest.txt is malformed."""


class UnsupportedError(FlashFuseError):
    """Valid input beyond what this GPU or kernel can do."""


class CudaError(FlashFuseError):
    """A CUDA driver call failed."""


class ToolNotFoundError(FlashFuseError):
    """A FlashFuse command-line tool (flashfuse-opt, flashfuse-compile) is
    needed but could not be found."""


class CompileError(FlashFuseError):
    """flashfuse-compile or flashfuse-opt rejected its input; the message
    holds the tool's own diagnostics."""


_BY_STATUS = {
    "FLASHFUSE_ERROR_INVALID_ARGUMENT": InvalidArgumentError,
    "FLASHFUSE_ERROR_NO_DRIVER": NoDriverError,
    "FLASHFUSE_ERROR_NO_DEVICE": NoDeviceError,
    "FLASHFUSE_ERROR_CUDA": CudaError,
    "FLASHFUSE_ERROR_MANIFEST": ManifestError,
    "FLASHFUSE_ERROR_NOT_FOUND": KernelNotFoundError,
    "FLASHFUSE_ERROR_UNSUPPORTED": UnsupportedError,
}


def error_for_status(status_name, message):
    """The exception instance for a runtime status and message."""
    return _BY_STATUS.get(status_name, FlashFuseError)(message, status_name)
