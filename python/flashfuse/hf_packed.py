"""Packed batches in the Hugging Face integration: transformers' padding-free
batches (DataCollatorWithFlattening's cu_seq_lens) and its continuous
batching (generate_batch / `transformers serve`, a paged cache), on the
varlen and paged decode kernels.

transformers hands an attention implementation such a batch as one row of
packed tokens ([1, H, total, D]) with flash-attn's offsets in its keyword
arguments, and, for continuous batching, either the keys of every sequence
gathered from its paged cache (the same offsets for the keys) or, for a
step in which every sequence decodes one token, the cache itself with
flash-attn's block table. It has spelt these two ways:

- 5.17-5.2x, implementation "paged|NAME": `cache` (the PagedAttentionCache)
  with `read_index` / `write_index`, which the attention itself applies
  (cache.update); `max_seqlen_q` / `max_seqlen_k`; `cu_seq_lens_k` and
  `max_seqlen_k` per layer type (dicts) in hybrid models; `block_table`
  [groups, B, pages] for decode-only steps, the cache's pages read from
  `cache` by layer.
- later, implementation "NAME": the model updates the cache before the
  attention and passes `max_length_q` / `max_length_k`, and for a
  decode-only step `block_table` [B, pages] with `k_cache` / `v_cache`
  [pages, page_size, Hkv, D].

Both are read here; docs/HUGGINGFACE.md says which calls go where.
"""

# Page sizes the kernel library holds decode kernels for, widest first: a
# cache whose pages are a multiple of one of them is read as pages of it
# (its block table spread accordingly); other page sizes go to the compiler.
LIBRARY_PAGE_SIZES = (64, 16)


def packed_args(kwargs, layer_type):
    """(cu_seq_lens_q, cu_seq_lens_k, max_q, max_k) of a packed batch, the
    offsets and bounds of `layer_type` ("full_attention" or
    "sliding_attention") where transformers gives them per type; None when
    kwargs carry no packed batch."""
    cu_q = kwargs.get("cu_seq_lens_q")
    cu_k = kwargs.get("cu_seq_lens_k")
    if cu_q is None or cu_k is None:
        return None
    max_q = kwargs.get("max_length_q", kwargs.get("max_seqlen_q"))
    max_k = kwargs.get("max_length_k", kwargs.get("max_seqlen_k"))
    if isinstance(cu_k, dict):
        cu_k = cu_k[layer_type]
    if isinstance(max_k, dict):
        max_k = max_k[layer_type]
    return cu_q, cu_k, max_q, max_k


def _bound(bound, offsets):
    """A sequence-length bound as an int: transformers passes ints, or a
    tensor where it derived them (read back: a synchronisation); None means
    the longest sequence, read from the offsets."""
    if bound is None:
        bound = (offsets[1:] - offsets[:-1]).max()
    return int(bound)


def _window(sliding_window):
    """flash-attn's window_size for a causal layer of transformers'
    sliding_window (keys within sliding_window - 1 behind the query)."""
    return (int(sliding_window) - 1, 0) if sliding_window else (-1, -1)


def paged_cache_pages(k_cache, v_cache, block_table):
    """The paged cache [pages, P, Hkv, D] and its block table [B, pages]
    as pages of a size the kernel library serves: P a multiple of 64 or 16
    is read as P / 64 (or P / 16) consecutive pages, page p of a sequence
    becoming pages p * r .. p * r + r - 1 (an unallocated entry, -1 in
    transformers' tables, stays out of range). Other P are kept."""
    import torch

    page = k_cache.shape[1]
    for size in LIBRARY_PAGE_SIZES:
        if page % size == 0:
            r = page // size
            if r == 1:
                return k_cache, v_cache, block_table
            shape = (-1, size) + tuple(k_cache.shape[2:])
            spread = (block_table.unsqueeze(-1) * r + torch.arange(
                r, dtype=block_table.dtype, device=block_table.device))
            return (k_cache.view(shape),
                    v_cache.view((-1, size) + tuple(v_cache.shape[2:])),
                    spread.flatten(-2))
    return k_cache, v_cache, block_table


