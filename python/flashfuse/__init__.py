"""FlashFuse: attention kernels compiled by the FlashFuse MLIR compiler.

`flashfuse.attention` mirrors torch.nn.functional.scaled_dot_product_attention
(with flash-attn's `alibi_slopes`, `flashfuse.alibi_slopes` the usual ones;
and flash-attn 3's FP8 forward, with `flashfuse.quantize_fp8` to make its
inputs, `flashfuse.hadamard` the rotation of Q and K it can apply first),
`flashfuse.attention_with_kvcache` flash-attn's flash_attn_with_kvcache,
`flashfuse.varlen_attention` flash-attn's flash_attn_varlen_func (packed
batches of variable-length sequences, with autograd and alibi_slopes),
`flashfuse.distributed.ring_attention` attention over a sequence sharded
across GPUs (docs/RING.md);
kernels come from the kernel library or, where flashfuse-compile is found,
are compiled on demand and cached on disk. `flashfuse.compile_report(model,
inputs)` shows which attentions FlashFuse finds in a model and which kernels
it would pick (`report_from_mlir` for a module exported already).
`flashfuse.artifact.forward(dir, q, k, v)` runs the forward kernel of an
artifact flashfuse-compile wrote from a model (a mask_mod's block-sparse
lists derived at compile time travel in it). Importing
the package needs neither torch nor a GPU; the torch parts load on first use.
"""

from .errors import (CompileError, CudaError, FlashFuseError,
                     InvalidArgumentError, KernelNotFoundError, ManifestError,
                     NoDeviceError, NoDriverError, RuntimeLibraryNotFound,
                     ToolNotFoundError, UnsupportedError)

__version__ = "0.1.0"

__all__ = ["attention", "alibi_slopes", "quantize_fp8",
           "attention_with_kvcache",
           "varlen_attention", "block_sparse_attention",
           "compile_report", "report_from_mlir",
           "FlashFuseError", "RuntimeLibraryNotFound", "NoDriverError",
           "NoDeviceError", "InvalidArgumentError", "KernelNotFoundError",
           "ManifestError", "UnsupportedError", "CudaError", "CompileError",
           "ToolNotFoundError"]


def __getattr__(name):
    # Lazy so that `import flashfuse` works where torch is missing (tools
    # that only inspect artifacts).
    if name == "attention":
        from .functional import attention
        return attention
    if name == "alibi_slopes":
        from .alibi import alibi_slopes
        return alibi_slopes
    if name == "quantize_fp8":
        from .fp8 import quantize_fp8
        return quantize_fp8
    if name == "attention_with_kvcache":
        from .kvcache import attention_with_kvcache
        return attention_with_kvcache
    if name == "varlen_attention":
        from .varlen import varlen_attention
        return varlen_attention
    if name == "block_sparse_attention":
        from .block_sparse import block_sparse_attention
        return block_sparse_attention
    if name in ("compile_report", "report_from_mlir"):
        from . import report
        return getattr(report, name)
    if name in ("hf", "bench", "distributed", "hadamard", "artifact"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'flashfuse' has no attribute {name!r}")
