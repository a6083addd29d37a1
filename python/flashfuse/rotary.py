"""Rotary position embedding of a KV-cache step (flash-attn's `rotary_cos`,
`rotary_sin` and `rotary_interleaved` of flash_attn_with_kvcache):
flashfuse.attention_with_kvcache(..., rotary_cos=..., rotary_sin=...) comes
here before its kernels run.

The rotation is docs/KVCACHE.md "Rotary", the op's: with r = rotary_dim /
2, each pair (x0, x1) of a row, (x[e], x[e + r]) (GPT-NeoX halves) or
(x[2e], x[2e + 1]) (rotary_interleaved, GPT-J), becomes

    (x0 * cos[p, e] - x1 * sin[p, e],  x1 * cos[p, e] + x0 * sin[p, e])

in f32, rounded back to the row's dtype; elements from 2r on are kept. The
new keys' row t sits at position p = cache_seqlens[b] + t (the cache row
it is written to); the query's row i at cache_seqlens[b] + i when causal or
windowed, else every row at cache_seqlens[b] (flash-attn's positions; the
padding rows of a left-padded cache count). Positions are clamped into
[0, R). The compiler's kernels fuse the rotation into kv_append
(flash-lower-to-gpu); here it is two small elementwise passes over q and
k_new ahead of the same append and decode launches, since the runtime's
flashfuse_kvcache_append takes no rotary operands.
"""

import torch


def check_pair(cos, sin, k_new, name):
    """cos and sin come together, and with k_new."""
    if (cos is None) != (sin is None):
        raise ValueError(f"{name}: rotary_cos and rotary_sin must be given "
                         "together")
    if k_new is None:
        raise ValueError(f"{name}: rotary embedding needs k_new and v_new: it "
                         "rotates the new keys as they are appended (the "
                         "cached ones were rotated when they were)")


def check_tables(cos, sin, q, capacity, name):
    """rotary_dim / 2 after checking cos and sin ([R, rotary_dim / 2] in
    q's dtype, on q's device, R >= the cache's `capacity`) against a
    checked q [B, Sq, Hq, D]."""
    for arg, t in (("rotary_cos", cos), ("rotary_sin", sin)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: {arg} must be a torch.Tensor, got "
                            f"{type(t).__name__}")
        if t.dim() != 2:
            raise ValueError(f"{name}: {arg} must be [R, rotary_dim / 2], got "
                             f"shape {tuple(t.shape)}")
        if t.dtype != q.dtype:
            raise TypeError(f"{name}: {arg} must have q's dtype {q.dtype}, "
                            f"got {t.dtype}")
        if t.device != q.device:
            raise ValueError(f"{name}: {arg} is on {t.device}, q on "
                             f"{q.device}")
    if sin.shape != cos.shape:
        raise ValueError(f"{name}: rotary_sin has shape {tuple(sin.shape)}, "
                         f"rotary_cos {tuple(cos.shape)}; they must match")
    pairs = cos.shape[1]
    if pairs == 0 or 2 * pairs > q.shape[-1]:
        raise ValueError(f"{name}: rotary_dim = {2 * pairs} (twice "
                         f"rotary_cos.shape[1]) must be in [2, D = "
                         f"{q.shape[-1]}]")
    if cos.shape[0] < capacity:
        raise ValueError(f"{name}: rotary_cos has {cos.shape[0]} positions "
                         f"but the cache holds {capacity} rows: every row a "
                         "new key can take needs one")
    return pairs


def rotate(x, cos, sin, positions, interleaved):
    """x [B, S, H, D] with each row's first 2r elements rotated at
    positions [B, S] (any integers; clamped into [0, R)): a new tensor."""
    pairs = cos.shape[1]
    positions = positions.to(torch.long).clamp(0, cos.shape[0] - 1)
    c = cos[positions].float().unsqueeze(2)  # [B, S, 1, r]
    n = sin[positions].float().unsqueeze(2)
    head = x[..., :2 * pairs].float()
    if interleaved:
        x0, x1 = head[..., 0::2], head[..., 1::2]
    else:
        x0, x1 = head[..., :pairs], head[..., pairs:]
    # Two products and their difference (sum), each rounded to f32, as the
    # op defines them (no fused multiply-add).
    y0 = torch.sub(torch.mul(x0, c), torch.mul(x1, n))
    y1 = torch.add(torch.mul(x1, c), torch.mul(x0, n))
    if interleaved:
        y = torch.stack((y0, y1), dim=-1).flatten(-2)
    else:
        y = torch.cat((y0, y1), dim=-1)
    out = x.clone()
    out[..., :2 * pairs] = y.to(x.dtype)
    return out


def rotate_step(q, k_new, cos, sin, cache_seqlens, interleaved,
                query_rows_apart):
    """(q, k_new) rotated at their positions (module docstring);
    cache_seqlens an int or an integer tensor [B]."""
    b, sq, snew = q.shape[0], q.shape[1], k_new.shape[1]
    if isinstance(cache_seqlens, int):
        start = torch.full((b, 1), cache_seqlens, dtype=torch.long,
                           device=q.device)
    else:
        start = cache_seqlens.to(device=q.device, dtype=torch.long).view(b, 1)
    k_pos = start + torch.arange(snew, device=q.device).view(1, snew)
    q_pos = (start + torch.arange(sq, device=q.device).view(1, sq)
             if query_rows_apart else start.expand(b, sq))
    return (rotate(q, cos, sin, q_pos, interleaved),
            rotate(k_new, cos, sin, k_pos, interleaved))
