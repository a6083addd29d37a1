//===- TMTensorOps.td - torch-mlir's tm_tensor ops, read only -*- tablegen -*-===//
//
// torch-mlir's linalg-on-tensors backend contract allows a few ops of its own
// `tm_tensor` dialect next to linalg (cumsum -> scan, index_put -> scatter,
// sort, topk, and scaled_dot_product_attention -> attention when it is kept
// legal). FlashFuse has no use for their implementations, but without
// definitions a whole exported model fails to parse, and the unregistered
// form cannot read their custom `ins(...) outs(...)` syntax. So these are
// FlashFuse's own definitions of what the ops look like: the same names,
// operands, attributes, regions and textual format as torch-mlir prints
// them, with verifiers for their shapes, so that flash-raise-attention can
// read such a module, raise the attention around these ops, and raise
// tm_tensor.attention itself. Nothing lowers them.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_DIALECT_TMTENSOR_IR_TMTENSOROPS_TD
#define FLASHFUSE_DIALECT_TMTENSOR_IR_TMTENSOROPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def TMTensor_Dialect : Dialect {
  let name = "tm_tensor";
  let cppNamespace = "::mlir::flash::tm_tensor";
  let summary = "torch-mlir's tm_tensor ops, as FlashFuse reads them";
  let description = [{
    The ops torch-mlir may leave in linalg-on-tensors output, defined here
    with torch-mlir's textual format so that flashfuse-opt parses, prints
    and verifies whole exported models. They are operands of analysis only:
    `flash-raise-attention` raises `tm_tensor.attention` into
    `flash.attention`, and no FlashFuse pass lowers the others.

    This is not torch-mlir's dialect and must not be registered in the same
    context as it (both are named `tm_tensor`).
  }];
}

// Operands and results of the destination-style ops: tensors (results equal
// to the outputs' types) or memrefs (no results).
class TMTensor_Op<string mnemonic, list<Trait> traits = []>
    : Op<TMTensor_Dialect, mnemonic, !listconcat(traits, [
        AttrSizedOperandSegments,
        DeclareOpInterfaceMethods<MemoryEffectsOpInterface>])> {
  let hasVerifier = 1;
}

def TMTensor_RankedTensorOrMemRef
    : AnyTypeOf<[AnyRankedTensor, AnyMemRef], "ranked tensor or memref">;

class TMTensor_RegionOp<string mnemonic>
    : TMTensor_Op<mnemonic, [SingleBlockImplicitTerminator<"YieldOp">]>;

def TMTensor_ScanOp : TMTensor_RegionOp<"scan"> {
  let summary = "inclusive or exclusive scan along one dimension";
  let description = [{
    `outputs` are the result (the input's shape) and the accumulator (the
    input's shape without `dimension`); the region combines two elements.
    torch-mlir emits it for `torch.cumsum`.
  }];
  let arguments = (ins Variadic<AnyShaped>:$inputs,
                       Variadic<AnyShaped>:$outputs,
                       I64Attr:$dimension, BoolAttr:$inclusive);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$region);
  let assemblyFormat = [{
    `dimension` `(` $dimension `)` `inclusive` `(` $inclusive `)` attr-dict
    `ins` `(` $inputs `:` type($inputs) `)`
    `outs` `(` $outputs `:` type($outputs) `)`
    $region (`->` type($results)^)?
  }];
}

def TMTensor_ScatterOp : TMTensor_RegionOp<"scatter"> {
  let summary = "combines slices of `updates` into `original` at `indices`";
  let description = [{
    Inputs `updates` [N, slice...] and `indices` [N, depth] (integers);
    output `original`. Index column i addresses dim `dimension_map[i]` of
    `original`; the region combines (update, current) into the new value.
    torch-mlir emits it for `index_put` and `index_copy` (KV-cache updates).
  }];
  let arguments = (ins Variadic<TMTensor_RankedTensorOrMemRef>:$inputs,
                       Variadic<TMTensor_RankedTensorOrMemRef>:$outputs,
                       DenseI64ArrayAttr:$dimension_map,
                       DefaultValuedAttr<BoolAttr, "true">:$unique_indices);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$region);
  let assemblyFormat = [{
    attr-dict `unique_indices` `(` $unique_indices `)`
    (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    `outs` `(` $outputs `:` type($outputs) `)`
    $region (`->` type($results)^)?
  }];
}

