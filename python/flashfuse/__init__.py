"""FlashFuse: attention kernels compiled by the FlashFuse MLIR compiler.

`flashfuse.attention` mirrors torch.nn.functional.scaled_dot_product_attention.
Importing the package needs neither torch nor a GPU; the torch parts load on
first use.
"""

from .errors import (CudaError, FlashFuseError, InvalidArgumentError,
                     KernelNotFoundError, ManifestError, NoDeviceError,
                     NoDriverError, RuntimeLibraryNotFound, UnsupportedError)

__version__ = "0.1.0"

__all__ = ["attention", "FlashFuseError", "RuntimeLibraryNotFound",
           "NoDriverError", "NoDeviceError", "InvalidArgumentError",
           "KernelNotFoundError", "ManifestError", "UnsupportedError",
           "CudaError"]


def __getattr__(name):
    # Lazy so that `import flashfuse` works where torch is missing (tools
    # that only inspect artifacts).
    if name == "attention":
        from .functional import attention
        return attention
    if name in ("hf", "bench"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'flashfuse' has no attribute {name!r}")
