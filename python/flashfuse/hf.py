"""Hugging Face transformers integration: attn_implementation="flashfuse".

    import flashfuse.hf
    flashfuse.hf.register()
    model = AutoModelForCausalLM.from_pretrained(..., attn_implementation="flashfuse")

transformers is imported only by register(); it is not a dependency.
docs/HUGGINGFACE.md says which kernels each call takes; packed batches
(padding-free training, continuous batching) are in hf_packed.
"""

import weakref

from . import hf_packed

NAME = "flashfuse"

# Query rows per step up to which a step over a cache is decoding (one token,
# or a few speculative ones) and goes to the KV-cache kernels; longer steps
# (prefill) go to the forward kernels.
KVCACHE_MAX_QUERY_ROWS = 16


def decode_serves_head_dims(query, value):
    """Whether the decode kernels serve the head dims of `query` and `value`
    (flash-select-config's decode recipe: D = Dv, a multiple of 16 from 32
    to 256); others, DeepSeek's MLA (D = 192, Dv = 128) among them, decode
    through the forward kernels."""
    d = query.shape[-1]
    return d == value.shape[-1] and d % 16 == 0 and 32 <= d <= 256


def _kvcache_lengths(module, query, key, value, attention_mask,
                     sliding_window, dropout, is_causal, kwargs):
    """The i32 [B] lengths of the caches `key` holds, for the KV-cache path
    of a decoding step, computed on the GPU (no host synchronisation); None
    where the step takes the general path.

    transformers (5.x) hands the attention the layer's whole cache (a
    StaticCache's [B, Hkv, Smax, D], rows past the written ones unset) and
    position_ids, not the cache's fill: for a batch without padding, the new
    rows sit at their positions, so every sequence holds
    position_ids[:, -1] + 1 rows. A padded batch's positions are not its
    cache rows, so it needs the mask (the general path); whether the batch
    has padding is decided where the mask is built (_mask)."""
    import torch

    position_ids = kwargs.get("position_ids")
    sq = query.shape[2]
    one_row_step = (sliding_window and sq == 1 and is_causal and not dropout
                    and decode_serves_head_dims(query, value))
    if (one_row_step and attention_mask is None
            and 1 < key.shape[2] <= sliding_window):
        # A step over a sliding-window cache layer that needs no mask
        # (transformers' finding, or _window_serves': unpadded, the row the
        # last of at most a window of keys): it sees every row of the cache.
        return _full_lengths(query.shape[0], key.shape[2], key.device)
    if one_row_step and _is_lengths_mask(attention_mask):
        # A step over a static sliding-window layer's first rows, which
        # _mask handed over as their count (_sliding_prefix_rows).
        return attention_mask.view(-1)
    if (not is_causal or sliding_window or dropout
            or not decode_serves_head_dims(query, value)
            or not isinstance(position_ids, torch.Tensor)
            or position_ids.dim() != 2 or position_ids.shape[-1] != sq
            or sq > KVCACHE_MAX_QUERY_ROWS or key.shape[2] <= sq):
        return None
    # No mask: transformers saw no padding and no rows to hide (a dynamic
    # cache); a mask: only when the batch was found unpadded.
    if attention_mask is not None and not getattr(
            getattr(module, "config", None), "_flashfuse_unpadded", False):
        return None
    return _lengths_from_positions(position_ids, query.shape[0])


# The last step's (position_ids, its version, B) and lengths: every layer of
# a step gets the same position_ids, and three small torch ops per layer
# were a large part of a decoding step's host time.
_last_lengths = [None, -1, 0, None]


# (a step, not the prompt; dtype, D, softcap) of a left-padded batch's
# calls that found no kernel (decode, or varlen for the prompt).
_leftpad_unserved = set()


# The last (B, S, device) of _full_lengths and its tensor.
_last_full = [None, None]


