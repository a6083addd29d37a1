//===- Passes.td - flash dialect transformations ------------*- tablegen -*-===//
#ifndef FLASHFUSE_DIALECT_FLASH_TRANSFORMS_PASSES_TD
#define FLASHFUSE_DIALECT_FLASH_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FlashRaiseAttention : Pass<"flash-raise-attention"> {
  let summary = "Find attention subgraphs and rewrite each into one flash.attention";
  let description = [{
    Matches Q·Kᵀ → scale → (softcap, bias, score modifications, masks) →
    softmax → (dropout) → ·V in linalg-on-tensors (as torch-mlir emits it)
    and TOSA, looking through reshapes, transposes, broadcasts of K/V heads
    (GQA) and f32 up-casts, and replaces the subgraph by one flash.attention.
    K/V heads repeated before other layout changes (Falcon's grouped fused
    QKV broadcasts K and V over their group before the rotary embedding)
    are read as GQA too when the repeat is proven through elementwise ops,
    slices, concatenations and reshapes: the op reads every G-th head (a
    strided tensor.extract_slice).
    Causal and sliding-window masks built from iota/compare or constant
    triangular tensors become attributes; other elementwise functions of
    (score, b, h, q, k) become a score_mod region or a bias operand, and
    other keep conditions a mask_mod region: a document mask (ids[b, q] ==
    ids[b, k] from a sequence-id tensor, read in the region, not
    materialised), a prefix-LM mask (k < prefix or causal), a sliding
    window with global tokens (|q - k| < w or k < g or q < g). A causal
    conjunct of such a mask still becomes the attribute. The double
    negation of masked_fill(~keep, -inf) is folded, so the region holds
    the keep condition itself (flash-derive-block-sparsity recognises the
    document compare there). An ALiBi bias, a slope (any float function
    of b and h alone: slopes[h], BLOOM's repeated slopes[b * H + h], a
    formula of h) times a position, becomes the `alibi(...)` operand (f32
    [Hq], or [B, Hq] where the slope reads b; computed and scaled in a
    tensor.generate where the model's tensor is not already that) when the
    op's -slope * |i + Sk - Sq - j| gives the same O: -slope * |P| for P a
    distance measured from that diagonal, or slope * P linear in the key
    position where no visible key lies past the diagonal (causal masks:
    BLOOM's slope * j, slope * (j - i), and MPT's -slope * |j + 1 - Sk|,
    an absolute value that keeps its sign over the visible keys; positions
    from iota or from a constant arange, as TOSA exports them, plus in the
    linear forms any value of the row, such as a cache position read from
    a tensor), which
    differs from the op's
    bias by a function of the row that the softmax cancels. Other terms
    (a linear bias without a causal mask, a distance from another diagonal)
    stay in score_mod, with a remark under `explain=true`. Nothing
    else in the module changes. With `explain=true`, each candidate that
    almost matched gets a remark naming the step that failed and why.

    A decode step over a KV cache becomes `flash.attention_kvcache`: a few
    query rows (at most 64, fewer than the keys) whose only mask keeps keys
    `j < L_b` (or `j <= q + L_b - Sq`, bottom-right causal) with `L_b` read
    from the batch index only, as Hugging Face's StaticCache builds it from
    the cache position. `cache_seqlens` (i32 [B]) is built in the IR from
    that length; since the model writes the step's new rows into the cache
    before attending and its mask counts them, the op attends over the
    updated cache with that length and no `new_kv`. An ALiBi bias rides
    along as the op's `alibi(...)` slopes where each row's keys end at its
    diagonal (one query row, or a causal length mask). A decode-shaped
    attention whose mask is not such a length (or that has a bias other than that ALiBi,
    score_mod, dropout or window besides it) stays a dense flash.attention,
    with a remark under `explain=true` saying why.

    torch-mlir's own `tm_tensor.attention` (its lowering of a legal
    aten.scaled_dot_product_attention; flashfuse-opt parses the tm_tensor
    ops with definitions of its own) becomes flash.attention with the same
    semantics: `scale`, or 1/sqrt(D) without it; a float mask as `bias`, an
    i1 mask as `mask`, and a mask that is a band of k - q (the causal mask
    torch-mlir materialises for is_causal) as causal/window attributes;
    K/V head repeats dropped for GQA. Operands torch-mlir collapsed from
    [B, H, S, D] are read before the collapse. Rank-5+ operands, dynamic
    shapes, mixed element types and the memref form are not raised (a
    remark under `explain=true`).

    A 16-bit attention computed in f32 (Q, K and V up-cast from one f16 or
    bf16 type, the output cast back, as PyTorch's CPU decomposition of
    scaled_dot_product_attention does) is raised at the 16-bit type, the
    way FlashAttention-enabled frameworks run it: the kernels accumulate in
    f32 and round only P to 16 bits for P·V. `narrow-upcasts=false` keeps
    such attentions in f32.

    FP8 models: when Q, K and V of a raised bf16 or f16 attention are each
    dequantised from f8E4M3FN right before it (`x.to(bf16) * scale` as
    torch-mlir exports it: an arith.extf from f8E4M3FN and an arith.mulf
    by a scale, fused in one linalg.generic or as two; the TOSA form is not
    matched yet), the op is rebuilt on the f8E4M3FN tensors with the scales as
    its `descale(...)` operands (FlashOps.td), rather than left as a 16-bit
    attention after a separate dequantise. A scale must be per tensor or
    per head (constant along S and D), or per block of rows (the
    dequantise done on a view that splits S into blocks, `x8.view(B, H, N,
    rows, D) * scale[B, H, N, 1, 1]` viewed back: a tensor.expand_shape,
    the dequantise and a tensor.collapse_shape, which become a [B, H, N]
    descale with `descale_block_size`; K and V in blocks of one size), and,
    when constant, positive; the FP8 op computes x · scale in f32 where the
    model rounded it to 16 bits.
    Anything else keeps the 16-bit attention (a remark under `explain=true`
    names the reason). `fp8=false` never raises to FP8.

    A decode step whose K and V caches are both dequantised that way right
    before it (an FP8 KV cache, `k_cache.to(bf16) * k_scale`) becomes
    flash.attention_kvcache on the f8E4M3FN caches with the scales as
    `descale(k_descale, v_descale)` (per tensor, or per sequence and kv
    head), Q staying 16-bit. A scale along the rows or channels, an e5m2
    or half-dequantised cache, a query dequantised from FP8 too, a query
    that is not f16/bf16 and a dequantised cache with other users keep the
    step over the 16-bit cache (a remark under `explain=true`).
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark for every near-miss, naming the failed step">,
    Option<"narrowUpcasts", "narrow-upcasts", "bool", /*default=*/"true",
           "Raise a 16-bit attention computed on f32 up-casts at the 16-bit "
           "type">,
    Option<"fp8", "fp8", "bool", /*default=*/"true",
           "Raise an attention over Q, K, V dequantised from f8E4M3FN into "
           "FP8 flash.attention with descale operands, and a decode step "
           "over dequantised f8E4M3FN caches into the FP8 cache form of "
           "flash.attention_kvcache">
  ];
  let dependentDialects = ["::mlir::flash::FlashDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def FlashDeriveBlockSparsity : Pass<"flash-derive-block-sparsity"> {
  let summary = "Give a flash.attention the block-sparse lists its mask_mod "
                "implies";
  let description = [{
    For each dense `flash.attention` or `flash.attention_grad` with a
    `mask_mod` region and static Sq and Sk (a gradient gets the lists of
    its forward: its kernels walk their transposition), classifies every (query block, key block) of
    `block-q` x `block-k` indices by interval evaluation of the region over
    the block's index rectangle [i0, i1] x [j0, j1] (the last block of
    either side short where S is not a multiple), with b and h over their
    whole ranges: a block the mask_mod provably keeps entirely is listed
    as full (the kernels then skip the mask_mod in it), one it provably
    masks entirely (or that the op's causal / window band masks entirely)
    is listed in neither list (the kernels skip it), and every other block
    is partial. The lists are arith.constant tensors in FlexAttention's
    BlockMask layout (FlashOps.td "Block-sparse"), broadcast over batch
    and heads (B' = H' = 1), except that a mask_mod which reads the batch
    (head) index gets a row per batch (head), B' = B (H' = Hq), where that
    size is static and the blocks stay under the pass's bound, shared
    again where every batch (head) came out the same; `sparse_block_size`
    is set to
    [block-q, block-k]. The op's semantics do not change: the dense op and
    the block-sparse one give the same result.

    The evaluation is sound by construction: arith integer ops (add, sub,
    mul, div/rem, min/max, cmpi, and/or/xor, select, casts), math.absi,
    integer constants (in the region or above it) and tensor.extract from a
    constant integer tensor (a document table) are modelled; any other op
    makes its result unknown, and a block whose verdict depends on an
    unknown value stays partial, where the kernels evaluate the mask_mod
    as the dense op does. Values that could wrap are unknown too.
    Correlated uses of one index lose precision, never soundness; to
    recover some, an undecided block is bisected (both index ranges in
    halves, up to 4 levels, within a budget of evaluations per op) and is
    full or skipped when all its parts are (e.g. the block where a window
    meets the global tokens, each part kept by one term).

    Document masks over ids known only at run time: where the mask_mod
    is `ids_q[q_idx] == ids_k[kv_idx]` (two tensor.extract of rank-1
    integer tensors defined above the op, e.g. one sequence-id tensor read
    twice) or `ids_q[b, q_idx] == ids_k[b, kv_idx]` (rank 2, one row per
    batch, as flash-raise-attention reads a torch document mask; the lists
    then have B' = B), possibly and-ed with other terms (decided per
    block at compile time as above), the pass emits IR before
    the op that computes the lists at run time instead: each query block's
    and key block's minimum and maximum id (scf.for loops over the ids),
    then per (query block, key block) skipped where the id ranges are
    disjoint or the index-only terms (and band) mask the block, full where
    both blocks hold one and the same id and the index-only terms keep the
    block whole, partial otherwise; compacted into sorted lists of
    ceil(Sk / block-k) slots.

    An op that already has a `config` gets [block-q, block-k] rounded up
    to multiples of its block_m and block_n (flash-lower-to-gpu walks a
    sparse block in whole kernel tiles): for GPU code, run the pass after
    flash-select-config. Before it, an op may later get tiles that do not
    divide the block sizes (sm90 at D = 256 has 80-key tiles), which
    flash-lower-to-gpu refuses; the CPU lowerings take any sizes.

    Left dense, with a remark under `explain=true` naming why: an op with
    no mask_mod, one that already has lists, a `mask` operand, varlen, FP8
    operands (the three refused with lists by the verifier), dynamic Sq or
    Sk, more than 2^22 blocks, and an op on which
    nothing would be gained: every block partial, so the lists would only
    add work (e.g. a dilated mask, or a mask read from a runtime tensor
    in another form than the document compare above).
    `flash.attention_grad` is not rewritten (its block-sparse form has no
    GPU kernels yet).
  }];
  let options = [
    Option<"blockQ", "block-q", "int64_t", /*default=*/"128",
           "Query rows per sparse block (BQ); flash-lower-to-gpu needs a "
           "multiple of the config's block_m">,
    Option<"blockK", "block-k", "int64_t", /*default=*/"128",
           "Keys per sparse block (BK); flash-lower-to-gpu needs a "
           "multiple of the config's block_n">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark for every op with a mask_mod left dense, naming "
           "why">
  ];
  let dependentDialects = ["::mlir::flash::FlashDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FlashSelectConfig : Pass<"flash-select-config"> {
  let summary = "Choose a kernel recipe and tile sizes for each attention op";
  let description = [{
    Reads a target description (a named GPU or a `#flash.target<...>`
    attribute on the module under `flash.target`) and sets the `config`
    attribute of every flash.attention and flash.attention_grad that has
    none: recipe, block_m, block_n, warps and pipeline stages. Tiles are
    sized so that the Q tile, the K/V pipeline stages and the epilogue fit
    in the target's shared memory per block and the accumulators in the
    register file; ops the recipes cannot serve get an error naming why.
    A varlen (packed) flash.attention or flash.attention_grad gets the
    config of the same dense op (its kernels are the recipe's under the
    varlen tile scheduler). A block-sparse op's tiles divide its lists'
    sparse blocks [BQ, BK] (a thread block's rows lie in one query block,
    its keys tile the key blocks): the key tiles shrink to a divisor of BK,
    the backward's query steps to one of BQ, and query blocks the wgmma
    recipes' 128-row forwards (or 128-key backwards) do not divide go to the
    sm80 recipe, whose tiles shrink to divide both; sizes no tile divides
    (a forward's BQ below 64, a BK that is no multiple of 16) get an error
    naming them.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "Named target: a100 (sm_80), l4 (sm_89), h100 or h200 (sm_90); "
           "empty reads the module's flash.target attribute">,
    Option<"recipe", "recipe", "std::string", /*default=*/"\"auto\"",
           "Forward recipe: auto (sm90 where the target and the variant "
           "allow it, else sm80), auto-tma (auto, except that the forwards "
           "and backwards the sm90ws recipe serves take it: for kernels the "
           "runtime launches; its forward is faster from 1-2k keys, slower "
           "below), sm80, sm90 (an error "
           "where it cannot serve an op) or sm90ws (the "
           "TMA/warp-specialised Hopper kernels: a forward op it cannot "
           "serve is an error, a backward op it cannot serve gets auto's)">,
    Option<"deterministic", "deterministic", "bool", /*default=*/"false",
           "The backward ops are lowered deterministic (flash-lower-to-gpu's "
           "option of that name): the sm90ws and auto-tma recipes give them "
           "the sm90 backward, whose dQ kernel that mode needs">
  ];
  let dependentDialects = ["::mlir::flash::FlashDialect"];
}

#endif // FLASHFUSE_DIALECT_FLASH_TRANSFORMS_PASSES_TD