def decode_step(query, key, value, cu_k, block_table, k_cache, v_cache,
                scaling, sliding_window, softcap):
    """A continuous-batching step in which each of B sequences decodes one
    token: query [1, Hq, B, D], key / value [1, Hkv, B, D] (the new rows),
    the paged cache and its block table [B, pages]; sequence b holds
    cu_k[b + 1] - cu_k[b] keys counting the new one. The new rows are
    written into the cache through the table and attended to in one call
    (flashfuse.attention_with_kvcache). Returns [1, B, Hq, Dv]."""
    import torch

    from .kvcache import attention_with_kvcache

    b = query.shape[2]
    if query.shape[0] != 1 or block_table.dim() != 2 \
            or block_table.shape[0] != b:
        raise ValueError(
            "flashfuse.hf: a decode-only continuous-batching step needs one "
            f"query row per sequence: query {tuple(query.shape)}, block "
            f"table {tuple(block_table.shape)}")
    k_pages, v_pages, table = paged_cache_pages(
        k_cache, v_cache, block_table.to(torch.int32))
    # The rows before this step's; the kernel appends the new one there.
    lengths = (cu_k[1:b + 1] - cu_k[:b] - 1).to(torch.int32)
    out = attention_with_kvcache(
        query[0].transpose(0, 1).unsqueeze(1),
        k_pages, v_pages, lengths,
        key[0].transpose(0, 1).unsqueeze(1),
        value[0].transpose(0, 1).unsqueeze(1), table,
        softmax_scale=scaling, is_causal=True,
        window_size=_window(sliding_window), softcap=float(softcap or 0.0))
    return out.reshape(1, b, *out.shape[2:])


def varlen_step(query, key, value, cu_q, cu_k, max_q, max_k, scaling,
                sliding_window, softcap, is_causal, dropout=0.0):
    """Packed sequences: query [1, Hq, total_q, D], key / value
    [total_k, Hkv, D] (continuous batching's gathered cache) or
    [1, Hkv, total_k, D]; sequence i owns query rows [cu_q[i], cu_q[i + 1])
    and keys [cu_k[i], cu_k[i + 1]), causal aligned bottom-right as
    flash-attn's varlen function does (a prompt's queries are its keys; a
    chunk's are its last keys). Differentiable (padding-free training,
    with the module's attention dropout). Returns [1, total_q, Hq, Dv]."""
    from .varlen import varlen_attention

    if query.shape[0] != 1:
        raise ValueError(
            "flashfuse.hf: packed sequences (cu_seq_lens_q / cu_seq_lens_k) "
            f"come as one row of tokens, got query {tuple(query.shape)}")
    if key.dim() == 4:
        key, value = key[0].transpose(0, 1), value[0].transpose(0, 1)
    out = varlen_attention(
        query[0].transpose(0, 1), key, value, cu_q, cu_k,
        _bound(max_q, cu_q), _bound(max_k, cu_k),
        is_causal="bottom_right" if is_causal else False, scale=scaling,
        window=_window(sliding_window) if is_causal else None,
        softcap=softcap or None, dropout_p=dropout)
    return out.unsqueeze(0)


