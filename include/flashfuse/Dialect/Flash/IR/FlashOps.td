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
  OptionalAttr<Flash_KernelConfigAttr>:$config
);

defvar Flash_VariantDoc = [{
    Semantics, per batch b, query head h, query row i and key j, with
    G = Hq / Hkv and kv head h / G:

    ```
    s = scale * dot(Q[b,h,i,:], K[b,h/G,j,:])       (scale defaults to 1/sqrt(D))
    s = softcap * tanh(s / softcap)                  if softcap
    s = s + bias[b,h,i,j]                            if bias (size-1 dims broadcast)
    s = score_mod(s, b, h, i, j)                     if the score_mod region is present
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

    Layouts: Q, K, V are logically [B, H, S, D]. `q_perm`, `k_perm` and
    `v_perm` name, for each logical dimension in that order, the operand
    dimension holding it: BSHD operands have perm `array<i64: 0, 2, 1, 3>`.
    The output O uses the layout of Q. LSE is always [B, Hq, Sq].

    Regions: `score_mod` takes (score: f32, b, h, q_idx, kv_idx: index) and
    yields an f32; `mask_mod` takes (b, h, q_idx, kv_idx: index) and yields
    an i1 (true = keep). Both may read values defined above the op.

    Other attributes must be dialect-prefixed (`mytool.origin = ...`): an
    unprefixed name that is not one of the above is rejected, so that a
    misspelt variant attribute cannot silently select another variant.
}];

defvar Flash_OptionalOperandsFormat = [{
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`seed` `(` $seed^ `)`)?
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
  }], Flash_VariantDoc);

  let arguments = !con((ins Flash_FloatTensor:$query, Flash_FloatTensor:$key,
                            Flash_FloatTensor:$value,
                            Optional<Flash_FloatTensor>:$bias,
                            Optional<Flash_MaskTensor>:$mask,
                            Optional<I64>:$seed), Flash_VariantAttrs);
  let results = (outs Flash_FloatTensor:$output, Optional<Flash_LseTensor>:$lse);
  let regions = (region AnyRegion:$score_mod, AnyRegion:$mask_mod);

  let assemblyFormat = !strconcat([{ $query `,` $key `,` $value }],
      Flash_OptionalOperandsFormat,
      [{ attr-dict `:` type($query) `,` type($key) `,` type($value)
         `->` type(results) }], Flash_RegionsFormat);
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
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
    attributes and regions must be those of the forward op.
  }], Flash_VariantDoc);

  let arguments = !con((ins Flash_FloatTensor:$grad_output,
                            Flash_FloatTensor:$query, Flash_FloatTensor:$key,
                            Flash_FloatTensor:$value, Flash_FloatTensor:$output,
                            Flash_LseTensor:$lse,
                            Optional<Flash_FloatTensor>:$bias,
                            Optional<Flash_MaskTensor>:$mask,
                            Optional<I64>:$seed), Flash_VariantAttrs);
  let results = (outs Flash_FloatTensor:$grad_query, Flash_FloatTensor:$grad_key,
                      Flash_FloatTensor:$grad_value,
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
}

def Flash_YieldOp : Flash_Op<"yield", [Pure, Terminator,
    ParentOneOf<["AttentionOp", "AttentionGradOp"]>]> {
  let summary = "yields the value of a score_mod or mask_mod region";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // FLASHFUSE_DIALECT_FLASH_IR_FLASHOPS_TD