def _full_lengths(batch, rows, device):
    """i32 [B] of `rows` each: once a sliding cache layer is full, every
    step has the same, so one tensor serves them (eager mode); also the
    count _mask hands a static sliding layer's steps."""
    import torch

    key = (batch, rows, device)
    if torch.compiler.is_compiling():
        return torch.full((batch,), rows, dtype=torch.int32, device=device)
    if _last_full[0] != key:
        _last_full[:] = [key, torch.full((batch,), rows, dtype=torch.int32,
                                         device=device)]
    return _last_full[1]


def _lengths_from_positions(position_ids, batch):
    """i32 [B] position_ids[:, -1] + 1, computed once per position_ids
    tensor (while its contents are unchanged) and batch in eager mode."""
    import torch

    if torch.compiler.is_compiling():
        # Traced into the graph (a tensor kept across calls would be a
        # CUDA graph's output that the next replay overwrites).
        return (position_ids[:, -1] + 1).to(torch.int32).expand(
            batch).contiguous()
    held, version, held_batch, lengths = _last_lengths
    if (held is not None and held() is position_ids
            and version == position_ids._version and held_batch == batch):
        return lengths
    last = (position_ids[:, -1] + 1).to(torch.int32)
    lengths = last.expand(batch).contiguous()
    _last_lengths[:] = [weakref.ref(position_ids), position_ids._version,
                        batch, lengths]
    return lengths