def TMTensor_SortOp : TMTensor_RegionOp<"sort"> {
  let summary = "sorts the outputs in place along one dimension";
  let description = [{
    The outputs (values, then any tensors permuted alike) are sorted along
    `dimension`; the region compares the elements of every output at two
    positions (2 arguments per output) and yields an i1.
  }];
  let arguments = (ins Variadic<AnyType>:$inputs,
                       Variadic<AnyShaped>:$outputs, I64Attr:$dimension);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$region);
  let assemblyFormat = [{
    attr-dict `dimension` `(` $dimension `)`
    (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    `outs` `(` $outputs `:` type($outputs) `)`
    $region (`->` type($results)^)?
  }];
}

def TMTensor_TopkOp : TMTensor_RegionOp<"topk"> {
  let summary = "the k best values (and their indices) along one dimension";
  let description = [{
    Inputs: values and optionally their i32 indices; outputs: the k values
    and their indices (k is the outputs' size of `dimension`). The region
    compares a new value with a kept one and yields an i1.
  }];
  let arguments = (ins Variadic<AnyShaped>:$inputs,
                       Variadic<AnyShaped>:$outputs, I64Attr:$dimension);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$region);
  let assemblyFormat = [{
    attr-dict `dimension` `(` $dimension `)`
    `ins` `(` $inputs `:` type($inputs) `)`
    `outs` `(` $outputs `:` type($outputs) `)`
    $region (`->` type($results)^)?
  }];
}

def TMTensor_AttentionOp : TMTensor_Op<"attention"> {
  let summary = "softmax(Q Kᵀ · scale + mask) V over the trailing two dims";
  let description = [{
    Inputs Q [batch..., M, D], K [batch..., N, D], V [batch..., N, Dv] and an
    optional mask [batch..., M, N]; output [batch..., M, Dv]. The leading
    dims are batch dims of equal sizes (torch-mlir collapses B and H into
    one). Scores are scaled by `scale`, or by 1/sqrt(D) without it. A
    floating-point mask is added to the scaled scores; an i1 mask keeps the
    scores where it is true and sets the others to -inf. A row whose keys
    are all masked gives 0. torch-mlir emits it for
    `aten.scaled_dot_product_attention` when that op is kept legal, with
    `scale` set from SDPA's `scale` argument. (torch-mlir's reference loop
    lowering of the op divides by sqrt(D) whatever `scale` says; its
    documentation and SDPA give `scale` precedence, and so does this
    definition.)
  }];
  let arguments = (ins Variadic<AnyShaped>:$inputs,
                       Variadic<AnyShaped>:$outputs,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    attr-dict
    `ins` `(` $inputs `:` type($inputs) `)`
    `outs` `(` $outputs `:` type($outputs) `)`
    (`->` type($result)^)?
  }];
  let extraClassDeclaration = [{
    Value getQuery() { return getInputs()[0]; }
    Value getKey() { return getInputs()[1]; }
    Value getValue() { return getInputs()[2]; }
    /// Null without a mask.
    Value getMask() {
      return getInputs().size() > 3 ? getInputs()[3] : Value();
    }
  }];
}

def TMTensor_YieldOp : Op<TMTensor_Dialect, "yield",
    [Pure, ReturnLike, Terminator,
     ParentOneOf<["ScanOp", "ScatterOp", "SortOp", "TopkOp"]>]> {
  let summary = "yields the values of a tm_tensor op's region";
  let arguments = (ins Variadic<AnyType>:$operands);
  let builders = [OpBuilder<(ins), [{ /* no values */ }]>];
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
}

#endif // FLASHFUSE_DIALECT_TMTENSOR_IR_TMTENSOROPS_TD
