"""Hugging Face transformers integration: attn_implementation="flashfuse".

    import flashfuse.hf
    flashfuse.hf.register()
    model = AutoModelForCausalLM.from_pretrained(..., attn_implementation="flashfuse")

transformers is imported only by register(); it is not a dependency.
"""

NAME = "flashfuse"


def attention_forward(module, query, key, value, attention_mask, scaling=None,
                      dropout=0.0, sliding_window=None, softcap=None,
                      is_causal=None, **kwargs):
    """An AttentionInterface function: [B, H, S, D] inputs, returns
    ([B, S, H, Dv] output, None) like transformers' sdpa_attention_forward."""
    from .functional import attention

    if is_causal is None:
        is_causal = getattr(module, "is_causal", True)
    # transformers folds causality (and sliding windows) into attention_mask
    # whenever it passes one; with no mask, causality is implicit and, as
    # with a KV cache Sq <= Sk, aligned to the bottom-right diagonal.
    causal = "none"
    window = None
    if attention_mask is None:
        if is_causal and query.shape[2] > 1:
            causal = "bottom_right"
        if sliding_window:
            window = (int(sliding_window) - 1, -1)
    elif attention_mask.dim() == 4:
        attention_mask = attention_mask[:, :, :, : key.shape[2]]
    out = attention(query, key, value, attn_mask=attention_mask,
                    is_causal=causal, scale=scaling,
                    enable_gqa=query.shape[1] != key.shape[1], window=window,
                    softcap=softcap, dropout_p=float(dropout or 0.0))
    return out.transpose(1, 2).contiguous(), None


# transformers >= 5 takes every attn_implementation whose name contains
# "flash" for a flash-attention kernel to import from its hub, so there the
# implementation is also registered, and returned, under this name.
HUB_SAFE_NAME = "ffuse"


def register(name=NAME):
    """Registers `attention_forward` with transformers' AttentionInterface
    and returns the name to pass as attn_implementation: `name`, or, where
    transformers reserves names containing "flash", HUB_SAFE_NAME."""
    try:
        from transformers import AttentionInterface
    except ImportError as e:
        raise ImportError(
            "flashfuse.hf.register() needs transformers (pip install "
            "transformers), which provides AttentionInterface") from e
    AttentionInterface.register(name, attention_forward)
    try:
        from transformers.utils.generic import is_flash_attention_requested
    except ImportError:
        return name
    if is_flash_attention_requested(requested_attention_implementation=name):
        import warnings
        warnings.warn(
            f"this transformers version treats attn_implementation={name!r} "
            "as a hub flash-attention kernel; use "
            f"attn_implementation={HUB_SAFE_NAME!r} (registered too)")
        AttentionInterface.register(HUB_SAFE_NAME, attention_forward)
        return HUB_SAFE_NAME
    return name