def attention_forward(module, query, key, value, attention_mask, scaling=None,
                      dropout=0.0, sliding_window=None, softcap=None,
                      is_causal=None, **kwargs):
    """An AttentionInterface function: [B, H, S, D] inputs, returns
    ([B, S, H, Dv] output, None) like transformers' sdpa_attention_forward.
    Decoding steps over a cache go to flashfuse.attention_with_kvcache
    (reading the cache in place, only its written rows); everything else
    to flashfuse.attention."""
    import torch

    from . import kvcache
    from .errors import KernelNotFoundError
    from .functional import attention

    if is_causal is None:
        is_causal = getattr(module, "is_causal", True)
    if kwargs.get("s_aux") is not None:
        from .errors import UnsupportedError
        raise UnsupportedError(
            "flashfuse.hf: attention sinks (s_aux, as in gpt-oss) are not "
            "supported by FlashFuse's kernels; use attn_implementation="
            "\"sdpa\" or \"eager\" for this model")
    # transformers' packed batches: padding-free training, continuous
    # batching (hf_packed).
    try:
        packed = hf_packed.packed_forward(module, query, key, value, scaling,
                                          sliding_window, softcap, is_causal,
                                          dropout, kwargs)
    except KernelNotFoundError:
        # No varlen kernel for this variant and no compiler: padding-free
        # training has the mask transformers built from its position_ids.
        # (Continuous batching has updated its cache by now: no retry.)
        if attention_mask is None or kwargs.get("cache") is not None:
            raise
        packed = None
    if packed is not None:
        return packed, None
    documents = hf_packed.documents_offsets(attention_mask)
    if documents is not None:
        # Sequences packed by position_ids alone: _mask found transformers'
        # mask exactly causal within each (hf_packed.packed_documents), so
        # a sliding layer's window cuts none of them: no window.
        offsets, longest = documents
        if not dropout:
            try:
                return hf_packed.varlen_step(
                    query, key, value, offsets, offsets, longest, longest,
                    scaling, None, softcap, True), None
            except KernelNotFoundError:
                pass
        attention_mask = hf_packed.document_mask(offsets, query.shape[2])
    if _is_leftpad_mask(attention_mask):
        # A step (or the prompt) of a left-padded batch (_left_padded_step):
        # each sequence's keys [leftpad, L) of the cache. (A sliding layer's
        # step sees its whole buffer: _padded_layer_step.)
        lengths, leftpad = attention_mask[0, 0, :, :query.shape[0]]
        step = query.shape[2] <= KVCACHE_MAX_QUERY_ROWS
        unserved = (step, query.dtype, query.shape[-1], bool(softcap))
        trains = getattr(query, "requires_grad", False) and \
            torch.is_grad_enabled()
        # (Neither kernel route has a backward: a forward that trains takes
        # the mask.)
        if (is_causal and not dropout and not trains
                and unserved not in _leftpad_unserved
                and (decode_serves_head_dims(query, value) or not step)):
            try:
                if step:
                    out = kvcache.attention_with_kvcache(
                        query.transpose(1, 2), key.transpose(1, 2),
                        value.transpose(1, 2), lengths,
                        softmax_scale=scaling, is_causal=True,
                        softcap=float(softcap or 0.0), cache_leftpad=leftpad)
                else:
                    out = _left_padded_prompt(query, key, value, leftpad,
                                              scaling, softcap)
                return out, None
            except KernelNotFoundError:
                # No library kernel and no compiler (the library's decode
                # kernels are causal, D = 64, 128, 256, softcap at 128
                # and 256; its varlen ones D = 64, 128, 256): the masked
                # forward, which the library has for padded batches, from
                # now on.
                _leftpad_unserved.add(unserved)
        attention_mask = _mask_of_leftpad(lengths, leftpad, query.shape[2],
                                          key.shape[2])
    lengths = _kvcache_lengths(module, query, key, value, attention_mask,
                               sliding_window, dropout, is_causal, kwargs)
    if lengths is not None:
        # [B, H, S, D] tensors seen as flash-attn's [B, S, H, D]: views, so
        # the cache is read where it lies; the output is [B, S, H, Dv].
        out = kvcache.attention_with_kvcache(
            query.transpose(1, 2), key.transpose(1, 2),
            value.transpose(1, 2), lengths, softmax_scale=scaling,
            is_causal=True, softcap=float(softcap or 0.0))
        return out, None
    # transformers folds causality (and sliding windows) into attention_mask
    # whenever it passes one; it leaves the mask out only where SDPA's
    # is_causal, aligned top-left, is exact: one query row, Sq = Sk, or a
    # prompt written at the start of a static cache whose later rows are
    # unset (bottom-right alignment would attend to those).
    causal = "none"
    window = None
    if attention_mask is None:
        if is_causal and query.shape[2] > 1:
            causal = "top_left"
        if sliding_window:
            window = (int(sliding_window) - 1, -1)
            if is_causal and query.shape[2] == 1 < key.shape[2]:
                # A step's row is the last key: the window ends at the
                # row's own key (bottom-right), as transformers' mask does.
                # Several rows over more keys without a mask are a prompt
                # at the start of a static cache (_window_serves): top-left.
                causal = "bottom_right"
    elif _is_lengths_mask(attention_mask):
        attention_mask = _mask_of_lengths(attention_mask, key.shape[2],
                                          key.device)
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


def _is_sliding_causal(mask_function, window):
    """Whether transformers' `mask_function` keeps exactly the keys q - window
    < kv <= q at the band's edges (its sliding-window causal mask, not the
    chunked or bidirectional masks that also come with a local size), or,
    for `window` None, kv <= q (its causal mask), probed on a few index
    pairs on the CPU."""
    import torch

    w = window or 64
    q = torch.tensor([0, 1, w - 1, w, w + 1, 2 * w + 3])
    kv = (q[:, None] + torch.tensor([-w - 1, -w, -w + 1, -1, 0, 1, w])[None]
          ).flatten()
    q = q[:, None].expand(-1, 7).flatten()
    want = (kv <= q) & ((kv > q - window) if window else True)
    try:
        got = mask_function(torch.zeros_like(q), torch.zeros_like(q), q, kv)
        return bool(torch.equal(torch.as_tensor(got).bool().expand_as(want),
                                want))
    except Exception:  # a function of other arguments: not the plain mask
        return False