def block_table_of_reads(cache, layer_idx, read_index, cu_k, max_k):
    """(block table [B, pages], K pages, V pages) of a full-attention layer
    of transformers 5.17-5.2x's paged cache, for reading it in place: the
    read indices list each sequence's keys in order (sequence b's key j at
    read_index[group][cu_k[b] + j]), each the row block * block_size +
    j % block_size of the layer's cache, so every block_size-th one names
    a block. None for a sliding layer (its reads wrap around its window)
    or a cache laid out otherwise."""
    import torch

    group, index = cache.layer_index_to_group_indices[layer_idx]
    if getattr(cache, "sliding_windows", {}).get(layer_idx, 1) != 1:
        return None
    size = cache.block_size
    reads = read_index[group]
    k_cache, v_cache = cache.key_cache[index], cache.value_cache[index]
    if reads.numel() == 0 or k_cache.shape[0] % size:
        return None
    pages = -(-_bound(max_k, cu_k) // size)
    first = cu_k[:-1, None] + size * torch.arange(
        pages, dtype=cu_k.dtype, device=cu_k.device)
    # Past a sequence's last key, clamped: entries the kernel never reads.
    table = reads[first.clamp(0, reads.numel() - 1).long()] // size
    return (table.to(torch.int32),
            k_cache.view(-1, size, *k_cache.shape[1:]),
            v_cache.view(-1, size, *v_cache.shape[1:]))


def packed_forward(module, query, key, value, scaling, sliding_window,
                   softcap, is_causal, dropout, kwargs):
    """The attention of a packed batch ([1, H, total, D] with transformers'
    offsets in kwargs; see the module's docstring), or None when kwargs
    carry none. Returns [1, total_q, Hq, Dv]."""
    from .errors import KernelNotFoundError

    layer_type = "sliding_attention" if sliding_window else "full_attention"
    args = packed_args(kwargs, layer_type)
    if args is None:
        return None
    cu_q, cu_k, max_q, max_k = args
    cache = kwargs.get("cache")
    block_table = kwargs.get("block_table")
    if dropout and (cache is not None or block_table is not None):
        # Continuous batching decodes (the module in eval mode has none).
        raise NotImplementedError(
            "flashfuse.hf: attention dropout over a paged cache: the decode "
            "kernels have no dropout")
    if block_table is not None:
        k_cache, v_cache = kwargs.get("k_cache"), kwargs.get("v_cache")
        if k_cache is None:
            # transformers 5.17-5.2x: the table of every layer group, the
            # pages in the cache object.
            group, index = cache.layer_index_to_group_indices[
                module.layer_idx]
            block_table = block_table[group]
            k_cache, v_cache = (
                c[index].view(-1, cache.block_size, *c[index].shape[1:])
                for c in (cache.key_cache, cache.value_cache))
        return decode_step(query, key, value, cu_k, block_table, k_cache,
                           v_cache, scaling, sliding_window, softcap)
    if cache is not None and "read_index" in kwargs:
        # transformers 5.17-5.2x: the attention writes the new rows, and
        # either reads the cache in place (a decode-only step of a full
        # attention layer) or gathers each sequence's keys ([total_k, Hkv,
        # D]) for the varlen kernels.
        if is_causal and query.shape[2] == cu_q.numel() - 1:
            table = block_table_of_reads(cache, module.layer_idx,
                                         kwargs["read_index"], cu_k, max_k)
            if table is not None:
                table, k_cache, v_cache = table
                try:
                    return decode_step(query, key, value, cu_k, table,
                                       k_cache, v_cache, scaling, None,
                                       softcap)
                except KernelNotFoundError:
                    pass  # no decode kernel for this head dim: gathered
        key, value = cache.update(
            key_states=key, value_states=value, layer_idx=module.layer_idx,
            read_index=kwargs["read_index"],
            write_index=kwargs["write_index"])
    return varlen_step(query, key, value, cu_q, cu_k, max_q, max_k, scaling,
                       sliding_window, softcap, is_causal, dropout)


# Rows of a mask compared at a time in packed_documents: a few tens of MB
# of booleans at the lengths padding-free training packs.
_ROWS_AT_A_TIME = 2048


def packed_documents(mask):
    """transformers' mask for sequences packed by position_ids alone
    (DataCollatorWithFlattening's default: no offsets): where a boolean
    [1, 1, n, n] mask is exactly causal within runs of consecutive tokens,
    and there are two runs or more, the runs' offsets as an i32
    [1, 1, 1, runs + 1] tensor carrying the longest run's length
    (`flashfuse_max_length`), which attention_forward sends to the varlen
    kernels; None for any other mask. The mask is compared whole (in
    blocks of rows), so a model's own additions to it (windows that cut a
    run, bidirectional spans) keep it; the comparison, the offsets and the
    longest run are read back (three synchronisations a forward, not a
    layer)."""
    import torch

    if not (isinstance(mask, torch.Tensor) and mask.dtype == torch.bool
            and mask.dim() == 4 and mask.shape[:2] == (1, 1)
            and mask.shape[2] == mask.shape[3] and mask.shape[2] > 1):
        return None
    m = mask[0, 0]
    n = m.shape[0]
    # A run starts where a token does not see the one before it.
    start = torch.ones(n, dtype=torch.bool, device=m.device)
    start[1:] = ~m.diagonal(-1)
    run = start.cumsum(0)
    cols = torch.arange(n, device=m.device)
    same = torch.ones((), dtype=torch.bool, device=m.device)
    for r0 in range(0, n, _ROWS_AT_A_TIME):
        rows = cols[r0:r0 + _ROWS_AT_A_TIME, None]
        expected = (cols <= rows) & (run == run[rows])
        same &= (m[r0:r0 + _ROWS_AT_A_TIME] == expected).all()
    if not bool(same):
        return None
    starts = cols[start]
    if starts.numel() < 2:
        return None  # one sequence: the causal kernels serve it as it is
    offsets = torch.cat([starts, cols.new_tensor([n])]).to(torch.int32)
    marker = offsets.view(1, 1, 1, -1)
    marker.flashfuse_max_length = int((offsets[1:] - offsets[:-1]).max())
    return marker


def documents_offsets(attention_mask):
    """(offsets, longest) of packed_documents' tensor, or None for any
    other mask."""
    longest = getattr(attention_mask, "flashfuse_max_length", None)
    if longest is None:
        return None
    return attention_mask.view(-1), longest


def document_mask(offsets, rows):
    """The boolean [1, 1, rows, rows] mask packed_documents read the offsets
    from (for the calls the varlen kernels do not serve)."""
    import torch

    idx = torch.arange(rows, device=offsets.device)
    run = torch.bucketize(idx, offsets[1:-1].to(idx.dtype), right=True)
    keep = (idx[None, :] <= idx[:, None]) & (run[None, :] == run[:, None])
    return keep.view(1, 1, rows, rows)
