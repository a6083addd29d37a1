//===- FlashOps.td - flash.attention and friends ------------*- tablegen -*-===//
#ifndef FLASHFUSE_DIALECT_FLASH_IR_FLASHOPS_TD
#define FLASHFUSE_DIALECT_FLASH_IR_FLASHOPS_TD

include "flashfuse/Dialect/Flash/IR/FlashDialect.td"
include "flashfuse/Dialect/Flash/IR/FlashAttrs.td"
include "flashfuse/Dialect/Flash/IR/FlashInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpBase.td"

def Flash_FloatTensor : RankedTensorOf<[F16, BF16, F32]>;
def Flash_MaskTensor : RankedTensorOf<[I1]>;
def Flash_LseTensor : RankedTensorOf<[F32]>;
def Flash_I32Tensor : RankedTensorOf<[I32]>;
// Q, K and V (and KV caches) may also be 8-bit floats. Both FP8 formats are
// accepted here so that the verifiers, not the type constraint, name the
// reason an unsupported one (e5m2, FP8 in the gradient, an FP8 query of the
// KV cache op) is refused.
def Flash_QKVTensor : RankedTensorOf<[F16, BF16, F32, F8E4M3FN, F8E5M2]>;
// Dequantisation factors of FP8 operands: [] per tensor, [B, H] per head,
// [B, H, N] per block of the sequence (flash.attention only).
def Flash_DescaleTensor : RankedTensorOf<[F32]>;
// ALiBi's per-head slopes (f32 [Hq] or [B, Hq]).
def Flash_SlopesTensor : RankedTensorOf<[F32]>;

// The attributes that define a variant; both ops carry the same set.
defvar Flash_VariantAttrs = (ins
  OptionalAttr<F32Attr>:$scale,
  OptionalAttr<Flash_CausalAttr>:$causal,
  OptionalAttr<I64Attr>:$window_left,
  OptionalAttr<I64Attr>:$window_right,
  OptionalAttr<F32Attr>:$softcap,
  OptionalAttr<F32Attr>:$dropout_p,
  OptionalAttr<DenseI64ArrayAttr>:$q_perm,
  OptionalAttr<DenseI64ArrayAttr>:$k_perm,
  OptionalAttr<DenseI64ArrayAttr>:$v_perm,
  OptionalAttr<Flash_KernelConfigAttr>:$config,
  OptionalAttr<DenseI64ArrayAttr>:$sparse_block_size
);

defvar Flash_VariantDoc = [{
    Semantics, per batch b, query head h, query row i and key j, with
    G = Hq / Hkv and kv head h / G:

    ```
    s = scale * dot(Q[b,h,i,:], K[b,h/G,j,:])       (scale defaults to 1/sqrt(D))
    s = softcap * tanh(s / softcap)                  if softcap
    s = s + bias[b,h,i,j]                            if bias (size-1 dims broadcast)
    s = score_mod(s, b, h, i, j)                     if the score_mod region is present
    s = s - slope * |i + Sk - Sq - j|                if alibi (slope below)
    s = -inf  unless  mask[b,h,i,j]  and  mask_mod(b, h, i, j)
              and (causal => j <= i + off)
              and (window_left => j >= i + off - window_left)
              and (window_right => j <= i + off + window_right)
    P = softmax_j(s) in f32; a row with every key masked gives P = 0
    P = P * keep(seed, b, h, i, j) / (1 - dropout_p)  if dropout_p > 0
    O[b,h,i,:] = sum_j P[j] * V[b,h/G,j,:]
    LSE[b,h,i] = log(sum_j exp(s_j))  (+inf for a fully masked row)
    ```

    `off` is `Sk - Sq` when `causal = #flash.causal<bottom_right>` and 0
    otherwise (top-left alignment, also used by a window without causal).

    ALiBi: `alibi(%slopes : tensor<Hqxf32>)` (or `tensor<BxHqxf32>`), flash-attn's
    `alibi_slopes`, gives every score the bias -slope * |i + Sk - Sq - j|,
    slope = slopes[h] (slopes[b, h] for [B, Hq]): the distance from the
    bottom-right diagonal whatever the causal alignment, as flash-attn
    takes it, after `score_mod` and before the masks. The LSE includes the
    bias (flash-attn's causal kernels add slope * j alone, which gives the
    same O and another LSE). flash-lower-to-gpu's kernels add it natively
    (the distance's two ends converted once a row and a column, then one
    subtraction and one fused multiply-add a score, in the log2 domain of
    the exponent); the CPU lowerings fold it into `score_mod`.
    With `varlen`, Sk - Sq is each sequence's Lk_b - Lq_b, b indexes a
    [B, Hq] slope tensor by sequence, and i, j are the local indices. Refused
    by the verifier with FP8 operands.

    Layouts: Q, K, V are logically [B, H, S, D]. `q_perm`, `k_perm` and
    `v_perm` name, for each logical dimension in that order, the operand
    dimension holding it: BSHD operands have perm `array<i64: 0, 2, 1, 3>`.
    The output O uses the layout of Q. LSE is always [B, Hq, Sq].

    Regions: `score_mod` takes (score: f32, b, h, q_idx, kv_idx: index) and
    yields an f32; `mask_mod` takes (b, h, q_idx, kv_idx: index) and yields
    an i1 (true = keep). Both may read values defined above the op: on the
    GPU, scalars and ranked tensors read by tensor.extract become kernel
    parameters (flash-lower-to-gpu).

    Other attributes must be dialect-prefixed (`mytool.origin = ...`): an
    unprefixed name that is not one of the above is rejected, so that a
    misspelt variant attribute cannot silently select another variant.
}];

