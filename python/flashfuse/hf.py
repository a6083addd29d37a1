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


def register(name=NAME):
    """Registers `attention_forward` with transformers' AttentionInterface."""
    try:
        from transformers import AttentionInterface
    except ImportError as e:
        raise ImportError(
            "flashfuse.hf.register() needs transformers (pip install "
            "transformers), which provides AttentionInterface") from e
    AttentionInterface.register(name, attention_forward)
    return name