def _mask_sizes(args, kwargs, unpadded):
    """(local_size, q_length, kv_length, q_offset, kv_offset) of sdpa_mask's
    keyword arguments for an `unpadded` batch, or None where the mask
    cannot be judged from them: positional arguments, a padded batch, or
    sizes that are not Python ints (a compiled forward's traced offsets)."""
    sizes = (kwargs.get("local_size"), kwargs.get("q_length"),
             kwargs.get("kv_length"), kwargs.get("q_offset", 0),
             kwargs.get("kv_offset", 0))
    if args or not unpadded or not all(type(x) is int for x in sizes[1:]):
        return None
    return sizes


def _window_serves(args, kwargs, unpadded):
    """Whether SDPA's mask for these sdpa_mask arguments (of an `unpadded`
    batch) is what the attention applies without one: causality with the
    layer's sliding_window, which flashfuse.attention runs on its window
    kernels (fold_causal_into_window), or causality alone for a layer
    without a window (local_size None: a prompt at the start of a
    StaticCache, whose mask SDPA needs for the unset rows after it and
    top-left causality does not). transformers' SDPA has no window, so
    it builds a [B, 1, Sq, Skv] mask wherever the keys reach the window.
    Two cases, where transformers' mask is its sliding-window causal one
    alone (allow_is_causal_skip: nothing added to it; the mask function
    probed, since chunked and bidirectional masks also come with a local
    size): a prompt over its own keys (no cache rows before it; a
    StaticCache's later rows unset, which top-left causality leaves out),
    and one query row that is the last of at most a window of keys (a
    decoding step over a sliding-window cache layer, every key in the
    window)."""
    sizes = _mask_sizes(args, kwargs, unpadded)
    if sizes is None or kwargs.get("allow_is_causal_skip") is not True:
        return False
    window, q_length, kv_length, q_offset, kv_offset = sizes
    if not (window is None or isinstance(window, int) and window > 0):
        return False
    prompt = q_length > 1 and q_length <= kv_length and q_offset == 0 \
        and kv_offset == 0
    step = window is not None and q_length == 1 and kv_length <= window \
        and q_offset + 1 == kv_offset + kv_length
    return (prompt or step) and _is_sliding_causal(
        kwargs.get("mask_function"), window)


def _sliding_prefix_rows(args, kwargs, unpadded):
    """For sdpa_mask arguments of an `unpadded` batch whose mask keeps, for
    its one query row, exactly the first n rows of the layer's keys: n;
    else 0. That is a decoding step over a StaticCache's sliding-window
    layer (its buffer of at most a window of rows), where transformers
    builds the mask on every step (allow_is_causal_skip is off for one row
    over a compilable cache): before the buffer fills, the row at q_offset
    sees rows 0..q_offset (kv_offset 0); once full (rolled, the newest row
    last), every row. Only the plain sliding-window causal mask function
    qualifies (probed as in _window_serves; on a GPU, a function with
    overlays reads device tensors and fails the CPU probe). _mask then
    returns n itself (_is_lengths_mask)."""
    import torch

    sizes = _mask_sizes(args, kwargs, unpadded)
    if sizes is None:
        return 0
    window, q_length, kv_length, q_offset, kv_offset = sizes
    if (not isinstance(window, int) or window <= 0
            or q_length != 1 or not 0 < kv_length <= window
            or not isinstance(kwargs.get("device"), torch.device)
            # traced (a compiled forward that builds its own masks): the
            # probe below reads tensors back
            or torch.compiler.is_compiling()):
        return 0
    if kv_offset == 0 and q_offset < kv_length:
        rows = q_offset + 1
    elif q_offset + 1 == kv_offset + kv_length:
        rows = kv_length
    else:
        return 0
    return rows if _is_sliding_causal(kwargs.get("mask_function"),
                                      window) else 0


def _is_lengths_mask(attention_mask):
    """Whether the attention's mask is _mask's count of the keys each
    sequence sees (an i32 [B, 1, 1, 1] tensor), in place of a boolean mask
    that keeps each sequence's first keys: SDPA's masks are boolean or
    floating point, and generate() passes a 4D mask through as it is."""
    import torch

    return (isinstance(attention_mask, torch.Tensor)
            and attention_mask.dtype == torch.int32
            and attention_mask.dim() == 4
            and attention_mask.shape[1:] == (1, 1, 1))