defvar Flash_OptionalOperandsFormat = [{
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`seed` `(` $seed^ `)`)?
    (`varlen` `(` $cu_seqlens_q^ `,` $cu_seqlens_k `:` type($cu_seqlens_q)
       `,` type($cu_seqlens_k) `)`)?
    (`block_sparse` `(` $kv_num_blocks^ `,` $kv_indices `:`
       type($kv_num_blocks) `,` type($kv_indices) `)`)?
    (`full_blocks` `(` $full_kv_num_blocks^ `,` $full_kv_indices `:`
       type($full_kv_num_blocks) `,` type($full_kv_indices) `)`)?
    (`alibi` `(` $alibi_slopes^ `:` type($alibi_slopes) `)`)?
}];
defvar Flash_RegionsFormat = [{
    (`score_mod` $score_mod^)?
    (`mask_mod` $mask_mod^)?
}];

def Flash_AttentionOp : Flash_Op<"attention", [
    AttrSizedOperandSegments, RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<Flash_AttentionVariantInterface>]> {
  let summary = "fused scaled-dot-product attention";
  let description = !strconcat([{
    Computes `softmax(scale * Q Kᵀ + bias, masked) V` as one operation, with
    grouped-query heads (Hq = G·Hkv, no copy of K or V), causal and sliding
    window masks as attributes (so kernels skip whole tiles), softcapping,
    dropout, arbitrary operand layouts and `score_mod` / `mask_mod` regions.
    The optional second result is the log-sum-exp of each row, saved for the
    backward pass.

    ```mlir
    %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<top_left>}
        : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
        -> tensor<2x8x128x64xf16>, tensor<2x8x128xf32>
    ```

    O has the element type of Q, or f32 where Q, K and V are f16 or bf16:
    O is then written straight from the f32 accumulators, normalised
    (O = acc / l) as always but never rounded to 16 bits. Split-sequence
    schemes (ring attention: the keys split across devices) run the op once
    per key/value shard j and merge the partial results by their LSE,
    `O = sum_j exp(LSE_j - LSE) O_j` with `LSE = log sum_j exp(LSE_j)`; from
    f32 partials that merge is exact up to f32 rounding, where 16-bit
    partials would each bring a 16-bit rounding error into it. A fully
    masked row still gives O = 0 and LSE = +inf, so a merge must give such
    a partial weight 0 (read its LSE as -inf) rather than exp(+inf).
    `flash.attention_grad` takes O in the type of Q.

    ```mlir
    %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<top_left>}
        : tensor<1x8x4096x128xbf16>, tensor<1x8x4096x128xbf16>,
          tensor<1x8x4096x128xbf16>
        -> tensor<1x8x4096x128xf32>, tensor<1x8x4096xf32>
    ```
  }], Flash_VariantDoc, [{

    Variable-length (packed) batches, as flash-attn's
    `flash_attn_varlen_func` takes them: with
    `varlen(%cu_seqlens_q, %cu_seqlens_k : tensor<?xi32>, tensor<?xi32>)`
    Q, K and V hold B sequences packed along S, with logical batch size 1:
    Q is [1, Hq, total_q, D] (flash-attn's [total_q, Hq, D] is
    `q_perm = array<i64: 0, 2, 1, 3>` on [1, total_q, Hq, D]), K and V
    [1, Hkv, total_k, D / Dv].

    ```mlir
    %o, %lse = flash.attention %q, %k, %v
        varlen(%cu_q, %cu_k : tensor<4xi32>, tensor<4xi32>)
        {causal = #flash.causal<bottom_right>}
        : tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16>
        -> tensor<1x8x300x64xf16>, tensor<1x8x300xf32>
    ```

    `cu_seqlens_q` and `cu_seqlens_k` are i32 [B + 1] (both the same size):
    cumulative offsets, starting at 0 and non-decreasing. Sequence b owns
    query rows [cu_q[b], cu_q[b+1]) and key rows [cu_k[b], cu_k[b+1]), so
    its lengths are Lq_b = cu_q[b+1] - cu_q[b] and Lk_b = cu_k[b+1] - cu_k[b];
    a length may be 0. For query row i of sequence b, with local indices
    i' = i - cu_q[b] and j' = j - cu_k[b], the semantics above hold with
    b = 0 (the packed batch), with i', j' in the causal and window tests
    and `off = Lk_b - Lq_b` for bottom-right alignment (each sequence's own
    lengths, as flash-attn does), and with every key outside
    [cu_k[b], cu_k[b+1]) masked: no attention across sequences. A row whose
    sequence has no visible key gives O = 0 and LSE = +inf, like any fully
    masked row; so do query rows at or past cu_q[B] that no sequence owns.
    The LSE is in the packed layout [1, Hq, total_q].

    There are no `max_seqlen_q` / `max_seqlen_k` attributes: the CPU
    lowerings read every length from the cu tensors at run time, and a GPU
    launch will derive its grid bound from the static total (max_seqlen <=
    total). Offsets that decrease, do not start at 0 or exceed the packed
    totals are outside the contract (a wrong answer, never an out-of-bounds
    read in the CPU lowerings, which clamp them).

    The `score_mod` and `mask_mod` regions see each sequence as a batch of
    its own: they are given (b, h, i', j'), b the sequence's index in
    [0, B) and i', j' the local indices above (what flash-attn's varlen
    ALiBi and FlexAttention's per-document mods over padded batches see),
    and they are evaluated only for keys of the query's own sequence. A
    region that needs Lq_b or Lk_b reads them from above the op, indexed
    by b (a captured tensor, docs/KERNEL_ABI.md "Values captured by
    score_mod and mask_mod").

    Dropout sees the same indices: P[i, j] of sequence b is kept by
    keep(seed, b, h, i', j') (so a sequence packed alone or at another
    place draws the same mask when it keeps its index b; what flash-attn's
    varlen dropout does, and what lets the GPU kernels, whose tiles start
    at a sequence's first row, draw one Philox call for an octet of
    scores as in the dense kernels).

    Not supported with `varlen` yet, and rejected by the verifier: `bias`
    and `mask` (their [B, Hq, Sq, Sk] would be per sequence). On the GPU,
    flash-lower-to-gpu builds the recipe's forward under the varlen tile
    scheduler (one block per query block, head and sequence;
    docs/KERNEL_ABI.md "Varlen"), with the dense op's config.
    `flash.attention_grad` takes the same `varlen(...)` operands, with the
    same rules; flash-lower-to-gpu builds the backward kernels under the
    same scheduler (one block per key block, head and sequence).

    Block-sparse attention (FlashAttention's block-sparse variant, in the
    layout of FlexAttention's `BlockMask`, so that its four tensors pass
    straight through):

    ```mlir
    %o, %lse = flash.attention %q, %k, %v
        block_sparse(%kv_num, %kv_idx : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>)
        full_blocks(%full_num, %full_idx : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>)
        {sparse_block_size = array<i64: 128, 128>}
        : tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>,
          tensor<2x8x1000x128xbf16>
        -> tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>
    ```

    `sparse_block_size = [BQ, BK]` (default [128, 128], FlexAttention's)
    cuts the queries into QB = ceil(Sq / BQ) blocks, block qb holding rows
    [qb·BQ, min((qb+1)·BQ, Sq)), and the keys into KB = ceil(Sk / BK)
    blocks in the same way; the last block of either may be short.
    `kv_num_blocks` is i32 [B', H', QB] and `kv_indices` i32 [B', H', QB, N]
    (kv_num_blocks / kv_indices of a BlockMask), where B' is B or 1 and H'
    is Hq or 1 (a size-1 dimension broadcasts, as FlexAttention allows) and
    N >= 0 is the number of slots: query block qb of batch b and query head
    h lists the partial key blocks kv_indices[b, h, qb, 0 : n] with
    n = kv_num_blocks[b, h, qb]. The optional `full_blocks(...)` operands
    (full_kv_num_blocks / full_kv_indices, their own B', H' and N) list the
    full key blocks the same way. For query row i in block qb and key j in
    block kb, the semantics above hold with the mask test replaced by:

    - kb listed as full: `mask_mod` is not evaluated; key j is kept iff
      the causal / window band keeps it. A full block is the caller's
      promise that `mask_mod` keeps all of it (FlexAttention's contract:
      a full block that mask_mod would partly mask is attended in full).
      The band attributes are the op's own, not part of the mask the lists
      describe, so they hold in every block: a full block that `causal`
      would partly mask is masked by it (FlexAttention has no such
      attribute; its causal mask is a mask_mod, which full blocks skip).
      Kernels do no mask work in a full block that lies inside the band
      and below Sk, as every full block of a BlockMask built from a mask_mod
      does.
    - kb listed as partial: key j is kept iff `mask_mod` and the band keep
      it, as for a dense op.
    - kb listed in neither: key j is masked; a row whose query block lists
      no block is a fully masked row (O = 0, LSE = +inf).

    `score_mod`, `bias`, softcap and dropout apply to every kept key, full
    blocks included: they change scores, they do not mask them. The lists'
    contract: 0 <= n <= N, every listed index in [0, KB), strictly
    increasing within a row, and no block in both lists of a row. Runtime
    entry points check it on the host before a launch where they can read
    the lists (docs/KERNEL_ABI.md "Block-sparse"). Outside it the result is
    unspecified but nothing is read out of bounds: the lowerings clamp n
    into [0, N] and skip indices outside [0, KB); a block listed twice may
    be counted twice.

    The lists need not come from the user: `flash-derive-block-sparsity`
    gives a dense op whose `mask_mod` it can decide block by block at
    compile time (causal, windows, prefixes, global tokens, documents of
    fixed length or from a constant id table) the lists that mask implies,
    as constants broadcast over batch and heads (per batch or head where
    the mask_mod reads b or h), and one whose `mask_mod`
    compares sequence ids read from a tensor (a document mask) lists
    computed at run time from each block's id range; every block is
    proven, so the result stays the dense op's.

    Not supported with `block_sparse` yet, and rejected by the verifier:
    `varlen`, FP8 operands and the `mask` operand (a boolean mask is
    expressed as `mask_mod`, whose block structure the lists describe).
    The CPU lowerings need static shapes; flash-lower-to-loops visits only
    the listed blocks. On the GPU, flash-lower-to-gpu builds the sm80 or
    sm90 recipe's forward with the block-sparse key-block iterator, which
    fetches and scores only the listed blocks and skips mask_mod in full
    ones (BQ and BK must be multiples of the config's block_m and block_n,
    which flash-select-config chooses so; docs/KERNEL_ABI.md
    "Block-sparse"). A block-sparse flash.attention_grad
    takes the same lists; flash-lower-to-gpu transposes them on the GPU
    (query blocks per key block, sorted, each once, into a workspace of
    its own) before the sm80 recipe's main backward kernel walks them, so
    that the gradient visits exactly the blocks the forward visited
    (docs/KERNEL_ABI.md "Block-sparse backward"; the deterministic mode's
    dQ kernel walks the forward's lists directly).


    FP8 (inference): Q, K and V may be `f8E4M3FN` with
    `descale(%q_descale, %k_descale, %v_descale : ...)`, f32 dequantisation
    factors, each `tensor<f32>` (per tensor), `tensor<BxHxf32>` (per head:
    H = Hq for `q_descale`, Hkv for `k_descale` and `v_descale`), as
    flash-attn 3 takes them, or `tensor<BxHxNxf32>` (per block of the
    sequence, FlashAttention-3's block quantisation). O is bf16 or f16.

    Per-block descales: `descale_block_size = [BQ, BK]` (default
    [128, 128]) cuts Q's rows into N = ceil(Sq / BQ) blocks and K's and V's
    into N = ceil(Sk / BK), block n holding rows [n·BQ, min((n+1)·BQ, S))
    as `sparse_block_size` does; a rank-3 descale has one factor per (batch,
    head, block). Each of the three may be per tensor, per head or per
    block on its own; the attribute is refused where none is per block.
    flash-lower-to-gpu serves BQ a multiple of 16 (the rows one warp owns)
    and BK a multiple of the config's block_n (one factor per key tile).

    ```mlir
    %o = flash.attention %q, %k, %v
        descale(%qd, %kd, %vd : tensor<f32>, tensor<2x2xf32>, tensor<2x2xf32>)
        : tensor<2x8x128x64xf8E4M3FN>, tensor<2x2x128x64xf8E4M3FN>,
          tensor<2x2x128x64xf8E4M3FN> -> tensor<2x8x128x64xbf16>
    ```

    With dq_i = q_descale[b, h], dk_j = k_descale[b, h/G] and
    dv_j = v_descale[b, h/G] (the scalar itself when per tensor;
    q_descale[b, h, i / BQ], k_descale[b, h/G, j / BK] and
    v_descale[b, h/G, j / BK] when per block), Q, K, V read as the exact
    values of their e4m3 codes, and everything else as in the semantics
    above:

    ```
    x      = dot(Q[b,h,i,:], K[b,h/G,j,:])      in f32 (e4m3 products are exact)
    s      = score pipeline(dq_i * dk_j * x)    (scale, softcap, bias, masks)
    m      = max_j s;  p_j = exp(s_j - m);  l = sum_j p_j     (f32, unquantised)
    P8_j   = e4m3(min(p_j * 256, 448))          round to nearest even
    O      = (sum_j dv_j * P8_j * V[b,h/G,j,:]) / (256 * l)
    LSE    = m + log l
    ```

    A per-block V factor multiplies P8 after its quantisation: P8 does not
    depend on how V was scaled. (A kernel keeps O in units of the current
    key block's dv and rescales it by the ratio of two blocks' factors
    along with the softmax's own rescale.)

    P is quantised to e4m3 because the second product runs on FP8 tensor
    cores; the fixed power-of-two P scale 256 adds no rounding of its own
    and moves p in [0, 1] to [0, 256], so that small probabilities keep
    e4m3's normal range (down to 2^-14 of the row maximum instead of 2^-6)
    while the largest, 256, stays below e4m3's maximum 448. The row sum l
    is of the unquantised p (the f32 values a kernel holds before it
    converts P), so only the P·V product sees P8. m is the row maximum
    over all keys: the CPU lowerings compute it exactly (the loops lowering
    in a first pass over the keys); a kernel with an online softmax
    quantises against its running maximum instead, which can move a P8 by
    one e4m3 step, within the FlashAttention numerics rule the GPU checks
    apply against this reference.

    Refused by the verifier: `f8E5M2` operands (no e5m2 kernels: e4m3's
    extra mantissa bit is what inference attention needs), FP8 without
    `descale`, `descale` without FP8, an O that is not bf16 or f16, dropout
    and varlen with FP8, and descale shapes other than the two above; a
    descale given as a constant must be positive and finite (the verifier
    cannot see a runtime value; the caller must pass positive ones), and
    `descale_block_size` must have two positive elements and come with at
    least one per-block descale. `flash.attention_grad` refuses FP8 operands;
    `flash.attention_kvcache` takes an FP8 cache (not an FP8 Q) with
    `k_descale` / `v_descale` of the same shapes.
  }]);

  let arguments = !con((ins Flash_QKVTensor:$query, Flash_QKVTensor:$key,
                            Flash_QKVTensor:$value,
                            Optional<Flash_FloatTensor>:$bias,
                            Optional<Flash_MaskTensor>:$mask,
                            Optional<I64>:$seed,
                            Optional<Flash_I32Tensor>:$cu_seqlens_q,
                            Optional<Flash_I32Tensor>:$cu_seqlens_k,
                            Optional<Flash_DescaleTensor>:$q_descale,
                            Optional<Flash_DescaleTensor>:$k_descale,
                            Optional<Flash_DescaleTensor>:$v_descale,
                            Optional<Flash_I32Tensor>:$kv_num_blocks,
                            Optional<Flash_I32Tensor>:$kv_indices,
                            Optional<Flash_I32Tensor>:$full_kv_num_blocks,
                            Optional<Flash_I32Tensor>:$full_kv_indices,
                            Optional<Flash_SlopesTensor>:$alibi_slopes),
                       Flash_VariantAttrs,
                       (ins OptionalAttr<DenseI64ArrayAttr>:$descale_block_size));
  let results = (outs Flash_FloatTensor:$output, Optional<Flash_LseTensor>:$lse);
  let regions = (region AnyRegion:$score_mod, AnyRegion:$mask_mod);

  let assemblyFormat = !strconcat([{ $query `,` $key `,` $value }],
      Flash_OptionalOperandsFormat,
      [{ (`descale` `(` $q_descale^ `,` $k_descale `,` $v_descale `:`
            type($q_descale) `,` type($k_descale) `,` type($v_descale) `)`)?
         attr-dict `:` type($query) `,` type($key) `,` type($value)
         `->` type(results) }], Flash_RegionsFormat);
  let hasVerifier = 1;
  let hasRegionVerifier = 1;

  let extraClassDeclaration = [{
    /// True when the batch is packed (`varlen(...)`): the cu_seqlens
    /// operands are given (the verifier makes them come together).
    bool isVarlen() {
      return static_cast<bool>(getCuSeqlensQ()) ||
             static_cast<bool>(getCuSeqlensK());
    }
    /// [BQ, BK] of per-block descales: `descale_block_size`, or the
    /// default [128, 128].
    std::array<int64_t, 2> getDescaleBlocks() {
      if (auto size = getDescaleBlockSizeAttr(); size && size.size() == 2)
        return {size[0], size[1]};
      return {128, 128};
    }
    /// True when any descale is per block of the sequence (rank 3).
    bool hasBlockDescales() {
      for (Value d : {getQDescale(), getKDescale(), getVDescale()})
        if (d && ::llvm::cast<::mlir::RankedTensorType>(d.getType())
                         .getRank() == 3)
          return true;
      return false;
    }
    /// True when Q, K and V are f8E4M3FN (the verifier then guarantees the
    /// three descale operands).
    bool isFp8() {
      return ::llvm::isa<::mlir::Float8E4M3FNType>(
          getQuery().getType().getElementType());
    }
  }];
}

def Flash_AttentionGradOp : Flash_Op<"attention_grad", [
    AttrSizedOperandSegments, RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<Flash_AttentionVariantInterface>]> {
  let summary = "gradient of flash.attention, recomputing P from the LSE";
  let description = !strconcat([{
    Given dO, the forward inputs, the forward output O and its LSE, returns
    dQ, dK, dV (in the layouts of Q, K, V) and, when a bias is given and a
    `dbias` result is requested, dBias in the shape of the bias (summed over
    broadcast dimensions). P is recomputed tile by tile from Q, K and LSE, so
    nothing of size Sq x Sk is saved between the passes. The variant
    attributes and regions must be those of the forward op, and so must the
    `varlen(%cu_seqlens_q, %cu_seqlens_k : ...)` operands of a packed batch
    (see `flash.attention`): dQ, dK, dV are then packed like Q, K, V, and
    rows no sequence owns get zero gradients. Likewise the
    `block_sparse(...)` / `full_blocks(...)` lists and `sparse_block_size`
    of a block-sparse forward: the same lists (indexed by query block, as
    the forward takes them), the same keys kept; transposing them for the
    backward's walk over key blocks is the lowering's job.
  }], Flash_VariantDoc);

  let arguments = !con((ins Flash_FloatTensor:$grad_output,
                            Flash_QKVTensor:$query, Flash_QKVTensor:$key,
                            Flash_QKVTensor:$value, Flash_FloatTensor:$output,
                            Flash_LseTensor:$lse,
                            Optional<Flash_FloatTensor>:$bias,
                            Optional<Flash_MaskTensor>:$mask,
                            Optional<I64>:$seed,
                            Optional<Flash_I32Tensor>:$cu_seqlens_q,
                            Optional<Flash_I32Tensor>:$cu_seqlens_k,
                            Optional<Flash_I32Tensor>:$kv_num_blocks,
                            Optional<Flash_I32Tensor>:$kv_indices,
                            Optional<Flash_I32Tensor>:$full_kv_num_blocks,
                            Optional<Flash_I32Tensor>:$full_kv_indices,
                            Optional<Flash_SlopesTensor>:$alibi_slopes),
                       Flash_VariantAttrs);
  let results = (outs Flash_QKVTensor:$grad_query, Flash_QKVTensor:$grad_key,
                      Flash_QKVTensor:$grad_value,
                      Optional<Flash_FloatTensor>:$grad_bias);
  let regions = (region AnyRegion:$score_mod, AnyRegion:$mask_mod);

  let assemblyFormat = !strconcat([{
      $grad_output `,` $query `,` $key `,` $value `,` $output `,` $lse }],
      Flash_OptionalOperandsFormat,
      [{ attr-dict `:` type($grad_output) `,` type($query) `,` type($key) `,`
         type($value) `,` type($output) `,` type($lse) `->` type(results) }],
      Flash_RegionsFormat);
  let hasVerifier = 1;
  let hasRegionVerifier = 1;

  let extraClassDeclaration = [{
    /// True when the batch is packed (`varlen(...)`), as for the forward.
    bool isVarlen() {
      return static_cast<bool>(getCuSeqlensQ()) ||
             static_cast<bool>(getCuSeqlensK());
    }
  }];
}

// Not an AttentionVariantInterface: the interface describes dense Q, K, V
// operands with one key length (getQKV, getSizes), and every pass that walks
// it (flash-select-config's sm80/sm90 choice, the naive, loops and GPU
// lowerings) would treat a paged or length-limited cache as a dense K. The
// op carries the same variant attributes (minus bias, mask, dropout and the
// regions) and answers for them with its own helpers below; the CPU
// lowerings reach it through flash-decompose-kvcache.
def Flash_AttentionKVCacheOp : Flash_Op<"attention_kvcache", [
    AttrSizedOperandSegments, AttrSizedResultSegments, Pure]> {
  let summary = "attention of a few query rows over a (paged) KV cache";
  let description = [{
    Decoding attention: Q [B, Hq, Sq, D] attends to the first
    `L_b = cache_seqlens[b] + Snew` rows of sequence b's key/value cache,
    after the `Snew` rows of `new_kv` (if given) are written into the cache at
    rows [cache_seqlens[b], L_b). docs/KVCACHE.md is the contract.

    ```mlir
    %o, %lse = flash.attention_kvcache %q, %k_cache, %v_cache, %cache_seqlens
        {causal = #flash.causal<bottom_right>}
        : tensor<4x32x1x128xbf16>, tensor<4x8x4096x128xbf16>,
          tensor<4x8x4096x128xbf16>, tensor<4xi32>
        -> tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>

    %o, %kc, %vc = flash.attention_kvcache %q, %k_pages, %v_pages, %cache_seqlens
        block_table(%bt : tensor<4x64xi32>)
        new_kv(%k_new, %v_new : tensor<4x8x1x128xbf16>, tensor<4x8x1x128xbf16>)
        {causal = #flash.causal<bottom_right>}
        : tensor<4x32x1x128xbf16>, tensor<1024x16x8x128xbf16>,
          tensor<1024x16x8x128xbf16>, tensor<4xi32>
        -> tensor<4x32x1x128xbf16>, tensor<1024x16x8x128xbf16>,
           tensor<1024x16x8x128xbf16>
    ```

    Operands (logical layouts; `q_perm`, `k_perm`, `v_perm` as for
    `flash.attention`):
    - `query` [B, Hq, Sq, D];
    - `key_cache` / `value_cache`: contiguous [B, Hkv, C, D] / [B, Hkv, C, Dv]
      (capacity C), or, when `block_table` is given, paged
      [num_pages, page_size, Hkv, D] / [.., Dv] in that fixed layout
      (`k_perm` / `v_perm` are then rejected); C = max_pages * page_size;
    - `cache_seqlens` i32 [B]: the valid rows of each sequence before this
      step's new rows;
    - `block_table` i32 [B, max_pages]: page p of sequence b holds its rows
      [p * page_size, (p + 1) * page_size);
    - `cache_leftpad` i32 [B] (flash-attn's `cache_leftpad`): the first
      row of each sequence's cache; the rows before it are padding that no
      query sees (a left-padded batch: Hugging Face's `padding_side="left"`
      writes every sequence's prompt to end at the same row). Absent: 0.
    - `cache_batch_idx` i32 [B] (flash-attn's `cache_batch_idx`; contiguous
      caches only): sequence b's cache is row cache_batch_idx[b] of caches
      of Bc rows [Bc, Hkv, C, D] (a pool of sequences, any Bc >= 1); its
      new rows are written there. Everything else of sequence b (length,
      first row, slopes, descales) is still indexed by b. Absent: b.
    - `key_new` / `value_new` (together) [B, Hkv, Snew, D] / Dv in the layout
      of `query`;
    - `alibi_slopes` f32 [Hq] or [B, Hq] (flash-attn's `alibi_slopes`):
      with it every visible key's score gets the ALiBi bias below;
    - `rotary_cos` / `rotary_sin` (together, flash-attn's `rotary_cos` /
      `rotary_sin`) [R, rotary_dim / 2] in the type of `query`: rotary
      position embedding applied to `key_new` as it is appended and to
      `query`, with the unit attribute `rotary_interleaved` choosing the
      pairs (below). Needs `new_kv`.

    Results: O [B, Hq, Sq, Dv] in the layout of `query`; optionally the LSE
    f32 [B, Hq, Sq]; with `new_kv`, the updated caches (the types of the
    caches, always the last two results).

    Semantics, per sequence b (Snew = 0 without `new_kv`):
    ```
    L_b = cache_seqlens[b] + Snew
    P_b = cache_leftpad[b]                       (0 without cache_leftpad)
    diag(i) = i + L_b - Sq                       (bottom-right, per sequence)
    key j is visible to query i iff  P_b <= j < L_b
        and (causal       => j <= diag(i))
        and (window_left  => j >= diag(i) - window_left)
        and (window_right => j <= diag(i) + window_right)
    s = scale * q.k (scale defaults to 1/sqrt(D)); s = softcap * tanh(s / softcap)
    s = s - slope * |diag(i) - j|      (alibi_slopes: slope = alibi_slopes[h],
                                        or alibi_slopes[b, h] when [B, Hq])
    softmax over the visible keys in f32; O = P V
    a row without visible keys: O = 0, LSE = +inf
    q head h reads kv head h / (Hq / Hkv)
    ```
    `causal` must be `#flash.causal<bottom_right>`: each sequence's diagonal
    ends at its own last key, which top-left alignment cannot express.
    The causal diagonal and the window are placed by L_b alone: padding
    shortens a sequence at its start, where its last key stays the
    diagonal's. New rows are written at cache_seqlens[b] as without
    padding (the padding is below them).
    ALiBi's distance is flash-attn's: from the same per-sequence diagonal,
    causal or not, and padding does not move it. Under a causal mask every
    visible key has j <= diag(i), so the bias is -slope * (diag(i) - j).
    Refused by the verifier with an FP8 cache.
    Rotary (with `rotary_cos` = c, `rotary_sin` = n, r = rotary_dim / 2):
    before anything else the new keys and the query are rotated, in f32 and
    rounded back to their type, at positions that are cache rows:
    ```
    key_new[b, h, t] at p = cache_seqlens[b] + t
    query[b, h, i]   at p = cache_seqlens[b] + i   (causal or a window)
                     at p = cache_seqlens[b]       (otherwise: every row)
    pairs (x0, x1) = (x[e], x[e + r]), e < r          (GPT-NeoX halves)
                   = (x[2e], x[2e + 1]), e < r        (rotary_interleaved,
                                                       GPT-J pairs)
    (x0, x1) := (x0 c[p, e] - x1 n[p, e], x0 n[p, e] + x1 c[p, e])
    ```
    elements from 2r on and `value_new` are not rotated. These are
    flash-attn's positions: a left-padded cache counts its padding rows.
    R must cover every cache row (R >= C); a query position past R - 1
    (only when Sq > Snew) reads row R - 1. With an FP8 cache the rotated
    key is what is quantised.
    Indices of `cache_batch_idx` outside [0, Bc), and two sequences naming
    one row when `new_kv` is given, are outside the contract: lowerings
    clamp an index where they read and skip the new rows of an index
    outside [0, Bc).
    Every value of `cache_leftpad` is in the contract (a negative one
    hides nothing, one of L_b or more every key). Lengths outside [0, C]
    and page indices outside [0, num_pages) are outside the contract; lowerings clamp them where they read, so that nothing is
    read out of bounds, and the GPU lowering's append (kind `kv_append`)
    skips a new row whose destination lies outside the cache, so that
    nothing is written out of bounds or onto another sequence's rows.

    Other attributes must be dialect-prefixed, as for `flash.attention`.

    FP8 cache (vLLM's `kv_cache_dtype=fp8`, flash-attn 3's `k_descale` /
    `v_descale`): `key_cache` and `value_cache` may both be `f8E4M3FN`
    (contiguous or paged) with `descale(%k_descale, %v_descale : ...)`, f32
    dequantisation factors of the shapes flash.attention's FP8 form takes
    for K and V: `tensor<f32>` (per tensor) or `tensor<BxHkvxf32>` (per kv
    head). `query` stays f16 or bf16, O is in its type, the LSE f32.

    ```mlir
    %o, %kc, %vc = flash.attention_kvcache %q, %k8, %v8, %cache_seqlens
        block_table(%bt : tensor<4x64xi32>)
        new_kv(%k_new, %v_new : tensor<4x8x1x128xbf16>, tensor<4x8x1x128xbf16>)
        descale(%kd, %vd : tensor<4x8xf32>, tensor<4x8xf32>)
        {causal = #flash.causal<bottom_right>}
        : tensor<4x32x1x128xbf16>, tensor<1024x16x8x128xf8E4M3FN>,
          tensor<1024x16x8x128xf8E4M3FN>, tensor<4xi32>
        -> tensor<4x32x1x128xbf16>, tensor<1024x16x8x128xf8E4M3FN>,
           tensor<1024x16x8x128xf8E4M3FN>
    ```

    With dk = k_descale[b, h / G] and dv = v_descale[b, h / G] (the scalar
    itself when per tensor), the semantics above hold over the dequantised
    cache, in f32:
    ```
    K[b, hkv, j, :] = dk * float(K8[b, hkv, j, :])     (V likewise with dv)
    ```
    `key_new` / `value_new` stay in the type of `query` and are quantised as
    they are appended, as vLLM's reshape_and_cache does:
    ```
    K8 row := e4m3(clamp(float(key_new) * (1 / dk), -448, 448))   (f32; round
              to nearest even; 1 / dk an f32 division)
    ```
    so the rows a step attends to are the quantised ones, like every older
    row. The updated caches are `f8E4M3FN` like the caches. Refused by the
    verifier: `f8E5M2` caches, an FP8 `query` (FP8 Q is flash.attention's),
    one cache FP8 and the other not, an FP8 cache without `descale`,
    `descale` without an FP8 cache, descale shapes other than the two above,
    and constant descales that are not positive and finite.
  }];

  let arguments = (ins Flash_QKVTensor:$query, Flash_QKVTensor:$key_cache,
                       Flash_QKVTensor:$value_cache,
                       Flash_I32Tensor:$cache_seqlens,
                       Optional<Flash_I32Tensor>:$block_table,
                       Optional<Flash_I32Tensor>:$cache_leftpad,
                       Optional<Flash_QKVTensor>:$key_new,
                       Optional<Flash_QKVTensor>:$value_new,
                       Optional<Flash_DescaleTensor>:$k_descale,
                       Optional<Flash_DescaleTensor>:$v_descale,
                       Optional<Flash_SlopesTensor>:$alibi_slopes,
                       Optional<Flash_FloatTensor>:$rotary_cos,
                       Optional<Flash_FloatTensor>:$rotary_sin,
                       Optional<Flash_I32Tensor>:$cache_batch_idx,
                       OptionalAttr<F32Attr>:$scale,
                       OptionalAttr<Flash_CausalAttr>:$causal,
                       OptionalAttr<I64Attr>:$window_left,
                       OptionalAttr<I64Attr>:$window_right,
                       OptionalAttr<F32Attr>:$softcap,
                       UnitAttr:$rotary_interleaved,
                       OptionalAttr<DenseI64ArrayAttr>:$q_perm,
                       OptionalAttr<DenseI64ArrayAttr>:$k_perm,
                       OptionalAttr<DenseI64ArrayAttr>:$v_perm,
                       OptionalAttr<Flash_KernelConfigAttr>:$config);
  let results = (outs Flash_FloatTensor:$output,
                      Optional<Flash_LseTensor>:$lse,
                      Optional<Flash_QKVTensor>:$key_cache_out,
                      Optional<Flash_QKVTensor>:$value_cache_out);

  // The result list alone cannot tell an LSE from an updated key cache, so
  // a custom directive reads it knowing whether `new_kv` was given.
  let assemblyFormat = [{
    $query `,` $key_cache `,` $value_cache `,` $cache_seqlens
    (`block_table` `(` $block_table^ `:` type($block_table) `)`)?
    (`cache_leftpad` `(` $cache_leftpad^ `:` type($cache_leftpad) `)`)?
    (`cache_batch_idx` `(` $cache_batch_idx^ `:` type($cache_batch_idx)
       `)`)?
    (`new_kv` `(` $key_new^ `,` $value_new `:` type($key_new) `,`
       type($value_new) `)`)?
    (`descale` `(` $k_descale^ `,` $v_descale `:` type($k_descale) `,`
       type($v_descale) `)`)?
    (`alibi` `(` $alibi_slopes^ `:` type($alibi_slopes) `)`)?
    (`rotary` `(` $rotary_cos^ `,` $rotary_sin `:` type($rotary_cos) `,`
       type($rotary_sin) `)`)?
    attr-dict `:` type($query) `,` type($key_cache) `,` type($value_cache) `,`
    type($cache_seqlens) `->`
    custom<KVCacheResultTypes>(ref(type($key_new)), type($output), type($lse),
                               type($key_cache_out), type($value_cache_out))
  }];
  let hasVerifier = 1;

  let extraClassDeclaration = [{
    /// True when the caches are paged (a `block_table` is given).
    bool isPaged() { return static_cast<bool>(getBlockTable()); }
    /// True when each sequence's first cache row is given (`cache_leftpad`).
    bool hasLeftPad() { return static_cast<bool>(getCacheLeftpad()); }
    /// True when sequences name their cache rows (`cache_batch_idx`).
    bool hasCacheBatchIdx() { return static_cast<bool>(getCacheBatchIdx()); }
    /// Bc: sequences the (contiguous) caches hold, dim B of `key_cache`;
    /// the batch B without `cache_batch_idx`, 0 when paged.
    int64_t getCacheBatch();
    /// True when an ALiBi bias is added (`alibi(...)`).
    bool hasAlibi() { return static_cast<bool>(getAlibiSlopes()); }
    /// True when the new keys and the query are rotated (`rotary(...)`).
    bool hasRotary() { return static_cast<bool>(getRotaryCos()); }
    /// rotary_dim / 2: the rotated pairs per row (dim 1 of `rotary_cos`);
    /// 0 without rotary.
    int64_t getRotaryPairs();
    /// True when the query's rows are rotated at their own positions
    /// (cache_seqlens[b] + i: causal or a window), false when all at
    /// cache_seqlens[b].
    bool rotatesQueryRowsApart() {
      return isCausal() || getWindowLeft() || getWindowRight();
    }
    /// True when new rows are appended (`new_kv`).
    bool hasNewKV() { return static_cast<bool>(getKeyNew()); }
    /// True when the caches are f8E4M3FN (dequantised by `descale`).
    bool hasFp8Cache();
    /// Rows per page (dim 1 of the paged cache type); 0 when contiguous.
    int64_t getPageSize();
    /// Pages in the pool (dim 0 of the paged cache); 0 when contiguous.
    int64_t getNumPages();
    /// Pages per sequence (dim 1 of `block_table`); 0 when contiguous.
    int64_t getMaxPages();

    /// Logical sizes, read from whichever operand knows them statically
    /// (ShapedType::kDynamic otherwise), respecting the perms.
    int64_t getBatch();
    int64_t getHeadsQ();
    int64_t getHeadsKV();
    int64_t getSeqQ();
    /// C: rows one sequence's cache can hold (Smax, or max_pages * page_size).
    int64_t getCapacity();
    /// Snew: rows appended by `new_kv`; 0 without it.
    int64_t getNewRows();
    int64_t getHeadDim();
    int64_t getHeadDimV();

    /// `scale` when present, else 1/sqrt(D) (D must then be static).
    double getEffectiveScale();
    bool isCausal() { return static_cast<bool>(getCausalAttr()); }
    /// Operand dimension of each logical dimension (B, H, S, D); identity
    /// when the attribute is absent. Key/value perms are identity for paged
    /// caches (the verifier rejects them).
    ::llvm::SmallVector<int64_t, 4> getQueryPerm() {
      return ::mlir::flash::permOrIdentity(getQPermAttr());
    }
    ::llvm::SmallVector<int64_t, 4> getKeyPerm() {
      return ::mlir::flash::permOrIdentity(getKPermAttr());
    }
    ::llvm::SmallVector<int64_t, 4> getValuePerm() {
      return ::mlir::flash::permOrIdentity(getVPermAttr());
    }
  }];
}

def Flash_YieldOp : Flash_Op<"yield", [Pure, Terminator,
    ParentOneOf<["AttentionOp", "AttentionGradOp"]>]> {
  let summary = "yields the value of a score_mod or mask_mod region";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // FLASHFUSE_DIALECT_FLASH_IR_FLASHOPS_TD