def _mask_of_lengths(lengths, rows, device):
    """The boolean [B, 1, 1, rows] mask of an _is_lengths_mask count (for
    a step the KV-cache kernels do not take)."""
    import torch

    return torch.arange(rows, device=device) < lengths


def _is_left_padding(padding):
    """Whether a 2D padding mask [B, S] pads on the left only: each row's
    padding (zeros) before its tokens (ones). Reads one bool back."""
    padding = padding.bool()
    return bool((padding[:, 1:] >= padding[:, :-1]).all())


def _left_padded_step(args, kwargs, config):
    """For the sdpa_mask arguments of the prompt, or a step over the
    cache, of a batch whose prompt was left-padded
    (`config._flashfuse_left_padded`, found at the prompt): the i32
    [1, 1, 2, B'] tensor of each sequence's length
    L in the layer's keys in row 0 and the keys its padding (the 2D mask's
    zeros) covers there in row 1 (_padded_layer_step says which steps and
    layers), which the attention passes to the decode kernels as
    cache_seqlens and cache_leftpad (flash-attn's); None elsewhere. Key j
    is visible to query i of sequence b iff leftpad_b <= j <= i + L - Sq:
    the causal mask bottom-right with the padding, transformers' mask
    exactly. No read-back. B' is B rounded up to 4, so that both rows
    start on 16-byte boundaries (the kernels' index buffers) in a
    contiguous tensor: generate() makes a StaticCache's masks contiguous
    before its (compiled) steps, which would otherwise copy them."""
    import torch

    padding = kwargs.get("attention_mask")
    batch = kwargs.get("batch_size")
    if (args or config is None
            or not getattr(config, "_flashfuse_left_padded", False)
            or not isinstance(padding, torch.Tensor) or padding.dim() != 2
            or type(batch) is not int or padding.shape[0] != batch):
        return None
    placed = _padded_layer_step(kwargs, padding.shape[1])
    if placed is None:
        return None
    length, first_key = placed
    rows = -(-batch // 4) * 4  # each row on a 16-byte boundary
    both = torch.zeros((2, rows), dtype=torch.int32, device=padding.device)
    both[0].fill_(length)
    both[1, :batch] = (padding.shape[1] - first_key
                       - padding.sum(-1).to(torch.int32))
    return both[None, None]


def _padded_layer_step(kwargs, tokens):
    """(L, the absolute position of the layer's key 0) for the prompt or a
    step of up to KVCACHE_MAX_QUERY_ROWS rows after it (`tokens`, the 2D
    mask's width, is the tokens so far), or None:
    - the prompt (all the tokens, at the start of the cache) of a
      full-attention layer, or of a sliding-window layer whose window
      covers it (the window then hides nothing): L = tokens;
    - a step of a full-attention layer (transformers' plain causal mask
      function, no overlays): its keys are every token, L = tokens, also
      in the steps generate() compiles;
    - a sliding-window layer's one-row step in eager mode (its plain
      sliding-window causal mask function, probed as in _window_serves):
      its buffer of at most a window of keys holds positions kv_offset on,
      before it fills (kv_offset 0) or rolled (the newest row last), so the
      window itself hides nothing there: L = q_offset + 1 - kv_offset."""
    from transformers.masking_utils import causal_mask_function

    q_length = kwargs.get("q_length")
    if type(q_length) is not int or not 0 < q_length <= tokens:
        return None
    window = kwargs.get("local_size")
    if q_length == tokens:
        sizes = _mask_sizes((), kwargs, True)
        if (sizes is None or sizes[3] != 0 or sizes[4] != 0
                or tokens > sizes[2]):
            return None
        if window is None:
            plain = kwargs.get("mask_function") is causal_mask_function
        else:
            plain = (isinstance(window, int) and tokens <= window
                     and _is_sliding_causal(kwargs.get("mask_function"),
                                            window))
        return (tokens, 0) if plain else None
    if q_length > KVCACHE_MAX_QUERY_ROWS:
        return None
    if window is None:
        if (kwargs.get("mask_function") is not causal_mask_function
                or kwargs.get("kv_offset", 0) != 0
                or tokens > kwargs.get("kv_length", 0)):
            return None
        return tokens, 0
    sizes = _mask_sizes((), kwargs, True)
    if sizes is None or q_length != 1 or not isinstance(window, int):
        return None
    import torch
    _, _, kv_length, q_offset, kv_offset = sizes
    filling = kv_offset == 0 and q_offset < kv_length
    rolled = q_offset + 1 == kv_offset + kv_length
    if (torch.compiler.is_compiling() or not 0 < kv_length <= window
            or q_offset + 1 != tokens or not (filling or rolled)
            or not _is_sliding_causal(kwargs.get("mask_function"), window)):
        return None
    return q_offset + 1 - kv_offset, kv_offset


def _left_padded_prompt(query, key, value, leftpad, scaling, softcap):
    """A left-padded batch's prompt ([B, H, S, D] inputs, the keys' first
    S rows its own, causal) on the varlen forward, as [B, S, Hq, Dv]: the
    batch packed as 2B sequences, each row's padding [bS, bS + leftpad_b)
    and its tokens [bS + leftpad_b, (b + 1) S), so that no token sees the
    padding and the causal walk skips what the boolean mask would have
    visited and read (the masked forward visits every block; docs/PERF.md
    "Left-padded batches on the decode and varlen kernels"). A padding row sees the padding before it,
    where the masked forward gives 0: no token reads either."""
    import torch

    from . import varlen

    b, hq, s, d = query.shape
    q = query.transpose(1, 2).reshape(b * s, hq, d)
    k = key[:, :, :s].transpose(1, 2).reshape(b * s, key.shape[1], d)
    v = value[:, :, :s].transpose(1, 2).reshape(b * s, value.shape[1],
                                                value.shape[-1])
    starts = torch.arange(0, b * s, s, device=query.device,
                          dtype=torch.int32)
    cu = torch.cat([torch.stack([starts, starts + leftpad.clamp(0, s)],
                                1).flatten(),
                    starts.new_full((1,), b * s)])
    out = varlen.varlen_attention(q, k, v, cu, cu, s, s, is_causal=True,
                                  scale=scaling, softcap=softcap or None)
    return out.view(b, s, hq, -1)


def _is_leftpad_mask(attention_mask):
    """Whether the attention's mask is _left_padded_step's i32 [1, 1, 2, B']
    lengths and paddings (SDPA's masks are boolean or floating point)."""
    import torch

    return (isinstance(attention_mask, torch.Tensor)
            and attention_mask.dtype == torch.int32
            and attention_mask.dim() == 4
            and attention_mask.shape[:3] == (1, 1, 2))


def _mask_of_leftpad(lengths, leftpad, rows, keys):
    """The boolean [B, 1, rows, keys] mask of _left_padded_step's lengths
    and paddings (for a step the KV-cache kernels do not take)."""
    import torch

    j = torch.arange(keys, device=lengths.device)
    i = torch.arange(rows, device=lengths.device)[:, None]
    diag = i + (lengths - rows)[:, None, None, None]
    return (j >= leftpad[:, None, None, None]) & (j <= diag)


def _mask(*args, **kwargs):
    """The attention mask of transformers' SDPA (a [B, 1, Sq, Skv] bool
    mask, or None where causality alone describes it, and where causality
    with the layer's sliding window does: _window_serves), for the general
    path; also records on the model's config whether the batch has padding,
    for the KV-cache path (_kvcache_lengths), and whether that padding is
    on the left (_left_padded_step, whose lengths and paddings replace the
    mask of such a batch's prompt and decoding steps). That is decided on steps of
    several query rows (the prompt), which read the padding mask back once
    (as transformers' SDPA mask does for the prompt), and kept for the
    decoding steps that follow, which read nothing back: generate() only
    appends unpadded columns to the mask. A one-token prompt has no left
    padding, so a flag left by an earlier prompt cannot be wrong there.
    One row of sequences packed by position_ids alone gets their offsets
    in place of its mask where the mask is exactly causal within each
    (hf_packed.packed_documents: the varlen kernels)."""
    import torch
    from transformers.masking_utils import sdpa_mask

    config = kwargs.get("config")
    padding = kwargs.get("attention_mask")
    if config is not None and (kwargs.get("q_length", 1) > 1 or not hasattr(
            config, "_flashfuse_unpadded")):
        unpadded = padding is None or bool(padding.all())
        object.__setattr__(config, "_flashfuse_unpadded", unpadded)
        object.__setattr__(config, "_flashfuse_left_padded",
                           not unpadded and padding.dim() == 2
                           and _is_left_padding(padding))
    if config is not None:
        unpadded = getattr(config, "_flashfuse_unpadded")
    else:  # no config to keep the prompt's finding in: read it back
        unpadded = padding is None or bool(padding.all())
    if _window_serves(args, kwargs, unpadded):
        return None
    if not unpadded:
        steps = _left_padded_step(args, kwargs, config)
        if steps is not None:
            return steps
    rows = _sliding_prefix_rows(args, kwargs, unpadded)
    if rows and isinstance(kwargs.get("batch_size"), int):
        # The count of the first rows the step sees instead of a mask that
        # keeps them (_is_lengths_mask): the decode kernels take it as their
        # lengths, also in a forward torch.compile traces (generate()
        # compiles the decoding steps over a StaticCache), which sees
        # neither this call's arguments nor the mask's values.
        return _full_lengths(kwargs["batch_size"], rows,
                             kwargs.get("device")).view(-1, 1, 1, 1)
    mask = sdpa_mask(*args, **kwargs)
    if (padding is None and kwargs.get("batch_size") == 1
            and not torch.compiler.is_compiling()):
        # One row of sequences packed by position_ids (padding-free
        # training without offsets): their offsets instead of the mask,
        # when the mask is exactly theirs.
        documents = hf_packed.packed_documents(mask)
        if documents is not None:
            return documents
    return mask


def _register_mask(name):
    """transformers 5 gives an attention implementation it has no mask
    function for no mask at all ("custom attention without equivalent mask
    creation"): a StaticCache's unwritten rows and a batch's padding would
    then be attended to. Older versions pass SDPA's mask themselves."""
    try:
        from transformers.masking_utils import AttentionMaskInterface
    except ImportError:
        return
    AttentionMaskInterface.register(name, _mask)


def _register_attention(interface, name):
    """`attention_forward` as `name` and as "paged|" + name: transformers
    5.17-5.2x's continuous batching (generate_batch) switches a model to
    the "paged|" form of its implementation, whose calls carry the paged
    cache (hf_packed). No mask function for that form: a paged cache
    needs none."""
    interface.register(name, attention_forward)
    interface.register("paged|" + name, attention_forward)
    _register_mask(name)


def register(name=NAME):
    """Registers `attention_forward` with transformers' AttentionInterface
    (and, where transformers has one, a mask function with its
    AttentionMaskInterface) and returns the name to pass as
    attn_implementation: `name`, or, where transformers reserves names
    containing "flash", HUB_SAFE_NAME."""
    try:
        from transformers import AttentionInterface
    except ImportError as e:
        raise ImportError(
            "flashfuse.hf.register() needs transformers (pip install "
            "transformers), which provides AttentionInterface") from e
    _register_attention(AttentionInterface, name)
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
        _register_attention(AttentionInterface, HUB_SAFE_NAME)
        return HUB_SAFE_NAME
    return name
